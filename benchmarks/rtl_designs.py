"""RTL designs against the model: every Foundation test net built in the three modes for the
U280 and for the capped small FPGA (designs/devices/small.yaml at a 20% cap, weights streamed),
its RTL simulated with `make sim` (cocotb + Verilator). Prints simulated cycles (ap_start to
ap_done) beside the schedule's modeled cycles.

    .venv/bin/python benchmarks/rtl_designs.py [--target u280|capped] [--mode M ...] [--io offchip]

--io offchip puts the graph's inputs and outputs in off-chip memory (m_axi host buffers) instead
of AXI4-Stream ports; the JSON goes to rtl_designs-io-offchip.json then.

A second table gives what banking the activation memory would face in each simulated design
(sim.json's bank_accesses, measured by hlsgen_act_mem in simulation): the most enabled reads and
writes that fell into one bank in any cycle with 1, 8, 64 and 512 cyclic banks, and the fewest
banks (up to 512) at which no bank ever had more than the 2 accesses of a true dual-port block
RAM. `--tables FILE` prints the bank tables again from a JSON this script wrote.

--weigh-banks runs each simulation with `make sim SIM_ARGS=--banks` (the activation memory's
access trace, weighed by sim/hlsgen_sim/banks.py) and prints a third table: the fewest cyclic
banks that serve every cycle with at most 2 accesses each when every stored tensor has a memory
of its own, and the same with each tensor banked by its coordinates (results/banks.json). A
fourth table holds the banks the build plans from the configuration words (design.json's
synth.act_mem.banking, hlsgen/backends/rtl/banking.py) against that trace: banks and words,
their storage as the cost model places memories (modeled), and whether the trace keeps to the
plan.

Each design's activation memory is built in its planned banks (rtl/hlsgen_top_mem.sv); a column
says whether every access was served and every read agreed with the one array beside the banks
(sim.json's act_mem_banks). --flat-mem simulates the memory as one array instead (`make sim
SIM_ARGS=--flat-mem`, rtl/hlsgen_top_mem_flat.sv). Every run prints the
CPU seconds its `make sim` took (Verilator, the C++ compile and the simulation; ccache off, so
that the figures do not depend on earlier runs).

--routes only builds each design (no simulation) and prints its activation memory's routes: the
port-bank paths the memory is wired with (banking.py's routes, hlsgen_top_mem.sv) beside the same
ports wired to every bank of their regions, which of its memories split a port's address into
coordinates with constant divides (the rest split it by its bits alone), the regions whose reads
share ports (a client reads one word through two of them in a cycle), and the memory's LUTs and
the whole RTL's as `hlsgen build` models them (report.json's rtl_synthesis_model: MODELED).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8",
        "demo_cnn", "shuffle_block"]
TARGETS = {"u280": ["--device", "u280"],
           "capped": ["--device", str(ROOT / "designs" / "devices" / "small.yaml"), "--resource-cap", "0.2",
                      "--weights", "offchip"]}


def job_name(job: Tuple) -> str:
    """A job's name: "<net> <target> <mode>", its further build options after it, or "make demo"."""
    net, target, mode, *more = job
    return "make demo" if net == "make demo" else " ".join([net, target, mode, *(more[0] if more else ())])


def built(jobs: List[Tuple]) -> Iterator[Tuple[str, str, Path]]:
    """Build each job, (net, target, mode), (net, target, mode, further build options) or
    ("make demo", "ultra96v2", its design file), in a temporary folder: yields (its place
    "[k/n]", its name (job_name), the project); a design that does not build (a capped
    whole-graph dataflow design) is said and skipped."""
    from hlsgen.zoo.testnets import export
    py = str(ROOT / ".venv" / "bin" / "python")
    with tempfile.TemporaryDirectory() as tmp:
        for k, job in enumerate(jobs):
            net, target, mode, *more = job
            options = list(more[0]) if more else []
            out = Path(tmp) / f"prj{k}"
            name = job_name(job)
            if net == "make demo":
                cmd = [py, "-m", "hlsgen", "build", str(ROOT / mode), "-o", str(out)]
            else:
                onnx = Path(tmp) / f"{net}.onnx"
                if not onnx.exists():
                    export(net, str(onnx), "qcdq")
                cmd = ([py, "-m", "hlsgen", "build", str(onnx), "--mode", mode, "-o", str(out)] + TARGETS[target]
                       + options)
            b = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            if b.returncode:
                print(f"[{k + 1}/{len(jobs)}] {name}: not built ({b.stderr.strip().splitlines()[-1]})", flush=True)
                continue
            yield f"[{k + 1}/{len(jobs)}]", name, out


