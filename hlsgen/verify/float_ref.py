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
    model = _with_input_shapes(model, feeds)            # a copy: the runners below change it
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


def _run_onnxruntime(m: onnx.ModelProto, feeds):
    """Runs m (run_float's own copy, which this changes)."""
    import onnxruntime as ort

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


def _run_qonnx(m: onnx.ModelProto, feeds):
    """Runs m (run_float's own copy, which this changes)."""
    from qonnx.core.onnx_exec import execute_onnx

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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # qonnx warns about shapes it could not infer
            wrapper = _infer_shapes(m)
            ctx = execute_onnx(wrapper, feeds, return_full_exec_context=True)
    except Exception as exc:
        raise HlsgenError(f"qonnx cannot execute the float model ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    return {k: np.asarray(v) for k, v in ctx.items() if v is not None}


# initializers above this many elements are weights: shape inference needs their shapes, not
# their values (those of Reshape, Slice, Resize and the quantizers' scales are far smaller)
LIFTED_ELEMENTS = 4096


def _infer_shapes(m: onnx.ModelProto):
    """m with the tensor shapes qonnx's InferShapes finds, as a ModelWrapper ready to execute.
    ONNX's shape inference serializes the whole model and qonnx's transform copies it, which on
    a model of large weights is most of a float run (docs/rtl.md, stop 58, measures it). So
    shapes are inferred on a copy of m without its weights (graph inputs of their shapes in their
    place) and its value_info goes into m. That is InferShapes's result wherever m's nodes are in
    order (as exporters write them); where they are not, the whole transform runs (it sorts)."""
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.transformation.infer_shapes import InferShapes

    g = m.graph
    if not _in_order(g):
        return ModelWrapper(m).transform(InferShapes())
    skel = onnx.ModelProto()
    skel.ir_version = m.ir_version
    skel.opset_import.extend(m.opset_import)
    skel.functions.extend(m.functions)
    sg = skel.graph
    sg.name = g.name
    sg.node.extend(g.node)
    sg.input.extend(g.input)
    sg.output.extend(g.output)
    sg.value_info.extend(g.value_info)
    for t in g.initializer:
        if int(np.prod(t.dims, dtype=np.int64)) > LIFTED_ELEMENTS:
            sg.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        else:
            sg.initializer.append(t)
    inferred = ModelWrapper(skel).transform(InferShapes()).model.graph
    named = {v.name for v in inferred.input} | {v.name for v in inferred.output}
    del g.value_info[:]
    g.value_info.extend(v for v in inferred.value_info if v.name not in named)
    return ModelWrapper(m)


def _in_order(g: onnx.GraphProto) -> bool:
    """Every node's inputs are graph inputs, initializers or outputs of nodes before it."""
    have = {"", *(i.name for i in g.input), *(t.name for t in g.initializer)}
    for node in g.node:
        if any(name not in have for name in node.input):
            return False
        have.update(node.output)
    return True
