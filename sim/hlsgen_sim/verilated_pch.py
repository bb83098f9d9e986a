"""Verilator's runtime headers (verilated.h, verilated_dpi.h) precompiled once and shared by
every model built with the same compiler and flags, then the model's make.

Every C++ file of a Verilator model begins by parsing those headers (0.7 s of gcc for a file
that includes them alone), and a model has four such files (its fast and slow code,
Vtop__Dpi.cpp, Vtop__Syms__Slow.cpp). Measured (docs/rtl.md, stop 60): conv_bn_relu's capped
sequential design, its `make sim` with the runtime's objects in the ccache, 11.1 s of CPU
without the shared headers and 5.9 s with them. Verilator's own precompiled header holds the whole
design's classes (90 MB for make demo's design, built anew for every design; runner.py leaves it
out). This one holds the runtime alone, so one build of it serves every design: the make
includes it first (`-include`, gcc's way of taking a precompiled header) in the fast and in the
slow code, each with the flags that code compiles with. A small model, which Verilator makes
one file (VM_PARALLEL_BUILDS 0) compiled without a precompiled header, is built as it was.

    python verilated_pch.py make -C BUILD -f Vtop.mk ...     (runner.py runs it in place of the make)

The headers are built under HLSGEN_PCH_DIR (default: HLSGEN_CACHE_DIR, or $XDG_CACHE_HOME or
~/.cache, then hlsgen/verilator-pch), in a folder per digest of the compiler, its version, the
flags, the Verilator version and its headers' names, sizes and times; the newest KEEP digests
stay. gcc checks that a precompiled header fits the compile (flags, macros) and otherwise reads
the headers as text: a model is the same either way, only slower (-Winvalid-pch says so in the
build's output). Where the header cannot be built, the make runs without it and says why.
HLSGEN_PCH=0 turns it off."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence

NAME = "hlsgen_verilated.h"
HEADER = '// hlsgen: Verilator\'s runtime headers, precompiled once for every model (verilated_pch.py)\n' \
         '#include "verilated.h"\n#include "verilated_dpi.h"\n'
KEEP = 3                     # digests kept (each about 145 MB: a fast and a slow header)
PCH_DIR = "HLSGEN_PCH_DIR"
# the make's variables for the code's compiles (verilated.mk: the rules of VK_OBJS_FAST/SLOW)
QUERY = "hlsgen_pch_flags: ; @printf '%s\\n' '$(VM_PARALLEL_BUILDS)' '$(CXX)' '$(OPT_FAST)' '$(OPT_SLOW)' '$(CXXFLAGS) $(CPPFLAGS)'"


def enabled() -> bool:
    return os.environ.get("HLSGEN_PCH", "1") != "0"


def root() -> Path:
    """The headers' folder: hlsgen's cache folder as hlsgen/backends/jinja.py finds it (written
    out here: an emitted project's sim/ runs without hlsgen), then verilator-pch."""
    base = os.environ.get("HLSGEN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "hlsgen")
    return Path(os.environ.get(PCH_DIR) or os.path.join(base, "verilator-pch"))


def make_flags(make: Sequence[str]) -> Dict[str, str]:
    """The compiler and the flags the model's make compiles its fast and slow code with (the
    same make, asked through --eval)."""
    cmd = [make[0], "-s", "--no-print-directory"] + [a for a in make[1:] if a != "-j" and not a.isdigit()]
    r = subprocess.run(cmd + ["--eval", QUERY, "hlsgen_pch_flags"], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) != 5:
        raise RuntimeError(f"could not read the make's flags ({(r.stderr or r.stdout).strip()[-300:]})")
    parallel, cxx, fast, slow, common = lines
    common = " ".join(f for f in common.split() if f not in ("-MMD", "-MP"))
    return {"parallel": parallel.strip(), "cxx": cxx.strip(), "fast": fast.strip(), "slow": slow.strip(),
            "common": common}


def digest(flags: Dict[str, str]) -> str:
    from importlib import metadata
    try:
        version = metadata.version("verilator")
    except metadata.PackageNotFoundError:
        version = ""
    cc = subprocess.run(flags["cxx"].split() + ["--version"], capture_output=True, text=True).stdout
    # the runtime's headers as installed (gcc does not check them against a precompiled header):
    # every header in the include folders the flags name, by name, size and time
    stamps = []
    for inc in (f[2:] for f in flags["common"].split() if f.startswith("-I") and len(f) > 2):
        if (Path(inc) / "verilated.h").is_file():
            stamps += [f"{h}:{h.stat().st_size}:{h.stat().st_mtime_ns}" for h in sorted(Path(inc).glob("*.h"))]
    h = hashlib.sha256("\0".join([flags["cxx"], cc, flags["fast"], flags["slow"], flags["common"], version,
                                  HEADER, *stamps]).encode())
    return h.hexdigest()[:24]


def build(folder: Path, opt: str, flags: Dict[str, str], cwd: str) -> Path:
    """folder/NAME and its precompiled form (built once: concurrent builds each write their own
    file and the last rename wins, every one whole)."""
    header = folder / NAME
    gch = folder / (NAME + ".gch")
    if gch.is_file():
        return header
    folder.mkdir(parents=True, exist_ok=True)
    if not header.is_file():
        tmp = folder / f"{NAME}.{os.getpid()}.tmp"
        tmp.write_text(HEADER)
        os.replace(tmp, header)
    tmp = folder / f"{NAME}.gch.{os.getpid()}.tmp"
    cmd = flags["cxx"].split() + opt.split() + flags["common"].split() + ["-x", "c++-header", str(header), "-o", str(tmp)]
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{' '.join(cmd[:2])} ... failed: {r.stderr.strip()[-300:]}")
    os.replace(tmp, gch)
    return header


def prune(top: Path, keep: str) -> None:
    """Keep the KEEP digests used most recently (always `keep`)."""
    folders = sorted((d for d in top.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime, reverse=True)
    for d in [d for d in folders if d.name != keep][KEEP - 1:]:
        shutil.rmtree(d, ignore_errors=True)


def pch_args(make: Sequence[str]) -> List[str]:
    """The make's arguments that include the shared headers in the fast and the slow code (none
    where Verilator made the model one file, as it does for a small one: VM_PARALLEL_BUILDS 0,
    whose compile takes no precompiled header)."""
    cwd = make[make.index("-C") + 1] if "-C" in make else "."
    flags = make_flags(make)
    if flags["parallel"] != "1":
        return []
    key = digest(flags)
    top = root()
    if not re.fullmatch(r"[\w./+-]+", str(top)):         # the make's recipes pass it to a shell unquoted
        raise RuntimeError(f"{PCH_DIR} {str(top)!r} has characters a make recipe would split or expand; "
                           f"set {PCH_DIR} to a plain path")
    fast = build(top / key / "fast", flags["fast"], flags, cwd)
    slow = build(top / key / "slow", flags["slow"], flags, cwd)
    os.utime(top / key)
    prune(top, key)
    return [f"VK_PCH_I_FAST=-include {fast} -Winvalid-pch", f"VK_PCH_I_SLOW=-include {slow} -Winvalid-pch"]


def main(make: Sequence[str]) -> int:
    make = [a for a in make if not a.startswith(("VK_PCH_I_FAST=", "VK_PCH_I_SLOW="))]
    extra: List[str] = []
    if enabled():
        try:
            extra = pch_args(make)
        except (OSError, RuntimeError) as exc:
            print(f"sim: Verilator's runtime headers not precompiled ({exc}); compiling without", flush=True)
    return subprocess.run(list(make) + (extra or ["VK_PCH_I_FAST=", "VK_PCH_I_SLOW="])).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
