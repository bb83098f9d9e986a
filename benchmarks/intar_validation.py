"""Check the cost model against InTAR's measured U280 baselines, and compare the three modes.

    .venv/bin/python benchmarks/intar_validation.py [--out build/bench]

1. For InTAR's MLP and CNN-4L dataflow and sequential designs, fix each task's folding to what
   the InTAR sources use (16-bit data, 256-bit HBM ports) and report the modeled cycles against
   the cycles measured on the board (../shared/anchors.md, InTAR benchmark/README.md).
2. Schedule the same kernels with free parallelism in the three modes (auto / dataflow /
   sequential) and report auto's speedups.
Prints Markdown tables (pasted into docs/performance.md) and writes JSON beside the models.
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
from hlsgen.errors import HlsgenError  # noqa: E402
from hlsgen.report.schedule import roofline_fraction  # noqa: E402
from hlsgen.schedule import ScheduleOptions, load_device, schedule  # noqa: E402
from hlsgen.zoo.models import export  # noqa: E402

# (kernel, design, measured cycles, source, options, foldings by op order)
MLP_FOLD = {"linear": (1, 16, 1)}          # `for k < 16: unroll` over outputs inside an II=1 loop over inputs
CNN_FOLD = [(16, 1, 9), (16, 1, 9), (32, 1, 9), (32, 1, 9)]   # 16 pixels x 9 taps; conv3/conv4 unroll 2 rows
BASELINES = [
    ("intar-mlp", "dataflow", 181_996, dict(mode="dataflow", weights="offchip", port_bits=256)),
    ("intar-mlp", "sequential", 1_374_935, dict(mode="sequential", weights="offchip", port_bits=256)),
    ("intar-cnn4l", "dataflow", 713_144, dict(mode="dataflow", port_bits=256)),
    ("intar-cnn4l", "sequential", 2_215_282, dict(mode="sequential", port_bits=256, scratch_fraction=0.0)),
]


def fixed_folding(g, kernel):
    if kernel == "intar-mlp":
        return tuple((t.name, MLP_FOLD["linear"]) for t in g.tasks if t.op == "linear")
    convs = [t.name for t in g.tasks if t.op == "conv"]
    return tuple(zip(convs, CNN_FOLD))


def efficiency(s, dev):
    """(GOPS, roofline fraction, GOPS per DSP used); the peak counts one product per DSP per
    cycle (int8 and int16 on DSP48E2, see docs/performance.md)."""
    return s.gops, roofline_fraction(s, dev, 1), s.gops / max(1, s.resources.dsp)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/bench")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = load_device("u280")
    doc = {"device": "u280", "figures": "modeled (hlsgen cost model) vs measured on board (InTAR README)",
           "baselines": [], "modes": []}
    models = {}
    for kernel, bits in (("intar-mlp", 16), ("intar-mlp", 8), ("intar-cnn4l", 16), ("intar-cnn4l", 8),
                         ("intar-attn", 8), ("intar-gating", 8), ("intar-vae", 8)):
        p = out / f"{kernel}-w{bits}a{bits}.onnx"
        export(kernel, "default", p, "qonnx", 0, bits, bits)
        models[(kernel, bits)] = pipeline.load(str(p), {})

    print("### Cost model vs InTAR's measured U280 baselines (16-bit, InTAR's foldings)\n")
    print("| kernel | design | folding | measured cycles | modeled cycles | error |")
    print("|---|---|---|---:|---:|---:|")
    for kernel, design, measured, kw in BASELINES:
        g = models[(kernel, 16)]
        fold = fixed_folding(g, kernel)
        s = schedule(g, dev, ScheduleOptions(folding=fold, **kw))
        err = (s.total_cycles - measured) / measured
        fdesc = ", ".join(sorted({f"vec {v} pe {p} simd {q}" for _, (v, p, q) in fold}))
        print(f"| {kernel} | {design} | {fdesc} | {measured:,d} | {s.total_cycles:,d} | {100 * err:+.1f}% |")
        doc["baselines"].append({"kernel": kernel, "design": design, "measured_cycles": measured,
                                 "modeled_cycles": s.total_cycles, "error": round(err, 4), "options": kw,
                                 "folding": [list(f) for _, f in fold]})

    print("\n### auto vs dataflow vs sequential, free parallelism (cap 0.8, device clock, modeled)\n")
    print("| device | kernel | precision | auto cycles | auto stages | dataflow cycles | sequential cycles | auto vs dataflow | "
          "auto vs sequential | auto GOPS | GOPS/DSP | roofline fraction | schedule time |")
    print("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (dname, (kernel, bits)) in [(d, k) for d in ("u280", "kv260", "ultra96v2") for k in models]:
        g = models[(kernel, bits)]
        dev = load_device(dname)
        t0 = time.perf_counter()
        res = {}
        for m in ("auto", "dataflow", "sequential"):
            try:
                res[m] = schedule(g, dev, ScheduleOptions(mode=m))
            except HlsgenError:
                res[m] = None                      # this style does not fit the device
        took = time.perf_counter() - t0
        au, df, sq = res["auto"], res["dataflow"], res["sequential"]
        gops, frac, per_dsp = efficiency(au, dev)
        stages = au.segmentation

        def cyc(s):
            return f"{s.total_cycles:,d}" if s else "does not fit"

        def ratio(s):
            return f"{s.total_cycles / au.total_cycles:.2f}x" if s else "-"
        print(f"| {dname} | {kernel} | W{bits}A{bits} | {au.total_cycles:,d} | {stages} | {cyc(df)} | {cyc(sq)} | "
              f"{ratio(df)} | {ratio(sq)} | {gops:.1f} | {per_dsp:.3f} | {frac:.2f} | {took:.2f} s |")
        doc["modes"].append({"device": dname, "kernel": kernel, "bits": bits, "auto": au.total_cycles,
                             "dataflow": df.total_cycles if df else None,
                             "sequential": sq.total_cycles if sq else None, "auto_stages": stages, "gops": round(gops, 2),
                             "gops_per_dsp": round(per_dsp, 4), "roofline_fraction": round(frac, 3),
                             "dsp": au.resources.dsp, "packing": "see docs/performance.md"})
    (out / "intar_validation.json").write_text(json.dumps(doc, indent=2))
    print(f"\nwrote {out / 'intar_validation.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
