"""Loss functions (ATen's Loss, LossNLL): nll_loss, cross_entropy, mse_loss, l1_loss,
smooth_l1_loss, huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits,
kl_div, the margin losses (cosine_embedding, margin_ranking, triplet_margin,
hinge_embedding, soft_margin, multilabel_soft_margin), poisson_nll_loss and
gaussian_nll_loss. (multi_margin_loss and multilabel_margin_loss are in multi_margin.py,
ctc_loss in ctc.py, as ATen files them.)

Primitive where PyTorch's is (NllLossBackward0, MseLossBackward0, SmoothL1LossBackward0,
HuberLossBackward0, BinaryCrossEntropyBackward0, BinaryCrossEntropyWithLogitsBackward0,
SoftMarginLossBackward0),
each with PyTorch's backward op or formulas in agrad ops, differentiable again with its
derivatives.yaml formulas; the rest are composites written as PyTorch's
torch/nn/functional.py and ATen's Loss.cpp write them, so they record the same nodes
(cross_entropy is log_softmax + nll_loss for class indices).

`reduction`, `ignore_index` and `label_smoothing` are keyword-only where PyTorch's
functional form has the deprecated `size_average`/`reduce` before them, so a positional
call could not mean the same thing in both; huber_loss has none and takes `reduction`
positionally, as PyTorch. The losses added since (hinge_embedding, poisson_nll,
soft_margin, multilabel_soft_margin, multi_margin, multilabel_margin) and the three margin
losses before them (cosine_embedding, margin_ranking, triplet_margin) take PyTorch's whole
signature instead, `size_average`/`reduce` included: either one, when given, decides the
reduction with PyTorch's deprecation warning (`legacy_get_string`, torch.nn._reduction's).
"""
from __future__ import annotations

import math

import numpy as np

from ... import creation, dtypes
from ...backends.meta import MetaArray
from ...errors import DimensionError, DtypeError, ShapeError
from ...messages import check_result_cast, require_floating, scalar_type_name, size_repr, sizes
from ...user_warnings import warn_user
from ...shapes import broadcast_shapes
from ..conversion import detach
from ..factories import ones_like, zeros_like
from ..pointwise.activation import logsigmoid, relu, sigmoid
from ..pointwise.binary import clamp_min, eq, le, lt, minimum, ne, pow, where  # noqa: A004
from ..pointwise.special import xlogy
from ..pointwise.unary import (
    abs,  # noqa: A004
    exp,
    log,
    sign,
    sqrt,
)
from ..reduce.arithmetic import (
    mean,
    sum,  # noqa: A004
)
from ..reduce.selection import any  # noqa: A004
from ..registry import NotDifferentiable, defop
from ..samples import SampleInput, make_arg
from ..shape.advanced_indexing import masked_fill
from ..shape.view import reshape, unsqueeze
from .distance import pairwise_distance
from .softmax import log_softmax

_REDUCTIONS = ("none", "mean", "sum")
_ENUM = "{'none': 0, 'mean': 1, 'sum': 2}[reduction]"


def check_reduction(reduction) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(xp, loss, reduction, denominator=None):
    if reduction == "none":
        return loss
    total = xp.sum(loss)
    if reduction == "sum":
        return total
    return total / (loss.size if denominator is None else denominator)


def _int_target(spec):
    """Class indices in [0, classes): spec = (shape, key, classes)."""
    shape, key, classes = spec
    return make_arg(shape, key=key, low=0, high=classes, integer=True, requires_grad=False, dtype=dtypes.int64)


# ---- nll_loss -----------------------------------------------------------------------------------

def _nll_checks(input, target, weight, reduction):
    check_reduction(reduction)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1:
        if target.ndim == 0:
            raise DimensionError("Dimension specified as 0 but tensor has no dimensions")
        if input.shape[0] != target.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({target.shape[0]}).")
    if target.dtype != np.int64:
        raise DtypeError(f"expected scalar type Long but found {scalar_type_name(target.dtype)}")
    c = input.shape[0 if input.ndim == 1 else 1]
    if input.ndim <= 2:
        if target.ndim > 1:
            raise ShapeError("0D or 1D target tensor expected, multi-target not supported")
        if not (input.ndim == 1 and target.ndim == 0) and input.shape[0] != target.shape[0]:
            raise ShapeError(f"size mismatch (got input: {sizes(input.shape)}, target: {sizes(target.shape)})")
    elif input.ndim == 4:
        if target.ndim != 3:
            raise ShapeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                             f"dimension: {target.ndim}")
        if tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
            raise ShapeError(f"size mismatch (got input: {sizes(input.shape)} , target: {sizes(target.shape)}")
    elif tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise ShapeError(f"Expected target size {sizes((input.shape[0],) + tuple(input.shape[2:]))}, got "
                       f"{sizes(target.shape)}")
    if weight is not None:
        if weight.ndim != 1 or weight.shape[0] != c:
            raise ShapeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {sizes(weight.shape)}")
        if weight.dtype != input.dtype:
            raise DtypeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")
    require_floating("nll_loss_out_frame", input.dtype)


