"""GPT-2 through hlsgen: agreement of the tiny graphs, export / inspect limits of medium, and
the modeled prefill latency on the Alveo U280.

    .venv/bin/python benchmarks/gpt2.py [--out build/bench] [--seq 256,1024] [--skip-medium]

Prints Markdown tables (pasted into docs/numerics.md and docs/performance.md) and writes JSON.
Exporting GPT-2 medium takes about 80 s and 14 GB of memory per sequence length.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hlsgen import pipeline  # noqa: E402
from hlsgen.errors import HlsgenError  # noqa: E402
from hlsgen.schedule import ScheduleOptions, load_device, schedule  # noqa: E402
from hlsgen.report.schedule import roofline_fraction  # noqa: E402
from hlsgen.zoo.models import export  # noqa: E402
from agreement import timed_agreement  # noqa: E402  (benchmarks/agreement.py)



PEAK = ("import resource, sys\nfrom hlsgen.cli import main\nrc = main(sys.argv[1:])\n"
        "print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\nsys.exit(rc)")


def child_peak(args):
    """Run `hlsgen ARGS` in a fresh process; (seconds, that process's own peak RSS in MB)."""
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"hlsgen {' '.join(args)} failed: {r.stderr.strip()[-500:]}")
    kb = next(int(l.split()[1]) for l in r.stderr.splitlines() if l.startswith("PEAK_KB"))
    return took, kb / 1024, r.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--seq", default="256,1024")
    ap.add_argument("--skip-medium", action="store_true")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"agreement": [], "medium": []}

    print("### GPT-2 tiny: agreement with the float model (seed 0)\n")
    print("| graph | format | tasks | end-to-end identical | max LSB | worst layer identical | ties | unexplained | "
          "softmax worst | LayerNorm worst | GELU table worst | golden s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for phase in ("prefill", "decode"):
        for fmt in ("qonnx", "qcdq"):
            p = out / f"gpt2-tiny-{phase}-{fmt}.onnx"
            export("gpt2", "tiny", p, fmt, 0, phase=phase, seq_len=64)
            g, rep, tg = timed_agreement(p)
            lbl = rep["layer_by_layer"]

            def worst(op):
                rows = [r["layer_by_layer"] for r in rep["tensors"] if r["op"] == op]
                return f"{100 * min(r['exact_fraction'] for r in rows):.2f}% / {max(r['max_abs_lsb'] for r in rows)} LSB"
            print(f"| {phase} 64 | {fmt} | {len(g.tasks)} | {100 * rep['exact_fraction']:.3f}% | {rep['max_abs_lsb']} | "
                  f"{100 * lbl['min_exact_fraction']:.3f}% | {lbl['differences_at_ties']} | {lbl['differences_unexplained']} | "
                  f"{worst('softmax')} | {worst('layernorm')} | {worst('lut')} | {tg:.2f} |")
            doc["agreement"].append({"phase": phase, "format": fmt, "report": {k: rep[k] for k in ("exact_fraction", "max_abs_lsb", "layer_by_layer")}})
    if a.skip_medium:
        return
    print("\n### GPT-2 medium prefill on the U280 (modeled; cap 0.8, 300 MHz, W4A8)\n")
    print("| seq | export s | export peak MB | inspect s | inspect peak MB | tasks | GMACs | mode | stages | cycles | latency ms | "
          "tokens/s | GOPS | GOPS/DSP | DSP | roofline fraction | schedule s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    dev = load_device("u280")
    for n in [int(x) for x in a.seq.split(",")]:
        p = out / f"gpt2-medium-prefill-{n}.onnx"
        te, me, _ = child_peak(["zoo", "gpt2", "--config", "medium", "--phase", "prefill", "--seq-len", str(n), "-o", str(p)])
        ti, mi, _ = child_peak(["inspect", str(p)])
        g = pipeline.load(str(p), {})
        for mode in ("auto", "sequential"):
            t0 = time.perf_counter()
            try:
                s = schedule(g, dev, ScheduleOptions(mode=mode))
            except HlsgenError as exc:          # a configuration that does not fit is a row, not a crash
                print(f"| {n} | {te:.0f} | {me:.0f} | {ti:.1f} | {mi:.0f} | {len(g.tasks)} | | {mode} | does not fit: "
                      f"{str(exc)[:300]} |||||||||")
                doc["medium"].append({"seq": n, "mode": mode, "error": str(exc)})
                continue
            took = time.perf_counter() - t0
            secs = s.total_cycles / (s.clock_mhz * 1e6)
            frac = roofline_fraction(s, dev, 2)                      # int4 x int8: two products per DSP
            print(f"| {n} | {te:.0f} | {me:.0f} | {ti:.1f} | {mi:.0f} | {len(g.tasks)} | {s.macs / 1e9:.1f} | {mode} | {s.segmentation} | "
                  f"{s.total_cycles:,d} | {1e3 * secs:.1f} | {n / secs:,.0f} | {s.gops:,.0f} | "
                  f"{s.gops / max(1, s.resources.dsp):.3f} | {s.resources.dsp} | {frac:.2f} | {took:.1f} |")
            doc["medium"].append({"seq": n, "export_s": te, "export_peak_mb": me, "inspect_s": ti, "inspect_peak_mb": mi,
                                  "mode": mode, "stages": s.segmentation, "io_offchip": s.io_offchip, "cycles": s.total_cycles, "latency_ms": 1e3 * secs, "dsp": s.resources.dsp,
                                  "roofline_fraction": frac, "schedule_s": took})
        p.unlink()
    (out / "gpt2.json").write_text(json.dumps(doc, indent=2, default=float))
    print(f"\nwrote {out / 'gpt2.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
