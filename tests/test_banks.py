"""sim/hlsgen_sim/banks.py, which weighs banking schemes for the activation memory on a
simulated access trace, on traces whose answers are known by hand."""
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "sim"))
from hlsgen_sim import banks  # noqa: E402


def design(regions, words, clients):
    return {"synth": {"act_mem": {"words": words, "regions": regions, "clients": clients}}}


# one tensor of 1x2x4x4 at 0 and one of 1x8 at 32; core0 reads with 8 lanes, core1 writes with 2
DESIGN = design([{"tensor": "x", "base": 0, "size": 32, "shape": [1, 2, 4, 4]},
                 {"tensor": "y", "base": 32, "size": 8, "shape": [1, 8]}], 40,
                [{"client": "core0 read lanes", "port": "r", "first": 0, "n": 8},
                 {"client": "core1 write lanes", "port": "w", "first": 0, "n": 2}])


def trace(tmp_path, lines):
    p = tmp_path / "mem_trace.txt"
    p.write_text("".join(l + "\n" for l in lines))
    return banks.read_trace(p)


def test_schemes_on_a_trace_known_by_hand(tmp_path):
    # cycle 5: the 8 lanes read row 0 of both channels of x (addresses 0-3 and 16-19), and
    # core1 writes y[0], y[4]; cycle 9: all 8 lanes read the same word, x[c=1, h=2, w=1] (25)
    row = " ".join(f"r{k}:{a:x}" for k, a in enumerate([0, 1, 2, 3, 16, 17, 18, 19]))
    t = trace(tmp_path, [f"5 {row} w0:20 w1:24", "9 " + " ".join(f"r{k}:19" for k in range(8))])
    res = banks.weigh(DESIGN, t)
    assert res["accesses"] == 18 and res["cycles_with_accesses"] == 2
    # one memory: 10 accesses in cycle 5 with 1 bank; the 8 reads of one word count 8 in every bank count
    assert [res["cyclic"][str(1 << j)]["worst"] for j in range(6)] == [10, 8, 8, 8, 8, 8]
    assert res["cyclic"]["1"]["clients"] == ["core0 read lanes x8", "core1 write lanes x2"]
    assert res["cyclic"]["4"]["cycle"] == 9
    # a memory per tensor, reads of one word sharing a port: x sees 8 reads in cycle 5 (distinct words)
    assert res["region_cyclic"]["1"]["worst"] == 8 and res["region_cyclic"]["1"]["region"] == "x"
    # (x's offsets 0-3 and 16-19 meet mod 16, not mod 32)
    assert res["region_cyclic"]["16"]["worst"] == 2 and res["region_cyclic"]["32"]["worst"] == 1
    # by coordinates: x needs 4 banks for 2 a cycle (w mod 4: each bank one word of each channel);
    # y's two writes (offsets 0 and 4) share one bank until Bw = 8, but 2 is what a bank serves
    x, y, rest = res["region_coordinates"]["regions"]
    assert (x["Bc"], x["Bh"], x["Bw"], x["worst"], x["banks"], x["depth"]) == (1, 1, 4, 2, 4, 8)
    assert (y["Bw"], y["worst"], y["banks"]) == (1, 2, 1) and rest["accesses"] == 0
    assert res["region_coordinates"]["worst"] == 2
    # asked for 1 access a bank, x takes 8 banks (channel and w mod 4) and y 2
    one = banks.weigh(DESIGN, t, ports=1)["region_coordinates"]["regions"]
    assert (one[0]["banks"], one[0]["worst"], one[1]["banks"], one[1]["worst"]) == (8, 1, 8, 1)
    assert "per tensor, by coordinates: at most 2" in "\n".join(banks.table(res))


def test_a_trace_outside_the_design_is_refused(tmp_path):
    with pytest.raises(ValueError, match="r9 is on no client"):
        banks.weigh(DESIGN, trace(tmp_path, ["1 r9:0"]))
    with pytest.raises(ValueError, match="0x28 is in no region"):
        banks.weigh(DESIGN, trace(tmp_path, ["1 r0:28"]))
    with pytest.raises(ValueError, match="not a trace line"):
        trace(tmp_path, ["r0:1"])


