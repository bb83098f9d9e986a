"""Op kinds of the integer IR. Importing this package registers all of them in OPS."""
from .base import OPS, OpKind
from . import conv, deform, linear, eltwise, pool, layout, transformer  # noqa: F401  (registration)

__all__ = ["OPS", "OpKind"]
