"""Each hlsgen_core whole as Yosys builds it (its control, address generation, tables and
datapath) against its model, hlsgen.backends.rtl.core.CORE_FIT and CORE_FF_FIT, fitted on
benchmarks/core_points.json.

    .venv/bin/python benchmarks/core_fit.py             # the fit, each core's error, each design left out
    .venv/bin/python benchmarks/core_fit.py --check     # exit 1 if CORE_FIT / CORE_FF_FIT are not the fits
    .venv/bin/python benchmarks/core_fit.py --collect [--only NET ...] [--target capped|u280|ultra96v2 ...]

--collect builds every Foundation test net for the capped small FPGA (as benchmarks/rtl_designs.py
does) in dataflow and sequential mode, four of them again at other widths (LANES: --max-lanes),
the nets of --u280 for the U280 in both modes, and make demo's design; and synthesizes each of
their cores whole (synth_design.py's `_synth(out, c, "core")`, what `make synth-yosys
SCOPE=core` does; a core with the same parameters and tables as one synthesized before in the
run is not synthesized again). Each point is one core: its design,
its parameters (design.json's synth.cores[].core_params), the cost model's datapath figures for
it, Yosys's LUT (in sites), LUTRAM, FF and DSP48E2, and the commit it was built at; the fit's
inputs are computed from the parameters (`core_inputs`). The points of designs not built again
(--only, --target) are kept. A core Yosys cannot synthesize is kept with its error, and one whose
DSP48E2 count is not the model's is kept too; both are left out of the fit (`fitted`).
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
POINTS = ROOT / "benchmarks" / "core_points.json"
# capped designs also built at other widths (--max-lanes, at 64-bit ports where the build steers
# there): the same nets' cores with more and fewer lanes, among them the steered demo_cnn's (12)
LANES = [("demo_cnn", ("--port-bits", "64", "--max-lanes", "4")), ("demo_cnn", ("--port-bits", "64", "--max-lanes", "12")),
         ("demo_cnn", ("--port-bits", "64", "--max-lanes", "32")), ("pointwise", ("--max-lanes", "2")),
         ("pointwise", ("--max-lanes", "32")), ("gap_linear", ("--max-lanes", "2")),
         ("gap_linear", ("--max-lanes", "16")), ("mlp_w8", ("--max-lanes", "16"))]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sim"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bank_fit import weighted_fit  # noqa: E402
from rtl_designs import NETS, built, built_at, job_name  # noqa: E402
from hlsgen.backends.rtl.core import CORE_FF_FIT, CORE_FIT, core_inputs, core_logic, shared_pick_lut  # noqa: E402


def load(path: Path = POINTS) -> List[Dict]:
    return json.loads(path.read_text()) if path.exists() else []


def fitted(rows: List[Dict]) -> List[Dict]:
    """The synthesized cores the fit is made on: those whose DSP48E2 count is the model's. Where
    Yosys finds a multiplier's operand constant in every row of the core's tables it folds the
    multiply into LUTs (gap_linear's global pool on the U280: 32 DSP48E2 where the model has 256),
    so the core is not the circuit the datapath model prices. Each core once: a build at another
    width (LANES) may make the very core its design made (pointwise's at 32 lanes)."""
    seen, out = set(), []
    for r in rows:
        key = json.dumps([r["core_params"], r["model"], r.get("yosys")], sort_keys=True)
        if "yosys" in r and r["yosys"]["DSP48E2"] == r["model"]["dsp"] and key not in seen:
            seen.add(key)
            out.append(r)
    return out


def inputs(r: Dict) -> Dict[str, float]:
    return core_inputs(r["core_params"], r["model"])


def fit(rows: List[Dict]) -> Dict[str, Dict[str, float]]:
    """CORE_FIT and CORE_FF_FIT fitted on the synthesized cores (bank_fit.weighted_fit: each core
    weighted by 1 / sqrt(its figure, at least 200)), the LUTs of a core's shared-read pick
    (SHARED_PICK_LUT, measured) taken off first."""
    rows = fitted(rows)
    terms = [inputs(r) for r in rows]
    return {"lut": weighted_fit(terms, [r["yosys"]["LUT"] - shared_pick_lut(t) for r, t in zip(rows, terms)],
                                list(CORE_FIT), 200),
            "ff": weighted_fit(terms, [r["yosys"]["FF"] for r in rows], list(CORE_FF_FIT), 200)}


def _price(coef: Dict[str, float], t: Dict[str, float]) -> float:
    return sum(coef[k] * t[k] for k in coef) + shared_pick_lut(t)


def family(design: str) -> str:
    """A design's net, target and mode ("make demo" alone): its builds at other widths (LANES)
    are left out of the fit with it."""
    return design if design == "make demo" else " ".join(design.split()[:3])


def left_out(rows: List[Dict]) -> Dict[str, float]:
    """Per design: its cores' LUTs (summed) priced by a fit on the other designs' cores, against
    Yosys's (modeled / synthesized - 1); the builds of its family (the same net, target and mode
    at other widths) are left out of that fit too."""
    out = {}
    rows = fitted(rows)
    for design in dict.fromkeys(r["design"] for r in rows):
        coef = fit([r for r in rows if family(r["design"]) != family(design)])["lut"]
        mine = [r for r in rows if r["design"] == design]
        out[design] = sum(_price(coef, inputs(r)) for r in mine) / sum(r["yosys"]["LUT"] for r in mine) - 1
    return out


def collect(u280: List[str], only: List[str], targets: List[str], dst: Path, old: List[Dict]) -> List[Dict]:
    """Build the designs and synthesize each new core whole, writing the points to `dst` after
    each core (a long run keeps what it has done): the `old` points of every design not built
    again, and the new ones (so that --only or --target refreshes those designs alone)."""
    from hlsgen_sim import synth_design, yosys
    jobs = [(n, "capped", m) for n in NETS for m in ("dataflow", "sequential")]
    jobs += [(n, "u280", m) for n in u280 for m in ("dataflow", "sequential")]
    jobs.append(("make demo", "ultra96v2", "designs/demo-cnn-ultra96.yaml"))
    jobs += [(n, "capped", "sequential", more) for n, more in LANES]
    if only:
        jobs = [j for j in jobs if j[0] in only or job_name(j) in only]
    if targets:
        jobs = [j for j in jobs if j[1] in targets]
    rows, seen, commit = [], set(), built_at()
    for place, name, out in built(jobs):
        old = [r for r in old if r["design"] != name]
        syn = json.loads((out / "sim" / "design.json").read_text())["synth"]
        for c in syn["cores"]:
            key = synth_design.synth_key(out, c, "core")     # make synth-yosys's own rule for a repeated core
            if key in seen:
                continue
            seen.add(key)
            row = {"design": name, "core": c["index"], "mode": c["mode"], "tasks": c["tasks"],
                   "core_params": c["core_params"], "model": c["model"], "commit": commit}
            t = time.perf_counter()
            try:
                y = yosys.resources(synth_design._synth(out, c, "core"))
                row["yosys"] = {q: y[q] for q in ("LUT", "LUTRAM", "FF", "DSP48E2", "BRAM18")}
            except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
                row["error"] = str(exc).strip().splitlines()[-1][-200:]
            row["seconds"] = round(time.perf_counter() - t, 1)
            rows.append(row)
            dst.write_text(json.dumps(old + rows, indent=1) + "\n")
            print(f"{place} {name} core{c['index']} ({c['mode']}): {row.get('yosys', row.get('error'))} model "
                  f"{c['model']} ({row['seconds']} s)", flush=True)
    dst.write_text(json.dumps(old + rows, indent=1) + "\n")
    return old + rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 unless CORE_FIT and CORE_FF_FIT are the fits")
    ap.add_argument("--collect", action="store_true", help="build and synthesize the designs, write the points")
    ap.add_argument("--u280", default="conv_bn_relu,depthwise_s2,pointwise,residual,gap_linear,mlp_w8",
                    help="nets also built for the U280 (comma-separated)")
    ap.add_argument("--only", action="append", default=[], help="only these designs (net names, the points' design names, or 'make demo')")
    ap.add_argument("--target", action="append", default=[], choices=["capped", "u280", "ultra96v2"],
                    help="only these targets")
    ap.add_argument("--out", type=Path, default=POINTS, help="the points file to write (default: the fit's); the "
                    "points of designs not built again are kept")
    args = ap.parse_args()
    if args.collect:
        collect([n for n in args.u280.split(",") if n], args.only, args.target, args.out,
                load(args.out) if args.out.exists() else [])
        if args.out != POINTS:
            return 0
    rows = load()
    coef = fit(rows)
    failed = sum(1 for r in rows if "yosys" not in r)
    print(f"fit of {len(fitted(rows))} synthesized cores ({failed} that Yosys could not synthesize and "
          f"{len(rows) - failed - len(fitted(rows))} whose DSP48E2 count is not the model's left out):\n  LUT {coef['lut']}\n  FF  {coef['ff']}\nCORE_FIT: {CORE_FIT}\nCORE_FF_FIT: {CORE_FF_FIT}")
    print(f"{'design':34s} {'core':>4s} {'Yosys LUT':>9s} {'LUTRAM':>6s} {'model':>7s} {'error':>6s} {'datapath':>8s} "
          f"{'Yosys FF':>8s} {'model':>6s} {'error':>6s}")
    for r in rows:
        m = core_logic(inputs(r))
        if "yosys" not in r:
            print(f"{r['design']:34s} {r['core']:4d} {'-':>9s} {'-':>6s} {m['lut']:7,}        {r['model']['lut']:8,}"
                  f"   (Yosys failed: {r['error'][:50]})")
            continue
        y = r["yosys"]
        print(f"{r['design']:34s} {r['core']:4d} {y['LUT']:9,} {y['LUTRAM']:6,} {m['lut']:7,} "
              f"{(m['lut'] - y['LUT']) / y['LUT']:+6.0%} {r['model']['lut']:8,} {y['FF']:8,} {m['ff']:6,} "
              f"{(m['ff'] - y['FF']) / y['FF']:+6.0%}" + ("" if r in fitted([r]) else
                                                          f"   (left out: {y['DSP48E2']} DSP48E2, model {r['model']['dsp']})"))
    print("each design's cores priced by a fit on the other designs' (LUT): " +
          ", ".join(f"{d} {e:+.0%}" for d, e in left_out(rows).items()))
    if args.check and (coef["lut"] != CORE_FIT or coef["ff"] != CORE_FF_FIT):
        print(f"CORE_FIT / CORE_FF_FIT are not the fits of {POINTS.name}: set them to {coef}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