def _nll_meta(input, target, weight, reduction, ignore_index):
    _nll_checks(input, target, weight, reduction)
    return MetaArray(target.shape if reduction == "none" else (), input.dtype)


def _picked_weights(xp, input, target, weight, ignore_index):
    """(class dim, safe targets, per-target weight with ignored targets at 0; None where every
    weight is 1: no weight given and no target ignored, the common case, whose masks and
    multiplications by one are skipped — they were a fifth of a small classifier's training step)."""
    cdim = 0 if input.ndim == 1 else 1
    c = input.shape[cdim]
    if weight is None and input.__class__ is np.ndarray and target.size:
        low, high = int(target.min()), int(target.max())
        if 0 <= low and high < c and not low <= ignore_index <= high:
            return cdim, target, None
    valid = target != ignore_index
    bad = valid & ((target < 0) | (target >= c))
    if bool(bad.any()):
        raise IndexError(f"Target {int(target[bad].ravel()[0])} is out of bounds.")
    safe = xp.where(valid, target, 0)
    # one flat index: what every library's fancy indexing takes (dask's takes no n-d index array)
    w = weight[safe.reshape(-1)].reshape(safe.shape) if weight is not None else xp.ones(target.shape, dtype=input.dtype)
    return cdim, safe, xp.where(valid, w, 0).astype(input.dtype, copy=False)


def _nll_kernel(xp, input, target, weight, reduction, ignore_index):
    _nll_checks(input, target, weight, reduction)
    cdim, safe, w = _picked_weights(xp, input, target, weight, ignore_index)
    if w is None and input.ndim == 2:
        picked = input[np.arange(input.shape[0]), safe]
    else:
        picked = xp.take_along_axis(input, xp.expand_dims(safe, cdim), axis=cdim).squeeze(cdim)
    if w is None:
        # (1 * x is x and a sum of ones is the count: the values are the weighted path's, bit for bit)
        out = _reduce(xp, -picked, reduction)
    else:
        out = _reduce(xp, -picked * w, reduction, xp.sum(w))
    return xp.asarray(out).astype(input.dtype, copy=False)


def _nll_backward_meta(grad_output, input, target, weight, reduction, ignore_index):
    _nll_checks(input, target, weight, reduction)
    expected = tuple(target.shape) if reduction == "none" else ()
    if tuple(grad_output.shape) != expected:
        raise ShapeError(f"Expected a tensor of dimension {len(expected)} and tensor.size[0] == "
                       f"{expected[0] if expected else 1} but got: dimension {grad_output.ndim}")
    return MetaArray(input.shape, input.dtype)


def _nll_backward_kernel(xp, grad_output, input, target, weight, reduction, ignore_index):
    _nll_backward_meta(grad_output, input, target, weight, reduction, ignore_index)
    cdim, safe, w = _picked_weights(xp, input, target, weight, ignore_index)
    if w is None:
        scale = grad_output / safe.size if reduction == "mean" else grad_output
        if input.ndim == 2:
            # zeros, and each row's target class -scale (torch's scatter; its other zeros are +0.0 too)
            grad = np.zeros(input.shape, dtype=input.dtype)
            grad[np.arange(input.shape[0]), safe] = -scale
            return grad
        scale = xp.broadcast_to(scale, safe.shape)
    else:
        scale = w * grad_output
        if reduction == "mean":
            scale = scale / xp.sum(w)
    classes = xp.arange(input.shape[cdim]).reshape((-1,) + (1,) * (input.ndim - cdim - 1))
    one_hot = classes == xp.expand_dims(safe, cdim)
    return (-(one_hot * xp.expand_dims(scale, cdim))).astype(input.dtype, copy=False)


def _nll_samples(op, backward=False):
    specs = [("(3,5) mean", (3, 5), (3,), {}),
             ("(5,) 0-d target sum", (5,), (), {"reduction": "sum"}),
             ("(2,4,3) none", (2, 4, 3), (2, 3), {"reduction": "none"}),
             ("(2,3,2,2) weight ignore mean", (2, 3, 2, 2), (2, 2, 2), {"ignore_index": 1}),
             ("(4,3) weight sum", (4, 3), (4,), {"reduction": "sum"})]
    out = []
    for i, (name, ishape, tshape, kwargs) in enumerate(specs):
        if backward and len(ishape) == 3:
            continue        # PyTorch has no 3-D nll_loss backward op to compare with (nll_loss views it as 4-D)
        c = ishape[0 if len(ishape) == 1 else 1]
        x = make_arg(ishape, key=(op, i, "x"), transposed=len(ishape) == 2)
        t = _int_target((tshape, (op, i, "t"), c))
        w = make_arg((c,), key=(op, i, "w"), low=0.5, high=2.0, requires_grad=False) if "weight" in name else None
        if backward:
            red = kwargs.get("reduction", "mean")
            g = make_arg(tshape if red == "none" else (), key=(op, i, "g"))
            out.append(SampleInput(name, g, x.detach(), t, w, red, kwargs.get("ignore_index", -100)))
        else:
            out.append(SampleInput(name, x, t, w, **kwargs))
    return out


