"""The top's own logic (hlsgen_top less its cores, activation memory and m_axi engines) as Yosys
builds it, against its model, hlsgen.backends.rtl.top.TOP_FIT and TOP_FF_FIT, fitted on
benchmarks/top_points.json.

    .venv/bin/python benchmarks/top_fit.py             # the fit, each design's error, each left out
    .venv/bin/python benchmarks/top_fit.py --check     # exit 1 if TOP_FIT / TOP_FF_FIT are not the fits
    .venv/bin/python benchmarks/top_fit.py --collect [--only NAME ...]    # about an hour
    .venv/bin/python benchmarks/top_fit.py --inputs    # the points' inputs recomputed (builds only)

--collect builds every Foundation test net for the capped small FPGA (as benchmarks/rtl_designs.py
does: steered where the first schedule's RTL does not fit) in dataflow and sequential mode, and
make demo's design, six of the nets with their inputs and outputs off chip (OFFCHIP,
sequential, `--io offchip`) and two with their beats in steps (STEPPED, sequential,
`--max-lanes 4`); synthesizes each whole top with its activation memory a black box (`make
synth-yosys SCOPE=top`) and each of its cores whole (`SCOPE=core`). A point is one design: the
top's inputs (report.json's rtl_synthesis_model.top.inputs, rtl/top.py's top_inputs), Yosys's
LUT (sites) and FF of the top and of its cores summed, the m_axi engines' model, and the commit
(of the RTL synthesized; `inputs_at`, where the inputs were recomputed from the same builds).
The top's own logic is the top less its cores and less its engines as modeled (M_AXI_FIT), so
the fit also carries the engines' model error. Least squares, no coefficient negative, each
design weighted by 1 / sqrt(its figure, at least 100) (bank_fit.weighted_fit).
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
POINTS = ROOT / "benchmarks" / "top_points.json"
# the nets also built with their inputs and outputs off chip (--io offchip), sequential: more
# pointers, channels and row tables beside the streamed designs (their off-chip inputs and
# outputs are NCHW, as the host holds them, so none divides per beat)
OFFCHIP = ["conv_bn_relu", "demo_cnn", "gap_linear", "mlp_w4", "residual", "two_ports"]
# the nets also built with --max-lanes 4, sequential (since stop 56): their stream beats move in
# steps and no m_axi channel's does (stepped_streams without stepped_bundles), beside the three
# capped designs the build steers to --max-lanes itself, whose channels step too
STEPPED = ["conv_bn_relu", "two_ports"]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sim"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bank_fit import weighted_fit  # noqa: E402
from rtl_designs import NETS, built, built_at, job_name  # noqa: E402
from hlsgen.backends.rtl.top import TOP_FF_FIT, TOP_FIT, price  # noqa: E402


def load(path: Path = POINTS) -> List[Dict]:
    return json.loads(path.read_text()) if path.exists() else []


def own(p: Dict, k: str) -> int:
    """The top's own logic as synthesized: the top less its cores, less its m_axi engines (model)."""
    return p["top"][k] - p["cores"][k] - p["m_axi_model"][k.lower()]


def distinct(points: List[Dict]) -> List[Dict]:
    """The synthesized points, each design once: a net's dataflow and sequential builds are often
    the same design (one stage), which would otherwise count twice."""
    seen, out = set(), []
    for p in points:
        key = json.dumps([p.get("inputs"), p.get("top"), p.get("cores")], sort_keys=True)
        if "top" in p and key not in seen:
            seen.add(key)
            out.append(p)
    return out


def fit(points: List[Dict]) -> Dict[str, Dict[str, float]]:
    points = distinct(points)
    terms = [p["inputs"] for p in points]
    return {"lut": weighted_fit(terms, [own(p, "LUT") for p in points], list(TOP_FIT), 100),
            "ff": weighted_fit(terms, [own(p, "FF") for p in points], list(TOP_FF_FIT), 100)}


def left_out(points: List[Dict]) -> Dict[str, float]:
    """Per design: its top's own LUTs priced by a fit on the other designs', against Yosys's."""
    points = distinct(points)
    return {p["design"]: price(fit([q for q in points if q is not p])["lut"], p["inputs"]) / max(1, own(p, "LUT")) - 1
            for p in points}


def jobs_of(only: List[str]) -> List[tuple]:
    """The designs the points are of (rtl_designs.built's jobs), or only these (net or design names)."""
    jobs = [(n, "capped", m) for n in NETS for m in ("dataflow", "sequential")]
    jobs.append(("make demo", "ultra96v2", "designs/demo-cnn-ultra96.yaml"))
    jobs += [(n, "capped", "sequential", ("--io", "offchip")) for n in OFFCHIP]
    jobs += [(n, "capped", "sequential", ("--max-lanes", "4")) for n in STEPPED]
    return [j for j in jobs if j[0] in only or job_name(j) in only] if only else jobs


