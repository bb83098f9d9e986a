// hlsgen: a linear layer (y = requant(W x)) on valid/ready element streams, folded as the
// schedule folds it: PE output channels x SIMD input elements per cycle.
//
// Input: one activation per transfer, K per vector, row after row. Output: N per vector.
// Two input vector buffers (ping-pong): while the engine reduces one vector, the next one
// loads. The engine runs N/PE groups of K/SIMD cycles; at the end of a group its PE
// accumulators are requantized (hlsgen_requant's arithmetic, per channel) and leave one per
// cycle through the output. A vector therefore takes max(K, N/PE x max(K/SIMD, PE)) cycles in
// steady state (tests/test_rtl_modules.py checks the measured count against this).
//
// Weights and per-channel requantization tables come from $readmemh files written by hlsgen:
// WEIGHTS (N*K words, row-major [n][k]), RQ_MULT, RQ_BIAS, RQ_SHIFT, RQ_LO, RQ_HI (N words).
module hlsgen_linear #(
    parameter int K = 16,
    parameter int N = 8,
    parameter int PE = 1,
    parameter int SIMD = 1,
    parameter int A_W = 8,
    parameter bit A_SIGNED = 1,
    parameter int ZP_IN = 0,
    parameter int W_W = 4,
    parameter int ACC_W = 24,
    parameter int PW = 64,
    parameter int OUT_W = 8,
    parameter int ZP_OUT = 0,
    parameter bit HALF_EVEN = 1,
    parameter WEIGHTS = "weights.mem",
    parameter RQ_MULT = "rq_mult.mem",
    parameter RQ_BIAS = "rq_bias.mem",
    parameter RQ_SHIFT = "rq_shift.mem",
    parameter RQ_LO = "rq_lo.mem",
    parameter RQ_HI = "rq_hi.mem"
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [A_W-1:0]   s_data,
    input  logic             s_valid,
    output logic             s_ready,
    output logic [OUT_W-1:0] m_data,
    output logic             m_valid,
    input  logic             m_ready
);
    localparam int KB = K / SIMD;            // reduction steps per group
    localparam int NB = N / PE;              // groups per vector
    localparam int XW = A_W + 2;             // centered activation
    localparam int KI = $clog2(K + 1);
    localparam int NI = $clog2(N + 1);
    localparam int PI = $clog2(PE + 1);

    // ---------------------------------------------------------------- tables
    logic signed [W_W-1:0] wrom[N * K];
    initial $readmemh(WEIGHTS, wrom);

    // ---------------------------------------------------------------- input ping-pong
    logic [A_W-1:0] xbuf[2][K];
    logic [1:0] full;
    logic wb, cb;                            // buffer being loaded / being reduced
    logic [KI-1:0] wcount;

    assign s_ready = !full[wb];
    always_ff @(posedge clk) begin
        if (s_valid && s_ready) xbuf[wb][wcount[$clog2(K > 1 ? K : 2)-1:0]] <= s_data;
    end

    // ---------------------------------------------------------------- engine
    logic [NI-1:0] nb;
    logic [KI-1:0] kb;
    logic signed [ACC_W-1:0] acc[PE];
    logic [PI-1:0] pending;                  // results still to send from res[]
    logic [OUT_W-1:0] res[PE];
    logic busy;
    logic group_end, step;

    assign busy = full[cb];
    assign group_end = (kb == KI'(KB - 1));
    // a group may finish only when the previous group's results have left (the last one may
    // leave in the same cycle)
    assign step = busy && !(group_end && pending > ((m_valid && m_ready) ? PI'(1) : PI'(0)));

    function automatic logic signed [XW-1:0] centered(input logic [A_W-1:0] x);
        logic signed [XW-1:0] v;
        v = A_SIGNED ? XW'($signed(x)) : XW'({1'b0, x});
        centered = v - XW'(ZP_IN);
    endfunction

    // this cycle's PE x SIMD products, and the group's results requantized (hlsgen_rq_rom)
    logic signed [ACC_W-1:0] sum[PE];
    logic [PE*ACC_W-1:0] total;
    logic [PE*32-1:0] ch;
    logic [PE*OUT_W-1:0] q;
    hlsgen_rq_rom #(.N(N), .NP(PE), .ACC_W(ACC_W), .PW(PW), .OUT_W(OUT_W), .ZP_OUT(ZP_OUT), .HALF_EVEN(HALF_EVEN),
                    .RQ_MULT(RQ_MULT), .RQ_BIAS(RQ_BIAS), .RQ_SHIFT(RQ_SHIFT), .RQ_LO(RQ_LO), .RQ_HI(RQ_HI)) rq (
        .acc(total), .ch(ch), .q(q)
    );
    always_comb begin
        for (int p = 0; p < PE; p++) begin
            total[p * ACC_W +: ACC_W] = acc[p] + sum[p];
            ch[p * 32 +: 32] = 32'(int'(nb) * PE + p);
        end
    end
    // Weights of at most 4 bits pack two output channels' products with the same activation into
    // one multiply (hlsgen_mac_pair's arithmetic, the cost model's 2 MACs per DSP48E2):
    // (w1 x 2^S + w0) x a = w1 a 2^S + w0 a, exact while |w0 a| < 2^(S-1).
    localparam bit PACK = W_W <= 4 && XW <= 18;
    localparam int S = 18;
    localparam int PK_W = W_W + S + 1;
    logic signed [ACC_W-1:0] term[PE][SIMD];
    genvar gp, gs;
    generate
        for (gs = 0; gs < SIMD; gs = gs + 1) begin : g_s
            logic signed [XW-1:0] x;
            assign x = centered(xbuf[cb][int'(kb) * SIMD + gs]);
            for (gp = 0; gp < PE; gp = gp + (PACK ? 2 : 1)) begin : g_p
                if (PACK && gp + 1 < PE) begin : g_pair
                    logic signed [W_W-1:0] w0, w1;
                    logic signed [PK_W-1:0] pk;
                    logic signed [PK_W+XW-1:0] prod;
                    logic signed [S-1:0] low;
                    /* verilator lint_off UNUSEDSIGNAL */    // waiver: bits above the product are sign copies
                    logic signed [PK_W+XW-1:0] high;
                    /* verilator lint_on UNUSEDSIGNAL */
                    assign w0 = wrom[(int'(nb) * PE + gp) * K + int'(kb) * SIMD + gs];
                    assign w1 = wrom[(int'(nb) * PE + gp + 1) * K + int'(kb) * SIMD + gs];
                    assign pk = (PK_W'(w1) <<< S) + PK_W'(w0);
                    assign prod = pk * x;
                    assign low = prod[S-1:0];
                    assign high = (prod - (PK_W + XW)'(low)) >>> S;
                    assign term[gp][gs] = ACC_W'(low);
                    assign term[gp + 1][gs] = ACC_W'(high);
                end else begin : g_one
                    assign term[gp][gs] = ACC_W'(wrom[(int'(nb) * PE + gp) * K + int'(kb) * SIMD + gs]) * ACC_W'(x);
                end
            end
        end
    endgenerate
    always_comb begin
        for (int p = 0; p < PE; p++) begin
            sum[p] = '0;
            for (int s = 0; s < SIMD; s++) sum[p] = sum[p] + term[p][s];
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            full <= '0;
            wb <= 1'b0;
            cb <= 1'b0;
            wcount <= '0;
            nb <= '0;
            kb <= '0;
            pending <= '0;
            for (int p = 0; p < PE; p++) acc[p] <= '0;
        end else begin
            // output: res[PE - pending] leaves when taken (a group end below reloads pending)
            if (m_valid && m_ready) pending <= pending - 1'b1;
            // loader
            if (s_valid && s_ready) begin
                if (wcount == KI'(K - 1)) begin
                    wcount <= '0;
                    full[wb] <= 1'b1;
                    wb <= !wb;
                end else wcount <= wcount + 1'b1;
            end
            // engine
            if (step) begin
                if (group_end) begin
                    for (int p = 0; p < PE; p++) begin
                        res[p] <= q[p * OUT_W +: OUT_W];
                        acc[p] <= '0;
                    end
                    pending <= PI'(PE);
                    kb <= '0;
                    if (nb == NI'(NB - 1)) begin
                        nb <= '0;
                        full[cb] <= 1'b0;
                        cb <= !cb;
                    end else nb <= nb + 1'b1;
                end else begin
                    for (int p = 0; p < PE; p++) acc[p] <= acc[p] + sum[p];
                    kb <= kb + 1'b1;
                end
            end
        end
    end

    assign m_valid = pending != '0;
    assign m_data = res[PE - int'(pending)];
endmodule
