"""The emitted Vitis HLS project: IR + Schedule + golden data -> files (OUT/).

    OUT/hls/        kernel.cpp, kernel.h, movers.cpp, tb.cpp, hlsgen_requant.h, hlsgen_axis.h
    OUT/scripts/    project.tcl, csim.tcl, csynth.tcl, cosim.tcl, export.tcl, vpp.cfg
    OUT/host/       host.cpp (XRT native API)
    OUT/rtl/        hlsgen_top.sv, hlsgen_core.sv and the core's $readmemh images (docs/rtl.md)
    OUT/sim/        design.json and the cocotb testbench library (make sim)
    OUT/data/       in*.bin, out*.bin (golden), weights.bin (off-chip weights), manifest.json
    OUT/Makefile    csim | sim | csynth | cosim | export | xclbin | host | clean
    OUT/report.json the schedule (modeled figures) + model, device, hlsgen version, the build's choices
    OUT/report.md   the same, readable

Every file name is fixed or built from indices: no ONNX name reaches a path, the Makefile or a
script; in C++ and Tcl they appear only as sanitized identifiers and labels. The tree is
written to a temporary folder next to OUT and renamed into place only when complete, so a
failed build leaves no partial OUT/. Nothing time- or path-dependent goes into the files
except the Python interpreter the Makefile uses to find the ap_types headers, so building
twice in one environment gives byte-identical trees.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from ... import __version__
from ...errors import HlsgenError
from ...ir.graph import Graph
from ...schedule.schedule import Schedule
from .cpp import TEMPLATE_DIR
from .cpp import label as _label
from .kernel import MAX_RANK, WORD, KernelBuilder

STATIC_FILES = ("hlsgen_requant.h", "hlsgen_axis.h")


def _env():
    from ..jinja import environment
    return environment(str(TEMPLATE_DIR))


def encode(values: np.ndarray, cw: int) -> bytes:
    """Integers -> little-endian words of cw bits, as the kernel writes ap_int<cw>(T(v)):
    sign-extended for signed types, zero-extended for unsigned ones."""
    v = np.asarray(values, dtype=np.int64).reshape(-1)
    if cw == 64:
        return v.astype("<i8").tobytes()
    mask = (1 << cw) - 1
    return (v & mask).astype({8: "<u1", 16: "<u2", 32: "<u4"}[cw]).tobytes()


def _vpp_sp(k: Dict, device) -> list:
    """v++ memory-bank mapping of the off-chip bundles (Alveo and Versal data-center cards)."""
    if device.family == "zynq_ultrascale_plus":
        return []                      # embedded platforms: the PS DDR, no bank mapping
    mem = device.main_memory
    bank = "HBM" if mem.kind.upper().startswith("HBM") else "DDR"
    out = [f"hlsgen_kernel_1.m_axi_{b}:{bank}[{int(b[4:]) % mem.channels}]" for b in k["bundles"]]
    n = len(k["bundles"])
    for i, s in enumerate(k["inputs"]):
        out.append(f"mm2s_{s.port}_1.m_axi_gmem:{bank}[{(n + i) % mem.channels}]")
    for i, s in enumerate(k["outputs"]):
        out.append(f"s2mm_{s.port}_1.m_axi_gmem:{bank}[{(n + len(k['inputs']) + i) % mem.channels}]")
    return out


def render(graph: Graph, sched: Schedule, device, values: Dict[str, np.ndarray],
           rtl_fit: Optional[Dict] = None) -> Dict[str, bytes]:
    """Every file of the project, by relative path. `rtl_fit`: where the build steered to this
    schedule because the first one's RTL as modeled did not fit (hlsgen build --rtl-fit steer),
    what it chose instead of what, which the reports say."""
    kb = KernelBuilder(graph, sched, device)
    k = kb.context()
    for s in k["outputs"] + k["io_outputs"]:
        t = graph.tensors[s.tensor]
        s.rank, s.shape = len(t.shape), list(t.shape)
    n_streams = len(k["inputs"]) + len(k["outputs"])
    for i, s in enumerate(k["spills"]):
        s.arg = n_streams + i
    k["wmem_arg"] = n_streams + len(k["spills"])
    top = ([f"hls::stream<hlsgen::axis_word<{s.tw}> > &{s.port}" for s in k["inputs"] + k["outputs"]] +
           [s.param() for s in k["spills"]] + ([f"const ap_int<{kb.wcw}> *wmem"] if k["weights_offchip"] else []))
    top_args = ([s.port for s in k["inputs"] + k["outputs"]] +
                [s.var for s in k["spills"]] + (["wmem"] if k["weights_offchip"] else []))
    ctx = {"k": k, "version": __version__, "device": device.name, "mode": sched.mode, "rank": MAX_RANK, "F": WORD,
           "top_ports": ", ".join(top), "top_args": ", ".join(top_args), "platform": device.platform,
           "part": device.part, "period_ns": round(1000.0 / sched.clock_mhz, 3), "clock_hz": int(sched.clock_mhz * 1e6),
           "python": sys.executable, "sp": _vpp_sp(k, device),
           "mover_xos": " ".join([f"movers_prj/movers/impl/mm2s_{s.port}.xo" for s in k["inputs"]] +
                                 [f"movers_prj/movers/impl/s2mm_{s.port}.xo" for s in k["outputs"]])}
    env = _env()
    files: Dict[str, bytes] = {}
    for tpl, path in (("kernel.cpp.j2", "hls/kernel.cpp"), ("kernel.h.j2", "hls/kernel.h"),
                      ("movers.cpp.j2", "hls/movers.cpp"), ("tb.cpp.j2", "hls/tb.cpp"),
                      ("project.tcl.j2", "scripts/project.tcl"), ("csim.tcl.j2", "scripts/csim.tcl"),
                      ("csynth.tcl.j2", "scripts/csynth.tcl"), ("cosim.tcl.j2", "scripts/cosim.tcl"),
                      ("export.tcl.j2", "scripts/export.tcl"), ("vpp.cfg.j2", "scripts/vpp.cfg"),
                      ("host.cpp.j2", "host/host.cpp"), ("Makefile.j2", "Makefile")):
        files[path] = env.get_template(tpl).render(**ctx).encode()
    for name in STATIC_FILES:
        files[f"hls/{name}"] = (TEMPLATE_DIR / name).read_bytes()
    manifest = {"inputs": [], "outputs": [], "weights": None}
    # the graph's inputs and outputs in graph order, each on an AXI4-Stream port or a host buffer
    # in off-chip memory (an m_axi pointer argument), named in<k> / out<k> by its place either way
    for s in (kb.stores[n] for n in graph.inputs):
        files[f"data/{s.port}.bin"] = encode(values[s.tensor], s.cw)
        manifest["inputs"].append({"file": f"{s.port}.bin", "port": s.port, "tensor": s.tensor, "ctype": s.ctype,
                                   "shape": list(graph.tensors[s.tensor].shape), "word_bits": s.cw,
                                   "interface": "m_axi" if s.io else "axis"})
    for s in (kb.stores[n] for n in graph.outputs):
        files[f"data/{s.port}.bin"] = encode(values[s.tensor], s.cw)
        manifest["outputs"].append({"file": f"{s.port}.bin", "port": s.port, "tensor": s.tensor, "ctype": s.ctype,
                                    "shape": s.shape, "word_bits": s.cw, "interface": "m_axi" if s.io else "axis"})
    if k["weights_offchip"]:
        files["data/weights.bin"] = encode(kb.weight_image, kb.wcw)
        manifest["weights"] = {"file": "weights.bin", "words": int(kb.weight_image.size), "word_bits": kb.wcw,
                               "offsets": {name: off for name, off in kb.woff.items()}}
    files["data/manifest.json"] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    rtl, banks, cores, top = render_rtl(graph, sched, device, k, kb)
    files.update(rtl)
    report = sched.to_json(device)
    report["hlsgen_version"] = __version__
    report["model_name"] = graph.name
    report["build"] = build_facts(k)
    report["rtl_act_mem_banks"] = {key: banks[key] for key in ("figures", "served", "banks", "words", "region_words",
                                                               "storage", "logic", "decode", "whole_storage",
                                                               "paths", "full_paths")}
    report["rtl_synthesis_model"] = rtl_synthesis_model(cores, banks, device, top)
    report["rtl_fit_steered"] = rtl_fit
    files["report.json"] = (json.dumps(report, indent=2, sort_keys=True) + "\n").encode()
    files["report.md"] = report_md(graph, sched, device, k, banks, report["rtl_synthesis_model"], rtl_fit).encode()
    return files


def share_text(share: float) -> str:
    """A share of the device: 99.5% is not 100%, nor 100.4%."""
    return f"{share:.1%}" if 0.99 < share < 1.01 else f"{share:.0%}"


def rtl_synthesis_model(cores: List[Dict], banks: Dict, device, top: Dict) -> Dict:
    """The RTL as synthesis builds it, MODELED: each core whole (the fit hlsgen.backends.rtl.core.
    CORE_FIT: control, address generation, tables and datapath) beside the cost model's datapath
    for it, the activation memory (its banks' storage, routing and decode: the bank plan's
    model), the top's m_axi engines (offchip.M_AXI_FIT, one a bundle), the rest of the top's own
    logic (top.TOP_FIT: AXI4-Lite control, channel addresses and tables, row counters, the
    elements it moves, stage sequencing), and their sum beside the device. top: render_rtl's
    (the bundles, and top.top_inputs)."""
    from ..rtl.banking import unserved
    from ..rtl.offchip import m_axi_logic
    from ..rtl.top import top_logic
    mem = memory_model(banks)
    why = unserved(banks)
    mx = m_axi_logic(top["bundles"])
    own = dict(top_logic(top["inputs"]), inputs=top["inputs"])
    core_sum = {"dsp": sum(c["model"]["dsp"] for c in cores), "lut": sum(c["fitted"]["lut"] for c in cores),
                "ff": sum(c["fitted"]["ff"] for c in cores)}
    whole = {"dsp": core_sum["dsp"], "bram18": mem["bram18"], "uram": mem["uram"],
             "lut": core_sum["lut"] + mem["lut"] + mx["lut"] + own["lut"],
             "ff": core_sum["ff"] + mem["ff"] + mx["ff"] + own["ff"]}
    have = {k: int(device.resource(k)) for k in whole}
    return {"figures": "MODELED: each core whole as Yosys synth_xilinx builds hlsgen_core (CORE_FIT, CORE_FF_FIT, "
                       "fitted on synthesized cores: benchmarks/core_fit.py), the activation memory as the bank plan "
                       "prices it (benchmarks/bank_fit.py, benchmarks/decode_fit.py), the top's m_axi engines "
                       "(M_AXI_FIT, fitted on synthesized engines: benchmarks/m_axi_fit.py) and the rest of the top's "
                       "own logic (TOP_FIT, fitted on synthesized designs, their top less their cores and engines: "
                       "benchmarks/top_fit.py); `make synth-yosys SCOPE=design` synthesizes all of it",
            "cores": [{"index": c["index"], "stage": c["stage"], "tasks": c["what"], "datapath_model": c["model"],
                       "fitted": c["fitted"]} for c in cores],
            "cores_total": core_sum, "memory": mem, "m_axi": mx, "top": own, "whole": whole,
            "share_of_device": {k: (round(whole[k] / have[k], 4) if have[k] else None) for k in whole},
            # a memory whose plan leaves some cycle more words of a bank than its ports would drop
            # accesses: such RTL computes wrong results, so it does not fit whatever its size
            "memory_unserved": why,
            "fits": all(whole[k] <= have[k] for k in whole) and why is None}


def memory_model(b: Dict) -> Dict[str, int]:
    """The activation memory as synthesis builds it, MODELED: its banks' storage, their routing
    and the top memory's decode (the bank plan's figures)."""
    return {k: b["storage"][k] + b["logic"][k] + b["decode"].get(k, 0) for k in ("bram18", "uram", "lut", "ff")}


def render_rtl(graph: Graph, sched: Schedule, device, k: Dict, kb: KernelBuilder
               ) -> Tuple[Dict[str, bytes], Dict, List[Dict], Dict]:
    """OUT/rtl (the core, its memory images, the top) and OUT/sim (the cocotb testbench), the
    banks planned for the activation memory (rtl/banking.py), the cores (rtl/core.py) and the
    top's m_axi bundles and what its own logic is priced on (rtl/top.py), which the reports show."""
    from ..rtl.act_mem import act_mem_ports, bank_memory, decode_inputs, decode_logic
    from ..rtl.core import build_core, word_package
    from ..rtl.modules import RTL_DIR, mem_text
    from ..rtl.top import top_inputs

    sim_lib = Path(__file__).resolve().parents[3] / "sim" / "hlsgen_sim"
    files: Dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as work:
        core = build_core(graph, sched, device, Path(work), kb)
        for p in sorted(Path(work).iterdir()):
            files[f"rtl/{p.name}"] = p.read_bytes()
    for name in ("hlsgen_rq_tail.sv", "hlsgen_core_dp.sv", "hlsgen_core.sv", "hlsgen_axilite_ctrl.sv", "hlsgen_m_axi.sv"):
        files[f"rtl/{name}"] = (RTL_DIR / name).read_bytes()
    files["rtl/hlsgen_word_pkg.sv"] = word_package().encode()
    amem = act_mem_ports(core)
    # the memory in its planned banks: a memory per region (and copy), its image where not zero
    banked = bank_memory(amem, core["banking"], core["mem_image"])
    # hlsgen_top_mem's own logic around the banks (its compares, splits and picks), MODELED
    dec = decode_inputs(banked["mems"], int(amem["AB"]), int(amem["SB"]))
    core["banking"]["decode"] = dict(decode_logic(dec), inputs=dec)
    for name, words in banked["images"].items():
        files[f"rtl/{name}"] = mem_text(words, int(core["sb"])).encode()
    ctx = dict(core, version=__version__, model=k["model"], amem=amem, mems=banked["mems"], cb=banked["CB"])
    files["rtl/hlsgen_act_mem.sv"] = (RTL_DIR / "hlsgen_act_mem.sv").read_bytes()
    files["rtl/hlsgen_bank_mem.sv"] = (RTL_DIR / "hlsgen_bank_mem.sv").read_bytes()
    env = _env_rtl()
    # the activation memory in its planned banks (the design's), and the same memory as one array
    # (`make sim SIM_ARGS=--flat-mem`, and the black box `make synth-yosys SCOPE=top` keeps)
    files["rtl/hlsgen_top_mem.sv"] = env.get_template("top_mem_banks.sv.j2").render(**ctx).encode()
    files["rtl/hlsgen_top_mem_flat.sv"] = env.get_template("top_mem.sv.j2").render(**ctx).encode()
    files["rtl/hlsgen_top.sv"] = env.get_template("top.sv.j2").render(**ctx).encode()
    for name in ("__init__.py", "streams.py", "runner.py", "design_test.py", "run_design.py", "ddr.py", "yosys.py", "yosys_deep.py",
                 "synth_design.py", "banks.py", "verilated_pch.py"):
        files[f"sim/hlsgen_sim/{name}"] = (sim_lib / name).read_bytes()
    design = {"inputs": [dict(p, file=f"{p['name']}.bin") for p in core["inputs"]],
              "outputs": [dict(p, file=f"{p['name']}.bin") for p in core["outputs"]],
              "sources": _RTL_HEAD + ["hlsgen_bank_mem.sv", "hlsgen_top_mem.sv", "hlsgen_top.sv"],
              # --flat-mem, and synth-yosys SCOPE=top: the activation memory as one array
              "flat_sources": _RTL_HEAD + ["hlsgen_top_mem_flat.sv", "hlsgen_top.sv"],
              "predicted_cycles": int(sched.total_cycles),
              # off-chip memory: the pointer arguments (s_axi_control 0x10 + 12 k), the m_axi bundles
              # and the memory the testbench puts behind them (the cost model's latency and bandwidth)
              "pointers": core["pointers"], "memory": core["memory"],
              "bundles": [{"name": b["name"], "data_bits": core["dw"],
                           "channels": [{"task": c["task_label"], "what": c["what"], "write": c["write"],
                                         "beats": c["beats"], "lanes": c["lanes"], "steps": c["steps"]}
                                        for c in b["channels"]]} for b in core["bundles"]],
              "serial_cycles": core["serial_cycles"], "cycle_limit": 2 * core["serial_cycles"] + 1000,
              "configuration_words": core["words"],
              "cores": [{"index": c["index"], "stage": c["stage"], "words": c["params"]["NT"],
                         "tasks": c["what"]} for c in core["cores"]],
              # `make synth-yosys` (sim/hlsgen_sim/synth_design.py): each core's datapath
              # (hlsgen_core_dp) with its parameters, beside the cost model's for the same core
              "synth": dict(_synth_context(core, sched, device),
                            # the activation memory (hlsgen_top_mem), which `make synth-yosys SCOPE=top` keeps as a black box
                            # (its words are SB bits, memories_bits.activations in all)
                            act_mem={"words": core["mem_words"], "read_ports": amem["NRP"], "write_ports": amem["NWP"],
                                     "clients": amem["clients"],
                                     # its stored tensors and staging regions (row-major, from
                                     # base); the other words are the elementwise constants
                                     "regions": [{k: r[k] for k in ("tensor", "base", "size", "shape")}
                                                 for r in core["layout"] if r["kind"] != "alias"],
                                     # its banks and routes, planned from the words (rtl/banking.py),
                                     # which hlsgen_top_mem.sv builds
                                     "banking": core["banking"],
                                     # the memories hlsgen_top_mem.sv builds (a region, or a copy of
                                     # one) and how a port's offset splits into their coordinates
                                     # (`make synth-yosys SCOPE=mem` synthesizes each with its parameters)
                                     "memories": [{"name": m["name"], "dims": [m[d] for d in "NCHW"],
                                                   "dividers": m["split"]["dividers"], "region": m["plan_region"],
                                                   "params": m["params"]}
                                                  for m in banked["mems"]]}),
              # per task: the core's own count against the schedule's modeled cycles (compute,
              # before any overlap with transfers or other tasks)
              "tasks": [{"task": p.name, "op": p.op, "folding": p.folding.as_list(), "modeled": int(p.cycles),
                         "core": int(core["task_cycles"].get(p.name, 0))} for s in sched.stages for p in s.tasks]}
    files["sim/design.json"] = (json.dumps(design, indent=2, sort_keys=True) + "\n").encode()
    return files, core["banking"], core["cores"], {"bundles": core["bundles"], "inputs": top_inputs(core, amem)}


