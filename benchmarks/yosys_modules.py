"""Synthesized against modeled resources: Yosys (yowasp, synth_xilinx -family xcup) on the
streaming modules that realize real layers of the Foundation nets, at a folding, beside the
cost model's figures for the same task and folding (DSP48E2 is the one the model claims to
get right; its LUT and FF counts are coarse estimates).

    .venv/bin/python benchmarks/yosys_modules.py
"""
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = [("conv_bn_relu", "conv", 0, 4, 3), ("demo_cnn", "conv", 0, 2, 9), ("pointwise", "conv", 0, 8, 16),
         ("maxpool", "conv", 0, 8, 4), ("residual", "conv", 1, 1, 1), ("depthwise_s2", "conv", 0, 1, 1),
         ("shuffle_block", "avgpool", 0, 1, 1)]


def main():
    sys.path.insert(0, str(ROOT))
    from hlsgen import pipeline
    from hlsgen.backends.rtl.synth import synthesize_task
    from hlsgen.zoo.testnets import export

    rows = []
    print("| layer | weights | folding (pe, simd) | DSP48E2 (Yosys) | DSP (model) | error | LUT (Yosys) | LUT (model) | "
          "FF (Yosys) | FF (model) | Yosys s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for net, op, k, pe, simd in CASES:
            model_path = work / f"{net}.onnx"
            if not model_path.exists():
                export(net, model_path, "qcdq")
            g = pipeline.load(str(model_path), {})
            task = [t for t in g.tasks if t.op == op][k]
            t0 = time.perf_counter()
            cells, model = synthesize_task(g, task, pe, simd, work / f"{net}-{k}")
            secs = time.perf_counter() - t0
            dsp = cells.get("DSP48E2", 0)
            lut = sum(v for c, v in cells.items() if c.startswith("LUT"))
            ff = sum(v for c, v in cells.items() if c.startswith("FD"))
            wbits = g.tensors[task.inputs[1]].dtype.bits if op == "conv" else "-"
            kind = "depthwise conv" if op == "conv" and task.attrs["groups"] > 1 else op
            err = (model.dsp - dsp) / max(dsp, 1)
            print(f"| {net} {kind} {k} | {wbits} | ({pe}, {simd}) | {dsp} | {model.dsp} | {err:+.1%} | {lut:,} | "
                  f"{model.lut:,} | {ff:,} | {model.ff:,} | {secs:.0f} |", flush=True)
            rows.append({"net": net, "op": op, "k": k, "pe": pe, "simd": simd, "cells": cells, "model_dsp": model.dsp,
                         "model_lut": model.lut, "model_ff": model.ff})
    dst = ROOT / "build" / "bench" / "yosys_modules.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(rows, indent=2))
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