nll_loss_backward = defop(
    "nll_loss_backward(Tensor grad_output, Tensor input, Tensor target, Tensor? weight, str reduction, "
    "int ignore_index) -> Tensor",
    kernel=_nll_backward_kernel, meta=_nll_backward_meta,
    grads={"grad_output": lambda grad, target, weight, reduction, ignore_index:
               nll_loss(grad, target, weight, reduction=reduction, ignore_index=ignore_index),
           "input": lambda grad: grad * 0,        # the gradient does not depend on the input's values
           "target": None, "weight": None},
    backward_name=("NllLossBackwardBackward0", "NllLoss2DBackwardBackward0"),
    overload=lambda grad_output, input, *rest: 1 if input.ndim >= 3 else 0,
    samples=lambda op: _nll_samples(op, backward=True),
    torch="lambda g, x, t, w, reduction, ignore_index: torch.ops.aten.nll_loss_backward(g, x, t, w, " + _ENUM +
          ", ignore_index, torch.nn.functional.nll_loss(-torch.ones_like(x), t, w, reduction='sum', "
          "ignore_index=ignore_index)) if x.dim() <= 2 else torch.ops.aten.nll_loss2d_backward(g, x, t, w, " +
          _ENUM + ", ignore_index, torch.nn.functional.nll_loss(-torch.ones_like(x), t, w, reduction='sum', "
          "ignore_index=ignore_index))",
    doc="The gradient of nll_loss: -weight[target] * grad_output at each target class (divided by the total "
        "weight for reduction='mean'), zero elsewhere.")

nll_loss = defop(
    "nll_loss(Tensor input, Tensor target, Tensor? weight=None, *, str reduction=\"mean\", "
    "int ignore_index=-100) -> Tensor",
    kernel=_nll_kernel, meta=_nll_meta,
    grads={"input": lambda grad, input, target, weight, reduction, ignore_index:
               nll_loss_backward(grad, input, target, weight, reduction, ignore_index),
           "target": None, "weight": NotDifferentiable("nll_loss_forward")},
    backward_name=("NllLossBackward0", "NllLoss2DBackward0"),
    overload=lambda input, *rest: 1 if input.ndim >= 3 else 0,
    samples=_nll_samples, torch="torch.nn.functional.nll_loss",
    doc="The negative log likelihood of int64 class targets: -input[n, target[n]] * weight[target[n]]; "
        "targets equal to ignore_index count for nothing.")


# ---- cross_entropy ------------------------------------------------------------------------------

def _class_weight_view(weight, ndim, cdim):
    return weight if ndim <= 1 else reshape(weight, [1] * cdim + [-1] + [1] * (ndim - cdim - 1))


