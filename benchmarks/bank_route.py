"""hlsgen_bank_mem's routing as masks (stop 48) against the if/else form it replaced (the file at
git revision --rev, ba3cc72 by default): that they are one circuit, how long Yosys takes to read
each, and what each synthesizes to.

    .venv/bin/python benchmarks/bank_route.py miter                   # bounded equivalence, 4 regions x 2 forms
    .venv/bin/python benchmarks/bank_route.py scale [--ports 144 288] # read_slang + proc of a wide region
    .venv/bin/python benchmarks/bank_route.py lut OUT REGION          # synth_xilinx of one memory of a project

miter: for small regions (skewed banks, two writes a bank, routes to some banks only, six reads
of one bank) Yosys's `sat` finds no input sequence of 4 cycles from the all-zero state that
tells the two files apart, in the generate form and in the loop form (HLSGEN_SIM_BANKS_LOOP).
Bounded, not a proof for longer runs or other sizes.
scale: a region of 32 banks whose every bank routes every one of P read ports (as maxpool's
second region on the U280, 288 ports), 2-bit words: seconds for read_slang, hierarchy, proc and
opt -fast, or why Yosys failed.
lut: `make synth-yosys SCOPE=mem`'s synthesis of one memory (OUT/sim/design.json's parameters)
with each file: LUT, LUT RAM sites, FF, BRAM18, seconds.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sim"))

from hlsgen.backends.rtl.act_mem import coordinate_bits, route_params  # noqa: E402
from hlsgen_sim import yosys  # noqa: E402
from hlsgen_sim.run_design import SIM_DEFINES  # noqa: E402

NOW = ROOT / "templates" / "rtl" / "hlsgen_bank_mem.sv"
TOP = "hlsgen_bank_mem"

# region, read routes (None: every bank), write routes (None: every bank)
CASES = {
    "skewed, two writes, routed": ({"C": 2, "H": 2, "W": 3, "LBC": 1, "LBH": 0, "LBW": 1, "KWH": 1, "KCW": 1, "NR": 3,
                                    "NW": 2, "TWO_WRITES": 1, "SB": 3}, [[0, 1], [1, 2, 3], [3]], None),
    "4 banks, 4 reads, 2 writes": ({"C": 4, "H": 2, "W": 2, "LBC": 1, "LBH": 0, "LBW": 1, "NR": 4, "NW": 2,
                                    "TWO_WRITES": 0, "SB": 2}, None, None),
    "3 writes into 2 banks": ({"C": 2, "H": 2, "W": 4, "LBC": 0, "LBH": 0, "LBW": 1, "NR": 5, "NW": 3, "TWO_WRITES": 1,
                               "SB": 2}, [[0, 1], [1], [0], [0, 1], [1]], [[0, 1], [0], [1]]),
    "6 reads of one bank": ({"C": 3, "H": 2, "W": 2, "LBC": 0, "LBH": 0, "LBW": 0, "NR": 6, "NW": 2, "TWO_WRITES": 0,
                             "SB": 2}, None, None),
}


def _params(p: dict, reads, writes) -> dict:
    p = dict(p)
    nb = 1 << (p["LBC"] + p["LBH"] + p["LBW"])
    p["CB"] = coordinate_bits(p.get(d, 1) for d in ("N", "C", "H", "W"))
    p.update(route_params(reads or [list(range(nb))] * p["NR"], writes or [list(range(nb))] * p["NW"], nb))
    return p


def _old(rev: str, work: Path) -> Path:
    text = subprocess.run(["git", "show", f"{rev}:templates/rtl/hlsgen_bank_mem.sv"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    path = work / "old" / "hlsgen_bank_mem.sv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def miter(rev: str, work: Path) -> int:
    both = work / "both.sv"       # one file, the old module under `ifdef OLD_ROUTING
    both.write_text("`ifdef OLD_ROUTING\n" + _old(rev, work).read_text() + "`else\n" + NOW.read_text() + "`endif\n")
    bad = 0
    for k, (name, (p, reads, writes)) in enumerate(CASES.items()):
        for form, defines in (("generate", {}), ("loop", SIM_DEFINES)):
            t = time.monotonic()
            diff = yosys.bounded_equivalent(work / f"case{k}-{form}", [both], TOP, _params(p, reads, writes),
                                            {**defines, "OLD_ROUTING": 1}, defines, cycles=4)
            bad += bool(diff)
            print(f"{name}, {form} form: {'one circuit for 4 cycles' if not diff else 'DIFFER: ' + diff[-800:]} "
                  f"({time.monotonic() - t:.0f} s)", flush=True)
    return 1 if bad else 0


def scale(rev: str, work: Path, ports) -> int:
    for p in ports:
        for label, src in (("masks (now)", NOW), (f"if/else ({rev})", _old(rev, work))):
            w = work / f"s{p}-{label.split()[0]}"
            w.mkdir(parents=True)
            shutil.copy(src, w / "hlsgen_bank_mem.sv")
            prm = _params({"C": 1, "H": 1, "W": 64, "LBC": 0, "LBH": 0, "LBW": 5, "NR": p, "NW": 1, "TWO_WRITES": 0,
                           "SB": 2}, None, None)
            # the parameters through a wrapper's text, as hlsgen_top_mem gives them (slang takes
            # a -G value this long as a file name)
            (w / "wrap.sv").write_text(
                f"module wrap(input logic clk, rst_n, input logic [{p - 1}:0] re, input logic [{p * prm['CB'] - 1}:0] rw,\n"
                f"            output logic [{2 * p - 1}:0] rdata, output logic conflict);\n"
                f"    {TOP} #({', '.join(f'.{k}({v})' for k, v in prm.items())}) m(.clk, .rst_n, .re, .rn('0), "
                ".rc('0), .rh('0), .rw, .rdata, .we(1'b0), .wn('0), .wc('0), .wh('0), .ww('0), .wdata('0), .conflict);\n"
                "endmodule\n")
            cmd, _ = yosys._prepare(w, [w / "hlsgen_bank_mem.sv", w / "wrap.sv"], {})
            t = time.monotonic()
            r = subprocess.run(cmd + ["-q", "-p", f"read_slang -j 1 --unroll-limit={yosys.SLANG_UNROLL_LIMIT} "
                                      "hlsgen_bank_mem.sv wrap.sv --top wrap; hierarchy -top wrap; proc; opt -fast"],
                               capture_output=True, text=True, cwd=w)
            print(f"{p} read ports x 32 banks ({32 * p:,} routed pairs), {label}: "
                  f"{'read' if r.returncode == 0 else 'FAILED: ' + yosys._why(r)} in {time.monotonic() - t:.0f} s",
                  flush=True)
    return 0


def lut(rev: str, work: Path, out: Path, region: str) -> int:
    mems = json.loads((out / "sim" / "design.json").read_text())["synth"]["act_mem"]["memories"]
    m = next((m for m in mems if m["name"] == region), None)
    if m is None:
        print(f"no memory {region!r} in {out}/sim/design.json: {', '.join(x['name'] for x in mems)}", file=sys.stderr)
        return 2
    for label, src in (("masks (now)", NOW), (f"if/else ({rev})", _old(rev, work))):
        t = time.monotonic()
        y = yosys.resources(yosys.yosys_cells(work / f"l-{label.split()[0]}", [src], TOP, m["params"], frontend="slang"))
        print(f"{out.name} {region}, {label}: {y['LUT']:,} LUT ({y['LUTRAM']:,} LUT RAM sites), {y['FF']:,} FF, "
              f"{y['BRAM18']} BRAM18 ({time.monotonic() - t:.0f} s)", flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["miter", "scale", "lut"])
    ap.add_argument("args", nargs="*", help="lut: OUT REGION")
    ap.add_argument("--rev", default="ba3cc72", help="the revision of the if/else form (default ba3cc72)")
    ap.add_argument("--ports", type=int, nargs="+", default=[144, 288])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.what == "miter":
            return miter(a.rev, Path(tmp))
        if a.what == "scale":
            return scale(a.rev, Path(tmp), a.ports)
        if len(a.args) != 2:
            ap.error("lut takes OUT REGION")
        return lut(a.rev, Path(tmp), Path(a.args[0]), a.args[1])


if __name__ == "__main__":
    sys.exit(main())
