"""The stages in order, readable top to bottom: load -> (schedule -> emit -> verify: later issues).

load:    ONNX file -> integer IR (frontend)
inputs:  float input (file or seeded random) -> integers through the model's input quantizer
golden:  IR + integer inputs -> every tensor (golden)
compare: golden vs the float ONNX model (verify.compare)
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from . import golden
from .errors import HlsgenError
from .frontend import load as load_ir
from .frontend import load_model
from .ir import Graph


def load(path, input_shapes: Optional[Dict[str, tuple]] = None) -> Graph:
    return load_ir(path, input_shapes)


def float_inputs(graph: Graph, specs: List[str], seed: int) -> Dict[str, np.ndarray]:
    """Float inputs by IR input name: from .npy files (`X.npy` or `name=X.npy`) or seeded N(0,1)."""
    onnx_names = {graph.input_quantizers[n]["onnx_input"]: n for n in graph.inputs}
    given: Dict[str, np.ndarray] = {}
    for spec in specs or []:
        name, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        if not name:
            if len(graph.inputs) != 1:
                raise HlsgenError(f"--input {spec}: the model has {len(graph.inputs)} inputs ({', '.join(onnx_names)}); write --input NAME=FILE.npy")
            name = graph.input_quantizers[graph.inputs[0]]["onnx_input"]
        if name not in onnx_names:
            raise HlsgenError(f"--input {spec}: the model has no input {name!r}; its inputs are {', '.join(onnx_names)}")
        try:
            arr = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise HlsgenError(f"--input {spec}: cannot read {path} as a .npy array ({type(exc).__name__})") from None
        ir = onnx_names[name]
        want = graph.tensors[ir].shape
        if tuple(arr.shape) != tuple(want):
            raise HlsgenError(f"--input {spec}: array shape {arr.shape} does not match input {name!r} shape {want}")
        if arr.dtype.kind not in "fiu":
            raise HlsgenError(f"--input {spec}: array dtype {arr.dtype} is not numeric")
        given[ir] = arr if graph.input_quantizers[ir].get("index") else arr.astype(np.float32)
    rs = np.random.RandomState(seed)
    out = {}
    for n in graph.inputs:
        qi = graph.input_quantizers[n]
        if qi.get("index"):
            # token ids / positions: seeded integers over the table's rows
            out[n] = given[n].astype(np.int64) if n in given else rs.randint(qi["lo"], qi["hi"] + 1, graph.tensors[n].shape).astype(np.int64)
            continue
        out[n] = given[n] if n in given else rs.standard_normal(graph.tensors[n].shape).astype(np.float32)
    return out


def quantize_inputs(graph: Graph, floats: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Apply each input's quantizer exactly as the ONNX graph does (float32 divide, round half
    to even, clamp). This is the boundary into the integer world; no float after it."""
    out = {}
    for n in graph.inputs:
        t = graph.tensors[n]
        qi = graph.input_quantizers[n]
        if qi.get("index"):
            ids = np.asarray(floats[n]).astype(np.int64)
            if ids.size and (ids.min() < qi["lo"] or ids.max() > qi["hi"]):
                raise HlsgenError(f"input {qi['onnx_input']!r}: indices must lie in [{qi['lo']}, {qi['hi']}], "
                                  f"got [{ids.min()}, {ids.max()}]")
            out[n] = ids
            continue
        q = np.rint(np.float32(floats[n]) / np.float32(t.quant.scale)) + int(t.quant.zero_point)
        out[n] = np.clip(q, qi["lo"], qi["hi"]).astype(np.int64)
    return out


def run_golden(graph: Graph, int_inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    return golden.run(graph, int_inputs)


def compare(graph: Graph, model_path, floats, ints):
    """(report, golden values): golden vs the float ONNX model, see verify.compare."""
    from .verify.compare import compare as _compare

    return _compare(graph, load_model(model_path), floats, ints)


def parse_shapes(specs: List[str]) -> Dict[str, tuple]:
    shapes = {}
    for spec in specs or []:
        name, sep, dims = spec.rpartition("=")
        try:
            if not sep or not name:
                raise ValueError
            shapes[name] = tuple(int(d) for d in dims.split(","))
            if any(d <= 0 for d in shapes[name]):
                raise ValueError
        except ValueError:
            raise HlsgenError(f"--shape {spec!r}: expected NAME=D0,D1,... with positive integers, e.g. --shape input=1,3,224,224") from None
    return shapes


def write_atomic(path, write) -> None:
    """Write through a temporary file in the same folder, renamed on success only.
    `write(f)` receives an open binary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    try:
        with open(tmp, "wb") as f:
            write(f)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