def _prob_target(input, target, weight, reduction, cdim, label_smoothing):
    c = input.shape[cdim]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != c):
        raise ShapeError(f"cross_entropy: weight tensor should be defined either for all {c} classes or no "
                       f"classes but got weight tensor of shape: {sizes(weight.shape)}")
    logp = log_softmax(input, cdim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight_view(weight, input.ndim, cdim)
    if reduction == "none":
        return -sum(prod, [cdim])
    if reduction == "sum":
        return -sum(prod)
    if input.numel() == 0:
        return -sum(prod) * float("nan")
    return -sum(prod) / (input.numel() / c)


def _label_smoothing(input, target, weight, reduction, ignore_index, cdim, label_smoothing):
    c = input.shape[cdim]
    logp = log_softmax(input, cdim)
    nll = nll_loss(logp, target, weight, reduction=reduction, ignore_index=ignore_index)
    ignore_mask = eq(target, ignore_index)
    if weight is not None:
        smooth = -sum(logp * _class_weight_view(weight, input.ndim, cdim), [cdim])
    else:
        smooth = -sum(logp, [cdim])
    smooth = where(ignore_mask, 0.0, smooth)
    if reduction == "none":
        ret = smooth
    elif reduction == "sum":
        ret = sum(smooth)
    elif weight is not None:
        # the total weight of the kept targets, as PyTorch's weight.gather(0, target[~ignore]).sum():
        # nll_loss_backward of -1 is the one-hot of the kept targets
        one_hot = nll_loss_backward(creation.full([], -1.0, dtype=input.dtype, device=input.device),
                                  detach(logp), target, None, "sum", ignore_index)
        ret = sum(smooth) / sum(one_hot * _class_weight_view(weight, input.ndim, cdim))
    else:
        ret = sum(smooth) / sum(ne(target, ignore_index))
    return (1 - label_smoothing) * nll + ret * (label_smoothing / c)


def _cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing):
    check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 0 if input.ndim == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        # same shape as the input: class probabilities
        if not target.is_floating_point():
            raise DtypeError(f"Expected floating point type for target with class probabilities, got "
                           f"{scalar_type_name(target.dtype.np)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _prob_target(input, target, weight, reduction, cdim, label_smoothing)
    if label_smoothing > 0:
        return _label_smoothing(input, target, weight, reduction, ignore_index, cdim, label_smoothing)
    return nll_loss(log_softmax(input, cdim), target, weight, reduction=reduction, ignore_index=ignore_index)


def _cross_entropy_samples(op):
    x = make_arg((3, 5), key=(op, "x"))
    t = _int_target(((3,), (op, "t"), 5))
    w = make_arg((5,), key=(op, "w"), low=0.5, high=2.0, requires_grad=False)
    probs = make_arg((3, 5), key=(op, "p"), low=0.0, high=1.0, requires_grad=False)
    t_ignore = creation.tensor([1, -100, 4], dtype="int64")
    return [SampleInput("(3,5) mean", x, t),
            SampleInput("(5,) 0-d target", make_arg((5,), key=(op, "x1")), creation.tensor(2, dtype="int64")),
            SampleInput("(2,3,4) none", make_arg((2, 3, 4), key=(op, "x2")), _int_target(((2, 4), (op, "t2"), 3)),
                      reduction="none"),
            SampleInput("weight ignore_index sum", x, t_ignore, w, reduction="sum"),
            SampleInput("label_smoothing", x, t_ignore, label_smoothing=0.1),
            SampleInput("label_smoothing weight", x, t_ignore, w, label_smoothing=0.2),
            SampleInput("label_smoothing weight none", x, t, w, reduction="none", label_smoothing=0.2),
            SampleInput("probabilities", x, probs / probs.sum(1, True)),
            SampleInput("probabilities weight smoothing none", make_arg((2, 3, 2), key=(op, "x3")),
                      make_arg((2, 3, 2), key=(op, "p3"), low=0.0, high=1.0),
                      make_arg((3,), key=(op, "w3"), low=0.5, high=2.0), reduction="none",
                      label_smoothing=0.1)]


cross_entropy = defop(
    "cross_entropy(Tensor input, Tensor target, Tensor? weight=None, *, str reduction=\"mean\", "
    "int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
    composite=_cross_entropy, samples=_cross_entropy_samples, torch="torch.nn.functional.cross_entropy",
    doc="log_softmax over the class dimension (1, or 0 for an unbatched input) then nll_loss for int64 class "
        "targets; a float target of the input's shape holds class probabilities.")


# ---- mse_loss -----------------------------------------------------------------------------------

def _mse_meta(input, target, reduction):
    check_reduction(reduction)
    shape = broadcast_shapes(input.shape, target.shape)
    require_floating("mse_cpu", input.dtype)
    return MetaArray(shape if reduction == "none" else (), input.dtype)


def _mse_kernel(xp, input, target, reduction):
    _mse_meta(input, target, reduction)
    diff = input - target
    return xp.asarray(_reduce(xp, diff * diff, reduction)).astype(input.dtype, copy=False)


def _mse_backward_meta(grad_output, input, target, reduction):
    shape = broadcast_shapes(input.shape, target.shape)
    check_reduction(reduction)
    broadcast_shapes(grad_output.shape, shape)
    return MetaArray(shape, input.dtype)


def _mse_backward_kernel(xp, grad_output, input, target, reduction):
    shape = _mse_backward_meta(grad_output, input, target, reduction).shape
    norm = 2.0 / math.prod(shape) if reduction == "mean" else 2.0
    return (norm * (input - target) * grad_output).astype(input.dtype, copy=False)


def _mse_norm(grad, reduction):
    return 2.0 / grad.numel() if reduction == "mean" else 2.0


def _mse_grad_output(grad, input, target, reduction):
    g = grad * (input - target) * _mse_norm(grad, reduction)
    return g if reduction == "none" else sum(g)


mse_loss_backward = defop(
    "mse_loss_backward(Tensor grad_output, Tensor input, Tensor target, str reduction) -> Tensor",
    kernel=_mse_backward_kernel, meta=_mse_backward_meta, promote="same",
    grads={"grad_output": _mse_grad_output,
           "input": lambda grad, grad_output, reduction: grad * grad_output * _mse_norm(grad, reduction),
           "target": lambda grad, grad_output, reduction: grad * grad_output * -_mse_norm(grad, reduction)},
    samples=lambda op: [
        SampleInput("mean", make_arg((), key=(op, 0)), make_arg((2, 3), key=(op, 1)), make_arg((2, 3), key=(op, 2)),
                  "mean"),
        SampleInput("none broadcast", make_arg((2, 3), key=(op, 3)), make_arg((2, 3), key=(op, 4)),
                  make_arg((3,), key=(op, 5)), "none")],
    torch="lambda g, x, t, reduction: torch.ops.aten.mse_loss_backward(g, x, t, " + _ENUM + ")",
    doc="The gradient of mse_loss: 2 * (input - target) * grad_output (divided by numel for 'mean').")

mse_loss = defop(
    "mse_loss(Tensor input, Tensor target, *, str reduction=\"mean\") -> Tensor",
    kernel=_mse_kernel, meta=_mse_meta, promote="same",
    grads={"input": lambda grad, input, target, reduction: mse_loss_backward(grad, input, target, reduction),
           "target": lambda grad, input, target, reduction: mse_loss_backward(grad, target, input, reduction)},
    samples=lambda op: [
        SampleInput("mean", make_arg((2, 3), key=(op, 0)), make_arg((2, 3), key=(op, 1))),
        SampleInput("sum T", make_arg((3, 2), key=(op, 2), transposed=True), make_arg((3, 2), key=(op, 3)),
                  reduction="sum"),
        SampleInput("none", make_arg((4,), key=(op, 4)), make_arg((4,), key=(op, 5)), reduction="none"),
        SampleInput("0-d", make_arg((), key=(op, 6)), make_arg((), key=(op, 7)))],
    torch="torch.nn.functional.mse_loss",
    doc="(input - target)**2, reduced; input and target broadcast.")


# ---- binary_cross_entropy_with_logits -----------------------------------------------------------

def _bce_shape(input, target, weight, pos_weight):
    return broadcast_shapes(input.shape, target.shape, *(t.shape for t in (weight, pos_weight) if t is not None))


def _bce_logits_meta(input, target, weight, pos_weight, reduction):
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({size_repr(target.shape)}) must be the same as input size "
                       f"({size_repr(input.shape)})")
    require_floating("binary_cross_entropy_with_logits", input.dtype)
    shape = _bce_shape(input, target, weight, pos_weight)
    return MetaArray(shape if reduction == "none" else (), input.dtype)


