"""Loss functions: nll_loss, cross_entropy, mse_loss, binary_cross_entropy_with_logits.

Primitive where PyTorch's is (NllLossBackward0, MseLossBackward0,
BinaryCrossEntropyWithLogitsBackward0), each with backward ops or formulas in
agrad ops so double backward works; cross_entropy is composite, as in PyTorch
(log_softmax + nll_loss for class indices).

`reduction`, `ignore_index` and `label_smoothing` are keyword-only: PyTorch's
functional forms have the deprecated `size_average`/`reduce` in those positions,
so a positional call could not mean the same thing in both.
"""
from __future__ import annotations

import math

import numpy as np

from .. import creation, dtypes
from ..backends.meta import MetaArray
from ..errors import DimensionError, DtypeError, ShapeError
from ..messages import require_floating, scalar_type_name, sizes
from ..shapes import broadcast_shapes
from .conversion import detach
from .nn import log_softmax
from .pointwise import eq, exp, log, ne, relu, sigmoid, where
from .reduction import sum  # noqa: A004
from .registry import defop
from .samples import SampleInput, make_arg
from .shape import reshape

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
    """(class dim, safe targets, per-target weight with ignored targets at 0)."""
    cdim = 0 if input.ndim == 1 else 1
    c = input.shape[cdim]
    valid = target != ignore_index
    bad = valid & ((target < 0) | (target >= c))
    if bool(bad.any()):
        raise IndexError(f"Target {int(target[bad].ravel()[0])} is out of bounds.")
    safe = xp.where(valid, target, 0)
    w = weight[safe] if weight is not None else xp.ones(target.shape, dtype=input.dtype)
    return cdim, safe, xp.where(valid, w, 0).astype(input.dtype, copy=False)


def _nll_kernel(xp, input, target, weight, reduction, ignore_index):
    _nll_checks(input, target, weight, reduction)
    cdim, safe, w = _picked_weights(xp, input, target, weight, ignore_index)
    picked = xp.take_along_axis(input, xp.expand_dims(safe, cdim), axis=cdim).squeeze(cdim)
    loss = -picked * w
    out = _reduce(xp, loss, reduction, xp.sum(w))
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
           "target": None, "weight": None},
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


def _bce_meta(input, target, weight, pos_weight, reduction):
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size (agrad.Size({list(target.shape)})) must be the same as input size "
                       f"(agrad.Size({list(input.shape)}))")
    require_floating("binary_cross_entropy_with_logits", input.dtype)
    shape = _bce_shape(input, target, weight, pos_weight)
    return MetaArray(shape if reduction == "none" else (), input.dtype)


def _bce_kernel(xp, input, target, weight, pos_weight, reduction):
    _bce_meta(input, target, weight, pos_weight, reduction)
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
    kernel=_bce_kernel, meta=_bce_meta, promote="same",
    grads={"input": _bce_grad_input, "target": _bce_grad_target, "weight": None, "pos_weight": None},
    samples=_bce_samples,
    torch="lambda input, target, weight=None, pos_weight=None, reduction='mean': "
          "torch.nn.functional.binary_cross_entropy_with_logits(input, target, weight, reduction=reduction, "
          "pos_weight=pos_weight)",
    doc="Binary cross entropy of sigmoid(input), computed from the logits stably; pos_weight weighs the "
        "positive term per class (PyTorch's argument order: weight, pos_weight; reduction keyword-only).")
