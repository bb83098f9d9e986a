"""`make sim` of an emitted project: build OUT/rtl with Verilator, run design_test.py, write
OUT/results/sim.json (passed, mismatches, elements, cycles measured from ap_start to ap_done,
predicted_cycles from the schedule, cycle_error).

    python sim/run_design.py [--gap P] [--backpressure P] [--seed S]
"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent          # OUT/sim/hlsgen_sim
sys.path.insert(0, str(HERE.parent))

from hlsgen_sim import runner  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gap", type=float, default=0.0, help="probability of an idle input cycle (default 0)")
    ap.add_argument("--backpressure", type=float, default=0.0, help="probability of a not-ready output cycle")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--simulator", default="verilator", choices=["verilator"])
    a = ap.parse_args(argv)
    out = HERE.parents[1]
    design = json.loads((out / "sim" / "design.json").read_text())
    rtl = out / "rtl"
    (out / "results").mkdir(exist_ok=True)
    raw = out / "build" / "sim_result.json"
    raw.parent.mkdir(exist_ok=True)
    raw.unlink(missing_ok=True)
    sources = [rtl / s for s in design["sources"]]
    try:
        runner.run(sources, "hlsgen_top", "hlsgen_sim.design_test", HERE.parent, out / "build" / "verilator",
                   extra_env={"HLSGEN_PROJECT": str(out), "HLSGEN_RESULT": str(raw), "HLSGEN_GAP": str(a.gap),
                              "HLSGEN_BACKPRESSURE": str(a.backpressure), "HLSGEN_SEED": str(a.seed)})
    except RuntimeError as exc:
        if not raw.exists():
            print(f"make sim: {exc}", file=sys.stderr)
            return 2
    if not raw.exists():
        print("make sim: the simulation ended without a result (see the log above)", file=sys.stderr)
        return 1
    res = json.loads(raw.read_text())
    pred = int(design["predicted_cycles"])
    res["predicted_cycles"] = pred
    res["cycle_error"] = round((pred - res["cycles"]) / max(res["cycles"], 1), 4)
    res["cycles_are"] = "simulated (Verilator, ap_start to ap_done)"
    res["predicted_are"] = "modeled (hlsgen cost model, the schedule's total_cycles)"
    (out / "results" / "sim.json").write_text(json.dumps(res, indent=2) + "\n")
    for line in res["first_mismatches"]:
        print("MISMATCH " + line)
    if res.get("stalled"):
        print(f"sim: STALLED: {res['stalled']} (no ap_done after {res['cycles']} cycles)")
    print(f"sim: {'PASSED' if res['passed'] else 'FAILED'}: {res['mismatches']} mismatches in {res['elements']} elements; "
          f"{res['cycles']:,} cycles simulated, {pred:,} modeled ({res['cycle_error']:+.1%})")
    return 0 if res["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