def test_the_builds_plan_is_held_against_the_trace(tmp_path):
    # the build's plan (banking.py): x by w mod 4 with 2 words a bank for one client at a time,
    # y one bank with 1 word a bank (it planned 2 clients at once)
    reg = lambda name, base, size, dims, b, allowed, ports: {    # noqa: E731
        "region": name, "base": base, "size": size, "dims": dims, "Bc": b[0], "Bh": b[1], "Bw": b[2],
        "banks": b[0] * b[1] * b[2], "copies": 1, "allowed": allowed, "ports": ports}
    plan = {"served": True, "banks": 5, "words": 40, "region_words": 40, "storage": {"bram18": 0, "lut": 5},
            "whole_storage": {"bram18": 0, "lut": 1},
            "regions": [reg("x", 0, 32, [2, 4, 4], (1, 1, 4), 2, 1), reg("y", 32, 8, [1, 1, 8], (1, 1, 1), 1, 2)]}
    # routes: read lane k reaches x's bank k mod 4 (cycle 5's w = k mod 4) and bank 1 (cycle 9's
    # word, w = 1); both writes reach y's one bank
    plan["regions"][0]["routes"] = {"core0 read lanes": [sorted({k % 4, 1}) for k in range(8)]}
    plan["regions"][1]["routes"] = {"core1 write lanes": [[0], [0]]}
    d = {"synth": {"act_mem": dict(DESIGN["synth"]["act_mem"], banking=plan)}}
    row = " ".join(f"r{k}:{a:x}" for k, a in enumerate([0, 1, 2, 3, 16, 17, 18, 19]))
    t = trace(tmp_path, [f"5 {row} w0:20 w1:24", "9 " + " ".join(f"r{k}:19" for k in range(8))])
    pl = banks.weigh(d, t)["planned"]
    assert pl["routes_kept"] and pl["off_route"] is None
    x, y = pl["regions"]
    # x: each bank gets w = k of both channels from core0's lanes (2, as planned); y: the two
    # writes of cycle 5 land in its one bank (2 where the plan allows 1)
    assert (x["worst"], x["clients_met"], x["ok"]) == (2, 1, True)
    assert (y["worst"], y["cycle"], y["clients_met"], y["ok"]) == (2, 5, 1, False) and not pl["ok"]
    assert "the trace breaks it in y (2 words in a bank at cycle 5, 1 clients met)" in "\n".join(banks.table(
        banks.weigh(d, t)))
    # with y at 8 banks the writes are apart; a cycle in which core1 writes x as core0 reads it
    # meets 2 clients where the plan has 1
    plan["regions"][1].update(Bw=8, banks=8, routes={"core1 write lanes": [[0], [4]]})
    plan["regions"][0]["routes"]["core1 write lanes"] = [[1]]
    t = trace(tmp_path, [f"5 {row} w0:20 w1:24", "11 r0:0 w0:1"])
    pl = banks.weigh(d, t)["planned"]
    x, y = pl["regions"]
    assert (y["worst"], y["ok"]) == (1, True) and (x["clients_met"], x["ok"]) == (2, False) and pl["routes_kept"]


def test_an_access_off_its_ports_routes_is_named(tmp_path):
    # x in 4 banks by w; read lane 5 is routed to bank 1 only, and reads w = 1 and then w = 2
    plan = {"served": True, "banks": 4, "words": 32, "region_words": 40, "storage": {"bram18": 0, "lut": 4},
            "whole_storage": {"bram18": 0, "lut": 1}, "paths": 1, "full_paths": 4,
            "regions": [{"region": "x", "base": 0, "size": 32, "dims": [2, 4, 4], "Bc": 1, "Bh": 1, "Bw": 4,
                         "banks": 4, "copies": 1, "allowed": 2, "ports": 1,
                         "routes": {"core0 read lanes": [[]] * 5 + [[1]]}}]}
    d = {"synth": {"act_mem": dict(DESIGN["synth"]["act_mem"], banking=plan)}}
    pl = banks.weigh(d, trace(tmp_path, ["3 r5:1", "4 r5:2"]))["planned"]
    assert not pl["ok"] and not pl["routes_kept"]
    assert pl["off_route"] == "cycle 4: core0 read lanes port 5 reached bank 2 of x, which its routes do not give it"
    assert "core0 read lanes port 5 reached bank 2" in "\n".join(banks.table(banks.weigh(d, trace(tmp_path, ["4 r5:2"]))))
