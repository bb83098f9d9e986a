"""A general-purpose DeformConv test model, built directly with onnx.helper (no PyTorch):
QCDQ-quantized input, offsets and mask as graph inputs (so any fractional offsets can be fed),
int8 per-channel weights, bias, groups and offset groups, and an 8-bit output quantizer.

Offsets are quantized to fixed point with 4 fraction bits (int8, scale 1/16: -8 .. 7.9375
pixels), the mask to uint8 with scale 1/255. The ONNX file runs on onnxruntime (opset 19).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(seed: int = 0, n: int = 1, c: int = 4, h: int = 8, w: int = 7, oc: int = 6, k=(3, 3), group: int = 2,
          offset_group: int = 2, stride=(1, 1), pads=(1, 1, 1, 1), dilations=(1, 1)) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    kh, kw = k
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // stride[1] + 1
    wq = rng.integers(-127, 128, size=(oc, c // group, kh, kw)).astype(np.int8)
    wscale = rng.uniform(0.002, 0.01, size=oc).astype(np.float32)
    bias = rng.normal(0, 0.2, size=oc).astype(np.float32)
    inits = [
        numpy_helper.from_array(np.float32(0.05), "x_scale"), numpy_helper.from_array(np.int8(0), "x_zp"),
        numpy_helper.from_array(np.float32(1 / 16), "off_scale"), numpy_helper.from_array(np.int8(0), "off_zp"),
        numpy_helper.from_array(np.float32(1 / 255), "mask_scale"), numpy_helper.from_array(np.uint8(0), "mask_zp"),
        numpy_helper.from_array(wq, "w_q"), numpy_helper.from_array(wscale, "w_scale"),
        numpy_helper.from_array(np.zeros(oc, np.int8), "w_zp"), numpy_helper.from_array(bias, "bias"),
        numpy_helper.from_array(np.float32(0.04), "y_scale"), numpy_helper.from_array(np.int8(0), "y_zp"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["x_q"], name="x_quant"),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zp"], ["x_dq"], name="x_dequant"),
        helper.make_node("QuantizeLinear", ["offset", "off_scale", "off_zp"], ["off_q"], name="offset_quant"),
        helper.make_node("DequantizeLinear", ["off_q", "off_scale", "off_zp"], ["off_dq"], name="offset_dequant"),
        helper.make_node("QuantizeLinear", ["mask", "mask_scale", "mask_zp"], ["mask_q"], name="mask_quant"),
        helper.make_node("DequantizeLinear", ["mask_q", "mask_scale", "mask_zp"], ["mask_dq"], name="mask_dequant"),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w_dq"], name="w_dequant", axis=0),
        helper.make_node("DeformConv", ["x_dq", "w_dq", "off_dq", "bias", "mask_dq"], ["y"], name="deform",
                         kernel_shape=[kh, kw], strides=list(stride), pads=list(pads), dilations=list(dilations),
                         group=group, offset_group=offset_group),
        helper.make_node("QuantizeLinear", ["y", "y_scale", "y_zp"], ["y_q"], name="y_quant"),
        helper.make_node("DequantizeLinear", ["y_q", "y_scale", "y_zp"], ["out"], name="y_dequant"),
    ]
    graph = helper.make_graph(nodes, "deformconv", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w]),
        helper.make_tensor_value_info("offset", TensorProto.FLOAT, [n, offset_group * kh * kw * 2, oh, ow]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, [n, offset_group * kh * kw, oh, ow]),
    ], [helper.make_tensor_value_info("out", TensorProto.FLOAT, [n, oc, oh, ow])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], producer_name="hlsgen.zoo.deformconv")
    onnx.checker.check_model(model)
    return model


def random_inputs(model: onnx.ModelProto, seed: int = 0):
    """x ~ N(0, 1), fractional offsets in [-3, 3) pixels, mask in [0, 1]."""
    rng = np.random.default_rng(seed + 100)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    return {"x": rng.normal(size=shapes["x"]).astype(np.float32),
            "offset": rng.uniform(-3, 3, size=shapes["offset"]).astype(np.float32),
            "mask": rng.uniform(0, 1, size=shapes["mask"]).astype(np.float32)}
