"""The RTL on two simulators: each Foundation test net built for the capped small FPGA
(designs/devices/small.yaml at a 20% cap, weights streamed on m_axi) or the U280, simulated with
`make sim` (cocotb + Verilator, the banks in their loop form) and with `make sim SIM=icarus`
(Icarus Verilog on the RTL as Yosys's slang frontend elaborates it for synthesis, written back as
Verilog-2005: the banks in their generate form, no `ifdef VERILATOR` checks). Prints, per design,
whether each passed bit-exact, both simulated cycle counts (SIMULATED, ap_start to ap_done) and
whether they are equal, the Verilog-2005's size, and the wall seconds of each step.

    .venv/bin/python benchmarks/icarus_designs.py [--target capped|u280] [--mode M ...] [--net N ...]
                                                  [--demo | --demo-only] [--json FILE]

--demo adds `make demo`'s design (designs/demo-cnn-ultra96.yaml). Icarus simulates a few hundred
to a few thousand cycles a second on these designs: the capped sequential designs of 75,000 and
more cycles take minutes each.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rtl_designs import NETS, ROOT, TARGETS, built, built_at  # noqa: E402


def _sim(out: Path, simulator: str) -> dict:
    t0 = time.monotonic()
    r = subprocess.run(["make", "-C", str(out), "sim", f"SIM={simulator}"], capture_output=True, text=True)
    wall = time.monotonic() - t0
    res_file = out / "results" / "sim.json"
    res = json.loads(res_file.read_text()) if res_file.exists() else {}
    res_file.unlink(missing_ok=True)
    v2005 = res.get("verilog_2005") or {}
    return {"exit": r.returncode, "passed": bool(res.get("passed")), "mismatches": res.get("mismatches"),
            "elements": res.get("elements"), "cycles": res.get("cycles"), "wall_s": round(wall, 1),
            "verilog_mb": v2005.get("mb"), "verilog_s": v2005.get("written_s"),
            "banks": res.get("act_mem_banks"),
            "error": "" if r.returncode == 0 else next(
                # make sim's own error (stderr) before its progress lines (stdout)
                (l for l in [*reversed(r.stderr.splitlines()), *reversed(r.stdout.splitlines())]
                 if l.startswith(("make sim", "sim: "))),
                (r.stderr.strip().splitlines() or ["?"])[-1])[:400]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=sorted(TARGETS), default="capped")
    ap.add_argument("--mode", choices=["dataflow", "sequential", "auto"], action="append")
    ap.add_argument("--net", choices=NETS, action="append")
    ap.add_argument("--demo", action="store_true", help="also make demo's design (designs/demo-cnn-ultra96.yaml)")
    ap.add_argument("--demo-only", action="store_true", help="make demo's design alone")
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "icarus_designs.json")
    a = ap.parse_args()
    jobs = [(n, a.target, m) for n in (a.net or NETS) for m in (a.mode or ["dataflow", "sequential", "auto"])]
    if a.demo_only:
        jobs = []
    if a.demo or a.demo_only:
        jobs.append(("make demo", "ultra96v2", "designs/demo-cnn-ultra96.yaml"))
    print(f"built at {built_at()}; cycles SIMULATED (ap_start to ap_done)", flush=True)
    rows = []
    for place, name, out in built(jobs):
        print(f"{place} {name}: Verilator ...", flush=True)
        v = _sim(out, "verilator")
        print(f"{place} {name}: Icarus ...", flush=True)
        i = _sim(out, "icarus")
        rows.append({"design": name, "verilator": v, "icarus": i})
        same = v["cycles"] == i["cycles"] and v["cycles"] is not None
        print(f"{place} {name}: Verilator {'PASSED' if v['passed'] else 'FAILED'} {v['cycles']} cycles ({v['wall_s']} s); "
              f"Icarus {'PASSED' if i['passed'] else 'FAILED ' + i['error']} {i['cycles']} cycles "
              f"({i['wall_s']} s, Verilog-2005 {i['verilog_mb']} MB in {i['verilog_s']} s); "
              f"{'same cycles' if same else 'CYCLES DIFFER'}", flush=True)
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"built_at": built_at(), "rows": rows}, indent=1) + "\n")
    print()
    print("| design | Verilator | Icarus (RTL as Yosys reads it) | cycles (Verilator / Icarus) | Verilog-2005 | "
          "Verilator s | Icarus s |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        v, i = r["verilator"], r["icarus"]
        ok = lambda s: f"bit-exact, {s['elements']} elements" if s["passed"] else f"FAILED ({s['error'] or s['mismatches']})"
        print(f"| {r['design']} | {ok(v)} | {ok(i)} | {v['cycles']:,} / {i['cycles'] or 0:,}"
              f"{'' if v['cycles'] == i['cycles'] else ' DIFFER'} | {i['verilog_mb']} MB | {v['wall_s']} | {i['wall_s']} |")
    bad = [r["design"] for r in rows if not (r["verilator"]["passed"] and r["icarus"]["passed"]
                                              and r["verilator"]["cycles"] == r["icarus"]["cycles"])]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} designs bit-exact on both simulators in the same cycles"
          + (f"; not: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
