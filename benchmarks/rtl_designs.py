"""RTL designs against the model: every Foundation test net built for the U280 (auto schedule),
its RTL simulated with `make sim` (cocotb + Verilator). Prints simulated cycles (ap_start to
ap_done), the core's own cycle count, and the schedule's modeled cycles.

    .venv/bin/python benchmarks/rtl_designs.py        # about 2 minutes
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8",
        "demo_cnn", "shuffle_block"]


def main():
    from hlsgen.zoo.testnets import export

    rows = []
    print("| net | simulated cycles | core's own count | modeled cycles (schedule) | model error | bit-exact |")
    print("|---|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for net in NETS:
            model = export(net, work / f"{net}.onnx", "qcdq")
            out = work / net
            subprocess.run([sys.executable, "-m", "hlsgen", "build", str(model), "--device", "u280", "-o", str(out)],
                           check=True, capture_output=True)
            r = subprocess.run(["make", "-C", str(out), "sim"], capture_output=True, text=True)
            res = json.loads((out / "results" / "sim.json").read_text())
            core = json.loads((out / "sim" / "design.json").read_text())["core_cycles"]
            print(f"| {net} | {res['cycles']:,} | {core:,} | {res['predicted_cycles']:,} | {res['cycle_error']:+.1%} | "
                  f"{'yes' if res['passed'] and r.returncode == 0 else 'NO'} |", flush=True)
            rows.append(dict(res, net=net, core_cycles=core))
    dst = ROOT / "build" / "bench" / "rtl_designs.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(rows, indent=2))
    print(f"\nwrote {dst}")


if __name__ == "__main__":
    main()
