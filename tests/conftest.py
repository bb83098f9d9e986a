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
