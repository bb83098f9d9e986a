"""Golden vs the float Brevitas model, for every Foundation test net, both export formats
and both exporters. Thresholds from the Foundation issue:
end to end >= 99% identical, none more than 1 LSB apart; layer by layer >= 99.9%, <= 1 LSB."""
import numpy as np
import pytest

from hlsgen import pipeline
from hlsgen.zoo.testnets import NETS

FOUNDATION_NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8", "demo_cnn", "shuffle_block"]
EXPORTS = [("qonnx", False), ("qcdq", False),
           pytest.param("qonnx", True, marks=pytest.mark.slow), pytest.param("qcdq", True, marks=pytest.mark.slow)]


def _compare(path, seed=0):
    g = pipeline.load(path)
    floats = pipeline.float_inputs(g, [], seed)
    ints = pipeline.quantize_inputs(g, floats)
    return g, pipeline.compare(g, path, floats, ints)[0]


@pytest.mark.parametrize("fmt,dynamo", EXPORTS)
@pytest.mark.parametrize("name", FOUNDATION_NETS)
def test_agreement_with_float_model(exported, name, fmt, dynamo):
    g, rep = _compare(exported(name, fmt, dynamo))
    assert rep["outputs"], "no output compared"
    assert rep["exact_fraction"] >= 0.99, rep["outputs"]
    assert rep["max_abs_lsb"] <= 1, rep["outputs"]
    compared = {r["name"] for r in rep["tensors"]}
    # every activation the IR computes for an ONNX tensor was compared (Trunc's internal
    # intermediate has no ONNX counterpart)
    produced = {o for t in g.tasks for o in t.outputs if g.tensors[o].origin is not None}
    assert len(produced) >= len(g.tasks) - 1
    assert produced <= compared, produced - compared
    for r in rep["tensors"]:
        assert r["layer_by_layer"]["exact_fraction"] >= 0.999, r
        assert r["layer_by_layer"]["max_abs_lsb"] <= 1, r
        assert r["end_to_end"]["max_abs_lsb"] <= 1, r


@pytest.mark.parametrize("fmt", ["qonnx", "qcdq"])
def test_two_ports_agrees_with_the_float_model(exported, fmt):
    """two_ports (two graph inputs, two outputs, for the emitted kernels' ports): every output
    and every activation exactly as Brevitas computes them."""
    g, rep = _compare(exported("two_ports", fmt))
    assert len(g.inputs) == 2 and len(g.outputs) == 2 and len(rep["outputs"]) == 2
    assert rep["exact_fraction"] == 1.0 and rep["max_abs_lsb"] == 0, rep["outputs"]


# Brevitas exports TruncAvgPool2d as a Trunc node in QONNX but as a plain requantization in
# QCDQ: two different float models, so shuffle_block is left out of this cross-check.
@pytest.mark.parametrize("name", [n for n in FOUNDATION_NETS if n != "shuffle_block"])
def test_formats_lower_to_the_same_integers(exported, name):
    """QONNX and QCDQ exports of one network must give the same golden outputs bit for bit."""
    outs = []
    for fmt in ("qonnx", "qcdq"):
        g = pipeline.load(exported(name, fmt))
        ints = pipeline.quantize_inputs(g, pipeline.float_inputs(g, [], 3))
        vals = pipeline.run_golden(g, ints)
        outs.append([vals[o] for o in g.outputs])
        ops = sorted(t.op for t in g.tasks)
        if fmt == "qonnx":
            first_ops = ops
        else:
            assert ops == first_ops
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_agreement_other_inputs(exported, seed):
    _, rep = _compare(exported("demo_cnn"), seed)
    assert rep["exact_fraction"] >= 0.99 and rep["max_abs_lsb"] <= 1


