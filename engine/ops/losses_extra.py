"""More losses and distances: l1, smooth_l1, huber, binary_cross_entropy, kl_div,
cosine_similarity, pairwise_distance and the margin losses (cosine_embedding,
margin_ranking, triplet_margin).

Primitive where PyTorch's is (SmoothL1LossBackward0, HuberLossBackward0,
BinaryCrossEntropyBackward0), each with PyTorch's backward op, differentiable again with
its derivatives.yaml formulas; the rest are composites written as PyTorch's
torch/nn/functional.py and ATen's Loss.cpp write them, so they record the same nodes.
`reduction` is keyword-only where PyTorch's functional form has the deprecated
`size_average`/`reduce` before it (see losses.py); huber_loss has none and takes it
positionally, as PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

from .. import creation, dtypes
from ..backends.meta import MetaArray
from ..messages import require_floating, scalar_type_name, sizes
from ..shapes import broadcast_shapes
from .binary_extra import minimum
from .conversion import detach, to
from .losses import check_reduction
from .pointwise import eq, exp, ge, log, lt, where
from .reduction import mean, sum  # noqa: A004
from .reductions_extra import norm
from .registry import defop
from .samples import SampleInput, make_arg
from .shape import expand
from .special import xlogy
from .unary import abs, sign, sqrt  # noqa: A004

_ENUM = "{'none': 0, 'mean': 1, 'sum': 2}[reduction]"
_BCE_EPS = 1e-12      # PyTorch's EPSILON in binary_cross_entropy's backward


def _apply_reduction(loss, reduction):
    """ATen's apply_loss_reduction."""
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


def _reduce(xp, loss, reduction):
    if reduction == "none":
        return loss
    total = xp.sum(loss)
    return total / loss.size if reduction == "mean" else total


def _norm(reduction, shape) -> float:
    return 1.0 / math.prod(shape) if reduction == "mean" else 1.0


def _pair_samples(op, low=-2.0, high=2.0, **extra):
    """(input, target) pairs for the elementwise regression losses, every reduction."""
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), low=low, high=high, **kw)
    return [SampleInput("mean", arg((3, 4), "x"), arg((3, 4), "t"), **extra),
            SampleInput("sum T", arg((4, 3), "xt", transposed=True), arg((4, 3), "tt"), reduction="sum", **extra),
            SampleInput("none", arg((5,), "xn"), arg((5,), "tn"), reduction="none", **extra),
            SampleInput("0-d", arg((), "x0"), arg((), "t0"), **extra)]


def _backward_samples(op):
    """(grad_output, input, target, reduction, beta or delta) for smooth_l1's and huber's backward ops."""
    return [SampleInput("mean", make_arg((), key=(op, 0)), make_arg((3, 4), key=(op, 1)), make_arg((3, 4), key=(op, 2)),
                        "mean", 1.0),
            SampleInput("none 0.5", make_arg((4,), key=(op, 3)), make_arg((4,), key=(op, 4)),
                        make_arg((4,), key=(op, 5)), "none", 0.5)]


def _aten_samples(op):
    """(input, target, reduction, beta or delta) for ATen's smooth_l1 and huber, under their public ops."""
    return [SampleInput("0.5", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1)), "mean", 0.5)]


# ---- clamp_min: the hinge of the margin losses -----------------------------------------------

def _clamp_min_meta(self, min):  # noqa: A002
    return MetaArray(self.shape, dtypes.result_type([self, min]))   # an int tensor and a float min: float


clamp_min = defop(
    "clamp_min(Tensor self, Scalar min) -> Tensor",
    kernel=lambda xp, self, min: xp.maximum(self, min).astype(_clamp_min_meta(self, min).dtype, copy=False),
    meta=_clamp_min_meta,
    grads={"self": lambda grad, self, min: where(ge(self, min), grad, 0.0)},  # noqa: A006
    samples=lambda op: [SampleInput("(3,4) 0", make_arg((3, 4), key=(op, 0), away_from=0.0), 0.0),
                        SampleInput("(5,) 0.5", make_arg((5,), key=(op, 1), away_from=0.5), 0.5)],
    torch="torch.clamp_min",
    doc="max(self, min); the gradient flows where self >= min.")


# ---- l1_loss --------------------------------------------------------------------------------

