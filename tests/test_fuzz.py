"""Seeded random CNNs (hlsgen/zoo/randnets.py) through the whole flow: `hlsgen build` for the
seed's random target, `make csim` and `make sim` (with the bank plan checked against the trace
of every access), bit-exact with the golden and within 10% of the modeled cycles.
`benchmarks/fuzz_designs.py` runs many seeds; the seeds here are those that found a defect
(docs/rtl.md, "Random designs"), each named with what it found."""
import json
import subprocess

import onnx
import pytest

from conftest import ROOT, run_cli
from hlsgen.zoo.randnets import BLOCKS, random_net, random_target

SMALL = ROOT / "designs" / "devices" / "small.yaml"

FOUND = {
    4: "a 3x3 conv's reads at an output position the bank plan did not sample took 3 words of a 2-port bank",
    17: "a split's outputs leave one after another (the consumer of the second waited)",
    27: "a global pool at PE < C reduces one channel group after another",
    28: "a padded 3x3 conv's first row waits for 2 input rows, not 3",
    52: "a concat's rows complete only during its last input, so the conv after it waited",
    80: "a concat's and a slice's 63 lanes step through 3 rows of a 3-channel input at a time",
    124: "a sequential core's slice gathers only the channel it keeps, not its whole input",
    154: "a sequential stage of data movement alone: its unused requantizer tail failed g++ -Werror in csim",
}


def test_random_nets_are_seeded_and_cover_every_block():
    a, notes = random_net(3)
    b, _ = random_net(3)
    assert a.SerializeToString() == b.SerializeToString()
    assert random_net(4)[0].SerializeToString() != a.SerializeToString()
    assert random_target(3, SMALL) == random_target(3, SMALL)
    seen = " ".join(" ".join(random_net(s)[1]) for s in range(60))
    words = {"conv": "conv ", "dwconv": "depthwise", "maxpool": "maxpool", "avgpool": "avgpool", "residual": "residual",
             "concat": "concat", "shuffle": "channel shuffle", "upsample": "upsample", "slice": "slice channels",
             "split_swap": "swapped", "clip": "clip"}
    assert set(words) == set(BLOCKS)
    missing = [k for k, w in words.items() if w not in seen]
    assert not missing, missing
    assert "global pool + linear" in seen and "input 2x" in seen


@pytest.mark.parametrize("seed", sorted(FOUND))
def test_a_random_design_is_bit_exact_and_as_fast_as_modeled(tmp_path, seed):
    model, notes = random_net(seed)
    onnx.save(model, tmp_path / "model.onnx")
    dev, opts, label = random_target(seed, SMALL)
    out = tmp_path / "prj"
    b = run_cli("build", tmp_path / "model.onnx", "--device", dev, *opts, "-o", out)
    assert b.returncode == 0, b.stderr
    why = f"seed {seed} ({label}: {'; '.join(notes)}) found: {FOUND[seed]}"
    r = subprocess.run(["make", "-C", str(out), "csim"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and json.loads((out / "results" / "csim.json").read_text())["passed"], why
    r = subprocess.run(["make", "-C", str(out), "sim", "SIM_ARGS=--banks"], capture_output=True, text=True, timeout=900)
    res = json.loads((out / "results" / "sim.json").read_text())
    assert r.returncode == 0 and res["passed"] and res["mismatches"] == 0, why + "\n" + r.stdout[-3000:]
    assert "the trace keeps to it" in r.stdout and "every access kept to them" in r.stdout, why + "\n" + r.stdout[-3000:]
    assert abs(res["cycle_error"]) <= 0.10, (why, res["cycles"], res["predicted_cycles"])
