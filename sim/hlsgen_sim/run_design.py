"""`make sim` of an emitted project: build OUT/rtl with Verilator, run design_test.py, write
OUT/results/sim.json (passed, mismatches, elements, cycles measured from ap_start to ap_done,
predicted_cycles from the schedule, cycle_error).

    python sim/run_design.py [--gap P] [--backpressure P] [--seed S] [--simulator verilator|icarus]
                             [--rtl hlsgen|vitis] [--trace] [--banks] [--flat-mem]

The activation memory is the one built in its planned banks (rtl/hlsgen_top_mem.sv: an
hlsgen_bank_mem per region); the run fails if a bank misses an access or a read from the banks
differs from the one array the simulation keeps beside them. --flat-mem simulates the memory as
that one array instead (rtl/hlsgen_top_mem_flat.sv), which Verilator builds faster.

--rtl vitis runs the same testbench on the Verilog Vitis HLS wrote (`make csynth`), whose ports
carry the same names (the emitted interface pragmas). Vitis's ROMs read their contents with
$readmemh("./NAME.dat") beside the Verilog, as its own co-simulation does; the simulation runs
in a folder those tables are copied into.
"""
import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent          # OUT/sim/hlsgen_sim
sys.path.insert(0, str(HERE.parent))

from hlsgen_sim import runner  # noqa: E402


def icarus_sources(out: Path, design: dict, flat_mem: bool):
    """hlsgen's RTL as Icarus Verilog compiles it: Icarus (11.0, Debian 12's; 12.0 too) lacks the
    SystemVerilog the RTL is written in (string parameters, automatic variables in procedural
    blocks, unpacked parameter arrays and array ports: docs/rtl.md), so Yosys's slang frontend
    elaborates it as it does for `make synth-yosys` and writes it back as Verilog-2005
    (yosys.write_verilog_2005, in OUT/build/icarus-rtl). Icarus then simulates the circuit
    synthesis reads: the banks in their generate form, without the `ifdef VERILATOR` checks.
    ([that file], sim.json's record of it: its size and the seconds Yosys took, None where it
    was kept from an earlier run)"""
    from hlsgen_sim import yosys
    work = out / "build" / f"icarus-rtl{'-flat' if flat_mem else ''}"
    names = design["flat_sources" if flat_mem else "sources"]
    keep = [v for _, v in DESIGN_PUBLIC if v != "*"]
    t0 = time.monotonic()
    print(f"sim: Yosys (read_slang) elaborates rtl/ and writes it as Verilog-2005 for Icarus "
          f"({work.relative_to(out)}/hlsgen_top.v; a minute or more on a large design, kept while rtl/ "
          "is unchanged)", flush=True)
    v, written = yosys.write_verilog_2005(work, yosys.stage_rtl(out / "rtl", names, work), "hlsgen_top", keep)
    took = round(time.monotonic() - t0, 1) if written else None
    info = {"file": str(v.relative_to(out)), "mb": round(v.stat().st_size / 1e6, 1), "written_s": took}
    print(f"sim: {info['file']}: {info['mb']} MB of Verilog-2005 "
          f"({f'written in {took:.0f} s' if written else 'kept: rtl/ has not changed'})", flush=True)
    return [v], info


# what hlsgen_sim/design_test.py reads or drives in hlsgen's RTL: the top's ports and wires, each
# core's state, pc, wstart and wnum (_busy_cores, _trace_words), and the memory's conflict,
# differs and bank_worst (_banks_served, _bank_probe). The one list of them: Verilator keeps
# only these visible (runner.run's public; design_probes below lists what the testbench checks it sees), and
# simulates the banks as one loop (SIM_DEFINES): together a third less CPU for make sim on
# shuffle_block's U280 dataflow design (docs/rtl.md, stop 37)
DESIGN_PUBLIC = (("hlsgen_top", "*"), ("hlsgen_core", "state"), ("hlsgen_core", "pc"), ("hlsgen_core", "wstart"),
                 ("hlsgen_core", "wnum"), ("hlsgen_top_mem", "conflict"), ("hlsgen_top_mem", "differs"),
                 ("hlsgen_act_mem", "bank_worst"))


def design_probes(design: dict, flat_mem: bool, synthesized_form: bool = False):
    """The internal signals design_test.py reads on hlsgen's RTL, as dotted paths from the top:
    each core's state and word (to name a stalled stage, and --trace), the memory's banking
    measure and, in its banks, whether they served every access. The testbench fails naming any
    it cannot see (a signal DESIGN_PUBLIC does not make public) rather than leave its check out.
    synthesized_form: the RTL as Yosys reads it (SIM=icarus), without the `ifdef VERILATOR`
    checks: the one array beside the banks (`differs`) and the banking measure."""
    probes = [f"core{c['index']}.{s}" for c in design.get("cores", []) for s in ("state", "pc", "wstart", "wnum")]
    if not synthesized_form:
        probes.append("act_mem.m.bank_worst")
    if not flat_mem:
        probes += ["act_mem.conflict"] + ([] if synthesized_form else ["act_mem.differs"])
    return probes