def test_lowered_structure(exported):
    g = pipeline.load(exported("demo_cnn"))
    ops = [t.op for t in g.tasks]
    assert ops.count("conv") == 3 and "maxpool" in ops and "add" in ops and "avgpool" in ops and ops[-1] == "linear"
    convs = [t for t in g.tasks if t.op == "conv"]
    # BN folded: no task left for it, and the depthwise conv kept its groups
    assert any(t.attrs["groups"] == 16 for t in convs)
    stem_w = g.tensors[convs[0].inputs[1]]
    assert stem_w.dtype.bits == 8 and stem_w.quant.per_channel
    dw_w = g.tensors[convs[1].inputs[1]]
    assert dw_w.dtype.bits == 4 and dw_w.data.min() >= -7 and dw_w.data.max() <= 7


def test_export_opsets(exported):
    """TorchScript QCDQ exports at opset 13, dynamo at 18, QONNX TorchScript at 20."""
    import onnx

    def opset(p):
        return next(o.version for o in onnx.load(p).opset_import if o.domain in ("", "ai.onnx"))

    assert opset(exported("conv_bn_relu", "qcdq")) == 13
    assert opset(exported("conv_bn_relu", "qonnx")) >= 19


@pytest.mark.parametrize("version", [19, 21, 22])
def test_higher_opsets(exported, tmp_path, version):
    import onnx

    m = onnx.load(exported("demo_cnn", "qcdq"))
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = version
    m.ir_version = 10
    p = tmp_path / f"opset{version}.onnx"
    onnx.save(m, p)
    _, rep = _compare(p)
    assert rep["exact_fraction"] >= 0.99 and rep["max_abs_lsb"] <= 1


def test_compare_detects_a_one_lsb_error(exported):
    """Negative control: shift one task's bias by exactly one output LSB; the comparison must
    see it in that layer (layer by layer) and the golden output must change."""
    path = exported("demo_cnn")
    g = pipeline.load(path)
    task = next(t for t in g.tasks if t.op == "conv")
    rq = task.attrs["requant"]
    rq.bias = rq.bias + (np.int64(1) << np.asarray(rq.shift, dtype=np.int64))
    floats = pipeline.float_inputs(g, [], 0)
    rep, _ = pipeline.compare(g, path, floats, pipeline.quantize_inputs(g, floats))
    row = next(r for r in rep["tensors"] if r["task"] == task.name)
    assert row["layer_by_layer"]["exact_fraction"] < 0.9
    assert row["layer_by_layer"]["max_abs_lsb"] == 1


@pytest.mark.parametrize("name", ["demo_cnn", "shuffle_block"])
def test_float_run_infers_shapes_without_its_weights_as_qonnx_does_with_them(exported, monkeypatch, name):
    """The float run infers shapes on the model with its weights lifted out (float_ref._infer_shapes):
    every tensor it computes is, bit for bit, what qonnx computes after its own InferShapes on the
    whole model. Weights of more than 16 elements are lifted here (4096 by default), so that the
    test nets' convolution and linear weights are."""
    import onnx
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx
    from qonnx.transformation.infer_shapes import InferShapes

    from hlsgen.verify import float_ref

    path = exported(name, "qonnx")
    g = pipeline.load(path)
    feeds = pipeline.float_inputs(g, [], 0)
    model = onnx.load(str(path))
    monkeypatch.setattr(float_ref, "LIFTED_ELEMENTS", 16)
    lifted = [t.name for t in model.graph.initializer if int(np.prod(t.dims)) > 16]
    assert lifted and float_ref._in_order(model.graph)
    ours = float_ref.run_float(model, feeds)
    m = float_ref._with_input_shapes(model, {k: np.asarray(v, dtype=np.float32) for k, v in feeds.items()})
    inits = {t.name for t in m.graph.initializer}
    real = [i for i in m.graph.input if i.name not in inits]
    del m.graph.input[:]
    m.graph.input.extend(real)
    theirs = execute_onnx(ModelWrapper(m).transform(InferShapes()), feeds, return_full_exec_context=True)
    computed = {o for n in model.graph.node for o in n.output}
    assert computed <= set(ours) and computed <= set(theirs)
    for k in sorted(computed):
        assert ours[k].shape == theirs[k].shape and np.array_equal(ours[k], theirs[k]), k
    # a model whose nodes are out of order goes through qonnx's whole transform, as before
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(reversed(nodes))
    assert not float_ref._in_order(model.graph)
