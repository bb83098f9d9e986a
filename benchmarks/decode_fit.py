"""The activation memory's decode (hlsgen_top_mem's logic around its regions' hlsgen_bank_mems:
each gated lane's compare with its region's span, each split of a port's address into
coordinates, each gated read's pick of its word among its port's regions) against its model,
hlsgen.backends.rtl.act_mem.DECODE_FIT, fitted on benchmarks/decode_points.json.

    .venv/bin/python benchmarks/decode_fit.py             # the fit and each design's error
    .venv/bin/python benchmarks/decode_fit.py --check     # exit 1 if DECODE_FIT is not the fit
    .venv/bin/python benchmarks/decode_fit.py --collect   # build the designs and synthesize their decode
    .venv/bin/python benchmarks/decode_fit.py --inputs    # build them again and refresh the points' inputs only

--collect builds every Foundation test net in sequential mode for the U280 and for the capped
small FPGA (as benchmarks/rtl_designs.py does), the nets given with --dataflow in dataflow mode
too, and make demo's design; synthesizes each one's decode with Yosys (synth_design.py's
_synth_decode: hlsgen_top_mem with its memories black boxes, seconds a design where every split
is by bits) and writes the points: each design's decode inputs (design.json's
act_mem.banking.decode.inputs) and Yosys's LUT and FF. A design whose decode Yosys cannot
synthesize (yowasp's Yosys runs out of its WebAssembly memory on thousands of constant divides)
is kept with its error and left out of the fit. Each point records the commit it was built at;
a point whose design --collect now builds to other inputs (a change of the RTL) is kept beside
the new one, as "<design> (built by <commit>)", since what Yosys gave it is still a measured
decode. --inputs rebuilds the same designs and replaces only each point's inputs (a new term of
the model), keeping what Yosys gave (and the kept points as they are).
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
POINTS = ROOT / "benchmarks" / "decode_points.json"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sim"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bank_fit import weighted_fit  # noqa: E402
from rtl_designs import NETS, TARGETS, built, built_at  # noqa: E402
from hlsgen.backends.rtl.act_mem import DECODE_FIT, decode_logic  # noqa: E402


def load(path: Path = POINTS) -> List[Dict]:
    return json.loads(path.read_text())


def fitted(rows: List[Dict]) -> List[Dict]:
    return [r for r in rows if "yosys" in r]


def fit(rows: List[Dict]) -> Dict[str, float]:
    """DECODE_FIT's terms fitted on the synthesized rows (bank_fit.weighted_fit, rows of at
    least 20 LUT weighted as 20)."""
    rows = fitted(rows)
    return weighted_fit([r["inputs"] for r in rows], [r["yosys"]["LUT"] for r in rows], list(DECODE_FIT), 20)


def collect(dataflow: List[str], synthesized: Dict[str, Dict] = None) -> List[Dict]:
    """Build the designs and synthesize each one's decode, or, given the points `synthesized`
    (by design), keep their Yosys figures and take only the inputs from the builds."""
    from hlsgen_sim import synth_design, yosys
    jobs = [(n, t, "sequential") for n in NETS for t in TARGETS] + [(n, t, "dataflow") for n in dataflow for t in TARGETS]
    jobs.append(("make demo", "ultra96v2", "designs/demo-cnn-ultra96.yaml"))
    rows = []
    for place, name, out in built(jobs):
        am = json.loads((out / "sim" / "design.json").read_text())["synth"]["act_mem"]
        row = {"design": name, "inputs": am["banking"]["decode"]["inputs"]}
        if synthesized is not None:
            if name in synthesized:
                rows.append(dict(synthesized[name], inputs=row["inputs"]))
            continue
        t = time.perf_counter()
        try:
            y = yosys.resources(synth_design._synth_decode(out, am["memories"]))
            row["yosys"] = {"LUT": y["LUT"], "FF": y["FF"]}
        except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
            row["error"] = str(exc).strip().splitlines()[-1][-200:]
        row["seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(f"{place} {name}: {row.get('yosys', row.get('error'))} ({row['seconds']} s)", flush=True)
    if synthesized is not None and len(rows) != len(synthesized):
        raise SystemExit(f"--inputs: {len(synthesized) - len(rows)} of the points' designs were not built again")
    return rows


def _kept(old: List[Dict], new: List[Dict]) -> List[Dict]:
    """The old points to keep beside the new: those kept before, and each whose design now builds
    to other inputs, renamed by the commit it was built at."""
    now = {r["design"]: r["inputs"] for r in new}
    out = [r for r in old if "(built by " in r["design"]]
    for r in old:
        if "(built by " not in r["design"] and r["design"] in now and now[r["design"]] != r["inputs"]:
            out.append(dict(r, design=f"{r['design']} (built by {r['commit']})"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 unless DECODE_FIT is the fit of the points")
    ap.add_argument("--collect", action="store_true", help="build and synthesize the designs, write the points")
    ap.add_argument("--inputs", action="store_true", help="rebuild the points' designs and refresh their inputs")
    ap.add_argument("--dataflow", default="maxpool", help="nets also built in dataflow mode (comma-separated)")
    args = ap.parse_args()
    if args.collect or args.inputs:
        old = load()
        built_by = [r for r in old if "(built by " in r["design"]]
        kept = {r["design"]: r for r in old if r not in built_by} if args.inputs else None
        rows = collect([n for n in args.dataflow.split(",") if n], kept)
        if args.collect:
            commit = built_at()
            rows = [dict(r, commit=commit) for r in rows] + _kept(old, rows)
        else:
            rows += built_by
        POINTS.write_text(json.dumps(rows, indent=1) + "\n")
    rows = load()
    coef = fit(rows)
    print(f"fit of {len(fitted(rows))} synthesized designs ({len(rows) - len(fitted(rows))} that Yosys could not "
          f"synthesize left out): {coef}; DECODE_FIT: {DECODE_FIT}")
    print(f"{'design':34s} {'gated reads':>11s} {'divides':>8s} {'Yosys LUT':>9s} {'model':>7s} {'error':>7s} "
          f"{'Yosys FF':>8s} {'model':>6s}")
    for r in rows:
        m = decode_logic(r["inputs"])
        if "yosys" not in r:
            print(f"{r['design']:34s} {r['inputs']['gated_reads']:11,} {r['inputs']['divides']:8,} {'-':>9s} "
                  f"{m['lut']:7,}   (Yosys failed: {r['error'][:60]})")
            continue
        y = r["yosys"]
        err = f"{(m['lut'] - y['LUT']) / y['LUT']:+.0%}" if y["LUT"] else "-"
        print(f"{r['design']:34s} {r['inputs']['gated_reads']:11,} {r['inputs']['divides']:8,} {y['LUT']:9,} "
              f"{m['lut']:7,} {err:>7s} {y['FF']:8,} {m['ff']:6,}")
    if args.check and coef != DECODE_FIT:
        print(f"DECODE_FIT is not the fit of {POINTS.name}: set it to {coef}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
