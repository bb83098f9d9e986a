import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HLSGEN = [sys.executable, "-m", "hlsgen"]


@pytest.fixture(scope="session")
def export_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("exports")


@pytest.fixture(scope="session")
def exported(export_dir):
    """exported(name, fmt, dynamo) -> path of a seeded Brevitas export (built once per session)."""
    from hlsgen.zoo.testnets import export

    cache = {}

    def get(name, fmt="qonnx", dynamo=False):
        key = (name, fmt, dynamo)
        if key not in cache:
            cache[key] = export(name, export_dir / f"{name}_{fmt}_{'dyn' if dynamo else 'ts'}.onnx", fmt, dynamo)
        return cache[key]

    return get


def run_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(HLSGEN + [str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def pytest_terminal_summary(terminalreporter):
    """How many Verilator models the run built and how many simulations took one another test
    had built (HLSGEN_MODEL_CACHE, which make test sets)."""
    cache = os.environ.get("HLSGEN_MODEL_CACHE")
    if not cache or not Path(cache).is_dir():
        return
    sys.path.insert(0, str(ROOT / "sim"))
    from hlsgen_sim.runner import model_cache_counts

    built, reused = model_cache_counts(Path(cache))
    terminalreporter.write_line(f"Verilator models: {built} built, {reused} simulations took one another test had built "
                                f"(HLSGEN_MODEL_CACHE={cache})")


def modeled_traffic_is_the_rtl_channels(out: Path) -> None:
    """The off-chip bytes the cost model charges each task (report.json) are those its RTL's
    m_axi channels move (sim/design.json: beats of the bundle's data width, a channel's last beat
    partly filled), containers included: a 3-bit activation off chip takes a byte an element."""
    import json

    from hlsgen.backends.vitis.cpp import label

    report = json.loads((out / "report.json").read_text())
    design = json.loads((out / "sim" / "design.json").read_text())
    modeled = {}          # by the task's label, as design.json names a channel's task
    for st in report["stages"]:
        for t in st["tasks"]:
            modeled[label(t["name"], 40)] = modeled.get(label(t["name"], 40), 0) + t["offchip_bytes"]
    moved, chans = {}, {}
    for b in design["bundles"]:
        for c in b["channels"]:
            moved[c["task"]] = moved.get(c["task"], 0) + c["beats"] * b["data_bits"] // 8
            chans[c["task"]] = chans.get(c["task"], 0) + 1
    for name, nbytes in modeled.items():
        got, k = moved.get(name, 0), chans.get(name, 0)
        assert nbytes <= got < nbytes + max(1, k) * max([b["data_bits"] // 8 for b in design["bundles"]] or [1]), \
            (name, "modeled bytes", nbytes, "moved by its channels", got, "channels", k)
