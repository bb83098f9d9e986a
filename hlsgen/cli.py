"""The `hlsgen` command: argument parsing and messages only; the work is in pipeline.py."""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from . import __version__
from .errors import HlsgenError


def _common_model_args(p):
    p.add_argument("model", help="quantized ONNX file (QONNX Quant nodes or QuantizeLinear/Clip/DequantizeLinear)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="fix the shape of a graph input with dynamic dimensions (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hlsgen", description="Quantized ONNX -> integer IR -> FPGA accelerator, verified bit for bit.")
    ap.add_argument("--version", action="version", version=f"hlsgen {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("inspect", help="list the integer tasks of a model: shapes, types, scales, MACs, parameters",
                       description="Lower a quantized ONNX model to hlsgen's integer IR and print one row per task.")
    _common_model_args(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")

    p = sub.add_parser("run", help="execute the bit-exact integer golden model (optionally against the float model)",
                       description="Run the golden model on a float input (quantized by the model's input quantizer).")
    _common_model_args(p)
    p.add_argument("--input", action="append", default=[], metavar="[NAME=]X.npy", help="float input array (default: seeded N(0,1))")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default 0)")
    p.add_argument("-o", "--output", metavar="OUT.npy", help="save the (first) output, dequantized to float32")
    p.add_argument("--compare", action="store_true", help="also execute the float ONNX model and compare every quantized tensor")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    return ap


def cmd_inspect(a) -> int:
    from . import pipeline
    from .report.inspect import format_table, report

    g = pipeline.load(a.model, pipeline.parse_shapes(a.shape))
    rep = report(g)
    if a.json:
        print(json.dumps(rep, indent=2))
    else:
        print(format_table(rep))
    return 0


def cmd_run(a) -> int:
    from . import pipeline
    from .report.inspect import display_name

    t0 = time.perf_counter()
    g = pipeline.load(a.model, pipeline.parse_shapes(a.shape))
    floats = pipeline.float_inputs(g, a.input, a.seed)
    ints = pipeline.quantize_inputs(g, floats)
    t1 = time.perf_counter()
    if a.compare:
        rep, values = pipeline.compare(g, a.model, floats, ints)
    else:
        values = pipeline.run_golden(g, ints)
        rep = {}
    t2 = time.perf_counter()
    outputs = []
    for n in g.outputs:
        t = g.tensors[n]
        v = values[n]
        outputs.append({"name": n, "shape": list(t.shape), "dtype": t.dtype.name, "min": int(v.min()), "max": int(v.max()),
                        "first": [int(x) for x in v.reshape(-1)[:8]]})
    if a.output:
        first = g.tensors[g.outputs[0]]
        real = first.quant.dequantize(values[g.outputs[0]]).astype(np.float32)
        pipeline.write_atomic(a.output, lambda f: np.save(f, real))
    result = {"model": a.model, "seed": a.seed, "golden_outputs": outputs,
              "seconds": {"load": round(t1 - t0, 3), "execute": round(t2 - t1, 3)}}
    result.update(rep)
    if a.json:
        print(json.dumps(result, indent=2))
        return 0
    for o in outputs:
        print(f"output {display_name(o['name'])}: {'x'.join(map(str, o['shape']))} {o['dtype']}  range [{o['min']}, {o['max']}]  first {o['first']}")
    if a.compare:
        print(f"{'tensor':44s} {'op':16s} {'end-to-end':>22s} {'layer-by-layer':>22s}")
        for r in rep["tensors"]:
            e, l = r["end_to_end"], r["layer_by_layer"]
            print(f"{display_name(r['onnx_name'] or r['name'], 44):44s} {r['op']:16s} "
                  f"{100 * e['exact_fraction']:9.3f}% max {e['max_abs_lsb']:3d} LSB "
                  f"{100 * l['exact_fraction']:9.3f}% max {l['max_abs_lsb']:3d} LSB")
        print(f"final outputs: {100 * rep['exact_fraction']:.3f}% identical to the float model, max difference {rep['max_abs_lsb']} LSB")
        lbl = rep["layer_by_layer"]
        print(f"layer by layer: worst layer {100 * lbl['min_exact_fraction']:.3f}% identical, max difference {lbl['max_abs_lsb']} LSB")
    if a.output:
        print(f"wrote {a.output} (dequantized float32)")
    return 0


def main(argv=None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    try:
        return {"inspect": cmd_inspect, "run": cmd_run}[a.command](a)
    except HlsgenError as exc:
        print(f"hlsgen: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("hlsgen: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
