"""ONNX (QONNX Quant nodes or QCDQ) -> integer IR.

The walk visits nodes in topological order and keeps, for every ONNX tensor, what it is in
the integer world (see values.py). Float-domain ops between a linear op and the next
quantizer (BatchNormalization, bias Add, Mul/Div by constants, Relu/Clip) fold into the
pending accumulator's affine map and clamp; the quantizer then turns it into one IR task
with a fixed-point requantization (docs/numerics.md). Constant subgraphs (shape arithmetic,
weight quantization in QCDQ) are evaluated with onnx's reference implementation.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import HlsgenError
from ..ir import Graph, IntType, Quant, Task, Tensor
from ..numerics import accumulator_range, make_requant
from ..ops import OPS
from .values import Const, Expanded, FloatIn, Func, IntIn, LNStage, Masked, Pending, QConst, QLinear, QVal, Quantizer, Reduction

MAX_BITS = 16
QUANT_DOMAINS = ("qonnx.custom_op.general", "finn.custom_op.general", "onnx.brevitas", "brevitas")

SUPPORTED_OPS = sorted(
    """Quant IntQuant BipolarQuant Trunc QuantizeLinear DequantizeLinear Conv Gemm MatMul Add Sub Mul
    Div BatchNormalization Relu Clip DeformConv ConvTranspose MaxPool AveragePool GlobalAveragePool ReduceMean Resize Upsample
    Concat Split Slice Reshape Flatten Transpose Squeeze Unsqueeze Identity Dropout Constant Shape
    Gather Cast Where Softmax LayerNormalization Erf Tanh Sigmoid Exp""".split()
)

ELEMENTWISE_FUNCS = ("Erf", "Tanh", "Sigmoid", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Pow", "Softplus",
                     "Gelu", "HardSigmoid", "HardSwish", "Elu", "Selu", "LeakyRelu", "Mish")
INTEGER_INPUT_TYPES = (onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.INT16, onnx.TensorProto.UINT16,
                       onnx.TensorProto.INT8, onnx.TensorProto.UINT8)
SOFTMAX_FRAC_BITS = 20     # exp table: round(exp(-j * s) * 2^20)
DIVIDE_FRAC_BITS = 16      # reciprocal of the output scale: round(2^16 / s_out)
LAYERNORM_ROOT_BITS = 8    # fraction bits of the integer square root
SUPPORTED_OPS = sorted(set(SUPPORTED_OPS) | set(ELEMENTWISE_FUNCS))


def _attrs(node) -> Dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _label(node) -> str:
    return f"node {node.name or '(unnamed)'!r} ({node.op_type})"


class Lowering:
    def __init__(self, model: onnx.ModelProto, input_shapes: Optional[Dict[str, tuple]] = None, consume: bool = False):
        self.model = model
        self.consume = consume     # free the model's weight bytes as they are read (load() owns the model)
        self.onnx_graph = model.graph
        self.input_shapes = dict(input_shapes or {})
        self.g = Graph(name=model.graph.name or "model")
        self.vals: Dict[str, object] = {}
        self.producer: Dict[str, onnx.NodeProto] = {}
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
        self._task_names: set = set()

    # ---------------------------------------------------------------- entry point
    def run(self) -> Graph:
        g = self.onnx_graph
        for init in g.initializer:
            self.vals[init.name] = Const(numpy_helper.to_array(init))
            if self.consume and init.HasField("raw_data"):
                # the array owns a copy of the bytes now: free the protobuf's (the model is
                # not used again after lowering; GPT-2 medium holds 1.4 GB of weights)
                init.ClearField("raw_data")
        for inp in g.input:
            if inp.name in self.vals:
                continue  # initializer also listed as an input (TorchScript export)
            if inp.type.tensor_type.elem_type in INTEGER_INPUT_TYPES:
                self.vals[inp.name] = IntIn(inp.name, self._input_shape(inp))
            else:
                self.vals[inp.name] = FloatIn(inp.name, self._input_shape(inp))
        for node in g.node:
            for o in node.output:
                self.producer[o] = node
        for node in self._toposort(g.node):
            self._visit(node)
        for out in g.output:
            if isinstance(self.vals.get(out.name), (Const, QConst)):
                # Brevitas exports a returned QuantTensor's scale/zero point/bit width as
                # extra outputs: metadata, not data the accelerator computes.
                self.g.constant_outputs.append(out.name)
                continue
            self.g.outputs.append(self._graph_output(out.name))
        if not self.g.outputs:
            raise HlsgenError("the model has no output computed from its inputs; nothing to compile")
        self.g.prune()
        self._fuse_channel_shuffle()
        self._collapse_reshapes()
        unused = [n for n in self.g.inputs if n not in self.g.tensors]
        self.g.inputs = [n for n in self.g.inputs if n not in unused]
        return self.g

    def _toposort(self, nodes):
        known = set(self.vals)
        pending = list(nodes)
        ordered = []
        while pending:
            progress = False
            rest = []
            for n in pending:
                if all((i == "" or i in known) for i in n.input):
                    ordered.append(n)
                    known.update(n.output)
                    progress = True
                else:
                    rest.append(n)
            if not progress:
                missing = sorted({i for n in rest for i in n.input if i and i not in known})
                raise HlsgenError(f"{_label(rest[0])}: input {missing[0]!r} is produced by no node, initializer or graph input; the graph is broken, re-export it")
            pending = rest
        return ordered

    def _input_shape(self, inp) -> tuple:
        if inp.name in self.input_shapes:
            return tuple(int(d) for d in self.input_shapes[inp.name])
        tt = inp.type.tensor_type
        if not tt.HasField("shape"):
            raise HlsgenError(f"graph input {inp.name!r} has no shape; give one with --shape {inp.name}=1,3,224,224")
        dims = []
        for i, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(d.dim_value)
            else:
                what = d.dim_param or "unknown"
                raise HlsgenError(
                    f"graph input {inp.name!r} has a dynamic dimension {what!r} (axis {i}); "
                    f"give a fixed shape with --shape {inp.name}=" + ",".join(str(x.dim_value) if x.dim_value > 0 else "1" for x in tt.shape.dim)
                )
        return tuple(dims)

    # ---------------------------------------------------------------- helpers
    def _task_name(self, base: str) -> str:
        name, i = base or "task", 1
        while name in self._task_names:
            i += 1
            name = f"{base}_{i}"
        self._task_names.add(name)
        return name

    def _const(self, node, idx: int, what: str) -> np.ndarray:
        if idx >= len(node.input) or node.input[idx] == "":
            return None
        v = self.vals[node.input[idx]]
        if isinstance(v, Const):
            return v.value
        if isinstance(v, QConst):
            return v.real()
        raise HlsgenError(f"{_label(node)}: {what} ({node.input[idx]!r}) is not a constant; hlsgen needs it fixed at compile time")

    def _qval(self, node, idx: int) -> QVal:
        v = self.vals[node.input[idx]]
        if isinstance(v, QVal):
            return v
        self._not_quantized(node, idx, v)

    def _not_quantized(self, node, idx, v):
        name = node.input[idx]
        if isinstance(v, FloatIn):
            raise HlsgenError(f"{_label(node)}: reads graph input {name!r} before any quantizer; add a QuantIdentity (input quantizer) at the model's input")
        if isinstance(v, Pending):
            raise HlsgenError(f"{_label(node)}: reads {name!r}, an unquantized result of {', '.join(v.source)}; add an activation quantizer (e.g. QuantIdentity/QuantReLU) between them")
        if isinstance(v, (Const, QConst)):
            raise HlsgenError(f"{_label(node)}: input {name!r} is a constant where hlsgen expects an activation")
        if isinstance(v, Expanded):
            raise HlsgenError(f"{_label(node)}: reads {name!r}, an activation broadcast to a larger shape by a constant; "
                              f"that is only supported as DeformConv offsets")
        raise HlsgenError(f"{_label(node)}: input {name!r} is not a quantized activation; add a quantizer before this node")

    def _add_tensor(self, name: str, shape, dtype: IntType, quant: Optional[Quant], data=None, origin=None) -> str:
        name = self.g.unique_name(name)
        self.g.add_tensor(Tensor(name, tuple(int(s) for s in shape), dtype, quant, data, origin))
        return name

    def _emit(self, node_names: List[str], op: str, inputs: List[str], attrs: Dict, out_specs) -> List[str]:
        """Add a task; out_specs: list of (onnx_name, dtype, quant). Shapes come from the op's rule."""
        shapes = OPS[op].output_shapes(attrs, [self.g.tensors[i].shape for i in inputs])
        outs = []
        for (oname, dtype, quant), shape in zip(out_specs, shapes):
            outs.append(self._add_tensor(oname, shape, dtype, quant, origin=oname))
        self.g.tasks.append(Task(self._task_name(node_names[0] if node_names else op), op, list(inputs), outs, attrs, list(node_names)))
        return outs

    def _same_grid(self, node, ir_input: str, onnx_out: str, op: str, attrs: Dict, extra_inputs=()) -> None:
        t = self.g.tensors[ir_input]
        (out,) = self._emit([node.name or node.op_type], op, [ir_input, *extra_inputs], attrs, [(onnx_out, t.dtype, t.quant)])
        self.vals[onnx_out] = QVal(out, self.g.tensors[out].shape)

    def _weight_tensor(self, onnx_name: str, qc: QConst) -> str:
        # stored in the narrowest NumPy integer type (GPT-2 medium: 355M weights); the ops
        # widen to int64 when they compute
        data = qc.data.astype(_compact_int(min(qc.dtype.min, int(qc.data.min(initial=0))),
                                           max(qc.dtype.max, int(qc.data.max(initial=0)))), copy=False)
        return self._add_tensor(onnx_name, qc.shape, qc.dtype, qc.quant, data=data, origin=onnx_name)

    def _per_channel(self, node, c: np.ndarray, shape, axis: int) -> np.ndarray:
        """A constant that broadcasts against `shape` -> scalar or vector along `axis`."""
        vec, why = _channel_vector(c, shape, axis)
        if vec is None:
            raise HlsgenError(f"{_label(node)}: {why}")
        return vec

    # ---------------------------------------------------------------- the walk
    def _visit(self, node) -> None:
        op = node.op_type
        if node.domain in QUANT_DOMAINS or op in ("Quant", "IntQuant", "BipolarQuant", "Trunc"):
            if op in ("Quant", "IntQuant"):
                return self._quant(node)
            if op == "BipolarQuant":
                return self._bipolar(node)
            if op == "Trunc":
                return self._trunc(node)
            raise HlsgenError(f"{_label(node)}: custom op {node.domain}.{op} is not supported; supported ops: {', '.join(SUPPORTED_OPS)}")
        if node.domain not in ("", "ai.onnx"):
            raise HlsgenError(f"{_label(node)}: op domain {node.domain!r} is not supported; supported ops: {', '.join(SUPPORTED_OPS)}")
        if op == "Constant":
            a = _attrs(node)
            if "value" in a:
                self.vals[node.output[0]] = Const(numpy_helper.to_array(a["value"]))
            else:
                self._fold(node)
            return
        if op == "QuantizeLinear":
            return self._quantize_linear(node)
        if op == "DequantizeLinear":
            return self._dequantize_linear(node)
        if op == "Clip" and isinstance(self.vals.get(node.input[0]), QLinear):
            return self._clip_qlinear(node)
        if op == "Shape":
            v = self.vals[node.input[0]]
            a = _attrs(node)
            shp = np.array(v.shape, dtype=np.int64)[a.get("start", 0) : a.get("end", None)]
            self.vals[node.output[0]] = Const(shp)
            return
        ins = [self.vals[i] for i in node.input if i]
        if ins and all(isinstance(v, Const) for v in ins):
            return self._fold(node)
        handler = getattr(self, "_op_" + op, None)
        if handler is None:
            raise HlsgenError(f"{_label(node)}: op {op} is not supported; supported ops: {', '.join(SUPPORTED_OPS)}")
        handler(node)

    def _fold(self, node) -> None:
        """Evaluate a node whose inputs are all constants with onnx's reference evaluator."""
        from onnx.reference import ReferenceEvaluator

        feeds = {}
        inputs = []
        for i, name in enumerate(node.input):
            if name == "":
                inputs.append("")
                continue
            v = self.vals[name]
            arr = v.value if isinstance(v, Const) else v.real().astype(np.float32)
            key = f"in{i}"
            feeds[key] = arr
            inputs.append(key)
        outs = [f"out{i}" for i in range(len(node.output))]
        n2 = helper.make_node(node.op_type, inputs, outs, domain=node.domain, **_attrs(node))
        gr = helper.make_graph(
            [n2],
            "fold",
            [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()],
            [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outs],
        )
        m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", self.opset)])
        try:
            res = ReferenceEvaluator(m).run(None, feeds)
        except Exception as exc:
            raise HlsgenError(f"{_label(node)}: cannot fold this constant subgraph ({type(exc).__name__}: {exc})") from None
        for o, r in zip(node.output, res):
            self.vals[o] = Const(np.asarray(r))

    # ---------------------------------------------------------------- quantizers
    def _quant(self, node) -> None:
        a = _attrs(node)
        scale = self._const(node, 1, "scale")
        zp = self._const(node, 2, "zero point")
        bits = self._const(node, 3, "bit width")
        if np.asarray(bits).size != 1 or float(bits) != int(float(bits)):
            raise HlsgenError(f"{_label(node)}: bit width must be one integer, got {bits}")
        bits = int(float(bits))
        signed = bool(a.get("signed", 1))
        narrow = bool(a.get("narrow", 0))
        mode = a.get("rounding_mode", b"ROUND")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        rounding = {"ROUND": "half_even", "FLOOR": "floor"}.get(mode.upper())
        if rounding is None:
            raise HlsgenError(f"{_label(node)}: rounding_mode {mode} is not supported; use ROUND or FLOOR")
        lo = (-(1 << (bits - 1)) + int(narrow)) if signed else 0
        hi = ((1 << (bits - 1)) - 1) if signed else (1 << bits) - 1 - int(narrow)
        qz = self._make_quantizer(node, scale, zp, IntType(bits, signed), lo, hi, node.input[0], rounding)
        self._apply_quantizer(node, self.vals[node.input[0]], qz, node.output[0])

    def _make_quantizer(self, node, scale, zp, dtype, lo, hi, src_name, rounding="half_even") -> Quantizer:
        scale = np.asarray(scale, dtype=np.float64)
        zp = np.asarray(zp if zp is not None else 0, dtype=np.float64)
        if np.any(~np.isfinite(scale)) or np.any(scale <= 0):
            raise HlsgenError(f"{_label(node)}: scale must be positive and finite")
        if np.any(zp != np.round(zp)):
            raise HlsgenError(f"{_label(node)}: zero point must be an integer")
        axis = None
        if scale.size > 1:
            shape = self.vals[src_name].shape
            if node.op_type in ("QuantizeLinear", "DequantizeLinear"):
                # ONNX: a 1-D scale applies along the `axis` attribute (default 1)
                if scale.ndim != 1:
                    raise HlsgenError(f"{_label(node)}: scale of shape {scale.shape} must be a scalar or 1-D")
                axis = _attrs(node).get("axis", 1) % len(shape)
            else:
                # QONNX Quant: the scale broadcasts against the input, NumPy style
                nonunit = [i for i, d in enumerate(scale.shape) if d != 1]
                if len(nonunit) != 1 or scale.ndim > len(shape):
                    raise HlsgenError(f"{_label(node)}: scale of shape {scale.shape} is neither per tensor nor per channel")
                axis = nonunit[0] + len(shape) - scale.ndim
            if shape[axis] != scale.size:
                raise HlsgenError(f"{_label(node)}: {scale.size} scales for axis {axis} of size {shape[axis]}")
            scale = scale.reshape(-1)
            zp = np.broadcast_to(zp.reshape(-1), scale.shape)
        else:
            if zp.size != 1:
                raise HlsgenError(f"{_label(node)}: zero point must match the scale's shape")
            scale = scale.reshape(())
            zp = zp.reshape(())
        return Quantizer(scale, np.asarray(zp).astype(np.int64), axis, lo, hi, dtype, node.name or node.op_type, rounding)

    def _apply_quantizer(self, node, src, qz: Quantizer, out_name: str) -> None:
        if isinstance(src, (Const, QConst)):
            x = np.asarray(src.value, dtype=np.float32) if isinstance(src, Const) else src.real()
            q = self._quantize_const(x, qz)
            self.vals[out_name] = QConst(q, Quant(qz.scale, qz.zero_point, qz.axis), qz.dtype)
            return
        if qz.dtype.bits > MAX_BITS:
            raise HlsgenError(f"{_label(node)}: {qz.dtype.bits}-bit activations are not supported (at most {MAX_BITS}); lower the quantizer's bit_width")
        if qz.scale.ndim != 0:
            raise HlsgenError(f"{_label(node)}: per-channel activation quantization is not supported; use a per-tensor activation quantizer")
        quant = Quant(qz.scale, qz.zero_point)
        if isinstance(src, FloatIn):
            name = self._add_tensor(src.name, src.shape, qz.dtype, quant, origin=out_name)
            self.g.inputs.append(name)
            self.g.input_quantizers[name] = {"onnx_input": src.name, "lo": qz.lo, "hi": qz.hi, "node": qz.node}
            self.vals[out_name] = QVal(name, src.shape)
            return
        if isinstance(src, Reduction):
            return self._materialize_reduction(node, src, qz, out_name)
        if isinstance(src, Func):
            return self._materialize_func(node, src, qz, out_name)
        if isinstance(src, QVal):
            t = self.g.tensors[src.ir_name]
            if t.quant is not None and t.quant.same_as(quant) and t.dtype.min >= qz.lo and t.dtype.max <= qz.hi:
                self.vals[out_name] = src  # the quantizer is the identity on this grid
                return
            src = self._pending_from_qval(src, node)
        if isinstance(src, Pending):
            self._materialize(src, qz, out_name, node)
            return
        self._not_quantized(node, 0, src)

    @staticmethod
    def _channel_axis(shape):
        axis = 1 if len(shape) >= 3 else len(shape) - 1
        return axis, (shape[axis] if shape else 1)

    def _quantize_const(self, x: np.ndarray, qz: Quantizer) -> np.ndarray:
        scale, zp = qz.scale, qz.zero_point
        if qz.axis is not None:
            shp = [1] * x.ndim
            shp[qz.axis] = scale.size
            scale, zp = scale.reshape(shp), zp.reshape(shp)
        # Same arithmetic as ONNX / QONNX: float32 division, round half to even. In place and
        # into the narrowest integer type: GPT-2 medium has 355M weights.
        q = np.asarray(x, dtype=np.float32) / np.asarray(scale, dtype=np.float32)
        (np.rint if qz.rounding == "half_even" else np.floor)(q, out=q)
        if np.any(zp != 0):
            q += np.asarray(zp, dtype=np.float32)
        np.clip(q, qz.lo, qz.hi, out=q)
        return q.astype(_compact_int(qz.lo, qz.hi))

    def _materialize(self, p: Pending, qz: Quantizer, out_name: str, node) -> None:
        rq = make_requant(p.term_scales, p.term_ranges, p.bias, float(qz.scale), int(qz.zero_point), qz.lo, qz.hi,
                          p.lo, p.hi, p.channels, p.axis, qz.rounding)
        attrs = dict(p.attrs)
        attrs["requant"] = rq
        (out,) = self._emit(p.source + [node.name or node.op_type], p.op, p.inputs, attrs, [(out_name, qz.dtype, Quant(qz.scale, qz.zero_point))])
        self.vals[out_name] = QVal(out, self.g.tensors[out].shape)

    def _bipolar(self, node) -> None:
        src = self.vals[node.input[0]]
        if not isinstance(src, (Const, QConst)):
            raise HlsgenError(f"{_label(node)}: bipolar (1-bit) activations are not supported; use a quantizer of 2 or more bits")
        scale = self._const(node, 1, "scale")
        x = src.value if isinstance(src, Const) else src.real()
        q = np.where(x >= 0, 1, -1).astype(np.int64)
        qz = self._make_quantizer(node, scale, 0, IntType(2, True), -1, 1, node.input[0])
        self.vals[node.output[0]] = QConst(q, Quant(qz.scale, 0, qz.axis), IntType(2, True))

    def _trunc(self, node) -> None:
        """QONNX Trunc (v2: x, scale, zp, in_bits, out_scale, out_bits; v1: x, scale, zp, in_bits, out_bits).

        y = round(x/scale + zp) on the input grid, then divided by 2^t (t = log2(out_scale/scale))
        with the node's rounding mode and clamped: two requantizations, as the float op does.
        """
        a = _attrs(node)
        scale = float(np.asarray(self._const(node, 1, "scale")).reshape(-1)[0])
        zp = int(np.asarray(self._const(node, 2, "zero point")).reshape(-1)[0])
        in_bits = int(np.asarray(self._const(node, 3, "input bit width")).reshape(-1)[0])
        if len(node.input) >= 6:
            out_scale = float(np.asarray(self._const(node, 4, "output scale")).reshape(-1)[0])
            out_bits = int(np.asarray(self._const(node, 5, "output bit width")).reshape(-1)[0])
            t = int(np.round(np.log2(out_scale / scale)))
        else:
            out_bits = int(np.asarray(self._const(node, 4, "output bit width")).reshape(-1)[0])
            t = in_bits - out_bits
            out_scale = scale * 2.0**t
        signed = bool(a.get("signed", 1))
        narrow = bool(a.get("narrow", 0))
        mode = a.get("rounding_mode", b"FLOOR")
        mode = (mode.decode() if isinstance(mode, bytes) else mode).upper()
        rounding = {"ROUND": "half_even", "FLOOR": "floor"}.get(mode)
        if rounding is None:
            raise HlsgenError(f"{_label(node)}: rounding_mode {mode} is not supported; use ROUND or FLOOR")
        if out_bits > MAX_BITS:
            raise HlsgenError(f"{_label(node)}: {out_bits}-bit output is not supported (at most {MAX_BITS})")
        if t > 0 and zp % (1 << t):
            raise HlsgenError(f"{_label(node)}: zero point {zp} is not divisible by the truncation 2^{t}")
        wide = IntType(in_bits + 2, True)
        step1 = Quantizer(np.asarray(scale), np.asarray(zp), None, wide.min, wide.max, wide, node.name or "Trunc")
        mid_name = (node.output[0]) + ".untruncated"
        self._apply_quantizer(node, self.vals[node.input[0]], step1, mid_name)
        self.g.tensors[self.vals[mid_name].ir_name].origin = None  # internal: no ONNX tensor holds it
        lo = (-(1 << (out_bits - 1)) + int(narrow)) if signed else 0
        hi = ((1 << (out_bits - 1)) - 1) if signed else (1 << out_bits) - 1
        step2 = Quantizer(np.asarray(out_scale), np.asarray(zp >> t if t > 0 else zp), None, lo, hi, IntType(out_bits, signed), node.name or "Trunc", rounding)
        self._apply_quantizer(node, self.vals[mid_name], step2, node.output[0])

    def _quantize_linear(self, node) -> None:
        scale = self._const(node, 1, "scale")
        zp_v = self.vals.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        zp = self._const(node, 2, "zero point") if zp_v is not None else np.zeros((), np.uint8)
        zdtype = np.asarray(zp).dtype
        if zdtype.kind not in "iu":
            zdtype = np.dtype(np.uint8)
        info = np.iinfo(zdtype)
        dtype = IntType(info.bits, info.min < 0)
        src = self.vals[node.input[0]]
        qz = self._make_quantizer(node, scale, np.asarray(zp).astype(np.int64), dtype, int(info.min), int(info.max), node.input[0])
        if isinstance(src, (Const, QConst)):
            x = np.asarray(src.value, dtype=np.float32) if isinstance(src, Const) else src.real()
            self.vals[node.output[0]] = Const(self._quantize_const(x, qz).astype(zdtype))
            return
        self.vals[node.output[0]] = QLinear(src, qz, tuple(getattr(src, "shape", ())))

    def _clip_qlinear(self, node) -> None:
        ql = self.vals[node.input[0]]
        lo = self._const(node, 1, "Clip min")
        hi = self._const(node, 2, "Clip max")
        qz = ql.quantizer
        lo = qz.lo if lo is None else max(qz.lo, int(np.asarray(lo).reshape(-1)[0]))
        hi = qz.hi if hi is None else min(qz.hi, int(np.asarray(hi).reshape(-1)[0]))
        self.vals[node.output[0]] = QLinear(ql.source, Quantizer(qz.scale, qz.zero_point, qz.axis, lo, hi, _bits_for(lo, hi, qz.dtype), qz.node, qz.rounding), ql.shape)

    def _dequantize_linear(self, node) -> None:
        src = self.vals[node.input[0]]
        scale = self._const(node, 1, "scale")
        zp = self._const(node, 2, "zero point") if len(node.input) > 2 and node.input[2] else np.zeros(())
        if isinstance(src, QLinear):
            qz = src.quantizer
            if not (np.allclose(np.asarray(scale, np.float64).reshape(-1), qz.scale.reshape(-1))):
                raise HlsgenError(f"{_label(node)}: dequantizes with a scale different from its QuantizeLinear; re-export with matching scales")
            self._apply_quantizer(node, src.source, qz, node.output[0])
            return
        if isinstance(src, Const) and src.value.dtype.kind in "iu":
            data = src.value.astype(np.int64)
            lo, hi = _declared_range(self.producer, self.vals, node.input[0], src.value.dtype)
            dtype = _bits_for(lo, hi, IntType(np.iinfo(src.value.dtype).bits, np.iinfo(src.value.dtype).min < 0))
            qz = self._make_quantizer(node, scale, np.asarray(zp).astype(np.int64), dtype, lo, hi, node.input[0])
            self.vals[node.output[0]] = QConst(data, Quant(qz.scale, qz.zero_point, qz.axis), dtype)
            return
        raise HlsgenError(f"{_label(node)}: DequantizeLinear without a matching QuantizeLinear or integer constant is not supported")

    # ---------------------------------------------------------------- linear ops
    def _linear_pending(self, node, x: QVal, w_name: str, qc: QConst, op: str, attrs: Dict, length: int, out_shape, axis: int, bias) -> None:
        xt = self.g.tensors[x.ir_name]
        if qc.dtype.bits > MAX_BITS:
            raise HlsgenError(f"{_label(node)}: {qc.dtype.bits}-bit weights are not supported (at most {MAX_BITS}); lower weight_bit_width")
        if np.any(qc.quant.zero_point != 0):
            raise HlsgenError(f"{_label(node)}: weights with a nonzero zero point are not supported; use a symmetric weight quantizer")
        channels = out_shape[axis]
        wt = self._weight_tensor(w_name, qc)
        zx = int(xt.quant.zero_point)
        rng = accumulator_range((xt.dtype.min - zx, xt.dtype.max - zx), qc.dtype, length)
        sw = qc.quant.scale if qc.quant.scale.ndim == 0 else qc.quant.scale.reshape(-1)
        b = np.zeros(()) if bias is None else np.asarray(bias, dtype=np.float64).reshape(-1)
        if b.size not in (1, channels):
            raise HlsgenError(f"{_label(node)}: bias has {b.size} elements for {channels} output channels")
        self.vals[node.output[0]] = Pending(op, [x.ir_name, wt], attrs, [np.asarray(float(xt.quant.scale) * sw)], [rng],
                                            b, np.array(-np.inf), np.array(np.inf), tuple(out_shape), axis, channels,
                                            [node.name or node.op_type])

    def _weight(self, node, idx: int) -> QConst:
        v = self.vals[node.input[idx]]
        if isinstance(v, QConst):
            return v
        if isinstance(v, Const):
            raise HlsgenError(f"{_label(node)}: weight {node.input[idx]!r} is not quantized; use a quantized layer (QuantConv2d/QuantLinear) or add a weight quantizer")
        raise HlsgenError(f"{_label(node)}: weight {node.input[idx]!r} is not a constant; only constant weights are supported")

    def _op_Conv(self, node) -> None:
        a = _attrs(node)
        x = self._qval(node, 0)
        qc = self._weight(node, 1)
        if len(x.shape) != 4:
            raise HlsgenError(f"{_label(node)}: only 2-D convolutions (NCHW input) are supported, input has shape {x.shape}")
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise HlsgenError(f"{_label(node)}: auto_pad is not supported; export with explicit pads")
        if qc.quant.axis not in (None, 0):
            raise HlsgenError(f"{_label(node)}: weights must be quantized per output channel (axis 0) or per tensor")
        o, cg, kh, kw = qc.shape
        attrs = {"strides": tuple(a.get("strides", (1, 1))), "pads": tuple(a.get("pads", (0, 0, 0, 0))),
                 "dilations": tuple(a.get("dilations", (1, 1))), "groups": int(a.get("group", 1))}
        if x.shape[1] != cg * attrs["groups"]:
            raise HlsgenError(f"{_label(node)}: input has {x.shape[1]} channels, weights expect {cg * attrs['groups']}")
        bias = self._const(node, 2, "bias") if len(node.input) > 2 and node.input[2] else None
        (out_shape,) = OPS["conv"].output_shapes(attrs, [x.shape, qc.shape])
        self._linear_pending(node, x, node.input[1], qc, "conv", attrs, cg * kh * kw, out_shape, 1, bias)

    def _op_ConvTranspose(self, node) -> None:
        a = _attrs(node)
        x = self._qval(node, 0)
        qc = self._weight(node, 1)
        if len(x.shape) != 4:
            raise HlsgenError(f"{_label(node)}: only 2-D transposed convolutions (NCHW input) are supported")
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET") or "output_shape" in a:
            raise HlsgenError(f"{_label(node)}: auto_pad / output_shape are not supported; export with explicit pads")
        ci, og, kh, kw = qc.shape
        groups = int(a.get("group", 1))
        if qc.quant.axis not in (None, 1) or (qc.quant.axis == 1 and groups != 1):
            raise HlsgenError(f"{_label(node)}: ConvTranspose weights must be quantized per output channel (axis 1) "
                              f"or per tensor")
        attrs = {"strides": tuple(a.get("strides", (1, 1))), "pads": tuple(a.get("pads", (0, 0, 0, 0))),
                 "dilations": tuple(a.get("dilations", (1, 1))), "groups": groups,
                 "output_padding": tuple(a.get("output_padding", (0, 0)))}
        if x.shape[1] != ci:
            raise HlsgenError(f"{_label(node)}: input has {x.shape[1]} channels, weights expect {ci}")
        bias = self._const(node, 2, "bias") if len(node.input) > 2 and node.input[2] else None
        (out_shape,) = OPS["conv_transpose"].output_shapes(attrs, [x.shape, qc.shape])
        # per-output-channel weight scales sit on axis 1 of the weight: present them as axis 0
        wq = QConst(qc.data, Quant(qc.quant.scale, qc.quant.zero_point, 0 if qc.quant.axis == 1 else None), qc.dtype)
        self._linear_pending(node, x, node.input[1], wq, "conv_transpose", attrs, (ci // groups) * kh * kw, out_shape, 1, bias)
        # the IR weight keeps its ONNX layout (C_in, C_out/g, KH, KW) and its real axis
        wt = self.g.tensors[self.vals[node.output[0]].inputs[1]]
        wt.quant = qc.quant

    def _deform_bilinear(self, node, a, x: QVal, qc: QConst) -> None:
        """General DeformConv: offsets (and an optional mask) are quantized activations. The
        offsets must be fixed point, i.e. quantized with a power-of-two scale 2^-f."""
        off = self._qval(node, 2)
        ot = self.g.tensors[off.ir_name]
        f = -np.log2(float(ot.quant.scale))
        if abs(f - round(f)) > 1e-9 or not (0 <= round(f) <= 12):
            raise HlsgenError(f"{_label(node)}: offsets are quantized with scale {float(ot.quant.scale):g}; the general "
                              f"DeformConv needs fixed-point offsets (scale 2^-f, 0 <= f <= 12)")
        f = int(round(f))
        o, cg, kh, kw = qc.shape
        attrs = {"strides": tuple(a.get("strides", (1, 1))), "pads": tuple(a.get("pads", (0, 0, 0, 0))),
                 "dilations": tuple(a.get("dilations", (1, 1))), "groups": int(a.get("group", 1)),
                 "offset_group": int(a.get("offset_group", 1)), "frac": f}
        (out_shape,) = OPS["deform_conv_bilinear"].output_shapes(attrs, [x.shape, qc.shape])
        want = (out_shape[0], attrs["offset_group"] * kh * kw * 2, out_shape[2], out_shape[3])
        if tuple(ot.shape) != want:
            raise HlsgenError(f"{_label(node)}: offsets have shape {ot.shape}, DeformConv needs {want}")
        inputs = [off.ir_name]
        mask_scale, mask_range = 1.0, (1, 1)
        if len(node.input) > 4 and node.input[4]:
            m = self._qval(node, 4)
            mt = self.g.tensors[m.ir_name]
            if tuple(mt.shape) != (want[0], want[1] // 2, want[2], want[3]):
                raise HlsgenError(f"{_label(node)}: mask has shape {mt.shape}, DeformConv needs {(want[0], want[1] // 2) + want[2:]}")
            zm = int(mt.quant.zero_point)
            mask_scale, mask_range = float(mt.quant.scale), (mt.dtype.min - zm, mt.dtype.max - zm)
            inputs.append(m.ir_name)
        bias = self._const(node, 3, "bias") if len(node.input) > 3 and node.input[3] else None
        xt = self.g.tensors[x.ir_name]
        zx = int(xt.quant.zero_point)
        # |sample| <= max|x - zx| * 2^(2f) (corner weights sum to 2^(2f)), times the mask
        xmax = max(abs(xt.dtype.min - zx), abs(xt.dtype.max - zx)) << (2 * f)
        mmax = max(abs(mask_range[0]), abs(mask_range[1]))
        lanes = cg * kh * kw
        wmax = max(abs(qc.dtype.min), abs(qc.dtype.max))
        bound = lanes * xmax * mmax * wmax
        self._linear_pending(node, x, node.input[1], qc, "deform_conv_bilinear", attrs, lanes, out_shape, 1, bias)
        p = self.vals[node.output[0]]
        p.inputs += inputs
        p.term_scales = [s * mask_scale * 2.0 ** (-2 * f) for s in p.term_scales]
        p.term_ranges = [(-bound, bound)]

    def _op_DeformConv(self, node) -> None:
        """ONNX DeformConv whose offsets are an integer affine function of one integer tensor
        (CoDeNet: a clamped, rounded 1x1-conv output s, offsets (k-1)*(s-1) per tap)."""
        a = _attrs(node)
        x = self._qval(node, 0)
        qc = self._weight(node, 1)
        off = self.vals[node.input[2]]
        if len(node.input) > 4 and node.input[4] and not isinstance(off, QVal):
            raise HlsgenError(f"{_label(node)}: a mask needs quantized offsets (the general form)")
        if qc.quant.axis not in (None, 0):
            raise HlsgenError(f"{_label(node)}: weights must be quantized per output channel (axis 0) or per tensor")
        o, cg, kh, kw = qc.shape
        if isinstance(off, QVal):
            return self._deform_bilinear(node, a, x, qc)
        if not isinstance(off, Expanded):
            raise HlsgenError(f"{_label(node)}: offsets must be a quantized tensor (general form) or an integer affine "
                              f"function of one (CoDeNet's form)")
        if int(a.get("offset_group", 1)) != 1:
            raise HlsgenError(f"{_label(node)}: CoDeNet-form offsets with offset_group {a.get('offset_group')} are not supported (only 1)")
        st = self.g.tensors[off.src.ir_name]
        if len(st.shape) != 4 or st.shape[1] != 1:
            raise HlsgenError(f"{_label(node)}: the offset source must have one channel, it has shape {st.shape}")
        nt = kh * kw * 2
        ca = np.broadcast_to(off.a, (1, nt, 1, 1)) if np.ndim(off.a) else np.full((1, nt, 1, 1), float(off.a))
        cb = np.broadcast_to(off.b, (1, nt, 1, 1)) if np.ndim(off.b) else np.full((1, nt, 1, 1), float(off.b))
        if tuple(off.shape[1:2]) != (nt,) or np.asarray(off.a).ndim > 4 or \
                any(d != 1 for arr in (off.a, off.b) for d in np.shape(arr)[2:]):
            raise HlsgenError(f"{_label(node)}: offset coefficients must be constant per offset channel ({nt} channels)")
        scale = float(st.quant.scale)
        alpha_r = ca.reshape(-1) * scale
        beta_r = cb.reshape(-1)
        alpha, beta = np.round(alpha_r), np.round(beta_r)
        if not (np.allclose(alpha_r, alpha, atol=1e-6) and np.allclose(beta_r, beta, atol=1e-6)):
            raise HlsgenError(f"{_label(node)}: DeformConv offsets are fractional (bilinear sampling); only integer offsets "
                              f"(offset quantizer of scale 1 with integer coefficients) are supported yet")
        attrs = {"strides": tuple(a.get("strides", (1, 1))), "pads": tuple(a.get("pads", (0, 0, 0, 0))),
                 "dilations": tuple(a.get("dilations", (1, 1))), "groups": int(a.get("group", 1)),
                 "alpha": [int(v) for v in alpha], "beta": [int(v) for v in beta]}
        if x.shape[1] != cg * attrs["groups"]:
            raise HlsgenError(f"{_label(node)}: input has {x.shape[1]} channels, weights expect {cg * attrs['groups']}")
        (out_shape,) = OPS["deform_conv"].output_shapes(attrs, [x.shape, qc.shape])
        if tuple(st.shape) != (out_shape[0], 1, out_shape[2], out_shape[3]):
            raise HlsgenError(f"{_label(node)}: offset source shape {st.shape} does not match the output {out_shape}")
        bias = self._const(node, 3, "bias") if len(node.input) > 3 and node.input[3] else None
        self._linear_pending(node, x, node.input[1], qc, "deform_conv", attrs, cg * kh * kw, out_shape, 1, bias)
        self.vals[node.output[0]].inputs.append(off.src.ir_name)

    def _op_Gemm(self, node) -> None:
        a = _attrs(node)
        if a.get("transA", 0):
            raise HlsgenError(f"{_label(node)}: transA=1 is not supported")
        x = self._qval(node, 0)
        qc = self._weight(node, 1)
        if not a.get("transB", 0):
            qc = _transpose_qconst(qc, (1, 0))
        bias = self._const(node, 2, "bias") if len(node.input) > 2 and node.input[2] else None
        alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
        self._linear(node, x, qc, bias)
        p = self.vals[node.output[0]]
        p.term_scales = [s * alpha for s in p.term_scales]
        p.bias = p.bias * beta

    def _op_MatMul(self, node) -> None:
        x = self._qval(node, 0)
        v = self.vals[node.input[1]]
        if isinstance(v, QVal):
            return self._matmul_activations(node)
        if not isinstance(v, (QConst, Const)):
            raise HlsgenError(f"{_label(node)}: MatMul operand {node.input[1]!r} is neither a quantized activation nor constant weights")
        qc = self._weight(node, 1)
        if qc.data.ndim != 2:
            raise HlsgenError(f"{_label(node)}: MatMul weights must be 2-D")
        self._linear(node, x, _transpose_qconst(qc, (1, 0)), None)

    def _linear(self, node, x: QVal, qc: QConst, bias) -> None:
        if qc.quant.axis not in (None, 0):
            raise HlsgenError(f"{_label(node)}: weights must be quantized per output feature or per tensor")
        n_out, k = qc.shape
        if x.shape[-1] != k:
            raise HlsgenError(f"{_label(node)}: input has {x.shape[-1]} features, weights expect {k}")
        out_shape = tuple(x.shape[:-1]) + (n_out,)
        self._linear_pending(node, x, node.input[1], qc, "linear", {}, k, out_shape, len(out_shape) - 1, bias)

    # ---------------------------------------------------------------- float-domain folding
    def _as_pending(self, node, idx: int) -> Pending:
        v = self.vals[node.input[idx]]
        if isinstance(v, Pending):
            return _copy_pending(v, node)
        if isinstance(v, QVal):
            return self._pending_from_qval(v, node)
        self._not_quantized(node, idx, v)

    def _pending_from_qval(self, v: QVal, node) -> Pending:
        """An integer tensor seen as an accumulator (q - z) of scale s: for requantization."""
        t = self.g.tensors[v.ir_name]
        axis, channels = self._channel_axis(t.shape)
        zin = int(t.quant.zero_point)
        return Pending("requant", [v.ir_name], {}, [np.asarray(t.quant.scale)], [(t.dtype.min - zin, t.dtype.max - zin)],
                       np.zeros(()), np.array(-np.inf), np.array(np.inf), t.shape, axis, channels, [node.name or node.op_type])

    def _op_BatchNormalization(self, node) -> None:
        p = self._as_pending(node, 0)
        if p.axis != 1:
            raise HlsgenError(f"{_label(node)}: BatchNormalization must act on axis 1 (channels)")
        gamma, beta, mean, var = (np.asarray(self._const(node, i, n), np.float64) for i, n in ((1, "scale"), (2, "B"), (3, "mean"), (4, "var")))
        eps = float(_attrs(node).get("epsilon", 1e-5))
        a = gamma / np.sqrt(var + eps)
        self.vals[node.output[0]] = p.affine(a, beta - mean * a)

    def _binary_const(self, node):
        """(index of the activation input, constant) for Add/Sub/Mul/Div with one constant."""
        v0, v1 = (self.vals[i] for i in node.input[:2])
        if isinstance(v1, (Const, QConst)):
            return 0, self._const(node, 1, "operand")
        if isinstance(v0, (Const, QConst)):
            return 1, self._const(node, 0, "operand")
        return None, None

    def _expanding(self, node, idx, c) -> bool:
        """Does this Add/Sub/Mul by a constant broadcast the activation to a larger shape?"""
        v = self.vals[node.input[idx]]
        if isinstance(v, Expanded):
            return True
        if not isinstance(v, QVal):
            return False
        try:
            shape = np.broadcast_shapes(tuple(v.shape), np.asarray(c).shape)
        except ValueError:
            return False
        return tuple(shape) != tuple(v.shape)

    def _expand(self, node, idx, c, kind: str) -> None:
        v = self.vals[node.input[idx]]
        c = np.asarray(c, dtype=np.float64)
        if isinstance(v, QVal):
            v = Expanded(v, np.ones(()), np.zeros(()), tuple(v.shape))
        if kind == "add":
            a, b = v.a, v.b + c
        elif kind == "sub":
            a, b = (v.a, v.b - c) if idx == 0 else (-v.a, c - v.b)
        else:
            a, b = v.a * c, v.b * c
        shape = tuple(np.broadcast_shapes(v.shape, c.shape))
        self.vals[node.output[0]] = Expanded(v.src, a, b, shape)

    def _op_Add(self, node) -> None:
        if self._layernorm_step(node):
            return
        if self._func_source(node) is not None:
            return self._extend_func(node)
        idx, c = self._binary_const(node)
        if idx is None:
            return self._add_activations(node)
        cv = self.vals[node.input[1 - idx]]
        if isinstance(cv, QConst) and cv.data.size > 1 and isinstance(self.vals[node.input[idx]], QVal) \
                and not self._is_per_channel(cv.real(), self.vals[node.input[idx]].shape):
            return self._add_activations(node)      # e.g. position embeddings: a quantized constant tensor
        if self._expanding(node, idx, c):
            return self._expand(node, idx, c, "add")
        p = self._as_pending(node, idx)
        self.vals[node.output[0]] = p.affine(1.0, self._per_channel(node, c, p.shape, p.axis))

    def _op_Sub(self, node) -> None:
        if self._layernorm_step(node):
            return
        if self._func_source(node) is not None:
            return self._extend_func(node)
        idx, c = self._binary_const(node)
        if idx is None:
            raise HlsgenError(f"{_label(node)}: Sub of two activations is not supported")
        if self._expanding(node, idx, c):
            return self._expand(node, idx, c, "sub")
        p = self._as_pending(node, idx)
        c = self._per_channel(node, c, p.shape, p.axis)
        self.vals[node.output[0]] = p.affine(1.0, -c) if idx == 0 else p.affine(-1.0, c)

    def _op_Mul(self, node) -> None:
        if self._layernorm_step(node):
            return
        if self._func_source(node) is not None:
            return self._extend_func(node)
        idx, c = self._binary_const(node)
        if idx is None:
            return self._mul_activations(node)
        if self._expanding(node, idx, c):
            return self._expand(node, idx, c, "mul")
        p = self._as_pending(node, idx)
        self.vals[node.output[0]] = p.affine(self._per_channel(node, c, p.shape, p.axis), 0.0)

    def _op_Div(self, node) -> None:
        if self._layernorm_step(node):
            return
        if self._func_source(node) is not None:
            return self._extend_func(node)
        idx, c = self._binary_const(node)
        if idx != 0:
            raise HlsgenError(f"{_label(node)}: only division of an activation by a constant is supported")
        p = self._as_pending(node, 0)
        c = self._per_channel(node, c, p.shape, p.axis)
        if np.any(c == 0):
            raise HlsgenError(f"{_label(node)}: division by zero")
        self.vals[node.output[0]] = p.affine(1.0 / c, 0.0)

    def _is_per_channel(self, c, shape) -> bool:
        axis, _ = self._channel_axis(shape)
        return _channel_vector(c, shape, axis)[0] is not None

    def _operand(self, node, i):
        """A quantized activation, or a quantized constant tensor made an IR constant."""
        v = self.vals[node.input[i]]
        if isinstance(v, QConst):
            if np.any(np.asarray(v.quant.zero_point) != 0) and np.ndim(v.quant.scale):
                raise HlsgenError(f"{_label(node)}: per-channel constant operands are not supported")
            return QVal(self._weight_tensor(node.input[i], v), v.shape)
        return self._qval(node, i)

    def _add_activations(self, node) -> None:
        a, b = (self._operand(node, i) for i in (0, 1))
        ta, tb = self.g.tensors[a.ir_name], self.g.tensors[b.ir_name]
        (shape,) = OPS["add"].output_shapes({}, [ta.shape, tb.shape])
        axis, channels = self._channel_axis(shape)
        za, zb = int(ta.quant.zero_point), int(tb.quant.zero_point)
        self.vals[node.output[0]] = Pending(
            "add", [a.ir_name, b.ir_name], {}, [np.asarray(ta.quant.scale), np.asarray(tb.quant.scale)],
            [(ta.dtype.min - za, ta.dtype.max - za), (tb.dtype.min - zb, tb.dtype.max - zb)],
            np.zeros(()), np.array(-np.inf), np.array(np.inf), shape, axis, channels, [node.name or node.op_type])

    def _clip_bounds(self, node):
        if node.op_type == "Relu":
            return 0.0, np.inf
        a = _attrs(node)
        lo = self._const(node, 1, "Clip min") if len(node.input) > 1 and node.input[1] else a.get("min", -np.inf)
        hi = self._const(node, 2, "Clip max") if len(node.input) > 2 and node.input[2] else a.get("max", np.inf)
        return float(np.asarray(lo).reshape(-1)[0]), float(np.asarray(hi).reshape(-1)[0])

    def _op_Relu(self, node) -> None:
        self._op_Clip(node)

    def _op_Clip(self, node) -> None:
        lo, hi = self._clip_bounds(node)
        v = self.vals[node.input[0]]
        if isinstance(v, QVal):
            t = self.g.tensors[v.ir_name]
            s, z = float(t.quant.scale), int(t.quant.zero_point)
            qlo, qhi = lo / s + z, hi / s + z
            # bounds given in float32 (k * scale rounded) are on the grid within 1e-6 of their size (about
            # 8 float32 ulps; a k * scale off by 2 ulps is 4e-6 steps off at k = 63)
            on_grid = all(not np.isfinite(q) or abs(q - round(q)) < 1e-6 * max(1.0, abs(q)) for q in (qlo, qhi))
            if on_grid:
                ilo = t.dtype.min if not np.isfinite(qlo) else max(t.dtype.min, int(round(qlo)))
                ihi = t.dtype.max if not np.isfinite(qhi) else min(t.dtype.max, int(round(qhi)))
                if ilo <= t.dtype.min and ihi >= t.dtype.max:
                    self.vals[node.output[0]] = v  # the clip cannot change any value
                    return
                return self._same_grid(node, v.ir_name, node.output[0], "clip", {"lo": ilo, "hi": ihi})
        p = self._as_pending(node, 0)
        self.vals[node.output[0]] = p.clamp(lo, hi)

    # ---------------------------------------------------------------- pooling
    def _pool_attrs(self, node, x_shape):
        a = _attrs(node)
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise HlsgenError(f"{_label(node)}: auto_pad is not supported; export with explicit pads")
        if len(x_shape) != 4:
            raise HlsgenError(f"{_label(node)}: only 2-D pooling on NCHW tensors is supported")
        k = tuple(a["kernel_shape"])
        return {"kernel": k, "strides": tuple(a.get("strides", (1, 1))), "pads": tuple(a.get("pads", (0, 0, 0, 0))),
                "dilations": tuple(a.get("dilations", (1, 1))), "ceil_mode": bool(a.get("ceil_mode", 0))}

    def _op_MaxPool(self, node) -> None:
        x = self._qval(node, 0)
        if len(node.output) > 1 and node.output[1]:
            raise HlsgenError(f"{_label(node)}: MaxPool indices output is not supported")
        self._same_grid(node, x.ir_name, node.output[0], "maxpool", self._pool_attrs(node, x.shape))

    def _avg_pending(self, node, x: QVal, attrs: Dict, window: int) -> None:
        t = self.g.tensors[x.ir_name]
        (shape,) = OPS["avgpool"].output_shapes(attrs, [t.shape])
        z = int(t.quant.zero_point)
        self.vals[node.output[0]] = Pending(
            "avgpool", [x.ir_name], attrs, [np.asarray(float(t.quant.scale) / window)],
            [(window * (t.dtype.min - z), window * (t.dtype.max - z))], np.zeros(()), np.array(-np.inf), np.array(np.inf),
            shape, 1, shape[1], [node.name or node.op_type])

    def _op_AveragePool(self, node) -> None:
        x = self._qval(node, 0)
        attrs = self._pool_attrs(node, x.shape)
        a = _attrs(node)
        if attrs["dilations"] != (1, 1):
            raise HlsgenError(f"{_label(node)}: dilated average pooling is not supported")
        if any(attrs["pads"]) and not a.get("count_include_pad", 0):
            raise HlsgenError(f"{_label(node)}: padded AveragePool with count_include_pad=0 divides by a varying count; export with count_include_pad=1 or no padding")
        if attrs["ceil_mode"]:
            raise HlsgenError(f"{_label(node)}: AveragePool with ceil_mode=1 is not supported")
        self._avg_pending(node, x, attrs, attrs["kernel"][0] * attrs["kernel"][1])

    def _op_GlobalAveragePool(self, node) -> None:
        x = self._qval(node, 0)
        if len(x.shape) != 4:
            raise HlsgenError(f"{_label(node)}: only NCHW input is supported")
        self._avg_pending(node, x, {"global": True, "keepdims": True}, x.shape[2] * x.shape[3])

    def _op_ReduceMean(self, node) -> None:
        v = self.vals[node.input[0]]
        a = _attrs(node)
        axes = a.get("axes")
        if axes is None and len(node.input) > 1 and node.input[1]:
            axes = self._const(node, 1, "axes")
        shape = v.src.shape if isinstance(v, LNStage) else getattr(v, "shape", ())
        axes = sorted(int(i) % len(shape) for i in np.asarray(axes).reshape(-1)) if axes is not None else None
        last = axes == [len(shape) - 1] and bool(a.get("keepdims", 1))
        if isinstance(v, LNStage) and v.kind == "square" and last:
            self.vals[node.output[0]] = LNStage("var", v.src)
            return
        if isinstance(v, QVal) and last and len(shape) != 4:
            self.vals[node.output[0]] = LNStage("mean", v)      # the start of a decomposed LayerNorm
            return
        x = self._qval(node, 0)
        if len(x.shape) != 4 or axes != [2, 3]:
            raise HlsgenError(f"{_label(node)}: ReduceMean is supported over the spatial axes (2, 3) of NCHW tensors only, got axes {axes}")
        keep = bool(a.get("keepdims", 1))
        self._avg_pending(node, x, {"global": True, "keepdims": keep}, x.shape[2] * x.shape[3])

    # ---------------------------------------------------------------- data movement
    def _op_Identity(self, node) -> None:
        self.vals[node.output[0]] = self.vals[node.input[0]]

    def _op_Dropout(self, node) -> None:
        self.vals[node.output[0]] = self.vals[node.input[0]]

    def _reshape_to(self, node, shape) -> None:
        v = self.vals[node.input[0]]
        if isinstance(v, QConst):
            if v.quant.axis is not None:
                raise HlsgenError(f"{_label(node)}: reshaping per-channel quantized weights is not supported")
            self.vals[node.output[0]] = QConst(v.data.reshape(shape), v.quant, v.dtype)
            return
        x = self._qval(node, 0)
        if tuple(shape) == tuple(x.shape):
            self.vals[node.output[0]] = x
            return
        self._same_grid(node, x.ir_name, node.output[0], "reshape", {"shape": tuple(int(s) for s in shape)})

    def _op_Reshape(self, node) -> None:
        v = self.vals[node.input[0]]
        target = [int(s) for s in np.asarray(self._const(node, 1, "shape")).reshape(-1)]
        allowzero = _attrs(node).get("allowzero", 0)
        shape = list(v.shape)
        out = [shape[i] if (s == 0 and not allowzero) else s for i, s in enumerate(target)]
        if -1 in out:
            known = int(np.prod([s for s in out if s != -1]))
            out[out.index(-1)] = int(np.prod(shape)) // max(known, 1)
        if int(np.prod(out)) != int(np.prod(shape)):
            raise HlsgenError(f"{_label(node)}: cannot reshape {tuple(shape)} to {tuple(target)}")
        self._reshape_to(node, out)

    def _op_Flatten(self, node) -> None:
        shape = list(self.vals[node.input[0]].shape)
        axis = _attrs(node).get("axis", 1) % (len(shape) + 1) if shape else 0
        self._reshape_to(node, [int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))])

    def _axes(self, node):
        a = _attrs(node)
        if "axes" in a:
            return [int(i) for i in a["axes"]]
        if len(node.input) > 1 and node.input[1]:
            return [int(i) for i in np.asarray(self._const(node, 1, "axes")).reshape(-1)]
        return None

    def _op_Squeeze(self, node) -> None:
        shape = list(self.vals[node.input[0]].shape)
        axes = self._axes(node)
        axes = [i for i, d in enumerate(shape) if d == 1] if axes is None else [i % len(shape) for i in axes]
        self._reshape_to(node, [d for i, d in enumerate(shape) if i not in axes])

    def _op_Unsqueeze(self, node) -> None:
        shape = list(self.vals[node.input[0]].shape)
        axes = sorted(i % (len(shape) + len(self._axes(node))) for i in self._axes(node))
        for ax in axes:
            shape.insert(ax, 1)
        self._reshape_to(node, shape)

    def _op_Transpose(self, node) -> None:
        v = self.vals[node.input[0]]
        perm = _attrs(node).get("perm") or list(reversed(range(len(v.shape))))
        perm = tuple(int(p) for p in perm)
        if isinstance(v, QConst):
            self.vals[node.output[0]] = _transpose_qconst(v, perm)
            return
        x = self._qval(node, 0)
        self._same_grid(node, x.ir_name, node.output[0], "transpose", {"perm": perm})

    def _op_Concat(self, node) -> None:
        xs = [self._qval(node, i) for i in range(len(node.input))]
        ts = [self.g.tensors[x.ir_name] for x in xs]
        for t in ts[1:]:
            if not t.quant.same_as(ts[0].quant):
                raise HlsgenError(f"{_label(node)}: inputs have different quantization scales; share one activation quantizer across the concatenated tensors")
        axis = _attrs(node)["axis"] % len(ts[0].shape)
        dtype = IntType.for_range(min(t.dtype.min for t in ts), max(t.dtype.max for t in ts))
        (out,) = self._emit([node.name or "Concat"], "concat", [x.ir_name for x in xs], {"axis": axis}, [(node.output[0], dtype, ts[0].quant)])
        self.vals[node.output[0]] = QVal(out, self.g.tensors[out].shape)

    def _op_Split(self, node) -> None:
        x = self._qval(node, 0)
        t = self.g.tensors[x.ir_name]
        a = _attrs(node)
        axis = a.get("axis", 0) % len(t.shape)
        sizes = a.get("split")
        if sizes is None and len(node.input) > 1 and node.input[1]:
            sizes = self._const(node, 1, "split")
        n = len(node.output)
        if sizes is None:
            total = t.shape[axis]
            step = -(-total // n)
            sizes = [min(step, total - i * step) for i in range(n)]
        sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
        outs = self._emit([node.name or "Split"], "split", [x.ir_name], {"axis": axis, "sizes": tuple(sizes)},
                          [(o, t.dtype, t.quant) for o in node.output])
        for o, ir in zip(node.output, outs):
            self.vals[o] = QVal(ir, self.g.tensors[ir].shape)

    def _op_Slice(self, node) -> None:
        x = self._qval(node, 0)
        shape = self.g.tensors[x.ir_name].shape
        starts = np.asarray(self._const(node, 1, "starts")).reshape(-1)
        ends = np.asarray(self._const(node, 2, "ends")).reshape(-1)
        axes = np.asarray(self._const(node, 3, "axes")).reshape(-1) if len(node.input) > 3 and node.input[3] else np.arange(len(starts))
        steps = np.asarray(self._const(node, 4, "steps")).reshape(-1) if len(node.input) > 4 and node.input[4] else np.ones(len(starts), np.int64)
        slices = [(0, d, 1) for d in shape]
        for s, e, ax, st in zip(starts, ends, axes, steps):
            ax = int(ax) % len(shape)
            s, e, st = int(max(min(s, 2**62), -(2**62))), int(max(min(e, 2**62), -(2**62))), int(st)
            slices[ax] = slice(s, e, st).indices(shape[ax])
        if any(st < 0 for _, _, st in slices):
            raise HlsgenError(f"{_label(node)}: negative Slice steps are not supported")
        self._same_grid(node, x.ir_name, node.output[0], "slice", {"slices": tuple(tuple(int(v) for v in s) for s in slices)})

    def _op_Resize(self, node) -> None:
        x = self._qval(node, 0)
        a = _attrs(node)
        mode = a.get("mode", b"nearest")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if mode != "nearest":
            raise HlsgenError(f"{_label(node)}: Resize mode {mode!r} is not supported; use nearest upsampling")
        ctm = a.get("coordinate_transformation_mode", b"half_pixel")
        ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
        nm = a.get("nearest_mode", b"round_prefer_floor")
        nm = nm.decode() if isinstance(nm, bytes) else nm
        shape = self.g.tensors[x.ir_name].shape
        scales = sizes = None
        if node.op_type == "Upsample":
            scales = self._const(node, 1, "scales")
        else:
            if len(node.input) > 2 and node.input[2] and np.asarray(self.vals[node.input[2]].value).size:
                scales = self._const(node, 2, "scales")
            if len(node.input) > 3 and node.input[3]:
                sizes = self._const(node, 3, "sizes")
        if sizes is not None and np.asarray(sizes).size:
            sizes = np.asarray(sizes).reshape(-1)
            if any(s % d for s, d in zip(sizes, shape)):
                raise HlsgenError(f"{_label(node)}: sizes {tuple(sizes)} are not integer multiples of {shape}")
            factors = tuple(int(s // d) for s, d in zip(sizes, shape))
        else:
            scales = np.asarray(scales, np.float64).reshape(-1)
            if np.any(scales != np.round(scales)) or np.any(scales < 1):
                raise HlsgenError(f"{_label(node)}: only integer upsampling factors are supported, got {tuple(scales)}")
            factors = tuple(int(s) for s in scales)
        ok = ctm in ("asymmetric", "half_pixel", "pytorch_half_pixel", "tf_half_pixel_for_nn") and nm in ("floor", "round_prefer_floor")
        if ctm == "asymmetric" and nm == "round_prefer_floor" and max(factors) > 2:
            ok = False
        if not ok:
            raise HlsgenError(f"{_label(node)}: nearest Resize with coordinate_transformation_mode={ctm} and nearest_mode={nm} is not pixel repetition; export with mode='nearest' (PyTorch Upsample)")
        self._same_grid(node, x.ir_name, node.output[0], "resize", {"factors": factors})

    _op_Upsample = _op_Resize

    # ---------------------------------------------------------------- outputs and patterns
    def _layernorm_step(self, node) -> bool:
        """Decomposed LayerNorm (opset < 17 exports): ReduceMean -> Sub -> Pow 2 -> ReduceMean ->
        Add eps -> Sqrt -> Div -> Mul gamma -> Add beta. Returns True if `node` is a step."""
        op = node.op_type
        vals = [self.vals.get(i) for i in node.input if i]
        ln = [v for v in vals if isinstance(v, (LNStage, Reduction))]
        if not ln:
            return False
        consts = [v for v in vals if isinstance(v, (Const, QConst))]
        first = ln[0]

        def const_value():
            c = consts[0]
            return np.asarray(c.value if isinstance(c, Const) else c.real(), dtype=np.float64)
        if op == "Sub" and len(vals) == 2 and isinstance(vals[0], QVal) and isinstance(vals[1], LNStage) \
                and vals[1].kind == "mean" and vals[1].src.ir_name == vals[0].ir_name:
            self.vals[node.output[0]] = LNStage("centered", vals[0])
        elif op == "Pow" and isinstance(first, LNStage) and first.kind == "centered" and consts and np.all(const_value() == 2):
            self.vals[node.output[0]] = LNStage("square", first.src)
        elif op == "Add" and isinstance(first, LNStage) and first.kind == "var" and consts and const_value().size == 1:
            self.vals[node.output[0]] = LNStage("var_eps", first.src, float(const_value().reshape(())))
        elif op == "Sqrt" and isinstance(first, LNStage) and first.kind == "var_eps":
            self.vals[node.output[0]] = LNStage("std", first.src, first.eps)
        elif op == "Div" and len(vals) == 2 and isinstance(vals[0], LNStage) and vals[0].kind == "centered" \
                and isinstance(vals[1], LNStage) and vals[1].kind == "std" and vals[0].src.ir_name == vals[1].src.ir_name:
            d = vals[0].src.shape[-1]
            self.vals[node.output[0]] = Reduction("layernorm", vals[0].src, tuple(vals[0].src.shape), gamma=np.ones(d),
                                                  beta=np.zeros(d), eps=vals[1].eps)
        elif op in ("Mul", "Add") and isinstance(first, Reduction) and first.kind == "layernorm" and len(consts) == 1:
            d = first.shape[-1]
            c = const_value()
            if c.size not in (1, d) or (c.size == d and c.shape[-1] != d):
                raise HlsgenError(f"{_label(node)}: LayerNorm {'scale' if op == 'Mul' else 'bias'} must be per feature (last axis)")
            c = np.broadcast_to(c.reshape(-1), (d,))
            r = Reduction("layernorm", first.src, first.shape, gamma=first.gamma * (c if op == "Mul" else 1.0),
                          beta=first.beta * (c if op == "Mul" else 1.0) + (c if op == "Add" else 0.0), eps=first.eps)
            self.vals[node.output[0]] = r
        else:
            raise HlsgenError(f"{_label(node)}: uses a partial LayerNorm ({first.kind if isinstance(first, LNStage) else 'layernorm'}) "
                              f"in a way hlsgen does not recognize; export LayerNorm as LayerNormalization (opset >= 17) "
                              f"or as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div")
        return True

    # ---------------------------------------------------------------- transformer ops
    def _source_of(self, v):
        """The one quantized tensor an elementwise value derives from, or None."""
        if isinstance(v, QVal):
            return v
        if isinstance(v, Func):
            return v.src
        if isinstance(v, Pending) and v.op == "requant" and len(v.inputs) == 1:
            return QVal(v.inputs[0], self.g.tensors[v.inputs[0]].shape)
        return None

    def _func_source(self, node):
        """For an elementwise node: its source QVal when the node continues a Func (an input
        is already a Func, or two non-constant inputs derive from the same tensor)."""
        vals = [self.vals[i] for i in node.input if i]
        live = [v for v in vals if not isinstance(v, (Const, QConst))]
        if not live:
            return None
        if not any(isinstance(v, Func) for v in live) and len(live) < 2 and node.op_type not in ELEMENTWISE_FUNCS:
            return None
        srcs = [self._source_of(v) for v in live]
        if any(x is None for x in srcs) or len({x.ir_name for x in srcs}) != 1:
            return None
        return srcs[0]

    def _extend_func(self, node) -> None:
        src = self._func_source(node)
        if src is None:
            for k, i in enumerate(node.input):
                v = self.vals.get(i)
                if i and self._source_of(v) is None and not isinstance(v, (Const, QConst)):
                    self._not_quantized(node, k, v)
            raise HlsgenError(f"{_label(node)}: elementwise function of more than one activation is not supported; "
                              f"only functions of one quantized tensor (e.g. GELU) are")
        t = self.g.tensors[src.ir_name]
        if t.origin is None:
            raise HlsgenError(f"{_label(node)}: the input of this elementwise function has no ONNX tensor to evaluate from")
        for i in node.input:
            v = self.vals.get(i)
            if isinstance(v, (Const, QConst)) and np.size(v.value if isinstance(v, Const) else v.data) != 1:
                raise HlsgenError(f"{_label(node)}: elementwise function with a non-scalar constant is not supported")
        self.vals[node.output[0]] = Func(src, t.origin, tuple(t.shape))

    def _op_Erf(self, node) -> None:
        if self._layernorm_step(node):
            return
        self._extend_func(node)

    _op_Tanh = _op_Sigmoid = _op_Exp = _op_Log = _op_Sqrt = _op_Reciprocal = _op_Neg = _op_Abs = _op_Softplus = _op_Erf
    _op_Gelu = _op_HardSigmoid = _op_HardSwish = _op_Elu = _op_Selu = _op_LeakyRelu = _op_Mish = _op_Erf

    def _op_Pow(self, node) -> None:
        if self._layernorm_step(node):
            return
        self._extend_func(node)

    def _materialize_func(self, node, f: Func, qz: Quantizer, out_name: str) -> None:
        """Evaluate the ONNX subgraph from the source tensor to this quantizer's input on every
        value of the source type (float32, onnxruntime, as the float model does), quantize the
        results with this quantizer: one table entry per input value."""
        import onnxruntime as ort

        t = self.g.tensors[f.src.ir_name]
        if t.dtype.bits > 16:
            raise HlsgenError(f"{_label(node)}: a {t.dtype.bits}-bit input makes a {1 << t.dtype.bits}-entry table; "
                              f"quantize the function's input to at most 16 bits")
        target = node.input[0]
        if node.op_type == "DequantizeLinear":
            # QCDQ: the quantizer's float input sits behind QuantizeLinear [-> Clip]
            q = self.producer.get(target)
            if q is not None and q.op_type == "Clip":
                q = self.producer.get(q.input[0])
            if q is None or q.op_type != "QuantizeLinear":
                raise HlsgenError(f"{_label(node)}: cannot find the QuantizeLinear of this quantizer")
            target = q.input[0]
        nodes, consts, seen = [], {}, set()

        def visit(name):
            if name in seen or name == f.src_onnx:
                return
            seen.add(name)
            v = self.vals.get(name)
            if isinstance(v, (Const, QConst)):
                consts[name] = np.asarray(v.value if isinstance(v, Const) else v.real(), dtype=np.float32).reshape(-1)[:1].reshape(())
                return
            pn = self.producer.get(name)
            if pn is None:
                raise HlsgenError(f"{_label(node)}: cannot trace the elementwise function back to its input")
            for i in pn.input:
                if i:
                    visit(i)
            if pn not in nodes:
                nodes.append(pn)
        visit(target)
        order = {id(n): k for k, n in enumerate(self.onnx_graph.node)}
        nodes.sort(key=lambda n: order.get(id(n), 0))
        q = np.arange(t.dtype.min, t.dtype.max + 1, dtype=np.int64)
        x = (np.float32(1) * (q - int(t.quant.zero_point)).astype(np.float32)) * np.float32(t.quant.scale)
        gr = helper.make_graph(
            [helper.make_node(n.op_type, list(n.input), list(n.output), domain=n.domain, **_attrs(n)) for n in nodes], "func",
            [helper.make_tensor_value_info(f.src_onnx, onnx.TensorProto.FLOAT, [len(q)])],
            [helper.make_tensor_value_info(target, onnx.TensorProto.FLOAT, None)],
            [numpy_helper.from_array(v, k) for k, v in consts.items()])
        m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", max(self.opset, 13))])
        try:
            sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            (y,) = sess.run(None, {f.src_onnx: x})
        except Exception as exc:
            raise HlsgenError(f"{_label(node)}: cannot tabulate this elementwise function ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
        table = self._quantize_const(np.asarray(y, dtype=np.float64).reshape(-1), qz)
        attrs = {"table": table.astype(np.int64), "lo": int(t.dtype.min)}
        (out,) = self._emit([n.name or n.op_type for n in nodes] + [node.name or node.op_type], "lut", [f.src.ir_name], attrs,
                            [(out_name, qz.dtype, Quant(qz.scale, qz.zero_point))])
        self.vals[out_name] = QVal(out, self.g.tensors[out].shape)

    def _op_Where(self, node) -> None:
        cond, a, b = (self.vals[i] for i in node.input[:3])
        if not isinstance(cond, Const):
            raise HlsgenError(f"{_label(node)}: Where with a non-constant condition is not supported")
        mask = np.asarray(cond.value).astype(bool)
        if isinstance(a, (Const, QConst)) and isinstance(b, QVal):
            fill, src, excluded = a, b, mask
        elif isinstance(b, (Const, QConst)) and isinstance(a, QVal):
            fill, src, excluded = b, a, ~mask
        else:
            raise HlsgenError(f"{_label(node)}: Where must select between one quantized activation and a constant")
        fv = np.asarray(fill.value if isinstance(fill, Const) else fill.real(), dtype=np.float64)
        if not np.all(fv <= -1e30):
            raise HlsgenError(f"{_label(node)}: Where fills with {fv.reshape(-1)[0]}; only -inf (an attention mask) is supported")
        self.vals[node.output[0]] = Masked(src, excluded)

    def _op_Softmax(self, node) -> None:
        v = self.vals[node.input[0]]
        src, mask = (v.src, v.mask) if isinstance(v, Masked) else (self._qval(node, 0), None)
        rank = len(src.shape)
        axis = _attrs(node).get("axis", -1) % rank
        if axis != rank - 1:
            raise HlsgenError(f"{_label(node)}: Softmax over axis {axis} is not supported; only the last axis")
        if mask is not None:
            mask = np.broadcast_to(mask, np.broadcast_shapes(mask.shape, src.shape))
            if np.any(mask.all(axis=-1)):
                raise HlsgenError(f"{_label(node)}: the attention mask excludes every element of some row")
        self.vals[node.output[0]] = Reduction("softmax", src, tuple(src.shape), mask=mask)

    def _op_LayerNormalization(self, node) -> None:
        a = _attrs(node)
        src = self._qval(node, 0)
        rank = len(src.shape)
        if a.get("axis", -1) % rank != rank - 1:
            raise HlsgenError(f"{_label(node)}: LayerNormalization over more than the last axis is not supported")
        d = src.shape[-1]
        gamma = np.broadcast_to(np.asarray(self._const(node, 1, "scale"), np.float64).reshape(-1), (d,))
        beta = self._const(node, 2, "bias")
        beta = np.zeros(d) if beta is None else np.broadcast_to(np.asarray(beta, np.float64).reshape(-1), (d,))
        self.vals[node.output[0]] = Reduction("layernorm", src, tuple(src.shape), gamma=gamma.copy(), beta=beta.copy(),
                                              eps=float(a.get("epsilon", 1e-5)))

    def _materialize_reduction(self, node, r: Reduction, qz: Quantizer, out_name: str) -> None:
        t = self.g.tensors[r.src.ir_name]
        s_in, s_out = float(t.quant.scale), float(qz.scale)
        common = {"zero_point": int(qz.zero_point), "lo": int(qz.lo), "hi": int(qz.hi), "out": qz.dtype}
        if r.kind == "softmax":
            span = t.dtype.max - t.dtype.min
            j = np.arange(span + 1, dtype=np.float64)
            attrs = dict(common, exp_table=np.rint(np.exp(-j * s_in) * 2.0 ** SOFTMAX_FRAC_BITS).astype(np.int64),
                         frac=SOFTMAX_FRAC_BITS, g=DIVIDE_FRAC_BITS, recip=int(round(2.0 ** DIVIDE_FRAC_BITS / s_out)),
                         mask=None if r.mask is None else np.ascontiguousarray(r.mask))
        else:
            d = r.shape[-1]
            k, g = LAYERNORM_ROOT_BITS, DIVIDE_FRAC_BITS
            attrs = dict(common, k=k, g=g, eps_fixed=int(round(r.eps * d * d / (s_in * s_in) * 4.0 ** k)),
                         mult=np.rint(r.gamma / s_out * 2.0 ** (k + g)).astype(np.int64),
                         bias_fixed=np.rint(r.beta / s_out * 2.0 ** g).astype(np.int64))
        (out,) = self._emit([node.name or node.op_type], r.kind, [r.src.ir_name], attrs,
                            [(out_name, qz.dtype, Quant(qz.scale, qz.zero_point))])
        self.vals[out_name] = QVal(out, self.g.tensors[out].shape)

    def _op_Gather(self, node) -> None:
        data, idx = self.vals[node.input[0]], self.vals[node.input[1]]
        axis = _attrs(node).get("axis", 0)
        if isinstance(data, QConst) and isinstance(idx, Const):
            if np.ndim(data.quant.scale) and data.quant.axis == axis % data.data.ndim:
                raise HlsgenError(f"{_label(node)}: gathering along the per-channel quantization axis is not supported")
            self.vals[node.output[0]] = QConst(np.take(data.data, np.asarray(idx.value, dtype=np.int64), axis=axis),
                                               data.quant, data.dtype)
            return
        if isinstance(data, QConst) and isinstance(idx, IntIn):
            if axis % data.data.ndim != 0:
                raise HlsgenError(f"{_label(node)}: only Gather along axis 0 (an embedding lookup) is supported")
            if np.ndim(data.quant.scale):
                raise HlsgenError(f"{_label(node)}: embedding tables must be quantized per tensor")
            rows = data.data.shape[0]
            ids = self._index_input(idx, rows, node)
            table = self._weight_tensor(node.input[0], data)
            (out,) = self._emit([node.name or "Gather"], "gather", [table, ids], {},
                                [(node.output[0], data.dtype, Quant(data.quant.scale, data.quant.zero_point))])
            self.vals[node.output[0]] = QVal(out, self.g.tensors[out].shape)
            return
        raise HlsgenError(f"{_label(node)}: Gather is supported on constants and as an embedding lookup "
                          f"(a quantized table indexed by an integer graph input)")

    def _index_input(self, v: IntIn, rows: int, node) -> str:
        existing = [n for n, q in self.g.input_quantizers.items() if q.get("onnx_input") == v.name]
        if existing:
            name = existing[0]
            q = self.g.input_quantizers[name]
            q["hi"] = min(q["hi"], rows - 1)
            return name
        name = self._add_tensor(v.name, v.shape, IntType.for_range(0, rows - 1), None, origin=v.name)
        self.g.inputs.append(name)
        self.g.input_quantizers[name] = {"onnx_input": v.name, "lo": 0, "hi": rows - 1, "node": node.name or "Gather",
                                         "index": True}
        return name

    def _mul_activations(self, node) -> None:
        """Elementwise product of two quantized activations (gating: SiLU(gate) * up)."""
        a, b = self._qval(node, 0), self._qval(node, 1)
        ta, tb = self.g.tensors[a.ir_name], self.g.tensors[b.ir_name]
        (shape,) = OPS["mul"].output_shapes({}, [ta.shape, tb.shape])
        za, zb = int(ta.quant.zero_point), int(tb.quant.zero_point)
        prods = [x * y for x in (ta.dtype.min - za, ta.dtype.max - za) for y in (tb.dtype.min - zb, tb.dtype.max - zb)]
        axis, channels = self._channel_axis(shape)
        self.vals[node.output[0]] = Pending("mul", [a.ir_name, b.ir_name], {},
                                            [np.asarray(float(ta.quant.scale) * float(tb.quant.scale))],
                                            [(min(prods), max(prods))], np.zeros(()), np.array(-np.inf), np.array(np.inf),
                                            shape, axis, channels, [node.name or node.op_type])

    def _matmul_activations(self, node) -> None:
        a, b = self._qval(node, 0), self._qval(node, 1)
        ta, tb = self.g.tensors[a.ir_name], self.g.tensors[b.ir_name]
        if len(ta.shape) < 2 or len(tb.shape) < 2 or ta.shape[-1] != tb.shape[-2]:
            raise HlsgenError(f"{_label(node)}: MatMul shapes {ta.shape} x {tb.shape} do not match")
        za, zb = int(ta.quant.zero_point), int(tb.quant.zero_point)
        ra = (ta.dtype.min - za, ta.dtype.max - za)
        rb = (tb.dtype.min - zb, tb.dtype.max - zb)
        prods = [x * y for x in ra for y in rb]
        k = ta.shape[-1]
        (shape,) = OPS["matmul"].output_shapes({}, [ta.shape, tb.shape])
        axis = len(shape) - 1
        self.vals[node.output[0]] = Pending("matmul", [a.ir_name, b.ir_name], {},
                                            [np.asarray(float(ta.quant.scale) * float(tb.quant.scale))],
                                            [(k * min(prods), k * max(prods))], np.zeros(()), np.array(-np.inf),
                                            np.array(np.inf), shape, axis, shape[axis], [node.name or node.op_type])

    def _graph_output(self, name: str) -> str:
        v = self.vals.get(name)
        if isinstance(v, QVal):
            return v.ir_name
        if isinstance(v, Pending):
            return self._accumulator_output(v, name)
        raise HlsgenError(f"graph output {name!r} is not computed from a quantized activation; end the model with a quantized layer")

    def _accumulator_output(self, p: Pending, name: str) -> str:
        """An unquantized final layer (e.g. a classifier without output quantizer): emit its
        accumulator plus bias, exactly, on the grid of the accumulator's own scale."""
        if len(p.term_scales) != 1:
            raise HlsgenError(f"graph output {name!r} adds unquantized values of different scales; put an output quantizer at the end")
        s = np.broadcast_to(np.asarray(p.term_scales[0], np.float64), (p.channels,)).copy()
        if np.any(s <= 0):
            raise HlsgenError(f"graph output {name!r} has a non-positive scale; put an output quantizer at the end")
        bias_q = np.rint(np.broadcast_to(p.bias, (p.channels,)) / s)
        lo = int(p.term_ranges[0][0] + min(0, bias_q.min()))
        hi = int(p.term_ranges[0][1] + max(0, bias_q.max()))
        dtype = IntType.for_range(lo, hi)
        rq = make_requant([np.ones(p.channels)], p.term_ranges, bias_q, 1.0, 0, dtype.min, dtype.max,
                          p.lo / s, p.hi / s, p.channels, p.axis)
        attrs = dict(p.attrs)
        attrs["requant"] = rq
        uniform = bool(np.all(s == s[0]))
        quant = Quant(s[0] if uniform else s, 0, None if uniform else p.axis)
        (out,) = self._emit(p.source, p.op, p.inputs, attrs, [(name, dtype, quant)])
        return out

    def _fuse_channel_shuffle(self) -> None:
        g = self.g
        changed = True
        while changed:
            changed = False
            for r1 in list(g.tasks):
                if r1.op != "reshape":
                    continue
                a = g.tensors[r1.inputs[0]]
                mid = g.tensors[r1.outputs[0]]
                if len(a.shape) != 4 or len(mid.shape) != 5 or mid.shape[0] != a.shape[0] or mid.shape[1] * mid.shape[2] != a.shape[1] or tuple(mid.shape[3:]) != tuple(a.shape[2:]):
                    continue
                cons = g.consumers(mid.name)
                if len(cons) != 1 or cons[0].op != "transpose" or tuple(cons[0].attrs["perm"]) != (0, 2, 1, 3, 4) or mid.name in g.outputs:
                    continue
                tr = cons[0]
                cons2 = g.consumers(tr.outputs[0])
                if len(cons2) != 1 or cons2[0].op != "reshape" or tuple(g.tensors[cons2[0].outputs[0]].shape) != tuple(a.shape) or tr.outputs[0] in g.outputs:
                    continue
                r2 = cons2[0]
                fused = Task(r2.name, "channel_shuffle", [a.name], list(r2.outputs), {"groups": int(mid.shape[1])}, r1.source + tr.source + r2.source)
                i = g.tasks.index(r1)
                g.tasks = [t for t in g.tasks if t not in (r1, tr, r2)]
                g.tasks.insert(i, fused)
                del g.tensors[mid.name]
                del g.tensors[tr.outputs[0]]
                changed = True
                break


    def _collapse_reshapes(self) -> None:
        """reshape(reshape(x)) -> reshape(x); a reshape to x's own shape disappears."""
        g = self.g
        for task in list(g.tasks):
            if task.op != "reshape":
                continue
            src = g.producer(task.inputs[0])
            if src is not None and src.op == "reshape" and len(g.consumers(src.outputs[0])) == 1 and src.outputs[0] not in g.outputs:
                task.inputs = list(src.inputs)
                task.source = src.source + task.source
                g.tasks.remove(src)
                del g.tensors[src.outputs[0]]
            out, inp = task.outputs[0], task.inputs[0]
            if tuple(g.tensors[out].shape) == tuple(g.tensors[inp].shape) and out not in g.outputs:
                for t in g.consumers(out):
                    t.inputs = [inp if i == out else i for i in t.inputs]
                g.tasks.remove(task)
                del g.tensors[out]


def _bits_for(lo: int, hi: int, fallback: IntType) -> IntType:
    """The type of a clamped quantizer range [lo, hi], never wider than its storage type."""
    t = IntType.for_range(lo, hi)
    return t if t.bits <= fallback.bits else fallback


def _declared_range(producer, vals, name, np_dtype):
    """Integer range of a QCDQ weight: from the Clip that narrows it, else its storage type."""
    info = np.iinfo(np_dtype)
    node = producer.get(name)
    if node is not None and node.op_type == "Clip" and len(node.input) >= 3:
        lo_v, hi_v = vals.get(node.input[1]), vals.get(node.input[2])
        if isinstance(lo_v, Const) and isinstance(hi_v, Const):
            return int(np.asarray(lo_v.value).reshape(-1)[0]), int(np.asarray(hi_v.value).reshape(-1)[0])
    return int(info.min), int(info.max)


def _channel_vector(c, shape, axis: int):
    """(scalar or vector along `axis`, None) when constant `c` broadcast to `shape` varies only
    along `axis`; otherwise (None, the reason)."""
    c = np.asarray(c, dtype=np.float64)
    if c.size == 1:
        return c.reshape(()), None
    try:
        full = np.broadcast_to(c, shape)
    except ValueError:
        return None, f"constant of shape {c.shape} does not broadcast to {tuple(shape)}"
    idx = tuple(slice(None) if i == axis else 0 for i in range(len(shape)))
    vec = full[idx]
    exp = vec.reshape([-1 if i == axis else 1 for i in range(len(shape))])
    if not np.array_equal(np.broadcast_to(exp, shape), full):
        return None, (f"constant varies along axes other than the channel axis {axis}; "
                      f"only per-tensor or per-channel constants are supported")
    return vec.copy(), None


def _compact_int(lo: int, hi: int):
    """The narrowest NumPy integer type holding [lo, hi]."""
    return next(d for d in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64)
                if np.iinfo(d).min <= lo and hi <= np.iinfo(d).max)


def _transpose_qconst(qc: QConst, perm) -> QConst:
    axis = None if qc.quant.axis is None else list(perm).index(qc.quant.axis)
    # a view: copying GPT-2 medium's weights would cost seconds and gigabytes
    return QConst(np.transpose(qc.data, perm), Quant(qc.quant.scale, qc.quant.zero_point, axis), qc.dtype)


def _copy_pending(p: Pending, node) -> Pending:
    return Pending(p.op, list(p.inputs), dict(p.attrs), [np.array(s) for s in p.term_scales], list(p.term_ranges),
                   np.array(p.bias), np.array(p.lo), np.array(p.hi), p.shape, p.axis, p.channels,
                   p.source + [node.name or node.op_type])


def lower(model: onnx.ModelProto, input_shapes: Optional[Dict[str, tuple]] = None, consume: bool = False) -> Graph:
    """ONNX model -> IR. With `consume`, the model's weight bytes are freed as they are read
    (the caller must not use the model afterwards)."""
    return Lowering(model, input_shapes, consume).run()
