"""Word-level bits of a built project's cores: Yosys's cells before any mapping
(`yosys.word_cells`: read_slang keeping the hierarchy, proc, opt, wreduce), summed per module
and cell kind as count x width ($add, $mux, $dffe, ...), so that the control's widths
(hlsgen_core) and the datapath's (hlsgen_core_dp) can be compared. Seconds per core.

    .venv/bin/python benchmarks/word_bits.py OUT [CORE ...]     (OUT: an `hlsgen build` project)
"""
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main():
    sys.path.insert(0, str(ROOT / "sim"))
    from hlsgen_sim import synth_design, yosys

    out = Path(sys.argv[1])
    cores = json.loads((out / "sim" / "design.json").read_text())["synth"]["cores"]
    pick = [int(a) for a in sys.argv[2:]] or [c["index"] for c in cores]
    print("| core | module | cell | bits |")
    print("|---|---|---|---:|")
    for c in cores:
        if c["index"] not in pick:
            continue
        sources, params = synth_design.core_inputs(out, c)
        with tempfile.TemporaryDirectory() as work:
            mods = yosys.word_cells(Path(work), sources, "hlsgen_core", params, widths=True)
        bits = {(mod, cell): b for mod, cells in mods.items() for cell, b in yosys.cell_bits(cells).items()}
        for (mod, cell), b in sorted(bits.items(), key=lambda kv: -kv[1]):
            if b >= 100:
                print(f"| {c['index']} {', '.join(c['tasks'])} | {mod} | {cell} | {b:,} |")


if __name__ == "__main__":
    main()
