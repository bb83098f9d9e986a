"""ONNX -> integer IR."""
from __future__ import annotations

from typing import Dict, Optional

from ..ir import Graph
from .loader import load_model
from .lower import SUPPORTED_OPS, lower


def load(path, input_shapes: Optional[Dict[str, tuple]] = None) -> Graph:
    """Read a quantized ONNX file and lower it to the integer IR."""
    return lower(load_model(path), input_shapes, consume=True)


__all__ = ["load", "load_model", "lower", "SUPPORTED_OPS"]