def _synth_context(core: Dict, sched, device) -> Dict:
    """What synth_design.py synthesizes and compares: every core's parameters (the whole core's
    and its datapath's), the tables it reads, and the model's resources for that core; the
    design's modeled resources; and the sizes of the memories (the activation memory, which the
    simulation-first RTL holds whole and synth-yosys does not synthesize; docs/rtl.md)."""
    from ..rtl.core import RQ_ROW_BITS, TAP_BITS
    p = core["core_params"]
    dp_keys = ("MV", "MP", "MS", "ML", "XB", "AW", "NU", "PWB", "NSH", "SHV", "SHP", "SHS", "SHM", "NRQ", "NQS", "QSV", "QSP", "ET",
               "EL", "RAW", "MACK", "AVGK", "MAXK")
    cores = [{"index": c["index"], "stage": c["stage"], "mode": sched.stages[c["stage"]].mode, "tasks": c["tasks"],
              "params": dict({k: c["params"][k] for k in dp_keys}, SB=p["SB"], WB=c["params"]["CWB"], PW=p["PW"]),
              # the whole core (hlsgen_core) as the top instantiates it, and the tables it reads
              # (its own program, weight ROM, tap table and requantization rows)
              "core_params": dict(p, **c["params"]),
              "core_tables": {k: Path(v).name for k, v in c["files"].items()},
              "model": c["model"],
              # the whole core as synthesis builds it (MODELED: hlsgen.backends.rtl.core.CORE_FIT) and what it prices
              "fitted": c["fitted"], "inputs": c["inputs"]} for c in core["cores"]]
    r = sched.resources
    rq_bits = p["PW"] + RQ_ROW_BITS
    return {"cores": cores, "device": device.name,
            "model_design": {"dsp": r.dsp, "lut": r.lut, "ff": r.ff, "bram18": r.bram18, "uram": r.uram},
            # the activation memory; the cores' programs, weight ROMs, tap tables and
            # requantization rows (each its own words and its tasks' weights, taps and rows), summed
            "memories_bits": {"activations": core["mem_words"] * p["SB"],
                              "weights": sum(c["params"]["WROM_ROWS"] * c["params"]["WR"] * p["WB"] for c in core["cores"]),
                              "programs": sum(c["params"]["NT"] * p["NF"] * c["params"]["PFB"] for c in core["cores"]),
                              "taps": sum(c["params"]["TAP_WORDS"] * TAP_BITS for c in core["cores"]),
                              "requantization_rows": sum(c["params"]["RQ_ROWS"] * rq_bits for c in core["cores"])}}


