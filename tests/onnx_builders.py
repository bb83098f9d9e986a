"""Tiny hand-built QONNX graphs for CLI and bad-input tests (no torch needed)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QDOMAIN = "qonnx.custom_op.general"


def c(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def quant(inp, out, scale_name, bits_name="bits8", signed=1, name=None):
    return helper.make_node("Quant", [inp, scale_name, "zp", bits_name], [out], domain=QDOMAIN,
                            signed=signed, narrow=0, rounding_mode="ROUND", name=name or f"quant_{out}")


def relu_net(middle_op="Relu", input_dims=(1, 4, 6, 6), act_bits=8, scale_is_input=False, extra_nodes=(), input_name="x",
             node_name="act"):
    """x -> Quant -> conv 1x1 (4-bit weights) -> <middle_op> -> Quant -> y"""
    rs = np.random.RandomState(0)
    w = rs.uniform(-1, 1, (4, 4, 1, 1)).astype(np.float32)
    inits = [c("s_in", 0.05), c("s_out", 0.1), c("s_w", 0.15), c("zp", 0.0), c("bits8", 8.0), c("bits4", 4.0),
             c(f"bits{act_bits}", float(act_bits)), c("w", w)]
    nodes = [
        quant(input_name, "xq", "s_in", name="in_quant"),
        helper.make_node("Quant", ["w", "s_w", "zp", "bits4"], ["wq"], domain=QDOMAIN, signed=1, narrow=1, rounding_mode="ROUND", name="w_quant"),
        helper.make_node("Conv", ["xq", "wq"], ["conv"], kernel_shape=[1, 1], name="conv0"),
        helper.make_node(middle_op, ["conv"], ["mid"], name=node_name),
        quant("mid", "y", "s_scale_in" if scale_is_input else "s_out", bits_name=f"bits{act_bits}", name="out_quant"),
        *extra_nodes,
    ]
    dims = [d if isinstance(d, int) else d for d in input_dims]
    inputs = [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, dims)]
    if scale_is_input:
        inputs.append(helper.make_tensor_value_info("s_scale_in", TensorProto.FLOAT, []))
    g = helper.make_graph(nodes, "relu_net", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(QDOMAIN, 1)])
    m.ir_version = 8
    return m


def grouped_net(batch=2, cin=8, cout=6, groups=2, hw=9):
    """x -> Quant -> conv 3x3, groups 2, stride 2, dilation 2, pad 1 (4-bit weights) -> Relu ->
    Quant -> conv 1x1 -> Quant -> y, on a batch of `batch` images: the window words' group, batch,
    stride, dilation and padding counters in one small graph."""
    rs = np.random.RandomState(1)
    w0 = rs.uniform(-1, 1, (cout, cin // groups, 3, 3)).astype(np.float32)
    w1 = rs.uniform(-1, 1, (4, cout, 1, 1)).astype(np.float32)
    inits = [c("s_in", 0.05), c("s_mid", 0.1), c("s_out", 0.2), c("s_w", 0.15), c("zp", 0.0), c("bits8", 8.0),
             c("bits4", 4.0), c("w0", w0), c("w1", w1)]
    wq = [helper.make_node("Quant", [f"w{k}", "s_w", "zp", "bits4"], [f"w{k}q"], domain=QDOMAIN, signed=1, narrow=1,
                           rounding_mode="ROUND", name=f"w{k}_quant") for k in range(2)]
    nodes = [quant("x", "xq", "s_in", name="in_quant"), *wq,
             helper.make_node("Conv", ["xq", "w0q"], ["c0"], kernel_shape=[3, 3], group=groups, strides=[2, 2],
                              dilations=[2, 2], pads=[1, 1, 1, 1], name="gconv"),
             helper.make_node("Relu", ["c0"], ["r0"], name="relu"),
             quant("r0", "m0", "s_mid", signed=0, name="mid_quant"),
             helper.make_node("Conv", ["m0", "w1q"], ["c1"], kernel_shape=[1, 1], name="pconv"),
             quant("c1", "y", "s_out", name="out_quant")]
    g = helper.make_graph(nodes, "grouped_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, cin, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(QDOMAIN, 1)])
    m.ir_version = 8
    return m


def two_widths_net():
    """x -> Quant -> conv 1x1 (4-bit weights) -> Relu -> Quant 8 bits -> y, and the same Relu ->
    Quant 12 bits -> z: two graph outputs of different container widths (8 and 16 bits)."""
    m = relu_net(input_dims=(1, 4, 6, 6))
    g = m.graph
    g.initializer.append(c("bits12", 12.0))
    g.node.append(quant("mid", "z", "s_out", bits_name="bits12", name="out_quant12"))
    g.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    return m
