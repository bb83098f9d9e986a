"""CoDeNet through hlsgen: MACs against the paper, agreement with the float model, golden and
export times, and the modeled schedule on the Ultra96-V2.

    .venv/bin/python benchmarks/codenet.py [--out build/bench] [--configs tiny,a,b,c,d,e] [--schedules-only]

--schedules-only reuses the QCDQ exports already in --out (exporting those missing) and prints
only the schedule table.

Prints Markdown tables (pasted into docs/numerics.md and docs/performance.md) and writes JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hlsgen import pipeline  # noqa: E402
from hlsgen.schedule import ScheduleOptions, load_device, schedule  # noqa: E402
from hlsgen.report.inspect import report as inspect_report  # noqa: E402
from hlsgen.report.schedule import roofline_fraction  # noqa: E402
from hlsgen.zoo.models import export  # noqa: E402
from agreement import timed_agreement  # noqa: E402  (benchmarks/agreement.py)

PAPER = {"a": (0.29e9, 32.2), "b": (0.29e9, 26.9), "c": (1.14e9, 9.3), "d": (3.54e9, 5.2), "e": (3.58e9, 4.6)}


def agreement(config: str, out: Path, doc) -> "pipeline.Graph":
    """Export one configuration in both formats, print its agreement rows; the QCDQ graph."""
    g = None
    for fmt in ("qonnx", "qcdq"):
        p = out / f"codenet-{config}-{fmt}.onnx"
        t0 = time.perf_counter()
        export("codenet", config, p, fmt, 0)
        t_export = time.perf_counter() - t0
        g, rep, t_golden = timed_agreement(p)
        macs = inspect_report(g)["totals"]["macs"]          # what `hlsgen inspect` prints
        lbl = rep["layer_by_layer"]
        paper = PAPER.get(config, (None, None))[0]
        diff = f"{100 * (macs - paper) / paper:+.1f}%" if paper else "-"
        print(f"| {config} | {fmt} | {t_export:.1f} | {len(g.tasks)} | {macs:,d} | {f'{paper:,.0f}' if paper else '-'} | {diff} | "
              f"{t_golden:.2f} | {100 * rep['exact_fraction']:.3f}% | {rep['max_abs_lsb']} | "
              f"{100 * lbl['min_exact_fraction']:.3f}% | {lbl['differences_at_ties']} | {lbl['differences_unexplained']} |")
        doc["agreement"].append({"config": config, "format": fmt, "export_s": round(t_export, 2), "macs": macs,
                                 "golden_s": round(t_golden, 3), "exact_fraction": rep["exact_fraction"],
                                 "max_abs_lsb": rep["max_abs_lsb"], "layer_by_layer": lbl})
    return g


def reuse(config: str, out: Path) -> "pipeline.Graph":
    """The QCDQ export already in `out` (exported when missing)."""
    p = out / f"codenet-{config}-qcdq.onnx"
    if not p.exists():
        export("codenet", config, p, "qcdq", 0)
    return pipeline.load(str(p), {})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--configs", default="tiny,a,b,c,d,e")
    ap.add_argument("--schedules-only", action="store_true", help="skip exports that exist and the agreement table")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"agreement": [], "schedules": []}
    if not a.schedules_only:
        print("### CoDeNet: MACs, agreement with the float model, times\n")
        print("| config | format | export s | tasks | MACs (hlsgen) | MACs (paper) | diff | golden s | end-to-end identical | "
              "max LSB | layer-by-layer worst | differences at float32 ties | unexplained |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    dev = load_device("ultra96v2")
    graphs = {c: reuse(c, out) if a.schedules_only else agreement(c, out, doc) for c in a.configs.split(",")}
    print("\n### CoDeNet on the Ultra96-V2 (modeled; cap 0.8, 250 MHz)\n")
    print("| config | mode | stages | cycles | latency ms | FPS | GOPS | GOPS/DSP | DSP | BRAM18 | roofline fraction | "
          "paper FPS (measured) | schedule s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for config, g in graphs.items():
        for mode in ("auto", "dataflow", "sequential"):
            t0 = time.perf_counter()
            try:
                s = schedule(g, dev, ScheduleOptions(mode=mode))
            except Exception as exc:  # a mode that does not fit is reported, not fatal
                print(f"| {config} | {mode} | - | does not fit: {str(exc)[:240]} |||||||||| ")
                continue
            took = time.perf_counter() - t0
            secs = s.total_cycles / (s.clock_mhz * 1e6)
            gops = s.gops
            frac = roofline_fraction(s, dev, 2)                 # int4 x int8: two products per DSP
            paper_fps = PAPER.get(config, (None, None))[1]
            print(f"| {config} | {mode} | {s.segmentation} | {s.total_cycles:,d} | {1e3 * secs:.2f} | {1 / secs:.1f} | {gops:.1f} | "
                  f"{gops / max(1, s.resources.dsp):.3f} | {s.resources.dsp} | {s.resources.bram18} | {frac:.2f} | "
                  f"{paper_fps if paper_fps else '-'} | {took:.1f} |")
            doc["schedules"].append({"config": config, "mode": mode, "stages": s.segmentation, "cycles": s.total_cycles,
                                     "fps": 1 / secs, "gops": gops, "dsp": s.resources.dsp, "roofline_fraction": frac,
                                     "schedule_s": took})
    (out / "codenet.json").write_text(json.dumps(doc, indent=2, default=float))
    print(f"\nwrote {out / 'codenet.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
