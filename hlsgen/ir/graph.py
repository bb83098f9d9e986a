"""The integer IR: tensors, tasks and the graph that holds them. Plain data, no ONNX."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from .types import IntType, Quant


@dataclass
class Tensor:
    """An integer tensor. Constants (weights) carry `data`; activations do not.

    `origin` names the ONNX tensor whose float value equals quant.dequantize(this), so the
    float model can be compared against the golden tensor by tensor.
    """

    name: str
    shape: Tuple[int, ...]
    dtype: IntType
    quant: Optional[Quant] = None
    data: Optional[np.ndarray] = None
    origin: Optional[str] = None

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class Task:
    """One operation of the integer graph.

    `op` keys into hlsgen.ops (each op kind owns its shape rule, golden and cost).
    `attrs` holds op parameters; a requantizing op keeps its `Requant` in attrs["requant"].
    `source` lists the ONNX nodes this task was lowered from, for messages and reports.
    """

    name: str
    op: str
    inputs: List[str]
    outputs: List[str]
    attrs: Dict = field(default_factory=dict)
    source: List[str] = field(default_factory=list)


@dataclass
class Graph:
    tensors: Dict[str, Tensor] = field(default_factory=dict)
    tasks: List[Task] = field(default_factory=list)
    inputs: List[str] = field(default_factory=list)
    outputs: List[str] = field(default_factory=list)
    name: str = "model"
    # IR input name -> {"onnx_input", "lo", "hi", "node"}: how the float input is quantized
    # on entry (scale and zero point are the input tensor's quant)
    input_quantizers: Dict[str, Dict] = field(default_factory=dict)
    # ONNX outputs that are constants (e.g. a QuantTensor's scale exported by Brevitas)
    constant_outputs: List[str] = field(default_factory=list)

    def add_tensor(self, t: Tensor) -> Tensor:
        if t.name in self.tensors:
            raise ValueError(f"duplicate tensor name {t.name!r}")
        self.tensors[t.name] = t
        return t

    def producer(self, tensor_name: str) -> Optional[Task]:
        for task in self.tasks:
            if tensor_name in task.outputs:
                return task
        return None

    def consumers(self, tensor_name: str) -> List[Task]:
        return [t for t in self.tasks if tensor_name in t.inputs]

    def activation_inputs(self, task: Task) -> List[Tensor]:
        return [self.tensors[n] for n in task.inputs if not self.tensors[n].is_const]

    def const_inputs(self, task: Task) -> List[Tensor]:
        return [self.tensors[n] for n in task.inputs if self.tensors[n].is_const]

    def unique_name(self, base: str) -> str:
        name, i = base, 1
        while name in self.tensors:
            i += 1
            name = f"{base}_{i}"
        return name

    def prune(self) -> None:
        """Drop tasks and tensors that do not contribute to an output."""
        live = set(self.outputs)
        kept: List[Task] = []
        for task in reversed(self.tasks):
            if any(o in live for o in task.outputs):
                kept.append(task)
                live.update(task.inputs)
        self.tasks = list(reversed(kept))
        live.update(self.inputs)
        self.tensors = {k: v for k, v in self.tensors.items() if k in live}