def _l1_loss(input, target, reduction, weight):
    check_reduction(reduction)
    errors = abs(input - target)
    if weight is None:
        return _apply_reduction(errors, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == "mean":
        return sum(weighted) / sum(weight)
    return sum(weighted) if reduction == "sum" else weighted


l1_loss = defop(
    "l1_loss(Tensor input, Tensor target, *, str reduction=\"mean\", Tensor? weight=None) -> Tensor",
    composite=_l1_loss,
    samples=lambda op: _pair_samples(op) + [
        SampleInput("weight mean", make_arg((3, 4), key=(op, "wx")), make_arg((3, 4), key=(op, "wt")),
                    weight=make_arg((3, 4), key=(op, "w"), low=0.5, high=2.0, requires_grad=False)),
        SampleInput("broadcast none", make_arg((2, 3), key=(op, "bx")), make_arg((3,), key=(op, "bt")),
                    reduction="none")],
    torch="torch.nn.functional.l1_loss",
    doc="|input - target|, reduced; with `weight` (the input's shape) the weighted mean divides by "
        "sum(weight).")


# ---- smooth_l1_loss -------------------------------------------------------------------------

def _smooth_l1_meta(input, target, reduction, beta):
    check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    require_floating("smooth_l1_cpu", input.dtype)
    shape = broadcast_shapes(input.shape, target.shape)
    return MetaArray(shape if reduction == "none" else (), input.dtype)


def _smooth_l1_kernel(xp, input, target, reduction, beta):
    _smooth_l1_meta(input, target, reduction, beta)
    z = xp.abs(input - target)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = xp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
    return xp.asarray(_reduce(xp, loss, reduction)).astype(input.dtype, copy=False)


def _pair_backward_meta(grad_output, input, target, reduction, beta):
    shape = broadcast_shapes(input.shape, target.shape)
    broadcast_shapes(grad_output.shape, shape)
    return MetaArray(shape, input.dtype)


def _smooth_l1_backward_kernel(xp, grad_output, input, target, reduction, beta):
    shape = _pair_backward_meta(grad_output, input, target, reduction, beta).shape
    d = input - target
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = xp.where(xp.abs(d) < beta, d / beta, xp.sign(d))
    return (inner * grad_output * _norm(reduction, shape)).astype(input.dtype, copy=False)


def _smooth_l1_double_backward(grad, input, target, reduction, beta):
    # PyTorch's smooth_l1_loss_double_backward (0 for beta == 0, which has no quadratic part)
    if beta == 0:
        return grad * 0
    g = grad * lt(abs(input - target), beta) / beta
    return g / (input - target).numel() if reduction == "mean" else g


smooth_l1_loss_backward = defop(
    "smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, str reduction, float beta) -> Tensor",
    kernel=_smooth_l1_backward_kernel, meta=_pair_backward_meta, promote="same",
    grads={"grad_output": lambda grad, self, target, reduction, beta:
               smooth_l1_loss_backward(grad, self, target, reduction, beta),
           "self": lambda grad, grad_output, self, target, reduction, beta:
               _smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta),
           "target": lambda grad, grad_output, self, target, reduction, beta:
               -_smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta)},
    samples=_backward_samples,
    torch="lambda g, x, t, reduction, beta: torch.ops.aten.smooth_l1_loss_backward(g, x, t, " + _ENUM + ", beta)",
    doc="The gradient of smooth_l1_loss: (input - target) / beta inside |input - target| < beta, its sign "
        "outside, times grad_output (divided by numel for 'mean').")

_smooth_l1_loss = defop(
    "_smooth_l1_loss(Tensor input, Tensor target, str reduction, float beta) -> Tensor",
    kernel=_smooth_l1_kernel, meta=_smooth_l1_meta, promote="same",
    grads={"input": lambda grad, input, target, reduction, beta:
               smooth_l1_loss_backward(grad, input, target, reduction, beta),
           "target": lambda grad, input, target, reduction, beta:
               smooth_l1_loss_backward(grad, target, input, reduction, beta)},
    backward_name="SmoothL1LossBackward0",
    samples=_aten_samples,
    torch="lambda x, t, reduction, beta: torch._C._nn.smooth_l1_loss(x, t, " + _ENUM + ", beta)",
    doc="ATen's smooth_l1_loss (beta > 0); smooth_l1_loss is the public op.")


