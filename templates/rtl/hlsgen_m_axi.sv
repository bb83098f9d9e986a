// hlsgen: one AXI4 master port (a Vitis `m_axi` bundle) that serves NCH transfer channels. A
// channel moves one tensor between off-chip memory and the chip, in beats of DW bits at
// consecutive addresses from addr[ch] (4 KiB aligned):
//   read channels (CH_WRITE = 0) request bursts of up to MAXB beats, with up to OUTST bursts in
//     flight (enough to cover the memory's latency), and hand each returning beat to the chip
//     (rd_valid, rd_ch, rd_beat, rd_data) in the order requested;
//   write channels (CH_WRITE = 1) send a burst once the chip says its beats are ready
//     (wr_ok[ch] for beats up to wr_last_beat[ch]); the chip supplies the data of beat
//     (wr_ch, wr_beat) on wr_data. (wr_ch_next, wr_beat_next) say which beat that is one
//     cycle ahead, so the chip can read it from a block RAM's registered port.
// A channel may move each beat in CH_STEPS[ch] cycles (steps), a part of its elements a step,
// so that the chip needs fewer memory ports: a read beat stays on R (rd_step counts its steps;
// RREADY, and rd_take, on its last), and a write beat goes on W after its last step
// (wr_step: the step of the beat's data this cycle, wr_step_next one cycle ahead; the chip
// gathers the earlier steps' elements). With one step a beat (the default) nothing waits.
// go[ch] starts a channel; busy[ch] stays high until every beat is received (read) or every
// write response is back (write). Read bursts of different channels interleave (round robin); write bursts
// go one at a time on W while earlier ones wait for their responses. IDs are 0, so responses
// come back in request order.
module hlsgen_m_axi #(
    parameter int DW = 512,
    parameter int NCH = 1,
    parameter int MAXB = 16,
    parameter int OUTST = 16,
    parameter logic [NCH-1:0] CH_WRITE = '0,           // bit c: channel c writes
    parameter logic [32*NCH-1:0] CH_BEATS = '0,        // bits 32c..: channel c's beats
    parameter logic [32*NCH-1:0] CH_STEPS = '0         // bits 32c..: channel c's cycles a beat (0: 1)
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic          go[NCH],
    input  logic [63:0]   addr[NCH],
    output logic          busy[NCH],
    output logic          rd_valid,
    output int            rd_ch,
    output int            rd_beat,
    output logic [DW-1:0] rd_data,
    output int            rd_step,
    output logic          rd_take,
    output int            wr_ch,
    output int            wr_beat,
    output int            wr_step,
    output int            wr_ch_next,
    output int            wr_beat_next,
    output int            wr_step_next,
    input  logic [DW-1:0] wr_data,
    input  logic [DW/8-1:0] wr_strb,
    output int            wr_last_beat[NCH],
    input  logic          wr_ok[NCH],
    // AXI4 master, Vitis's port names without the m_axi_<bundle>_ prefix
    output logic          AWVALID,
    input  logic          AWREADY,
    output logic [63:0]   AWADDR,
    output logic [0:0]    AWID,
    output logic [7:0]    AWLEN,
    output logic [2:0]    AWSIZE,
    output logic [1:0]    AWBURST,
    output logic [1:0]    AWLOCK,
    output logic [3:0]    AWCACHE,
    output logic [2:0]    AWPROT,
    output logic [3:0]    AWQOS,
    output logic [3:0]    AWREGION,
    output logic          WVALID,
    input  logic          WREADY,
    output logic [DW-1:0] WDATA,
    output logic [DW/8-1:0] WSTRB,
    output logic          WLAST,
    input  logic          BVALID,
    output logic          BREADY,
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the memory answers OKAY with ID 0 (the testbench checks)
    input  logic [1:0]    BRESP,
    input  logic [0:0]    BID,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic          ARVALID,
    input  logic          ARREADY,
    output logic [63:0]   ARADDR,
    output logic [0:0]    ARID,
    output logic [7:0]    ARLEN,
    output logic [2:0]    ARSIZE,
    output logic [1:0]    ARBURST,
    output logic [1:0]    ARLOCK,
    output logic [3:0]    ARCACHE,
    output logic [2:0]    ARPROT,
    output logic [3:0]    ARQOS,
    output logic [3:0]    ARREGION,
    input  logic          RVALID,
    output logic          RREADY,
    input  logic [DW-1:0] RDATA,
    input  logic          RLAST,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [1:0]    RRESP,
    input  logic [0:0]    RID
    /* verilator lint_on UNUSEDSIGNAL */
);
    localparam int BYTES = DW / 8;
    localparam int QD = OUTST;                // read bursts in flight, and write responses awaited
    localparam logic [2:0] SIZE = 3'($clog2(BYTES));
    function automatic int beats_of(input int c);
        return int'(CH_BEATS[32 * c +: 32]);
    endfunction
    function automatic int steps_of(input int c);
        return int'(CH_STEPS[32 * c +: 32]) > 1 ? int'(CH_STEPS[32 * c +: 32]) : 1;
    endfunction
    function automatic int max_steps();
        int m = 1;
        for (int c = 0; c < NCH; c++) if (steps_of(c) > m) m = steps_of(c);
        return m;
    endfunction
    // a write burst's beats: MAXB, or fewer where a beat takes steps, so that a burst waits for
    // about as many elements to be ready (wr_ok) and to go out after the chip's last row
    function automatic int wburst_of(input int c);
        return MAXB / steps_of(c) > 1 ? MAXB / steps_of(c) : 1;
    endfunction
    function automatic int max_beats();
        int m = 0;
        for (int c = 0; c < NCH; c++) if (beats_of(c) > m) m = beats_of(c);
        return m;
    endfunction
    // the state holds what it counts, not ints: a channel's beats (BB bits, beats_of(c) + MAXB
    // included), a channel number (CHB), a write's responses awaited (PB); the ports stay int
    localparam int BB = $clog2(max_beats() + MAXB + 1);
    localparam int CHB = NCH > 1 ? $clog2(NCH) : 1;
    localparam int PB = $clog2(QD + 2);
    localparam int STB = max_steps() > 1 ? $clog2(max_steps()) : 1;      // a step's bits

    assign AWID = '0; assign AWSIZE = SIZE; assign AWBURST = 2'b01; assign AWLOCK = '0; assign AWCACHE = 4'b0011;
    assign AWPROT = '0; assign AWQOS = '0; assign AWREGION = '0;
    assign ARID = '0; assign ARSIZE = SIZE; assign ARBURST = 2'b01; assign ARLOCK = '0; assign ARCACHE = 4'b0011;
    assign ARPROT = '0; assign ARQOS = '0; assign ARREGION = '0;
    assign BREADY = 1'b1;

    logic [BB-1:0] nxt[NCH];                  // next beat to request / send
    logic [BB-1:0] got[NCH];                  // read: beats received
    logic [PB-1:0] pend[NCH];                 // write: responses awaited
    logic act[NCH];

    // ---------------------------------------------------------------- reads
    logic [CHB-1:0] rq_ch[QD];                // bursts in flight, oldest first
    logic [BB-1:0] rq_beat[QD];
    int rq_head, rq_n, r_k;                   // r_k: beats of the oldest burst received
    logic [STB-1:0] r_s;                       // the step of the beat on R
    // the next read burst: round robin over the channels with beats to request, the lowest such
    // channel above the channel of the last burst requested, else the lowest, so that reads
    // started together share the port burst by burst (a row-by-row reader of each input gets its
    // first rows at once)
    logic [CHB-1:0] ar_last;
    logic [NCH-1:0] ar_elig;
    int ar_pick;
    always_comb begin
        for (int c = 0; c < NCH; c++) ar_elig[c] = act[c] && !CH_WRITE[c] && int'(nxt[c]) < beats_of(c);
        ar_pick = -1;
        for (int c = NCH - 1; c >= 0; c--) if (ar_elig[c]) ar_pick = c;
        for (int c = NCH - 1; c >= 0; c--) if (ar_elig[c] && c > int'(ar_last)) ar_pick = c;
    end
    assign rd_valid = RVALID;
    assign rd_ch = int'(rq_ch[rq_head]);
    assign rd_beat = int'(rq_beat[rq_head]) + r_k;
    assign rd_data = RDATA;
    assign rd_step = int'(r_s);
    // (1 with no burst in flight: the queue's channel is not yet written, X in a 4-state simulator)
    assign RREADY = max_steps() == 1 || rq_n == 0 || int'(r_s) + 1 >= steps_of(int'(rq_ch[rq_head]));
    assign rd_take = RVALID && RREADY;

    // ---------------------------------------------------------------- writes
    logic w_act, w_sent;                      // a burst is on W; all its beats are sent
    logic w_ends, w_issue;                    // this cycle: the burst on W is over; the next one starts
    logic [BB-1:0] w_end;
    logic [STB-1:0] w_s;                       // the step of the beat whose data is on wr_data
    logic [CHB-1:0] bq_ch[QD];                // channels of the write responses awaited
    int bq_head, bq_n;
    int aw_pick;
    always_comb begin
        aw_pick = -1;
        for (int c = NCH - 1; c >= 0; c--)
            if (act[c] && CH_WRITE[c] && int'(nxt[c]) < beats_of(c) && wr_ok[c]) aw_pick = c;
        for (int c = 0; c < NCH; c++)
            wr_last_beat[c] = (int'(nxt[c]) + wburst_of(c) < beats_of(c) ? int'(nxt[c]) + wburst_of(c) : beats_of(c)) - 1;
    end
    // the beat on W in the next cycle: a burst's first (when one starts), this beat's next step,
    // the next beat of this burst (when this one is taken), or this one
    assign wr_step = int'(w_s);
    always_comb begin
        wr_ch_next = wr_ch;
        wr_beat_next = wr_beat;
        wr_step_next = int'(w_s);
        if (w_issue) begin
            wr_ch_next = aw_pick;
            wr_beat_next = int'(nxt[aw_pick]);
            wr_step_next = 0;
        end else if (w_act && !w_sent && int'(w_s) + 1 < steps_of(wr_ch)) wr_step_next = int'(w_s) + 1;
        else if (WVALID && WREADY && !WLAST) begin
            wr_beat_next = wr_beat + 1;
            wr_step_next = 0;
        end
    end
    assign WVALID = w_act && !w_sent && int'(w_s) + 1 >= steps_of(wr_ch);
    // a burst is over once its last beat is taken and its address accepted; the next one may
    // start in that same cycle (its first beat's data is read for the next)
    assign w_ends = w_act && (w_sent || (WVALID && WREADY && WLAST)) && (!AWVALID || AWREADY);
    assign w_issue = (!w_act || w_ends) && aw_pick >= 0 && bq_n < QD;
    assign WDATA = wr_data;
    assign WSTRB = wr_strb;
    assign WLAST = wr_beat == int'(w_end);

    always_comb for (int c = 0; c < NCH; c++) busy[c] = act[c];

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            ARVALID <= 1'b0;
            AWVALID <= 1'b0;
            w_act <= 1'b0;
            w_sent <= 1'b0;
            rq_head <= 0;
            rq_n <= 0;
            ar_last <= CHB'(NCH - 1);
            r_k <= 0;
            r_s <= '0;
            w_s <= '0;
            bq_head <= 0;
            bq_n <= 0;
            for (int c = 0; c < NCH; c++) begin
                act[c] <= 1'b0;
                nxt[c] <= '0;
                got[c] <= '0;
                pend[c] <= '0;
            end
        end else begin
            automatic int rq_n_next = rq_n;
            automatic int bq_n_next = bq_n;
            // read requests: one burst per accepted AR, while fewer than QD are in flight
            if (ARVALID && ARREADY) ARVALID <= 1'b0;
            if ((!ARVALID || ARREADY) && ar_pick >= 0 && rq_n < QD) begin
                automatic int len = beats_of(ar_pick) - int'(nxt[ar_pick]) < MAXB ? beats_of(ar_pick) - int'(nxt[ar_pick]) : MAXB;
                ARVALID <= 1'b1;
                ARADDR <= addr[ar_pick] + 64'(nxt[ar_pick]) * 64'(BYTES);
                ARLEN <= 8'(len - 1);
                ar_last <= CHB'(ar_pick);
                rq_ch[(rq_head + rq_n) % QD] <= CHB'(ar_pick);
                rq_beat[(rq_head + rq_n) % QD] <= nxt[ar_pick];
                rq_n_next++;
                nxt[ar_pick] <= BB'(int'(nxt[ar_pick]) + len);
            end
            // read data: to the chip as it comes, a step a cycle; a beat is taken on its last
            if (RVALID) r_s <= RREADY ? '0 : r_s + 1'b1;
            if (RVALID && RREADY) begin
                got[rq_ch[rq_head]] <= got[rq_ch[rq_head]] + 1'b1;
                if (int'(got[rq_ch[rq_head]]) + 1 == beats_of(int'(rq_ch[rq_head]))) act[rq_ch[rq_head]] <= 1'b0;
                if (RLAST) begin
                    r_k <= 0;
                    rq_head <= (rq_head + 1) % QD;
                    rq_n_next--;
                end else r_k <= r_k + 1;
            end
            // write bursts: address and data of one burst at a time
            if (AWVALID && AWREADY) AWVALID <= 1'b0;
            if (WVALID && WREADY && WLAST) w_sent <= 1'b1;
            wr_ch <= wr_ch_next;
            wr_beat <= wr_beat_next;
            w_s <= STB'(wr_step_next);
            if (w_ends) begin
                w_act <= 1'b0;
                w_sent <= 1'b0;
            end
            if (w_issue) begin
                automatic int len = beats_of(aw_pick) - int'(nxt[aw_pick]) < wburst_of(aw_pick) ? beats_of(aw_pick) - int'(nxt[aw_pick]) : wburst_of(aw_pick);
                AWVALID <= 1'b1;
                AWADDR <= addr[aw_pick] + 64'(nxt[aw_pick]) * 64'(BYTES);
                AWLEN <= 8'(len - 1);
                w_act <= 1'b1;
                w_sent <= 1'b0;
                w_end <= BB'(int'(nxt[aw_pick]) + len - 1);
                nxt[aw_pick] <= BB'(int'(nxt[aw_pick]) + len);
                pend[aw_pick] <= pend[aw_pick] + 1'b1;
                bq_ch[(bq_head + bq_n) % QD] <= CHB'(aw_pick);
                bq_n_next++;
            end
            // write responses: a channel is done when all its beats are sent and answered
            if (BVALID) begin
                automatic int c = int'(bq_ch[bq_head]);
                automatic int left = int'(pend[c]) - 1 + ((w_issue && aw_pick == c) ? 1 : 0);
                pend[c] <= PB'(left);
                bq_head <= (bq_head + 1) % QD;
                bq_n_next--;
                if (left == 0 && int'(nxt[c]) >= beats_of(c) && !(w_act && wr_ch == c)) act[c] <= 1'b0;
            end
            rq_n <= rq_n_next;
            bq_n <= bq_n_next;
            // start a channel (its last run has ended: one run per ap_start)
            for (int c = 0; c < NCH; c++) begin
                if (go[c]) begin
                    act[c] <= beats_of(c) > 0;
                    nxt[c] <= '0;
                    got[c] <= '0;
                    pend[c] <= '0;
                end
            end
        end
    end
endmodule
