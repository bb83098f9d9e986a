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


TIE_LSB = 1e-3   # a float value this close to a rounding boundary (x.5 LSB) is a "tie"


def quantizer_inputs(model: onnx.ModelProto) -> Dict[str, str]:
    """ONNX name of a quantized tensor -> the float tensor its quantizer rounded
    (Quant's input, or QuantizeLinear's input behind [Clip ->] DequantizeLinear)."""
    producer = {o: n for n in model.graph.node for o in n.output}
    out = {}
    for n in model.graph.node:
        if n.op_type in ("Quant", "IntQuant"):
            out[n.output[0]] = n.input[0]
        elif n.op_type == "DequantizeLinear":
            q = producer.get(n.input[0])
            if q is not None and q.op_type == "Clip":
                q = producer.get(q.input[0])
            if q is not None and q.op_type == "QuantizeLinear":
                out[n.output[0]] = q.input[0]
    return out


def reference_integers(graph: Graph, ref: Dict[str, np.ndarray], ties: Dict[str, np.ndarray] = None,
                       pre_quant: Dict[str, str] = None) -> Dict[str, np.ndarray]:
    """For every IR activation whose ONNX origin the float run produced: round(real/s) + z.

    Not clipped to the IR type: a float value outside it must show up as a difference.
    With `ties`, also records per tensor where the value its quantizer rounded (the float
    tensor before the Quant / QuantizeLinear node, in units of the LSB) lies within TIE_LSB of
    x.5: there the float model's own float32 error decides which way it rounds."""
    out = {}
    for name, t in graph.tensors.items():
        if t.is_const or t.origin not in ref or t.quant is None:
            continue
        v = np.asarray(ref[t.origin], dtype=np.float64)
        if v.shape != tuple(t.shape):
            continue
        s = t.quant.broadcast(t.quant.scale, v.ndim)
        z = t.quant.broadcast(t.quant.zero_point, v.ndim)
        x = v / s
        q = np.rint(x) + z
        out[name] = q.astype(np.int64)
        if ties is not None:
            pre = (pre_quant or {}).get(t.origin)
            if pre in ref and np.shape(ref[pre]) == v.shape:
                x = np.asarray(ref[pre], dtype=np.float64) / s
            ties[name] = np.abs(np.abs(x - np.floor(x)) - 0.5) < TIE_LSB
    return out


def agreement(a: np.ndarray, b: np.ndarray, ties: np.ndarray = None) -> Dict:
    diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
    out = {
        "elements": int(diff.size),
        "exact_fraction": float(np.mean(diff == 0)) if diff.size else 1.0,
        "max_abs_lsb": int(diff.max()) if diff.size else 0,
    }
    if ties is not None:
        # differences of 1 LSB where the float value sits on a rounding boundary: the float
        # reference's own float32 error decides them; anything else is unexplained
        at_tie = (diff == 1) & ties
        out["differences_at_ties"] = int(at_tie.sum())
        out["differences_unexplained"] = int(((diff != 0) & ~at_tie).sum())
    return out


def compare(graph: Graph, model: onnx.ModelProto, float_inputs: Dict[str, np.ndarray], int_inputs: Dict[str, np.ndarray]) -> Tuple[Dict, Dict[str, np.ndarray]]:
    """Returns (report, golden values of every tensor, end to end)."""
    onnx_feeds = {graph.input_quantizers[n]["onnx_input"]: float_inputs[n] for n in graph.inputs}
    ref = run_float(model, onnx_feeds)
    ties: Dict[str, np.ndarray] = {}
    ref_q = reference_integers(graph, ref, ties, quantizer_inputs(model))
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
            "layer_by_layer": agreement(lbl[name], ref_q[name], ties[name]),
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
            "differences_at_ties": sum(r["layer_by_layer"]["differences_at_ties"] for r in layer_rows),
            "differences_unexplained": sum(r["layer_by_layer"]["differences_unexplained"] for r in layer_rows),
        },
        "tensors": tensors,
    }
    return report, e2e
