// hlsgen: the arithmetic of one hlsgen_core, sized to the words that core runs. hlsgen_core
// computes every output value here: its window lanes' multiply-accumulates (or maxima), the
// requantization of a window step's outputs, and its elementwise lanes. Addresses, memories and
// tables stay in hlsgen_core, which passes each lane's operands and table rows in.
//
// This is the part `make synth-yosys` synthesizes for every core of a design (docs/rtl.md), so
// it is written for Yosys as well as Verilator: packed ports (lane k at bits [k*W +: W]),
// products at their real widths, no unpacked ports or `return`.
//
// A pipeline of five stages, a new step every cycle (DPL = 4: a step's outputs come 4 cycles
// after its operands). Every product is registered where it leaves its multiplier, so that a
// DSP48E2 takes the register as its MREG, and the accumulators' loop is one adder (or one
// comparator), the step's products being summed in the stage before:
//   A  the step's operands (hlsgen_core's registered reads) and controls: the MAC units multiply
//      (window lanes), the elementwise lanes multiply their terms
//   B  each output's sum of the step's products (or their maximum); the elementwise lanes add
//      their terms and bias
//   C  the accumulators add that sum (or take the maximum); the elementwise lanes round, shift
//      and clamp (hlsgen_rq_tail)
//   D  the requantizers multiply the accumulators by M0
//   E  the requantizers round, shift and clamp: wq and eq are the step's outputs
// Each table row comes in the cycle its stage uses it: m0 in D and the rest of a window output's
// row (bias, shift, rounding, zero point, clamp) in E; an elementwise lane's multipliers em in
// A, its bias in B and the rest in C. The step's controls travel with it, so the next word may
// start while the last one's steps are still inside.
//
// Window lanes k = (v * MP + p) * MS + s (VEC pixels x PE output channels x SIMD taps); output
// lane o = v * MP + p. A step adds, for every live lane, w * (x - zp) (w = 1 when the word has
// no weights: average pools) to its output lane's accumulator, or takes the maximum (max
// pools).
//
// A sequential core time-shares its arithmetic between tasks of different foldings, so the
// multipliers are pools, as large as the largest user, not one per lane of the widest folding
// in each dimension (the cost model's reconfigurable core, hlsgen/schedule/cost.py: core_dsp):
// - NU MAC units. A weighted word's folding (fv, fp, fs) selects one of the NSH shapes (SHV,
//   SHP, SHS: 16 bits per shape) and with it a fixed routing of its lanes onto the units. SHM
//   says how a shape's lanes share a unit (int4 x int8, the cost model's two products per
//   DSP48E2, as hlsgen_mac_pair does):
//     0: one lane per unit, w * (x - zp);
//     1: lanes p and p + 1 (same pixel and tap, so the same activation: dense convs and
//        linears): (w1 * 2^SP + w0) * (x - zp);
//     2: lanes v and v + 1 (same output channel and tap, so the same weight for every conv):
//        ((x1 - zp) * 2^SP + (x0 - zp)) * w.
//   Only shapes whose words all have weights of at most PWB bits pair (hlsgen gives PWB <= 4),
//   so SP is sized by PWB, not by the core's widest weight WB: a core whose stem conv has int8
//   weights still packs the int4 layers it also runs, as the cost model prices each task. An
//   unpaired shape takes a unit's whole product.
// - NRQ requantizers. A requantizing window word's (fv, fp) selects one of the NQS shapes (QSV,
//   QSP), which routes its outputs onto the requantizers. A max pool's wide folding adds
//   comparators, not DSPs.
// The accumulators are AW bits: the widest accumulator range of the core's tasks (sums wrap
// modulo 2^AW, so a final value that fits is exact).
//
// What a core's words cannot use is not built, so that synthesis gets only the logic the words
// need (docs/rtl.md, "Synthesis"): without pools (RAW = 0) there is no max path and every window
// word has weights, so the products are not selected against the lanes' own values; with one MAC
// shape (NSH = 1) or one requantizer shape (NQS = 1) the routing does not depend on the word's
// folding (every window word has it; other words' steps leave the accumulators alone). A dead
// lane's product is zeroed before the sum, not the sum selected around it. A lane builds only
// the paths the words that reach it take (MACK, AVGK, MAXK; since stop 46): in a sequential core
// whose max pool runs 8 x 9 lanes and whose conv 2 x 4, 8 lanes sum and 72 compare, where every
// lane did both.
//
// Elementwise lanes (EL of the core's ML lanes; the others only serve moves), ET terms each:
// bias + sum_t (x_t - zp_t) * m_t, then the
// requantizer's tail (hlsgen_rq_tail).
module hlsgen_core_dp #(
    parameter int MV = 1,
    parameter int MP = 1,
    parameter int MS = 1,
    parameter int ML = 1,
    parameter int SB = 9,                    // memory word bits
    parameter int XB = 8,                    // the bits of the activations this core's words read
    parameter int WB = 8,                    // weight bits
    parameter int PWB = 4,                   // the weight bits of the shapes that pair lanes (SHM > 0)
    parameter int AW = 32,                   // accumulator bits
    parameter int PW = 64,                   // requantization bias bits
    parameter int NU = 0,                    // MAC units (0: no word has weights)
    parameter int NSH = 1,                   // their shapes: the foldings of the weighted words
    parameter logic [16*NSH-1:0] SHV = '0,
    parameter logic [16*NSH-1:0] SHP = '0,
    parameter logic [16*NSH-1:0] SHS = '0,
    parameter logic [16*NSH-1:0] SHM = '0,  // 0: a lane per unit; 1: PE pairs; 2: VEC pairs
    parameter int NRQ = 0,                   // requantizers (0: no window word requantizes)
    parameter int NQS = 1,                   // their shapes: VEC x PE of the requantizing window words
    parameter logic [16*NQS-1:0] QSV = '0,
    parameter logic [16*NQS-1:0] QSP = '0,
    parameter int ET = 2,                    // elementwise terms (0: the core runs no elementwise word)
    parameter int EL = 1,                    // lanes of its elementwise words (moves use the others)
    parameter bit RAW = 1,                   // a window word without weights (a pool) sums or compares the
                                             // lanes' activations themselves: they are kept past stage A
    // which lanes some window word of the core multiplies at (MACK), sums its own x - zp at (AVGK:
    // average pools) or takes the maximum at (MAXK: max pools), bit k = (v * MP + p) * MS + s: the
    // lanes inside those words' foldings (a lane is live only there). A sequential core's lanes
    // are its widest folding in each dimension; a path no word takes at a lane is not built there
    parameter logic [MV*MP*MS-1:0] MACK = '1,
    parameter logic [MV*MP*MS-1:0] AVGK = '1,
    parameter logic [MV*MP*MS-1:0] MAXK = '1
) (
    // waiver: a core sized for its words leaves some operands unused (the weights of lanes no
    // shape multiplies, the requantization rows of outputs no shape requantizes, the second
    // term when ET < 2)
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic                   clk,
    // a window step (stage A)
    input  logic                   acc_en,   // the step fires: accumulators take the step's sums
    input  logic                   first,    // the step starts an output group (from init)
    input  logic                   wmax,     // maxima instead of sums
    input  logic                   wuse,     // the word has weights
    input  logic [15:0]            fv,       // the word's folding: VEC, PE, SIMD
    input  logic [15:0]            fp,
    input  logic [15:0]            fs,
    input  logic [MV*MP*MS-1:0]    live,
    input  logic [MV*MP*MS*SB-1:0] x,
    input  logic [MV*MP*MS*WB-1:0] w,
    input  logic signed [SB:0]     zp,
    input  logic signed [SB-1:0]   init,
    // the step's outputs: requantization rows (multiplier in stage D; bias, shift, rounding, zero
    // point, clamp in stage E)
    input  logic [MV*MP*32-1:0]    m0,
    input  logic [MV*MP*PW-1:0]    bias,
    input  logic [MV*MP*7-1:0]     shift,
    input  logic [MV*MP-1:0]       he,
    input  logic [MV*MP*32-1:0]    ozp,
    input  logic [MV*MP*32-1:0]    lo,
    input  logic [MV*MP*32-1:0]    hi,
    output logic [MV*MP*SB-1:0]    wq,       // stage E: the accumulators after the step, requantized (or the maxima)
    // elementwise lanes: term t of lane l at [(t * ML + l) * W +: W]; nt, ex, ezp, em in stage A,
    // ebias in B, the rest in C
    input  logic [1:0]             nt,
    input  logic [2*ML*SB-1:0]     ex,
    input  logic [2*(SB+1)-1:0]    ezp,
    input  logic [2*ML*32-1:0]     em,
    input  logic [ML*PW-1:0]       ebias,
    input  logic [ML*7-1:0]        eshift,
    input  logic [ML-1:0]          ehe,
    input  logic [ML*32-1:0]       eozp,
    input  logic [ML*32-1:0]       elo,
    input  logic [ML*32-1:0]       ehi,
    output logic [ML*SB-1:0]       eq        // stage E
    /* verilator lint_on UNUSEDSIGNAL */
);
    /* verilator lint_off WIDTHCONCAT */    // waiver: '0 fills of the packed lane vectors, which a wide core
                                            // makes longer than Verilator's 8192-bit replication limit
    localparam int NL = MV * MP * MS;
    localparam int NO = MV * MP;
    localparam int DW = XB + 1;              // x - zp (x and zp both fit XB bits, signed or not)
    localparam int PRW = WB + DW;            // one product
    // the requantizer (hlsgen_rq_tail) works at RW bits: wider than a window output's product
    // plus its bias and than an elementwise lane's two products plus its bias
    localparam int RW0 = (AW + 32 > DW + 34) ? AW + 32 : DW + 34;
    localparam int RW = (RW0 > PW ? RW0 : PW) + 2;   // PW (kernel.py's requantization width) also
                                             // covers the largest shift + 2, which the rounding needs
    localparam int SP = PWB + DW + 1;        // a packed pair's field: each product |w * d| < 2^(SP-1)
    localparam int OW = WB > DW ? WB : DW;   // a unit's operands: weights or x - zp
    localparam int OWP = PWB > DW ? PWB : DW;   // a paired shape's operands
    localparam bit PK = |SHM;                // does any shape pair lanes on a unit?
    localparam int PKW0 = PK ? OWP + SP + 1 : OW;
    localparam int PKW = PKW0 > OW ? PKW0 : OW;   // the unit's first operand: a packed pair or one value

    // ---------------------------------------------------------------- the word's shapes
    localparam int NT = NSH > NQS ? NSH : NQS;   // the shape tables, widened to one length
    localparam logic [16*NT-1:0] TSV = (16*NT)'(SHV), TSP = (16*NT)'(SHP), TSS = (16*NT)'(SHS), TSM = (16*NT)'(SHM);
    localparam logic [16*NT-1:0] TQV = (16*NT)'(QSV), TQP = (16*NT)'(QSP);
    function automatic int f_field(input logic [16*NT-1:0] t, input int i);   // entry i of a shape table
        f_field = int'(t[i * 16 +: 16]);      // (every read of SHV..SHM, QSV, QSP goes through here)
    endfunction
    logic [NSH-1:0] msel;                    // which MAC shape the word's folding is
    logic [NQS-1:0] qsel;                    // which requantizer shape
    always_comb begin
        for (int i = 0; i < NSH; i++)
            msel[i] = int'(fv) == f_field(TSV, i) && int'(fp) == f_field(TSP, i) && int'(fs) == f_field(TSS, i);
        for (int j = 0; j < NQS; j++) qsel[j] = int'(fv) == f_field(TQV, j) && int'(fp) == f_field(TQP, j);
    end
    // the step's controls as it moves through stages B to E
    logic en_b, first_b, wmax_b, wuse_b, en_c, first_c, wmax_c, wmax_d, wmax_e;
    logic [NSH-1:0] msel_b;
    logic [NQS-1:0] qsel_b, qsel_c, qsel_d, qsel_e;
    logic signed [SB-1:0] init_b, init_c;
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: a core without elementwise words (ET = 0) does not read it
    logic [1:0] nt_b;
    /* verilator lint_on UNUSEDSIGNAL */
    always_ff @(posedge clk) begin
        en_b <= acc_en;
        first_b <= first;
        wmax_b <= wmax;
        wuse_b <= wuse;
        msel_b <= msel;
        qsel_b <= qsel;
        init_b <= init;
        nt_b <= nt;
        en_c <= en_b;
        first_c <= first_b;
        init_c <= init_b;
        wmax_c <= wmax_b;
        qsel_c <= qsel_b;
        wmax_d <= wmax_c;
        qsel_d <= qsel_c;
        wmax_e <= wmax_d;
        qsel_e <= qsel_d;
    end

    // ---------------------------------------------------------------- MAC units (stage A)
    // (the routing is written as loops over the lanes, not as generate blocks per unit and shape:
    // Yosys unrolls them into constant selects, Verilator keeps them loops, and a core of 1,024
    // units then compiles in seconds, not minutes)
    localparam int NU1 = NU > 0 ? NU : 1;
    localparam int PPW = PKW + OW;           // a unit's product
    logic signed [DW-1:0] d[NL];             // x - zp of every lane
    logic [NU1*PKW-1:0] ua;                  // each unit's operands: the packed (or single) one
    logic [NU1*OW-1:0] uq;                   // and the shared one
    logic [NU1*PPW-1:0] upp;                 // its product
    logic [NU1*PPW-1:0] upp_b;               // ... registered (the DSP48E2's MREG)
    logic [NU1*PRW-1:0] u_lo, u_hi;          // the products of its first and second lane (paired shapes)
    logic [NU1*PRW-1:0] u_one;               // its product as one lane's (unpaired shapes)
    always_comb for (int k = 0; k < NL; k++) d[k] = DW'($signed(x[k * SB +: SB])) - DW'(zp);
    // a pair shares one operand and packs the other: VEC pairs pack x - zp and share the weight,
    // PE pairs (and single lanes) the reverse; every lane's two operands for the word's shape
    logic vpair;                             // the word's shape pairs along VEC
    logic signed [OW-1:0] pk[NL], sd[NL];
    // a dead lane's weight is zeroed only where a unit packs two lanes (PK): there a stray wide
    // weight in one half would spoil the other's product. Unpacked, the dead lane's product is
    // dropped in the sum (stage B), and the gate would cost a LUT per weight bit
    logic signed [WB-1:0] wg[NL];
    always_comb for (int k = 0; k < NL; k++) wg[k] = !PK || (live[k] && wuse) ? $signed(w[k * WB +: WB]) : '0;
    always_comb begin
        vpair = 1'b0;
        for (int i = 0; i < NSH; i++) if (msel[i] && f_field(TSM, i) == 2) vpair = 1'b1;
        for (int k = 0; k < NL; k++) begin
            pk[k] = vpair ? OW'(d[k]) : OW'(wg[k]);
            sd[k] = vpair ? OW'(wg[k]) : OW'(d[k]);
        end
    end
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the routing's indices are ints, a small core reads their low bits
    // the word's shape routes each unit's lanes in: a unit's first lane is (v, p, s) with p even
    // (PE pairs) or v even (VEC pairs); the pair's second lane, when inside the folding, is its
    // neighbour along PE or VEC, and the shared operand comes from a live lane of the pair.
    // Shape i's fields, and where its lane (v, p, s) goes, are constant functions of the loop
    // indices (no variables inside the loops, which Yosys would keep as logic)
    function automatic int f_k(input int v, input int p, input int s);          // window lane (v, p, s)
        f_k = (v * MP + p) * MS + s;
    endfunction
    function automatic int f_unit(input int i, input int v, input int p, input int s);   // its unit
        int sm, gp;
        sm = f_field(TSM, i);
        gp = sm == 1 ? (f_field(TSP, i) + 1) / 2 : f_field(TSP, i);
        f_unit = ((sm == 2 ? v / 2 : v) * gp + (sm == 1 ? p / 2 : p)) * f_field(TSS, i) + s;
    endfunction
    function automatic logic f_in(input int i, input int v, input int p, input int s);   // inside the folding
        f_in = v < f_field(TSV, i) && p < f_field(TSP, i) && s < f_field(TSS, i) && f_unit(i, v, p, s) < NU;
    endfunction
    function automatic logic f_second(input int i, input int v, input int p);   // a pair's second lane
        f_second = (f_field(TSM, i) == 1 && p % 2 == 1) || (f_field(TSM, i) == 2 && v % 2 == 1);
    endfunction
    function automatic logic f_two(input int i, input int v, input int p);      // a first lane with a second
        f_two = (f_field(TSM, i) == 1 && p + 1 < f_field(TSP, i)) || (f_field(TSM, i) == 2 && v + 1 < f_field(TSV, i));
    endfunction
    function automatic int f_kb(input int i, input int v, input int p, input int s);   // the pair's second lane
        f_kb = f_field(TSM, i) == 1 ? f_k(v, p + 1, s) : f_k(v + 1, p, s);
    endfunction
    always_comb begin : route_in
        ua = '0;
        uq = '0;
        for (int i = 0; i < NSH; i++) begin
            for (int v = 0; v < MV; v++) begin
                for (int p = 0; p < MP; p++) begin
                    for (int s = 0; s < MS; s++) begin
                        if ((NSH == 1 || msel[i]) && f_in(i, v, p, s) && !f_second(i, v, p)) begin
                            ua[f_unit(i, v, p, s) * PKW +: PKW] = !f_two(i, v, p) ? PKW'(pk[f_k(v, p, s)])
                                : (PKW'(pk[f_kb(i, v, p, s)]) <<< SP) + PKW'(pk[f_k(v, p, s)]);
                            uq[f_unit(i, v, p, s) * OW +: OW] = f_two(i, v, p) && !live[f_k(v, p, s)]
                                ? sd[f_kb(i, v, p, s)] : sd[f_k(v, p, s)];
                        end
                    end
                end
            end
        end
    end
    // the multipliers (a loop too: Verilator then compiles one unit's code, not NU copies of it,
    // and Yosys still makes a multiplier per unit), their products registered as they leave them
    always_comb begin : units
        for (int u = 0; u < NU1; u++) upp[u * PPW +: PPW] = $signed(ua[u * PKW +: PKW]) * $signed(uq[u * OW +: OW]);
    end
    always_ff @(posedge clk) upp_b <= upp;
    // the lanes' own values, for the words without weights: x - zp (average pools) or x (max
    // pools), and which lanes are live
    logic [NL-1:0] live_b;
    logic signed [DW-1:0] raw_b[NL];
    // (a lane only max pools use keeps x, one only average pools use x - zp)
    always_ff @(posedge clk) begin
        live_b <= live;
        for (int k = 0; k < NL; k++)
            raw_b[k] <= !RAW || !(AVGK[k] || MAXK[k]) ? '0
                      : MAXK[k] && (wmax || !AVGK[k]) ? DW'($signed(x[k * SB +: SB])) : d[k];
    end

    // ---------------------------------------------------------------- the step's sums (stage B)
    // a packed product's two fields
    always_comb begin : fields
        for (int u = 0; u < NU1; u++) begin
            u_one[u * PRW +: PRW] = PRW'(upp_b[u * PPW +: PPW]);
            u_lo[u * PRW +: PRW] = PK ? PRW'($signed(upp_b[u * PPW +: SP])) : '0;
            u_hi[u * PRW +: PRW] = PK ? PRW'(($signed(upp_b[u * PPW +: PPW]) - PPW'($signed(upp_b[u * PPW +: SP]))) >>> SP) : '0;
        end
    end
    // every lane's product: w * (x - zp) from its unit under the word's shape, x - zp when the
    // word has no weights
    logic signed [PRW-1:0] prod[NL];
    always_comb begin : route_out
        for (int k = 0; k < NL; k++) prod[k] = RAW && AVGK[k] ? PRW'(raw_b[k]) : '0;
        for (int i = 0; i < NSH; i++) begin
            if ((!RAW || wuse_b) && (NSH == 1 || msel_b[i])) begin
                for (int v = 0; v < MV; v++) begin
                    for (int p = 0; p < MP; p++) begin
                        for (int s = 0; s < MS; s++) begin
                            if (f_in(i, v, p, s))
                                prod[f_k(v, p, s)] = f_field(TSM, i) == 0 ? $signed(u_one[f_unit(i, v, p, s) * PRW +: PRW])
                                    : f_second(i, v, p) ? $signed(u_hi[f_unit(i, v, p, s) * PRW +: PRW])
                                                        : $signed(u_lo[f_unit(i, v, p, s) * PRW +: PRW]);
                        end
                    end
                end
            end
        end
    end
    /* verilator lint_on UNUSEDSIGNAL */
    // (loops over the outputs, as the MAC units above). A max pool's maxima are compared at DW
    // bits, not AW: its inputs and its start (the input type's minimum) are activations of at
    // most XB bits, signed or not, and so is every maximum of them
    // A dead lane's product is zeroed before the sum (a gate on each product bit, which a LUT
    // ahead of the adder absorbs), not the sum selected around it (a mux on every accumulator bit);
    // a lane no summing word takes (MACK, AVGK) adds nothing, one no max pool takes compares nothing
    logic signed [PRW-1:0] prod_g[NL];
    always_comb for (int k = 0; k < NL; k++) prod_g[k] = (MACK[k] || AVGK[k]) && live_b[k] ? prod[k] : '0;
    logic signed [AW-1:0] s_sum[NO], s_sum_c[NO];   // every output's sum of the step's live products
    logic signed [DW-1:0] s_mx[NO], s_mx_c[NO];     // and their maximum (the least DW-bit value if none)
    always_comb begin : step_sums
        for (int o = 0; o < NO; o++) begin
            s_sum[o] = '0;
            s_mx[o] = {1'b1, {(DW - 1){1'b0}}};
            for (int s = 0; s < MS; s++) begin
                s_sum[o] = s_sum[o] + AW'(prod_g[o * MS + s]);
                if (RAW && MAXK[o * MS + s] && live_b[o * MS + s] && raw_b[o * MS + s] > s_mx[o])
                    s_mx[o] = raw_b[o * MS + s];
            end
        end
    end
    always_ff @(posedge clk) begin
        s_sum_c <= s_sum;
        s_mx_c <= s_mx;
    end

    // ---------------------------------------------------------------- accumulation (stage C)
    logic signed [AW-1:0] acc[NO];           // every output's value after the step in stage D
    logic signed [AW-1:0] o_base[NO];        // where the step starts: init (an output group's first step) or acc
    logic signed [DW-1:0] o_mx[NO];
    logic [NO*AW-1:0] nxt;                   // every output's value after the step in stage C
    // an output that no summing word's lanes reach only ever holds maxima (DW bits), one that no
    // max pool's reach only ever sums
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the output's index is an int
    function automatic logic f_any(input logic [NL-1:0] m, input int o);
        f_any = |m[o * MS +: MS];
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
    always_comb begin : outs
        for (int o = 0; o < NO; o++) begin
            o_base[o] = first_c ? AW'(init_c) : acc[o];
            o_mx[o] = s_mx_c[o] > DW'(o_base[o]) ? s_mx_c[o] : DW'(o_base[o]);
            nxt[o * AW +: AW] = RAW && (wmax_c && f_any(MAXK, o) || !f_any(MACK | AVGK, o)) ? AW'(o_mx[o])
                                                                                          : o_base[o] + s_sum_c[o];
        end
    end
    always_ff @(posedge clk) if (en_c) for (int o = 0; o < NO; o++) acc[o] <= nxt[o * AW +: AW];

    // ---------------------------------------------------------------- requantizers (stages D, E)
    // the word's VEC x PE shape routes its outputs onto the requantizers (output (v, p) onto
    // requantizer v * PE + p) and their results back
    localparam int NRQ1 = NRQ > 0 ? NRQ : 1;
    // each requantizer's input value and multiplier (stage D), the rest of its row (stage E), as
    // arrays rather than one packed row per requantizer: Verilator then copies words, not slices
    // of a 188-bit vector
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: without requantizers (NRQ = 0) these are unread, and
    logic signed [AW-1:0] r_v[NRQ1];         // the routing's indices are ints
    logic signed [31:0] r_m0[NRQ1], r_zp[NRQ1], r_lo[NRQ1], r_hi[NRQ1];
    logic signed [PW-1:0] r_bias[NRQ1];
    logic [6:0] r_sh[NRQ1];
    logic r_he[NRQ1];
    logic [SB-1:0] r_q[NRQ1];                // and each one's result
    // the requantizer output (v, p) goes to under requantizer shape j: v * PE + p, or -1 when it
    // is outside the shape's folding or beyond the requantizers
    function automatic int f_rq(input int j, input int v, input int p);
        f_rq = v < f_field(TQV, j) && p < f_field(TQP, j) && v * f_field(TQP, j) + p < NRQ ? v * f_field(TQP, j) + p : -1;
    endfunction
    always_comb begin : rq_in
        for (int k = 0; k < NRQ1; k++) begin
            r_v[k] = '0;
            r_m0[k] = '0;
            r_zp[k] = '0;
            r_lo[k] = '0;
            r_hi[k] = '0;
            r_bias[k] = '0;
            r_sh[k] = '0;
            r_he[k] = 1'b0;
        end
        for (int j = 0; j < NQS; j++) begin
            for (int v = 0; v < MV; v++) begin
                for (int p = 0; p < MP; p++) begin
                    if ((NQS == 1 || qsel_d[j]) && f_rq(j, v, p) >= 0) begin
                        r_v[f_rq(j, v, p)] = acc[v * MP + p];
                        r_m0[f_rq(j, v, p)] = m0[(v * MP + p) * 32 +: 32];
                    end
                    if ((NQS == 1 || qsel_e[j]) && f_rq(j, v, p) >= 0) begin
                        r_bias[f_rq(j, v, p)] = bias[(v * MP + p) * PW +: PW];
                        r_sh[f_rq(j, v, p)] = shift[(v * MP + p) * 7 +: 7];
                        r_he[f_rq(j, v, p)] = he[v * MP + p];
                        r_zp[f_rq(j, v, p)] = ozp[(v * MP + p) * 32 +: 32];
                        r_lo[f_rq(j, v, p)] = lo[(v * MP + p) * 32 +: 32];
                        r_hi[f_rq(j, v, p)] = hi[(v * MP + p) * 32 +: 32];
                    end
                end
            end
        end
    end
    /* verilator lint_on UNUSEDSIGNAL */
    genvar r;
    generate
        for (r = 0; r < NRQ; r = r + 1) begin : g_rq
            logic signed [AW+31:0] rp, rp_e;     // the product, registered as it leaves the multiplier
            /* verilator lint_off UNUSEDSIGNAL */   // waiver: the saturated value fits SB bits
            logic signed [RW-1:0] q;
            /* verilator lint_on UNUSEDSIGNAL */
            assign rp = r_v[r] * r_m0[r];
            always_ff @(posedge clk) rp_e <= rp;
            hlsgen_rq_tail #(.W(RW)) rq (
                .p(RW'(rp_e) + RW'(r_bias[r])), .sh(r_sh[r]), .half_even(r_he[r]), .zp(RW'(r_zp[r])), .lo(RW'(r_lo[r])),
                .hi(RW'(r_hi[r])), .q(q));
            assign r_q[r] = q[SB-1:0];
        end
        if (NRQ == 0) begin : g_norq
            assign r_q[0] = '0;
        end
    endgenerate
    // each output: the maximum (max pools), its requantizer's result under the word's shape, or
    // (no requantizer) the raw value
    logic [NO*SB-1:0] raw_e;                 // the accumulators' low bits, in stage E
    always_ff @(posedge clk) for (int o = 0; o < NO; o++) raw_e[o * SB +: SB] <= acc[o][SB-1:0];
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the routing's indices are ints
    always_comb begin : rq_out
        wq = raw_e;
        for (int j = 0; j < NQS; j++) begin
            if (!(RAW && wmax_e) && (NQS == 1 || qsel_e[j])) begin
                for (int v = 0; v < MV; v++) begin
                    for (int p = 0; p < MP; p++) begin
                        if (f_rq(j, v, p) >= 0) wq[(v * MP + p) * SB +: SB] = r_q[f_rq(j, v, p)];
                    end
                end
            end
        end
    end
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------------------------------------------------------- elementwise lanes
    // (A: the terms' products, registered as they leave the multipliers; B: plus the bias; C: the
    // requantizer's tail; D, E: its result, registered twice to come out with the window lanes')
    genvar l;
    generate
        if (ET == 0) begin : g_noelt         // the core's element words only move data
            assign eq = '0;
        end else begin : g_elts
            for (l = EL; l < ML; l = l + 1) begin : g_move
                assign eq[l * SB +: SB] = '0;
            end
            for (l = 0; l < EL; l = l + 1) begin : g_elt
                logic signed [RW-1:0] p_c;
                /* verilator lint_off UNUSEDSIGNAL */   // waiver: the saturated value fits SB bits
                logic signed [RW-1:0] q;
                /* verilator lint_on UNUSEDSIGNAL */
                logic [SB-1:0] q_d, q_e;
                logic signed [DW-1:0] d0;
                logic signed [DW+31:0] t0, t1, t0_b, t1_b;
                assign d0 = DW'($signed(ex[l * SB +: SB])) - DW'($signed(ezp[0 +: SB + 1]));
                assign t0 = d0 * $signed(em[l * 32 +: 32]);
                if (ET > 1) begin : g_t1
                    logic signed [DW-1:0] d1;
                    assign d1 = DW'($signed(ex[(ML + l) * SB +: SB])) - DW'($signed(ezp[SB + 1 +: SB + 1]));
                    assign t1 = d1 * $signed(em[(ML + l) * 32 +: 32]);
                end else begin : g_not1
                    assign t1 = '0;
                end
                always_ff @(posedge clk) begin
                    t0_b <= t0;
                    t1_b <= t1;
                    p_c <= RW'($signed(ebias[l * PW +: PW])) + (nt_b != 2'd0 ? RW'(t0_b) : '0) + (nt_b > 2'd1 ? RW'(t1_b) : '0);
                    q_d <= q[SB-1:0];
                    q_e <= q_d;
                end
                hlsgen_rq_tail #(.W(RW)) rq (
                    .p(p_c), .sh(eshift[l * 7 +: 7]), .half_even(ehe[l]), .zp(RW'($signed(eozp[l * 32 +: 32]))),
                    .lo(RW'($signed(elo[l * 32 +: 32]))), .hi(RW'($signed(ehi[l * 32 +: 32]))), .q(q));
                assign eq[l * SB +: SB] = q_e;
            end
        end
    endgenerate
    /* verilator lint_on WIDTHCONCAT */
endmodule
