"""`hlsgen build` end to end: the emitted project's `make csim` (g++ -Wall -Wextra -Werror with
hls4ml's ap_types) is bit-exact with the golden for every Foundation test net, in all three
schedule modes, on an unconstrained device and under a resource cap that forces sequential
stages, off-chip spills and streamed weights. Plus: mismatch reports, determinism, atomic
output, hostile names, the Vitis targets without Vitis, design files, speed."""
import json
import os
import re
import resource
import shutil
import subprocess

import pytest

from conftest import ROOT, run_cli

NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8",
        "demo_cnn", "shuffle_block"]
SMALL = ROOT / "designs" / "devices" / "small.yaml"
# (device, extra options): the data-center card with everything on chip, and a small FPGA at a
# 20% cap where activations spill off chip and weights stream from memory
TARGETS = {"free": ("u280", []), "capped": (str(SMALL), ["--resource-cap", "0.2", "--weights", "offchip"])}


def make(out, *targets, env=None):
    return subprocess.run(["make", "-C", str(out), *targets], capture_output=True, text=True, timeout=600,
                          env=env or os.environ)


def csim(out):
    r = make(out, "csim")
    res = out / "results" / "csim.json"
    return r, (json.loads(res.read_text()) if res.exists() else None)


def report(out):
    return json.loads((out / "report.json").read_text())


def project_files(out) -> dict:
    """Every file of an emitted project, by its path, but for the reports and the kernel's first
    line (which name the mode the user asked for)."""
    files = {}
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        if p.is_file() and rel not in ("report.md", "report.json"):
            data = p.read_bytes()
            files[rel] = data.split(b"\n", 1)[1] if rel == "hls/kernel.cpp" else data
    return files


