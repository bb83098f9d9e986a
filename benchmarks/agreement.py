"""Measure golden vs float-model agreement for every Foundation test net, format and exporter.

    .venv/bin/python benchmarks/agreement.py [--seeds 0 1 2] [--no-dynamo]

Prints a Markdown table (the one recorded in docs/numerics.md).
"""
import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

from hlsgen import pipeline
from hlsgen.zoo.testnets import export

def timed_agreement(path, seed: int = 0):
    """(graph, the golden-vs-float report of `hlsgen run --compare`, seconds the golden took) of
    one export at one input seed (the CoDeNet and GPT-2 benchmarks' agreement rows)."""
    g = pipeline.load(str(path), {})
    floats = pipeline.float_inputs(g, [], seed)
    ints = pipeline.quantize_inputs(g, floats)
    t0 = time.perf_counter()
    pipeline.run_golden(g, ints)
    secs = time.perf_counter() - t0
    rep, _ = pipeline.compare(g, str(path), floats, ints)
    return g, rep, secs


NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8", "demo_cnn", "shuffle_block"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--no-dynamo", action="store_true")
    a = ap.parse_args()
    exports = [("qonnx", False), ("qcdq", False)] + ([] if a.no_dynamo else [("qonnx", True), ("qcdq", True)])
    print("| net | export | tasks | end-to-end identical | max LSB | worst layer identical | max LSB (layers) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for net in NETS:
            for fmt, dyn in exports:
                with contextlib.redirect_stdout(sys.stderr):  # the dynamo exporter prints progress
                    p = export(net, Path(d) / f"{net}_{fmt}_{dyn}.onnx", fmt, dyn)
                g = pipeline.load(p)
                e_fr, e_lsb, l_fr, l_lsb, n = 0.0, 0, 1.0, 0, 0
                for seed in a.seeds:
                    floats = pipeline.float_inputs(g, [], seed)
                    rep, _ = pipeline.compare(g, p, floats, pipeline.quantize_inputs(g, floats))
                    els = sum(o["elements"] for o in rep["outputs"])
                    e_fr += rep["exact_fraction"] * els
                    n += els
                    e_lsb = max(e_lsb, rep["max_abs_lsb"])
                    l_fr = min(l_fr, rep["layer_by_layer"]["min_exact_fraction"])
                    l_lsb = max(l_lsb, rep["layer_by_layer"]["max_abs_lsb"])
                print(f"| {net} | {fmt} {'dynamo' if dyn else 'torchscript'} | {len(g.tasks)} | {100 * e_fr / n:.3f}% | {e_lsb} | {100 * l_fr:.3f}% | {l_lsb} |", flush=True)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"\n({time.time() - t0:.0f} s)")
