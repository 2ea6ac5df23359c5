"""softmax and log_softmax (ATen's SoftMax) with their `_*_backward_data` ops, and
softmin (softmax of the negation, as PyTorch writes it).

Backward formulas are agrad ops, so every gradient here is differentiable again;
where PyTorch has a dedicated backward op (`_softmax_backward_data`) it is an op
here too, with its own derivative, so double backward is named as PyTorch names it.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...backends.meta import MetaArray
from ...errors import DtypeNotImplementedError, ShapeError
from ...messages import scalar_type_name, sizes
from ...shapes import normalize_dim
from .._common import checked
from ..pointwise.unary import exp
from ..reduce.arithmetic import sum  # noqa: A004
from ..registry import defop
from ..samples import SampleInput, make_arg


def _softmin(self, dim, dtype):
    if dim is None:
        # F.softmin's implicit dim (deprecated there): 0 for 0-, 1- and 3-d inputs, else 1
        dim = 0 if self.ndim in (0, 1, 3) else 1
    return softmax(-self, dim, dtype)


softmin = defop(
    "softmin(Tensor self, int? dim=None, *, ScalarType? dtype=None) -> Tensor",
    composite=_softmin,
    samples=lambda op: [SampleInput("(3,4) dim=1", make_arg((3, 4), key=(op, 0)), 1),
                        SampleInput("(2,3,2) dim=-1 T", make_arg((2, 3, 2), key=(op, 1), transposed=True), -1),
                        SampleInput("(5,) implicit", make_arg((5,), key=(op, 2))),
                        SampleInput("float32->float64", make_arg((3, 4), key=(op, 3), dtype=dtypes.float32,
                                                                 requires_grad=False), 0, dtype="float64")],
    torch="lambda self, dim=None, dtype=None: torch.nn.functional.softmin(self, dim, "
          "dtype=getattr(torch, dtype) if dtype else None)",
    doc="softmax(-x, dim).")


def _scalar_type(dtype):
    if dtype is None:
        return None
    return dtypes.from_name(dtype).np if isinstance(dtype, str) else dtype.np


# ---- softmax, log_softmax ------------------------------------------------------------------------

def _softmax_input(self, dim, dtype, name):
    out_dtype = _scalar_type(dtype) or self.dtype
    d = normalize_dim(dim, self.ndim)
    if np.dtype(out_dtype).kind != "f":
        last = self.ndim == 0 or d == self.ndim - 1
        raise DtypeNotImplementedError(f'"{name}_{"lastdim_" if last else ""}kernel_impl" not implemented for '
                                       f"'{scalar_type_name(out_dtype)}'")
    return out_dtype, d


def _softmax_meta(self, dim, dtype=None):
    out_dtype, _ = _softmax_input(self, dim, dtype, "softmax")
    return MetaArray(self.shape, out_dtype)


def _log_softmax_meta(self, dim, dtype=None):
    out_dtype, _ = _softmax_input(self, dim, dtype, "log_softmax")
    return MetaArray(self.shape, out_dtype)


def _shifted(xp, self, dim, dtype, name):
    out_dtype, d = _softmax_input(self, dim, dtype, name)
    x = self.astype(out_dtype, copy=False)
    if x.ndim == 0:
        x = x.reshape(1)
    # NOTE: subtracting the max keeps exp() from overflowing (PyTorch's stable softmax)
    m = xp.max(x, axis=d, keepdims=True) if x.size else x
    shifted = x - m
    return shifted, d


def _softmax_kernel(xp, self, dim, dtype=None):
    shifted, d = _shifted(xp, self, dim, dtype, "softmax")
    e = xp.exp(shifted)
    return (e / xp.sum(e, axis=d, keepdims=True)).reshape(self.shape)


def _log_softmax_kernel(xp, self, dim, dtype=None):
    shifted, d = _shifted(xp, self, dim, dtype, "log_softmax")
    return (shifted - xp.log(xp.sum(xp.exp(shifted), axis=d, keepdims=True))).reshape(self.shape)


def _keep_sum(x, dim):
    return sum(x, [dim], True)


def _softmax_double_backward(grad, grad_output, output, dim):
    return grad * (grad_output - _keep_sum(grad_output * output, dim)) - grad_output * _keep_sum(grad * output, dim)


def _same_shape_meta(grad_output, output, dim):
    if tuple(grad_output.shape) != tuple(output.shape):
        raise ShapeError(f"grad_output of size {sizes(grad_output.shape)} does not match output of size "
                         f"{sizes(output.shape)}")
    normalize_dim(dim, output.ndim)
    return MetaArray(output.shape, output.dtype)


def _softmax_bwd_kernel(xp, grad_output, output, dim):
    d = normalize_dim(dim, output.ndim)
    if output.ndim == 0:
        return grad_output * output - grad_output * output * output
    return output * (grad_output - xp.sum(grad_output * output, axis=d, keepdims=True))


def _log_softmax_bwd_kernel(xp, grad_output, output, dim):
    d = normalize_dim(dim, output.ndim)
    if output.ndim == 0:
        return grad_output - xp.exp(output) * grad_output
    return grad_output - xp.exp(output) * xp.sum(grad_output, axis=d, keepdims=True)


def _backward_data_samples(low, high):
    def samples(op):
        out = make_arg((3, 4), key=(op, "y"), low=low, high=high)
        return [SampleInput("(3,4) dim=1", make_arg((3, 4), key=(op, "g")), out, 1),
                SampleInput("(3,4) dim=0", make_arg((3, 4), key=(op, "g0")), out, 0)]
    return samples


_softmax_backward_data = defop(
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
    kernel=checked(_same_shape_meta, _softmax_bwd_kernel), meta=_same_shape_meta, promote="same",
    grads={"grad_output": lambda grad, output, dim: _softmax_backward_data(grad, output, dim),
           "output": _softmax_double_backward},
    samples=_backward_data_samples(0.05, 0.5),
    torch="lambda g, y, dim: torch.ops.aten._softmax_backward_data(g, y, dim, y.dtype)",
    doc="The gradient of softmax from its output: output * (grad_output - sum(grad_output * output, dim)).")

_log_softmax_backward_data = defop(
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
    kernel=checked(_same_shape_meta, _log_softmax_bwd_kernel), meta=_same_shape_meta, promote="same",
    grads={"grad_output": lambda grad, output, dim: grad - _keep_sum(grad * exp(output), dim),
           "output": lambda grad, grad_output, output, dim: -(grad * exp(output)) * _keep_sum(grad_output, dim)},
    samples=_backward_data_samples(-3.0, -0.5),
    torch="lambda g, y, dim: torch.ops.aten._log_softmax_backward_data(g, y, dim, y.dtype)",
    doc="The gradient of log_softmax from its output: grad_output - exp(output) * sum(grad_output, dim).")


def _softmax_samples(op):
    x = make_arg((3, 4), key=(op, 0))
    return [SampleInput("(3,4) dim=1", x, 1),
            SampleInput("(3,4) dim=0", x, 0),
            SampleInput("0-d", make_arg((), key=(op, 1)), 0),
            SampleInput("(2,3,2)T dim=-1", make_arg((2, 3, 2), key=(op, 2), transposed=True), -1),
            SampleInput("float32->float64", make_arg((2, 3), key=(op, 3), dtype=dtypes.float32,
                                                                  requires_grad=False), 1,
                        dtype="float64"),
            SampleInput("large values", make_arg((2, 3), key=(op, 4), low=50.0, high=60.0), 1)]


softmax = defop(
    "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    kernel=_softmax_kernel, meta=_softmax_meta,
    grads={"self": lambda grad, result, dim: _softmax_backward_data(grad, result, dim)},
    samples=_softmax_samples,
    torch="lambda x, dim, dtype=None: torch.softmax(x, dim, dtype=getattr(torch, dtype) if dtype else None)",
    doc="exp(x) / sum(exp(x), dim), computed after subtracting the max (stable).")

log_softmax = defop(
    "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    kernel=_log_softmax_kernel, meta=_log_softmax_meta,
    grads={"self": lambda grad, result, dim: _log_softmax_backward_data(grad, result, dim)},
    samples=_softmax_samples,
    torch="lambda x, dim, dtype=None: torch.log_softmax(x, dim, dtype=getattr(torch, dtype) if dtype else None)",
    doc="x - logsumexp(x, dim), computed stably.")