def single_mode_of_auto(out, build_mode):
    """Where auto's search picked a single stage, that stage's mode, once the project is checked
    to be that mode's, file for file (`build_mode(mode)` builds it and returns its folder);
    None where auto's design has several stages (a design of its own)."""
    from hlsgen.schedule.schedule import parse_segmentation
    stages = parse_segmentation(report(out)["segmentation"])
    if len(stages) != 1:
        return None
    mine, theirs = project_files(out), project_files(build_mode(stages[0][0]))
    assert sorted(mine) == sorted(theirs) and all(mine[k] == theirs[k] for k in mine), \
        [k for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    return stages[0][0]


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("mode", ["dataflow", "sequential", "auto"])
@pytest.mark.parametrize("net", NETS)
def test_csim_bit_exact(exported, tmp_path, net, mode, target):
    device, extra = TARGETS[target]
    out = tmp_path / "prj"
    b = run_cli("build", exported(net, "qcdq"), "--device", device, "--mode", mode, "-o", out, *extra)
    if b.returncode != 0:
        # only a whole-graph dataflow design may not fit the capped device, and then the build
        # says so in one line, exits 2 and leaves nothing behind
        assert target == "capped" and mode == "dataflow", b.stderr
        assert b.returncode == 2 and "does not fit" in b.stderr and len(b.stderr.strip().splitlines()) <= 7
        assert not out.exists() and not list(tmp_path.glob(".prj*"))
        return

    def build_mode(m):
        b = run_cli("build", exported(net, "qcdq"), "--device", device, "--mode", m, "-o", tmp_path / "same", *extra)
        assert b.returncode == 0, b.stderr
        return tmp_path / "same"
    # where auto picks a single stage its project is that mode's, file for file, and the
    # [that mode] case runs its csim: auto's case runs only a design of its own
    if mode == "auto" and single_mode_of_auto(out, build_mode):
        return
    r, res = csim(out)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert res["passed"] and res["mismatches"] == 0 and res["elements"] > 0, res
    modes = [s["mode"] for s in report(out)["stages"]]
    # the RTL's activation memory: the banks the build plans serve every region (report.md shows them)
    banks = report(out)["rtl_act_mem_banks"]
    assert banks["served"] and banks["words"] >= banks["region_words"] > 0, banks
    assert "## Activation memory of the RTL (banks PLANNED" in (out / "report.md").read_text()
    # and the whole RTL as synthesis builds it: every core whole (fitted), above its datapath
    # alone (the schedule's model), and the memory, beside the device
    syn = report(out)["rtl_synthesis_model"]
    assert all(c["fitted"]["lut"] > c["datapath_model"]["lut"] for c in syn["cores"]), syn["cores"]
    assert syn["whole"]["lut"] == (sum(c["fitted"]["lut"] for c in syn["cores"]) + syn["memory"]["lut"] + syn["m_axi"]["lut"]
                                   + syn["top"]["lut"])
    # and the rest of the top's own logic, priced on what it builds: its row counters, and pointer
    # registers (AXI4-Lite) where the design has m_axi bundles, and only there
    top = syn["top"]["inputs"]
    assert syn["top"]["lut"] > 0 and top["counter_bits"] > 0 and top["one"] == 1, syn["top"]
    # the m_axi engines (one a bundle) priced where the design has bundles, and only there
    bundles = json.loads((out / "sim" / "design.json").read_text())["bundles"]
    assert syn["m_axi"]["bundles"] == len(bundles) and (syn["m_axi"]["lut"] > 0) == bool(bundles), syn["m_axi"]
    assert (top["pointers"] > 0) == bool(bundles), syn["top"]
    assert "## The RTL as synthesis builds it (MODELED" in (out / "report.md").read_text()
    if mode != "auto":
        assert modes == [mode]
    if target == "capped" and mode != "dataflow":
        src = (out / "hls" / "kernel.cpp").read_text()
        assert "wmem" in src                      # weights stream from off-chip memory


def test_capped_schedule_mixes_modes_and_spills(exported, tmp_path):
    """The small device exercises what it is for: a sequential stage next to a dataflow one, an
    activation spilled to m_axi by one and read back by the other. (demo_cnn at an 80% cap with
    its stages fixed, S1 D9: every stage has its own cores and memories, so auto builds one
    stage on this device.)"""
    out = tmp_path / "prj"
    b = run_cli("build", exported("demo_cnn", "qcdq"), "--device", SMALL, "--resource-cap", "0.8",
                "--weights", "offchip", "--stages", "S1 D9", "-o", out)
    assert b.returncode == 0, b.stderr
    rep = report(out)
    assert {s["mode"] for s in rep["stages"]} == {"dataflow", "sequential"}
    spills = [s for s in rep["build"]["stores"] if s["kind"] == "offchip"]
    assert spills and all(s["bundle"].startswith("gmem") for s in spills)
    src = (out / "hls" / "kernel.cpp").read_text()
    assert "#pragma HLS INTERFACE mode=m_axi port=spill0" in src and "#pragma HLS DATAFLOW" in src
    assert "_cfg_t c = cfgq.read();" in src          # the core pops configuration words
    r, res = csim(out)
    assert r.returncode == 0 and res["passed"], r.stdout[-2000:]


@pytest.mark.parametrize("net", ["shuffle_block", "residual"])
def test_memory_figure_counts_every_array_the_kernel_declares(exported, tmp_path, net):
    """The kernel holds its input, output and every scratchpad in a static array of its own for
    the whole run. In a sequential design with streamed weights nothing else needs block RAM,
    so the report's BRAM18 figure is exactly those arrays', each placed on its own: the model
    may not reuse one scratchpad for another tensor, nor forget the input and output arrays
    (until stop 15 it did both)."""
    import re

    from hlsgen.schedule import load_device
    from hlsgen.schedule.cost import Resources, storage
    out = tmp_path / "prj"
    b = run_cli("build", exported(net, "qcdq"), "--device", "u280", "--mode", "sequential", "--weights", "offchip",
                "-o", out)
    assert b.returncode == 0, b.stderr
    rep = report(out)
    src = (out / "hls" / "kernel.cpp").read_text()
    declared = re.findall(r"^\s*static ap_u?int<(\d+)> ((?:xin|yout|spad)\d+)\[(\d+)\];", src, re.M)
    stores = {s["var"]: s for s in rep["build"]["stores"] if s["kind"] != "offchip"}
    assert sorted(v for _, v, _ in declared) == sorted(stores), (declared, sorted(stores))
    dev = load_device("u280")
    mem = Resources()
    for bits, var, n in declared:
        mem = mem + storage(int(bits) * int(n), 64, dev)
    assert mem.bram18 > 0 and rep["resources"]["bram18"] == mem.bram18 and rep["resources"]["uram"] == mem.uram


def test_mismatch_is_reported_with_tensor_index_and_coordinates(exported, tmp_path):
    out = tmp_path / "prj"
    assert run_cli("build", exported("conv_bn_relu", "qcdq"), "--device", "u280", "-o", out).returncode == 0
    gold = out / "data" / "out0.bin"
    data = bytearray(gold.read_bytes())
    data[37] ^= 0x01                                 # one element of the golden output, one bit
    gold.write_bytes(bytes(data))
    r, res = csim(out)
    assert r.returncode != 0
    assert res == {"passed": False, "mismatches": 1, "elements": len(data), "protocol_ok": True}
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("MISMATCH"))
    assert "out0" in line and "index 37 [0,0,2,5]" in line and "expected" in line and "got" in line
    assert "FAILED: 1 mismatches" in r.stdout


