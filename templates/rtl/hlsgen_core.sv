// hlsgen: one compute core in RTL, with the schedule's foldings. It executes the same
// configuration words as the HLS core (docs/hls.md, "Sequential stages"), each extended by the
// task's folding: VEC output pixels x PE output channels x SIMD reduction taps per cycle for
// window words, VEC x PE elements per cycle for the others (the cost model's lanes,
// hlsgen/schedule/cost.py). A sequential stage is one core running its tasks' words in order;
// a dataflow stage is one core per task, all running at once (rtl/hlsgen_top.sv).
//
// Operands are base addresses in the design's one activation memory (hlsgen_act_mem, in the top): the
// core reads it through NR registered read ports (a block RAM's synchronous read: the data one
// cycle after the address) and writes it through NW write ports.
// Dataflow between cores: every tensor produced in a dataflow stage has a row counter in the
// top (rows of all channels written, in units of N x H for 4-D tensors and of the last
// dimension otherwise). A core reading a tensor still being produced checks, lane by lane,
// that the row it reads has been written, and waits otherwise; a core publishes its output's
// rows as it completes them. That is the line-buffer handshake of a streaming design, on
// whole-tensor buffers.
//
// Word kinds (fields 0 .. X-1 as the HLS core's, then NX of this core's from X = NF - NX; offsets
// are named in hlsgen_word_pkg, generated from the tables the words are built from):
//   0 window   conv / linear / pooling: per cycle one reduction step of SIMD taps for a group of
//              VEC x PE outputs; the group's outputs are requantized and written on its last step
//   1 eltwise  requant / add / clip: VEC x PE outputs per cycle
//   2 move     affine gather (transpose, slice, split, resize, channel shuffle): VEC x PE per cycle
//   3 scatter  affine scatter (concat): VEC x PE per cycle
//              (element words carry their VEC x PE lanes as VEC = 1, PE = VEC x PE)
//   VEC, PE, SIMD                the folding
//   LAT                          pipeline depth drained after the word (the cost model's
//                                depth_of; 0 on all but a task's last word)
//   TAP                          the word's offset in the tap table (window words)
//   ORD (6)                      element words: iteration order of the six dimensions, outer
//                                first (pixel-major for 4-D tensors, so rows complete early)
//   PID, PDIV, PTOT              row counter of the output (-1: none), iterations per
//                                published row (0: publish at the end only), rows in all
//   SRC0 (5), SRC1 (5)           sources 0 and 1: counter (-1: complete), C*H*W, H, W, ALL
//                                (ALL > 0: wait for all ALL rows instead of row by row)
//   PLAT                         the task's pipeline depth: a completed row becomes visible to
//                                other cores PLAT cycles after its last step, as it would leave
//                                a pipeline of that depth
//   HOLD                         1 on a task's last word when the task writes a tensor off chip:
//                                the next word (or done) waits until `hold` falls, i.e. until the
//                                top's m_axi channels have every beat written and answered
//   WWAIT                        1 when the task's weights stream in from off-chip memory: a
//                                lane reads weight w only once w < wlim (the top's count of
//                                weights the m_axi channel has written into this core's WROM
//                                through the wr_* port)
//   ESTEP (6)                    element words: VEC x PE as digits of the word's dims in its
//                                order, which each lane adds to its coordinates (one carry per
//                                digit, so no coordinate is a run-time divide)
//   WIN (12)                     window words: the steps of the address counters (W_* in
//                                hlsgen_word_pkg), so that a window step's addresses are sums of
//                                counters and per-lane constants, not run-time products
//   ELEMS                        element words: their element count
//   PQ, PR                       element words: VEC x PE as whole published rows (of PDIV
//                                iterations) and the rest, so the rows published are a counter
//   MB, MONE, MSTEP (NMAP each), MADJ (NMAP x 6)
//                                element words: the NMAP = 6 maps each lane keeps in accumulators
//                                (write address, read addresses of sources 0 and 1, the rows those
//                                reads wait for, the requantization row), each B + sum co[d] * K[d]
//                                of the lane's coordinates: their values at the first element
//                                (MB), one element on (MONE: K of the innermost digit), VEC x PE
//                                on (MSTEP: sum ESTEP[d] * K[d]), and per digit d that carries
//                                (MADJ: K of the next outer digit - dim[d] * K[d])
// A word takes 1 fetch cycle (none for a core's first word) + its steps + the cycles it waits +
// LAT. start runs the core's NT words once, from word 0, then pulses done.
// A step is six pipeline stages. In the first the control computes the step's addresses, checks
// that the rows it reads are written, and fires; the top's memory and this core's weight table
// return the operands at the next clock edge. hlsgen_core_dp computes with them in DPL = 4 more
// stages (multiply, sum, accumulate, requantize; its header), each requantization row read in
// the cycle its stage uses it, and the outputs are written WD = 5 cycles after the step fired. A
// step's controls travel with it (q_* below, and hlsgen_core_dp's own), so a word's last steps
// finish in the FETCH or DRAIN cycles after it while the next word starts. The pipeline adds no
// cycle: a row completes when its last step fires and is published PLAT cycles later (the delay
// line below), and another core takes it from the top's row counter a cycle after that at the
// earliest, so its registered read samples the memory after the write; the next task on this
// core starts after the LAT = PLAT drain. PLAT (the model's depth_of) is at least 8 >= WD,
// which hlsgen/backends/rtl/core.py checks. The words of one task (a concat's, a split's) never
// read each other's outputs, so they need no drain between them.
// Each core has the lanes and arithmetic its own words need (MV, MP, MS, ML and the
// hlsgen_core_dp parameters, from hlsgen/backends/rtl/core.py).
//
// The arithmetic is hlsgen_core_dp (synthesizable: `make synth-yosys`). The rest is a
// simulation-first realization (docs/rtl.md): the memory is one whole-tensor array with a read
// port per lane (registered, AB-bit addressed, not banked), and the part of the model's
// pipeline depth beyond the read and hlsgen_core_dp's stages is a drain of LAT cycles after a
// task rather than registers. Its control keeps every count, field, address and row in CB bits
// (signed; core.py sizes CB per core from the largest value it keeps), multiplies no two
// run-time values and divides nothing: window words' addresses, element words' coordinates,
// addresses, row checks, requantization rows and published rows are counters and accumulators
// stepped by word fields, plus per-lane multiples of fields (v * SW, p * RED, p * OH * OW) that the
// fetch sets up as running sums, so that no lane multiplies (a resize's word comes with each scaled
// dim split into quotient and remainder).
//
// Tables ($readmemh, written by hlsgen.backends.rtl.core), each holding only this core's own:
// PROGRAM (its NT words of NF x PFB bits, one row per word, field k at bits PFB k + PFB - 1 .. PFB k),
// WROM (its tasks' weights, in rows of WR), TAP (per window word and reduction index r: the
// tap's offset in the input, ci * H * W + ky * DH * W + kx * DW, 32 bits, then its row and column
// offsets, 16 bits each), RQ_BIAS, RQ_M0, RQ_M1, RQ_SHIFT, RQ_LO, RQ_HI, RQ_ZP, RQ_HALF_EVEN (one
// entry per requantization row of its tasks). A word's TAP, RQ and W_WOFF fields index these.
module hlsgen_core #(
    parameter int NT = 1,                    // this core's words (PROGRAM): at least one
    parameter int NF = 58,
    parameter int SB = 9,
    parameter int WROM_ROWS = 1,             // the weight ROM: rows of WR weights
    parameter int WR = 1,                    // weights per WROM row: a power of two, at least WBEAT and MS
    parameter int WB = 8,
    parameter int TAP_WORDS = 1,
    parameter int RQ_ROWS = 1,
    parameter int PW = 64,
    parameter int MV = 1,                    // the widest VEC, PE, SIMD and VEC x PE of the core's words
    parameter int MP = 1,
    parameter int MS = 1,
    parameter int ML = 1,
    parameter int NC = 1,                    // row counters in the design
    parameter int AB = 32,                   // address bits of the activation memory (the ports' widths)
    parameter int PFB = 32,                  // bits of a field in PROGRAM (core.py: CB, which every field fits)
    parameter int CB = 32,                   // control bits: every count, index and address the control keeps
                                             // (core.py: the core's largest field, memory, table or row count,
                                             // signed, with room for one sum); addresses wrap in the low AB bits
    parameter int NR = 2,                    // read ports: max(MV x MPR x MS, 2 x ML) (MPR: 1 if XSH, else MP)
    parameter int NW = 1,                    // write ports: max(MV x MP, ML)
    parameter int MD = 1,                    // the deepest PLAT of any word
    parameter int WBEAT = 1,                 // weights per m_axi beat (the wr_* port), a power of two
    parameter int CWB = 8,                   // the datapath (hlsgen_core_dp): bits of this core's weights
    parameter int XB = 8,                    // and activations, its accumulators, MAC units and their shapes,
    parameter int AW = 32,
    parameter int NU = 0,                    // requantizers and elementwise terms
    parameter int PWB = 4,
    parameter int NSH = 1,
    parameter logic [16*NSH-1:0] SHV = '0,
    parameter logic [16*NSH-1:0] SHP = '0,
    parameter logic [16*NSH-1:0] SHS = '0,
    parameter logic [16*NSH-1:0] SHM = '0,
    parameter int NRQ = 0,
    parameter int NQS = 1,
    parameter logic [16*NQS-1:0] QSV = '0,
    parameter logic [16*NQS-1:0] QSP = '0,
    parameter int ET = 2,
    parameter int EL = 1,
    parameter bit RAW = 1,
    parameter logic [MV*MP*MS-1:0] MACK = '1,  // the lanes each kind of window word takes (hlsgen_core_dp)
    parameter logic [MV*MP*MS-1:0] AVGK = '1,
    parameter logic [MV*MP*MS-1:0] MAXK = '1,
    parameter bit XSH = 0,                   // every window word's PE lanes read the same activations (one
                                             // group): the core reads once per VEC x SIMD lane, not per lane
    parameter bit SSH = 0,                   // (XSH = 0) some window word's PE lanes (more than one) read the
                                             // same activations: such a word reads through the ports of PE
                                             // lane 0 only, and every PE lane takes their words (w_sh); the
                                             // rest read per lane
    parameter bit WST = 1,                   // some window word's weights stream in (WWAIT): lanes check wlim
    parameter bit WAL = 0,                   // every reduction step's weights are a WROM row of their own
                                             // (WSTR, WRS: whole rows): a PE lane reads one row, lane s takes
                                             // weight s of it; else two rows, from which each lane shifts its own
    parameter string PROGRAM = "program.mem",
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
    output logic [AB-1:0]        raddr[NR],
    output logic                 re[NR],     // the read at raddr is used: its step fires and its lane is live
    input  logic signed [SB-1:0] rdata[NR],
    output logic                 we[NW],
    output logic [AB-1:0]        waddr[NW],
    output logic signed [SB-1:0] wdata[NW],
    input  int                   rows[NC],
    output logic                 pub,
    output int                   pub_id,
    output int                   pub_rows,
    // words and off-chip traffic: the word started (wstart pulses the cycle after its fetch),
    // write-back still busy, weights present, and the weight write port
    output logic                 wstart,
    output int                   wnum,
    input  logic                 hold,
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the top's count is an int, the core compares its CB bits
    input  int                   wlim,
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: a core whose weights all lie on chip (WST = 0) reads a ROM
    input  logic                 wr_en,
    input  int                   wr_addr,    // the index of the beat's first weight
    input  logic [WBEAT*WB-1:0]  wr_row
    /* verilator lint_on UNUSEDSIGNAL */
);
    /* verilator no_inline_module */        // one C++ class for all of a design's cores: fast builds
    import hlsgen_word_pkg::*;               // the word layout (generated with the design)
    typedef logic signed [CB-1:0] ctl_t;    // the control's counters and fields: CB bits, not 32
    localparam int R = 6;                    // tensor rank of eltwise / move / scatter words
    localparam int X = NF - NX;
    localparam int NO = MV * MP;             // output lanes of a window step
    localparam int MPR = XSH ? 1 : MP;       // PE lanes that read: lane (v, p, s) takes read (v, w_sh ? 0 : p, s)
    localparam int WD = WRITE_DELAY;         // a step fires, its writes land WD cycles later (core.py's
                                             // WRITE_DELAY, which the build checks every task's depth against)
    localparam int DPL = WD - 1;             // hlsgen_core_dp's latency, operands to outputs (WD less the read stage)

    // ---------------------------------------------------------------- tables
    logic [NF * PFB - 1:0] prog[NT];        // a word is a row: the fetch reads one row, not NF entries
    logic [79:0] tap[TAP_WORDS];
    logic signed [PW-1:0] rq_bias[RQ_ROWS];
    logic signed [31:0] rq_m0[RQ_ROWS], rq_m1[RQ_ROWS];
    logic [6:0] rq_shift[RQ_ROWS];
    logic signed [31:0] rq_lo[RQ_ROWS], rq_hi[RQ_ROWS], rq_zp[RQ_ROWS];
    logic rq_he[RQ_ROWS];
    initial begin
        $readmemh(PROGRAM, prog);
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

    // ---------------------------------------------------------------- control
    typedef enum logic [2:0] {IDLE, FETCH, WIN, ELEM, DRAIN, DONE} state_t;
    state_t state;
    ctl_t pc;
    ctl_t f[NF];                             // the current configuration word
    ctl_t lat;                               // drain cycles left
    // the word the fetch reads (0 on start, pc after), as one row of the program ROM
    int fw;
    logic [NF * PFB - 1:0] frow;
    assign fw = state == IDLE ? 0 : int'(pc);
    assign frow = prog[fw < NT ? fw : 0];
    function automatic ctl_t pf(input int k); // field k of the row
        return ctl_t'($signed(frow[k * PFB +: PFB]));
    endfunction

    // has source t's row `row` been written? (rows counted as the top's counters count them;
    // each source's counter is read once per cycle, s_rows, and every lane compares with it)
    logic s_any[2];                          // source t is complete, or all of its rows are written
    ctl_t s_rows[2];
    always_comb
        for (int t = 0; t < 2; t++) begin
            automatic int b = X + X_SRC0 + S_WIDTH * t;
            automatic logic none = f[b + S_ID] < 0 || int'(f[b + S_ID]) >= NC;
            s_rows[t] = none ? '0 : ctl_t'(rows[int'(f[b + S_ID])]);
            s_any[t] = none || (f[b + S_ALL] > 0 && s_rows[t] >= f[b + S_ALL]);
        end
    function automatic logic row_written(input int t, input ctl_t row);
        automatic int b = X + X_SRC0 + S_WIDTH * t;
        return s_any[t] || (f[b + S_ALL] <= 0 && s_rows[t] > row);
    endfunction

    // ---------------------------------------------------------------- window datapath
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: fields are CB bits; the datapath takes the zero point's and init's low bits
    ctl_t w_dst, w_rq, w_src, w_zp, w_wsrc, w_woff, w_init, N, C, H, W, O, CG, KH, KW, OH, OW, SH, SW, PT, PL, OG;
    /* verilator lint_on UNUSEDSIGNAL */
    ctl_t VEC, PE, SIMD, RED;
    logic w_max;
    assign w_dst = f[F_W_DST]; assign w_rq = f[F_W_RQ]; assign w_src = f[F_W_SRC]; assign w_zp = f[F_W_ZP];
    assign w_wsrc = f[F_W_WSRC]; assign w_woff = f[F_W_WOFF]; assign w_max = f[F_W_MAX] != 0; assign w_init = f[F_W_INIT];
    assign N = f[F_W_N]; assign C = f[F_W_C]; assign H = f[F_W_H]; assign W = f[F_W_W]; assign O = f[F_W_O];
    assign CG = f[F_W_CG]; assign KH = f[F_W_KH]; assign KW = f[F_W_KW]; assign OH = f[F_W_OH]; assign OW = f[F_W_OW];
    assign SH = f[F_W_SH]; assign SW = f[F_W_SW]; assign PT = f[F_W_PT]; assign PL = f[F_W_PL]; assign OG = f[F_W_OG];
    // (dilations are in the tap table)
    assign VEC = f[X + X_VEC]; assign PE = f[X + X_PE]; assign SIMD = f[X + X_SIMD]; assign RED = f[X + X_WIN + W_RED];

    ctl_t n, oy, ox0, o0, r0;                // the output group (n, oy, ox0.., o0..) and its reduction step r0..
    // address counters, stepped by the word's WIN fields as the group advances (the input's are
    // offsets in the source, the output's in the destination):
    ctl_t nin, nh, nout, noh;                //   n * C * H * W, n * H, n * O * OH * OW, n * OH
    ctl_t iy0, yoff, yo;                     //   oy * SH - PT, iy0 * W, oy * OW
    ctl_t ix0;                               //   ox0 * SW - PL
    ctl_t ob, oo;                            //   o0 * WSTR (weights), o0 * OH * OW
    ctl_t rw;                                //   (r0 / SIMD) * WRS (weights)
    ctl_t gb[MP], gr[MP];                    //   per PE lane p: ((o0 + p) / OG) * CG * H * W, (o0 + p) % OG
    ctl_t gb0[MP], gr0[MP];                  //   ... and their values at o0 = 0
    ctl_t lsw[MV], lred[MP], lohw[MP];       // lane multiples, set by the fetch: v * SW, p * WSTR, p * OH * OW
    logic first_step, last_step, row_end;
    assign first_step = r0 == 0;
    assign last_step = r0 + SIMD >= RED;
    assign row_end = o0 + PE >= O && ox0 + VEC >= OW;
    logic w_ready;
    logic w_sh, q_sh;                        // the word's PE lanes share their reads (one group), now and a cycle ago
    assign w_sh = XSH || (SSH && OG >= O);
    always_ff @(posedge clk) q_sh <= w_sh;
    ctl_t w_raddr[NR];
    logic w_rlive[NR];                       // read (v, p, s) is in bounds (p < MPR; p = 0 where w_sh)
    logic w_live[MV * MP * MS];              // lane (v, p, s) computes: its read in bounds, its output there
    ctl_t w_wat[MP];                         // PE lane p's first weight of the step (its SIMD lanes' are the next)
    logic w_wlate[MP][MS];                   // lane (p, s)'s weight has not arrived yet (WWAIT)

    // lane (v, p, s) of a window step: its output pixel, output channel and reduction tap exist (once
    // per lane index, for the reads, their liveness and the writes)
    logic v_in[MV], p_in[MP], s_in[MS];
    always_comb begin
        for (int v = 0; v < MV; v++) v_in[v] = ctl_t'(v) < VEC && ox0 + ctl_t'(v) < OW;
        for (int p = 0; p < MP; p++) p_in[p] = ctl_t'(p) < PE && o0 + ctl_t'(p) < O;
        for (int s = 0; s < MS; s++) s_in[s] = ctl_t'(s) < SIMD && r0 + ctl_t'(s) < RED;
    end
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: addresses and tap fields are wider than the memories decode
    always_comb begin                        // the step's read addresses, and whether their rows are written
        w_ready = 1'b1;
        for (int k = 0; k < NR; k++) begin
            w_raddr[k] = 0;
            w_rlive[k] = 1'b0;
        end
        for (int p = 0; p < MP; p++) begin
            w_wat[p] = w_woff + ob + lred[p] + rw;
            for (int s = 0; s < MS; s++) w_wlate[p][s] = WST && f[X + X_WWAIT] != 0 && w_wat[p] + ctl_t'(s) >= ctl_t'(wlim);
        end
        for (int v = 0; v < MV; v++) begin
            for (int p = 0; p < MPR; p++) begin
                for (int s = 0; s < MS; s++) begin
                    automatic int k = (v * MPR + p) * MS + s;
                    automatic ctl_t r = r0 + ctl_t'(s);
                    automatic logic [79:0] t = tap[int'(f[X + X_TAP]) + (s_in[s] ? int'(r) : 0)];
                    automatic ctl_t iy = iy0 + ctl_t'(signed'(t[31:16]));
                    automatic ctl_t ix = ix0 + lsw[v] + ctl_t'(signed'(t[15:0]));
                    if (state == WIN && v_in[v] && p_in[p] && (p == 0 || !w_sh) && s_in[s] && iy >= 0 && iy < H && ix >= 0
                        && ix < W) begin
                        w_rlive[k] = 1'b1;
                        w_raddr[k] = w_src + nin + gb[p] + yoff + ix0 + lsw[v] + ctl_t'(t[63:32]);
                        if (!row_written(0, nh + iy)) w_ready = 1'b0;
                    end
                end
            end
        end
        for (int v = 0; v < MV; v++) for (int p = 0; p < MP; p++) for (int s = 0; s < MS; s++) begin
            automatic int k = (v * MP + p) * MS + s;
            // its read: (v, p, s), or (v, 0, s) where the PE lanes share it (both indices are
            // constants of the unrolled loop, so the pick is a mux, not index arithmetic)
            w_live[k] = (w_sh ? w_rlive[v * MPR * MS + s] : w_rlive[(v * MPR + (XSH ? 0 : p)) * MS + s]) && p_in[p];
            if (w_live[k] && w_wlate[p][s]) w_ready = 1'b0;
        end
    end
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------------------------------------------------------- element datapaths
    ctl_t i0, elements;
    ctl_t eco[ML][R];                        // each lane's coordinates (iteration i0 + l in the word's order)
    // each lane's maps, B + sum co[d] * K[d] of its coordinates, kept as accumulators (MB, MONE,
    // MSTEP, MADJ): write address, read addresses of sources 0 and 1, the rows those reads wait
    // for, the requantization row
    ctl_t acc[ML][NMAP];
    ctl_t prow, prem;                        // (i0 / PDIV, i0 % PDIV): rows published so far, and the rest
    assign elements = f[X + X_ELEMS];
    logic e_we[ML];
    ctl_t e_dst[ML], e_row[ML];
    logic e_ready;
    ctl_t e_raddr[NR];
    logic e_rlive[NR];                       // read k serves a lane that writes (its term exists)
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: addresses are wider than the memory decodes
    always_comb begin                        // each lane's element: where it reads, where it writes (its maps)
        e_ready = 1'b1;
        for (int k = 0; k < NR; k++) begin
            e_raddr[k] = 0;
            e_rlive[k] = 1'b0;
        end
        for (int l = 0; l < ML; l++) begin
            e_we[l] = state == ELEM && ctl_t'(l) < PE && i0 + ctl_t'(l) < elements;      // element words have VEC = 1
            e_dst[l] = 0;
            e_row[l] = 0;
            if (e_we[l]) begin
                e_dst[l] = acc[l][0];
                if (f[F_KIND] == 1) begin        // eltwise: up to two terms, requantized
                    e_row[l] = acc[l][5];
                    for (int t = 0; t < 2; t++) begin
                        if (ctl_t'(t) < f[F_E_NT]) begin
                            e_raddr[t * ML + l] = acc[l][1 + t];
                            e_rlive[t * ML + l] = 1'b1;
                            if (!row_written(t, acc[l][3 + t])) e_ready = 1'b0;
                        end
                    end
                end else begin                   // move, scatter: one source
                    e_raddr[l] = acc[l][1];
                    e_rlive[l] = 1'b1;
                    if (!row_written(0, acc[l][3])) e_ready = 1'b0;
                end
            end
        end
    end
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------------------------------------------------------- arithmetic (hlsgen_core_dp)
    logic ready, w_fire, e_fire, e_last;
    logic q_wfire, q_first;                  // a window step fired a cycle ago, and was its output group's first
    localparam int NL = MV * MP * MS;
    logic [NL-1:0] dp_live;
    logic [NL*SB-1:0] dp_x;
    logic [NL*CWB-1:0] dp_w;
    logic [NO*32-1:0] dp_m0, dp_ozp, dp_lo, dp_hi;
    logic [NO*PW-1:0] dp_bias;
    logic [NO*7-1:0] dp_shift;
    logic [NO-1:0] dp_he;
    logic [NO*SB-1:0] dp_wq;
    logic [2*ML*SB-1:0] dp_ex;
    logic [2*(SB+1)-1:0] dp_ezp;
    logic [2*ML*32-1:0] dp_em;
    logic [ML*PW-1:0] dp_ebias;
    logic [ML*7-1:0] dp_eshift;
    logic [ML-1:0] dp_ehe;
    logic [ML*32-1:0] dp_eozp, dp_elo, dp_ehi;
    logic [ML*SB-1:0] dp_eq;
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: table rows are wider than the tables decode
    ctl_t w_row[NO];
    ctl_t w_row_q[DPL][NO], e_row_q[2][ML];   // the step's rows, 1 to DPL (1, 2) cycles after it fired
    /* verilator lint_on UNUSEDSIGNAL */
    always_comb for (int o = 0; o < NO; o++) w_row[o] = w_rq + o0 + ctl_t'(o % MP);
    always_ff @(posedge clk) begin
        for (int o = 0; o < NO; o++) begin
            w_row_q[0][o] <= w_row[o];
            for (int i = 1; i < DPL; i++) w_row_q[i][o] <= w_row_q[i - 1][o];
        end
        for (int l = 0; l < ML; l++) begin
            e_row_q[0][l] <= e_row[l];
            e_row_q[1][l] <= e_row_q[0][l];
        end
    end
    // the read stage: the activations come back from the top's memory one cycle after their
    // addresses (its registered read ports); the weights are read from this core's table the same
    // way, into the registers the arithmetic takes them from. A requantization row is read the
    // same way, timed for the cycle hlsgen_core_dp's stage uses it (its header): a window
    // output's multiplier 4 cycles after the step fired and the rest of its row 5 cycles after
    // (stages D and E: read at w_row_q[DPL - 2] and [DPL - 1]); an elementwise lane's multipliers
    // 1 cycle after, its bias 2 and the rest 3 (stages A, B, C, which do not move with DPL)
    always_comb begin
        for (int v = 0; v < MV; v++) for (int p = 0; p < MP; p++) for (int s = 0; s < MS; s++)
            dp_x[((v * MP + p) * MS + s) * SB +: SB] = q_sh ? rdata[v * MPR * MS + s] : rdata[(v * MPR + (XSH ? 0 : p)) * MS + s];
        for (int t = 0; t < 2; t++) dp_ezp[t * (SB + 1) +: SB + 1] = (SB + 1)'(f[F_E_TERMS + t * F_E_TERM + F_E_ZP]);
        for (int l = 0; l < ML; l++) for (int t = 0; t < 2; t++) dp_ex[(t * ML + l) * SB +: SB] = rdata[t * ML + l];
    end
    // a PE lane's SIMD weights are consecutive, w_wat[p] on. WAL: they are the row w_wat[p] / WR
    // itself, weight s at bits WB * s; else the read stage reads the two WROM rows they lie in
    // (SIMD <= WR) with one port each, and each lane shifts its weight out of them
    localparam int LWR = $clog2(WR);
    localparam int RROWS = WAL ? 1 : 2;
    logic [RROWS * WR * WB - 1:0] w_rows_q[MP];
    ctl_t w_at_q[MP];
    logic w_use_q;                           // the step has weights, registered with its operands
    always_ff @(posedge clk) begin
        for (int p = 0; p < MP; p++) w_at_q[p] <= WAL ? '0 : w_wat[p] & ctl_t'(WR - 1);
        w_use_q <= w_wsrc >= 0;
    end
    // A core whose weights all lie on chip (WST = 0) reads them from its one ROM (WROM). Streamed
    // weights (WST) arrive from off-chip memory: a beat is a slice of a row, written whole through
    // one write port (a task's weights start on a row; the rest of its last beat is never read).
    // Each PE lane reads its rows from a copy of the table of its own, which every beat is
    // written into, and a row holds WR / WBEAT beats, each in a slot of its own (the beat's
    // address bits above the beat's pick it): so synthesis maps each copy, a write port of whole
    // slots and a lane's two read ports, to LUT RAM. One table read by every lane is flip-flops
    // and read multiplexers where it has more than 4 read ports, and a slice written at a run-time
    // offset is a write enable per bit, a LUT RAM cell per bit (Yosys; docs/rtl.md, stop 45).
    // The ROM has no write port, as synthesis must see it when it synthesizes the core alone,
    // where wr_en is a free input.
    // The build lays weights aligned exactly where none streams in (core.py: WAL = !WST), so the
    // ROM's lanes read one row each and the copies' two.
    localparam int LWBEAT = $clog2(WBEAT);
    if (!WST) begin : wt_rom
        logic [WR * WB - 1:0] wrom[WROM_ROWS];  // weight i: row i / WR, bits WB * (i % WR)
        initial $readmemh(WROM, wrom);
        always_ff @(posedge clk)
            for (int p = 0; p < MP; p++) w_rows_q[p] <= (RROWS * WR * WB)'(wrom[int'(w_wat[p]) >> LWR]);
    end else begin : wt_lanes
        for (genvar p = 0; p < MP; p++) begin : lane
            logic [WR * WB - 1:0] wcopy[WROM_ROWS];
            initial $readmemh(WROM, wcopy);
            always_ff @(posedge clk) begin
                if (wr_en)
                    for (int s = 0; s < WR / WBEAT; s++)
                        if (((wr_addr & (WR - 1)) >> LWBEAT) == s) wcopy[wr_addr >> LWR][s * WBEAT * WB +: WBEAT * WB] <= wr_row;
                w_rows_q[p] <= (RROWS * WR * WB)'({wcopy[(int'(w_wat[p]) >> LWR) + 1], wcopy[int'(w_wat[p]) >> LWR]});
            end
        end
    end
    // each lane's weight (hlsgen_core_dp zeroes a dead lane's where a unit packs two lanes)
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: lane indices are ints; a core of 1-bit weights takes bit 0
    always_comb
        for (int v = 0; v < MV; v++) for (int p = 0; p < MP; p++) for (int s = 0; s < MS; s++) begin
            automatic int k = (v * MP + p) * MS + s;
            automatic logic signed [WB-1:0] wt = WAL ? w_rows_q[p][s * WB +: WB] : w_rows_q[p][int'(w_at_q[p]) * WB + s * WB +: WB];
            dp_w[k * CWB +: CWB] = CWB'(wt);
        end
    /* verilator lint_on UNUSEDSIGNAL */
    always_ff @(posedge clk) begin           // each lane's liveness, and each output's requantization row
        for (int k = 0; k < NL; k++) begin
            dp_live[k] <= w_live[k];
        end
        for (int o = 0; o < NO; o++) begin
            dp_m0[o * 32 +: 32] <= rq_m0[int'(w_row_q[DPL - 2][o])];
            dp_bias[o * PW +: PW] <= rq_bias[int'(w_row_q[DPL - 1][o])];
            dp_shift[o * 7 +: 7] <= rq_shift[int'(w_row_q[DPL - 1][o])];
            dp_he[o] <= rq_he[int'(w_row_q[DPL - 1][o])];
            dp_ozp[o * 32 +: 32] <= rq_zp[int'(w_row_q[DPL - 1][o])];
            dp_lo[o * 32 +: 32] <= rq_lo[int'(w_row_q[DPL - 1][o])];
            dp_hi[o * 32 +: 32] <= rq_hi[int'(w_row_q[DPL - 1][o])];
        end
        for (int l = 0; l < ML; l++) begin
            dp_em[l * 32 +: 32] <= rq_m0[int'(e_row[l])];
            dp_em[(ML + l) * 32 +: 32] <= rq_m1[int'(e_row[l])];
            dp_ebias[l * PW +: PW] <= rq_bias[int'(e_row_q[0][l])];
            dp_eshift[l * 7 +: 7] <= rq_shift[int'(e_row_q[1][l])];
            dp_ehe[l] <= rq_he[int'(e_row_q[1][l])];
            dp_eozp[l * 32 +: 32] <= rq_zp[int'(e_row_q[1][l])];
            dp_elo[l * 32 +: 32] <= rq_lo[int'(e_row_q[1][l])];
            dp_ehi[l * 32 +: 32] <= rq_hi[int'(e_row_q[1][l])];
        end
    end
    hlsgen_core_dp #(.MV(MV), .MP(MP), .MS(MS), .ML(ML), .SB(SB), .XB(XB), .WB(CWB), .PWB(PWB), .AW(AW), .PW(PW), .NU(NU),
                     .NSH(NSH),
                     .SHV(SHV), .SHP(SHP), .SHS(SHS), .SHM(SHM), .NRQ(NRQ), .NQS(NQS), .QSV(QSV), .QSP(QSP), .ET(ET),
                     .EL(EL), .RAW(RAW), .MACK(MACK), .AVGK(AVGK), .MAXK(MAXK)) dp (
        .clk(clk), .acc_en(q_wfire), .first(q_first), .wmax(w_max), .wuse(w_use_q), .fv(16'(VEC)), .fp(16'(PE)),
        .fs(16'(SIMD)), .live(dp_live), .x(dp_x),
        .w(dp_w), .zp((SB + 1)'(w_zp)), .init(SB'(w_init)), .m0(dp_m0), .bias(dp_bias), .shift(dp_shift), .he(dp_he),
        .ozp(dp_ozp), .lo(dp_lo), .hi(dp_hi), .wq(dp_wq), .nt(2'(f[F_E_NT])), .ex(dp_ex), .ezp(dp_ezp), .em(dp_em),
        .ebias(dp_ebias), .eshift(dp_eshift), .ehe(dp_ehe), .eozp(dp_eozp), .elo(dp_elo), .ehi(dp_ehi), .eq(dp_eq)
    );
    // a move's values (no arithmetic), delayed to come out with hlsgen_core_dp's
    logic signed [SB-1:0] mv_q[DPL][ML];
    always_ff @(posedge clk) begin
        for (int l = 0; l < ML; l++) begin
            mv_q[0][l] <= rdata[l];
            for (int i = 1; i < DPL; i++) mv_q[i][l] <= mv_q[i - 1][l];
        end
    end

    // ---------------------------------------------------------------- ports
    logic done_row;                          // rows of the output completed this cycle, and how many
    ctl_t done_rows;
    logic p_carry;                           // (i0 + VEC x PE) / PDIV: the next row count, one carry
    assign p_carry = prem + f[X + X_PR] >= f[X + X_PDIV];
    assign ready = state == WIN ? w_ready : e_ready;
    assign w_fire = state == WIN && w_ready;
    assign e_fire = state == ELEM && e_ready;
    assign e_last = i0 + PE >= elements;   // element words (VEC = 1, PE lanes)
    // (the addresses are computed in CB bits and leave as the memory's AB bits, so synthesis keeps
    // no adder bit above them)
    always_comb for (int k = 0; k < NR; k++) raddr[k] = AB'(state == WIN ? w_raddr[k] : e_raddr[k]);
    // a read is enabled only when its step fires and its lane uses it (a block RAM's enable): the
    // memory's simulation poisons every read that is not (hlsgen_act_mem), so a lane that used one
    // would show in the outputs
    always_comb for (int k = 0; k < NR; k++) re[k] = (w_fire && w_rlive[k]) || (e_fire && e_rlive[k]);
    // a step's writes: their addresses when it fires, their values WD cycles later, once the read
    // stage has brought the operands and hlsgen_core_dp's DPL stages have computed (q_*[i]: the
    // step that fired i + 1 cycles ago)
    logic s_we[NW];
    ctl_t s_waddr[NW];
    logic q_we[WD][NW], q_wout[WD], q_elt[WD];
    logic [AB-1:0] q_waddr[WD][NW];
    always_ff @(posedge clk) begin
        q_wfire <= w_fire && rst_n;
        q_first <= first_step;
        q_wout[0] <= w_fire && last_step;
        q_elt[0] <= e_fire && f[F_KIND] == 1;
        for (int k = 0; k < NW; k++) begin
            q_we[0][k] <= s_we[k] && rst_n;
            q_waddr[0][k] <= AB'(s_waddr[k]);
        end
        for (int i = 1; i < WD; i++) begin
            q_wout[i] <= q_wout[i - 1];
            q_elt[i] <= q_elt[i - 1];
            for (int k = 0; k < NW; k++) begin
                q_we[i][k] <= q_we[i - 1][k] && rst_n;
                q_waddr[i][k] <= q_waddr[i - 1][k];
            end
        end
    end
    always_comb begin
        for (int k = 0; k < NW; k++) begin
            we[k] = q_we[WD - 1][k];
            waddr[k] = q_waddr[WD - 1][k];
            if (q_wout[WD - 1]) wdata[k] = k < NO ? dp_wq[(k < NO ? k : 0) * SB +: SB] : '0;
            else if (q_elt[WD - 1]) wdata[k] = k < ML ? dp_eq[(k < ML ? k : 0) * SB +: SB] : '0;
            else wdata[k] = k < ML ? mv_q[DPL - 1][k < ML ? k : 0] : '0;
        end
    end
    always_comb begin
        for (int k = 0; k < NW; k++) begin
            s_we[k] = 1'b0;
            s_waddr[k] = 0;
        end
        if (w_fire && last_step) begin       // the group's outputs: requantize (or pass the maximum)
            for (int v = 0; v < MV; v++) begin
                for (int p = 0; p < MP; p++) begin
                    if (v_in[v] && p_in[p]) begin
                        s_we[v * MP + p] = 1'b1;
                        s_waddr[v * MP + p] = w_dst + nout + oo + lohw[p] + yo + ox0 + ctl_t'(v);
                    end
                end
            end
        end
        if (e_fire) begin
            for (int l = 0; l < ML; l++) begin
                s_we[l] = e_we[l];
                s_waddr[l] = e_dst[l];
            end
        end
        // rows of the output completed this cycle
        done_row = 1'b0;
        done_rows = 0;
        if (w_fire && last_step && row_end) begin
            done_row = f[X + X_PID] >= 0;
            done_rows = noh + oy + 1;
        end
        if (e_fire && (e_last || f[X + X_PDIV] > 0)) begin
            done_row = f[X + X_PID] >= 0;
            done_rows = e_last ? f[X + X_PTOT] : prow + f[X + X_PQ] + (p_carry ? 1 : 0);
        end
    end

    // ... published PLAT cycles later (a delay line; a task's words share one PLAT, and a word
    // drains its LAT = PLAT before the next task's word starts, so entries never collide)
    logic dl_v[MD];
    ctl_t dl_id[MD], dl_rows[MD];
    assign pub = dl_v[0];
    assign pub_id = int'(dl_id[0]);
    assign pub_rows = int'(dl_rows[0]);
    always_ff @(posedge clk) begin
        for (int k = 0; k < MD; k++) begin
            if (k + 1 < MD) begin
                dl_v[k] <= dl_v[k + 1];
                dl_id[k] <= dl_id[k + 1];
                dl_rows[k] <= dl_rows[k + 1];
            end else dl_v[k] <= 1'b0;
            if (done_row && k == (int'(f[X + X_PLAT]) > MD ? MD - 1 : (f[X + X_PLAT] > 0 ? int'(f[X + X_PLAT]) - 1 : 0))) begin
                dl_v[k] <= 1'b1;
                dl_id[k] <= f[X + X_PID];
                dl_rows[k] <= done_rows;
            end
        end
        if (!rst_n) for (int k = 0; k < MD; k++) dl_v[k] <= 1'b0;
    end

    task automatic fetch();                 // load word fw and start it
        automatic ctl_t og = pf(F_W_OG);
        automatic ctl_t ghw = pf(X + X_WIN + W_GHW);
        automatic ctl_t b = 0;
        automatic ctl_t rm = 0;
        for (int k = 0; k < NF; k++) f[k] <= pf(k);
        wstart <= 1'b1;
        wnum <= fw;
        n <= 0; oy <= 0; ox0 <= 0; o0 <= 0; r0 <= 0; rw <= 0; i0 <= 0; prow <= 0; prem <= 0;
        begin                                // lane l's coordinates: lane l - 1's, one on
            automatic ctl_t c[R];
            automatic ctl_t a[NMAP];
            automatic int e0 = pf(F_KIND) == 1 ? F_E_DIMS : F_M_DIMS;
            for (int d = 0; d < R; d++) c[d] = 0;
            for (int m = 0; m < NMAP; m++) a[m] = pf(X + X_MB + m);
            for (int l = 0; l < ML; l++) begin
                automatic logic carry = 1'b1;
                for (int d = 0; d < R; d++) eco[l][d] <= c[d];
                for (int m = 0; m < NMAP; m++) begin
                    acc[l][m] <= a[m];
                    a[m] = a[m] + pf(X + X_MONE + m);
                end
                for (int k = R - 1; k >= 0; k--) begin
                    automatic int d = int'(pf(X + X_ORD + k));
                    automatic ctl_t dim = pf(e0 + d);
                    if (carry) begin
                        c[d] = c[d] + 1;
                        carry = c[d] >= dim;
                        if (carry) begin
                            c[d] = 0;
                            for (int m = 0; m < NMAP; m++) a[m] = a[m] + pf(X + X_MADJ + m * R + d);
                        end
                    end
                end
            end
        end
        nin <= 0; nh <= 0; nout <= 0; noh <= 0; yo <= 0; ob <= 0; oo <= 0;
        iy0 <= -pf(F_W_PT);
        yoff <= pf(X + X_WIN + W_YOFF0);
        ix0 <= -pf(F_W_PL);
        for (int p = 0; p < MP; p++) begin   // lane p's group and place in it: lane p - 1's, one on
            gb[p] <= b; gb0[p] <= b;
            gr[p] <= rm; gr0[p] <= rm;
            rm = rm + 1;
            if (rm == og) begin
                rm = 0;
                b = b + ghw;
            end
        end
        begin                                // the lane multiples: lane p's is lane p - 1's plus the field
            automatic ctl_t m_red = 0;       // (a constant times a run-time field is a multiplier, which
            automatic ctl_t m_ohw = 0;       // Yosys maps to DSP48E2s: 22 in a 16-lane pool core's control)
            automatic ctl_t m_sw = 0;
            for (int p = 0; p < MP; p++) begin
                lred[p] <= m_red;
                lohw[p] <= m_ohw;
                m_red = m_red + pf(X + X_WIN + W_WSTR);
                m_ohw = m_ohw + pf(X + X_WIN + W_OHW);
            end
            for (int v = 0; v < MV; v++) begin
                lsw[v] <= m_sw;
                m_sw = m_sw + pf(F_W_SW);
            end
        end
        lat <= pf(X + X_LAT);
        state <= (pf(F_KIND) == 0) ? WIN : ELEM;
    endtask

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            state <= IDLE;
            done <= 1'b0;
            wstart <= 1'b0;
            wnum <= 0;
            pc <= 0;
        end else begin
            done <= 1'b0;
            wstart <= 1'b0;
            case (state)
                // FETCH loads word pc in one cycle (a word is one row of the program ROM); on start
                // the first word loads at once
                IDLE: if (start) begin   // (fetch() sets the state: WIN or ELEM)
                    fetch();
                    pc <= 1;
                end
                FETCH: if (!(f[X + X_HOLD] != 0 && hold)) begin
                    if (int'(pc) == NT) state <= DONE;
                    else begin
                        fetch();
                        pc <= pc + 1;
                    end
                end
                WIN: if (ready) begin
                    if (!last_step) begin
                        r0 <= r0 + SIMD;
                        rw <= rw + f[X + X_WIN + W_WRS];
                    end else begin
                        r0 <= 0;
                        rw <= 0;
                        if (o0 + PE < O) begin
                            o0 <= o0 + PE;
                            ob <= ob + f[X + X_WIN + W_PRED];
                            oo <= oo + f[X + X_WIN + W_POHW];
                            for (int p = 0; p < MP; p++) begin   // PE on: GQ groups and GR places, one carry
                                if (gr[p] + f[X + X_WIN + W_GR] >= OG) begin
                                    gr[p] <= gr[p] + f[X + X_WIN + W_GR] - OG;
                                    gb[p] <= gb[p] + f[X + X_WIN + W_GQ] + f[X + X_WIN + W_GHW];
                                end else begin
                                    gr[p] <= gr[p] + f[X + X_WIN + W_GR];
                                    gb[p] <= gb[p] + f[X + X_WIN + W_GQ];
                                end
                            end
                        end else begin
                            o0 <= 0;
                            ob <= 0;
                            oo <= 0;
                            for (int p = 0; p < MP; p++) begin
                                gb[p] <= gb0[p];
                                gr[p] <= gr0[p];
                            end
                            if (ox0 + VEC < OW) begin
                                ox0 <= ox0 + VEC;
                                ix0 <= ix0 + f[X + X_WIN + W_VSW];
                            end else begin
                                ox0 <= 0;
                                ix0 <= -PL;
                                if (oy + 1 < OH) begin
                                    oy <= oy + 1;
                                    iy0 <= iy0 + SH;
                                    yoff <= yoff + f[X + X_WIN + W_SHW];
                                    yo <= yo + OW;
                                end else begin
                                    oy <= 0;
                                    iy0 <= -PT;
                                    yoff <= f[X + X_WIN + W_YOFF0];
                                    yo <= 0;
                                    if (n + 1 < N) begin
                                        n <= n + 1;
                                        nin <= nin + f[X + X_WIN + W_ICHW];
                                        nh <= nh + H;
                                        nout <= nout + f[X + X_WIN + W_OCHW];
                                        noh <= noh + OH;
                                    end else state <= (lat > 0) ? DRAIN : FETCH;
                                end
                            end
                        end
                    end
                end
                ELEM: if (ready) begin
                    i0 <= i0 + PE;
                    if (f[X + X_PDIV] > 0) begin          // PQ rows and PR iterations on, one carry
                        prow <= prow + f[X + X_PQ] + (p_carry ? 1 : 0);
                        prem <= p_carry ? prem + f[X + X_PR] - f[X + X_PDIV] : prem + f[X + X_PR];
                    end
                    for (int l = 0; l < ML; l++) begin   // each lane VEC x PE on: the ESTEP digits, one carry each,
                        automatic logic carry = 1'b0;     // and its maps MSTEP on, MADJ more per digit that carries
                        automatic ctl_t a[NMAP];
                        for (int m = 0; m < NMAP; m++) a[m] = acc[l][m] + f[X + X_MSTEP + m];
                        for (int k = R - 1; k >= 0; k--) begin
                            automatic int d = int'(f[X + X_ORD + k]);
                            automatic ctl_t dim = f[(f[F_KIND] == 1 ? F_E_DIMS : F_M_DIMS) + d];
                            automatic ctl_t sum = eco[l][d] + f[X + X_ESTEP + d] + (carry ? 1 : 0);
                            carry = sum >= dim;
                            eco[l][d] <= carry ? sum - dim : sum;
                            if (carry) for (int m = 0; m < NMAP; m++) a[m] = a[m] + f[X + X_MADJ + m * R + d];
                        end
                        for (int m = 0; m < NMAP; m++) acc[l][m] <= a[m];
                    end
                    if (e_last) state <= (lat > 0) ? DRAIN : FETCH;
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
