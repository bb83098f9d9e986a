"""RTL modules against the cost model: cycles measured on Verilator (cocotb, full rate, 8 rows
back to back) next to hlsgen's cost model for the same task and folding.

    .venv/bin/python benchmarks/rtl_cycles.py        # about 1 minute

Figures: "measured" = simulated cycles from the first input transfer to the last output
transfer; "modeled" = hlsgen.schedule.cost.evaluate for the task with 8 rows.
"""
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sim"))

from hlsgen import pipeline  # noqa: E402
from hlsgen.backends.rtl.modules import RTL_DIR, linear_params  # noqa: E402
from hlsgen.ops import OPS  # noqa: E402
from hlsgen.schedule import load_device  # noqa: E402
from hlsgen.schedule.cost import Folding, evaluate  # noqa: E402
from hlsgen.zoo.testnets import export  # noqa: E402
from hlsgen_sim import runner  # noqa: E402

CASES = [("mlp_w4", 0, 1, 1), ("mlp_w4", 0, 8, 4), ("mlp_w4", 1, 4, 8), ("mlp_w8", 2, 2, 2), ("mlp_w4", 2, 10, 32),
         ("mlp_w4", 1, 32, 64)]
ROWS = 8


def main():
    dev = load_device("u280")
    out = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        print("| layer | K | N | pe | simd | measured cycles | modeled cycles | model error |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for net, layer, pe, simd in CASES:
            onnx_path = work / f"{net}.onnx"
            if not onnx_path.exists():
                export(net, onnx_path, "qcdq")
            g = pipeline.load(str(onnx_path), {})
            task = [t for t in g.tasks if t.op == "linear"][layer]
            x = g.tensors[task.inputs[0]]
            rows = np.random.RandomState(0).randint(x.dtype.min, x.dtype.max + 1, (ROWS, x.shape[-1]))
            expected = OPS["linear"].golden(task, g, [rows])[0]
            d = work / f"{net}_{layer}_{pe}_{simd}"
            params = linear_params(task, g, pe, simd, d / "mem")
            case = {"rows": rows.tolist(), "expected": expected.tolist(), "gap": 0, "backpressure": 0, "seed": 1,
                    "out_signed": g.tensors[task.outputs[0]].dtype.signed}
            tests, failed = runner.run([RTL_DIR / "hlsgen_rq_tail.sv", RTL_DIR / "hlsgen_rq_rom.sv", RTL_DIR / "hlsgen_linear.sv"],
                                       "hlsgen_linear", "cocotb_linear",
                                       ROOT / "tests" / "rtl", d / "b", parameters=params,
                                       extra_env={"HLSGEN_CASE": json.dumps(case), "HLSGEN_RESULT": str(d / "r.json")})
            if failed:
                raise SystemExit(f"{net} layer {layer}: the RTL does not match the golden")
            measured = json.loads((d / "r.json").read_text())["cycles"]
            nest = dataclasses.replace(OPS["linear"].loops(task, g), vectors=ROWS, blocks=ROWS)
            modeled = evaluate(nest, Folding(1, pe, simd), dev).cycles
            err = (modeled - measured) / measured
            k, n = params["K"], params["N"]
            print(f"| {net} linear {layer} | {k} | {n} | {pe} | {simd} | {measured:,} | {modeled:,} | {err:+.1%} |",
                  flush=True)
            out.append({"net": net, "layer": layer, "K": k, "N": n, "pe": pe, "simd": simd, "measured": measured,
                        "modeled": modeled, "error": err})
    dst = ROOT / "build" / "bench" / "rtl_cycles.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(out, indent=2))
    print(f"\nwrote {dst}")


if __name__ == "__main__":
    main()
