"""The engine's typed errors: the kind of a problem is its type, never its text.

Each keeps PyTorch's message and subclasses the exception PyTorch raises, so code
written for PyTorch (`except RuntimeError`, `except IndexError`) works unchanged;
callers that classify (the graph checker's AG023/AG024, the runner's AG04x codes)
test the type.
"""
from __future__ import annotations

__all__ = ["ShapeError", "DimensionError", "DtypeError", "DtypeNotImplementedError", "FreedGraphError",
           "UnsupportedOnDeviceError", "AllocationError", "LinAlgError"]


class ShapeError(RuntimeError):
    """Sizes that do not fit together: broadcasting, reshape, matmul, cat, conv, …"""


class DimensionError(IndexError):
    """A dim argument outside the tensor's dimensions (PyTorch raises IndexError)."""


class DtypeError(RuntimeError):
    """A dtype the op does not take, or operands whose dtypes must match and do not."""


class DtypeNotImplementedError(DtypeError, NotImplementedError):
    """PyTorch's `"gelu_cpu" not implemented for 'Long'`: a kernel with no loop for this dtype
    (a NotImplementedError in PyTorch, itself a RuntimeError)."""


class FreedGraphError(RuntimeError):
    """Backward through a graph whose saved tensors an earlier pass freed (no retain_graph)."""


class UnsupportedOnDeviceError(NotImplementedError):
    """An op its device's backend declares it cannot run (Backend.refusal): `dask` cannot make
    an output whose shape depends on the input's values, for one."""


class AllocationError(RuntimeError):
    """An array refused before it was allocated (agrad._allocation): more bytes than this machine has,
    or than a storage can number. PyTorch's CPU allocator raises a RuntimeError with these words."""


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): LAPACK reported a matrix it cannot factor or
    invert (singular, not positive-definite), from the ops that check its info (inv, solve, cholesky)."""
