"""Unary elementwise math: sqrt, rsqrt, abs, sign, sin, cos.

sqrt, rsqrt, sin and cos are PyTorch's "unary float" ops (integer and bool inputs
compute in the default float); abs and sign keep the input's dtype.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..creation import zeros_like
from ..errors import DtypeNotImplementedError
from ..shapes import pointwise_meta
from .registry import defop
from .samples import positive_unary_samples, unary_samples

same_meta = pointwise_meta()


def _torch_dtype_name(np_dtype) -> str:
    """PyTorch's ScalarType name as its dispatch errors print it ('Long', 'Bool', 'Float')."""
    return {"bool": "Bool", "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
            "float64": "Double", "uint8": "Byte", "int8": "Char", "int16": "Short"}[dtypes.from_numpy(np_dtype).name]


def _abs_check(self):
    # NOTE: PyTorch's abs kernel is dispatched over numeric types only; a bool tensor has no abs
    if self.dtype == np.bool_:
        raise DtypeNotImplementedError(f"\"abs_cpu\" not implemented for '{_torch_dtype_name(self.dtype)}'")
    return self


def _sign_kernel(xp, self):
    # PyTorch's sign of a bool tensor is the tensor itself; NumPy has no bool loop for sign
    return self.copy() if self.dtype == np.bool_ else xp.sign(self)


sqrt = defop(
    "sqrt(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.sqrt(self), meta=same_meta, promote="float",
    grads={"self": lambda grad, result: grad / (2 * result)},
    array_grads={"self": lambda grad, result: grad / (2 * result)},
    samples=positive_unary_samples(), torch="torch.sqrt")

rsqrt = defop(
    "rsqrt(Tensor self) -> Tensor",
    kernel=lambda xp, self: (1 / xp.sqrt(self)).astype(self.dtype, copy=False), meta=same_meta, promote="float",
    grads={"self": lambda grad, result: -0.5 * grad * result * result * result},
    samples=positive_unary_samples(), torch="torch.rsqrt")

abs = defop(  # noqa: A001 — PyTorch's name
    "abs(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.abs(_abs_check(self)),
    meta=lambda self: same_meta(_abs_check(self)),
    grads={"self": lambda grad, self: grad * sign(self)},
    samples=unary_samples(away_from=0.0), torch="torch.abs")

sign = defop(
    "sign(Tensor self) -> Tensor",
    kernel=_sign_kernel, meta=same_meta,
    # NOTE: the derivative is 0 everywhere but at 0, where PyTorch also says 0 (not a delta)
    grads={"self": lambda grad: zeros_like(grad)},
    samples=unary_samples(away_from=0.0), torch="torch.sign")

sin = defop(
    "sin(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.sin(self), meta=same_meta, promote="float",
    grads={"self": lambda grad, self: grad * cos(self)},
    array_grads={"self": lambda grad, self: grad * np.cos(self)},
    samples=unary_samples(low=-4.0, high=4.0), torch="torch.sin")

cos = defop(
    "cos(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.cos(self), meta=same_meta, promote="float",
    grads={"self": lambda grad, self: grad * -sin(self)},
    array_grads={"self": lambda grad, self: grad * -np.sin(self)},
    samples=unary_samples(low=-4.0, high=4.0), torch="torch.cos")
