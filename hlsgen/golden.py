"""The golden model: executes the integer IR with NumPy integer arrays only.

Every later stage (C simulation, RTL simulation) must match this bit for bit.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np

from .ir import Graph
from .ops import OPS


def run(
    graph: Graph,
    inputs: Dict[str, np.ndarray],
    override: Optional[Callable[[str], Optional[np.ndarray]]] = None,
) -> Dict[str, np.ndarray]:
    """Execute every task in order; returns every tensor's value (integers, int64).

    `override(name)` may return a value to use instead of the computed one when a task reads
    tensor `name` (layer-by-layer comparison feeds each task the float model's own inputs).
    """
    values: Dict[str, np.ndarray] = {}
    for name in graph.inputs:
        t = graph.tensors[name]
        x = np.asarray(inputs[name])
        if tuple(x.shape) != tuple(t.shape):
            raise ValueError(f"input {name}: shape {x.shape}, expected {t.shape}")
        if x.min(initial=t.dtype.min) < t.dtype.min or x.max(initial=t.dtype.max) > t.dtype.max:
            raise ValueError(f"input {name}: values outside {t.dtype}")
        values[name] = x.astype(np.int64)
    for name, t in graph.tensors.items():
        if t.is_const:
            values[name] = t.data
    for task in graph.tasks:
        args = []
        for n in task.inputs:
            v = override(n) if (override is not None and not graph.tensors[n].is_const) else None
            args.append(values[n] if v is None else v)
        outs = OPS[task.op].golden(task, graph, args)
        for n, v in zip(task.outputs, outs):
            t = graph.tensors[n]
            if tuple(v.shape) != tuple(t.shape):
                raise AssertionError(f"golden of {task.name} ({task.op}) gave shape {v.shape} for {n}, IR says {t.shape}")
            if v.size and (v.min() < t.dtype.min or v.max() > t.dtype.max):
                raise AssertionError(f"golden of {task.name} ({task.op}) left {t.dtype} for {n}")
            values[n] = v
    return values
