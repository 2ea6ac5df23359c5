"""Distances (ATen's Distance): cdist and dist, own kernels with derivatives.yaml's formulas, and
cosine_similarity, pairwise_distance and pdist, composites
written as PyTorch writes them, so they record the same nodes (pdist's last node is the norm
of the pairs' differences, where PyTorch's is its kernel's, PdistBackward0).
"""
from __future__ import annotations

import math

import numpy as np

from ... import creation, dtypes
from ...backends.meta import MetaArray
from ...messages import scalar_type_name
from ...shapes import broadcast_shapes
from ..conversion import detach, to
from ..pointwise.binary import clamp_min, where
from ..reduce.arithmetic import (
    _norm_grad,
    _norm_kernel,
    _norm_meta,
    norm,
    sum,  # noqa: A004
)
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.advanced_indexing import index_select
from ..shape.view import expand, reshape, view

# ---- distances ------------------------------------------------------------------------------


def _cosine_similarity(x1, x2, dim, eps):
    common = dtypes.result_type([x1._data, x2._data])
    if common.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_type_name(common)}")
    common = dtypes.from_numpy(common)
    # as ATen: integer inputs are converted to the common dtype first
    x1 = x1 if x1.dtype == common else to(x1, dtype=common)
    x2 = x2 if x2.dtype == common else to(x2, dtype=common)
    shape = broadcast_shapes(x1.shape, x2.shape)
    if tuple(x1.shape) != tuple(shape):
        x1 = expand(x1, list(shape))
    if tuple(x2.shape) != tuple(shape):
        x2 = expand(x2, list(shape))
    # As ATen: each input divided by its own norm, the norms clamped at eps without recording the clamp
    # (PyTorch clamps a clone in place under no_grad): the gradient flows as through the unclamped norm
    n1 = norm(x1, 2, [dim], True)
    n2 = norm(x2, 2, [dim], True)
    n1 = n1 + detach(clamp_min(n1, eps) - n1)
    n2 = n2 + detach(clamp_min(n2, eps) - n2)
    return sum((x1 / n1) * (x2 / n2), [dim])


cosine_similarity = defop(
    "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor",
    composite=_cosine_similarity,
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1))),
        SampleInput("broadcast dim=-1", make_arg((2, 1, 4), key=(op, 2)), make_arg((3, 4), key=(op, 3)), -1),
        SampleInput("(5,) dim=0", make_arg((5,), key=(op, 4)), make_arg((5,), key=(op, 5)), 0)],
    torch="torch.nn.functional.cosine_similarity",
    doc="<x1, x2> / (max(|x1|, eps) max(|x2|, eps)) along dim, the inputs broadcast.")


def _pairwise_distance(x1, x2, p, eps, keepdim):
    innermost = max(x1.ndim, x2.ndim) - 1
    return norm(x1 - x2 + eps, p, [innermost], keepdim)


pairwise_distance = defop(
    "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor",
    composite=_pairwise_distance,
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1))),
        SampleInput("p=1 keepdim broadcast", make_arg((3, 4), key=(op, 2)), make_arg((4,), key=(op, 3)), 1.0,
                    keepdim=True),
        SampleInput("(5,) p=3", make_arg((5,), key=(op, 4)), make_arg((5,), key=(op, 5)), 3.0),
        SampleInput("0-d", make_arg((), key=(op, 6)), make_arg((), key=(op, 7)))],
    torch="torch.nn.functional.pairwise_distance",
    doc="The p-norm of x1 - x2 + eps over the last dimension.")


# ---- pdist ----------------------------------------------------------------------------------

def _pdist(input, p):
    # ATen's pdist checks; its kernel (_pdist_forward) is the p-norm of each pair's difference
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    first, second = np.triu_indices(input.shape[0], 1)
    pairs = (index_select(input, 0, creation.tensor(first, dtype="int64", device=input.device))
             - index_select(input, 0, creation.tensor(second, dtype="int64", device=input.device)))
    return norm(pairs, p, [1])


