"""Could the RTL as modeled steer the schedule? make demo's design (designs/demo-cnn-ultra96.yaml)
scheduled under lower LUT and DSP budgets than its --resource-cap gives, each schedule rendered
as `hlsgen build` renders it (nothing written) and its RTL priced (report.json's
rtl_synthesis_model: the cores whole and the activation memory). All MODELED, nothing
synthesized.

    .venv/bin/python benchmarks/steer_trial.py        # about 20 s

If the whole RTL fell as the schedule's budget fell, the build could lower the budget until the
RTL fits the cap. It does not (docs/rtl.md, stop 46): lower budgets pick schedules whose
memories' routing, which the scheduler does not price, is larger. At stop 50 (reads without
address compares, banks of a region's bits) the whole RTL is 49,026 LUT at the default budget,
34,385 to 68,239 under LUT budgets of 8,000 to 4,000 and 26,864 to 57,017 under DSP budgets of
260 to 60 (stop 49: 44,938 to 86,447 and 34,866 to 70,108; stop 46: 108,775 to 125,454 at
8,000 to 5,000 and 39,678 to 115,930): it still does not fall steadily with the budget.
"""
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hlsgen import pipeline  # noqa: E402
from hlsgen.backends.vitis.project import render  # noqa: E402
from hlsgen.design import load_design, materialize_model  # noqa: E402
from hlsgen.schedule import ScheduleOptions, load_device, schedule  # noqa: E402
from hlsgen.schedule import scheduler  # noqa: E402

LUT_BUDGETS = [8000, 7000, 6000, 5000, 4000]
DSP_BUDGETS = [260, 240, 220, 200, 180, 150, 120, 100, 80, 60]


def main() -> int:
    design = load_design(ROOT / "designs" / "demo-cnn-ultra96.yaml")
    device = load_device(design.device)
    with tempfile.TemporaryDirectory() as work:
        g = pipeline.load(str(materialize_model(design, Path(work))), None)
    values = pipeline.run_golden(g, pipeline.quantize_inputs(g, pipeline.float_inputs(g, None, design.seed)))
    opts = ScheduleOptions(mode=design.options.get("mode", "auto"), resource_cap=design.options.get("resource_cap", 0.8))
    full = scheduler.budget
    print("| budget | stages | cycles (modeled) | schedule LUT | RTL LUT (cores + memory) | cores | memory |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for what, values_ in (("default", [None]), ("lut", LUT_BUDGETS), ("dsp", DSP_BUDGETS)):
        for v in values_:
            scheduler.budget = (lambda dev, cap, v=v: full(dev, cap) if v is None
                                else dataclasses.replace(full(dev, cap), **{what: v}))
            try:
                s = schedule(g, device, opts)
            finally:
                scheduler.budget = full
            syn = json.loads(render(g, s, device, values)["report.json"])["rtl_synthesis_model"]
            stages = " ".join(f"{st.mode[0].upper()}{len(st.tasks)}" for st in s.stages)
            print(f"| {what if v is None else f'{what} {v:,}'} | {stages} | {s.total_cycles:,} | {s.resources.lut:,} | "
                  f"{syn['whole']['lut']:,} | {syn['cores_total']['lut']:,} | {syn['memory']['lut']:,} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
