"""The design's activation memory in RTL (templates/rtl/hlsgen_act_mem.sv): which of its ports
each client of the top (hlsgen_top.sv) takes."""
from __future__ import annotations

import math
from collections import Counter
from typing import Dict, Iterable, List, Tuple

from ..vitis.cpp import label


def act_mem_ports(core: Dict) -> Dict:
    """The activation memory's ports (hlsgen_act_mem), client by client, as (first port, ports):
    reads `rc` (each core's NR read lanes), `rb` (each bundle's write channels: a port per
    element a cycle of its widest, offchip.Channel.lanes; the channel on W next chooses the
    addresses), `ro` (each output stream's elements a cycle: its beat, or a step of it under
    --max-lanes); writes `wc` (each core's NW write lanes), `wb` (each bundle's read channels
    into staging regions, the same), `wi` (each input stream's, as `ro`). `NRP`, `NWP`: all of
    them; `clients`: every group's name and ports, for the top's comments and the report;
    `AB`, `SB`: its address and word bits, and the widths of its packed port vectors (`raddr`,
    `re`, `rdata`, `we`, `waddr`, `wdata`: a port's AB or SB bits, or 1 bit, per port)."""
    ports = {"NRP": 0, "NWP": 0, "clients": [], "rc": {}, "rb": {}, "ro": {}, "wc": {}, "wb": {}, "wi": {}}

    def take(kind: str, key: str, name: str, n: int):
        if n <= 0:
            return
        total = "NRP" if kind[0] == "r" else "NWP"
        ports[kind][key] = (ports[total], n)
        ports["clients"].append({"port": kind[0], "first": ports[total], "n": n, "client": name})
        ports[total] += n

    for c in core["cores"]:
        take("rc", c["index"], f"core{c['index']} read lanes", c["params"]["NR"])
    for b in core["bundles"]:
        take("rb", b["name"], f"m_axi {b['name']} write beats",
             max([ch["lanes"] for ch in b["channels"] if ch["write"]], default=0))
    for o in core["outputs"]:
        take("ro", o["name"], f"output {o['name']} beats", o["lanes"])
    for c in core["cores"]:
        take("wc", c["index"], f"core{c['index']} write lanes", c["params"]["NW"])
    for b in core["bundles"]:
        take("wb", b["name"], f"m_axi {b['name']} read beats",
             max([ch["lanes"] for ch in b["channels"] if not ch["write"] and ch["what"] != "weights"], default=0))
    for i in core["inputs"]:
        take("wi", i["name"], f"input {i['name']} beats", i["lanes"])
    ab, sb = int(core["core_params"]["AB"]), int(core["sb"])
    nr, nw = ports["NRP"], ports["NWP"]
    ports.update(AB=ab, SB=sb, widths={"raddr": nr * ab, "re": nr, "rdata": nr * sb,
                                       "we": nw, "waddr": nw * ab, "wdata": nw * sb})
    return ports