pdist = defop(
    "pdist(Tensor input, float p=2) -> Tensor",
    composite=_pdist, gradgrad=False,
    samples=lambda op: [
        SampleInput("(4,3)", make_arg((4, 3), key=(op, 0))),
        SampleInput("(5,2) p=1", make_arg((5, 2), key=(op, 1)), 1.0),
        SampleInput("(3,4) p=3.5", make_arg((3, 4), key=(op, 2)), 3.5),
        SampleInput("(3,2) p=inf", make_arg((3, 2), key=(op, 3)), float("inf")),
        SampleInput("(1,3) no pairs", make_arg((1, 3), key=(op, 4)))],
    torch="torch.nn.functional.pdist",
    doc="The p-norm distance between each pair of rows i < j of an (N, M) input, as one (N (N - 1) / 2,) vector "
        "in row-major order of the pairs.")


# ---- cdist ----------------------------------------------------------------------------------
# ATen's cdist (Distance.cpp): p = 2 with compute_mode 1, or 0 and more than 25 rows, goes the
# matrix-product way (_euclidean_dist, whose backward autograd composes); every other case is
# _cdist_forward's direct kernel, whose backward is _cdist_backward's (not differentiable again).

def _cdist_checks(x1, x2):
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")


def _cdist_impl_checks(x1, x2, p, compute_mode):
    for name, x in (("X1", x1), ("X2", x2)):
        dt = getattr(x.dtype, "np", x.dtype)          # (a Tensor's in the composite, an array's in the kernel)
        if dt.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {scalar_type_name(dt)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = 0 if compute_mode is None else compute_mode
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    return mode


def _uses_mm(p, mode, r1, r2):
    return p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))


def _cdist_shape(x1, x2):
    return tuple(broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))) + (x1.shape[-2], x2.shape[-2])


def _pair_differences(xp, x1, x2):
    return x1[..., :, None, :] - x2[..., None, :, :]


def _cdist_kernel(xp, x1, x2, p, compute_mode):
    _cdist_checks(x1, x2)
    _cdist_impl_checks(x1, x2, p, compute_mode)
    shape = _cdist_shape(x1, x2)
    if math.prod(shape) == 0 or x1.shape[-1] == 0:
        return xp.zeros(shape, dtype=x1.dtype)
    diff = xp.abs(_pair_differences(xp, x1, x2))
    if p == 0:
        out = xp.count_nonzero(diff, axis=-1).astype(x1.dtype)
    elif p == 1:
        out = diff.sum(-1)
    elif p == 2:
        out = xp.sqrt((diff * diff).sum(-1))
    elif math.isinf(p):
        out = diff.max(-1)
    else:
        out = (diff ** p).sum(-1) ** (1.0 / p)
    return xp.ascontiguousarray(xp.broadcast_to(out, shape)).astype(x1.dtype, copy=False)


def _cdist_meta(x1, x2, p, compute_mode):
    _cdist_checks(x1, x2)
    _cdist_impl_checks(x1, x2, p, compute_mode)
    return MetaArray(_cdist_shape(x1, x2), x1.dtype)


def _cdist_backward(grad, x1, x2, p, dist):
    """ATen's cdist_backward kernel, per pair of rows, written with agrad ops: the derivative of
    ‖x1_i - x2_j‖_p with respect to x1_i, 0 where the distance is 0 (and at p < 1 where a
    coordinate's difference is)."""
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    grad, dist = grad.unsqueeze(-1), dist.unsqueeze(-1)
    if p == 0:
        return sum(diff * 0 * grad, [-2])
    if p == 1:
        term = grad * diff.sign()
    elif p == 2:
        term = where(dist == 0, 0.0, grad * diff / dist)
    elif math.isinf(p):
        term = grad * diff.sign() * (diff.abs() == dist)
    elif p < 2:
        zero = (dist == 0) | ((diff == 0) & (p < 1))
        term = where(zero, 0.0, diff.sign() * diff.abs().pow(p - 1) * grad / dist.pow(p - 1))
    else:
        term = where(dist == 0, 0.0, diff * diff.abs().pow(p - 2) * grad / dist.pow(p - 1))
    return sum(term, [-2])