def _bce_logits_kernel(xp, input, target, weight, pos_weight, reduction):
    _bce_logits_meta(input, target, weight, pos_weight, reduction)
    # NOTE: softplus(-x) = log1p(exp(-|x|)) + max(-x, 0) never overflows; log(1 + exp(-x)) does
    softplus_neg = xp.log1p(xp.exp(-xp.abs(input))) + xp.maximum(-input, 0)
    log_weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * input + log_weight * softplus_neg
    if weight is not None:
        loss = loss * weight
    return xp.asarray(_reduce(xp, loss, reduction)).astype(input.dtype, copy=False)


def _softplus_neg(x):
    """softplus(-x), stable, in agrad ops (so it is differentiable again)."""
    neg = relu(-x)
    return neg + log(1 + exp(-(relu(x) + neg)))


def _bce_scale(g, grad, input, target, weight, pos_weight, reduction):
    if weight is not None:
        g = g * weight
    g = g * grad
    if reduction == "mean":
        g = g / math.prod(_bce_shape(input, target, weight, pos_weight))
    return g


def _bce_grad_input(grad, input, target, weight, pos_weight, reduction):
    s = sigmoid(input)
    if pos_weight is None:
        g = s - target
    else:
        t = pos_weight * target
        g = (t + 1 - target) * s - t
    return _bce_scale(g, grad, input, target, weight, pos_weight, reduction)


def _bce_grad_target(grad, input, target, weight, pos_weight, reduction):
    g = -input if pos_weight is None else (pos_weight - 1) * _softplus_neg(input) - input
    return _bce_scale(g, grad, input, target, weight, pos_weight, reduction)


def _bce_samples(op):
    x = make_arg((3, 4), key=(op, "x"), low=-3.0, high=3.0, away_from=0.0)
    t = make_arg((3, 4), key=(op, "t"), low=0.0, high=1.0)
    return [SampleInput("mean", x, t),
            SampleInput("weight sum", x, t, make_arg((4,), key=(op, "w"), low=0.5, high=2.0, requires_grad=False),
                      reduction="sum"),
            SampleInput("pos_weight none", x, t, None, make_arg((4,), key=(op, "pw"), low=0.5, high=3.0,
                                                                requires_grad=False), reduction="none"),
            SampleInput("weight pos_weight mean 0-d", make_arg((), key=(op, "x0"), away_from=0.0),
                      make_arg((), key=(op, "t0"), low=0.0, high=1.0),
                      make_arg((), key=(op, "w0"), low=0.5, high=2.0, requires_grad=False),
                      make_arg((), key=(op, "p0"), low=0.5, high=2.0, requires_grad=False)),
            SampleInput("large logits", creation.tensor([45.0, -52.0, 60.0, -800.0], dtype="float64",
                                                      requires_grad=True),
                      make_arg((4,), key=(op, "tl"), low=0.0, high=1.0))]


binary_cross_entropy_with_logits = defop(
    "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
    "*, str reduction=\"mean\") -> Tensor",
    kernel=_bce_logits_kernel, meta=_bce_logits_meta, promote="same",
    grads={"input": _bce_grad_input, "target": _bce_grad_target, "weight": None, "pos_weight": None},
    samples=_bce_samples,
    torch="lambda input, target, weight=None, pos_weight=None, reduction='mean': "
          "torch.nn.functional.binary_cross_entropy_with_logits(input, target, weight, reduction=reduction, "
          "pos_weight=pos_weight)",
    doc="Binary cross entropy of sigmoid(input), computed from the logits stably; pos_weight weighs the "
        "positive term per class (PyTorch's argument order: weight, pos_weight; reduction keyword-only).")
_BCE_EPS = 1e-12      # PyTorch's EPSILON in binary_cross_entropy's backward