def _env_rtl():
    from ..jinja import environment
    from ..rtl.modules import RTL_DIR
    return environment(str(RTL_DIR))


def build_facts(k: Dict) -> Dict:
    """What the emitted kernel realizes, beside the schedule's figures."""
    stages = []
    for st in k["stages"]:
        d = {"index": st["index"], "mode": st["mode"], "function": st["fn"], "tasks": st["tasks"]}
        if st["mode"] == "dataflow":
            d["streams"] = [{"name": s["name"], "tensor": s["label"], "depth": s["depth"],
                             "scheduled_depth": s["scheduled"]} for s in st["streams"]]
        else:
            d["configuration_words"] = len(st["program"])
            d["core_pe_lanes"] = st["pe"]
        stages.append(d)
    return {"top": "hlsgen_kernel", "stages": stages,
            "stores": [{"var": s.var, "tensor": s.label, "kind": s.kind, "ctype": s.ctype, "elements": s.size,
                        "impl": s.impl, "bundle": s.bundle} for s in
                       k["inputs"] + k["outputs"] + k["spads"] + k["spills"]],
            "weights_offchip": k["weights_offchip"]}


def _labelled(sched: Schedule) -> Schedule:
    """A copy of the schedule whose task and tensor names are sanitized labels (for report.md)."""
    import copy

    s = copy.deepcopy(sched)
    s.model = _label(s.model)
    for st in s.stages:
        for t in st.tasks:
            t.name = _label(t.name)
        for b in st.buffers:
            b.tensor = _label(b.tensor)
        if st.bottleneck:
            st.bottleneck = _label(st.bottleneck)
    return s


