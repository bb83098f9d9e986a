"""The design's activation memory in RTL (templates/rtl/hlsgen_act_mem.sv): which of its ports
each client of the top (hlsgen_top.sv) takes."""
from __future__ import annotations

from typing import Dict


def act_mem_ports(core: Dict) -> Dict:
    """The activation memory's ports (hlsgen_act_mem), client by client, as (first port, ports):
    reads `rc` (each core's NR read lanes), `rb` (each bundle's write channels: a port per
    element of its widest beat, the channel on W next chooses the addresses), `ro` (each output
    stream's beat); writes `wc` (each core's NW write lanes), `wb` (each bundle's read channels
    into staging regions, widest beat), `wi` (each input stream's beat). `NRP`, `NWP`: all of
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
             max([ch["beat"] for ch in b["channels"] if ch["write"]], default=0))
    for o in core["outputs"]:
        take("ro", o["name"], f"output {o['name']} beats", o["beat"])
    for c in core["cores"]:
        take("wc", c["index"], f"core{c['index']} write lanes", c["params"]["NW"])
    for b in core["bundles"]:
        take("wb", b["name"], f"m_axi {b['name']} read beats",
             max([ch["beat"] for ch in b["channels"] if not ch["write"] and ch["what"] != "weights"], default=0))
    for i in core["inputs"]:
        take("wi", i["name"], f"input {i['name']} beats", i["beat"])
    ab, sb = int(core["core_params"]["AB"]), int(core["sb"])
    nr, nw = ports["NRP"], ports["NWP"]
    ports.update(AB=ab, SB=sb, widths={"raddr": nr * ab, "re": nr, "rdata": nr * sb,
                                       "we": nw, "waddr": nw * ab, "wdata": nw * sb})
    return ports