def _apply_reduction(loss, reduction):
    """ATen's apply_loss_reduction."""
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


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
    loss = xp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
    return xp.asarray(_reduce(xp, loss, reduction)).astype(input.dtype, copy=False)


def _pair_backward_meta(grad_output, input, target, reduction, beta):
    shape = broadcast_shapes(input.shape, target.shape)
    broadcast_shapes(grad_output.shape, shape)
    return MetaArray(shape, input.dtype)


def _smooth_l1_backward_kernel(xp, grad_output, input, target, reduction, beta):
    shape = _pair_backward_meta(grad_output, input, target, reduction, beta).shape
    d = input - target
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
        raise ValueError(f"Using a target size ({size_repr(target.shape)}) that is different to the input "
                         f"size ({size_repr(input.shape)}) is deprecated. Please ensure they have the same "
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


# ---- margin losses --------------------------------------------------------------------------

_EPSILON = 1e-12    # ATen's EPSILON in cosine_embedding_loss


def _cosine_embedding_loss(input1, input2, target, margin, size_average, reduce, reduction):
    reduction = _reduction_arg(size_average, reduce, reduction)
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
    "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0, bool? size_average=None, "
    "bool? reduce=None, str reduction=\"mean\") -> Tensor",
    composite=_cosine_embedding_loss,
    samples=lambda op: [
        SampleInput("mean", make_arg((4, 3), key=(op, 0)), make_arg((4, 3), key=(op, 1)), _sign_target((4,), (op, 2))),
        SampleInput("margin none", make_arg((4, 3), key=(op, 3)), make_arg((4, 3), key=(op, 4)),
                    _sign_target((4,), (op, 5)), -0.5, reduction="none"),
        SampleInput("0-d target sum", make_arg((3,), key=(op, 6)), make_arg((3,), key=(op, 7)),
                    creation.tensor(-1.0, dtype="float64"), -0.9, reduction="sum")],
    torch="torch.nn.functional.cosine_embedding_loss",
    doc="1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1, reduced.")


def _margin_ranking_loss(input1, input2, target, margin, size_average, reduce, reduction):
    reduction = _reduction_arg(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {size_repr(input1.shape)}, input2: {size_repr(input2.shape)}, "
                           f"target: {size_repr(target.shape)} ")
    return _apply_reduction(clamp_min(-target * (input1 - input2) + margin, 0), reduction)


margin_ranking_loss = defop(
    "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0, bool? size_average=None, "
    "bool? reduce=None, str reduction=\"mean\") -> Tensor",
    composite=_margin_ranking_loss,
    samples=lambda op: [
        SampleInput("mean", make_arg((5,), key=(op, 0)), make_arg((5,), key=(op, 1)), _sign_target((5,), (op, 2))),
        SampleInput("margin none", make_arg((2, 3), key=(op, 3)), make_arg((2, 3), key=(op, 4)),
                    _sign_target((2, 3), (op, 5)), 0.3, reduction="none")],
    torch="torch.nn.functional.margin_ranking_loss",
    doc="max(0, -target (input1 - input2) + margin), reduced.")


def _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, size_average, reduce, reduction):
    reduction = _reduction_arg(size_average, reduce, reduction)
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
    "float eps=1e-06, bool swap=False, bool? size_average=None, bool? reduce=None, str reduction=\"mean\") -> Tensor",
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


# ---- the deprecated size_average / reduce (torch.nn._reduction) ------------------------------