_cdist_forward = defop(
    "_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
    kernel=_cdist_kernel, meta=_cdist_meta,
    grads={"x1": lambda grad, x1, x2, p, result: _cdist_backward(grad, x1, x2, p, result),
           "x2": lambda grad, x1, x2, p, result: _cdist_backward(grad.mT, x2, x1, p, result.mT)},
    backward_name="CdistBackward0", gradgrad=False,
    samples=lambda op: [
        SampleInput("(3,4)x(5,4) p=2", make_arg((3, 4), key=(op, 0)), make_arg((5, 4), key=(op, 1)), 2.0, None),
        SampleInput("p=1", make_arg((3, 2), key=(op, 2)), make_arg((2, 2), key=(op, 3)), 1.0, None),
        SampleInput("p=3 batched", make_arg((2, 3, 2), key=(op, 4)), make_arg((4, 2), key=(op, 5)), 3.0, None)],
    torch="torch.ops.aten._cdist_forward",
    doc="The p-norm distance between each row of x1 and each row of x2 (batch dims broadcast), directly.")


def _euclidean_dist_kernel(xp, x1, x2):
    # as ATen's: one product of [-2·x1, |x1|², 1] and [x2, 1, |x2|²], clamped at 0, square-rooted
    n1 = (x1 * x1).sum(-1, keepdims=True)
    n2 = (x2 * x2).sum(-1, keepdims=True)
    a = xp.concatenate([x1 * -2, n1, xp.ones_like(n1)], -1)
    b = xp.concatenate([x2, xp.ones_like(n2), n2], -1)
    return xp.sqrt(xp.maximum(xp.matmul(a, xp.swapaxes(b, -1, -2)), 0)).astype(x1.dtype, copy=False)


def _euclidean_dist_ratio(grad, result):
    return where(result == 0, 0.0, grad / result)


_euclidean_dist = defop(
    "_euclidean_dist(Tensor x1, Tensor x2) -> Tensor",
    kernel=_euclidean_dist_kernel,
    meta=lambda x1, x2: MetaArray(_cdist_shape(x1, x2), x1.dtype),
    grads={"x1": lambda grad, x1, x2, result: (x1 * sum(_euclidean_dist_ratio(grad, result), [-1], True)
                                                - _euclidean_dist_ratio(grad, result) @ x2),
           "x2": lambda grad, x1, x2, result: (x2 * sum(_euclidean_dist_ratio(grad, result), [-2]).unsqueeze(-1)
                                                - _euclidean_dist_ratio(grad, result).mT @ x1)},
    samples=lambda op: [
        SampleInput("(3,4)x(5,4)", make_arg((3, 4), key=(op, 0)), make_arg((5, 4), key=(op, 1))),
        SampleInput("batched", make_arg((2, 3, 2), key=(op, 2)), make_arg((2, 4, 2), key=(op, 3)))],
    torch="torch._euclidean_dist",
    doc="cdist's p = 2 by one matrix product (|x1|² - 2 x1·x2 + |x2|², clamped at 0, square-rooted).")


# torch.cdist's compute_mode names -> ATen's int
_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