def _smooth_l1_loss_public(input, target, reduction, beta):
    check_reduction(reduction)
    if beta == 0.0:     # as F.smooth_l1_loss: plain l1
        return l1_loss(input, target, reduction=reduction)
    return _smooth_l1_loss(input, target, reduction, beta)


def _smooth_l1_samples(op):
    away = dict(away_from=0.0)
    return (_pair_samples(op, low=-3.0, high=3.0)
            + [SampleInput("beta=0.5 sum", make_arg((3, 4), key=(op, "b")), make_arg((3, 4), key=(op, "bt")),
                           reduction="sum", beta=0.5),
               SampleInput("beta=0", make_arg((4,), key=(op, "z"), **away), make_arg((4,), key=(op, "zt"),
                                                                                  requires_grad=False) * 0,
                           beta=0.0)])


smooth_l1_loss = defop(
    "smooth_l1_loss(Tensor input, Tensor target, *, str reduction=\"mean\", float beta=1.0) -> Tensor",
    composite=_smooth_l1_loss_public, samples=_smooth_l1_samples, torch="torch.nn.functional.smooth_l1_loss",
    doc="0.5 (input - target)^2 / beta where |input - target| < beta, |input - target| - 0.5 beta elsewhere; "
        "beta = 0 is l1_loss.")


# ---- huber_loss -----------------------------------------------------------------------------

def _huber_meta(input, target, reduction, delta):
    check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    require_floating("huber_cpu", input.dtype)
    shape = broadcast_shapes(input.shape, target.shape)
    return MetaArray(shape if reduction == "none" else (), input.dtype)


def _huber_kernel(xp, input, target, reduction, delta):
    _huber_meta(input, target, reduction, delta)
    z = xp.abs(input - target)
    loss = xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return xp.asarray(_reduce(xp, loss, reduction)).astype(input.dtype, copy=False)


def _huber_backward_kernel(xp, grad_output, input, target, reduction, delta):
    shape = _pair_backward_meta(grad_output, input, target, reduction, delta).shape
    d = input - target
    inner = xp.clip(d, -delta, delta)
    return (inner * grad_output * _norm(reduction, shape)).astype(input.dtype, copy=False)


def _huber_double_backward_input(grad, grad_output, self, target, reduction, delta):
    g = grad * grad_output * lt(abs(self - target), delta)
    return g / (self - target).numel() if reduction == "mean" else g


def _huber_double_backward_grad_output(grad, grad_output, self, target, reduction, delta):
    # PyTorch's huber_loss_double_backward_grad_output
    if reduction == "none":
        return huber_loss_backward(grad, self, target, reduction, delta)
    r = huber_loss_backward(creation.ones_like(grad_output), self, target, reduction, delta)
    return sum(r * grad)


huber_loss_backward = defop(
    "huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, str reduction, float delta) -> Tensor",
    kernel=_huber_backward_kernel, meta=_pair_backward_meta, promote="same",
    grads={"grad_output": _huber_double_backward_grad_output,
           "self": _huber_double_backward_input,
           "target": lambda grad, grad_output, self, target, reduction, delta:
               -_huber_double_backward_input(grad, grad_output, self, target, reduction, delta)},
    samples=_backward_samples,
    torch="lambda g, x, t, reduction, delta: torch.ops.aten.huber_loss_backward(g, x, t, " + _ENUM + ", delta)",
    doc="The gradient of huber_loss: input - target clamped to [-delta, delta], times grad_output (divided by "
        "numel for 'mean').")

_huber_loss = defop(
    "_huber_loss(Tensor input, Tensor target, str reduction, float delta) -> Tensor",
    kernel=_huber_kernel, meta=_huber_meta, promote="same",
    grads={"input": lambda grad, input, target, reduction, delta:
               huber_loss_backward(grad, input, target, reduction, delta),
           "target": lambda grad, input, target, reduction, delta:
               huber_loss_backward(grad, target, input, reduction, delta)},
    backward_name="HuberLossBackward0",
    samples=_aten_samples,
    torch="lambda x, t, reduction, delta: torch._C._nn.huber_loss(x, t, " + _ENUM + ", delta)",
    doc="ATen's huber_loss; huber_loss is the public op (it adds `weight`).")


def _huber_loss_public(input, target, reduction, delta, weight):
    check_reduction(reduction)
    if weight is None:
        return _huber_loss(input, target, reduction, delta)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = _huber_loss(input, target, "none", delta) * weight
    return _apply_reduction(weighted, reduction)