def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    """torch.nn._reduction.legacy_get_string: the reduction the deprecated flags mean (each None
    counts as True), with PyTorch's deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warn_user(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.")
    return ret


def get_enum(reduction: str) -> str:
    """torch.nn._reduction.get_enum's check, keeping the name: 'elementwise_mean' is 'mean' (with
    PyTorch's warning); anything else but 'none', 'mean' and 'sum' is refused."""
    if reduction == "elementwise_mean":
        warn_user("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        return "mean"
    return check_reduction(reduction)


def _reduction_arg(size_average, reduce, reduction) -> str:
    """What the functional losses that pass PyTorch's reduction enum do with their three arguments."""
    if size_average is not None or reduce is not None:
        return get_enum(legacy_get_string(size_average, reduce))
    return get_enum(reduction)


_LEGACY = "bool? size_average=None, bool? reduce=None"


# ---- hinge_embedding_loss, poisson_nll_loss, gaussian_nll_loss --------------------------------

def _hinge_embedding_loss(input, target, margin, size_average, reduce, reduction):
    reduction = _reduction_arg(size_average, reduce, reduction)
    # as ATen's hinge_embedding_loss
    zeros = zeros_like(input)
    margin_clamp = clamp_min(margin - input, 0)
    output_margin = where(ne(target, 1), margin_clamp, zeros)
    output_self = where(ne(target, -1), input, zeros)
    return _apply_reduction(output_margin + output_self, reduction)


hinge_embedding_loss = defop(
    f"hinge_embedding_loss(Tensor input, Tensor target, float margin=1.0, {_LEGACY}, str reduction=\"mean\") "
    f"-> Tensor",
    composite=_hinge_embedding_loss,
    samples=lambda op: [
        SampleInput("mean", make_arg((4, 3), key=(op, 0), away_from=1.0), _sign_target((4, 3), (op, 1))),
        SampleInput("margin none broadcast", make_arg((4, 3), key=(op, 2), away_from=0.5),
                    _sign_target((3,), (op, 3)), 0.5, reduction="none"),
        SampleInput("legacy size_average=False", make_arg((5,), key=(op, 4), away_from=1.0),
                    _sign_target((5,), (op, 5)), 1.0, False)],
    torch="torch.nn.functional.hinge_embedding_loss",
    doc="input where target is 1, max(0, margin - input) where it is -1 (both where it is neither), reduced.")


def _poisson_nll_loss(input, target, log_input, full, size_average, eps, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    # as ATen's poisson_nll_loss
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        stirling_term = target * log(target) - target + 0.5 * log(2 * math.pi * target)
        loss = loss + masked_fill(stirling_term, le(target, 1), 0)
    return _apply_reduction(loss, reduction)


poisson_nll_loss = defop(
    "poisson_nll_loss(Tensor input, Tensor target, bool log_input=True, bool full=False, bool? size_average=None, "
    "float eps=1e-08, bool? reduce=None, str reduction=\"mean\") -> Tensor",
    composite=_poisson_nll_loss,
    samples=lambda op: [
        SampleInput("log_input mean", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1), low=0.0, high=4.0)),
        SampleInput("full none", make_arg((3, 4), key=(op, 2)), make_arg((3, 4), key=(op, 3), low=1.5, high=5.0),
                    full=True, reduction="none"),
        SampleInput("probabilities full sum", make_arg((5,), key=(op, 4), low=0.2, high=3.0),
                    make_arg((5,), key=(op, 5), low=0.0, high=3.0, requires_grad=False), False, True,
                    reduction="sum"),
        SampleInput("legacy reduce=False eps", make_arg((2, 3), key=(op, 6), low=0.2, high=3.0),
                    make_arg((2, 3), key=(op, 7), low=0.0, high=3.0), False, False, None, 0.1, False)],
    torch="torch.nn.functional.poisson_nll_loss",
    doc="exp(input) - target input (log_input) or input - target log(input + eps), plus with `full` the "
        "Stirling term target log(target) - target + log(2 pi target) / 2 where target > 1, reduced.")


def _gaussian_nll_loss(input, target, var, full, eps, reduction):
    # as torch.nn.functional.gaussian_nll_loss
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif not isinstance(var, type(input)):
        raise TypeError(f"any() received an invalid combination of arguments - got ({type(var < 0).__name__}), "
                        f"but expected one of: (Tensor input)")
    # NOTE: a value check: a Meta tensor has no values to check
    elif var.device.type != "meta" and bool(any(lt(var, 0))):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            # homoscedastic, one dimension short: (10, 2, 3) and (10, 2)
            var = unsqueeze(var, -1)
        elif input.ndim == var.ndim and math.fsum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass        # homoscedastic, broadcasting over one dimension: (10, 2, 3) and (10, 2, 1)
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # NOTE: PyTorch clamps a clone of var in place under no_grad: the gradient flows as through the clone
    var = var + detach(clamp_min(var, eps) - var)
    loss = 0.5 * (log(var) + pow(input - target, 2) / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


gaussian_nll_loss = defop(
    "gaussian_nll_loss(Tensor input, Tensor target, Tensor var, bool full=False, float eps=1e-06, "
    "str reduction=\"mean\") -> Tensor",
    composite=_gaussian_nll_loss, wraps_numbers=True,
    samples=lambda op: [
        SampleInput("heteroscedastic mean", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1)),
                    make_arg((3, 4), key=(op, 2), low=0.1, high=2.0)),
        SampleInput("one short full sum", make_arg((3, 4), key=(op, 3)), make_arg((3, 4), key=(op, 4)),
                    make_arg((3,), key=(op, 5), low=0.1, high=2.0), True, reduction="sum"),
        SampleInput("broadcast dim none", make_arg((2, 3, 2), key=(op, 6)), make_arg((2, 3, 2), key=(op, 7)),
                    make_arg((2, 1, 2), key=(op, 8), low=0.1, high=2.0), reduction="none"),
        SampleInput("float var", make_arg((4,), key=(op, 9)), make_arg((4,), key=(op, 10)), 0.7),
        # var clamped at eps: its gradient passes the clamp, as PyTorch's, so var is no gradcheck leaf here
        SampleInput("clamped at eps", make_arg((4,), key=(op, 11)), make_arg((4,), key=(op, 12)),
                    creation.tensor([1e-3, 0.5, 2e-3, 1.0], dtype="float64"), False, 0.01)],
    torch="torch.nn.functional.gaussian_nll_loss",
    doc="(log(max(var, eps)) + (input - target)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with `full`), reduced; "
        "var is a tensor of the input's shape, one dimension short, or broadcasting over one dimension, or a "
        "float; the clamp at eps passes the gradient through, as PyTorch's.")


