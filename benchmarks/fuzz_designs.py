"""Fuzz the backends with seeded random CNNs (hlsgen/zoo/randnets.py: chains of blocks, or with
`--family graph` graphs of several inputs, outputs and branches): for each seed, build the
model for a seeded random target (device, mode, cap, lane and port limits, inputs and outputs on
or off chip), run `make csim`, `make sim` (with the bank plan checked against the simulated trace of every
access) and `make sim` again under random input gaps and output backpressure, and record whether
each agreed with the golden bit for bit and how far the simulated cycles (at full rate) are from
the modeled ones.

    .venv/bin/python benchmarks/fuzz_designs.py --seeds 0-39 [--family graph] [--jobs 2] [--out build/fuzz]

Writes OUT/results.jsonl (one line per seed) and prints a table; exit 1 if any design failed
(a refused build is listed with its reason and is not a failure unless --strict).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from hlsgen.zoo.randnets import random_design  # noqa: E402


def run(cmd, cwd=None, timeout=900):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def one(seed: int, out: Path, family: str = "chain", sims=("csim", "sim")) -> dict:
    import onnx
    t0 = time.time()
    model, notes, (dev, opts, label) = random_design(family, seed, ROOT / "designs" / "devices" / "small.yaml")
    d = out / f"{family}{seed}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    onnx.save(model, d / "model.onnx")
    rec = {"seed": seed, "family": family, "target": label, "net": notes, "status": "ok"}
    b = run([str(ROOT / ".venv" / "bin" / "hlsgen"), "build", str(d / "model.onnx"), "--device", dev, *opts,
             "-o", str(d / "prj")])
    if b.returncode != 0:
        err = [ln for ln in b.stderr.splitlines() if ln.strip()]
        rec.update(status="refused" if b.returncode == 2 else "build-crash", error=(err[-1] if err else "")[:400])
        rec["seconds"] = round(time.time() - t0, 1)
        return rec
    prj = d / "prj"
    steps = [("csim", "csim", "")] if "csim" in sims else []
    if "sim" in sims:     # at full rate with the bank plan checked against the trace, then under stalls
        steps += [("sim", "sim", "--banks"), ("sim", "sim-stalls", f"--gap 0.3 --backpressure 0.4 --seed {seed}")]
    for what, step, args in steps:
        r = run(["make", "-C", str(prj), what, f"SIM_ARGS={args}"])
        res = prj / "results" / f"{what}.json"
        got = json.loads(res.read_text()) if res.exists() else None
        if r.returncode != 0 or not got or not got.get("passed"):
            tail = (r.stdout + r.stderr).strip().splitlines()[-6:]
            rec.update(status=f"{step}-failed", error=" | ".join(tail)[-600:])
            break
        if step == "sim":
            rec.update(cycles=got["cycles"], predicted=got["predicted_cycles"], cycle_error=got["cycle_error"],
                       elements=got["elements"])
            if abs(got["cycle_error"]) > 0.10:
                rec["status"] = "cycles-off"
    rec["seconds"] = round(time.time() - t0, 1)
    return rec


def seeds_of(text: str):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0-19")
    ap.add_argument("--family", choices=("chain", "graph"), default="chain",
                    help="random_net's chains of blocks (default) or random_graph's graphs")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz")
    ap.add_argument("--strict", action="store_true", help="a refused build is a failure too")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    seeds = seeds_of(a.seeds)
    results = []
    with ThreadPoolExecutor(a.jobs) as ex, open(a.out / "results.jsonl", "a") as log:
        for rec in ex.map(lambda s: one(s, a.out, a.family), seeds):
            results.append(rec)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            err = f"  {rec.get('error', '')}" if rec["status"] != "ok" else ""
            cyc = f"{rec['cycles']:>7} sim {rec['predicted']:>7} model {rec['cycle_error']:+.1%}" if "cycles" in rec else ""
            print(f"seed {rec['seed']:>4} {rec['status']:<12} {rec['target']:<36} {cyc:<34} {rec['seconds']:>5.0f} s"
                  f"  [{'; '.join(rec['net'][1:])}]{err}", flush=True)
    bad = [r for r in results if r["status"] not in ("ok",) + (() if a.strict else ("refused",))]
    ok = [r for r in results if r["status"] == "ok"]
    errs = [abs(r["cycle_error"]) for r in ok]
    print(f"{len(ok)} of {len(results)} designs bit-exact in csim and sim"
          + (f", cycles within {max(errs):.1%} of the model" if errs else "")
          + f"; {sum(r['status'] == 'refused' for r in results)} refused; {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