huber_loss = defop(
    "huber_loss(Tensor input, Tensor target, str reduction=\"mean\", float delta=1.0, Tensor? weight=None) -> Tensor",
    composite=_huber_loss_public,
    samples=lambda op: _pair_samples(op, low=-3.0, high=3.0) + [
        SampleInput("delta=2 sum", make_arg((3, 4), key=(op, "d")), make_arg((3, 4), key=(op, "dt"), low=-3.0,
                                                                              high=3.0), "sum", 2.0),
        SampleInput("weight mean", make_arg((3, 4), key=(op, "w")), make_arg((3, 4), key=(op, "wt")),
                    delta=0.5, weight=make_arg((3, 4), key=(op, "ww"), low=0.5, high=2.0, requires_grad=False))],
    torch="torch.nn.functional.huber_loss",
    doc="0.5 (input - target)^2 where |input - target| < delta, delta (|input - target| - 0.5 delta) "
        "elsewhere; optionally weighted elementwise before the reduction.")


# ---- binary_cross_entropy -------------------------------------------------------------------

def _bce_meta(input, target, weight, reduction):
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size (agrad.Size({list(target.shape)})) that is different to the input "
                         f"size (agrad.Size({list(input.shape)})) is deprecated. Please ensure they have the same "
                         f"size.")
    require_floating("binary_cross_entropy", input.dtype)
    if weight is not None:
        full = broadcast_shapes(target.shape, weight.shape)
        if tuple(full) != tuple(input.shape):
            raise RuntimeError(f"output with shape {sizes(input.shape)} doesn't match the broadcast shape "
                               f"{sizes(full)}")
    return MetaArray(input.shape if reduction == "none" else (), input.dtype)


