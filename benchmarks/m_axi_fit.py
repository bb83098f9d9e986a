"""hlsgen_m_axi (one m_axi bundle's engine) as Yosys builds it, against its model,
hlsgen.backends.rtl.offchip.M_AXI_FIT and M_AXI_FF_FIT, fitted on benchmarks/m_axi_points.json.

    .venv/bin/python benchmarks/m_axi_fit.py             # the fit and each engine's error
    .venv/bin/python benchmarks/m_axi_fit.py --check     # exit 1 if M_AXI_FIT / M_AXI_FF_FIT are not the fit
    .venv/bin/python benchmarks/m_axi_fit.py --collect   # synthesize the engines of ENGINES again (1.5 min)

Each point is one engine: its channels (NCH), how many write, its data bits (DW), its beats per
channel, and Yosys's LUT (in sites, LUT RAM included) and FF (`synth_xilinx -family xcup`, the
slang frontend). The data bits hardly matter (the data passes through); the engine's state is a
channel's beats (BB bits) and its bursts in flight, so its logic grows with the channels and
their beats' bits, and it has a read path where any channel reads and a write path where any
writes. Least squares, no coefficient negative, each engine weighted by 1 / sqrt(its count)
(bank_fit.weighted_fit).
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POINTS = ROOT / "benchmarks" / "m_axi_points.json"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sim"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bank_fit import weighted_fit  # noqa: E402
from hlsgen.backends.rtl.offchip import M_AXI_FF_FIT, M_AXI_FIT, MAXB, OUTST, m_axi_inputs  # noqa: E402

# (channels, of them writing, data bits, beats of each channel)
ENGINES = [(1, 0, 64, 64), (1, 1, 512, 64), (2, 1, 64, 128), (4, 2, 64, 256), (4, 1, 256, 256), (8, 2, 64, 512),
           (8, 4, 128, 512), (12, 4, 64, 512), (16, 8, 64, 1024), (4, 2, 512, 4096)]


def load(path: Path = POINTS) -> list:
    return json.loads(path.read_text())


def price(p: dict, coef: dict) -> float:
    """An engine's count (LUT or FF) as `coef` prices it."""
    x = m_axi_inputs(p["channels"], p["writes"], p["beats"])
    return sum(coef[k] * x[k] for k in x)


def collect() -> list:
    from hlsgen_sim.yosys import resources, yosys_cells
    rtl = ROOT / "templates" / "rtl" / "hlsgen_m_axi.sv"
    points = []
    for nch, writes, dw, beats in ENGINES:
        t0 = time.perf_counter()
        p = {"DW": dw, "NCH": nch, "MAXB": MAXB, "OUTST": OUTST,
             "CH_WRITE": f"{nch}'b" + "".join("1" if c < writes else "0" for c in reversed(range(nch))),
             "CH_BEATS": f"{32 * nch}'h" + "".join(f"{beats:08x}" for _ in range(nch))}
        with tempfile.TemporaryDirectory() as work:
            got = resources(yosys_cells(Path(work), [rtl], "hlsgen_m_axi", p, timeout=900, frontend="slang"))
        points.append({"channels": nch, "writes": writes, "data_bits": dw, "beats": [beats] * nch,
                       "lut": got["LUT"], "ff": got["FF"]})
        print(f"  {nch} channels ({writes} writing), {dw} bits, {beats} beats each: {got['LUT']:,} LUT, "
              f"{got['FF']:,} FF ({time.perf_counter() - t0:.0f} s)", flush=True)
    return points


def fit(points: list):
    keys = sorted(M_AXI_FIT)
    terms = [m_axi_inputs(p["channels"], p["writes"], p["beats"]) for p in points]
    return {name: weighted_fit(terms, [p[name] for p in points], keys, 100) for name in ("lut", "ff")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collect", action="store_true", help="synthesize the engines again and rewrite the points")
    ap.add_argument("--check", action="store_true", help="exit 1 unless M_AXI_FIT and M_AXI_FF_FIT are the fit")
    a = ap.parse_args()
    if a.collect:
        POINTS.write_text(json.dumps(collect(), indent=1) + "\n")
        print(f"wrote {POINTS}")
    points = load()
    f = fit(points)
    print("| channels | writing | data bits | beats | LUT (Yosys) | LUT (fit) | error | FF (Yosys) | FF (fit) | error |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in points:
        lut, ff = price(p, f["lut"]), price(p, f["ff"])
        print(f"| {p['channels']} | {p['writes']} | {p['data_bits']} | {p['beats'][0]:,} | {p['lut']:,} | {lut:,.0f} | "
              f"{lut / p['lut'] - 1:+.1%} | {p['ff']:,} | {ff:,.0f} | {ff / p['ff'] - 1:+.1%} |")
    print(f"fit: LUT {f['lut']}, FF {f['ff']}")
    if a.check and (f["lut"] != M_AXI_FIT or f["ff"] != M_AXI_FF_FIT):
        print(f"M_AXI_FIT / M_AXI_FF_FIT in hlsgen/backends/rtl/offchip.py are {M_AXI_FIT} / {M_AXI_FF_FIT}: "
              "not the fit", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