# ---- soft_margin_loss, multilabel_soft_margin_loss --------------------------------------------

def _soft_margin_meta(input, target, reduction):
    check_reduction(reduction)
    full = broadcast_shapes(input.shape, target.shape)
    # NOTE: ATen writes -input * target into a tensor of the input's shape and dtype, in place
    if tuple(full) != tuple(input.shape):
        raise RuntimeError(f"output with shape {sizes(input.shape)} doesn't match the broadcast shape {sizes(full)}")
    if np.dtype(input.dtype).kind != "f":
        check_result_cast(dtypes.get_default_dtype().np, np.dtype(input.dtype))
    return MetaArray(input.shape if reduction == "none" else (), input.dtype)


def _soft_margin_kernel(xp, input, target, reduction):
    _soft_margin_meta(input, target, reduction)
    z = (-input * target).astype(input.dtype, copy=False)
    loss = xp.log(xp.exp(z) + 1)        # ATen's output = log(1 + exp(-input * target))
    return xp.asarray(_reduce(xp, loss, reduction)).astype(input.dtype, copy=False)


def _soft_margin_grad(grad, input, target, reduction):
    # PyTorch's soft_margin_loss_backward (its decomposition), in agrad ops: differentiable again
    g = target * grad * (sigmoid(target * input) - 1)
    return g / input.numel() if reduction == "mean" else g


_soft_margin_loss = defop(
    "_soft_margin_loss(Tensor input, Tensor target, str reduction) -> Tensor",
    kernel=_soft_margin_kernel, meta=_soft_margin_meta,
    grads={"input": _soft_margin_grad, "target": NotDifferentiable("soft_margin_loss")},
    backward_name="SoftMarginLossBackward0",
    samples=lambda op: [SampleInput("mean", make_arg((3, 4), key=(op, 0)), _sign_target((3, 4), (op, 1)), "mean"),
                        SampleInput("none", make_arg((5,), key=(op, 2)), make_arg((5,), key=(op, 3),
                                                                                 requires_grad=False), "none")],
    torch="lambda x, t, reduction: torch._C._nn.soft_margin_loss(x, t, " + _ENUM + ")",
    doc="ATen's soft_margin_loss; soft_margin_loss is the public op (it takes size_average and reduce).")


def _soft_margin_loss_public(input, target, size_average, reduce, reduction):
    return _soft_margin_loss(input, target, _reduction_arg(size_average, reduce, reduction))


soft_margin_loss = defop(
    f"soft_margin_loss(Tensor input, Tensor target, {_LEGACY}, str reduction=\"mean\") -> Tensor",
    composite=_soft_margin_loss_public,
    samples=lambda op: [
        SampleInput("mean", make_arg((3, 4), key=(op, 0)), _sign_target((3, 4), (op, 1))),
        SampleInput("sum broadcast target", make_arg((3, 4), key=(op, 2)), _sign_target((4,), (op, 3)),
                    reduction="sum"),
        SampleInput("none 0-d", make_arg((), key=(op, 4)), _sign_target((), (op, 5)), reduction="none"),
        SampleInput("legacy size_average=False reduce=False", make_arg((2, 3), key=(op, 6)),
                    _sign_target((2, 3), (op, 7)), False, False)],
    torch="torch.nn.functional.soft_margin_loss",
    doc="log(1 + exp(-target * input)), reduced (the two-class logistic loss for targets 1 and -1).")


def _multilabel_soft_margin_loss(input, target, weight, size_average, reduce, reduction):
    # as torch.nn.functional.multilabel_soft_margin_loss
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    class_dim = input.ndim - 1
    loss = sum(loss, [class_dim]) / input.shape[class_dim]      # one loss per sample
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    raise ValueError(reduction + " is not valid")


multilabel_soft_margin_loss = defop(
    f"multilabel_soft_margin_loss(Tensor input, Tensor target, Tensor? weight=None, {_LEGACY}, "
    f"str reduction=\"mean\") -> Tensor",
    composite=_multilabel_soft_margin_loss,
    samples=lambda op: [
        SampleInput("mean", make_arg((3, 4), key=(op, 0)),
                    make_arg((3, 4), key=(op, 1), low=0, high=2, integer=True, requires_grad=False)),
        SampleInput("weight none", make_arg((3, 4), key=(op, 2)), make_arg((3, 4), key=(op, 3), low=0.0, high=1.0),
                    make_arg((4,), key=(op, 4), low=0.5, high=2.0, requires_grad=False), reduction="none"),
        SampleInput("(4,) sum", make_arg((4,), key=(op, 5)), make_arg((4,), key=(op, 6), low=0.0, high=1.0),
                    reduction="sum"),
        SampleInput("legacy size_average=False", make_arg((2, 3), key=(op, 7)),
                    make_arg((2, 3), key=(op, 8), low=0.0, high=1.0), None, False)],
    torch="torch.nn.functional.multilabel_soft_margin_loss",
    doc="-(target log sigmoid(input) + (1 - target) log sigmoid(-input)), weighted per class, averaged over "
        "the classes (the last dimension), then reduced over the samples.")
