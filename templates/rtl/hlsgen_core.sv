// hlsgen: the reconfigurable compute core in RTL, with the schedule's foldings. It executes the
// same configuration words as the HLS core (docs/hls.md, "Sequential stages"), each extended
// by the task's folding: VEC output pixels x PE output channels x SIMD reduction taps per cycle
// for window words, VEC x PE elements per cycle for the others (the cost model's lanes,
// hlsgen/schedule/cost.py). Operand sources and result sinks are base addresses in one
// activation memory: every stored tensor, graph inputs and outputs, and the constants of
// elementwise ops live there.
//
// Word kinds (fields 0 .. NF-6 as the HLS core's; the last five are this core's):
//   0 window   conv / linear / pooling: per cycle one reduction step of SIMD taps for a group of
//              VEC x PE outputs; the group's outputs are requantized and written on its last step
//   1 eltwise  requant / add / clip: VEC x PE outputs per cycle
//   2 move     affine gather (transpose, slice, split, resize, channel shuffle): VEC x PE per cycle
//   3 scatter  affine scatter (concat): VEC x PE per cycle
//   VEC PE SIMD LAT TAPS: the folding, the pipeline depth drained after the word (the cost
//   model's depth_of; 0 on all but a task's last word) and the word's offset in the tap table
// A word takes 1 fetch cycle + its steps + LAT cycles. start runs words [0, NT) once, then
// pulses done.
//
// This is a simulation-first realization (docs/rtl.md): every lane reads the one memory
// asynchronously, a lane's datapath is computed in one cycle, and the pipeline's depth is a
// drain of LAT cycles after the word rather than registers inside the datapath.
//
// Tables ($readmemh, written by hlsgen.backends.rtl.core): PROGRAM (NT x NF words of 32 bits),
// MEM_INIT (the memory image, constants included), WROM (weights), TAP (per window word and
// reduction index r: input channel, row and column offset of the tap, 3 x 16 bits), RQ_BIAS,
// RQ_M0, RQ_M1, RQ_SHIFT, RQ_LO, RQ_HI, RQ_ZP, RQ_HALF_EVEN (one entry per requantization row).
module hlsgen_core #(
    parameter int NT = 1,
    parameter int NF = 39,
    parameter int MEM_WORDS = 16,
    parameter int SB = 9,
    parameter int WROM_WORDS = 1,
    parameter int WB = 8,
    parameter int TAP_WORDS = 1,
    parameter int RQ_ROWS = 1,
    parameter int PW = 64,
    parameter int MV = 1,                    // the widest VEC, PE, SIMD and VEC x PE of any word
    parameter int MP = 1,
    parameter int MS = 1,
    parameter int ML = 1,
    parameter string PROGRAM = "program.mem",
    parameter string MEM_INIT = "mem.mem",
    parameter string WROM = "wrom.mem",
    parameter string TAP = "tap.mem",
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
    localparam int FV = NF - 5, FP = NF - 4, FS = NF - 3, FLAT = NF - 2, FTAP = NF - 1;
    localparam int NO = MV * MP;             // output lanes of a window step

    // ---------------------------------------------------------------- tables
    logic [31:0] prog[NT * NF];
    logic signed [SB-1:0] mem[MEM_WORDS];
    logic signed [WB-1:0] wrom[WROM_WORDS];
    logic [47:0] tap[TAP_WORDS];
    logic signed [PW-1:0] rq_bias[RQ_ROWS];
    logic signed [31:0] rq_m0[RQ_ROWS], rq_m1[RQ_ROWS];
    logic [6:0] rq_shift[RQ_ROWS];
    logic signed [31:0] rq_lo[RQ_ROWS], rq_hi[RQ_ROWS], rq_zp[RQ_ROWS];
    logic rq_he[RQ_ROWS];
    initial begin
        $readmemh(PROGRAM, prog);
        $readmemh(MEM_INIT, mem);
        $readmemh(WROM, wrom);
        $readmemh(TAP, tap);
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
    typedef enum logic [2:0] {IDLE, FETCH, WIN, ELEM, DRAIN, DONE} state_t;
    state_t state;
    int pc;
    int f[NF];                               // the current configuration word
    int lat;                                 // drain cycles left

    // ---------------------------------------------------------------- window datapath
    int w_dst, w_rq, w_src, w_zp, w_wsrc, w_woff, w_init, N, C, H, W, O, CG, KH, KW, OH, OW, SH, SW, DH, DW, PT, PL, OG;
    int VEC, PE, SIMD, RED;
    logic w_max;
    assign w_dst = f[1]; assign w_rq = f[2]; assign w_src = f[3]; assign w_zp = f[4]; assign w_wsrc = f[5];
    assign w_woff = f[6]; assign w_max = f[7] != 0; assign w_init = f[8];
    assign N = f[9]; assign C = f[10]; assign H = f[11]; assign W = f[12]; assign O = f[13]; assign CG = f[14];
    assign KH = f[15]; assign KW = f[16]; assign OH = f[17]; assign OW = f[18]; assign SH = f[19]; assign SW = f[20];
    assign DH = f[21]; assign DW = f[22]; assign PT = f[23]; assign PL = f[24]; assign OG = f[25];
    assign VEC = f[FV]; assign PE = f[FP]; assign SIMD = f[FS]; assign RED = CG * KH * KW;

    int n, oy, ox0, o0, r0;                  // the output group (n, oy, ox0.., o0..) and its reduction step r0..
    logic first_step, last_step;
    assign first_step = r0 == 0;
    assign last_step = r0 + SIMD >= RED;
    logic signed [PW-1:0] acc[NO], acc_next[NO];

    /* verilator lint_off UNUSEDSIGNAL */    // waiver: addresses and tap fields are ints, the memories decode the low bits
    always_comb begin
        for (int v = 0; v < MV; v++) begin
            for (int p = 0; p < MP; p++) begin
                automatic int o = o0 + p;
                automatic int ox = ox0 + v;
                automatic logic signed [PW-1:0] a = first_step ? PW'(w_init) : acc[v * MP + p];
                for (int s = 0; s < MS; s++) begin
                    automatic int r = r0 + s;
                    automatic logic [47:0] t = tap[f[FTAP] + (r < RED ? r : 0)];
                    automatic int iy = oy * SH - PT + int'(signed'(t[31:16]));
                    automatic int ix = ox * SW - PL + int'(signed'(t[15:0]));
                    automatic logic live = v < VEC && p < PE && s < SIMD && o < O && ox < OW && r < RED && iy >= 0 && iy < H
                                           && ix >= 0 && ix < W;
                    automatic int xa = w_src + ((n * C + (o / OG) * CG + int'(t[47:32])) * H + (live ? iy : 0)) * W
                                       + (live ? ix : 0);
                    automatic logic signed [PW-1:0] x = PW'(mem[live ? xa : 0]);
                    automatic logic signed [PW-1:0] w = (w_wsrc < 0 || !live) ? PW'(1)
                                                        : PW'(wrom[w_woff + o * RED + r]);
                    if (live) begin
                        if (w_max) begin
                            if (x > a) a = x;
                        end else a = a + w * (x - PW'(w_zp));
                    end
                end
                acc_next[v * MP + p] = a;
            end
        end
    end

    // ---------------------------------------------------------------- element datapaths
    int i0, elements;
    always_comb begin                        // elements of an eltwise / move / scatter word: its dims
        elements = 1;
        for (int d = 0; d < R; d++) elements *= f[(f[0] == 1 ? 6 : 4) + d];
    end
    logic e_we[ML];
    int e_dst[ML];
    logic signed [SB-1:0] e_val[ML];
    always_comb begin
        for (int l = 0; l < ML; l++) begin
            automatic int i = i0 + l;
            automatic int co[R];
            automatic int rest = i;
            automatic int idx = 0;
            automatic int row = 0;
            automatic logic signed [PW-1:0] p = '0;
            for (int d = R - 1; d >= 0; d--) begin   // coordinates of element i, last dimension fastest
                automatic int dim = f[(f[0] == 1 ? 6 : 4) + d];
                co[d] = dim > 0 ? rest % dim : 0;
                rest = dim > 0 ? rest / dim : 0;
            end
            e_we[l] = state == ELEM && l < VEC * PE && i < elements;
            e_dst[l] = f[1] + i;
            e_val[l] = '0;
            if (!e_we[l]) begin
                e_dst[l] = 0;
            end else if (f[0] == 1) begin    // eltwise: f = kind dst rq nt inner chans dims[6] terms{src zp strides[6]}
                row = f[2] + (i / f[4]) % f[5];
                p = rq_bias[row];
                for (int t = 0; t < 2; t++) begin
                    if (t < f[3]) begin
                        idx = 0;
                        for (int d = 0; d < R; d++) idx += co[d] * f[12 + t * 8 + 2 + d];
                        p += (PW'(mem[f[12 + t * 8] + idx]) - PW'(f[12 + t * 8 + 1])) *
                             PW'(t == 0 ? rq_m0[row] : rq_m1[row]);
                    end
                end
                e_val[l] = finish(p, row);
            end else if (f[0] == 2) begin    // move: f = kind dst 0 src dims[6] mul[6] div[6] add[6] stride[6]
                for (int d = 0; d < R; d++) idx += (co[d] * f[10 + d] / f[16 + d] + f[22 + d]) * f[28 + d];
                e_val[l] = mem[f[3] + idx];
            end else if (f[0] == 3) begin    // scatter: f = kind dst 0 src dims[6] offset[6] out_strides[6]
                for (int d = 0; d < R; d++) idx += (co[d] + f[10 + d]) * f[16 + d];
                e_val[l] = mem[f[3] + i];
                e_dst[l] = f[1] + idx;
            end
        end
    end
    /* verilator lint_on UNUSEDSIGNAL */

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
                        n <= 0; oy <= 0; ox0 <= 0; o0 <= 0; r0 <= 0; i0 <= 0;
                        lat <= int'(prog[pc * NF + FLAT]);
                        state <= (prog[pc * NF] == 0) ? WIN : ELEM;
                    end
                end
                WIN: begin
                    for (int k = 0; k < NO; k++) acc[k] <= acc_next[k];
                    if (!last_step) r0 <= r0 + SIMD;
                    else begin
                        // the group's outputs: requantize (or pass the maximum) and write
                        for (int v = 0; v < MV; v++) begin
                            for (int p = 0; p < MP; p++) begin
                                if (v < VEC && p < PE && o0 + p < O && ox0 + v < OW) begin
                                    mem[w_dst + ((n * O + o0 + p) * OH + oy) * OW + ox0 + v] <= w_max
                                        ? SB'(acc_next[v * MP + p])
                                        : finish(acc_next[v * MP + p] * PW'(rq_m0[w_rq + o0 + p]) + rq_bias[w_rq + o0 + p],
                                                 w_rq + o0 + p);
                                end
                            end
                        end
                        r0 <= 0;
                        if (o0 + PE < O) o0 <= o0 + PE;
                        else begin
                            o0 <= 0;
                            if (ox0 + VEC < OW) ox0 <= ox0 + VEC;
                            else begin
                                ox0 <= 0;
                                if (oy + 1 < OH) oy <= oy + 1;
                                else begin
                                    oy <= 0;
                                    if (n + 1 < N) n <= n + 1;
                                    else state <= (lat > 0) ? DRAIN : FETCH;
                                end
                            end
                        end
                    end
                end
                ELEM: begin
                    for (int l = 0; l < ML; l++) if (e_we[l]) mem[e_dst[l]] <= e_val[l];
                    i0 <= i0 + VEC * PE;
                    if (i0 + VEC * PE >= elements) state <= (lat > 0) ? DRAIN : FETCH;
                end
                DRAIN: begin
                    lat <= lat - 1;
                    if (lat == 1) state <= FETCH;
                end
                DONE: begin
                    done <= 1'b1;
                    state <= IDLE;
                end
                default: state <= IDLE;
            endcase
        end
    end
endmodule
