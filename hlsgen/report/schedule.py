"""Readable reports of a Schedule: the stage table, the mode comparison and the Gantt plot.
Every figure here is modeled by the cost model; the reports say so."""
from __future__ import annotations

from typing import Dict, List

from ..schedule.cost import Resources, default_port_bits
from ..schedule.device import RESOURCES, Device
from ..schedule.schedule import Schedule
from .inspect import display_name

MODELED = "figures are MODELED by hlsgen's cost model (not simulated, not synthesized)"


def _kb(nbytes: float) -> str:
    if nbytes >= 1 << 20:
        return f"{nbytes / (1 << 20):.2f} MiB"
    if nbytes >= 1 << 10:
        return f"{nbytes / (1 << 10):.1f} KiB"
    return f"{int(nbytes)} B"


def resource_line(res: Resources, device: Device, cap: Resources) -> str:
    parts = []
    for k in RESOURCES:
        total = device.resource(k)
        used = getattr(res, k)
        pct = f"{100 * used / total:.0f}%" if total else "-"
        parts.append(f"{k.upper()} {used}/{total} ({pct}, cap {getattr(cap, k)})")
    return "  ".join(parts)


def format_schedule(s: Schedule, device: Device) -> str:
    lines = [f"model {display_name(s.model)} on {device.name} ({device.part}), {s.clock_mhz:g} MHz, "
             f"resource cap {s.resource_cap:g}, mode {s.mode}, objective {s.objective}, batch {s.batch}, "
             f"AXI ports {s.port_bits} bits" + (f" (narrowed from the device's {device.port_bits}: {s.port_bits} carry all "
                                                f"that one memory channel moves in a cycle)"
                                                if s.port_bits < device.port_bits
                                                and s.port_bits == default_port_bits(device, s.clock_mhz) else "")
             + (f", tasks folded {s.max_lanes} lanes wide at most (--max-lanes)" if s.max_lanes else "")
             + (f", beats of activations moved {s.max_beat_lanes} elements a cycle at most (--max-beat-lanes)"
                if s.max_beat_lanes and s.max_beat_lanes != s.max_lanes else ""),
             MODELED]
    for st in s.stages:
        head = f"stage {st.index}  {st.mode:10s} start {st.start:>12,d}  cycles {st.cycles:>12,d}"
        if st.bottleneck:
            head += f"  bottleneck {display_name(st.bottleneck, 40)}"
        lines.append(head)
        lines.append(f"  {'task':34s} {'op':15s} {'vec':>4s} {'pe':>5s} {'simd':>5s} {'cycles':>11s} {'offchip cyc':>11s} "
                     f"{'DSP':>5s} {'BRAM18':>6s} {'URAM':>4s} {'LUT':>7s}  weights")
        for t in st.tasks:
            r = t.resources
            lines.append(f"  {display_name(t.name, 34):34s} {t.op:15s} {t.folding.vec:4d} {t.folding.pe:5d} {t.folding.simd:5d} "
                         f"{t.cycles:11,d} {t.transfer_cycles:11,d} {r.dsp:5d} {r.bram18:6d} {r.uram:4d} {r.lut:7d}  {t.weights}")
        fifo = [b for b in st.buffers if b.kind == "fifo"]
        stored = [b for b in st.buffers if b.kind != "fifo"]
        if fifo:
            lines.append("  fifos: " + ", ".join(f"{display_name(b.tensor, 24)} {b.depth}x{b.width}b" for b in fifo[:12])
                         + (f" (+{len(fifo) - 12} more)" if len(fifo) > 12 else ""))
        if stored:
            lines.append("  stored: " + ", ".join(f"{display_name(b.tensor, 24)} {b.kind} {_kb(b.bits / 8)}" for b in stored[:12])
                         + (f" (+{len(stored) - 12} more)" if len(stored) > 12 else ""))
    gops = s.gops
    lines.append(f"total: {s.total_cycles:,d} cycles = {s.latency_ms:.4f} ms at {s.clock_mhz:g} MHz for batch {s.batch}; "
                 f"{s.macs:,d} MACs per input, {gops:.2f} GOPS; off-chip traffic {_kb(s.offchip_bytes)}; "
                 f"weights {'resident on chip' if s.weights_resident else 'streamed from off-chip'}")
    lines.append("resources: " + resource_line(s.resources, device, s.budget))
    cands = s.search.get("candidates") or []
    if len(cands) > 1:
        lines.append(f"auto's designs that fit, fastest first (the first is this schedule): "
                     + "; ".join(f"{c['name']} {c['segmentation']} {c['cycles']:,d} cycles" for c in cands))
    lines.extend(_fit_rounds(s))
    return "\n".join(lines)


def _budget_text(r: Dict) -> str:
    return f"DSP {r['dsp']:,d} BRAM18 {r['bram18']:,d} URAM {r['uram']:,d} LUT {r['lut']:,d}"


def _fit_rounds(s: Schedule) -> List[str]:
    """The stage-budget search (auto, or the segmentation --stages fixed) when it took more than
    one round or priced resources: at each stage budget the segmentation built, its cycles and its
    resources as built (every stage on its own cores and memories), and what pricing and the
    exact search found."""
    rounds = s.search.get("rounds") or []
    if len(rounds) < 2 and not any(r.get("priced") or r.get("exact") for r in rounds):
        return []
    out = [f"stage budget search: {len(rounds)} round{'s' * (len(rounds) != 1)} (picked {s.search.get('picked')}); each stage has its own "
           f"cores and memories, so a segmentation's resources add up"]
    for k, r in enumerate(rounds):
        head = f"  round {k + 1}: stage budget {_budget_text(r['stage_budget'])}: "
        if "as_built" not in r:
            out.append(head + (f"{r['segmentation']}: " if r["segmentation"] else "") + r["outcome"])
            continue
        out.append(head + f"{r['segmentation']}, {r['cycles']:,d} cycles, as built {_budget_text(r['as_built'])}; "
                   + r["outcome"])
    return out