def built_at() -> str:
    """The commit the designs are built at (`+` where the tree has changes beside it)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=ROOT).stdout.strip()
    return head + ("+" if dirty else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=sorted(TARGETS), action="append")
    ap.add_argument("--mode", choices=["dataflow", "sequential", "auto"], action="append")
    ap.add_argument("--io", choices=["auto", "onchip", "offchip"], default="auto")
    ap.add_argument("--tables", type=Path, help="only print the bank tables of this rtl_designs JSON")
    ap.add_argument("--weigh-banks", action="store_true", help="trace the activation memory and weigh banking schemes")
    ap.add_argument("--flat-mem", action="store_true",
                    help="simulate each design with its memory as one array (make sim SIM_ARGS=--flat-mem)")
    ap.add_argument("--routes", action="store_true",
                    help="only build each design and print its memory's routes (port-bank paths), no simulation")
    a = ap.parse_args()
    if a.tables:
        bank_table(json.loads(a.tables.read_text()))
        return
    from hlsgen.zoo.testnets import export

    rows = []
    if a.routes:
        head = ("| net | target | mode | stages | planned banks (copies included) | port-bank paths (routes) | "
                "the same ports to every bank | every access enumerated | memories | address split by divides | "
                "regions whose reads share ports (of all) | memory LUT (modeled) | RTL LUT (modeled) |")
        rule = "|---|---|---|---|---:|---:|---:|---|---:|---|---:|---:|---:|"
        split = {"memories": 0, "divide": 0, "regions": 0, "shared": 0}
        fit = {t: [0, 0] for t in TARGETS}             # designs whose RTL fits the device as modeled, of all
    else:
        head = ("| net | target | mode | simulated cycles | modeled cycles | model error | bit-exact | "
                f"{'' if a.flat_mem else 'memory in banks: every access served | '}make sim CPU s |")
        rule = f"|---|---|---|---:|---:|---:|---|{'' if a.flat_mem else '---|'}---:|"
    print(head)
    print(rule)
    cols = head.count("|") - 1
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for net in NETS:
            model = export(net, work / f"{net}.onnx", "qcdq")
            for target in a.target or sorted(TARGETS, reverse=True):
                for mode in a.mode or ["dataflow", "sequential", "auto"]:
                    out = work / f"{net}-{target}-{mode}"
                    b = subprocess.run([sys.executable, "-m", "hlsgen", "build", str(model), "--mode", mode, "-o", str(out),
                                        *TARGETS[target], "--io", a.io], capture_output=True, text=True)
                    if b.returncode != 0:
                        print(f"| {net} | {target} | {mode} | (refused: does not fit) |" + " |" * (cols - 4), flush=True)
                        continue
                    if a.routes:
                        am = json.loads((out / "sim" / "design.json").read_text())["synth"]["act_mem"]
                        pl = am["banking"]
                        div = [f"{m['name']} ({' x '.join(map(str, m['dims']))}: {m['dividers']})"
                               for m in am["memories"] if m["dividers"]]
                        split["memories"] += len(am["memories"])
                        split["divide"] += len(div)
                        shared = sum(bool(o["shared_reads"]) for o in pl["regions"])
                        split["regions"] += len(pl["regions"])
                        split["shared"] += shared
                        report = json.loads((out / "report.json").read_text())
                        syn = report["rtl_synthesis_model"]
                        fit[target][0] += bool(syn["fits"])
                        fit[target][1] += 1
                        print(f"| {net} | {target} | {mode} | {report['segmentation']} | {pl['banks']:,} | {pl['paths']:,} | "
                              f"{pl['full_paths']:,} | {'yes' if all(o['routes_exact'] for o in pl['regions']) else 'NO'} | "
                              f"{len(am['memories'])} | {'; '.join(div) or 'none'} | {shared} of {len(pl['regions'])} | "
                              f"{syn['memory']['lut']:,} | {'' if syn['fits'] else 'does not fit: '}"
                              f"{syn['whole']['lut']:,} |", flush=True)
                        continue
                    sim_args = ["--banks"] * a.weigh_banks + ["--flat-mem"] * a.flat_mem
                    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    r = subprocess.run(["make", "-C", str(out), "sim", *([f"SIM_ARGS={' '.join(sim_args)}"] if sim_args else [])],
                                       capture_output=True, text=True, env=dict(os.environ, HLSGEN_CCACHE="0"))
                    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
                    if not (out / "results" / "sim.json").exists():
                        last = (r.stdout + r.stderr).strip().splitlines()[-1:] or ["no output"]
                        print(f"| {net} | {target} | {mode} | (make sim wrote no results/sim.json: {last[0][:160]}) "
                              f"| | | NO | {'' if a.flat_mem else 'NO | '}{cpu:.0f} |", flush=True)
                        continue
                    res = json.loads((out / "results" / "sim.json").read_text())
                    if a.weigh_banks:
                        res["banks"] = json.loads((out / "results" / "banks.json").read_text())
                    served = ""
                    if not a.flat_mem:
                        mb = res.get("act_mem_banks") or {}
                        served = ("yes | " if mb and not mb["conflict"] and not mb["differs"]
                                  else f"NO: {'; '.join(res.get('memory_errors') or ['no act_mem_banks in sim.json'])} | ")
                    print(f"| {net} | {target} | {mode} | {res['cycles']:,} | {res['predicted_cycles']:,} | "
                          f"{res['cycle_error']:+.1%} | {'yes' if res['passed'] and r.returncode == 0 else 'NO'} | "
                          f"{served}{cpu:.0f} |", flush=True)
                    rows.append(dict(res, net=net, target=target, mode=mode, sim_cpu_s=round(cpu, 1)))
    if a.routes:
        print(f"\n{split['memories']} memories; {split['memories'] - split['divide']} split a port's address by its "
              f"bits alone, {split['divide']} with constant divides; {split['regions']} regions, {split['shared']} "
              f"of them with reads that share ports (hlsgen_bank_mem's SHARE)")
        print("the RTL as modeled fits its device: " + "; ".join(f"{t}: {n} of {m} designs" for t, (n, m) in fit.items() if m))
        return
    errs = [abs(r["cycle_error"]) for r in rows]
    if errs:
        print(f"\n{len(rows)} designs; model error within {max(errs):.1%} of the simulated cycles")
    bank_table(rows)
    name = "rtl_designs" + ("" if a.io == "auto" else f"-io-{a.io}") + ("-flat-mem" if a.flat_mem else "")
    if a.target or a.mode:
        name += "-" + "-".join((a.target or []) + (a.mode or []))
    dst = ROOT / "build" / "bench" / f"{name}.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(rows, indent=2))
    print(f"wrote {dst}")


def bank_table(rows):
    """The activation memory's bank accesses per simulated design (simulated, not synthesized)."""
    print("\n| net | target | mode | most accesses to one bank in a cycle: 1 bank | 8 | 64 | 512 banks | "
          "fewest banks with at most 2 |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        w = r["bank_accesses"]["worst_per_bank"]
        fit = next((nb for nb in sorted(w, key=int) if w[nb] <= 2), None)
        print(f"| {r['net']} | {r['target']} | {r['mode']} | {w['1']} | {w['8']} | {w['64']} | {w['512']} | "
              f"{fit or 'none up to 512'} |")
    weighed = [r for r in rows if "banks" in r]
    if weighed:
        print("\n| net | target | mode | a memory per tensor, cyclic: fewest banks each with at most 2 | "
              "per tensor by coordinates: most accesses | banks | words of banks / of tensors | where it is most |")
        print("|---|---|---|---:|---:|---:|---:|---|")
        for r in weighed:
            b = r["banks"]
            fit = next((nb for nb, v in b["region_cyclic"].items() if v["worst"] <= 2), None)
            rc = b["region_coordinates"]
            where = ""
            if rc["worst"] > 2:
                p = next(p for p in rc["regions"] if p["region"] == rc["worst_region"])
                where = f"{'x'.join(map(str, p['shape']))}: " + "; ".join(p["clients"][:3])
            print(f"| {r['net']} | {r['target']} | {r['mode']} | "
                  f"{(fit + ' per tensor') if fit else 'none up to 512'} | {rc['worst']} | {rc['banks']} | "
                  f"{rc['words'] / max(rc['region_words'], 1):.2f} | {where} |")
    planned = [r for r in weighed if "planned" in r["banks"]]
    if planned:
        print("\n| net | target | mode | planned banks (copies included) | trace's fewest at 2 | words of banks / "
              "of tensors | storage of the banks (modeled) | one memory per tensor (modeled) | served | the trace keeps "
              "to the plan |")
        print("|---|---|---|---:|---:|---:|---|---|---|---|")
        res = lambda s: f"{s['bram18']} BRAM18, {s['lut']:,} LUT"    # noqa: E731
        for r in planned:
            pl, rc = r["banks"]["planned"], r["banks"]["region_coordinates"]
            bad = [o["region"] for o in pl["regions"] if not o["ok"]]
            print(f"| {r['net']} | {r['target']} | {r['mode']} | {pl['banks']} | {rc['banks']} | "
                  f"{pl['words'] / max(pl['region_words'], 1):.2f} | {res(pl['storage'])} | {res(pl['whole_storage'])} | "
                  f"{'yes' if pl['plan_served'] else 'NO'} | {'yes' if pl['ok'] else 'NO: ' + ', '.join(bad[:2])} |")


if __name__ == "__main__":
    main()
