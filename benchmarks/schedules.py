"""Schedules of the test networks, CoDeNet (tiny, a, c), five InTAR kernels and GPT-2 tiny on four
targets in all three modes, with the time each took: to check that a change to the scheduler keeps
every schedule (`--compare` a run of the old code) and to measure how much faster it got.

    .venv/bin/python benchmarks/schedules.py [--out build/bench/schedules.json] [--compare OLD.json]

The models are exported into build/bench first (CoDeNet a and c take a minute each).
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
from hlsgen.schedule import ScheduleOptions, load_device, schedule  # noqa: E402

NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8",
        "demo_cnn", "shuffle_block"]
ZOO = [("codenet", "tiny"), ("codenet", "a"), ("codenet", "c"), ("gpt2", "tiny")]
INTAR = ["attn-w8a8", "cnn4l-w8a8", "mlp-w8a8", "vae-w8a8", "gating-w8a8"]
SMALL = str(ROOT / "designs" / "devices" / "small.yaml")
TARGETS = [("u280", {}), (SMALL, dict(resource_cap=0.2, weights="offchip")), ("ultra96v2", {}),
           ("u280", dict(resource_cap=0.1))]


def models(out: Path):
    from hlsgen.zoo.models import export
    from hlsgen.zoo.testnets import export as export_net
    for n in NETS:
        p = out / f"{n}-qonnx.onnx"
        if not p.exists():
            export_net(n, p, "qonnx", False)
        yield n, p
    for model, config in ZOO:
        p = out / f"{model}-{config}-qonnx.onnx"
        if not p.exists():
            print(f"exporting {model} {config} ...", file=sys.stderr, flush=True)
            kw = dict(phase="prefill", seq_len=64) if model == "gpt2" else {}
            export(model, config, p, "qonnx", 0, **kw)
        yield f"{model}-{config}", p
    for k in INTAR:
        p = out / f"intar-{k}.onnx"
        if p.exists():                       # written by benchmarks/intar_validation.py
            yield f"intar-{k}", p
        else:
            print(f"skipping intar-{k}: {p} is missing (run benchmarks/intar_validation.py)", file=sys.stderr)


def _figures(row):
    """A row without its time: what must not change when only the scheduler's speed does."""
    return {k: v for k, v in row.items() if k != "seconds"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/bench/schedules.json")
    ap.add_argument("--compare", help="a JSON this script wrote with other code: list the schedules that differ")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, path in models(out.parent):
        g = pipeline.load(str(path), {})
        for dev, kw in TARGETS:
            for mode in ("auto", "dataflow", "sequential"):
                t0 = time.perf_counter()
                try:
                    s = schedule(g, load_device(dev), ScheduleOptions(mode=mode, **kw))
                    r = dict(stages=s.segmentation, cycles=s.total_cycles, resources=s.resources.as_dict(),
                             io_offchip=s.io_offchip)
                except HlsgenError as exc:
                    r = dict(error=str(exc))
                rows.append(dict(model=name, device=Path(dev).stem, options=kw, mode=mode,
                                 seconds=round(time.perf_counter() - t0, 2), **r))
                print(f"{name:22s} {Path(dev).stem:9s} {json.dumps(kw):45s} {mode:10s} "
                      f"{r.get('stages', 'does not fit'):>12s} {r.get('cycles', '')!s:>12s} {rows[-1]['seconds']:6.2f} s",
                      flush=True)
    out.write_text(json.dumps(rows, indent=1) + "\n")
    auto = sum(r["seconds"] for r in rows if r["mode"] == "auto")
    print(f"{len(rows)} schedules; auto took {auto:.1f} s in all; wrote {out}")
    if a.compare:
        old = {(r["model"], r["device"], json.dumps(r["options"]), r["mode"]): r for r in json.loads(Path(a.compare).read_text())}
        same = differ = 0
        old_auto = 0.0
        for r in rows:
            o = old.get((r["model"], r["device"], json.dumps(r["options"]), r["mode"]))
            if o is None:
                continue
            if _figures(o) == _figures(r):
                same += 1
            else:
                differ += 1
                print(f"DIFFERS {r['model']} {r['device']} {r['options']} {r['mode']}: {_figures(o)} -> {_figures(r)}")
            old_auto += o["seconds"] if r["mode"] == "auto" else 0
        print(f"against {a.compare}: {same} schedules the same, {differ} differ; auto {old_auto:.1f} s -> {auto:.1f} s")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