def bank_memory(amem: Dict, plan: Dict, image: List[int]) -> Dict:
    """The activation memory built in banks (hlsgen_top_mem.sv): one hlsgen_bank_mem per region of
    the bank plan (banking.py) and copy of it, each with the lanes its routes give: every port of
    the memory (amem: its clients' first ports) routed to a bank of the region becomes a lane of
    that region's memory, with its routes (route_params). Every copy of a region takes
    every write; a reading client reads its copy (the plan's copy_of). Returns the memories
    (`mems`, each with `params`: its hlsgen_bank_mem parameters but FILE, what hlsgen_top_mem.sv
    gives it and `make synth-yosys SCOPE=mem` synthesizes), their images (`images`: region words
    in order, where any is not zero) and the coordinate bits every memory takes (`CB`)."""
    first = {c["client"]: (c["port"], c["first"]) for c in amem["clients"]}
    mems, images = [], {}
    cb = 1
    for r, reg in enumerate(plan["regions"]):
        c, h, w = (int(d) for d in reg["dims"])
        n = int(reg["size"]) // (c * h * w)
        if n * c * h * w != int(reg["size"]):
            raise ValueError(f"region {reg['region']}: {reg['size']} words are not whole {c} x {h} x {w} blocks")
        nb = int(reg["banks"])
        cb = max(cb, coordinate_bits((n, c, h, w)))
        words = image[int(reg["base"]):int(reg["base"]) + int(reg["size"])]
        file = ""
        if any(words):
            file = f"region{r}.mem"
            images[file] = words
        for copy in range(max(1, int(reg["copies"]))):
            lanes: Dict[str, List[Tuple[int, List[int]]]] = {"r": [], "w": []}
            for client, ports in sorted(reg["routes"].items(), key=lambda kv: first[kv[0]]):
                kind, at = first[client]
                if kind == "r" and reg.get("copy_of", {}).get(client, 0) != copy:
                    continue
                lanes[kind] += [(at + k, banks) for k, banks in enumerate(ports) if banks]
            routes = route_params([banks for _, banks in lanes["r"]], [banks for _, banks in lanes["w"]], nb)
            mems.append({"name": f"region{r}" + (f"_copy{copy}" if reg["copies"] > 1 else ""), "plan_region": r,
                         "region": label(reg["region"], 60),                # (an ONNX name, made safe for a comment)
                         "base": int(reg["base"]), "size": int(reg["size"]), "N": n, "C": c, "H": h, "W": w,
                         "split": coordinate_split("o", (n, c, h, w)),
                         "hit": region_hit("a", int(reg["base"]), int(reg["size"])),
                         "LBC": int(reg["Bc"]).bit_length() - 1, "LBH": int(reg["Bh"]).bit_length() - 1,
                         "LBW": int(reg["Bw"]).bit_length() - 1, "banks": nb,
                         # the skews (banking.bank_of), 0 in a plan without them
                         "KWH": int(reg.get("Kwh", 0)), "KCH": int(reg.get("Kch", 0)), "KCW": int(reg.get("Kcw", 0)),
                         "reads": [g for g, _ in lanes["r"]], "writes": [g for g, _ in lanes["w"]],
                         "routes": routes,
                         # a second write port: the plan's (banking._priced)
                         "TWO_WRITES": int(bool(lanes["w"]) and bool(reg["two_writes"])),
                         # its reads' port sharing and its words' bits: the plan's (banking.plan)
                         "SHARE": int(reg["shared_reads"]), "RB": int(reg["word_bits"]),
                         # distributed RAM where the device's block RAMs would not hold the banks
                         "LUTRAM": int(reg["lutram"]), "FILE": file})
    # a port that is a lane of one memory alone needs no region compare on its data path: every
    # access it makes is in that memory's region, or `conflict` fails the simulation (and the
    # addresses come from the configuration words, not from the data, so a simulation that
    # passes has made every access the design ever makes). Its enable and its word are the
    # memory's, ungated; the compare is kept for `conflict` only, which synthesis drops.
    lanes_of = {k: Counter(g for m in mems for g in m[k]) for k in ("reads", "writes")}
    for m in mems:
        m["alone"] = {k: [int(lanes_of[k][g] == 1) for g in m[k]] for k in ("reads", "writes")}
    for m in mems:
        m["params"] = {"SB": int(amem["SB"]), **{k: m[k] for k in ("N", "C", "H", "W", "LBC", "LBH", "LBW", "KWH", "KCH", "KCW")},
                       "NR": max(1, len(m["reads"])), "NW": max(1, len(m["writes"])), "CB": cb,
                       "TWO_WRITES": m["TWO_WRITES"], "SHARE": m["SHARE"], "RB": m["RB"], "LUTRAM": m["LUTRAM"],
                       **m["routes"]}
    return {"mems": mems, "images": images, "CB": cb}


# hlsgen_top_mem's own logic around its memories, as Yosys synth_xilinx maps it: a fit on the
# designs of benchmarks/decode_points.json (`benchmarks/decode_fit.py` refits it and prints each
# design's error; `make synth-yosys SCOPE=mem` synthesizes a project's as `decode`). A lane whose
# port is a lane of other memories too is gated: a read port of R memories picks its word among
# them by their compares a cycle late (an AND-OR of R pairs a bit: ceil(R / 3) LUT6s), and each
# gated lane's enable waits for its compare (per address bit). The constant divides of a split
# that is not by bits are per lane and address bit.
DECODE_FIT = {"read_pick_bits": 1.24, "gated_address_bits": 0.17, "divide_address_bits": 1.14}


