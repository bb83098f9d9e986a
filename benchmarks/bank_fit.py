"""Fit the banked activation memory's routing LUTs (hlsgen/backends/rtl/banking.py's ROUTE_FIT) on
synthesized regions, and score the fit on each design left out of it.

    .venv/bin/python benchmarks/bank_fit.py                  # fit, print the table, compare with ROUTE_FIT
    .venv/bin/python benchmarks/bank_fit.py --check          # exit 1 unless ROUTE_FIT is the fit
    .venv/bin/python benchmarks/bank_fit.py --add OUT --design NAME --measured TEXT

The points are benchmarks/bank_fit_points.json: per row a region (or regions summed) of a design,
each region's route_inputs (what banking.route_terms takes, as the plan it was built with has
them, and each bank's routed ports, for other forms of the fit) and the LUTs Yosys gave the row
less its LUT RAM sites. --add appends a project's regions after `make -C OUT synth-yosys
SCOPE=mem`: each region's route_inputs from OUT/sim/design.json, its Yosys figures from
OUT/results/yosys.json.

The fit: least squares with no coefficient negative (every subset of the terms solved, the best
one kept), each row weighted by 1 / sqrt(its LUTs) so that a big region does not drown the
small ones; coefficients to two decimals. Prints MODELED-vs-SYNTHESIZED errors: in-sample, and
with each design's rows left out of the fit that prices them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hlsgen.backends.rtl.banking import ROUTE_FIT, route_terms  # noqa: E402

POINTS = Path(__file__).with_name("bank_fit_points.json")
TERMS = list(ROUTE_FIT)


def load(path: Path = POINTS) -> List[Dict]:
    """The rows, each with its `terms`: route_terms summed over its regions."""
    rows = json.loads(path.read_text())["rows"]
    for r in rows:
        r["terms"] = dict.fromkeys(TERMS, 0)
        for b in r["banks"]:
            for k, v in route_terms(b).items():
                r["terms"][k] += v
    return rows


def _nnls(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """min |a x - y| with x >= 0: every subset of columns solved, the best with none negative."""
    best, out = np.inf, np.zeros(a.shape[1])
    for mask in range(1, 1 << a.shape[1]):
        cols = [j for j in range(a.shape[1]) if mask >> j & 1]
        x, *_ = np.linalg.lstsq(a[:, cols], y, rcond=None)
        if (x < 0).any():
            continue
        full = np.zeros(a.shape[1])
        full[cols] = x
        r = float(((a @ full - y) ** 2).sum())
        if r < best:
            best, out = r, full
    return out


def weighted_fit(terms: List[Dict[str, float]], lut: List[float], keys: List[str], floor: float) -> Dict[str, float]:
    """Coefficients of `keys` (two decimals, none negative) that price each row's terms as its
    synthesized LUTs, each row weighted by 1 / sqrt(its LUTs, at least `floor`) so that a big
    row does not drown the small ones. decode_fit.py fits the decode with it too."""
    a = np.array([[t[k] for k in keys] for t in terms], dtype=float)
    y = np.array(lut, dtype=float)
    w = 1 / np.sqrt(np.maximum(y, floor))
    return {k: round(float(v), 2) for k, v in zip(keys, _nnls(a * w[:, None], y * w))}


def fit(rows: List[Dict]) -> Dict[str, float]:
    """ROUTE_FIT's coefficients from these rows."""
    return weighted_fit([r["terms"] for r in rows], [r["yosys_logic_lut"] for r in rows], TERMS, 100)


def price(row: Dict, coef: Dict[str, float]) -> float:
    return sum(coef[k] * row["terms"][k] for k in TERMS)


def left_out(rows: List[Dict]) -> List[Tuple[str, float, List[Tuple[str, float]]]]:
    """Per design: its routing LUTs' error (modeled / synthesized - 1) in total, and per row, when
    the fit is made on the other designs' rows only."""
    out = []
    for design in dict.fromkeys(r["design"] for r in rows):
        coef = fit([r for r in rows if r["design"] != design])
        mine = [r for r in rows if r["design"] == design]
        total = sum(price(r, coef) for r in mine) / sum(r["yosys_logic_lut"] for r in mine) - 1
        out.append((design, total, [(r["regions"], price(r, coef) / r["yosys_logic_lut"] - 1) for r in mine]))
    return out


def add(rows: List[Dict], project: Path, design: str, measured: str) -> List[Dict]:
    """A project's synthesized regions (make synth-yosys SCOPE=mem) as rows."""
    plan = json.loads((project / "sim" / "design.json").read_text())["synth"]["act_mem"]["banking"]
    synth = json.loads((project / "results" / "yosys.json").read_text()).get("act_mem_synth")
    if not synth:
        raise SystemExit(f"{project}/results/yosys.json has no act_mem_synth: run make -C {project} synth-yosys SCOPE=mem")
    added = []
    for reg in synth["regions"]:
        p = next(r for r in plan["regions"] if r["region"] == reg["region"])
        if "route_inputs" not in p:
            raise SystemExit(f"{project}/sim/design.json has no route_inputs: rebuild it with this hlsgen")
        added.append({"design": design, "regions": f"region {plan['regions'].index(p)}", "built": str(project),
                      "commit": "", "measured": measured, "banks": [p["route_inputs"]],
                      "yosys_logic_lut": int(reg["yosys"]["LUT"] - reg["yosys"]["LUTRAM"])})
    return rows + added


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=Path, default=POINTS)
    ap.add_argument("--check", action="store_true", help="exit 1 unless banking.ROUTE_FIT is the fit of the points")
    ap.add_argument("--add", type=Path, metavar="OUT", help="append a synthesized project's regions to the points")
    ap.add_argument("--design", help="(--add) the design's name in the points, e.g. 'make demo, 128-bit ports'")
    ap.add_argument("--measured", default="", help="(--add) when and how it was synthesized")
    a = ap.parse_args()
    rows = load(a.points)
    if a.add:
        if not a.design:
            ap.error("--add needs --design")
        doc = json.loads(a.points.read_text())
        doc["rows"] = add(doc["rows"], a.add, a.design, a.measured)
        a.points.write_text(json.dumps(doc, separators=(",", ":")).replace('{"design"', '\n{"design"') + "\n")
        print(f"{a.points}: {len(doc['rows'])} rows")
        rows = load(a.points)
    coef = fit(rows)
    if a.check:
        ok = coef == ROUTE_FIT
        print(f"the fit of {len(rows)} rows: {coef}; banking.ROUTE_FIT: {ROUTE_FIT}: {'the same' if ok else 'DIFFERENT'}")
        return 0 if ok else 1
    print(f"Routing LUTs of the banked activation memory, {len(rows)} synthesized rows of "
          f"{len({r['design'] for r in rows})} designs (Yosys, SYNTHESIZED) against the fit (MODELED)\n")
    print(f"fit: {coef}" + ("" if coef == ROUTE_FIT else f"  (banking.ROUTE_FIT is {ROUTE_FIT}: not this fit)"))
    print("\n| design | rows | synthesized LUT | modeled, in-sample | modeled, design left out | rows left out |")
    print("|---|---:|---:|---:|---:|---|")
    for design, total, per in left_out(rows):
        mine = [r for r in rows if r["design"] == design]
        y = sum(r["yosys_logic_lut"] for r in mine)
        m = sum(price(r, coef) for r in mine)
        print(f"| {design} | {len(mine)} | {y:,} | {m:,.0f} ({m / y - 1:+.0%}) | {total:+.0%} | "
              + ", ".join(f"{name} {err:+.0%}" for name, err in per) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
