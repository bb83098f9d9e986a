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
    parameter string WEIGHTS = "weights.mem",
    parameter string RQ_MULT = "rq_mult.mem",
    parameter string RQ_BIAS = "rq_bias.mem",
    parameter string RQ_SHIFT = "rq_shift.mem",
    parameter string RQ_LO = "rq_lo.mem",
    parameter string RQ_HI = "rq_hi.mem"
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
    localparam int CW = (N > 1) ? $clog2(N) : 1;   // channel index

    // ---------------------------------------------------------------- tables
    logic signed [W_W-1:0] wrom[N * K];
    logic signed [31:0] rq_mult[N];
    logic signed [PW-1:0] rq_bias[N];
    logic [6:0] rq_shift[N];
    logic signed [OUT_W:0] rq_lo[N], rq_hi[N];
    initial begin
        $readmemh(WEIGHTS, wrom);
        $readmemh(RQ_MULT, rq_mult);
        $readmemh(RQ_BIAS, rq_bias);
        $readmemh(RQ_SHIFT, rq_shift);
        $readmemh(RQ_LO, rq_lo);
        $readmemh(RQ_HI, rq_hi);
    end

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
        v = A_SIGNED ? XW'(signed'(x)) : XW'({1'b0, x});
        return v - XW'(ZP_IN);
    endfunction

    localparam int RW = hlsgen_pkg::RQ_W;
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the saturated value fits OUT_W bits
    function automatic logic [OUT_W-1:0] requant(input logic signed [ACC_W-1:0] a, input logic [CW-1:0] ch);
        logic signed [RW-1:0] q;
        q = hlsgen_pkg::requant_tail(RW'(a) * RW'(rq_mult[ch]) + RW'(rq_bias[ch]), rq_shift[ch], HALF_EVEN,
                                     RW'(ZP_OUT), RW'(rq_lo[ch]), RW'(rq_hi[ch]));
        return OUT_W'(q);
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // this cycle's PE x SIMD products
    logic signed [ACC_W-1:0] sum[PE];
    always_comb begin
        for (int p = 0; p < PE; p++) begin
            sum[p] = '0;
            for (int s = 0; s < SIMD; s++)
                sum[p] = sum[p] + ACC_W'(wrom[(int'(nb) * PE + p) * K + int'(kb) * SIMD + s]) *
                                  ACC_W'(centered(xbuf[cb][int'(kb) * SIMD + s]));
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
                        res[p] <= requant(acc[p] + sum[p], CW'(int'(nb) * PE + p));
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