def test_build_is_deterministic(exported, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert run_cli("build", exported("shuffle_block", "qcdq"), "--device", SMALL, "--resource-cap", "0.2",
                       "-o", out).returncode == 0
    files_a = sorted(p.relative_to(a) for p in a.rglob("*"))
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*"))
    for rel in files_a:
        if (a / rel).is_file():
            assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_existing_output_is_refused_and_replaced_only_on_success(exported, tmp_path):
    out = tmp_path / "prj"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = run_cli("build", exported("pointwise", "qcdq"), "--device", "u280", "-o", out)
    assert r.returncode == 2 and "--force" in r.stderr and (out / "keep.txt").read_text() == "mine"
    # a build that fails (the model has an op without an HLS template) keeps the old folder
    bad = tmp_path / "softmax.onnx"
    _softmax_model(bad)
    r = run_cli("build", bad, "--device", "u280", "-o", out, "--force")
    assert r.returncode == 2 and "op softmax has no HLS template yet" in r.stderr, r.stderr
    assert "(`hlsgen inspect`, `run` and `schedule` take it); the build realizes conv, linear," in r.stderr, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if not ln.startswith("hlsgen build [")]
    assert len(errors) == 1 and errors[0].startswith("hlsgen: error: task"), r.stderr
    assert (out / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prj", "softmax.onnx"]    # no partial trees
    r = run_cli("build", exported("pointwise", "qcdq"), "--device", "u280", "-o", out, "--force")
    assert r.returncode == 0 and not (out / "keep.txt").exists() and (out / "Makefile").exists()


def _softmax_model(path):
    """x -> Quant -> Softmax -> Quant -> y: a quantized softmax (no HLS template yet)."""
    import onnx
    from onnx import TensorProto, helper
    from onnx_builders import QDOMAIN, c, quant

    nodes = [quant("x", "xq", "s_in", name="in_quant"), helper.make_node("Softmax", ["xq"], ["sm"], axis=-1, name="sm"),
             quant("sm", "y", "s_out", name="out_quant")]
    g = helper.make_graph(nodes, "softmax_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [c("s_in", 0.05), c("s_out", 1 / 256), c("zp", 0.0), c("bits8", 8.0)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(QDOMAIN, 1)])
    m.ir_version = 8
    onnx.save(m, path)


def test_hostile_onnx_names_build_and_simulate(tmp_path):
    """Quotes, $(...), backticks, semicolons, brackets, newlines and #include in every ONNX name:
    the project builds, csim passes, nothing runs, and no raw name reaches C++, Tcl or make."""
    import onnx
    from onnx_builders import relu_net

    evil_in = 'x"; $(touch PWNED_IN) `touch PWNED_BT`; [exec touch PWNED_TCL]\n#include <x>'
    evil_node = 'act\n#include "evil.h"\n}; int y( $(touch PWNED_NODE)'
    evil_out = "y'; rm -rf / #\n$(touch PWNED_OUT)"
    m = relu_net(input_name=evil_in, node_name=evil_node)
    for node in m.graph.node:
        node.output[:] = [evil_out if o == "y" else o for o in node.output]
    m.graph.output[0].name = evil_out
    p = tmp_path / "hostile.onnx"
    onnx.save(m, p)
    out = tmp_path / "prj"
    r = run_cli("build", p, "--device", "u280", "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r, res = csim(out)
    assert r.returncode == 0 and res["passed"], r.stdout[-2000:]
    for f in out.rglob("*"):
        if f.is_file() and f.suffix not in (".bin", ".json") and f.name != "csim":
            text = f.read_text()
            for bad in ("touch PWNED", "rm -rf /", "#include <x>", '#include "evil.h"', "int y(", "[exec", "`touch"):
                assert bad not in text, (f, bad)
    assert not list(tmp_path.rglob("PWNED*")) and not list(ROOT.glob("PWNED*"))


def test_the_steering_tries_autos_designs_with_fewer_stages(tmp_path):
    """Random chain 56 (the small FPGA at a 20% cap, 32-bit ports, its input and output off chip):
    auto's pick, S6 D2 (the exact search's, 2 cycles faster than whole sequential as modeled),
    has three cores, whose control and memory ports the schedule does not price; its RTL first
    fits at 4 lanes (2,709 cycles). At each width the steering also tries auto's designs with
    fewer stages (search.candidates, as --stages): whole sequential fits at 9 lanes, faster, and
    is built (stop 65); `hlsgen build` with the setting it names builds the same design."""
    from hlsgen.zoo.randnets import random_design
    model, _, (dev, opts, _) = random_design("chain", 56, SMALL)
    import onnx
    onnx.save(model, tmp_path / "m.onnx")
    b = run_cli("build", tmp_path / "m.onnx", "--device", dev, *opts, "-o", tmp_path / "a")
    rep = report(tmp_path / "a")
    st = rep["rtl_fit_steered"]
    assert b.returncode == 0 and rep["rtl_synthesis_model"]["fits"] and st["setting"].endswith("--stages 'S8'"), b.stderr
    assert st["setting"].startswith("--max-lanes ") and "auto's dp-exact design (S6 D2)" in st["instead_of"], st
    assert "fewer stages have fewer cores" in st["why"] and rep["segmentation"] == "S8", st
    # the trials name auto's design they try; auto's own pick fits first at narrower tasks, slower
    assert "(auto's whole-sequential design)" in b.stderr and "(auto's dp-priced design)" not in b.stderr, b.stderr
    lanes = int(st["setting"].split()[1])
    own = run_cli("build", tmp_path / "m.onnx", "--device", dev, *opts, "--max-lanes", "4", "-o", tmp_path / "own")
    assert own.returncode == 0 and report(tmp_path / "own")["segmentation"] == "S6 D2" and lanes > 4
    assert rep["total_cycles"] < report(tmp_path / "own")["total_cycles"], (rep["total_cycles"], b.stderr)
    # the setting it names, given: the same project
    again = run_cli("build", tmp_path / "m.onnx", "--device", dev, *opts, "--max-lanes", str(lanes), "--stages", "S8",
                    "-o", tmp_path / "b")
    assert again.returncode == 0 and report(tmp_path / "b")["rtl_fit_steered"] is None, again.stderr
    assert (tmp_path / "a" / "rtl" / "hlsgen_top.sv").read_text() == (tmp_path / "b" / "rtl" / "hlsgen_top.sv").read_text()
    # with every steering option given (the lanes too), auto's designs with fewer stages are still
    # tried at the options given: whole sequential at 9 lanes fits where S6 D2 does not
    given = run_cli("build", tmp_path / "m.onnx", "--device", dev, *opts, "--max-lanes", str(lanes), "-o", tmp_path / "c")
    st = report(tmp_path / "c")["rtl_fit_steered"]
    assert given.returncode == 0 and st["setting"] == "--stages 'S8'" and "warning" not in given.stderr, given.stderr
    assert st["instead_of"] == "auto's dp-exact design (S6 D2)" and st["why"].startswith("fewer stages have fewer cores"), st
    assert (tmp_path / "c" / "rtl" / "hlsgen_top.sv").read_text() == (tmp_path / "b" / "rtl" / "hlsgen_top.sv").read_text()
    # --rtl-fit warn keeps auto's pick
    warn = run_cli("build", tmp_path / "m.onnx", "--device", dev, *opts, "--max-lanes", str(lanes), "--rtl-fit", "warn",
                   "-o", tmp_path / "d")
    assert warn.returncode == 0 and "warning: the RTL as modeled does not fit" in warn.stderr
    assert report(tmp_path / "d")["segmentation"] == "S6 D2" and report(tmp_path / "d")["rtl_fit_steered"] is None


def test_vitis_targets_name_the_missing_tool(exported, tmp_path):
    out = tmp_path / "prj"
    assert run_cli("build", exported("pointwise", "qcdq"), "--device", "u280", "-o", out).returncode == 0
    env = dict(os.environ, PATH="/usr/bin:/bin")       # no Vitis here, and none on this PATH
    assert shutil.which("vitis_hls", path=env["PATH"]) is None
    for target, tool in (("csynth", "vitis_hls"), ("cosim", "vitis_hls"), ("export", "vitis_hls"), ("xclbin", "v++")):
        r = make(out, target, env=env)
        assert r.returncode == 2, (target, r.stdout, r.stderr)
        assert f"{tool} is not on PATH" in r.stdout, (target, r.stdout)
    env.pop("XILINX_XRT", None)
    r = make(out, "host", env=env)
    assert r.returncode == 2 and "XILINX_XRT is not set" in r.stdout
    # the scripts and the v++ config are there for when Vitis is
    cfg = (out / "scripts" / "vpp.cfg").read_text()
    assert "stream_connect=mm2s_in0_1.out:hlsgen_kernel_1.in0" in cfg and "sp=mm2s_in0_1.m_axi_gmem:HBM[" in cfg
    assert "csynth_design" in (out / "scripts" / "csynth.tcl").read_text()
    assert "set_part xcu280" in (out / "scripts" / "project.tcl").read_text()
    assert make(out, "clean").returncode == 0 and not (out / "build").exists()
    # `make help` is the Makefile's head comment, every target of it (stop 65: it had stopped
    # short of synth-yosys and clean)
    r = make(out, "-s", "help")
    phony = next(l for l in (out / "Makefile").read_text().splitlines() if l.startswith(".PHONY:")).split()[1:]
    assert r.returncode == 0 and not any(l.startswith(("#", "PYTHON")) for l in r.stdout.splitlines()), r.stdout
    assert all(f"make {t}" in r.stdout for t in phony if t != "help"), (phony, r.stdout)


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def test_tiny_build_and_csim_speed(exported, tmp_path):
    model = exported("demo_cnn", "qcdq")
    out = tmp_path / "prj"
    # CPU seconds of the child processes (user + system), not wall time: the suite runs on
    # several workers at once, and a neighbour's Verilator build must not fail this bound
    t = _children_cpu()
    r = run_cli("build", model, "--device", "ultra96v2", "-o", out)
    build_s = _children_cpu() - t
    assert r.returncode == 0, r.stderr
    t = _children_cpu()
    r, res = csim(out)
    csim_s = _children_cpu() - t
    assert r.returncode == 0 and res["passed"]
    assert build_s < 2.0, f"build took {build_s:.2f} CPU s"
    assert csim_s < 60.0, f"make csim took {csim_s:.1f} CPU s"
    assert "hlsgen build [6/6]" in run_cli("build", model, "--device", "ultra96v2", "-o", tmp_path / "p2").stderr


@pytest.mark.parametrize("design", ["demo-cnn-ultra96", "demo-cnn-kv260-sequential", "shuffle-block-capped"])
def test_shipped_designs_build_and_simulate(tmp_path, design):
    out = tmp_path / design
    r = run_cli("build", ROOT / "designs" / f"{design}.yaml", "-o", out)
    assert r.returncode == 0, r.stderr
    rep = report(out)
    assert rep["hlsgen_version"] and rep["device"]["name"] and rep["figures"].startswith("modeled")
    r, res = csim(out)
    assert r.returncode == 0 and res["passed"], r.stdout[-2000:]


def test_every_shipped_design_parses():
    from hlsgen.design import load_design
    designs = sorted((ROOT / "designs").glob("*.yaml"))
    assert len(designs) >= 4
    for d in designs:
        des = load_design(d)
        assert des.name == d.stem


@pytest.mark.parametrize("text, msg", [
    ("device: u280\n", "field 'model' is missing"),
    ("model: {zoo: intar-mlp}\ndevice: u280\nmodee: auto\n", "unknown field 'modee'"),
    ("model: {zoo: intar-mlp, testnet: x}\ndevice: u280\n", "exactly one of"),
    ("model: {zoo: intar-mlp}\ndevice: u280\nresource_cap: lots\n", "'resource_cap' must be a number, got 'lots'"),
    ("name: '../../etc'\nmodel: a.onnx\ndevice: u280\n", "must be letters"),
    ("model: [1, 2]\ndevice: u280\n", "model must be a path"),
    (": : :\n", "not valid YAML"),
])
def test_bad_design_files(tmp_path, text, msg):
    p = tmp_path / "d.yaml"
    p.write_text(text)
    r = run_cli("build", p, "-o", tmp_path / "out")
    assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_build_without_device_is_a_clear_error(exported, tmp_path):
    r = run_cli("build", exported("pointwise", "qcdq"), "-o", tmp_path / "o")
    assert r.returncode == 2 and "--device" in r.stderr


@pytest.mark.parametrize("net, mode", [("shuffle_block", "dataflow"), ("demo_cnn", "sequential"), ("mlp_w4", "auto")])
def test_csim_with_io_offchip(exported, tmp_path, net, mode):
    """--io offchip: the graph's input and output are m_axi pointer arguments named in0 / out0
    (host buffers, row-major as data/in0.bin and data/out0.bin), not AXI4-Stream ports; csim is
    bit-exact, and the kernel really reads its input through the pointer (a corrupted in0.bin
    breaks the outputs)."""
    out = tmp_path / "prj"
    b = run_cli("build", exported(net, "qcdq"), "--device", "u280", "--mode", mode, "--io", "offchip", "-o", out)
    assert b.returncode == 0, b.stderr
    src = (out / "hls" / "kernel.cpp").read_text()
    assert "mode=axis" not in src and "hls::stream<hlsgen::axis_word" not in (out / "hls" / "kernel.h").read_text()
    assert "#pragma HLS INTERFACE mode=m_axi port=in0" in src and "#pragma HLS INTERFACE mode=m_axi port=out0" in src
    manifest = json.loads((out / "data" / "manifest.json").read_text())
    assert [p["interface"] for p in manifest["inputs"] + manifest["outputs"]] == ["m_axi", "m_axi"]
    assert report(out)["io_offchip"] is True
    r, res = csim(out)
    assert r.returncode == 0 and res["passed"] and res["elements"] > 0, r.stdout[-3000:] + r.stderr[-3000:]
    x = out / "data" / "in0.bin"
    x.write_bytes(bytes(v ^ 0x35 for v in x.read_bytes()))
    r, res = csim(out)
    assert r.returncode != 0 and res["mismatches"] > 0 and "MISMATCH out0" in r.stdout, r.stdout[-2000:]


def test_the_build_says_what_the_rtl_costs_and_steers_or_warns_where_it_does_not_fit(exported, tmp_path):
    """`hlsgen build` prints the RTL as synthesis builds it (the cores whole, fitted, and the
    memory: report.json's rtl_synthesis_model) beside the device. Where that does not fit though
    the schedule's datapaths do, it steers (--rtl-fit steer, the default): it tries narrower AXI
    ports, lower --resource-caps (a cap that fits refined in steps of 0.01) and narrower tasks
    (--max-lanes, halving; one that fits refined over the tasks' widths), among the options the
    user did not give, and where none of those alone fits, the narrowest ports with ever
    narrower tasks; it builds the fastest schedule whose RTL fits, saying so on stderr and in
    report.md and report.json; the project is the one a build with those options gives. Where
    nothing tried fits, or with --rtl-fit warn, it warns, exit 0, naming the cores' part and the
    memory's, and hints at the options the user gave that would make it fit. maxpool's capped
    activation memory is registers and LUT RAM (the small FPGA's 20% has 4 block RAMs), with
    routing the schedule does not price: its pool, whose datapath is cheap, is folded 72 lanes
    wide. --max-lanes also moves an m_axi channel's beat wider than its lanes in steps (since
    stop 55), so one way alone fits maxpool, demo_cnn and shuffle_block (nothing fit it
    before). Where it steered along --max-lanes, it also tries tasks as wide as the last
    setting that did not fit with the steered beats (--max-beat-lanes, since stop 57): where
    that fits and is 5% faster, it says so (stderr, report.md, report.json's wider_tasks) and
    keeps the steered design. Where the banks would take more block RAMs than the device has, the regions written
    through one port move into LUT RAM (demo_cnn, capped, at 64-bit ports and 12 lanes). mlp_w4's capped core streams 70 rows of weights, each lane's copy in LUT RAM: its RTL
    fits (stop 44's table, one copy read by every lane and written a slice at a run-time
    offset, took 12,864 LUT RAM sites and did not); since stop 46 a note says that it takes more
    than the --resource-cap the schedule kept to."""
    device, extra = TARGETS["capped"]
    # maxpool, the cap given (0.2): 64-bit ports do not fit; tasks of 4 lanes at most do (their
    # 256-bit beats moved 4 elements a cycle), and of 6 (refined over the widths between 4 and
    # 8), and that is the build with that option (until stop 55, before the beats moved in
    # steps, only 64-bit ports with 6 lanes fitted)
    out = tmp_path / "prj"
    r = run_cli("build", exported("maxpool", "qcdq"), "--device", device, "--mode", "sequential", "-o", out, *extra)
    f = run_cli("build", exported("maxpool", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "mp16", *extra, "--max-lanes", "6")
    w = run_cli("build", exported("maxpool", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "mpw", *extra, "--rtl-fit", "warn")
    assert r.returncode == f.returncode == w.returncode == 0, r.stderr + f.stderr + w.stderr
    first, steered, given = report(tmp_path / "mpw"), report(out), report(tmp_path / "mp16")
    syn = first["rtl_synthesis_model"]
    assert not syn["fits"] and syn["whole"]["lut"] > 12_000 > first["resources"]["lut"], syn
    assert max(t["vec"] * t["pe"] * t["simd"] for st in first["stages"] for t in st["tasks"]) == 72, first
    # since stop 57 the build also tries tasks as wide as the last setting that did not fit (8)
    # with the steered design's beats (--max-beat-lanes 6: 4 elements a step, as steered): that
    # fits, 23% faster and at 91% of the LUTs as modeled, and the build says so but keeps 6 lanes
    wider = steered["rtl_fit_steered"].pop("wider_tasks")
    assert steered["rtl_fit_steered"].pop("first_over") == f"LUT {syn['whole']['lut']:,} of {12000:,}", steered
    assert wider["setting"] == "--max-lanes 8 --max-beat-lanes 6" and wider["share_of_device"] > 0.85, wider
    assert wider["cycles"] <= 0.95 * steered["total_cycles"], (wider, steered["total_cycles"])
    assert f"note: --max-lanes 8 --max-beat-lanes 6 also fits as modeled: {wider['cycles']:,} cycles" in r.stderr, r.stderr
    assert "**wider tasks, narrow beats**: `--max-lanes 8 --max-beat-lanes 6` also fits" in (out / "report.md").read_text()
    assert steered["rtl_fit_steered"] == {
        "setting": "--max-lanes 6", "instead_of": "tasks up to 72 lanes",
        "first_cycles": first["total_cycles"], "first_lut": syn["whole"]["lut"],
        "first_share_of_device": syn["share_of_device"]["lut"],
        "why": "narrower tasks, and stream and off-chip beats moved in as narrow steps, reach the activation "
               "memory through fewer ports"}, steered["rtl_fit_steered"]
    assert steered["rtl_synthesis_model"]["fits"] and given["rtl_fit_steered"] is None and "warning" not in r.stderr
    assert steered["max_lanes"] == given["max_lanes"] == 6 and steered["port_bits"] == 256, steered
    chans = [c for b in json.loads((out / "sim" / "design.json").read_text())["bundles"] for c in b["channels"]]
    assert {(c["lanes"], c["steps"]) for c in chans if c["what"] != "weights"} == {(4, 8)}, chans
    streams = [(p["lanes"], p["steps"]) for k in ("inputs", "outputs")
               for p in json.loads((out / "sim" / "design.json").read_text())[k]]
    assert streams and all(lanes == 4 and steps > 1 for lanes, steps in streams), streams    # (since stop 56)
    for name in ("hls/kernel.cpp", "rtl/hlsgen_top.sv", "rtl/hlsgen_top_mem.sv", "sim/design.json"):
        assert (out / name).read_bytes() == (tmp_path / "mp16" / name).read_bytes(), name
    assert "tasks folded 6 lanes wide at most (--max-lanes)" in (out / "report.md").read_text()
    tried = [line.split("]   ", 1)[1] for line in r.stderr.splitlines() if "]   --" in line]
    # the trials that fit: 4 lanes, then 6 (of the widths between 4 and 8 that some folding has)
    assert tried[0].startswith("--port-bits 128: ") and [t.split(":")[0] for t in tried if "does not fit" not in t] \
        == ["--max-lanes 4", "--max-lanes 6", "--max-lanes 8 --max-beat-lanes 6"], tried
    assert steered["rtl_synthesis_model"]["m_axi"]["bundles"] == 1 and steered["rtl_synthesis_model"]["m_axi"]["lut"] > 0
    assert "nothing fits along one way" not in r.stderr and "--max-lanes 8: " in r.stderr, r.stderr
    # --rtl-fit warn keeps the first, warns naming the cores' part and the memory's, and hints
    assert f"the RTL as synthesis builds it: {syn['whole']['lut']:,} LUT" in w.stdout, w.stdout
    assert (f"warning: the RTL as modeled does not fit small (LUT {syn['whole']['lut']:,} of 12,000): its cores "
            f"whole take {syn['cores_total']['lut']:,} LUT and its activation memory {syn['memory']['lut']:,}") \
        in w.stderr, w.stderr
    assert "hint: with --max-lanes 6 the RTL as modeled fits: " in w.stderr, w.stderr
    assert first["rtl_fit_steered"] is None and "steered" not in (tmp_path / "mpw" / "report.md").read_text()
    # demo_cnn, capped: steered to narrower tasks (6 lanes, its beats 4 elements a step); with
    # 64-bit ports and 12 lanes (its build until stop 55) its LUTs fit, but its banks would take
    # more BRAM18 than the 20 (deeper banks, fewer of them: 30 at 27 lanes, stop 52; 22 at 12,
    # stop 53): regions' banks move into LUT RAM (hlsgen_bank_mem's LUTRAM) and it fits
    d = run_cli("build", exported("demo_cnn", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "steered", *extra)
    assert d.returncode == 0 and report(tmp_path / "steered")["rtl_fit_steered"]["setting"] == "--max-lanes 6", d.stderr
    assert report(tmp_path / "steered")["rtl_synthesis_model"]["fits"], d.stderr
    # 8 lanes with its beats fits too, but takes 8 cycles fewer of 120,997: not worth a mention
    assert report(tmp_path / "steered")["rtl_fit_steered"]["wider_tasks"] is None and "also fits" not in d.stderr
    assert "--max-lanes 8 --max-beat-lanes 6: " in d.stderr, d.stderr
    d = run_cli("build", exported("demo_cnn", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "demo", *extra, "--port-bits", "64", "--max-lanes", "12")
    rep = report(tmp_path / "demo")
    assert d.returncode == 0 and rep["rtl_synthesis_model"]["fits"] and rep["rtl_fit_steered"] is None, d.stderr
    plan = json.loads((tmp_path / "demo" / "sim" / "design.json").read_text())["synth"]["act_mem"]["banking"]
    moved = [r for r in plan["regions"] if r["lutram"]]
    assert plan["lutram"]["bram18_before"] > 20 >= plan["storage"]["bram18"] and moved, plan["lutram"]
    assert all(m["bank_storage"]["bram18"] == 0 and m["bank_storage"]["lut"] > 0 for m in moved), moved
    assert len(plan["lutram"]["moved"]) == len(moved) and \
        (tmp_path / "demo" / "rtl" / "hlsgen_top_mem.sv").read_text().count(".LUTRAM(1)") == len(moved)
    assert "in LUT RAM where synthesis would build block RAM" in (tmp_path / "demo" / "report.md").read_text()
    # shuffle_block, capped: until stop 55 nothing tried fitted (at 64-bit ports and 1 lane,
    # 12,234 LUT: its spills' 8-element beats banked its staging regions 8 ways); with its beats
    # moved an element a step, tasks of 1 lane fit, and nothing wider does
    d = run_cli("build", exported("shuffle_block", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "shuffle", *extra)
    rep = report(tmp_path / "shuffle")
    assert d.returncode == 0 and rep["rtl_fit_steered"]["setting"] == "--max-lanes 1", d.stderr
    assert rep["rtl_synthesis_model"]["fits"] and "warning" not in d.stderr, d.stderr
    assert rep["rtl_fit_steered"]["wider_tasks"]["setting"] == "--max-lanes 2 --max-beat-lanes 1", rep["rtl_fit_steered"]
    assert "--max-lanes 2: " in d.stderr and "does not fit (LUT " in d.stderr.split("--max-lanes 2: ")[1].splitlines()[0]
    # gap_linear at a cap of 0.3 (given): at 128-bit ports (fewer banks for their beats) it fits;
    # the build takes them, and is the build with --port-bits 128
    g = run_cli("build", exported("gap_linear", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "gap", *extra, "--resource-cap", "0.3")
    n = run_cli("build", exported("gap_linear", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "narrow", "--port-bits", "128", *extra, "--resource-cap", "0.3")
    w = run_cli("build", exported("gap_linear", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "warn", *extra, "--resource-cap", "0.3", "--rtl-fit", "warn")
    assert g.returncode == n.returncode == w.returncode == 0, g.stderr + n.stderr + w.stderr
    steered, narrow, first = report(tmp_path / "gap"), report(tmp_path / "narrow"), report(tmp_path / "warn")
    assert steered["rtl_synthesis_model"]["fits"] and not first["rtl_synthesis_model"]["fits"], steered
    assert "warning" not in g.stderr and "warning" not in n.stderr and narrow["rtl_fit_steered"] is None, g.stderr
    assert steered["rtl_fit_steered"].pop("first_over").startswith("LUT "), steered
    assert steered["rtl_fit_steered"] == {
        "setting": "--port-bits 128", "instead_of": "--port-bits 256", "first_cycles": first["total_cycles"],
        "first_lut": first["rtl_synthesis_model"]["whole"]["lut"],
        "first_share_of_device": first["rtl_synthesis_model"]["share_of_device"]["lut"], "wider_tasks": None,
        "why": "a narrower beat needs fewer banks in the activation memory, and moves fewer bytes a cycle"}, steered
    for f in ("hls/kernel.cpp", "rtl/hlsgen_top.sv", "rtl/hlsgen_top_mem.sv", "sim/design.json"):
        assert (tmp_path / "gap" / f).read_bytes() == (tmp_path / "narrow" / f).read_bytes(), f
    assert steered["total_cycles"] == narrow["total_cycles"] > first["total_cycles"], steered
    assert (f"note: built with --port-bits 128, the build's choice: with --port-bits 256 the RTL as modeled takes "
            f"{first['rtl_synthesis_model']['whole']['lut']:,} LUT") in g.stderr, g.stderr
    assert "**steered**: built with `--port-bits 128`" in (tmp_path / "gap" / "report.md").read_text()
    # --rtl-fit warn keeps the first schedule, warns and hints at the same
    hint = next(line for line in w.stderr.splitlines() if line.startswith("hint: "))
    assert "warning: the RTL as modeled does not fit small" in w.stderr, w.stderr
    assert hint.startswith("hint: with --port-bits 128 the RTL as modeled fits: ") and \
        f"at {narrow['total_cycles']:,} cycles where this build takes {first['total_cycles']:,} (MODELED" in hint, hint
    # residual's dataflow design on the Ultra96-V2 does not fit by 2%, nothing given: 64-bit
    # ports do not fit; a cap of 0.7 does, and the caps from 0.79 down are tried in steps of 0.01:
    # 0.75 fits, faster than 0.7 (376 cycles for 448; 400 for 472 until stop 63)
    d = run_cli("build", exported("residual", "qcdq"), "--device", "ultra96v2", "--mode", "dataflow", "-o",
                tmp_path / "df")
    k = run_cli("build", exported("residual", "qcdq"), "--device", "ultra96v2", "--mode", "dataflow", "-o",
                tmp_path / "df75", "--resource-cap", "0.75")
    assert d.returncode == k.returncode == 0 and "warning" not in d.stderr + k.stderr, d.stderr + k.stderr
    steered, capped = report(tmp_path / "df"), report(tmp_path / "df75")
    assert steered["rtl_fit_steered"]["setting"] == "--resource-cap 0.75" and steered["resource_cap"] == 0.75, steered
    assert steered["rtl_fit_steered"]["first_share_of_device"] > 1 >= steered["rtl_synthesis_model"]["share_of_device"]["lut"]
    assert steered["total_cycles"] == capped["total_cycles"] and \
        steered["rtl_synthesis_model"]["whole"] == capped["rtl_synthesis_model"]["whole"], steered
    assert "steered to --resource-cap 0.75" in d.stderr and "--rtl-fit warn keeps the first" in d.stderr, d.stderr
    # each trial is a progress line: its setting, LUTs, share, cycles, and whether it fits
    trials = [re.sub(r" \(\d+\.\d s\)$", "", line.split("]   ", 1)[1]) for line in d.stderr.splitlines() if "]   --" in line]
    shape = r"(--port-bits|--resource-cap|--max-lanes) ([\d.]+): [\d,]+ LUT \([\d.]+%\), ([\d,]+) cycles" \
            r"(, does not fit \(LUT [\d,]+ of 70,560\))?"
    seen = [re.fullmatch(shape, t) for t in trials]
    assert all(seen), trials
    # the lanes: half the first design's widest task (192 lanes; 288 until stop 63, when the model
    # saw that c2 wider than c1, which feeds it, gains nothing) fits, refined over the tasks' widths
    # between (144 fits too)
    assert [(m[1], m[2], bool(m[4])) for m in seen] == [("--port-bits", "64", True), ("--resource-cap", "0.7", False)] + \
        [("--resource-cap", f"0.{c}", True) for c in (79, 78, 77, 76)] + [("--resource-cap", "0.75", False)] + \
        [("--max-lanes", "128", False), ("--max-lanes", "144", False)], trials
    assert trials[6] == (f"--resource-cap 0.75: {capped['rtl_synthesis_model']['whole']['lut']:,} LUT (98%), "
                         f"{capped['total_cycles']:,} cycles"), trials
    assert int(seen[1][3].replace(",", "")) > capped["total_cycles"], trials     # 0.7 fits, but slower
    m = run_cli("build", exported("mlp_w4", "qcdq"), "--device", device, "--mode", "sequential", "-o", tmp_path / "mlp",
                *extra)
    assert m.returncode == 0 and "warning" not in m.stderr, m.stderr
    core = json.loads((tmp_path / "mlp" / "sim" / "design.json").read_text())["synth"]["cores"][0]
    syn = report(tmp_path / "mlp")["rtl_synthesis_model"]
    assert syn["fits"] and core["inputs"]["weight_lutram"] > 0, core
    # it fits the device but not the 20% the schedule was held to: a note says so, with the share
    assert syn["share_of_device"]["lut"] > 0.2, syn
    assert (f"note: the RTL as modeled takes LUT {syn['whole']['lut']:,} ({syn['share_of_device']['lut']:.0%}) of small, "
            "above --resource-cap 0.2") in m.stderr, m.stderr
    # since stop 49 the small FPGA's ports are 256 bits (what its memory moves a cycle), not 512:
    # conv_bn_relu's capped memory needs half the banks for its beats, and its RTL fits
    c = run_cli("build", exported("conv_bn_relu", "qcdq"), "--device", device, "--mode", "sequential", "-o",
                tmp_path / "conv", *extra)
    syn = report(tmp_path / "conv")["rtl_synthesis_model"]
    assert c.returncode == 0 and "warning" not in c.stderr and syn["fits"], (c.stderr, syn)
    assert report(tmp_path / "conv")["port_bits"] == 256 and syn["whole"]["lut"] < 10_000, syn
    u = run_cli("build", exported("mlp_w4", "qcdq"), "--device", "u280", "-o", tmp_path / "u280")
    assert u.returncode == 0 and "warning" not in u.stderr and report(tmp_path / "u280")["rtl_synthesis_model"]["fits"]
    assert "note: the RTL" not in u.stderr, u.stderr