def decode_inputs(mems: List[Dict], ab: int, sb: int) -> Dict[str, int]:
    """What DECODE_FIT prices, counted from bank_memory's memories (their lanes and `alone` flags)
    and the memory's address and word bits."""
    gated_reads = sum(1 - a for m in mems for a in m["alone"]["reads"])
    gated = gated_reads + sum(1 - a for m in mems for a in m["alone"]["writes"])
    fanin = Counter(g for m in mems for g in m["reads"])
    divides = sum((len(m["reads"]) + len(m["writes"])) * m["split"]["divides"] for m in mems)
    return {"gated_reads": gated_reads, "gated_lanes": gated, "divides": divides,
            "read_pick_bits": sb * sum(-(-n // 3) for n in fanin.values() if n > 1),
            "gated_address_bits": gated * ab, "divide_address_bits": divides * ab}


def decode_logic(inputs: Dict[str, int]) -> Dict[str, int]:
    """The decode's LUTs (the fit) and flip-flops (a gated read lane's registered compare)."""
    return {"lut": int(round(sum(DECODE_FIT[k] * inputs[k] for k in DECODE_FIT))), "ff": int(inputs["gated_reads"])}


def address_bits(words: int) -> int:
    """The activation memory's address bits (hlsgen_core's AB) for a memory of `words` words."""
    return max(1, (max(1, int(words)) - 1).bit_length())


def coordinate_bits(dims: Iterable[int]) -> int:
    """The bits every coordinate of a region of these dimensions is carried in (hlsgen_bank_mem's
    CB): the widest dimension's, at least 1."""
    return max(1, *((int(d) - 1).bit_length() for d in dims))


def region_hit(var: str, base: int, size: int) -> str:
    """A SystemVerilog test that address `var` (AB bits) is in the region of `size` words from
    `base` (no lower bound for a region at 0)."""
    return (f"{var} >= {base} && " if base else "") + f"32'({var}) < {base + size}"


def coordinate_split(var: str, dims: Tuple[int, int, int, int]) -> Dict[str, object]:
    """SystemVerilog expressions of the coordinates (n, c, h, w) of the word at unsigned offset
    `var` (AB bits) of a row-major N x C x H x W region, for an offset inside it (the memory checks that):
    a power-of-two size is a shift and a mask (wiring), any other a constant divide or modulo;
    a dimension with no larger one outside it needs no modulo, and one of size 1 is 0. Which
    splits divide is in `dividers`, and how many in `divides`."""
    dims = tuple(int(d) for d in dims)
    out: Dict[str, object] = {}
    divides: List[str] = []

    def step(x: str, k: int, wire: str, op: str) -> str:
        # by k: a shift (or mask) where k is a power of two, else a constant divide (or modulo)
        if k & (k - 1) == 0:
            return f"({x} >> {k.bit_length() - 1})" if wire == ">>" else f"({x} & AB'({k - 1}))"
        divides.append(f"{op} {k}")
        return f"({x} {op} AB'({k}))"

    for d, name in enumerate(("n", "c", "h", "w")):
        if dims[d] == 1:
            out[name] = "0"
            continue
        x, stride = var, math.prod(dims[d + 1:])
        if stride > 1:
            x = step(x, stride, ">>", "/")
        if math.prod(dims[:d]) > 1:
            x = step(x, dims[d], "&", "%")
        out[name] = x
    out["dividers"] = ", ".join(divides)
    out["divides"] = len(divides)
    return out


LITERAL_BITS = 65536     # Verilator takes no number literal wider (a concatenation of them may be)


def packed_literal(vals: List[int], bits: int) -> str:
    """A Verilog value of vals packed `bits` bits each, entry i at [i * bits +: bits]: one literal,
    or, where that would be wider than Verilator takes, a concatenation of literals each of
    whole entries (the last holds entries 0, 1, ...)."""
    per = max(1, LITERAL_BITS // bits)
    parts = []
    for at in range(0, len(vals), per):
        chunk = vals[at:at + per]
        parts.append(f"{len(chunk) * bits}'h{sum(int(v) << (i * bits) for i, v in enumerate(chunk)):x}")
    return parts[0] if len(parts) == 1 else "{" + ", ".join(reversed(parts)) + "}"


def route_params(reads: List[List[int]], writes: List[List[int]], nb: int) -> Dict[str, object]:
    """hlsgen_bank_mem's route parameters from each read port's and write port's banks (out of
    nb): per direction, the pairs (PR, PW), the lists by bank (RBP: where each bank's ports start
    in RBL, and RBL) and by port (RPP, RPL), as Verilog values of LB-bit entries, LB as few bits
    as the largest entry needs (packed_literal: a Verilator literal is at most 65,536 bits)."""
    lists: Dict[str, List[int]] = {}
    out: Dict[str, object] = {}
    for key, ports in (("R", reads), ("W", writes)):
        banks = [sorted(set(int(b) for b in p)) for p in ports]
        if any(b < 0 or b >= nb for p in banks for b in p):
            raise ValueError(f"a route reaches a bank outside 0..{nb - 1}")
        by_bank = [[k for k, p in enumerate(banks) if b in p] for b in range(nb)]
        starts = [0]
        for lst in by_bank:
            starts.append(starts[-1] + len(lst))
        pstarts = [0]
        for p in banks:
            pstarts.append(pstarts[-1] + len(p))
        out[f"P{key}"] = max(1, starts[-1])
        lists[f"{key}BP"] = starts
        lists[f"{key}BL"] = [k for lst in by_bank for k in lst]
        lists[f"{key}PP"] = pstarts + [pstarts[-1]] * (max(1, len(banks)) + 1 - len(pstarts))
        lists[f"{key}PL"] = [b for p in banks for b in p]
    lb = max(1, max(v for vals in lists.values() for v in vals).bit_length())
    out["LB"] = lb
    for name, vals in lists.items():
        out[name] = packed_literal(vals or [0], lb)
    return out