def recompute_inputs(points: List[Dict], dst: Path) -> None:
    """Build each synthesized point's design again (no synthesis) and set its inputs to what top_inputs gives
    now, and `inputs_at` to the commit: for a term added to the fit. Each build must be the design
    synthesized: where an input the point had changes, nothing is written."""
    commit = built_at()
    by_name, moved = {p["design"]: p for p in points}, []
    for place, name, out in built(jobs_of([p["design"] for p in points if "top" in p])):
        now = json.loads((out / "report.json").read_text())["rtl_synthesis_model"]["top"]["inputs"]
        was = by_name[name]["inputs"]
        if any(now.get(k) != v for k, v in was.items()):     # not the design synthesized (steered otherwise?)
            moved.append(f"{name}: {was} now {now}")
        by_name[name]["inputs"], by_name[name]["inputs_at"] = now, commit
        print(f"{place} {name}: {now}", flush=True)
    if moved:
        sys.exit("the inputs they had changed, so these builds are not the designs synthesized "
                 "(nothing written):\n  " + "\n  ".join(moved))
    dst.write_text(json.dumps(points, indent=1) + "\n")


def collect(only: List[str], dst: Path, old: List[Dict]) -> List[Dict]:
    """Build the designs, synthesize each top and its cores, write the points to `dst` after each
    design (the `old` points of designs not built again are kept)."""
    from hlsgen_sim import synth_design, yosys
    jobs = jobs_of(only)
    rows, commit = [], built_at()
    keys = ("LUT", "LUTRAM", "FF", "DSP48E2", "BRAM18")
    for place, name, out in built(jobs):
        old = [r for r in old if r["design"] != name]
        design = json.loads((out / "sim" / "design.json").read_text())
        model = json.loads((out / "report.json").read_text())["rtl_synthesis_model"]
        row = {"design": name, "inputs": model["top"]["inputs"], "m_axi_model": {k: model["m_axi"][k] for k in ("lut", "ff")},
               "commit": commit}
        t = time.perf_counter()
        try:
            cores = [yosys.resources(synth_design._synth(out, c, "core")) for c in design["synth"]["cores"]]
            row["cores"] = {k: sum(c[k] for c in cores) for k in keys}
            top = yosys.resources(synth_design._synth_top(out, design))
            row["top"] = {k: top[k] for k in keys}
        except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
            row["error"] = str(exc).strip().splitlines()[-1][-200:]
        row["seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        dst.write_text(json.dumps(old + rows, indent=1) + "\n")
        what = (f"top {row['top']['LUT']:,} LUT, cores {row['cores']['LUT']:,}, engines (model) "
                f"{row['m_axi_model']['lut']:,}: its own {own(row, 'LUT'):,} LUT, {own(row, 'FF'):,} FF"
                if "top" in row else row["error"])
        print(f"{place} {name}: {what} ({row['seconds']} s)", flush=True)
    return old + rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 unless TOP_FIT and TOP_FF_FIT are the fits")
    ap.add_argument("--collect", action="store_true", help="build and synthesize the designs, write the points")
    ap.add_argument("--only", action="append", default=[], help="only these designs (net names, the points' design names, or 'make demo')")
    ap.add_argument("--out", type=Path, default=POINTS, help="the points file to write (default: the fit's)")
    ap.add_argument("--inputs", action="store_true",
                    help="build the points' designs again (no synthesis) and recompute their inputs")
    args = ap.parse_args()
    if args.inputs:
        recompute_inputs(load(args.out), args.out)
    if args.collect:
        collect(args.only, args.out, load(args.out))
        if args.out != POINTS:
            return 0
    points = load()
    coef = fit(points)
    print(f"fit of {len(distinct(points))} synthesized designs:\n  LUT {coef['lut']}\n  FF  {coef['ff']}\n"
          f"TOP_FIT: {TOP_FIT}\nTOP_FF_FIT: {TOP_FF_FIT}")
    print(f"{'design':34s} {'top LUT':>8s} {'cores':>7s} {'m_axi':>6s} {'own':>6s} {'model':>6s} {'error':>6s} "
          f"{'own FF':>7s} {'model':>6s} {'error':>6s}")
    for p in points:
        if "top" not in p:
            print(f"{p['design']:34s} (Yosys failed: {p['error'][:60]})")
            continue
        lut, ff = price(TOP_FIT, p["inputs"]), price(TOP_FF_FIT, p["inputs"])
        ol, of = own(p, "LUT"), own(p, "FF")
        print(f"{p['design']:34s} {p['top']['LUT']:8,} {p['cores']['LUT']:7,} {p['m_axi_model']['lut']:6,} {ol:6,} "
              f"{lut:6,.0f} {(lut - ol) / max(1, ol):+6.0%} {of:7,} {ff:6,.0f} {(ff - of) / max(1, of):+6.0%}")
    print("each design's own logic priced by a fit on the other designs' (LUT): " +
          ", ".join(f"{d} {e:+.0%}" for d, e in left_out(points).items()))
    if args.check and (coef["lut"] != TOP_FIT or coef["ff"] != TOP_FF_FIT):
        print(f"TOP_FIT / TOP_FF_FIT are not the fits of {POINTS.name}: set them to {coef}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
