"""One region of a design's activation memory in its planned banks, synthesized: the
hlsgen_bank_mem that rtl/hlsgen_top_mem.sv instantiates for that region (its banks, its
ports and their routes), through Yosys `synth_xilinx -family xcup` (yowasp, slang frontend).
Prints its cells (SYNTHESIZED) beside the block RAMs the plan models for it.

    .venv/bin/python benchmarks/bank_mem_synth.py [--project OUT] [--region K|all]

Without --project it builds make demo's design (designs/demo-cnn-ultra96.yaml) in a temporary
folder. Region 0 of make demo's design takes under a minute of Yosys. `--region all` synthesizes
every region in turn (a copied region once, counted per copy) and adds them up.
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
    ap.add_argument("--region", default="0", help="the region's index in the bank plan (default 0), or `all`")
    a = ap.parse_args()
    from hlsgen.backends.rtl.act_mem import bank_memory

    with tempfile.TemporaryDirectory() as work:
        out = a.project
        if out is None:
            out = Path(work) / "demo"
            subprocess.run([sys.executable, "-m", "hlsgen", "build", str(ROOT / "designs" / "demo-cnn-ultra96.yaml"),
                            "-o", str(out)], check=True, capture_output=True)
        synth = json.loads((out / "sim" / "design.json").read_text())["synth"]
        am, plan = synth["act_mem"], synth["act_mem"]["banking"]
        banked = bank_memory({"clients": am["clients"]}, plan, [0] * int(am["words"]))
        regions = range(len(plan["regions"])) if a.region == "all" else [int(a.region)]
        total = {"bram18": 0, "lut": 0, "lutram": 0, "ff": 0, "dsp": 0, "p_bram18": 0, "p_lut": 0}
        for k in regions:
            one = _region(work, k, synth, plan, banked)
            for key in total:
                total[key] += one[key]
        if len(regions) > 1:
            print(f"ALL {len(regions)} REGIONS, copies included: SYNTHESIZED {total['bram18']} BRAM18 (a RAMB36E2 "
                  f"counted as 2), {total['dsp']} DSP48E2, {total['lut']:,} LUT of logic, {total['lutram']:,} LUT RAM "
                  f"cells, {total['ff']:,} FDRE; PLANNED {total['p_bram18']} BRAM18 and {total['p_lut']:,} LUT of "
                  "LUT RAM (modeled). Not included: the wrapper (rtl/hlsgen_top_mem.sv) that divides each port's "
                  "flat address into coordinates and picks a read's region.")


def _region(work: str, k: int, synth: dict, plan: dict, banked: dict) -> dict:
    """Synthesize region k's hlsgen_bank_mem (its first copy; a copy is the same memory) and
    print it; returns its figures times its copies."""
    from hlsgen_sim.yosys import yosys_cells

    m = next(x for x in banked["mems"] if x["name"] in (f"region{k}", f"region{k}_copy0"))
    reg = plan["regions"][k]
    copies = max(1, int(reg["copies"]))
    params = {"SB": int(synth["cores"][0]["core_params"]["SB"]),      # the memory's word bits
              **{key: m[key] for key in ("N", "C", "H", "W", "LBC", "LBH", "LBW", "TWO_WRITES")},
              "NR": max(1, len(m["reads"])), "NW": max(1, len(m["writes"])), "CB": banked["CB"], **m["routes"]}
    t = time.time()
    cells = yosys_cells(Path(work) / f"yosys{k}", [ROOT / "templates" / "rtl" / "hlsgen_bank_mem.sv"], "hlsgen_bank_mem",
                        params, timeout=7200, frontend="slang", slang_options="--unroll-limit=100000000 ")
    lut = sum(v for key, v in cells.items() if key.startswith("LUT"))
    lutram = sum(v for key, v in cells.items() if key.startswith("RAM") and not key.startswith("RAMB"))
    bram18 = cells.get("RAMB18E2", 0) + 2 * cells.get("RAMB36E2", 0)
    print(f"region {k} ({reg['region'][:40]}): {m['N']} x {m['C']} x {m['H']} x {m['W']} words of {params['SB']} "
          f"bits in {reg['banks']} banks{f', {copies} copies' if copies > 1 else ''}; {len(m['reads'])} read and "
          f"{len(m['writes'])} write ports, {m['routes']['PR'] + m['routes']['PW']} routed port-bank pairs")
    print(f"  SYNTHESIZED (one copy, Yosys {time.time() - t:.0f} s): {cells.get('RAMB18E2', 0)} RAMB18E2, "
          f"{cells.get('RAMB36E2', 0)} RAMB36E2, {cells.get('DSP48E2', 0)} DSP48E2, {lut:,} LUT "
          f"({', '.join(f'{key} {v:,}' for key, v in sorted(cells.items()) if key.startswith('LUT'))}), "
          f"{lutram:,} LUT RAM cells ({', '.join(f'{key} {v:,}' for key, v in sorted(cells.items()) if key.startswith('RAM') and not key.startswith('RAMB')) or 'none'}), "
          f"{cells.get('FDRE', 0):,} FDRE", flush=True)
    print(f"  PLANNED (all copies): {reg['bank_storage']['bram18']} BRAM18, {reg['bank_storage']['lut']:,} LUT of "
          "LUT RAM (modeled)", flush=True)
    return {"bram18": bram18 * copies, "lut": lut * copies, "lutram": lutram * copies, "ff": cells.get("FDRE", 0) * copies,
            "dsp": cells.get("DSP48E2", 0) * copies, "p_bram18": int(reg["bank_storage"]["bram18"]),
            "p_lut": int(reg["bank_storage"]["lut"])}


if __name__ == "__main__":
    main()
