"""The hlsgen CLI: inspect, run, and the bad-input contract (one line, exit 2, nothing written)."""
import json

import numpy as np
import onnx
import pytest
from onnx import helper

from conftest import run_cli
from onnx_builders import relu_net


def test_inspect_table_and_json(exported):
    path = exported("demo_cnn")
    r = run_cli("inspect", path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "task", "op"]
    assert any("total: 10 tasks" in line for line in lines)
    j = run_cli("inspect", path, "--json")
    rep = json.loads(j.stdout)
    assert len(rep["tasks"]) == 10
    stem = rep["tasks"][0]
    assert stem["op"] == "conv" and stem["outputs"][0]["shape"] == [1, 16, 16, 16]
    assert stem["weights"][0]["dtype"] == "int8" and stem["weights"][0]["scale"] == "per-channel"
    assert stem["macs"] == 16 * 16 * 16 * 3 * 3 * 3
    assert rep["totals"]["macs"] == sum(t["macs"] for t in rep["tasks"])
    assert str(rep["totals"]["macs"]) in r.stdout.replace(",", "")


def test_run_compare_json(exported, tmp_path):
    path = exported("gap_linear", "qcdq")
    out = tmp_path / "out.npy"
    r = run_cli("run", path, "--compare", "--json", "-o", out, "--seed", "4")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout[r.stdout.index("{"):])
    assert rep["exact_fraction"] >= 0.99 and rep["max_abs_lsb"] <= 1
    assert isinstance(rep["tensors"], list) and len(rep["tensors"]) >= 4
    assert np.load(out).shape == (1, 10)


def test_run_with_input_file(exported, tmp_path):
    path = exported("mlp_w8")
    x = np.random.RandomState(7).standard_normal((1, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    a = run_cli("run", path, "--input", tmp_path / "x.npy", "--json")
    b = run_cli("run", path, "--input", tmp_path / "x.npy", "--json", "--seed", "99")
    assert a.returncode == 0, a.stderr
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    assert ja["golden_outputs"] == jb["golden_outputs"]  # the file, not the seed, decides
    bad = run_cli("run", path, "--input", f"nope={tmp_path / 'x.npy'}")
    assert bad.returncode == 2 and "no input 'nope'" in bad.stderr


def _assert_user_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("hlsgen: error: ")
    for n in needles:
        assert n in err, err


def _bad_models(tmp_path):
    """name -> (path, expected substrings)."""
    cases = {}
    p = tmp_path / "text.onnx"
    p.write_text("this is not a model\n")
    cases["not_onnx"] = (p, ["not a readable ONNX model"])

    good = relu_net()
    full = good.SerializeToString()
    p = tmp_path / "truncated.onnx"
    p.write_bytes(full[: len(full) // 2])
    cases["truncated"] = (p, ["truncated"])

    p = tmp_path / "unsupported.onnx"
    onnx.save(relu_net(middle_op="Hardmax", node_name="my_hardmax"), p)
    cases["unsupported_op"] = (p, ["my_hardmax", "Hardmax", "supported ops:", "Conv"])

    m = relu_net(input_dims=("batch", 4, 6, 6))
    p = tmp_path / "dynamic.onnx"
    onnx.save(m, p)
    cases["dynamic_shape"] = (p, ["'x'", "batch", "--shape x="])

    p = tmp_path / "scale_input.onnx"
    onnx.save(relu_net(scale_is_input=True), p)
    cases["nonconstant_scale"] = (p, ["out_quant", "scale", "not a constant"])

    p = tmp_path / "wide.onnx"
    onnx.save(relu_net(act_bits=24), p)
    cases["bits_above_16"] = (p, ["out_quant", "24-bit", "at most 16"])

    m = relu_net()
    sub = tmp_path / "ext"
    sub.mkdir()
    p = sub / "external.onnx"
    onnx.save(m, p, save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    (sub / "weights.bin").unlink()
    cases["missing_external_data"] = (p, ["weights.bin", "not found"])
    return cases


@pytest.mark.parametrize("case", ["not_onnx", "truncated", "unsupported_op", "dynamic_shape", "nonconstant_scale", "bits_above_16", "missing_external_data"])
@pytest.mark.parametrize("command", ["inspect", "run"])
def test_bad_input(tmp_path, case, command):
    path, needles = _bad_models(tmp_path)[case]
    out = tmp_path / "out" / "y.npy"
    args = [command, path] + (["-o", out] if command == "run" else [])
    r = run_cli(*args)
    _assert_user_error(r, *needles)
    assert not out.exists() and not out.parent.exists()


def test_dynamic_shape_fixed_with_shape_option(tmp_path):
    p = tmp_path / "dynamic.onnx"
    onnx.save(relu_net(input_dims=("batch", 4, 6, 6)), p)
    r = run_cli("run", p, "--shape", "x=2,4,6,6", "--compare", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["golden_outputs"][0]["shape"] == [2, 4, 6, 6]
    assert rep["exact_fraction"] >= 0.99 and rep["max_abs_lsb"] <= 1


def test_external_data_model_loads(tmp_path):
    m = relu_net()
    p = tmp_path / "external.onnx"
    onnx.save(m, p, save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    r = run_cli("run", p, "--compare", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["max_abs_lsb"] <= 1


def test_opset_out_of_range(tmp_path):
    m = relu_net()
    m.opset_import[0].version = 11
    p = tmp_path / "old.onnx"
    onnx.save(m, p)
    _assert_user_error(run_cli("inspect", p), "opset 11", "13..22")


def test_help_on_every_subcommand():
    for cmd in ([], ["inspect"], ["run"]):
        r = run_cli(*cmd, "--help")
        assert r.returncode == 0 and "usage:" in r.stdout


def test_hostile_names_are_displayed_escaped(tmp_path):
    """Node and tensor names from the ONNX file are data: a newline or $(...) in them must not
    break the table (one line per task) and is shown escaped."""
    m = relu_net(input_name='x"; $(touch pwned)\n#include <x>', node_name="act\nline2 $(id)")
    p = tmp_path / "hostile.onnx"
    onnx.save(m, p)
    r = run_cli("inspect", p, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    body = [line for line in r.stdout.splitlines() if line[:3].strip().isdigit()]
    assert len(body) == 1  # conv + relu + quant fused into one task, on one line
    assert "\\n" in r.stdout and "inputs: x\"; $(touch pwned)\\n#include <x>" in r.stdout
    assert not (tmp_path / "pwned").exists()
    j = run_cli("run", p, "--compare", "--json", cwd=tmp_path)
    assert j.returncode == 0, j.stderr
    assert json.loads(j.stdout)["max_abs_lsb"] <= 1