def report_md(graph: Graph, sched: Schedule, device, k: Dict, banks: Dict, synthesis: Dict,
              rtl_fit: Optional[Dict] = None) -> str:
    from ...report.schedule import format_schedule
    lines = [f"# hlsgen build: {k['model']} on {device.name}", "",
             f"hlsgen {__version__}; device {device.name} ({device.part}, platform {device.platform}); "
             f"{sched.mode} schedule at {sched.clock_mhz:g} MHz, resource cap {sched.resource_cap:g}.", "",
             "## Schedule (MODELED: hlsgen cost model, not simulated or synthesized)", "", "```",
             format_schedule(_labelled(sched), device), "```", "", "## What the kernel realizes", ""]
    for st in k["stages"]:
        if st["mode"] == "dataflow":
            grown = [s for s in st["streams"] if s["whole"]]
            lines.append(f"- stage {st['index']} (`{st['fn']}`): DATAFLOW region, {len(st['procs'])} task processes, "
                         f"{len(st['loaders'])} loaders, {len(st['storers'])} storers, {len(st['streams'])} hls::stream FIFOs"
                         + (f"; {len(grown)} FIFOs hold a whole tensor (their producer fans out)" if grown else ""))
        else:
            lines.append(f"- stage {st['index']} (`{st['fn']}`): reconfigurable core, {len(st['program'])} configuration "
                         f"words, {st['pe']} output-channel lanes, operands {len(st['operands'])} stored tensors")
    lines += ["", "| storage | tensor | kind | type | elements | where |", "|---|---|---|---|---:|---|"]
    for s in k["inputs"] + k["outputs"] + k["spads"] + k["spills"]:
        where = {"input": "AXI4-Stream in, buffered on chip", "output": "buffered on chip, AXI4-Stream out",
                 "scratchpad": f"scratchpad ({s.impl})", "offchip": f"off-chip, m_axi bundle {s.bundle}"}[s.kind]
        if s.io:
            where += f" (the graph's {s.io}: a host buffer, data/{s.var}.bin)"
        lines.append(f"| `{s.var}` | {s.label} | {s.kind} | `{s.ctype}` | {s.size} | {where} |")
    lines += _banks_md(banks, device)
    lines += _synthesis_md(synthesis, device)
    if rtl_fit:
        lines.append(f"- **steered**: built with `{rtl_fit['setting']}`, the build's choice. With "
                     f"`{rtl_fit['instead_of']}` the RTL as modeled takes {rtl_fit['first_lut']:,} LUT "
                     f"({share_text(rtl_fit['first_share_of_device'])}) of {device.name} and does not fit "
                     f"({rtl_fit['first_over']}), at "
                     f"{rtl_fit['first_cycles']:,} cycles; this schedule takes {sched.total_cycles:,} (MODELED: "
                     f"{rtl_fit['why']}). `hlsgen build --rtl-fit warn` keeps the first.")
        wt = rtl_fit.get("wider_tasks")
        if wt:
            from ..rtl.core import CORE_FIT_LEFT_OUT
            lines.append(f"- **wider tasks, narrow beats**: `{wt['setting']}` also fits as modeled, at "
                         f"{wt['cycles']:,} cycles and {wt['lut']:,} LUT ({share_text(wt['share_of_device'])}) of "
                         f"{device.name}; the build keeps this design's margin, as the models of whole cores are "
                         f"{CORE_FIT_LEFT_OUT} on designs left out of their fits (MODELED; docs/rtl.md, \"Beats apart "
                         f"from tasks\").")
    lines += ["", "## Run it", "", "```", "make csim      # g++ C simulation, bit-exact check against data/out*.bin",
              "make sim       # RTL simulation (cocotb + Verilator), bit-exact check and simulated cycles",
              "make csynth    # needs vitis_hls", "make cosim     # needs vitis_hls", "make xclbin    # needs v++",
              "```", ""]
    return "\n".join(lines)


