"""Single ops in hand-built QONNX graphs (x -> Quant -> op chain -> Quant -> y), each checked
against the float model executed by qonnx: exact agreement within the Foundation thresholds."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from hlsgen import pipeline
from hlsgen.errors import HlsgenError
from onnx_builders import QDOMAIN, c, quant


def _model(tmp_path, nodes, inits, in_shape, name="m", extra_quant_outputs=("y",)):
    base = [c("s_in", 0.043), c("s_a", 0.071), c("s_b", 0.029), c("zp", 0.0), c("bits8", 8.0), c("bits4", 4.0)]
    g = helper.make_graph(
        [quant("x", "xq", "s_in", name="in_quant")] + nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in extra_quant_outputs],
        base + inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(QDOMAIN, 1)])
    m.ir_version = 8
    p = tmp_path / f"{name}.onnx"
    onnx.save(m, p)
    return p


def _check(path, seed=0):
    g = pipeline.load(path)
    floats = pipeline.float_inputs(g, [], seed)
    floats = {k: v * 3 for k, v in floats.items()}  # exercise saturation too
    rep, _ = pipeline.compare(g, path, floats, pipeline.quantize_inputs(g, floats))
    assert rep["exact_fraction"] >= 0.99 and rep["max_abs_lsb"] <= 1, rep["outputs"]
    for r in rep["tensors"]:
        assert r["layer_by_layer"]["exact_fraction"] >= 0.999 and r["layer_by_layer"]["max_abs_lsb"] <= 1, r
    return g, rep


def _wq(name, shape, seed=0, bits="bits4"):
    w = np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)
    node = helper.make_node("Quant", [name, "s_w_" + name, "zp", bits], [name + "_q"], domain=QDOMAIN, signed=1, narrow=1, rounding_mode="ROUND")
    scale = (np.abs(w).reshape(shape[0], -1).max(axis=1) / 7).astype(np.float32).reshape((shape[0],) + (1,) * (len(shape) - 1))
    return node, [c(name, w), c("s_w_" + name, scale)]


def test_split_transpose_squeeze(tmp_path):
    nodes = [
        helper.make_node("Split", ["xq"], ["p0", "p1"], axis=1, name="split"),
        helper.make_node("Transpose", ["p1"], ["t"], perm=[0, 1, 3, 2], name="tr"),
        helper.make_node("Unsqueeze", ["t", "ax0"], ["u"], name="unsq"),
        helper.make_node("Squeeze", ["u", "ax0"], ["s"], name="sq"),
        helper.make_node("Concat", ["p0", "s"], ["cat"], axis=1, name="cat"),
        quant("cat", "y", "s_a"),
    ]
    g, _ = _check(_model(tmp_path, nodes, [c("ax0", [0], np.int64)], (1, 6, 5, 5)))
    assert [t.op for t in g.tasks] == ["split", "transpose", "concat", "requant"]


def test_sub_mul_div_clip_by_constants(tmp_path):
    nodes = [
        helper.make_node("Mul", ["xq", "k"], ["m"], name="mul"),
        helper.make_node("Sub", ["m", "b"], ["sb"], name="sub"),
        helper.make_node("Div", ["sb", "d"], ["dv"], name="div"),
        helper.make_node("Clip", ["dv", "lo", "hi"], ["cl"], name="clip"),
        quant("cl", "y", "s_b"),
    ]
    inits = [c("k", np.array([1.5, -0.75, 2.0]).reshape(1, 3, 1, 1)), c("b", 0.1), c("d", 1.7), c("lo", -0.33), c("hi", 0.5)]
    g, _ = _check(_model(tmp_path, nodes, inits, (1, 3, 4, 4)))
    assert [t.op for t in g.tasks] == ["requant"]  # all folded into one requantization


def test_relu_on_grid_is_a_clip(tmp_path):
    nodes = [helper.make_node("Relu", ["xq"], ["r"], name="relu"), helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    g, _ = _check(_model(tmp_path, nodes, [], (1, 2, 6, 6)))
    assert [t.op for t in g.tasks] == ["clip", "maxpool"]


@pytest.mark.parametrize("pads,ceil", [([1, 1, 1, 1], 0), ([0, 0, 0, 0], 1)])
def test_pooling_variants(tmp_path, pads, ceil):
    nodes = [
        helper.make_node("MaxPool", ["xq"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], pads=pads, ceil_mode=ceil),
        helper.make_node("AveragePool", ["mp"], ["ap"], kernel_shape=[2, 2], strides=[1, 1], pads=pads, count_include_pad=1),
        quant("ap", "a", "s_a"),
        helper.make_node("ReduceMean", ["a"], ["rm"], axes=[2, 3], keepdims=0),
        quant("rm", "y", "s_b"),
    ]
    _check(_model(tmp_path, nodes, [], (1, 3, 9, 9)))


def test_matmul_and_gemm_layouts(tmp_path):
    wn, wi = _wq("w1", (5, 6), 1)
    wn2, wi2 = _wq("w2", (7, 5), 2)
    nodes = [
        wn, helper.make_node("Transpose", ["w1_q"], ["w1t"], perm=[1, 0]),
        helper.make_node("MatMul", ["xq", "w1t"], ["mm"]),
        quant("mm", "h", "s_a"),
        wn2, helper.make_node("Gemm", ["h", "w2_q", "bias"], ["gm"], transB=1, alpha=0.5, beta=2.0),
        quant("gm", "y", "s_b"),
    ]
    _check(_model(tmp_path, nodes, wi + wi2 + [c("bias", np.linspace(-0.2, 0.2, 7))], (2, 6)))


@pytest.mark.parametrize("dil,stride,groups,pads", [(2, 1, 1, [2, 2, 2, 2]), (1, 2, 2, [1, 0, 0, 1]), (1, 1, 4, [0, 0, 0, 0])])
def test_conv_geometry(tmp_path, dil, stride, groups, pads):
    wn, wi = _wq("w", (4, 4 // groups, 3, 3), 3)
    nodes = [wn, helper.make_node("Conv", ["xq", "w_q"], ["cv"], kernel_shape=[3, 3], dilations=[dil, dil], strides=[stride, stride], group=groups, pads=pads),
             quant("cv", "y", "s_a")]
    g, _ = _check(_model(tmp_path, nodes, wi, (1, 4, 9, 9)))
    assert g.tasks[0].op == "conv" and g.tasks[0].attrs["groups"] == groups


def test_concat_of_different_scales_is_refused(tmp_path):
    nodes = [quant("xq", "a", "s_a"), quant("xq", "b", "s_b"), helper.make_node("Concat", ["a", "b"], ["y"], axis=1, name="join")]
    with pytest.raises(HlsgenError, match="join.*different quantization scales"):
        pipeline.load(_model(tmp_path, nodes, [], (1, 2, 3, 3)))


def test_unquantized_conv_input_is_refused(tmp_path):
    wn, wi = _wq("w", (2, 2, 1, 1))
    nodes = [wn, helper.make_node("Conv", ["x", "w_q"], ["cv"], kernel_shape=[1, 1], name="first_conv"), quant("cv", "y", "s_a")]
    with pytest.raises(HlsgenError, match="first_conv.*before any quantizer"):
        pipeline.load(_model(tmp_path, nodes, wi, (1, 2, 3, 3)))


def test_a_clip_at_float32_multiples_of_the_scale_stays_on_the_grid(tmp_path):
    """Clip bounds written as float32(k * scale) with the scale in float64 (a random design's
    [-64, 63] steps of an 8-bit tensor): on the grid within float32's precision, so the clip is an
    integer clip of the quantized tensor and the graph needs no quantizer after it."""
    s = 0.2101
    lo, hi = np.float32(-64 * s), np.float32(63 * s)
    assert abs(float(hi) / float(np.float32(s)) - 63) > 1e-6     # the case: off by more than 1e-6 steps
    p = _model(tmp_path, [quant("xq", "xs", "s_c", name="q_s"),
                          helper.make_node("Clip", ["xs", "lo", "hi"], ["y"], name="clip")],
               [c("s_c", s), c("lo", lo), c("hi", hi)], (1, 4, 3, 3))
    g, _ = _check(p)
    (clip,) = [t for t in g.tasks if t.op == "clip"]
    assert (clip.attrs["lo"], clip.attrs["hi"]) == (-64, 63)
