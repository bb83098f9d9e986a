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
RAM. `--banks FILE` prints that table from a JSON this script wrote.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8",
        "demo_cnn", "shuffle_block"]
TARGETS = {"u280": ["--device", "u280"],
           "capped": ["--device", str(ROOT / "designs" / "devices" / "small.yaml"), "--resource-cap", "0.2",
                      "--weights", "offchip"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=sorted(TARGETS), action="append")
    ap.add_argument("--mode", choices=["dataflow", "sequential", "auto"], action="append")
    ap.add_argument("--io", choices=["auto", "onchip", "offchip"], default="auto")
    ap.add_argument("--banks", type=Path, help="only print the bank table of this rtl_designs JSON")
    a = ap.parse_args()
    if a.banks:
        bank_table(json.loads(a.banks.read_text()))
        return
    from hlsgen.zoo.testnets import export

    rows = []
    print("| net | target | mode | simulated cycles | modeled cycles | model error | bit-exact |")
    print("|---|---|---|---:|---:|---:|---|")
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
                        print(f"| {net} | {target} | {mode} | (refused: does not fit) | | | |", flush=True)
                        continue
                    r = subprocess.run(["make", "-C", str(out), "sim"], capture_output=True, text=True)
                    res = json.loads((out / "results" / "sim.json").read_text())
                    print(f"| {net} | {target} | {mode} | {res['cycles']:,} | {res['predicted_cycles']:,} | "
                          f"{res['cycle_error']:+.1%} | {'yes' if res['passed'] and r.returncode == 0 else 'NO'} |",
                          flush=True)
                    rows.append(dict(res, net=net, target=target, mode=mode))
    errs = [abs(r["cycle_error"]) for r in rows]
    if errs:
        print(f"\n{len(rows)} designs; model error within {max(errs):.1%} of the simulated cycles")
    bank_table(rows)
    dst = ROOT / "build" / "bench" / ("rtl_designs.json" if a.io == "auto" else f"rtl_designs-io-{a.io}.json")
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


if __name__ == "__main__":
    main()
