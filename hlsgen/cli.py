"""The `hlsgen` command: argument parsing and messages only; the work is in pipeline.py."""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Callable, NamedTuple, Optional, Tuple

import numpy as np

from . import __version__
from .errors import HlsgenError
from .schedule.scheduler import check_io, folding_widths


def _io_arg(value: str) -> str:
    """--io: a group choice or offchip:PORT,.. (checked here, so a typo exits 2 with the choices)."""
    try:
        return check_io(value)
    except HlsgenError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace(f"--io {value!r}: ", "")) from None


def _common_model_args(p):
    p.add_argument("model", help="quantized ONNX file (QONNX Quant nodes or QuantizeLinear/Clip/DequantizeLinear)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="fix the shape of a graph input with dynamic dimensions (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hlsgen", description="Quantized ONNX -> integer IR -> FPGA accelerator, verified bit for bit.")
    ap.add_argument("--version", action="version", version=f"hlsgen {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("inspect", help="list the integer tasks of a model: shapes, types, scales, MACs, parameters",
                       description="Lower a quantized ONNX model to hlsgen's integer IR and print one row per task.")
    _common_model_args(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")

    p = sub.add_parser("run", help="execute the bit-exact integer golden model (optionally against the float model)",
                       description="Run the golden model on a float input (quantized by the model's input quantizer).")
    _common_model_args(p)
    p.add_argument("--input", action="append", default=[], metavar="[NAME=]X.npy", help="float input array (default: seeded N(0,1))")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default 0)")
    p.add_argument("-o", "--output", metavar="OUT.npy", help="save the (first) output, dequantized to float32")
    p.add_argument("--compare", action="store_true", help="also execute the float ONNX model and compare every quantized tensor")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")

    p = sub.add_parser("zoo", help="build a seeded Brevitas model of the zoo and export it to quantized ONNX",
                       description="Build a zoo model in PyTorch with Brevitas (random weights from the seed, "
                                   "quantizers calibrated on seeded random inputs) and export it. Needs hlsgen[zoo].")
    p.add_argument("name", nargs="?", help="model name (see --list)")
    p.add_argument("--list", action="store_true", help="list the models, their configs, parameters and MACs")
    p.add_argument("--config", default="default", help="model configuration (default: 'default')")
    p.add_argument("-o", "--output", metavar="FILE.onnx", help="where to write (default NAME-CONFIG.onnx)")
    p.add_argument("--format", choices=["qonnx", "qcdq"], default=None,
                   help="QONNX Quant nodes or QuantizeLinear/Clip/DequantizeLinear (default qonnx; deformconv is qcdq only)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--act-bits", type=int, help="activation bits (default: the model's, 8 for InTAR kernels; 16 is InTAR's int16)")
    p.add_argument("--weight-bits", type=int, help="weight bits (default: the model's)")
    p.add_argument("--phase", choices=["prefill", "decode"], help="gpt2: prefill (N tokens in) or decode (one token + K/V cache)")
    p.add_argument("--seq-len", type=int, help="gpt2: prefill tokens, or the cache length + 1 for decode (default min(context, 128))")

    p = sub.add_parser("devices", help="list the device profiles shipped with hlsgen",
                       description="List the shipped device profiles (a YAML file path works wherever a name does).")
    p.add_argument("--json", action="store_true", help="print the profiles as JSON")

    p = sub.add_parser("schedule", help="find an InTAR-style dataflow/sequential schedule with the cost model",
                       description="Split the model's tasks into stages, choose dataflow or sequential execution per "
                                   "stage, the folding of every task and where every buffer lives. All figures are "
                                   "modeled by the cost model (docs/performance.md).")
    _common_model_args(p)
    p.add_argument("--device", required=True, metavar="NAME|FILE.yaml", help="target device: a name from `hlsgen devices` or a YAML profile")
    p.add_argument("--mode", default="auto", choices=["auto", "dataflow", "sequential"],
                   help="auto: InTAR hybrid (default); dataflow: every task its own hardware; sequential: one shared engine")
    p.add_argument("--clock", type=float, metavar="MHZ", help="clock in MHz (default: the device profile's)")
    p.add_argument("--resource-cap", type=float, default=0.8, metavar="F", help="fraction of each resource the design may use (default 0.8)")
    p.add_argument("--objective", default="latency", choices=["latency", "throughput"], help="what to minimize (default latency)")
    p.add_argument("--batch", type=int, default=1, help="inputs per run (default 1)")
    p.add_argument("--weights", default="auto", choices=["auto", "onchip", "offchip"],
                   help="weight placement: resident on chip, streamed from off-chip, or auto (default)")
    p.add_argument("--io", default="auto", type=_io_arg, metavar="{auto,onchip,offchip,offchip-inputs,offchip-outputs,"
                   "offchip:PORT,..}",
                   help="the graph's inputs and outputs: AXI4-Stream ports into on-chip arrays (onchip), host buffers "
                        "in off-chip memory read and written by their tasks over m_axi (offchip; offchip-inputs or "
                        "offchip-outputs for one group; offchip:in1,out0 for those ports only: in<k>/out<k> is the "
                        "graph's k-th input/output), or auto (default: the larger group off chip first, while the "
                        "arrays do not fit)")
    p.add_argument("--port-bits", type=int, help="AXI port width of off-chip reads and writes and of the input and "
                                                 "output streams (default: the device's, 512 on Alveo cards, 128 on "
                                                 "Zynq UltraScale+ boards; `hlsgen devices`)")
    p.add_argument("--max-segment", type=int, default=24, help="longest stage the auto search considers, in tasks (default 24)")
    p.add_argument("--max-lanes", type=int, metavar="N", help="fold no task wider than N lanes (VEC x PE x SIMD), and "
                                                              "move no more than N elements of an AXI4-Stream or "
                                                              "off-chip beat a cycle: narrower tasks and beats reach "
                                                              "the activation memory through fewer ports (default: no "
                                                              "limit)")
    p.add_argument("--max-beat-lanes", type=int, metavar="N",
                   help="move no more than N elements of an AXI4-Stream or off-chip beat of activations a cycle, "
                        "whatever --max-lanes is (default: --max-lanes's limit)")
    p.add_argument("--stages", default="", metavar="'S3 D7'",
                   help="fix the stages instead of searching: D<n> a dataflow stage of the next n tasks, S<n> a "
                        "sequential one (the notation the reports use); foldings and buffers are still chosen")
    p.add_argument("--compare-modes", action="store_true", help="schedule in all three modes and compare them")
    p.add_argument("--json", metavar="FILE", help="write the schedule (or the comparison) as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="write a Gantt chart of the stages with resource-use bars")

    p = sub.add_parser("build", help="emit a complete Vitis HLS project (C++, testbench, Tcl, v++ config, host, Makefile)",
                       description="Schedule the model and emit a Vitis HLS project whose `make csim` checks the C++ "
                                   "bit for bit against the golden. MODEL is an ONNX file or a design YAML "
                                   "(designs/*.yaml); options given here override the design's.")
    p.add_argument("model", metavar="MODEL.onnx|DESIGN.yaml")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...", help="fix a symbolic input shape")
    p.add_argument("--device", metavar="NAME|FILE.yaml", help="target device (required for an ONNX file)")
    p.add_argument("--mode", choices=["auto", "dataflow", "sequential"], help="schedule mode (default auto)")
    p.add_argument("--clock", type=float, metavar="MHZ", help="clock in MHz (default: the device profile's)")
    p.add_argument("--resource-cap", type=float, metavar="F", help="fraction of each resource the design may use (default 0.8)")
    p.add_argument("--objective", choices=["latency", "throughput"], help="what to minimize (default latency)")
    p.add_argument("--weights", choices=["auto", "onchip", "offchip"], help="weight placement (default auto)")
    p.add_argument("--io", type=_io_arg, metavar="{auto,onchip,offchip,offchip-inputs,offchip-outputs,offchip:PORT,..}",
                   help="the graph's inputs and outputs on chip (streams) or off chip (m_axi): both groups, one, "
                        "or the ports listed (default auto)")
    p.add_argument("--port-bits", type=int, help="AXI port width of off-chip reads and writes and of the input and "
                                                 "output streams (default: the device's)")
    p.add_argument("--max-segment", type=int, help="longest stage the auto search considers (default 24)")
    p.add_argument("--max-lanes", type=int, metavar="N", help="fold no task wider than N lanes (VEC x PE x SIMD), and "
                                                              "move no more than N elements of an AXI4-Stream or "
                                                              "off-chip beat a cycle (default: no limit)")
    p.add_argument("--max-beat-lanes", type=int, metavar="N",
                   help="move no more than N elements of an AXI4-Stream or off-chip beat of activations a cycle, "
                        "whatever --max-lanes is (default: --max-lanes's limit)")
    p.add_argument("--stages", metavar="'S3 D7'", help="fix the stages instead of searching (see hlsgen schedule --help)")
    p.add_argument("--seed", type=int, help="seed of the random input the golden data is made from (default 0)")
    p.add_argument("--input", action="append", default=[], metavar="[NAME=]X.npy", help="float input array instead of a seeded one")
    p.add_argument("-o", "--output", metavar="OUT", help="project folder (default build/<design name> or build/<model name>)")
    p.add_argument("--force", action="store_true", help="replace an existing project folder (only once the new one is complete)")
    p.add_argument("--rtl-fit", choices=["steer", "warn"], default="steer",
                   help="where the RTL as modeled does not fit the device: steer (default) builds the fastest schedule "
                        "with narrower AXI ports, a lower --resource-cap or narrower tasks (--max-lanes) that fits, "
                        "among the options not given; "
                        "warn builds the first schedule and hints at that one")
    return ap


def cmd_inspect(a) -> int:
    from . import pipeline
    from .report.inspect import format_table, report

    g = pipeline.load(a.model, pipeline.parse_shapes(a.shape))
    rep = report(g)
    if a.json:
        print(json.dumps(rep, indent=2))
    else:
        print(format_table(rep))
    return 0


def cmd_run(a) -> int:
    from . import pipeline
    from .verify.compare import TIE_LSB
    from .report.inspect import display_name

    t0 = time.perf_counter()
    g = pipeline.load(a.model, pipeline.parse_shapes(a.shape))
    floats = pipeline.float_inputs(g, a.input, a.seed)
    ints = pipeline.quantize_inputs(g, floats)
    t1 = time.perf_counter()
    if a.compare:
        rep, values = pipeline.compare(g, a.model, floats, ints)
    else:
        values = pipeline.run_golden(g, ints)
        rep = {}
    t2 = time.perf_counter()
    outputs = []
    for n in g.outputs:
        t = g.tensors[n]
        v = values[n]
        outputs.append({"name": n, "shape": list(t.shape), "dtype": t.dtype.name, "min": int(v.min()), "max": int(v.max()),
                        "first": [int(x) for x in v.reshape(-1)[:8]]})
    if a.output:
        first = g.tensors[g.outputs[0]]
        real = first.quant.dequantize(values[g.outputs[0]]).astype(np.float32)
        pipeline.write_atomic(a.output, lambda f: np.save(f, real))
    result = {"model": a.model, "seed": a.seed, "golden_outputs": outputs,
              "seconds": {"load": round(t1 - t0, 3), "execute": round(t2 - t1, 3)}}
    result.update(rep)
    if a.json:
        print(json.dumps(result, indent=2))
        return 0
    for o in outputs:
        print(f"output {display_name(o['name'])}: {'x'.join(map(str, o['shape']))} {o['dtype']}  range [{o['min']}, {o['max']}]  first {o['first']}")
    if a.compare:
        print(f"{'tensor':44s} {'op':16s} {'end-to-end':>22s} {'layer-by-layer':>22s}")
        for r in rep["tensors"]:
            e, l = r["end_to_end"], r["layer_by_layer"]
            print(f"{display_name(r['onnx_name'] or r['name'], 44):44s} {r['op']:16s} "
                  f"{100 * e['exact_fraction']:9.3f}% max {e['max_abs_lsb']:3d} LSB "
                  f"{100 * l['exact_fraction']:9.3f}% max {l['max_abs_lsb']:3d} LSB")
        print(f"final outputs: {100 * rep['exact_fraction']:.3f}% identical to the float model, max difference {rep['max_abs_lsb']} LSB")
        lbl = rep["layer_by_layer"]
        print(f"layer by layer: worst layer {100 * lbl['min_exact_fraction']:.3f}% identical, max difference {lbl['max_abs_lsb']} LSB; "
              f"{lbl['differences_at_ties']} differing elements sit on a rounding tie of the float32 reference "
              f"(within {TIE_LSB:g} LSB of x.5), {lbl['differences_unexplained']} are unexplained")
    if a.output:
        print(f"wrote {a.output} (dequantized float32)")
    return 0


def cmd_zoo(a) -> int:
    try:
        from .zoo import models
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise HlsgenError(f"hlsgen zoo needs torch and brevitas ({exc.name} is missing); pip install 'hlsgen[zoo]'") from None
    if a.list or not a.name:
        print(f"{'model':14s} {'config':8s} {'bits (A/W)':>10s} {'weights':>12s} {'MACs':>14s}  description")
        for m in sorted(models.MODELS.values(), key=lambda m: m.name):
            for c in m.configs:
                st = models.model_stats(m.name, c, m.default_act_bits, m.default_weight_bits)
                print(f"{m.name:14s} {c:8s} {m.default_act_bits:>5d}/{m.default_weight_bits:<4d} {st['params']:12,d} "
                      f"{st['macs']:14,d}  {m.description}")
        return 0
    if a.name not in models.MODELS:
        raise HlsgenError(f"unknown zoo model {a.name!r}; choose one of {', '.join(models.MODELS)} (hlsgen zoo --list)")
    out = a.output or f"{a.name}-{a.config}{'-' + a.phase if a.phase else ''}.onnx"
    t0 = time.perf_counter()
    print(f"hlsgen: building {a.name} ({a.config}) and exporting it...", file=sys.stderr)
    if a.seq_len is not None and a.seq_len < 1:
        raise HlsgenError(f"--seq-len {a.seq_len} must be at least 1")
    fmt = a.format or ("qcdq" if a.name == "deformconv" else "qonnx")
    p = models.export(a.name, a.config, out, fmt, a.seed, a.act_bits, a.weight_bits, phase=a.phase, seq_len=a.seq_len)
    print(f"wrote {p} ({a.name}, config {a.config}, {fmt}, seed {a.seed}) in {time.perf_counter() - t0:.1f} s")
    return 0


def cmd_devices(a) -> int:
    from .schedule.device import device_names, load_device

    devs = [load_device(n) for n in device_names()]
    if a.json:
        print(json.dumps([dict(d.summary(), sources=d.sources) for d in devs], indent=2))
        return 0
    print(f"{'name':10s} {'part':28s} {'DSP':>11s} {'BRAM18':>6s} {'URAM':>5s} {'LUT':>9s} {'FF':>9s} {'SLR':>3s} "
          f"{'MHz':>4s} {'AXI':>4s}  off-chip memory")
    for d in devs:
        mem = ", ".join(f"{m.kind} {m.channels}ch {m.bandwidth_gbs:g} GB/s" for m in d.memories)
        print(f"{d.name:10s} {d.part:28s} {d.dsp:5d} {d.dsp_type:5s} {d.bram18:6d} {d.uram:5d} {d.lut:9d} {d.ff:9d} "
              f"{d.slr:3d} {d.clock_mhz:4g} {d.port_bits:4d}  {mem}")
    print("sources of every number: hlsgen/schedule/devices/NAME.yaml (`hlsgen devices --json`)")
    return 0


def cmd_schedule(a) -> int:
    from . import pipeline
    from .report.schedule import format_compare, format_schedule, plot_schedule
    from .schedule import ScheduleOptions, load_device, schedule

    if a.plot and not a.plot.lower().endswith(".png"):
        raise HlsgenError(f"--plot {a.plot}: the chart is a PNG; give a file name ending in .png")
    device = load_device(a.device)
    opts = ScheduleOptions(mode=a.mode, clock_mhz=a.clock, resource_cap=a.resource_cap, objective=a.objective,
                           batch=a.batch, weights=a.weights, port_bits=a.port_bits, max_segment=a.max_segment,
                           stages=a.stages, io=a.io, max_lanes=a.max_lanes, max_beat_lanes=a.max_beat_lanes)
    opts.check()
    if a.stages and a.compare_modes:
        raise HlsgenError("--compare-modes compares the three modes; it does not take --stages")
    t0 = time.perf_counter()
    g = pipeline.load(a.model, pipeline.parse_shapes(a.shape))
    print(f"hlsgen: loaded {len(g.tasks)} tasks in {time.perf_counter() - t0:.1f} s; scheduling on {device.name}...",
          file=sys.stderr)
    if a.compare_modes:
        import dataclasses
        results, failures = {}, {}
        for mode in ("auto", "dataflow", "sequential"):
            try:
                results[mode] = schedule(g, device, dataclasses.replace(opts, mode=mode))
            except HlsgenError as exc:
                failures[mode] = str(exc)
        if not results:
            raise HlsgenError(failures["auto"])
        print(format_compare(results, device, failures))
        if a.json:
            from .report.schedule import compare_rows
            doc = {"figures": "modeled", "device": device.summary(), "modes": compare_rows(results),
                   "does_not_fit": failures, "schedules": {m: s.to_json(device) for m, s in results.items()}}
            pipeline.write_atomic(a.json, lambda f: f.write(json.dumps(doc, indent=2).encode()))
            print(f"wrote {a.json}")
        if a.plot:
            plot_schedule(results.get("auto") or next(iter(results.values())), device, a.plot)
            print(f"wrote {a.plot}")
        return 0
    s = schedule(g, device, opts)
    print(format_schedule(s, device))
    print(f"scheduled in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    if a.json:
        pipeline.write_atomic(a.json, lambda f: f.write(json.dumps(s.to_json(device), indent=2).encode()))
        print(f"wrote {a.json}")
    if a.plot:
        plot_schedule(s, device, a.plot)
        print(f"wrote {a.plot}")
    return 0


def cmd_build(a) -> int:
    import dataclasses
    import tempfile
    from pathlib import Path

    from . import pipeline
    from .backends.vitis.project import render, share_text, write_tree
    from .design import Design, load_design, materialize_model
    from .schedule import ScheduleOptions, load_device, schedule

    t0 = time.perf_counter()
    steps = 6

    def step(k, msg):
        print(f"hlsgen build [{k}/{steps}] {msg} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)

    if a.model.endswith((".yaml", ".yml")):
        design = load_design(a.model)
    else:
        if not a.device:
            raise HlsgenError("hlsgen build MODEL.onnx needs --device NAME (see `hlsgen devices`) or a design YAML")
        stem = "".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in Path(a.model).stem)[:64] or "model"
        design = Design(name=stem, path=Path(a.model), model=Path(a.model), device=a.device)
    cli = {"mode": a.mode, "clock": a.clock, "resource_cap": a.resource_cap, "objective": a.objective,
           "weights": a.weights, "port_bits": a.port_bits, "max_segment": a.max_segment, "stages": a.stages,
           "io": a.io, "max_lanes": a.max_lanes, "max_beat_lanes": a.max_beat_lanes}
    o = dict(design.options, **{k: v for k, v in cli.items() if v is not None})
    opts = ScheduleOptions(mode=o.get("mode", "auto"), clock_mhz=o.get("clock"), resource_cap=o.get("resource_cap", 0.8),
                           objective=o.get("objective", "latency"), weights=o.get("weights", "auto"),
                           port_bits=o.get("port_bits"), max_segment=o.get("max_segment", 24),
                           stages=o.get("stages", ""), io=o.get("io", "auto"), max_lanes=o.get("max_lanes"),
                           max_beat_lanes=o.get("max_beat_lanes"))
    opts.check()
    device = load_device(a.device or design.device)
    out = Path(a.output or design.output or f"build/{design.name}")
    if out.exists() and not a.force:
        raise HlsgenError(f"{out} already exists; pass --force to replace it")
    seed = a.seed if a.seed is not None else design.seed
    with tempfile.TemporaryDirectory(prefix="hlsgen-build-") as work:
        if not isinstance(design.model, Path):
            spec = ", ".join(f"{k} {v}" for k, v in design.model.items())
            step(1, f"exporting the design's model ({spec}) with Brevitas")
        else:
            step(1, f"loading {design.model}")
        model = materialize_model(design, Path(work))
        g = pipeline.load(str(model), pipeline.parse_shapes(a.shape))
    step(2, f"golden model on the seeded input (seed {seed}): {len(g.tasks)} tasks")
    ints = pipeline.quantize_inputs(g, pipeline.float_inputs(g, a.input, seed))
    values = pipeline.run_golden(g, ints)
    step(3, f"scheduling on {device.name} ({opts.mode}, resource cap {opts.resource_cap})")
    s = schedule(g, device, dataclasses.replace(opts))
    step(4, f"{len(s.stages)} stage(s): " + ", ".join(f"{st.mode} x{len(st.tasks)}" for st in s.stages))
    step(5, "rendering the HLS C++, the RTL and the testbenches")
    files = render(g, s, device, values)
    syn = json.loads(files["report.json"])["rtl_synthesis_model"]
    # where the RTL as modeled does not fit, the build steers by the options the user did not
    # give (here or in the design), and hints only by those given; with auto and no --stages,
    # also through auto's designs with fewer stages
    free = [flag for flag, key in STEER_FLAGS if key not in o] if a.rtl_fit == "steer" else []
    fewer = a.rtl_fit == "steer" and opts.mode == "auto" and not opts.stages
    tried = _tried(s, opts, free) + ([FEWER_STAGES_TRIED] if fewer else [])
    steer = None
    if not syn["fits"] and tried:
        step(5, f"the RTL as modeled does not fit {device.name} ({_over(syn, device)}): trying {', '.join(tried)}")
        best = _fitting_trial(g, s, device, values, opts, free, say=lambda m: step(5, f"  {m}"), fewer_stages=fewer)
        if best is not None:
            setting, t, tsyn, way = best.setting, best.schedule, best.syn, best.way
            steer = {"setting": setting, "instead_of": _instead_of(s, opts, way, setting), "why": best.why,
                     "first_cycles": int(s.total_cycles), "first_lut": syn["whole"]["lut"],
                     "first_share_of_device": syn["share_of_device"]["lut"], "first_over": _over(syn, device),
                     "wider_tasks": None}
            wider = _wider_tasks(g, t, device, values, way, best.value, best.above, lambda m: step(5, f"  {m}")) \
                if way is not None and way.flag == "--max-lanes" and opts.max_beat_lanes is None and "--stages" not in setting \
                else None
            if wider is not None:
                steer["wider_tasks"] = {"setting": wider[0], "cycles": int(wider[1].total_cycles),
                                        "lut": wider[2]["whole"]["lut"],
                                        "share_of_device": wider[2]["share_of_device"]["lut"]}
            step(5, f"steered to {setting} ({tsyn['whole']['lut']:,} LUT, {t.total_cycles:,} cycles): rendering it")
            s, syn = t, tsyn
            files = render(g, s, device, values, rtl_fit=steer)
    step(5, f"writing {len(files)} files")
    write_tree(out, files, a.force)
    step(6, f"wrote {out}/ ({len(files)} files)")
    print(f"built {out}: {len(s.stages)} stage(s), modeled {s.total_cycles:,} cycles = {s.latency_ms:.4f} ms at "
          f"{s.clock_mhz:g} MHz (MODELED, see {out}/report.md)")
    w, sh = syn["whole"], syn["share_of_device"]
    print(f"the RTL as synthesis builds it: {w['lut']:,} LUT ({sh['lut']:.0%}), {w['dsp']} DSP48E2, {w['bram18']} BRAM18"
          f" of {device.name} (MODELED, fitted on Yosys; make -C {out} synth-yosys SCOPE=design synthesizes it)")
    if steer:
        print(f"note: built with {steer['setting']}, the build's choice: with {steer['instead_of']} the RTL as modeled "
              f"takes {steer['first_lut']:,} LUT ({share_text(steer['first_share_of_device'])}) of {device.name} and does "
              f"not fit ({steer['first_over']}); this build takes {s.total_cycles:,} cycles where that one takes {steer['first_cycles']:,} "
              f"(MODELED; {steer['why']}; --rtl-fit warn keeps the first)", file=sys.stderr)
        wt = steer["wider_tasks"]
        if wt:
            from .backends.rtl.core import CORE_FIT_LEFT_OUT
            print(f"note: {wt['setting']} also fits as modeled: {wt['cycles']:,} cycles "
                  f"({1 - wt['cycles'] / s.total_cycles:.0%} fewer) at {wt['lut']:,} LUT "
                  f"({share_text(wt['share_of_device'])}) of {device.name}, where this build takes "
                  f"{syn['whole']['lut']:,} ({share_text(syn['share_of_device']['lut'])}); the build keeps the margin, "
                  f"as the models of whole cores are {CORE_FIT_LEFT_OUT} (MODELED; docs/rtl.md, \"Beats apart from "
                  "tasks\")",
                  file=sys.stderr)
    if not syn["fits"]:
        print(f"warning: the RTL as modeled does not fit {device.name} ({_over(syn, device)}): its cores whole take "
              f"{syn['cores_total']['lut']:,} LUT and its activation memory {syn['memory']['lut']:,} (storage, routing, "
              f"decode)" + (f", its m_axi engines {syn['m_axi']['lut']:,}" if syn["m_axi"]["lut"] else "") +
              f", the rest of its top {syn['top']['lut']:,}" +
              f", where the schedule's own figure, {s.resources.lut:,} LUT, prices the cores' datapaths, not "
              f"their control nor the memory's routing ({out}/report.md, \"The RTL as synthesis builds it\"); a larger "
              "device, or a lower --resource-cap or --max-lanes for narrower cores, leaves room", file=sys.stderr)
        if tried:
            every = _tried(s, opts, free, pairs=True, refined=False) + ([FEWER_STAGES_TRIED] if fewer else [])
            print(f"note: nothing the build tried fits ({', '.join(every)})", file=sys.stderr)
        best = _fitting_trial(g, s, device, values, opts, [f for f, _ in STEER_FLAGS if f not in free])
        if best is not None:
            setting, t, tsyn, why = best.setting, best.schedule, best.syn, best.why
            print(f"hint: with {setting} the RTL as modeled fits: {tsyn['whole']['lut']:,} LUT "
                  f"({share_text(tsyn['share_of_device']['lut'])}) of {device.name}, at {t.total_cycles:,} cycles where this "
                  f"build takes {s.total_cycles:,} (MODELED; {why})", file=sys.stderr)
    else:
        over = [f"{k.upper()} {w[k]:,} ({sh[k]:.0%})" for k in w if sh.get(k) is not None and sh[k] > s.resource_cap]
        if over:
            print(f"note: the RTL as modeled takes {', '.join(over)} of {device.name}, above --resource-cap "
                  f"{s.resource_cap:g}, which the schedule holds its cores' datapaths to, not their control nor the "
                  f"memory's routing ({out}/report.md, \"The RTL as synthesis builds it\")", file=sys.stderr)
    print(f"next: make -C {out} csim    (bit-exact C simulation with g++; csynth/cosim/xclbin need Vitis)")
    return 0


def _over(syn, device) -> str:
    """Why the RTL as modeled (its rtl_synthesis_model) does not fit: the resources it takes more
    of than the device has, and an activation memory whose banks cannot serve its accesses."""
    whole = syn["whole"]
    over = [f"{k.upper()} {whole[k]:,} of {device.resource(k):,}" for k in whole if whole[k] > device.resource(k)]
    if syn.get("memory_unserved"):
        over.append(f"its activation memory's banks cannot serve {syn['memory_unserved']}, so accesses would be "
                    "dropped")
    return ", ".join(over)


# the options the build steers by where the RTL as modeled does not fit, and their keys in a design
STEER_FLAGS = (("--port-bits", "port_bits"), ("--resource-cap", "resource_cap"), ("--max-lanes", "max_lanes"))


def _widest(s) -> int:
    """The lanes (VEC x PE x SIMD) of the schedule's widest task."""
    return max(t.folding.lanes for st in s.stages for t in st.tasks)


class _Way(NamedTuple):
    """A way toward an RTL that fits: option `flag` at `values` (least given up first), on top of
    `fixed` (an option and its value held along the way, or None); `start` is the first
    schedule's own value; `options(v)` the schedule options of value v."""
    flag: str
    values: list
    start: float
    options: Callable
    why: str
    fixed: Optional[Tuple[str, int]] = None

    def setting(self, v) -> str:
        return (f"{self.fixed[0]} {self.fixed[1]} " if self.fixed else "") + f"{self.flag} {v:g}"

    def tried(self, refined: bool) -> str:
        """The values it tries, as a range (for the progress lines and the notes); with `refined`,
        how a value that fits is refined."""
        lo, hi = self.values[-1], self.values[0]
        text = f"{self.flag} {lo:g} to {hi:g}" if len(self.values) > 1 else f"{self.flag} {hi:g}"
        if refined and not self.fixed:
            text += {"--resource-cap": " (then in steps of 0.01 above the first that fits)",
                     "--max-lanes": " (then the tasks' widths above the first that fits)"}.get(self.flag, "")
        return f"{self.fixed[0]} {self.fixed[1]} with {text}" if self.fixed else text

    def finer(self, g, device, v, above) -> list:
        """The values between v (which fits) and `above` (the last that did not) to try, the least
        given up first: a cap in steps of 0.01, because the RTL as modeled is not steady with the
        cap; lanes over the widths some task's foldings have (at most 8, spread evenly)."""
        if self.flag == "--resource-cap":
            return [round(above - 0.01 * k, 2) for k in range(1, round((above - v) * 100))]
        if self.flag == "--max-lanes":
            widths = sorted((w for w in folding_widths(g, device, self.options(v)) if v < w < above), reverse=True)
            if len(widths) > 8:
                widths = [widths[round(k * (len(widths) - 1) / 7)] for k in range(8)]
            return widths
        return []


def _ways(s, opts, flags, pairs=False) -> list:
    """The ways toward an RTL that fits (_Way), along the options of `flags`:
    - narrower AXI ports, halving down to 64 bits: every word of a stream's or an m_axi
      channel's beat is a lane of the activation memory, so a narrower beat needs fewer banks
      and routes, at the price of slower transfers;
    - a lower --resource-cap, 0.1 at a time down to 0.1: narrower cores, whose fewer lanes reach
      the memory through fewer ports;
    - narrower tasks (--max-lanes), halving from below the widest task's lanes down to 1: a
      task whose datapath is cheap (a max pool, a slice) may be folded wide within the cap
      while its reads and writes take as many of the memory's ports; an AXI4-Stream port and an
      m_axi channel of activations then move a beat wider than that in steps of no more
      elements (cost.beat_lanes).
    With `pairs`, the ways tried where none of those alone fits instead: the narrowest ports
    with ever narrower tasks."""
    import dataclasses
    bits = [b for b in (s.port_bits >> k for k in range(1, 5)) if b >= 64]
    caps = [round(opts.resource_cap - 0.1 * k, 2) for k in range(1, 10) if opts.resource_cap - 0.1 * k >= 0.1 - 1e-9]
    wide = _widest(s)
    lanes = [1 << k for k in range(wide.bit_length(), -1, -1) if (1 << k) < wide]
    why_bits = "a narrower beat needs fewer banks in the activation memory, and moves fewer bytes a cycle"
    why_lanes = ("narrower tasks, and stream and off-chip beats moved in as narrow steps, reach the activation memory "
                 "through fewer ports")
    if pairs:
        if "--port-bits" not in flags or "--max-lanes" not in flags or not bits or not lanes:
            return []
        return [_Way("--max-lanes", lanes, wide, lambda n: dataclasses.replace(opts, port_bits=bits[-1], max_lanes=n),
                     f"{why_bits}; {why_lanes}", fixed=("--port-bits", bits[-1]))]
    ways = [_Way("--port-bits", bits, s.port_bits, lambda b: dataclasses.replace(opts, port_bits=b), why_bits),
            _Way("--resource-cap", caps, opts.resource_cap, lambda c: dataclasses.replace(opts, resource_cap=c),
                 "narrower cores reach the activation memory through fewer ports"),
            _Way("--max-lanes", lanes, wide, lambda n: dataclasses.replace(opts, max_lanes=n), why_lanes)]
    return [w for w in ways if w.flag in flags and w.values]


def _tried(s, opts, flags, pairs=False, refined=True) -> list:
    """What the ways of `flags` try (with `pairs`, also what is tried where none of them alone
    fits); with `refined`, how a setting that fits is refined (not said where nothing fit)."""
    return [w.tried(refined) for w in _ways(s, opts, flags) + (_ways(s, opts, flags, pairs=True) if pairs else [])]


def _instead_of(s, opts, way: Optional[_Way], setting: str = "") -> str:
    """What the first schedule had where the one steered along `way` (None: none, the options
    given) has its setting (with --stages in it: one of auto's designs with fewer stages)."""
    was = {"--port-bits": f"--port-bits {s.port_bits}", "--resource-cap": f"--resource-cap {opts.resource_cap:g}",
           "--max-lanes": f"tasks up to {_widest(s)} lanes"}
    parts = [was[f] for f in ((way.fixed or [None])[0], way.flag) if f] if way else []
    if "--stages" in setting:
        parts.append(f"auto's {s.search.get('picked')} design ({s.segmentation})")
    return ", ".join(parts)


def _attempt(g, device, values, setting, trial, say, beyond=" none tried beyond", label=None):
    """A trial schedule (options `trial`, shown as `setting`) and its RTL as modeled, rendered in
    memory: (schedule, its rtl_synthesis_model, setting), or None where it does not schedule.
    `say` hears its outcome (`label`, else `setting`; `beyond`: what a failure means for the
    trials after it)."""
    label = label or setting
    from .backends.vitis.project import render, share_text
    from .schedule import schedule
    try:
        t = schedule(g, device, trial)
        syn = json.loads(render(g, t, device, values)["report.json"])["rtl_synthesis_model"]
    except HlsgenError as exc:    # the scheduler refuses it: nothing further along this way fits either
        say(f"{label}: no schedule ({str(exc).split(':')[0]});{beyond}")
        return None
    except Exception as exc:      # a trial is optional: the first schedule is built, whatever a trial does,
        say(f"{label}: the trial failed ({type(exc).__name__}: {exc});{beyond}")   # but says so
        return None
    short = "" if syn["fits"] else f", does not fit ({_over(syn, device)})"
    say(f"{label}: {syn['whole']['lut']:,} LUT ({share_text(syn['share_of_device']['lut'])}), "
        f"{t.total_cycles:,} cycles{short}")
    return t, syn, setting


def _fewer_stages(g, device, values, setting, trial, t, say):
    """Where auto's pick `t` at options `trial` (shown as `setting`) does not fit as modeled:
    auto's other designs that fit the cap with fewer stages than it (search.candidates, fastest
    first), each built as a fixed segmentation (--stages): fewer cores, whose control and memory
    ports the schedule does not price, may fit where the pick does not. The first whose RTL
    fits, as _attempt gives it, else None."""
    import dataclasses
    seen = set()
    for c in t.search.get("candidates", [])[1:]:
        if len(c["segmentation"].split()) < len(t.stages) and c["segmentation"] not in seen:
            seen.add(c["segmentation"])
            more = f"{setting} --stages '{c['segmentation']}'".strip()
            alt = _attempt(g, device, values, more, dataclasses.replace(trial, stages=c["segmentation"]), say,
                           beyond="", label=f"{more} (auto's {c['name']} design)")
            if alt is not None and alt[1]["fits"]:
                return alt
    return None


FEWER_STAGES_WHY = "fewer stages have fewer cores, whose control and memory ports the schedule does not price"
FEWER_STAGES_TRIED = "auto's designs with fewer stages (--stages) where its pick does not fit"


class _Fit(NamedTuple):
    """A trial whose RTL as modeled fits: its setting, schedule and rtl_synthesis_model, why its
    way helps, the way, its value along it and the last value before that did not fit."""
    setting: str
    schedule: object
    syn: dict
    why: str
    way: _Way
    value: float
    above: float


def _fitting_trial(g, s, device, values, opts, flags, say=None, fewer_stages=False):
    """The fastest schedule along the ways of `flags` (_ways) whose RTL as modeled fits, each
    rendered in memory (MODELED): a _Fit, or None where none does.
    Along each way, the first value that fits (the least given up), then refined between it and
    the last that did not fit (_Way.finer). Where no way alone fits, the pairs of ways
    (_ways(pairs=True)). With `fewer_stages` (auto, no --stages given), a value at which auto's
    pick does not fit also tries auto's designs with fewer stages (_fewer_stages), first at the
    options given. Where one of those fits, the refinement goes on to where auto's pick fits, or
    else the way goes on to the first value at which it does; of all that fit along the way the
    fastest is kept (of equals, the least given up). `say` hears each trial's outcome."""
    say = say or (lambda msg: None)

    def attempt(setting, trial, others=fewer_stages):
        got = _attempt(g, device, values, setting, trial, say)
        if got is not None and not got[1]["fits"] and others:
            got = _fewer_stages(g, device, values, setting, trial, got[0], say) or got
        return got

    best = None
    got = _fewer_stages(g, device, values, "", opts, s, say) if fewer_stages else None   # at the options given
    if got is not None:
        best = _Fit(got[2], got[0], got[1], FEWER_STAGES_WHY, None, None, None)
    for pairs in (False, True):
        ways = _ways(s, opts, flags, pairs=pairs)
        if best is not None and pairs or not ways:
            break
        if pairs:
            say(f"nothing fits along one way: trying {', '.join(w.tried(True) for w in ways)}")
        for way in ways:
            above = way.start                  # the last value that does not fit
            for k, v in enumerate(way.values):
                got = attempt(way.setting(v), way.options(v))
                if got is None:
                    break
                if not got[1]["fits"]:
                    above = v
                    continue
                fits = [(got, v)]
                for n in way.finer(g, device, v, above):
                    finer = attempt(way.setting(n), way.options(n))
                    if finer is not None and finer[1]["fits"]:
                        fits.append((finer, n))
                        if finer[2] == way.setting(n):           # auto's pick: the widest that fits
                            break
                if all(f[2] != way.setting(w) for f, w in fits):   # auto's designs with fewer stages
                    for w in way.values[k + 1:]:                     # alone: auto's pick further on
                        own = attempt(way.setting(w), way.options(w), others=False)
                        if own is None:
                            break
                        if own[1]["fits"]:
                            fits.append((own, w))
                            break
                # the fastest (of equals, the least given up): along a way a wider setting is
                # faster for one segmentation, not across auto's designs
                got, v = min(fits, key=lambda f: (f[0][0].total_cycles, -f[1]))
                if best is None or got[0].total_cycles < best.schedule.total_cycles:
                    why = way.why if got[2] == way.setting(v) else f"{way.why}; {FEWER_STAGES_WHY}"
                    best = _Fit(got[2], got[0], got[1], why, way, v, above)
                break
    return best


# a faster design the build reports beside the one it steered to, but does not take: at least
# this much faster (modeled), for the margin it gives up (docs/rtl.md, "Beats apart from tasks")
WIDER_TASKS_GAIN = 0.05


def _wider_tasks(g, t, device, values, way, v, above, say):
    """Where the build steered along --max-lanes to v lanes (the last value that did not fit:
    `above`): the widest tasks up to `above` whose RTL as modeled fits with beats still moved v
    elements a cycle at most (--max-beat-lanes v), if it takes WIDER_TASKS_GAIN fewer cycles
    than `t`, the steered schedule: (setting, schedule, its rtl_synthesis_model), else None.
    Wider tasks with narrow beats cost LUTs and BRAM the steered design keeps as margin, so the
    build says it fits and leaves the choice to the user. At most four widths are tried."""
    import dataclasses
    widths = sorted((w for w in folding_widths(g, device, way.options(v)) if v < w <= above), reverse=True)[:4]
    for w in widths:
        setting = f"{way.setting(w)} --max-beat-lanes {v:g}"
        got = _attempt(g, device, values, setting, dataclasses.replace(way.options(w), max_beat_lanes=int(v)), say)
        if got is not None and got[1]["fits"]:
            return (setting, *got) if got[0].total_cycles <= (1 - WIDER_TASKS_GAIN) * t.total_cycles else None
    return None


def main(argv=None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    try:
        return {"inspect": cmd_inspect, "run": cmd_run, "devices": cmd_devices, "zoo": cmd_zoo, "schedule": cmd_schedule,
                "build": cmd_build}[a.command](a)
    except HlsgenError as exc:
        print(f"hlsgen: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("hlsgen: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
