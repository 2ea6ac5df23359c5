"""Helpers that several op families share: `checked` (a kernel that runs its Meta rule
first) and PyTorch's "not implemented for" dtype errors (`_float_only`, `_torch_dtype_name`).
Not an op family: it declares no op."""
from __future__ import annotations

from .. import dtypes
from ..errors import DtypeNotImplementedError


def _torch_dtype_name(np_dtype) -> str:
    """PyTorch's ScalarType name as its dispatch errors print it ('Long', 'Bool', 'Float')."""
    return {"bool": "Bool", "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
            "float64": "Double", "uint8": "Byte", "int8": "Char", "int16": "Short"}[dtypes.from_numpy(np_dtype).name]


def _float_only(kernel_name, *arrays):
    for a in arrays:
        if a.dtype.kind != "f":
            raise DtypeNotImplementedError(f"\"{kernel_name}\" not implemented for '{_torch_dtype_name(a.dtype)}'")


def checked(meta_rule, kernel):
    """A kernel that runs the Meta rule first: the same checks and messages on every backend."""
    def run(xp, *arrays):
        meta_rule(*arrays)
        return kernel(xp, *arrays)
    return run
