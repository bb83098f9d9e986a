"""Load an ONNX file defensively: every problem becomes one HlsgenError line."""
from __future__ import annotations

import os
from pathlib import Path

import onnx
from onnx import external_data_helper

from ..errors import HlsgenError

MIN_OPSET, MAX_OPSET = 13, 22


def load_model(path: str | os.PathLike) -> onnx.ModelProto:
    path = Path(path)
    if not path.is_file():
        raise HlsgenError(f"{path}: no such file")
    data = path.read_bytes()
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as exc:  # protobuf raises DecodeError, sometimes RuntimeError
        raise HlsgenError(f"{path}: not a readable ONNX model ({type(exc).__name__}): the file is truncated or not ONNX; re-export it") from None
    if not model.HasField("graph") or (len(model.graph.node) == 0 and len(model.graph.output) == 0):
        raise HlsgenError(f"{path}: not an ONNX model (no graph found); pass the .onnx file Brevitas exported")
    _check_opset(path, model)
    _load_external_data(path, model)
    return model


def _check_opset(path: Path, model: onnx.ModelProto) -> None:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx") and not (MIN_OPSET <= imp.version <= MAX_OPSET):
            raise HlsgenError(
                f"{path}: ONNX opset {imp.version} is not supported (supported {MIN_OPSET}..{MAX_OPSET}); "
                f"re-export with opset_version between {MIN_OPSET} and {MAX_OPSET}"
            )


def _all_tensors(graph):
    """Initializers and Constant-node tensors, subgraphs included."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("g"):
                yield from _all_tensors(attr.g)
            for sub in attr.graphs:
                yield from _all_tensors(sub)


def _load_external_data(path: Path, model: onnx.ModelProto) -> None:
    base = path.parent.resolve()
    external = [t for t in _all_tensors(model.graph) if external_data_helper.uses_external_data(t)]
    for t in external:
        info = {e.key: e.value for e in t.external_data}
        location = info.get("location", "")
        target = (base / location).resolve()
        if os.path.isabs(location) or base not in target.parents:
            raise HlsgenError(f"initializer {t.name!r}: external data location {location!r} points outside the model's folder; keep data files beside the .onnx file")
        if not target.is_file():
            raise HlsgenError(f"initializer {t.name!r}: external data file {location!r} not found next to {path.name}; copy it into {base}")
        length = int(info.get("length", "-1")) if info.get("length") else None
        offset = int(info.get("offset", "0") or 0)
        if length is not None and offset + length > target.stat().st_size:
            raise HlsgenError(f"initializer {t.name!r}: external data file {location!r} is shorter than the model says ({offset}+{length} bytes); re-export it")
    if external:
        try:
            external_data_helper.load_external_data_for_model(model, str(base))
        except Exception as exc:
            raise HlsgenError(f"{path}: cannot read external data ({exc}); re-export the model") from None