def roofline_fraction(s: Schedule, device: Device, products_per_dsp: int) -> float:
    """Achieved ops/s over the roofline: min(peak = every DSP doing `products_per_dsp`
    multiplies per cycle at the schedule's clock, arithmetic intensity x off-chip bandwidth)."""
    ops = 2 * s.macs * s.batch
    achieved = s.gops * 1e9
    peak = 2 * device.dsp * products_per_dsp * s.clock_mhz * 1e6
    attainable = min(peak, ops / max(s.offchip_bytes, 1) * device.bandwidth_gbs * 1e9)
    return achieved / attainable


def compare_rows(schedules: Dict[str, Schedule]) -> List[Dict]:
    auto = schedules.get("auto")
    rows = []
    for mode, s in schedules.items():
        row = {"mode": mode, "stages": len(s.stages),
               "stage_modes": [st.mode for st in s.stages], "total_cycles": s.total_cycles,
               "latency_ms": round(s.latency_ms, 6), "offchip_bytes": s.offchip_bytes, "resources": s.resources.as_dict()}
        if auto is not None:
            row["auto_speedup"] = round(s.total_cycles / max(1, auto.total_cycles), 4)
        rows.append(row)
    return rows


def format_compare(schedules: Dict[str, Schedule], device: Device, failures: Dict[str, str]) -> str:
    any_s = next(iter(schedules.values()), None)
    lines = []
    if any_s is not None:
        lines.append(f"model {display_name(any_s.model)} on {device.name}, {any_s.clock_mhz:g} MHz, "
                     f"resource cap {any_s.resource_cap:g}, batch {any_s.batch}; {MODELED}")
    lines.append(f"{'mode':11s} {'stages':>6s} {'cycles':>14s} {'latency ms':>11s} {'auto speedup':>12s} "
                 f"{'DSP':>6s} {'BRAM18':>6s} {'URAM':>5s} {'LUT':>8s} {'off-chip':>10s}")
    for row in compare_rows(schedules):
        r = row["resources"]
        sp = f"{row['auto_speedup']:.2f}x" if "auto_speedup" in row else "-"
        lines.append(f"{row['mode']:11s} {row['stages']:6d} {row['total_cycles']:14,d} {row['latency_ms']:11.4f} {sp:>12s} "
                     f"{r['dsp']:6d} {r['bram18']:6d} {r['uram']:5d} {r['lut']:8d} {_kb(row['offchip_bytes']):>10s}")
    for mode, why in failures.items():
        lines.append(f"{mode:11s} does not fit: {why}")
    if "auto" in schedules:
        a = schedules["auto"]
        lines.append(f"auto stages: {a.segmentation}  (D = dataflow, S = sequential, number = tasks; "
                     f"--stages '{a.segmentation}' builds it again)")
    return "\n".join(lines)


def plot_schedule(s: Schedule, device: Device, path) -> None:
    """PNG: the stages over time (Gantt, colored by mode) and the resource-use bars."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..pipeline import write_atomic

    colors = {"dataflow": "#3b75af", "sequential": "#ef8636"}
    fig, (ax, axr) = plt.subplots(2, 1, figsize=(11, 6.5), gridspec_kw={"height_ratios": [3, 1.3]})
    ntask = sum(len(st.tasks) for st in s.stages)
    row = 0
    yticks, ylabels = [], []
    show_tasks = ntask <= 60
    for st in s.stages:
        if show_tasks:
            for t in st.tasks:
                dur = max(t.cycles, t.transfer_cycles) * (s.batch if st.mode == "sequential" else 1)
                ax.barh(row, max(dur, 1), left=t.start, color=colors[st.mode], alpha=0.85)
                yticks.append(row)
                ylabels.append(display_name(t.name, 28))
                row += 1
        else:
            ax.barh(row, st.cycles, left=st.start, color=colors[st.mode], alpha=0.85)
            yticks.append(row)
            ylabels.append(f"stage {st.index} ({len(st.tasks)} tasks)")
            row += 1
    ax.set_yticks(yticks)
    ax.set_yticklabels(ylabels, fontsize=6 if row > 30 else 8)
    ax.invert_yaxis()
    ax.set_xlabel("cycle (modeled)")
    ax.set_title(f"{s.model} on {device.name}: {s.mode}, {s.total_cycles:,d} cycles = {s.latency_ms:.3f} ms "
                 f"at {s.clock_mhz:g} MHz (modeled)", fontsize=10)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=c, label=m) for m, c in colors.items()], loc="upper right", fontsize=8)
    names = [k.upper() for k in RESOURCES]
    used = [100 * getattr(s.resources, k) / max(1, device.resource(k)) for k in RESOURCES]
    axr.barh(names, used, color="#5a9e6f")
    axr.axvline(100 * s.resource_cap, color="red", linestyle="--", linewidth=1, label=f"cap {s.resource_cap:g}")
    axr.set_xlim(0, 100)
    axr.set_xlabel("% of device (modeled)")
    axr.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=110))
    plt.close(fig)
