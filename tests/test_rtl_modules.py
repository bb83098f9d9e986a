"""The RTL library (templates/rtl/): Verilator lint (-Wall) of every module, and each module's
cocotb test on Verilator against the golden of its op, at full rate and under random input
gaps and output backpressure."""
import json
import subprocess

import numpy as np
import pytest

from conftest import ROOT

RTL = ROOT / "templates" / "rtl"
TESTS = ROOT / "tests" / "rtl"
MODULES = sorted(RTL.glob("*.sv"))


def _sim():
    import sys
    sys.path.insert(0, str(ROOT / "sim"))
    from hlsgen_sim import runner
    return runner


@pytest.mark.parametrize("src", MODULES, ids=lambda p: p.stem)
def test_lint_clean(src):
    env = _sim().verilator_env()
    r = subprocess.run(["verilator", "--lint-only", "-Wall", str(src)], capture_output=True, text=True,
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
    tests, failed = _sim().run([RTL / "hlsgen_requant.sv"], "hlsgen_requant", "cocotb_requant", TESTS, tmp_path / "b",
                               parameters=params, extra_env={"HLSGEN_CASE": json.dumps(case)})
    assert tests == 1 and failed == 0


def test_mac_pair_exhaustive(tmp_path):
    tests, failed = _sim().run([RTL / "hlsgen_mac_pair.sv"], "hlsgen_mac_pair", "cocotb_mac_pair", TESTS,
                               tmp_path / "b", parameters={"A_W": 8, "W_W": 4, "S": 18})
    assert tests == 1 and failed == 0
