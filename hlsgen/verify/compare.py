"""Golden vs float model, tensor by tensor, in units of each tensor's LSB.

End to end: the golden runs on its own from the quantized input.
Layer by layer: every task reads the float model's own (quantized) inputs, so each layer's
figure measures that layer's arithmetic alone.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np
import onnx

from .. import golden
from ..ir import Graph
from .float_ref import run_float


def reference_integers(graph: Graph, ref: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """For every IR activation whose ONNX origin the float run produced: round(real/s) + z.

    Not clipped to the IR type: a float value outside it must show up as a difference."""
    out = {}
    for name, t in graph.tensors.items():
        if t.is_const or t.origin not in ref or t.quant is None:
            continue
        v = np.asarray(ref[t.origin], dtype=np.float64)
        if v.shape != tuple(t.shape):
            continue
        s = t.quant.broadcast(t.quant.scale, v.ndim)
        z = t.quant.broadcast(t.quant.zero_point, v.ndim)
        q = np.rint(v / s) + z
        out[name] = q.astype(np.int64)
    return out


def agreement(a: np.ndarray, b: np.ndarray) -> Dict:
    diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
    return {
        "elements": int(diff.size),
        "exact_fraction": float(np.mean(diff == 0)) if diff.size else 1.0,
        "max_abs_lsb": int(diff.max()) if diff.size else 0,
    }


def compare(graph: Graph, model: onnx.ModelProto, float_inputs: Dict[str, np.ndarray], int_inputs: Dict[str, np.ndarray]) -> Tuple[Dict, Dict[str, np.ndarray]]:
    """Returns (report, golden values of every tensor, end to end)."""
    onnx_feeds = {graph.input_quantizers[n]["onnx_input"]: float_inputs[n] for n in graph.inputs}
    ref = run_float(model, onnx_feeds)
    ref_q = reference_integers(graph, ref)
    e2e = golden.run(graph, int_inputs)
    lbl = golden.run(graph, int_inputs, override=lambda n: ref_q.get(n))

    producer = {o: task for task in graph.tasks for o in task.outputs}
    tensors: List[Dict] = []
    for name, t in graph.tensors.items():
        if t.is_const or name not in ref_q:
            continue
        task = producer.get(name)
        tensors.append({
            "name": name,
            "onnx_name": t.origin,
            "task": task.name if task else None,
            "op": task.op if task else "input",
            "dtype": str(t.dtype),
            "end_to_end": agreement(e2e[name], ref_q[name]),
            "layer_by_layer": agreement(lbl[name], ref_q[name]),
        })
    outputs = []
    for name in graph.outputs:
        if name not in ref_q:
            continue
        outputs.append({"name": name, **agreement(e2e[name], ref_q[name])})
    n_total = sum(o["elements"] for o in outputs)
    layer_rows = [r for r in tensors if r["op"] != "input"]
    report = {
        "exact_fraction": (sum(o["exact_fraction"] * o["elements"] for o in outputs) / n_total) if n_total else 1.0,
        "max_abs_lsb": max((o["max_abs_lsb"] for o in outputs), default=0),
        "outputs": outputs,
        "layer_by_layer": {
            "min_exact_fraction": min((r["layer_by_layer"]["exact_fraction"] for r in layer_rows), default=1.0),
            "max_abs_lsb": max((r["layer_by_layer"]["max_abs_lsb"] for r in layer_rows), default=0),
        },
        "tensors": tensors,
    }
    return report, e2e
