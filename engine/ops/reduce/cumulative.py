"""Ops along one dimension's running order: cumsum, cumprod, logcumsumexp, diff.

cumsum's adjoint is the reversed cumulative sum, flip(cumsum(flip(grad))) as PyTorch's
reversed_cumsum (never sum - cumsum + grad: where the tail is small beside the total,
that difference cancels and loses the low digits). cumprod's gradient is
reversed_cumsum(grad * result) / x when x has no zeros; with zeros it is PyTorch's
exact O(n^2) form, products that leave each element out, with no division, so the
second derivative is exact as well. The CPU scans carry float32 and half in double,
rounding each output once, as PyTorch's CPU kernels (acc_type) do.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ..._tensor import filled
from ...backends.meta import MetaArray
from ...creation import tensor
from ...errors import DtypeNotImplementedError
from ...messages import scalar_type_name
from ...shapes import normalize_dim
from .._common import conj_of
from ..conversion import to
from ..pointwise.binary import ne, where
from ..pointwise.unary import (
    abs,  # noqa: A004
    exp,
    log,
)
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.diagonal import triu
from ..shape.indexing import slice  # noqa: A004
from ..shape.join import cat
from ..shape.rearrange import flip
from ..shape.view import transpose, unsqueeze
from .arithmetic import sum  # noqa: A004


def _scan_dtype(self, dtype):
    if dtype is not None:
        return dtypes.from_name(dtype).np if isinstance(dtype, str) else dtype.np
    return np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype


def _scan_meta(self, dim, dtype=None):
    normalize_dim(dim, self.ndim)
    return MetaArray(self.shape, _scan_dtype(self, dtype))


def _scan_kernel(name):
    def kernel(xp, self, dim, dtype):
        d = normalize_dim(dim, self.ndim)
        out_dtype = _scan_dtype(self, dtype)
        if self.ndim == 0:
            return self.astype(out_dtype)
        # NOTE: PyTorch's CPU scan carries the running value in acc_type (double for float and half,
        # complex<double> for complex64), rounding each output once; a float32 running value drifts from
        # its results along long rows
        if xp is np and out_dtype.kind == "f" and out_dtype.itemsize < 8:
            return getattr(xp, name)(self, axis=d, dtype=np.float64).astype(out_dtype)
        if xp is np and out_dtype == np.complex64:
            return getattr(xp, name)(self, axis=d, dtype=np.complex128).astype(out_dtype)
        return getattr(xp, name)(self, axis=d, dtype=out_dtype)
    return kernel


def _reverse_cumsum(t, dim):
    """out[i] = sum over j >= i of t[j] along dim (PyTorch's reversed_cumsum)."""
    return flip(cumsum(flip(t, [dim]), dim), [dim])


def _to_input_dtype(grad, self):
    return grad if grad.dtype == self.dtype else to(grad, dtype=self.dtype)


def _cumsum_grad(grad, self, dim):
    if self.ndim == 0:
        return _to_input_dtype(grad, self)
    return _to_input_dtype(_reverse_cumsum(grad, normalize_dim(dim, self.ndim)), self)


def _scan_samples(low=-2.0, high=2.0, zeros=False):
    def samples(op):
        out = [SampleInput("(3,4) dim 1", make_arg((3, 4), key=(op, 0), low=low, high=high), 1),
               SampleInput("(4,3)T dim 0", make_arg((4, 3), key=(op, 1), low=low, high=high, transposed=True), 0),
               SampleInput("(2,3,2) dim -2", make_arg((2, 3, 2), key=(op, 2), low=low, high=high), -2),
               SampleInput("0-d", make_arg((), key=(op, 3), low=low, high=high), 0)]
        if zeros:
            x = make_arg((3, 5), key=(op, 4), low=low, high=high, requires_grad=False).numpy().copy()
            x[0, 1] = 0.0                       # one zero
            x[1, 0] = x[1, 3] = 0.0             # two zeros in a row
            x[2, 4] = 0.0                       # a zero at the end
            out.append(SampleInput("zeros dim 1", tensor(x, dtype=dtypes.float64, requires_grad=True), 1))
        return out
    return samples


cumsum = defop(
    "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
    kernel=_scan_kernel("cumsum"), meta=_scan_meta, supports_complex=True,
    grads={"self": _cumsum_grad},
    samples=_scan_samples(), torch="torch.cumsum",
    doc="Running sums along dim; integer and bool inputs give int64 (or `dtype`).")


def _cumprod_grad(grad, self, dim, result):
    grad = _to_input_dtype(grad, self)
    if self.ndim == 0 or self.shape[normalize_dim(dim, self.ndim)] <= 1:
        return grad
    d = normalize_dim(dim, self.ndim)
    # PyTorch's cumprod_backward for complex: the same formulas on the conjugates of input and output
    self, result = conj_of(self), conj_of(result)
    if self._device.type == "meta" or not bool((self._data == 0).any()):
        return _reverse_cumsum(grad * _to_input_dtype(result, self), d) / self
    # NOTE: with zeros, PyTorch's exact formula (differentiable again, so second order is exact too):
    # grad_i = sum_{k>=i} grad_k * prod_{j<=k, j!=i} x_j, built as an (n, n) table per row, no division
    x, g = transpose(self, d, -1), transpose(grad, d, -1)
    n = x.shape[-1]
    square = filled((n, n), True, np.dtype(np.bool_), self._device)
    after = triu(square, 1)                                     # [i, k]: k > i
    from_i = cumprod(where(after, unsqueeze(x, -2), 1.0), -1)   # [i, k]: prod_{i<j<=k} x_j
    before_i = cat([filled(x.shape[:-1] + (1,), 1, x._data.dtype, x._device),
                    slice(cumprod(x, -1), -1, 0, n - 1)], -1)    # [i]: prod_{j<i} x_j
    omitted = unsqueeze(before_i, -1) * from_i                  # [i, k]: prod_{j<=k, j!=i} x_j
    rows = sum(where(triu(square), unsqueeze(g, -2) * omitted, 0.0), [-1])
    return transpose(rows, d, -1)


cumprod = defop(
    "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
    kernel=_scan_kernel("cumprod"), meta=_scan_meta, supports_complex=True,
    grads={"self": _cumprod_grad},
    samples=_scan_samples(low=0.5, high=1.5, zeros=True), torch="torch.cumprod",
    doc="Running products along dim; the gradient (and its gradient) is exact where the input has zeros.")


def _logcumsumexp_meta(self, dim):
    if self.dtype.kind != "f":
        raise DtypeNotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    normalize_dim(dim, self.ndim)
    return MetaArray(self.shape, self.dtype)


def _logcumsumexp_kernel(xp, self, dim):
    """log(cumsum(exp(x))) without overflow or underflow: a Hillis-Steele scan of logaddexp (log2(n)
    vectorised steps; CuPy has no logaddexp.accumulate, and one form keeps both backends alike)."""
    _logcumsumexp_meta(self, dim)
    if self.ndim == 0:
        return self.copy()
    out = xp.moveaxis(self, normalize_dim(dim, self.ndim), -1).copy()
    shift = 1
    while shift < out.shape[-1]:
        out[..., shift:] = xp.logaddexp(out[..., shift:], out[..., :-shift])
        shift *= 2
    return xp.ascontiguousarray(xp.moveaxis(out, -1, normalize_dim(dim, self.ndim)))


def _logcumsumexp_grad(grad, self, dim, result):
    """PyTorch's logcumsumexp_backward: the positive and negative parts of grad, each summed in log space
    by a reversed logcumsumexp (so nothing overflows), then exp'd back."""
    if self.ndim == 0 or grad.numel() == 0:
        return grad
    d = normalize_dim(dim, self.ndim)
    lowest = float(np.finfo(grad.dtype.np).min)
    log_abs = log(abs(grad))

    def part(log_grad):
        return exp(flip(logcumsumexp(flip(log_grad - result, [d]), d), [d]) + self)
    return part(where(grad > 0, log_abs, lowest)) - part(where(grad < 0, log_abs, lowest))


def _logcumsumexp_samples(op):
    spread = make_arg((2, 6), key=(op, 5), requires_grad=False).numpy() * 40.0   # exp() would overflow
    return _scan_samples(low=-3.0, high=3.0)(op)[:4] + [
        SampleInput("spread +-80 dim 1", tensor(spread, dtype=dtypes.float64, requires_grad=True), 1)]


logcumsumexp = defop(
    "logcumsumexp(Tensor self, int dim) -> Tensor",
    kernel=_logcumsumexp_kernel, meta=_logcumsumexp_meta,
    grads={"self": _logcumsumexp_grad},
    samples=_logcumsumexp_samples, torch="torch.logcumsumexp",
    doc="log(cumsum(exp(self), dim)), computed stably; floating-point inputs only.")


def _diff(self, n=1, dim=-1, prepend=None, append=None):
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, self.ndim)
    parts = []
    for other in (prepend, append):
        if other is not None and other.ndim != self.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, self, append) if t is not None]
        self = cat(parts, d)
    for _ in range(n):
        length = self.shape[d]
        if length == 0:
            break
        if self.dtype == dtypes.bool_:
            self = ne(slice(self, d, 1, length), slice(self, d, 0, length - 1))
        else:
            self = slice(self, d, 1, length) - slice(self, d, 0, length - 1)
    return self


diff = defop(
    "diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
    composite=_diff,
    samples=lambda op: [
        SampleInput("(5,)", make_arg((5,), key=(op, 0))),
        SampleInput("(3,4) n=2 dim 0", make_arg((4, 3), key=(op, 1), transposed=True), 2, 0),
        SampleInput("prepend, append", make_arg((2, 3), key=(op, 2)), 1, -1, make_arg((2, 1), key=(op, 3)),
                    make_arg((2, 2), key=(op, 4)))],
    torch="torch.diff",
    doc="n-th forward difference along dim (x[i+1] - x[i]), after concatenating prepend and append.")
