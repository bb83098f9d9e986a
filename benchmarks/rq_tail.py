"""The requantizer's tail (templates/rtl/hlsgen_rq_tail.sv: a rounding shift by a run-time
amount, the zero point, the clamp) synthesized alone at its widths, every input a port, as in a
core whose words requantize by different rows; beside the cost model's figure for one
requantizer (hlsgen.schedule.cost.requantizer_lut, at the accumulator bits AW that RW = AW + 34
implies where the product dominates RW).

    .venv/bin/python benchmarks/rq_tail.py [W ...]      # default: 40 51 54 66; about 15 s a width

hlsgen_core_dp computes at RW bits: the wider of AW + 32 and XB + 35, or the requantization
bias's PW, plus 2 (capped maxpool's core: 51, capped demo_cnn's: 54). A core of one word keeps
its one requantization row as constants, and Yosys folds most of the tail away there. Since
stop 46 the tail rounds by two bits of the product (its bit sh - 1 and the OR of those below),
where it took the remainder by a second shift and a subtraction: 397, 518, 556 and 701 LUT at
these widths, where that form took 512, 662, 722 and 903.
"""
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sim"))

sys.path.insert(0, str(ROOT))
from hlsgen_sim import yosys  # noqa: E402
from hlsgen.schedule.cost import requantizer_lut  # noqa: E402


def main() -> int:
    widths = [int(a) for a in sys.argv[1:]] or [40, 51, 54, 66]
    print("| RW (bits) | LUT (Yosys) | FF | model, one requantizer (cost.requantizer_lut of AW = RW - 34) | Yosys s |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        for w in widths:
            t = time.perf_counter()
            cells = yosys.yosys_cells(Path(work) / f"w{w}", [ROOT / "templates" / "rtl" / "hlsgen_rq_tail.sv"],
                                      "hlsgen_rq_tail", {"W": w})
            r = yosys.resources(cells)
            print(f"| {w} | {r['LUT']:,} | {r['FF']:,} | {requantizer_lut(w - 34)} | {time.perf_counter() - t:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
