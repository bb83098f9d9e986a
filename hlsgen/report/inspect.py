"""`hlsgen inspect`: one row per task, totals at the bottom."""
from __future__ import annotations

import math
from typing import Dict, List

import numpy as np

from ..ir import Graph
from ..ops import OPS


def display_name(name: str, width: int = 0) -> str:
    """Model names may contain anything; show them escaped, on one line."""
    shown = name.encode("unicode_escape").decode("ascii")
    if width and len(shown) > width:
        shown = shown[: width - 1] + "~"
    return shown


def _param_bytes(graph: Graph, task) -> int:
    total = 0
    for t in graph.const_inputs(task):
        total += math.ceil(t.size * t.dtype.bits / 8)
    rq = task.attrs.get("requant")
    if rq is not None:
        channels = max(np.size(rq.shift), 1)
        bias_bits = max(int(abs(int(b))).bit_length() + 1 for b in np.asarray(rq.bias, dtype=object).reshape(-1))
        per_channel = 4 * len(rq.multipliers) + 1 + math.ceil(bias_bits / 8)
        total += channels * per_channel
    return total


def rows(graph: Graph) -> List[Dict]:
    out = []
    for task in graph.tasks:
        ins = graph.activation_inputs(task)
        ws = graph.const_inputs(task)
        outs = [graph.tensors[o] for o in task.outputs]
        out.append({
            "name": task.name,
            "op": task.op,
            "inputs": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype.name, "scale": t.quant.kind if t.quant else None} for t in ins],
            "weights": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype.name, "scale": t.quant.kind if t.quant else None} for t in ws],
            "outputs": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype.name, "scale": t.quant.kind if t.quant else None} for t in outs],
            "requant": task.attrs["requant"].summary() if "requant" in task.attrs else None,
            "accumulator_bits": task.attrs["requant"].product_bits if "requant" in task.attrs else None,
            "macs": int(OPS[task.op].macs(task, graph)),
            "param_bytes": _param_bytes(graph, task),
            "source": task.source,
        })
    return out


def report(graph: Graph) -> Dict:
    r = rows(graph)
    return {
        "model": graph.name,
        "inputs": [{"name": n, "shape": list(graph.tensors[n].shape), "dtype": graph.tensors[n].dtype.name} for n in graph.inputs],
        "outputs": [{"name": n, "shape": list(graph.tensors[n].shape), "dtype": graph.tensors[n].dtype.name} for n in graph.outputs],
        "tasks": r,
        "totals": {"tasks": len(r), "macs": sum(x["macs"] for x in r), "param_bytes": sum(x["param_bytes"] for x in r)},
    }


def _shape(s) -> str:
    return "x".join(str(d) for d in s)


def _types(ts) -> str:
    return ",".join(t["dtype"] for t in ts) or "-"


def format_table(rep: Dict) -> str:
    head = ["#", "task", "op", "in shape", "out shape", "in", "weight", "out", "w scale", "MACs", "param B"]
    body = []
    for i, r in enumerate(rep["tasks"]):
        body.append([
            str(i), display_name(r["name"], 40), r["op"],
            " ".join(_shape(t["shape"]) for t in r["inputs"]) or "-",
            " ".join(_shape(t["shape"]) for t in r["outputs"]),
            _types(r["inputs"]), _types(r["weights"]), _types(r["outputs"]),
            (r["weights"][0]["scale"] if r["weights"] else "-"),
            f"{r['macs']:,}", f"{r['param_bytes']:,}",
        ])
    tot = rep["totals"]
    foot = ["", f"total: {tot['tasks']} tasks", "", "", "", "", "", "", "", f"{tot['macs']:,}", f"{tot['param_bytes']:,}"]
    widths = [max(len(row[i]) for row in [head, foot] + body) for i in range(len(head))]
    right = {0, 9, 10}

    def fmt(row):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    lines = [fmt(head), fmt(["-" * w for w in widths])] + [fmt(r) for r in body] + [fmt(["-" * w for w in widths]), fmt(foot)]
    ins = ", ".join(f"{display_name(x['name'])} {_shape(x['shape'])} {x['dtype']}" for x in rep["inputs"])
    outs = ", ".join(f"{display_name(x['name'])} {_shape(x['shape'])} {x['dtype']}" for x in rep["outputs"])
    lines.append(f"inputs: {ins}")
    lines.append(f"outputs: {outs}")
    lines.append("activation scales are per-tensor; 'w scale' is the weight quantization (per-channel or per-tensor)")
    return "\n".join(lines)