def _bce_kernel(xp, input, target, weight, reduction):
    _bce_meta(input, target, weight, reduction)
    if bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if bool(((target < 0) | (target > 1)).any()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    # NOTE: PyTorch clamps each log at -100, so input 0 or 1 gives a finite loss
    with np.errstate(divide="ignore"):
        log_x = xp.maximum(xp.log(input), -100)
        log_1mx = xp.maximum(xp.log1p(-input), -100)
    loss = (target - 1) * log_1mx - target * log_x
    if weight is not None:
        loss = loss * weight
    return xp.asarray(_reduce(xp, loss, reduction)).astype(input.dtype, copy=False)


def _bce_backward_meta(grad_output, input, target, weight, reduction):
    broadcast_shapes(grad_output.shape, input.shape)
    return MetaArray(input.shape, input.dtype)


def _bce_backward_kernel(xp, grad_output, input, target, weight, reduction):
    _bce_backward_meta(grad_output, input, target, weight, reduction)
    g = grad_output * (input - target) / xp.maximum((1 - input) * input, _BCE_EPS)
    if weight is not None:
        g = g * weight
    return (g * _norm(reduction, input.shape)).astype(input.dtype, copy=False)


def _weighted(g, weight, reduction, n):
    if weight is not None:
        g = g * weight
    return g / n if reduction == "mean" else g


def _bce_double_backward(grad, grad_output, self, target, weight, reduction):
    # PyTorch's binary_cross_entropy_double_backward
    x_eps = self + _BCE_EPS
    one_m_x_eps = 1 - self + _BCE_EPS
    g = (self * self - 2 * self * target + target) / (x_eps * x_eps * one_m_x_eps * one_m_x_eps)
    return _weighted(g * (grad * grad_output), weight, reduction, self.numel())


def _bce_double_backward_grad_output(grad, self, target, weight, reduction):
    # PyTorch's binary_cross_entropy_double_backward_grad_output
    g = (self - target) / ((self + _BCE_EPS) * (1 - self + _BCE_EPS))
    if weight is not None:
        g = g * weight
    if reduction == "none":
        return g * grad
    g = sum(g * grad)
    return g / self.numel() if reduction == "mean" else g


def _bce_double_backward_target(grad, grad_output, self, weight, reduction):
    # PyTorch's binary_cross_entropy_double_backward_target: the clamp is not differentiated
    denom = (1 - self) * self
    denom = denom + detach(clamp_min(denom, _BCE_EPS) - denom)
    return _weighted(-grad * grad_output / denom, weight, reduction, self.numel())


def _bce_target_grad(grad, input, weight, reduction):
    # PyTorch's binary_cross_entropy_target_backward: -logit(input) * grad
    g = (log(1 - input) - log(input)) * grad
    return _weighted(g, weight, reduction, input.numel())


def _bce_args(op, shape, k):
    return (make_arg(shape, key=(op, k, "x"), low=0.05, high=0.95),
            make_arg(shape, key=(op, k, "t"), low=0.0, high=1.0))


binary_cross_entropy_backward = defop(
    "binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, "
    "str reduction=\"mean\") -> Tensor",
    kernel=_bce_backward_kernel, meta=_bce_backward_meta, promote="same",
    grads={"grad_output": _bce_double_backward_grad_output, "self": _bce_double_backward,
           "target": _bce_double_backward_target, "weight": None},
    samples=lambda op: [
        SampleInput("mean", make_arg((), key=(op, "g")), *_bce_args(op, (3, 4), 0)),
        SampleInput("none weight", make_arg((4,), key=(op, "g2")), *_bce_args(op, (4,), 1),
                    make_arg((4,), key=(op, "w"), low=0.5, high=2.0, requires_grad=False), "none")],
    torch="lambda g, x, t, weight=None, reduction='mean': torch.ops.aten.binary_cross_entropy_backward(g, x, t, "
          "weight, " + _ENUM + ")",
    doc="The gradient of binary_cross_entropy: grad_output * (input - target) / max(input (1 - input), 1e-12), "
        "weighted (divided by numel for 'mean').")

binary_cross_entropy = defop(
    "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, *, str reduction=\"mean\") -> Tensor",
    kernel=_bce_kernel, meta=_bce_meta, promote="same",
    grads={"input": lambda grad, input, target, weight, reduction:
               binary_cross_entropy_backward(grad, input, target, weight, reduction),
           "target": _bce_target_grad, "weight": None},
    samples=lambda op: [
        SampleInput("mean", *_bce_args(op, (3, 4), 0)),
        SampleInput("weight sum", *_bce_args(op, (3, 4), 1),
                    make_arg((4,), key=(op, "w"), low=0.5, high=2.0, requires_grad=False), reduction="sum"),
        SampleInput("none 0-d", *_bce_args(op, (), 2), reduction="none"),
        SampleInput("input at 0 and 1", creation.tensor([0.0, 1.0, 0.5], dtype="float64"),
                    creation.tensor([1.0, 0.0, 0.25], dtype="float64"), reduction="none")],
    torch="torch.nn.functional.binary_cross_entropy",
    doc="-(target log(input) + (1 - target) log(1 - input)), each log clamped at -100 as PyTorch; input "
        "and target must lie in [0, 1]; `weight` broadcasts to the input.")


# ---- kl_div ---------------------------------------------------------------------------------

def _kl_div(input, target, reduction, log_target):
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    for t in (input, target):
        if not t.is_floating_point():
            raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        output = exp(target) * (target - input)
    else:
        output = xlogy(target, target) - target * input
    reduced = _apply_reduction(output, "sum" if reduction == "batchmean" else reduction)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = reduced / input.shape[0]
    return reduced


def _kl_div_samples(op):
    x = make_arg((3, 4), key=(op, "x"), low=-3.0, high=0.0)
    p = make_arg((3, 4), key=(op, "p"), low=0.05, high=1.0)
    return [SampleInput("mean", x, p),
            SampleInput("batchmean", x, p, reduction="batchmean"),
            SampleInput("sum log_target", x, make_arg((3, 4), key=(op, "lt"), low=-3.0, high=0.0), reduction="sum",
                        log_target=True),
            SampleInput("none", make_arg((2, 3, 2), key=(op, "x3"), low=-3.0, high=0.0),
                        make_arg((2, 3, 2), key=(op, "p3"), low=0.05, high=1.0), reduction="none"),
            SampleInput("batchmean 0-d", make_arg((), key=(op, "x0"), low=-3.0, high=0.0),
                        make_arg((), key=(op, "p0"), low=0.05, high=1.0), reduction="batchmean")]


kl_div = defop(
    "kl_div(Tensor input, Tensor target, *, str reduction=\"mean\", bool log_target=False) -> Tensor",
    composite=_kl_div, samples=_kl_div_samples, torch="torch.nn.functional.kl_div",
    doc="target (log target - input) for log-probabilities `input` (exp(target) (target - input) with "
        "log_target), reduced; 'batchmean' divides the sum by the batch size.")


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


# ---- margin losses --------------------------------------------------------------------------

_EPSILON = 1e-12    # ATen's EPSILON in cosine_embedding_loss


def _cosine_embedding_loss(input1, input2, target, margin, reduction):
    check_reduction(reduction)
    targ_dim = target.ndim
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{sizes(input1.shape)} and {sizes(input2.shape)}.")
    if targ_dim == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{sizes(input1.shape)} and {sizes(input2.shape)}.")
    prod_sum = sum(input1 * input2, [targ_dim])
    mag_square1 = sum(input1 * input1, [targ_dim]) + _EPSILON
    mag_square2 = sum(input2 * input2, [targ_dim]) + _EPSILON
    cos = prod_sum / sqrt(mag_square1 * mag_square2)
    output_pos = where(eq(target, 1), 1 - cos, 0.0)
    output_neg = where(eq(target, -1), clamp_min(cos - margin, 0), 0.0)
    return _apply_reduction(output_pos + output_neg, reduction)


def _sign_target(shape, key):
    return sign(make_arg(shape, key=key, requires_grad=False, away_from=0.0))


cosine_embedding_loss = defop(
    "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0, *, "
    "str reduction=\"mean\") -> Tensor",
    composite=_cosine_embedding_loss,
    samples=lambda op: [
        SampleInput("mean", make_arg((4, 3), key=(op, 0)), make_arg((4, 3), key=(op, 1)), _sign_target((4,), (op, 2))),
        SampleInput("margin none", make_arg((4, 3), key=(op, 3)), make_arg((4, 3), key=(op, 4)),
                    _sign_target((4,), (op, 5)), -0.5, reduction="none"),
        SampleInput("0-d target sum", make_arg((3,), key=(op, 6)), make_arg((3,), key=(op, 7)),
                    creation.tensor(-1.0, dtype="float64"), -0.9, reduction="sum")],
    torch="torch.nn.functional.cosine_embedding_loss",
    doc="1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1, reduced.")


def _margin_ranking_loss(input1, input2, target, margin, reduction):
    check_reduction(reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: agrad.Size({list(input1.shape)}), input2: agrad.Size({list(input2.shape)}), "
                           f"target: agrad.Size({list(target.shape)}) ")
    return _apply_reduction(clamp_min(-target * (input1 - input2) + margin, 0), reduction)


margin_ranking_loss = defop(
    "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0, *, "
    "str reduction=\"mean\") -> Tensor",
    composite=_margin_ranking_loss,
    samples=lambda op: [
        SampleInput("mean", make_arg((5,), key=(op, 0)), make_arg((5,), key=(op, 1)), _sign_target((5,), (op, 2))),
        SampleInput("margin none", make_arg((2, 3), key=(op, 3)), make_arg((2, 3), key=(op, 4)),
                    _sign_target((2, 3), (op, 5)), 0.3, reduction="none")],
    torch="torch.nn.functional.margin_ranking_loss",
    doc="max(0, -target (input1 - input2) + margin), reduced.")


def _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == pd == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction(clamp_min(margin + dist_pos - dist_neg, 0), reduction)


triplet_margin_loss = defop(
    "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2, "
    "float eps=1e-06, bool swap=False, *, str reduction=\"mean\") -> Tensor",
    composite=_triplet_margin_loss,
    samples=lambda op: [
        SampleInput("mean", make_arg((4, 3), key=(op, 0)), make_arg((4, 3), key=(op, 1)),
                    make_arg((4, 3), key=(op, 2))),
        SampleInput("p=1 swap none", make_arg((4, 3), key=(op, 3)), make_arg((4, 3), key=(op, 4)),
                    make_arg((4, 3), key=(op, 5)), 2.0, 1.0, swap=True, reduction="none"),
        SampleInput("(3,) sum", make_arg((3,), key=(op, 6)), make_arg((3,), key=(op, 7)),
                    make_arg((3,), key=(op, 8)), 0.5, reduction="sum")],
    torch="torch.nn.functional.triplet_margin_loss",
    doc="max(0, margin + d(anchor, positive) - d(anchor, negative)) with the pairwise p-distance d (with "
        "swap, the smaller of d(anchor, negative) and d(positive, negative)), reduced.")
