// hlsgen: one region of the activation memory (a stored tensor, a staging region) built as the
// bank planner (hlsgen/backends/rtl/banking.py) plans it: N x C x H x W words (SB bits at its
// ports, RB bits in its banks: below) in BC x BH x BW banks (BC = 2^LBC, ...), the word at coordinates (n, c, h, w) in bank
// ((h mod BH) * BW + (w + KWH h) mod BW) * BC + (c + KCH h + KCW w) mod BC (the skews KWH, KCH,
// KCW: 0 for plain cyclic banks) at in-bank address
// (((n * HQ + h / BH) * WQ + w / BW) * CQ + c / BC (CQ = ceil(C / BC), WQ = ceil(W / BW),
// HQ = ceil(H / BH); N: the leading indices of a region, 1 for most). The skews leave the in-bank
// address alone: h is known from it and the bank, then w, then c, so a word's place is unique. FILE, if not empty, is the
// region's initial words in their order (n, c, h, w) ($readmemh), else they start at zero.
// Each bank is a memory with the ports of a block RAM:
// port A reads or writes, port B reads (and writes too when TWO_WRITES, a true dual port).
//
// Clients give coordinates, not addresses: NR read ports (rn, rc, rh, rw, re) and NW write ports
// (wn, wc, wh, ww, we, wdata), packed (port k at [k * CB +: CB], [k * SB +: SB]). Each cycle every
// bank takes its writes first (port A, then port B when TWO_WRITES), then its reads: a read of a
// word that a port of its bank already addresses this cycle shares that port (reads of one word
// by several lanes are one access; a read of a word written this cycle sees the old word, as
// port A reads first), any other read takes the next free port. A read's word comes out on
// rdata one cycle later, as a block RAM's does. rdata the cycle after a read that was not
// enabled is not a word the port read: in simulation (Verilator) it is the complement of what
// the bank's port gives, as in hlsgen_act_mem, so a client that used it would show.
// SHARE = 0 where the plan saw no client read one word through two of its ports in one cycle
// (banking.py's `shared_reads`): a read then takes the next free port without comparing its
// address with the ports' (the compares are most of a read route's logic); two reads of one word
// take two ports, and a third access of the bank in that cycle is a conflict as any other.
// RB (at most SB) is the bits a word of this region needs, its tensor's type as a signed value:
// the banks hold RB bits, a write keeps wdata's low RB bits and a read gives its word
// sign-extended to SB, which is the value written wherever that fits RB bits (the plan's
// `word_bits`; every stored value is of its tensor's type).
// LUTRAM = 1 asks synthesis for distributed RAM (ram_style "distributed") where it would build a
// block RAM: the plan's `lutram`, set where the device's block RAMs would not hold the banks
// (banking._fit_block_ram); only for banks written through one port (not TWO_WRITES).
// Routes: which banks each port may reach (the build's routes, banking.py), given as lists
// (RBP/RBL/RPP/RPL, WBP/...: below). Only routed (port, bank) pairs are built: every bank's port
// selects among the ports routed to it, and every read port's data among its routed banks. Every
// port to every bank is a full crossbar, which is large (make demo's first region: about 63,000
// LUT, docs/rtl.md); a convolution's ports reach a few banks each.
// More distinct words in one bank in one cycle than its ports serve (or a second write without
// TWO_WRITES), or an access to a bank its port is not routed to, is a cycle the plan does not
// serve: `conflict` goes high and stays high, and the access that found no port (or no route) is
// dropped. The planner chooses the banks and routes so that it never happens.
//
// The in-bank address's multiplies by the constants CQ and WQ are sums of shifts (mulc), so
// that synthesis builds adders and takes no DSP for them.
module hlsgen_bank_mem #(
    parameter int SB = 9,
    parameter int N = 1,
    parameter int C = 1,
    parameter int H = 1,
    parameter int W = 1,
    parameter int LBC = 0,
    parameter int LBH = 0,
    parameter int LBW = 0,
    parameter int KWH = 0,                   // skews (banking.py's Kwh, Kch, Kcw), each below its banks
    parameter int KCH = 0,
    parameter int KCW = 0,
    parameter int NR = 1,
    parameter int NW = 1,
    parameter int CB = 16,                   // coordinate bits
    parameter int TWO_WRITES = 0,
    parameter int SHARE = 1,                 // reads of one word by several ports share a port (above)
    parameter int RB = SB,                   // a word's bits in the banks (above)
    /* verilator lint_off UNUSEDPARAM */    // read by synthesis alone (an attribute Verilator ignores)
    parameter int LUTRAM = 0,                // the banks in distributed RAM (above)
    /* verilator lint_on UNUSEDPARAM */
    // the routes as lists (hlsgen/backends/rtl/act_mem.py's route_params writes them), LB bits an
    // entry (as few as its largest entry needs): by bank, where bank b's ports start in RBL (RBP,
    // NB + 1 entries) and the ports routed to it (RBL); by port, where port k's banks start in RPL
    // (RPP, NR + 1 entries) and its banks (RPL); PR routed (port, bank) pairs (at least 1).
    // Likewise W* for writes.
    parameter int LB = 1,
    parameter int PR = 1,
    parameter int PW = 1,
    parameter bit [((1<<(LBC+LBH+LBW))+1)*LB-1:0] RBP = '0,
    parameter bit [PR*LB-1:0] RBL = '0,
    parameter bit [(NR+1)*LB-1:0] RPP = '0,
    parameter bit [PR*LB-1:0] RPL = '0,
    parameter bit [((1<<(LBC+LBH+LBW))+1)*LB-1:0] WBP = '0,
    parameter bit [PW*LB-1:0] WBL = '0,
    parameter bit [(NW+1)*LB-1:0] WPP = '0,
    parameter bit [PW*LB-1:0] WPL = '0,
    parameter FILE = ""                      // $readmemh image of the region (untyped: Yosys's parsers take it so)
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [NR-1:0]    re,
    input  logic [NR*CB-1:0] rn,
    input  logic [NR*CB-1:0] rc,
    input  logic [NR*CB-1:0] rh,
    input  logic [NR*CB-1:0] rw,
    output logic [NR*SB-1:0] rdata,
    input  logic [NW-1:0]    we,
    input  logic [NW*CB-1:0] wn,
    input  logic [NW*CB-1:0] wc,
    input  logic [NW*CB-1:0] wh,
    input  logic [NW*CB-1:0] ww,
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: a word's bits above RB are its sign, not stored
    input  logic [NW*SB-1:0] wdata,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic             conflict
);
    localparam int NB = 1 << (LBC + LBH + LBW);
    localparam int LNB = LBC + LBH + LBW;
    localparam int BI = LNB > 0 ? LNB : 1;   // bank index bits
    localparam int CQ = (C + (1 << LBC) - 1) >> LBC;
    localparam int WQ = (W + (1 << LBW) - 1) >> LBW;
    localparam int HQ = (H + (1 << LBH) - 1) >> LBH;
    localparam int D = N * CQ * WQ * HQ;     // words a bank
    localparam int DB = D > 1 ? $clog2(D) : 1;

    // x times the constant k in DB bits (the in-bank address's; x is below D, so it fits them):
    // for synthesis a sum of shifts, in simulation one multiply (the same value modulo 2^DB)
    function automatic logic [DB-1:0] mulc(input logic [DB-1:0] x, input logic [31:0] k);
