// hlsgen: the reconfigurable compute core in RTL. It executes the same configuration words as
// the HLS core (docs/hls.md, "Sequential stages"). Operand sources and result sinks are base
// addresses in one activation memory: every stored tensor, graph inputs and outputs, and the
// constants of elementwise ops live there.
//
// Word kinds:
//   0 window   conv / linear / pooling: one multiply-accumulate per cycle, then one cycle to
//              requantize and write each output
//   1 eltwise  requant / add / clip: one output per cycle
//   2 move     affine gather (reshape, transpose, slice, split, resize, channel shuffle): one per cycle
//   3 scatter  affine scatter (concat): one per cycle
// start runs words [0, NT) once, then pulses done. The memory is a plain array, read
// asynchronously: this is a simulation-first realization (docs/hls.md, RTL status).
//
// Tables ($readmemh, written by hlsgen.backends.rtl.core): PROGRAM (NT x NF words of 32 bits),
// MEM_INIT (the memory image, constants included), WROM (weights), RQ_BIAS, RQ_M0, RQ_M1,
// RQ_SHIFT, RQ_LO, RQ_HI, RQ_ZP, RQ_HALF_EVEN (one entry per requantization row).
module hlsgen_core #(
    parameter int NT = 1,
    parameter int NF = 34,
    parameter int MEM_WORDS = 16,
    parameter int SB = 9,
    parameter int WROM_WORDS = 1,
    parameter int WB = 8,
    parameter int RQ_ROWS = 1,
    parameter int PW = 64,
    parameter string PROGRAM = "program.mem",
    parameter string MEM_INIT = "mem.mem",
    parameter string WROM = "wrom.mem",
    parameter string RQ_BIAS = "rq_bias.mem",
    parameter string RQ_M0 = "rq_m0.mem",
    parameter string RQ_M1 = "rq_m1.mem",
    parameter string RQ_SHIFT = "rq_shift.mem",
    parameter string RQ_LO = "rq_lo.mem",
    parameter string RQ_HI = "rq_hi.mem",
    parameter string RQ_ZP = "rq_zp.mem",
    parameter string RQ_HALF_EVEN = "rq_half_even.mem"
) (
    input  logic                 clk,
    input  logic                 rst_n,
    input  logic                 start,
    output logic                 done,
    // host port into the memory (graph inputs in, outputs out) while the core is idle
    input  logic                 host_we,
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: 32-bit addresses, the memory decodes the low bits
    input  logic [31:0]          host_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic signed [SB-1:0] host_wdata,
    output logic signed [SB-1:0] host_rdata
);
    localparam int R = 6;                    // tensor rank of eltwise / move / scatter words

    // ---------------------------------------------------------------- tables
    logic [31:0] prog[NT * NF];
    logic signed [SB-1:0] mem[MEM_WORDS];
    logic signed [WB-1:0] wrom[WROM_WORDS];
    logic signed [PW-1:0] rq_bias[RQ_ROWS];
    logic signed [31:0] rq_m0[RQ_ROWS], rq_m1[RQ_ROWS];
    logic [6:0] rq_shift[RQ_ROWS];
    logic signed [31:0] rq_lo[RQ_ROWS], rq_hi[RQ_ROWS], rq_zp[RQ_ROWS];
    logic rq_he[RQ_ROWS];
    initial begin
        $readmemh(PROGRAM, prog);
        $readmemh(MEM_INIT, mem);
        $readmemh(WROM, wrom);
        $readmemh(RQ_BIAS, rq_bias);
        $readmemh(RQ_M0, rq_m0);
        $readmemh(RQ_M1, rq_m1);
        $readmemh(RQ_SHIFT, rq_shift);
        $readmemh(RQ_LO, rq_lo);
        $readmemh(RQ_HI, rq_hi);
        $readmemh(RQ_ZP, rq_zp);
        $readmemh(RQ_HALF_EVEN, rq_he);
    end

    assign host_rdata = mem[host_addr];

    // requantizer tail of table row `row` (hlsgen_pkg::requant_tail)
    localparam int RW = hlsgen_pkg::RQ_W;
    // waiver: table rows are ints (the tables decode the low bits); the saturated value fits SB bits
    /* verilator lint_off UNUSEDSIGNAL */
    function automatic logic signed [SB-1:0] finish(input logic signed [PW-1:0] p, input int row);
        logic signed [RW-1:0] q;
        q = hlsgen_pkg::requant_tail(RW'(p), rq_shift[row], rq_he[row], RW'(rq_zp[row]), RW'(rq_lo[row]),
                                     RW'(rq_hi[row]));
        return SB'(q);
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------------------------------------------------------- control
    typedef enum logic [2:0] {IDLE, FETCH, WIN_MAC, WIN_OUT, ELEM, DONE} state_t;
    state_t state;
    int pc;
    int f[NF];                               // the current configuration word

    // window counters
    int n, oy, ox, o, ci, ky, kx, r;
    logic signed [PW-1:0] acc;
    // element counters (eltwise / move / scatter) over R dims
    int co[R];
    int i, elements;
    always_comb begin                        // elements of an eltwise / move / scatter word: its dims
        elements = 1;
        for (int d = 0; d < R; d++) elements *= f[(f[0] == 1 ? 6 : 4) + d];
    end

    // window fields
    int w_dst, w_rq, w_src, w_zp, w_wsrc, w_woff, w_init, N, C, H, W, O, CG, KH, KW, OH, OW, SH, SW, DH, DW, PT, PL, OG;
    logic w_max;
    assign w_dst = f[1]; assign w_rq = f[2]; assign w_src = f[3]; assign w_zp = f[4]; assign w_wsrc = f[5];
    assign w_woff = f[6]; assign w_max = f[7] != 0; assign w_init = f[8];
    assign N = f[9]; assign C = f[10]; assign H = f[11]; assign W = f[12]; assign O = f[13]; assign CG = f[14];
    assign KH = f[15]; assign KW = f[16]; assign OH = f[17]; assign OW = f[18]; assign SH = f[19]; assign SW = f[20];
    assign DH = f[21]; assign DW = f[22]; assign PT = f[23]; assign PL = f[24]; assign OG = f[25];

    int iy, ix;
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: addresses are computed as ints, the memories decode the low bits
    int xaddr, widx;
    logic in_bounds;
    logic signed [SB-1:0] xval;
    logic signed [PW-1:0] wval, mac;
    always_comb begin
        iy = oy * SH - PT + ky * DH;
        ix = ox * SW - PL + kx * DW;
        in_bounds = iy >= 0 && iy < H && ix >= 0 && ix < W;
        xaddr = w_src + ((n * C + (o / OG) * CG + ci) * H + (in_bounds ? iy : 0)) * W + (in_bounds ? ix : 0);
        xval = mem[xaddr];
        widx = w_woff + o * (CG * KH * KW) + r;
        wval = (w_wsrc < 0) ? PW'(1) : PW'(wrom[widx]);
        mac = acc + wval * (PW'(xval) - PW'(w_zp));
    end

    // element datapaths
    int e_dst, e_idx, row;
    /* verilator lint_on UNUSEDSIGNAL */
    logic signed [PW-1:0] e_p;
    logic signed [SB-1:0] e_val;
    always_comb begin
        e_dst = 0;
        e_idx = 0;
        e_p = '0;
        row = 0;
        e_val = '0;
        if (f[0] == 1) begin                 // eltwise: f = kind dst rq nt inner chans dims[6] terms{src zp strides[6]}
            row = f[2] + (i / f[4]) % f[5];
            e_p = rq_bias[row];
            for (int t = 0; t < 2; t++) begin
                if (t < f[3]) begin
                    e_idx = 0;
                    for (int d = 0; d < R; d++) e_idx += co[d] * f[12 + t * 8 + 2 + d];
                    e_p += (PW'(mem[f[12 + t * 8] + e_idx]) - PW'(f[12 + t * 8 + 1])) *
                           PW'(t == 0 ? rq_m0[row] : rq_m1[row]);
                end
            end
            e_val = finish(e_p, row);
            e_dst = f[1] + i;
        end else if (f[0] == 2) begin        // move: f = kind dst 0 src dims[6] mul[6] div[6] add[6] stride[6]
            e_idx = 0;
            for (int d = 0; d < R; d++) e_idx += (co[d] * f[10 + d] / f[16 + d] + f[22 + d]) * f[28 + d];
            e_val = mem[f[3] + e_idx];
            e_dst = f[1] + i;
        end else if (f[0] == 3) begin        // scatter: f = kind dst 0 src dims[6] offset[6] out_strides[6]
            e_idx = 0;
            for (int d = 0; d < R; d++) e_idx += (co[d] + f[10 + d]) * f[16 + d];
            e_val = mem[f[3] + i];
            e_dst = f[1] + e_idx;
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            state <= IDLE;
            done <= 1'b0;
            pc <= 0;
        end else begin
            done <= 1'b0;
            case (state)
                IDLE: begin
                    if (host_we) mem[host_addr] <= host_wdata;
                    if (start) begin
                        pc <= 0;
                        state <= FETCH;
                    end
                end
                FETCH: begin
                    if (pc == NT) state <= DONE;
                    else begin
                        for (int k = 0; k < NF; k++) f[k] <= int'(prog[pc * NF + k]);
                        pc <= pc + 1;
                        n <= 0; oy <= 0; ox <= 0; o <= 0; ci <= 0; ky <= 0; kx <= 0; r <= 0;
                        acc <= PW'(signed'(prog[pc * NF + 8]));
                        for (int d = 0; d < R; d++) co[d] <= 0;
                        i <= 0;
                        state <= (prog[pc * NF] == 0) ? WIN_MAC : ELEM;
                    end
                end
                WIN_MAC: begin
                    if (in_bounds) begin
                        if (w_max) begin
                            if (PW'(xval) > acc) acc <= PW'(xval);
                        end else acc <= mac;
                    end
                    r <= r + 1;
                    if (kx + 1 < KW) kx <= kx + 1;
                    else begin
                        kx <= 0;
                        if (ky + 1 < KH) ky <= ky + 1;
                        else begin
                            ky <= 0;
                            if (ci + 1 < CG) ci <= ci + 1;
                            else begin
                                ci <= 0;
                                state <= WIN_OUT;
                            end
                        end
                    end
                end
                WIN_OUT: begin
                    mem[w_dst + ((n * O + o) * OH + oy) * OW + ox] <=
                        w_max ? SB'(acc) : finish(acc * PW'(rq_m0[w_rq + o]) + rq_bias[w_rq + o], w_rq + o);
                    acc <= PW'(w_init);
                    r <= 0;
                    state <= WIN_MAC;
                    if (o + 1 < O) o <= o + 1;
                    else begin
                        o <= 0;
                        if (ox + 1 < OW) ox <= ox + 1;
                        else begin
                            ox <= 0;
                            if (oy + 1 < OH) oy <= oy + 1;
                            else begin
                                oy <= 0;
                                if (n + 1 < N) n <= n + 1;
                                else state <= FETCH;
                            end
                        end
                    end
                end
                ELEM: begin
                    mem[e_dst] <= e_val;
                    i <= i + 1;
                    if (i + 1 == elements) state <= FETCH;
                end
                DONE: begin
                    done <= 1'b1;
                    state <= IDLE;
                end
                default: state <= IDLE;
            endcase
            if (state == ELEM) begin
                // the counter co[] advances with a carry chain, last dimension fastest
                automatic logic carry = 1'b1;
                for (int d = R - 1; d >= 0; d--) begin
                    if (carry) begin
                        if (co[d] + 1 < f[(f[0] == 1 ? 6 : 4) + d]) begin
                            co[d] <= co[d] + 1;
                            carry = 1'b0;
                        end else co[d] <= 0;
                    end
                end
            end
        end
    end
endmodule
