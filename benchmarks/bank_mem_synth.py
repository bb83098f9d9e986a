"""One region of a design's activation memory in its planned banks, synthesized: the
hlsgen_bank_mem that rtl/hlsgen_top_mem_banks.sv instantiates for that region (its banks, its
ports and their routes), through Yosys `synth_xilinx -family xcup` (yowasp, slang frontend).
Prints its cells (SYNTHESIZED) beside the block RAMs the plan models for it.

    .venv/bin/python benchmarks/bank_mem_synth.py [--project OUT] [--region K]

Without --project it builds make demo's design (designs/demo-cnn-ultra96.yaml) in a temporary
folder. Region 0 of make demo's design takes about 5 minutes of CPU.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sim"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, help="a built project (default: build make demo's design)")
    ap.add_argument("--region", type=int, default=0, help="the region's index in the bank plan (default 0)")
    a = ap.parse_args()
    from hlsgen.backends.rtl.act_mem import bank_memory
    from hlsgen_sim.yosys import yosys_cells

    with tempfile.TemporaryDirectory() as work:
        out = a.project
        if out is None:
            out = Path(work) / "demo"
            subprocess.run([sys.executable, "-m", "hlsgen", "build", str(ROOT / "designs" / "demo-cnn-ultra96.yaml"),
                            "-o", str(out)], check=True, capture_output=True)
        synth = json.loads((out / "sim" / "design.json").read_text())["synth"]
        am, plan = synth["act_mem"], synth["act_mem"]["banking"]
        banked = bank_memory({"clients": am["clients"]}, plan, [0] * int(am["words"]))
        m = next(x for x in banked["mems"] if x["name"] in (f"region{a.region}", f"region{a.region}_copy0"))
        reg = plan["regions"][a.region]
        params = {"SB": int(synth["cores"][0]["core_params"]["SB"]),      # the memory's word bits
                  **{k: m[k] for k in ("N", "C", "H", "W", "LBC", "LBH", "LBW", "TWO_WRITES")},
                  "NR": max(1, len(m["reads"])), "NW": max(1, len(m["writes"])), "CB": banked["CB"], **m["routes"]}
        t = time.time()
        cells = yosys_cells(Path(work) / "yosys", [ROOT / "templates" / "rtl" / "hlsgen_bank_mem.sv"], "hlsgen_bank_mem",
                            params, timeout=7200, frontend="slang", slang_options="--unroll-limit=100000000 ")
        lut = sum(v for k, v in cells.items() if k.startswith("LUT"))
        print(f"region {a.region} ({reg['region'][:40]}): {m['N']} x {m['C']} x {m['H']} x {m['W']} words of {params['SB']} "
              f"bits in {reg['banks']} banks; {len(m['reads'])} read and {len(m['writes'])} write ports, "
              f"{m['routes']['PR'] + m['routes']['PW']} routed port-bank pairs")
        print(f"SYNTHESIZED (Yosys {time.time() - t:.0f} s): {cells.get('RAMB18E2', 0)} RAMB18E2, "
              f"{cells.get('RAMB36E2', 0)} RAMB36E2, {cells.get('DSP48E2', 0)} DSP48E2, {lut:,} LUT "
              f"({', '.join(f'{k} {v:,}' for k, v in sorted(cells.items()) if k.startswith('LUT'))}), "
              f"{cells.get('FDRE', 0):,} FDRE")
        print(f"PLANNED: {reg['bank_storage']['bram18']} BRAM18, {reg['bank_storage']['lut']:,} LUT of LUT RAM (modeled)")


if __name__ == "__main__":
    main()