`ifdef HLSGEN_SIM_BANKS_LOOP
        mulc = DB'(32'(x) * k);
`else
        mulc = '0;
        for (int i = 0; i < 31; i++) if (k[i]) mulc = mulc + DB'({32'(x)} << i);
`endif
    endfunction

    function automatic logic [BI-1:0] bank_of(input logic [CB-1:0] c, input logic [CB-1:0] h, input logic [CB-1:0] w);
        // (the skewed sums are taken in 32 bits and masked: only their low LBW or LBC bits count,
        // which synthesis keeps alone)
        logic [31:0] b;
        b = 32'(h & CB'((1 << LBH) - 1));
        b = (b << LBW) | ((32'(w) + 32'(KWH) * 32'(h)) & 32'((1 << LBW) - 1));
        b = (b << LBC) | ((32'(c) + 32'(KCH) * 32'(h) + 32'(KCW) * 32'(w)) & 32'((1 << LBC) - 1));
        bank_of = BI'(b);
    endfunction

    /* verilator lint_off UNUSEDSIGNAL */    // waiver: n is below N, so its bits above DB are zero
    function automatic logic [DB-1:0] addr_of(input logic [CB-1:0] n, input logic [CB-1:0] c, input logic [CB-1:0] h,
                                              input logic [CB-1:0] w);
        // each partial sum in DB bits: it is an in-bank address of a coarser split, below D
        addr_of = mulc(mulc(mulc(DB'(n), HQ) + DB'(h >> LBH), WQ) + DB'(w >> LBW), CQ) + DB'(c >> LBC);
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    logic [SB-1:0] image[N * C * H * W];
    initial if (FILE != "") $readmemh(FILE, image);
    logic [RB-1:0] qa[NB], qb[NB];          // each bank's two ports' words, one cycle after their reads
    logic [BI-1:0] rb_d[NR];
    logic [NR-1:0] on_b_d, re_d;

    // Routing: every port's bank and in-bank address, each bank's two ports this cycle, and each
    // read port's (bank, port) one cycle later. One loop walks every bank's routed ports (RBP,
    // RBL), another every port's routed banks (RPP, RPL), so that a simulation visits only the
    // routed pairs and its code does not grow with the banks; synthesis unrolls both into the
    // same logic. One text, two forms: for synthesis combinational logic (always_comb) feeding a
    // generate of banks (a memory each); for simulation (HLSGEN_SIM_BANKS_LOOP, defined by make
    // sim) the same statements once per clock edge on the inputs the edge samples, feeding one
    // array of banks in the same block. The simulation form is the faster: a combinational
    // block whose inputs come combinationally from the design's inputs is evaluated at every
    // one of the simulator's evaluations (two or more a cycle), a clocked one once a cycle (docs/rtl.md: 78.8 to about 45 s of demo_cnn's banked simulation). The generate
    // holds a memory per bank, which synthesis needs and a simulator's C++ holds once per bank
    // (shuffle_block's U280 dataflow design plans 1,472: design.json's synth.act_mem.banking);
    // Yosys did not finish make demo's region 0 as one array in 15 minutes.
    // tests/test_rtl_modules.py runs both forms on the same cases and checks them equal (bounded).
`ifdef HLSGEN_SIM_BANKS_LOOP
    logic [RB-1:0] m[NB][D];
    initial begin                            // the region's image, each word in its bank
        for (int b = 0; b < NB; b++) for (int i = 0; i < D; i++) m[b][i] = '0;
        if (FILE != "")
            for (int i = 0; i < N * C * H * W; i++)
                m[bank_of(CB'(i / (H * W) % C), CB'(i / W % H), CB'(i % W))]
                 [addr_of(CB'(i / (C * H * W)), CB'(i / (H * W) % C), CB'(i / W % H), CB'(i % W))] = image[i][RB-1:0];
    end
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: a port index is an int; few ports use its high bits
    always_ff @(posedge clk) begin : route
        automatic logic [BI-1:0] rb[NR], wb[NW];
        automatic logic [DB-1:0] ra[NR], wa[NW], a_addr[NB], b_addr[NB];
        automatic logic [RB-1:0] a_wd[NB], b_wd[NB];
        automatic logic          a_we[NB], b_we[NB];
        automatic logic [NB-1:0] over;
        automatic logic [NR-1:0] r_on_b;
        automatic logic          off;
`else
    logic [BI-1:0] rb[NR], wb[NW];
    logic [DB-1:0] ra[NR], wa[NW];
    logic [DB-1:0] a_addr[NB], b_addr[NB];
    logic [RB-1:0] a_wd[NB], b_wd[NB];
    logic          a_we[NB], b_we[NB];
    logic [NB-1:0] over;
    logic [NR-1:0] r_on_b;                  // this cycle: read k is served by its bank's port B
    logic          off;                     // this cycle: an access on a bank its port is not routed to
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: a port index is an int; few ports use its high bits
    always_comb begin
`endif
        for (int k = 0; k < NR; k++) begin
            rb[k] = bank_of(rc[k * CB +: CB], rh[k * CB +: CB], rw[k * CB +: CB]);
            ra[k] = addr_of(rn[k * CB +: CB], rc[k * CB +: CB], rh[k * CB +: CB], rw[k * CB +: CB]);
        end
        for (int k = 0; k < NW; k++) begin
            wb[k] = bank_of(wc[k * CB +: CB], wh[k * CB +: CB], ww[k * CB +: CB]);
            wa[k] = addr_of(wn[k * CB +: CB], wc[k * CB +: CB], wh[k * CB +: CB], ww[k * CB +: CB]);
        end
        over = '0;
        r_on_b = '0;
        for (int b = 0; b < NB; b++) begin
            // each routed access in turn, as masks rather than branches: ta (tb) says whether it
            // takes port A (B), and a port's address and word are the OR of the accesses' masked
            // by them (at most one takes each port). The circuit of an if/else per access, which
            // this was until stop 48 (benchmarks/bank_route.py proves them equal for bounded
            // runs), but with nothing for slang's elaboration to nest: with branches, a region
            // whose 32 banks each route 288 read ports (maxpool's on the U280) exhausted the
            // stack of yowasp's Yosys, and one of 144 took 8x as long to read (docs/rtl.md)
            automatic logic av = 1'b0, bv = 1'b0;
            automatic logic [DB-1:0] aad = '0, bad = '0;
            a_wd[b] = '0; b_wd[b] = '0;
            for (int i = int'(WBP[b * LB +: LB]); i < int'(WBP[(b + 1) * LB +: LB]); i++) begin
                automatic int k = int'(WBL[i * LB +: LB]);
                automatic logic req = we[k] && wb[k] == BI'(b);
                automatic logic ta = req && !av;                           // the first write takes port A
                automatic logic tb = TWO_WRITES != 0 && req && av && !bv;  // the second port B (a true dual port)
                aad |= {DB{ta}} & wa[k];
                a_wd[b] |= {RB{ta}} & wdata[k * SB +: RB];
                bad |= {DB{tb}} & wa[k];
                b_wd[b] |= {RB{tb}} & wdata[k * SB +: RB];
                over[b] = over[b] | (req && av && !tb);
                bv = bv | tb;
                av = av | req;
            end
            a_we[b] = av;
            b_we[b] = bv;
            for (int i = int'(RBP[b * LB +: LB]); i < int'(RBP[(b + 1) * LB +: LB]); i++) begin
                automatic int k = int'(RBL[i * LB +: LB]);
                automatic logic req = re[k] && rb[k] == BI'(b);
                // a read of port A's word (or B's) shares it; any other takes the next free port
                automatic logic ta = req && !av;
                automatic logic other = req && av && (SHARE == 0 || (aad != ra[k] && !(bv && bad == ra[k])));
                automatic logic tb = other && !bv;
                aad |= {DB{ta}} & ra[k];
                bad |= {DB{tb}} & ra[k];
                over[b] = over[b] | (other && bv);
                if (SHARE == 0) r_on_b[k] = r_on_b[k] | tb;
                bv = bv | tb;
                av = av | req;
            end
            a_addr[b] = aad;
            b_addr[b] = bad;
        end
        off = 1'b0;
        for (int k = 0; k < NR; k++) begin  // a port's routed banks are distinct: at most one is `at`
            automatic logic hit = 1'b0;
            for (int i = int'(RPP[k * LB +: LB]); i < int'(RPP[(k + 1) * LB +: LB]); i++) begin
                automatic logic at = rb[k] == BI'(RPL[i * LB +: LB]);
                hit = hit | at;
                if (SHARE != 0) r_on_b[k] = r_on_b[k] | (at && a_addr[int'(RPL[i * LB +: LB])] != ra[k]);
            end
            off = off | (re[k] && !hit);
        end
        for (int k = 0; k < NW; k++) begin
            automatic logic hit = 1'b0;
            for (int i = int'(WPP[k * LB +: LB]); i < int'(WPP[(k + 1) * LB +: LB]); i++)
                hit = hit | wb[k] == BI'(WPL[i * LB +: LB]);
            off = off | (we[k] && !hit);
        end
`ifdef HLSGEN_SIM_BANKS_LOOP
        for (int b = 0; b < NB; b++) begin   // the banks: writes, and reads of the old words
            if (a_we[b]) m[b][a_addr[b]] <= a_wd[b];
            if (b_we[b]) m[b][b_addr[b]] <= b_wd[b];
            qa[b] <= m[b][a_addr[b]];
            qb[b] <= m[b][b_addr[b]];
        end
`else
    end
    for (genvar b = 0; b < NB; b++) begin : g_bank
        logic [DB-1:0] aad, bad;
        assign aad = a_addr[b];
        assign bad = b_addr[b];
        (* ram_style = LUTRAM != 0 ? "distributed" : "auto" *)
        logic [RB-1:0] m[D];
        logic [RB-1:0] qa_r, qb_r;
        initial begin                        // the region's image, the words of this bank
            for (int i = 0; i < D; i++) m[i] = '0;
            if (FILE != "")
                for (int i = 0; i < N * C * H * W; i++)
                    if (bank_of(CB'(i / (H * W) % C), CB'(i / W % H), CB'(i % W)) == BI'(b))
                        m[addr_of(CB'(i / (C * H * W)), CB'(i / (H * W) % C), CB'(i / W % H), CB'(i % W))] = image[i][RB-1:0];
        end
        always_ff @(posedge clk) begin
            if (a_we[b]) m[aad] <= a_wd[b];
            if (b_we[b]) m[bad] <= b_wd[b];
            qa_r <= m[aad];
            qb_r <= m[bad];
        end
        assign qa[b] = qa_r;
        assign qb[b] = qb_r;
    end
    always_ff @(posedge clk) begin
`endif
        // both forms: each read's bank and port, for its word one cycle later, and `conflict`
        re_d <= re;
        on_b_d <= r_on_b;
        for (int k = 0; k < NR; k++) rb_d[k] <= rb[k];
        if (!rst_n) conflict <= 1'b0;
        else if (|over || off) conflict <= 1'b1;
    end
    /* verilator lint_on UNUSEDSIGNAL */
    always_comb
        for (int k = 0; k < NR; k++) begin
            automatic logic [RB-1:0] q = '0;
            for (int i = int'(RPP[k * LB +: LB]); i < int'(RPP[(k + 1) * LB +: LB]); i++)
                q |= {RB{rb_d[k] == BI'(RPL[i * LB +: LB])}}
                     & (on_b_d[k] ? qb[int'(RPL[i * LB +: LB])] : qa[int'(RPL[i * LB +: LB])]);
            rdata[k * SB +: SB] = SB'(signed'(q));
`ifdef VERILATOR
            if (!re_d[k]) rdata[k * SB +: SB] = ~rdata[k * SB +: SB];
`endif
        end
endmodule