def _cdist(x1, x2, p, compute_mode):
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    compute_mode = _COMPUTE_MODES[compute_mode]
    _cdist_checks(x1, x2)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if x1.numel() == 0 or x2.numel() == 0:
        return _cdist_forward(x1, x2, p, compute_mode)
    mode = 0 if compute_mode is None else compute_mode
    if not _uses_mm(p, mode, r1, r2):
        return _cdist_forward(x1, x2, p, compute_mode)
    _cdist_impl_checks(x1, x2, p, compute_mode)
    batch = tuple(broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    n = math.prod(batch)
    if n == 0:
        return _cdist_forward(x1, x2, p, compute_mode)
    if n == 1:
        dist = _euclidean_dist(x1, x2)
    else:
        # as ATen's: both expanded to the common batch, made contiguous and flattened to (n, r, c)
        dist = _euclidean_dist(reshape(expand(x1, list(batch + x1.shape[-2:])), [n, r1, x1.shape[-1]]),
                               reshape(expand(x2, list(batch + x2.shape[-2:])), [n, r2, x2.shape[-1]]))
    return view(dist, list(batch + (r1, r2)))


cdist = defop(
    "cdist(Tensor x1, Tensor x2, float p=2, str compute_mode=\"use_mm_for_euclid_dist_if_necessary\") -> Tensor",
    composite=_cdist,
    samples=lambda op: [
        SampleInput("(3,4)x(5,4)", make_arg((3, 4), key=(op, 0)), make_arg((5, 4), key=(op, 1))),
        SampleInput("p=0", make_arg((3, 2), key=(op, 2)), make_arg((2, 2), key=(op, 3)), 0.0),
        SampleInput("p=1 batched broadcast", make_arg((2, 3, 2), key=(op, 4)), make_arg((1, 4, 2), key=(op, 5)),
                    1.0),
        SampleInput("p=0.5", make_arg((3, 2), key=(op, 6)), make_arg((2, 2), key=(op, 7)), 0.5),
        SampleInput("p=3", make_arg((3, 2), key=(op, 8)), make_arg((4, 2), key=(op, 9)), 3.0),
        SampleInput("p=inf", make_arg((3, 3), key=(op, 10)), make_arg((4, 3), key=(op, 11)), float("inf")),
        SampleInput("p=2 mm path (27 rows)", make_arg((27, 3), key=(op, 12)), make_arg((4, 3), key=(op, 13))),
        SampleInput("compute_mode=1 batched", make_arg((2, 3, 2), key=(op, 14)), make_arg((4, 2), key=(op, 15)),
                    2.0, "use_mm_for_euclid_dist"),
        SampleInput("compute_mode=2 (30 rows)", make_arg((30, 2), key=(op, 16)), make_arg((3, 2), key=(op, 17)),
                    2.0, "donot_use_mm_for_euclid_dist")],
    torch="torch.cdist",
    doc="The p-norm distance between each row of x1 (.., R1, M) and each row of x2 (.., R2, M), batch dims "
        "broadcast: (.., R1, R2). p = 2 goes by a matrix product (_euclidean_dist) with compute_mode "
        "'use_mm_for_euclid_dist', or by default with more than 25 rows; 'donot_use_mm_for_euclid_dist' never.")


# ---- dist -----------------------------------------------------------------------------------
# ATen's dist: the p-norm of self - other (broadcast), its own Node (DistBackward0) whose formulas are
# the norm's, derivatives.yaml's norm_backward of self - other

def _dist_meta(self, other, p):
    return _norm_meta(MetaArray(broadcast_shapes(self.shape, other.shape), self.dtype), p)


dist = defop(
    "dist(Tensor self, Tensor other, Scalar p=2) -> Tensor",
    kernel=lambda xp, self, other, p: _norm_kernel(xp, self - other, p, None, False, None),
    meta=_dist_meta, promote="same", supports_complex=True,     # (a real result, as the norm's)
    grads={"self": lambda grad, self, other, p, result: _norm_grad(grad, self - other, result, p, None, False, None),
           "other": lambda grad, self, other, p, result: -_norm_grad(grad, self - other, result, p, None, False,
                                                                     None)},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1))),
        SampleInput("broadcast p=1", make_arg((2, 3), key=(op, 2)), make_arg((3,), key=(op, 3)), 1),
        SampleInput("p=3.5", make_arg((4,), key=(op, 4)), make_arg((4,), key=(op, 5)), 3.5),
        SampleInput("p=inf", make_arg((4,), key=(op, 6)), make_arg((4,), key=(op, 7)), float("inf")),
        SampleInput("p=0", make_arg((4,), key=(op, 8)), make_arg((4,), key=(op, 9)), 0)],
    torch="torch.dist", doc="The p-norm of self - other (broadcast), over all elements.")
