"""Execute the float ONNX graph (the model as exported) and return every tensor.

QONNX graphs (Quant/Trunc nodes) run on qonnx's executor; standard graphs (QCDQ) on
onnxruntime with every intermediate exposed as an output.
"""
from __future__ import annotations

import warnings
from typing import Dict

import numpy as np
import onnx
from onnx import helper

from ..errors import HlsgenError


def _is_standard(model: onnx.ModelProto) -> bool:
    return all(n.domain in ("", "ai.onnx") for n in model.graph.node)


def run_float(model: onnx.ModelProto, feeds: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    # float inputs as float32; integer inputs (token ids) keep the integer type the graph declares
    declared = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    feeds = {k: (np.asarray(v, dtype=helper.tensor_dtype_to_np_dtype(declared[k]))
                 if declared.get(k, onnx.TensorProto.FLOAT) != onnx.TensorProto.FLOAT else np.asarray(v, dtype=np.float32))
             for k, v in feeds.items()}
    model = _with_input_shapes(model, feeds)
    if _is_standard(model):
        return _run_onnxruntime(model, feeds)
    return _run_qonnx(model, feeds)


def _with_input_shapes(model: onnx.ModelProto, feeds) -> onnx.ModelProto:
    """Fix dynamic input dimensions to the shapes actually fed (see `--shape`)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for inp in m.graph.input:
        if inp.name in feeds:
            dims = inp.type.tensor_type.shape.dim
            for d, size in zip(dims, feeds[inp.name].shape):
                d.Clear()
                d.dim_value = int(size)
    return m


def _run_onnxruntime(model: onnx.ModelProto, feeds):
    import onnxruntime as ort

    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name for i in g.initializer}
    # initializers listed as inputs are optional for onnxruntime; keep only real inputs in feeds
    existing = {o.name for o in g.output}
    for node in g.node:
        for o in node.output:
            if o and o not in existing and o not in inits:
                g.output.append(helper.make_empty_tensor_value_info(o))
                existing.add(o)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise HlsgenError(f"onnxruntime cannot run the float model ({str(exc).splitlines()[0]}); check the export") from None
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(names, feeds)
    values = dict(feeds)
    values.update({n: np.asarray(v) for n, v in zip(names, outs)})
    return values


def _run_qonnx(model: onnx.ModelProto, feeds):
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name for i in m.graph.initializer}
    real_inputs = [i for i in m.graph.input if i.name not in inits]
    del m.graph.input[:]
    m.graph.input.extend(real_inputs)
    # qonnx keeps every tensor in a float32 container: integer inputs (token ids) enter as
    # floats and a Cast restores their type for the ops that index with them
    int_inputs = [i for i in m.graph.input if i.type.tensor_type.elem_type != onnx.TensorProto.FLOAT]
    for inp in int_inputs:
        elem = inp.type.tensor_type.elem_type
        inner = inp.name + "__as_int"
        for node in m.graph.node:
            for k, name in enumerate(node.input):
                if name == inp.name:
                    node.input[k] = inner
        m.graph.node.insert(0, onnx.helper.make_node("Cast", [inp.name], [inner], to=elem))
        inp.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    feeds = {k: (np.asarray(v, dtype=np.float32) if any(k == i.name for i in int_inputs) else v) for k, v in feeds.items()}
    try:
        from qonnx.transformation.infer_shapes import InferShapes

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # qonnx warns about shapes it could not infer
            wrapper = ModelWrapper(m).transform(InferShapes())
            ctx = execute_onnx(wrapper, feeds, return_full_exec_context=True)
    except Exception as exc:
        raise HlsgenError(f"qonnx cannot execute the float model ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    return {k: np.asarray(v) for k, v in ctx.items() if v is not None}