# hlsgen_bank_mem.sv's banks as one loop over an array of them (simulation only; synthesis
# reads its generate, a memory per bank). tests/test_rtl_modules.py runs and lints both forms
SIM_DEFINES = {"HLSGEN_SIM_BANKS_LOOP": 1}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gap", type=float, default=0.0, help="probability of an idle input cycle (default 0)")
    ap.add_argument("--backpressure", type=float, default=0.0, help="probability of a not-ready output cycle")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--simulator", default="verilator", choices=["verilator", "icarus"])
    ap.add_argument("--rtl", default="hlsgen", choices=["hlsgen", "vitis"])
    ap.add_argument("--trace", action="store_true", help="record the cycle each core starts each word and every m_axi handshake (sim.json)")
    ap.add_argument("--banks", action="store_true",
                    help="also trace every access of the activation memory (results/mem_trace.txt) and weigh banking "
                         "schemes on it (hlsgen_sim/banks.py: results/banks.json)")
    ap.add_argument("--flat-mem", action="store_true",
                    help="simulate the activation memory as one array with a port per lane (rtl/hlsgen_top_mem_flat.sv) "
                         "instead of in its planned banks (rtl/hlsgen_top_mem.sv); Verilator builds it faster")
    ap.add_argument("--bank-form", choices=["loop", "generate"],
                    help="hlsgen_bank_mem as make sim simulates it by default on Verilator (loop: its routing once "
                         "a clock edge, the banks one array) or as synthesis builds it (generate: combinational "
                         "routing, a memory per bank; slower to build and to run; what Icarus always simulates)")
    a = ap.parse_args(argv)
    icarus_hlsgen = a.simulator == "icarus" and a.rtl == "hlsgen"
    if a.bank_form == "loop" and icarus_hlsgen:
        print("make sim SIM=icarus: Icarus simulates hlsgen's RTL as Yosys reads it for synthesis, whose banks are "
              "the generate form; --bank-form loop is Verilator's", file=sys.stderr)
        return 2
    if a.banks and icarus_hlsgen:
        print("make sim SIM=icarus: --banks traces the activation memory through Verilator's simulation-only probe "
              "(`ifdef VERILATOR`), which the RTL as Yosys reads it has not; use SIM=verilator", file=sys.stderr)
        return 2
    a.bank_form = a.bank_form or ("generate" if icarus_hlsgen else "loop")
    if a.flat_mem and a.rtl != "hlsgen":
        print("make sim: --flat-mem chooses hlsgen's activation memory, which RTL=vitis does not have", file=sys.stderr)
        return 2
    if a.bank_form != "loop" and not icarus_hlsgen and (a.rtl != "hlsgen" or a.flat_mem):
        print("make sim: --bank-form chooses the form of hlsgen's banked activation memory, which RTL=vitis and "
              "--flat-mem do not have", file=sys.stderr)
        return 2
    if a.banks and a.rtl != "hlsgen":
        print("make sim: --banks traces hlsgen's activation memory, which RTL=vitis does not have", file=sys.stderr)
        return 2
    out = HERE.parents[1]
    design = json.loads((out / "sim" / "design.json").read_text())
    rtl = out / "rtl"
    if a.simulator == "icarus" and shutil.which("iverilog") is None:
        print("make sim SIM=icarus: iverilog is not on PATH; install Icarus Verilog (apt install iverilog), "
              "or use the default SIM=verilator", file=sys.stderr)
        return 2
    sources = [rtl / s for s in design["flat_sources" if a.flat_mem else "sources"]]
    top = "hlsgen_top"
    if icarus_hlsgen:
        from hlsgen_sim.yosys import YosysError
        try:
            sources, verilog_2005 = icarus_sources(out, design, a.flat_mem)
        except (YosysError, subprocess.TimeoutExpired) as exc:
            # the banks read smaller as one array; a core too large for Yosys's memory does not
            alt = "" if a.flat_mem or getattr(exc, "kind", "") == "memory" else (
                "SIM_ARGS=--flat-mem (the activation memory as one array, not its banks) reads smaller; or ")
            why = str(exc).splitlines()[0] if str(exc) else repr(exc)
            print(f"make sim SIM=icarus: {why}; {alt}use SIM=verilator", file=sys.stderr)
            return 2
    run_dir = HERE.parent                       # where the simulator runs: hlsgen's tables are ../rtl/*.mem
    if a.rtl == "vitis":
        vdir = out / "hls_prj" / "sol1" / "syn" / "verilog"
        sources = sorted(vdir.glob("*.v"))
        top = "hlsgen_kernel"
        if not sources:
            print(f"make sim RTL=vitis: no Verilog from Vitis HLS in {vdir.relative_to(out)}; run `make csynth` first "
                  "(needs vitis_hls)", file=sys.stderr)
            return 2
        run_dir = out / "build" / f"{a.simulator}-vitis-run"     # Vitis's tables are ./NAME.dat
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        for table in vdir.glob("*.dat"):
            shutil.copy(table, run_dir)
    (out / "results").mkdir(exist_ok=True)
    raw = out / "build" / "sim_result.json"
    raw.parent.mkdir(exist_ok=True)
    raw.unlink(missing_ok=True)
    trace = out / "results" / "mem_trace.txt"
    trace.unlink(missing_ok=True)
    try:
        runner.run(sources, top, "hlsgen_sim.design_test", run_dir,
                   out / "build" / f"{a.simulator}-{a.rtl}{'-flat' if a.flat_mem else ''}"
                                   f"{'-generate' if a.bank_form == 'generate' else ''}",
                   extra_env={"HLSGEN_PROJECT": str(out), "HLSGEN_RESULT": str(raw), "HLSGEN_GAP": str(a.gap),
                              "HLSGEN_BACKPRESSURE": str(a.backpressure), "HLSGEN_SEED": str(a.seed),
                              "HLSGEN_TRACE": "1" if a.trace else "0",
                              "HLSGEN_PROBES": json.dumps(design_probes(design, a.flat_mem, icarus_hlsgen)
                                                          if a.rtl == "hlsgen" else [])},
                   simulator=a.simulator, plusargs=[f"+mem_trace={trace}"] if a.banks else (),
                   **({"defines": SIM_DEFINES if a.bank_form == "loop" else {}, "public": DESIGN_PUBLIC}
                      if a.rtl == "hlsgen" and not icarus_hlsgen else {}))
    except RuntimeError as exc:
        if not raw.exists():
            print(f"make sim: {exc}", file=sys.stderr)
            return 2
    if not raw.exists():
        print("make sim: the simulation ended without a result (see the log above)", file=sys.stderr)
        return 1
    res = json.loads(raw.read_text())
    pred = int(design["predicted_cycles"])
    res["predicted_cycles"] = pred
    res["cycle_error"] = round((pred - res["cycles"]) / max(res["cycles"], 1), 4)
    res["cycles_are"] = (f"simulated ({'Verilator' if a.simulator == 'verilator' else 'Icarus'} on "
                         f"{'hlsgen' if a.rtl == 'hlsgen' else 'Vitis HLS'} RTL"
                         f"{' as Yosys elaborates it for synthesis' if icarus_hlsgen else ''}, ap_start to ap_done)")
    res["predicted_are"] = "modeled (hlsgen cost model, the schedule's total_cycles)"
    res["simulator"] = a.simulator
    if icarus_hlsgen:
        res["verilog_2005"] = verilog_2005
    if a.rtl == "hlsgen":
        res["act_mem_form"] = "one array" if a.flat_mem else f"planned banks ({a.bank_form} form)"
    (out / "results" / "sim.json").write_text(json.dumps(res, indent=2) + "\n")
    for line in res["first_mismatches"]:
        print("MISMATCH " + line)
    for line in res.get("axi_errors", []):
        print("AXI " + line)
    for line in res.get("memory_errors", []):
        print("MEMORY " + line)
    if res.get("stalled"):
        print(f"sim: STALLED: {res['stalled']} (no ap_done after {res['cycles']} cycles)")
    print(f"sim: {'PASSED' if res['passed'] else 'FAILED'}: {res['mismatches']} mismatches in {res['elements']} elements; "
          f"{res['cycles']:,} cycles simulated, {pred:,} modeled ({res['cycle_error']:+.1%})")
    if res.get("act_mem_banks"):
        b = res["act_mem_banks"]
        beside = ("no array beside them (the form synthesis reads)" if b["differs"] is None else
                  f"{'reads differ from' if b['differs'] else 'every read as'} the one array beside them")
        print(f"sim: activation memory in its planned banks ({a.bank_form} form): "
              f"{'a bank missed an access' if b['conflict'] else 'every access served'}, {beside}")
    if a.banks:
        from hlsgen_sim import banks
        if banks.main([str(out)]) != 0:
            return 1
    return 0 if res["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