# the RTL's sources before its activation memory, in the order Verilator reads them
_RTL_HEAD = ["hlsgen_rq_tail.sv", "hlsgen_word_pkg.sv", "hlsgen_core_dp.sv", "hlsgen_core.sv", "hlsgen_axilite_ctrl.sv",
             "hlsgen_m_axi.sv", "hlsgen_act_mem.sv"]


def _banks_md(b: Dict, device) -> List[str]:
    """report.md's section on the RTL's activation memory: the banks the build plans for it, and
    what they cost as synthesis builds them (modeled)."""
    from ..rtl.banking import ROUTE_FIT_LEFT_OUT, shape_text, unserved
    st, wh, lg, dec = b["storage"], b["whole_storage"], b["logic"], b["decode"]
    sb = b["sb"]
    res = lambda r: f"{r['bram18']} BRAM18, {r['uram']} URAM, {r['lut']:,} LUT"     # noqa: E731
    tot = memory_model(b)
    over = [f"{k.upper()} {tot[k]:,} of {have:,}" for k, have in (("bram18", device.bram18), ("uram", device.uram),
                                                                   ("lut", device.lut), ("ff", device.ff))
            if tot[k] > have]
    lines = ["", "## Activation memory of the RTL (banks PLANNED from the configuration words; cost MODELED)", "",
             "`rtl/hlsgen_top_mem.sv` builds the memory in the banks the build plans: per region an "
             "`hlsgen_bank_mem`, element (c, h, w) in bank (c mod Bc, h mod Bh, w mod Bw), or skewed (`skew "
             "w+3h, c+h`: w's bank (w + 3h) mod Bw, c's (c + h) mod Bc), so that no client puts "
             "more words into a bank in one cycle than its two ports serve; a region with more clients at once than "
             "a dual-port bank has is copied. Each port of the memory is wired only to the banks its words reach "
             "(its routes). `make sim` fails if a bank misses an access (`rtl/hlsgen_top_mem_flat.sv` is the same "
             "memory as one array with a port per lane, `make sim SIM_ARGS=--flat-mem`); `make sim SIM_ARGS=--banks` checks the plan and the routes against the simulated trace of "
             "every access.", "",
             f"- routes: {b['paths']:,} port-to-bank paths, where a full crossbar of the same ports would have "
             f"{b['full_paths']:,}" + ("" if all(r["routes_exact"] for r in b["regions"]) else
                                       " (some words have too many accesses to enumerate: their ports reach every "
                                       "bank of their regions)"),
             f"- {b['banks']:,} banks holding {b['words']:,} words for {b['region_words']:,}: {res(st)} (LUT: sites "
             f"of LUT RAM), {st['ff']:,} FF (banks held in registers, and the registered words of LUT RAM); "
             f"where one memory per region, placed by the cost model's rule for a stored tensor (read 64 bits a "
             f"cycle), is {res(wh)}" + ("" if b["served"] else f". NOT SERVED: {unserved(b, _label)}"),
             *([f"- in LUT RAM where synthesis would build block RAM (hlsgen_bank_mem's LUTRAM): the banks of "
                f"{len(b['lutram']['moved'])} region" + "s" * (len(b["lutram"]["moved"]) != 1) +
                f" ({', '.join(_label(n, 40) for n in b['lutram']['moved'])}), because the banks would take "
                f"{b['lutram']['bram18_before']} BRAM18 where {device.name} has {b['lutram']['bram18_device']} "
                f"(those with the fewest LUTs a block RAM saved; the rest stay block RAM)"]
              if b["lutram"]["moved"] else []),
             f"- routing (each bank's port muxes, each read port's word among its banks, and where a client reads one "
             f"word through two of its ports in one cycle, the address compares by which they share a bank's port: "
             f"{sum(r['shared_reads'] for r in b['regions'])} of {len(b['regions'])} regions): "
             f"{lg['lut']:,} LUT, {lg['ff']:,} FF",
             f"- each region's banks hold the bits its tensor's values need (read back sign-extended to the memory's "
             f"{sb} bits): {', '.join(f'{n} region' + 's' * (n > 1) + f' of {k} bits' for k, n in sorted(Counter(r['word_bits'] for r in b['regions']).items()))}",
             f"- the top memory's decode around its regions (a port's compare with a region's span where the port is a "
             f"lane of several, its address split into coordinates, its word's pick among its regions; fitted: "
             f"benchmarks/decode_fit.py): {dec['lut']:,} LUT, {dec['ff']:,} FF; "
             f"{dec['inputs']['gated_reads']:,} read lanes gated" + (
                 f", {dec['inputs']['divides']:,} constant divides in the lanes' splits"
                 if dec["inputs"]["divides"] else ", every split by its bits"),
             f"- the memory as synthesis builds it (MODELED: Yosys synth_xilinx's mapping of hlsgen_bank_mem, its routing "
             f"LUTs fitted on synthesized regions, each design's within {ROUTE_FIT_LEFT_OUT[0]:+.0%} to "
             f"{ROUTE_FIT_LEFT_OUT[1]:+.0%} where it is left out of the fit: "
             f"benchmarks/bank_fit.py, docs/rtl.md \"The banks priced as synthesized\"; with the decode; `make "
             f"synth-yosys SCOPE=mem` synthesizes them): {tot['bram18']} BRAM18, "
             f"{tot['uram']} URAM, {tot['lut']:,} LUT, {tot['ff']:,} FF, " +
             (f"more than {device.name} has ({', '.join(over)}): the RTL's memory does not fit the device, though the "
              f"schedule (its line buffers and FIFOs, above) may" if over else f"within {device.name}'s "
              f"{device.bram18} BRAM18 and {device.lut:,} LUT") + ". The schedule's resources above do not count it.", "",
             "| region | C x H x W | banks by (c, h, w) mod Bc x Bh x Bw (skew), or offset mod B | banks x copies | words a bank | clients at once | storage | routing |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    for r in b["regions"]:
        lines.append(f"| {_label(r['region'], 40)} | {'x'.join(map(str, r['tensor_dims']))} | {shape_text(r)} | "
                     f"{r['banks']} x {max(1, r['copies'])} | {r['depth']} | {r['ports']} | {res(r['bank_storage'])}, "
                     f"{r['bank_storage']['ff']:,} FF{' (LUT RAM: LUTRAM)' if r['lutram'] else ''} | "
                     f"{r['logic']['lut']:,} LUT, {r['logic']['ff']:,} FF |")
    return lines


def _synthesis_md(m: Dict, device) -> List[str]:
    """report.md's section on the whole RTL as synthesis builds it (rtl_synthesis_model)."""
    w, sh = m["whole"], m["share_of_device"]
    pct = lambda k: "" if sh[k] is None else f" ({sh[k]:.0%})"      # noqa: E731
    lines = ["", "## The RTL as synthesis builds it (MODELED: fitted on Yosys synth_xilinx; not synthesized here)", "",
             "The schedule above prices each core's datapath (its multipliers, adder trees, accumulators and "
             "requantizers). The RTL's cores also hold their control, address generation and tables; each whole "
             "core is priced by a fit on synthesized cores (benchmarks/core_fit.py, docs/rtl.md \"The whole "
             "cores priced as synthesized\"), the activation memory as its bank plan prices it (above). "
             "`make synth-yosys SCOPE=design` synthesizes the design and sets it beside the device.", "",
             "| core | stage | tasks | DSP48E2 | datapath LUT (cost model) | whole core LUT (fitted) | FF (fitted) |",
             "|---:|---:|---|---:|---:|---:|---:|"]
    for c in m["cores"]:
        lines.append(f"| {c['index']} | {c['stage']} | {_label(c['tasks'], 60)} | {c['datapath_model']['dsp']} | "
                     f"{c['datapath_model']['lut']:,} | {c['fitted']['lut']:,} | {c['fitted']['ff']:,} |")
    mem = m["memory"]
    lines += ["", f"- the cores: {m['cores_total']['dsp']} DSP48E2, {m['cores_total']['lut']:,} LUT, "
                  f"{m['cores_total']['ff']:,} FF; the activation memory: {mem['bram18']} BRAM18, {mem['uram']} URAM, "
                  f"{mem['lut']:,} LUT, {mem['ff']:,} FF" + (
                      f"; the top's m_axi engines ({m['m_axi']['bundles']}, one a bundle; fitted on synthesized "
                      f"engines, benchmarks/m_axi_fit.py): {m['m_axi']['lut']:,} LUT, {m['m_axi']['ff']:,} FF"
                      if m["m_axi"]["bundles"] else "") +
                  f"; the rest of the top's own logic (AXI4-Lite control, channel addresses and tables, row counters, "
                  f"the stream and channel elements it moves, beats moved in steps, stage sequencing; fitted on "
                  f"synthesized designs, benchmarks/top_fit.py): {m['top']['lut']:,} LUT, {m['top']['ff']:,} FF",
              f"- **the RTL: {w['lut']:,} LUT{pct('lut')}, "
              f"{w['ff']:,} FF{pct('ff')}, {w['dsp']} DSP48E2{pct('dsp')}, {w['bram18']} BRAM18{pct('bram18')}, "
              f"{w['uram']} URAM{pct('uram')} of {device.name}**" +
              ("" if m["fits"] else ": it does NOT fit the device, though the schedule's datapaths may")]
    return lines


def write_tree(out: Path, files: Dict[str, bytes], force: bool) -> None:
    """Write all files under a temporary folder beside `out`, then move it into place. An
    existing `out` is replaced only with `force`, and only after the new tree is complete."""
    out = Path(out)
    if out.exists() and not force:
        raise HlsgenError(f"{out} already exists; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    old = None
    try:
        for rel, data in sorted(files.items()):
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        for d in ("results", "build"):
            (tmp / d).mkdir(exist_ok=True)
        tmp.chmod(0o755)
        if out.exists():
            old = out.with_name(f".{out.name}.old-{tmp.name.rsplit('-', 1)[-1]}")
            out.rename(old)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not out.exists():
            old.rename(out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
