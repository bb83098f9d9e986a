from .types import IntType, Quant
from .graph import Graph, Task, Tensor
from .requant import Requant

__all__ = ["IntType", "Quant", "Graph", "Task", "Tensor", "Requant"]
