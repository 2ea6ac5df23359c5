"""The multi-class margin losses (ATen's LossMultiMargin, LossMultiLabelMargin and the
shape checks of LossMulti.h): multi_margin_loss and multilabel_margin_loss.

Each is ATen's primitive (`_multi_margin_loss`, `_multilabel_margin_loss`: one kernel,
MultiMarginLossBackward0 / MultilabelMarginLossBackward0) with ATen's backward op, whose own
derivative PyTorch does not implement (its Node raises, as PyTorch's), under a public
composite that takes torch.nn.functional's arguments (`size_average`/`reduce` included) and
makes its Python checks. An input is a (C,) vector or an (N, C) batch; a multilabel target
lists each sample's classes and ends at its first -1.
"""
from __future__ import annotations

import numpy as np

from ... import creation
from ...backends.meta import MetaArray
from ...errors import DtypeError
from ...messages import require_floating, scalar_type_name, sizes
from ..registry import NotDifferentiable, defop
from ..samples import SampleInput, make_arg
from .loss import _ENUM, _LEGACY, _reduction_arg, check_reduction

# ---- shared checks (LossMulti.h) ----------------------------------------------------------------


def _frames(input):
    """(nframe, dim) of a (C,) or (N, C) input (a 0-d input is one frame of one class)."""
    ndim = input.ndim
    if not ((ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0) or ndim == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{sizes(input.shape)}")
    if ndim <= 1:
        return 1, (1 if ndim == 0 else input.shape[0])
    return input.shape[0], input.shape[1]


def _require(expected, np_dtype):
    """ATen's data_ptr<T>() of a tensor of another dtype."""
    expected, np_dtype = np.dtype(expected), np.dtype(np_dtype)
    if np_dtype != expected:
        raise DtypeError(f"expected scalar type {scalar_type_name(expected)} but found {scalar_type_name(np_dtype)}")


def _int_target(values):
    return creation.tensor(values, dtype="int64")


# ---- multi_margin_loss --------------------------------------------------------------------------

def _multi_margin_check(input, target, p, weight, reduction):
    check_reduction(reduction)
    if p != 1 and p != 2:
        raise RuntimeError("only p == 1 and p == 2 supported")
    nframe, dim = _frames(input)
    if not (target.ndim <= 1 and int(np.prod(target.shape)) == nframe):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {sizes(target.shape)}. "
                           f"Input has shape {sizes(input.shape)}.")
    if weight is not None and not (weight.ndim <= 1 and int(np.prod(weight.shape)) == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {sizes(weight.shape)}")
    require_floating("multi_margin_loss_cpu_kernel", input.dtype)
    _require(np.int64, target.dtype)
    if weight is not None:
        _require(input.dtype, weight.dtype)
    return nframe, dim


def _multi_margin_meta(input, target, p, margin, weight, reduction):
    _multi_margin_check(input, target, p, weight, reduction)
    return MetaArray((input.shape[0],) if reduction == "none" and target.ndim > 0 else (), input.dtype)


def _multi_margin_terms(xp, input, target, p, margin, weight, nframe, dim):
    """(x, targets, z, where each term counts, its weight): the (nframe, dim) terms of the sums."""
    x = input.reshape(nframe, dim)
    t = target.reshape(nframe)
    if bool(((t < 0) | (t >= dim)).any()):
        raise RuntimeError("target out of range")
    classes = xp.arange(dim)
    x_target = xp.take_along_axis(x, t[:, None], axis=1)
    z = margin - x_target + x
    counts = (z > 0) & (classes != t[:, None])
    w = weight.reshape(dim)[t][:, None] if weight is not None else None
    return x, t, z, counts, w


def _multi_margin_kernel(xp, input, target, p, margin, weight, reduction):
    nframe, dim = _multi_margin_check(input, target, p, weight, reduction)
    shape = (nframe,) if reduction == "none" and target.ndim > 0 else ()
    if input.size == 0:
        return xp.zeros(shape, dtype=input.dtype)
    _, _, z, counts, w = _multi_margin_terms(xp, input, target, p, margin, weight, nframe, dim)
    h = z if p == 1 else z * z
    if w is not None:
        h = h * w
    per_frame = xp.where(counts, h, 0).sum(axis=1) / dim
    if reduction == "none":
        return per_frame.reshape(shape).astype(input.dtype, copy=False)
    total = per_frame.sum()
    return xp.asarray(total / nframe if reduction == "mean" else total).astype(input.dtype, copy=False)


def _multi_margin_backward_meta(grad_output, input, target, p, margin, weight, reduction):
    nframe, _ = _multi_margin_check(input, target, p, weight, reduction)
    if reduction == "none":
        if target.ndim > 0 and tuple(grad_output.shape) != (nframe,):
            raise RuntimeError(f"multi_margin_loss_backward: expected grad_output to have shape [{nframe}] when "
                               f"reduction='none', but got {sizes(grad_output.shape)}")
        if target.ndim == 0 and grad_output.ndim != 0:
            raise RuntimeError(f"multi_margin_loss_backward: expected grad_output to be a 0-D scalar when "
                               f"reduction='none' with a 0-D target, but got {sizes(grad_output.shape)}")
    return MetaArray(input.shape, input.dtype)


def _multi_margin_backward_kernel(xp, grad_output, input, target, p, margin, weight, reduction):
    _multi_margin_backward_meta(grad_output, input, target, p, margin, weight, reduction)
    nframe, dim = _frames(input)
    if input.size == 0:
        return xp.zeros(input.shape, dtype=input.dtype)
    _, t, z, counts, w = _multi_margin_terms(xp, input, target, p, margin, weight, nframe, dim)
    g = 1.0 / (nframe * dim) if reduction == "mean" else 1.0 / dim
    h = g if p == 1 else 2 * g * z
    if w is not None:
        h = h * w
    h = xp.where(counts, h, 0)
    # each counted class gets h, the target class minus their sum
    grad = h - (xp.arange(dim) == t[:, None]) * h.sum(axis=1, keepdims=True)
    scale = grad_output.reshape(nframe, 1) if reduction == "none" and grad_output.ndim > 0 else grad_output
    return (grad * scale).reshape(input.shape).astype(input.dtype, copy=False)


def _not_implemented(name):
    # derivatives.yaml's not_implemented: the Node is recorded, its backward raises
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


def _multi_margin_samples(op, backward=False):
    specs = [("mean", (3, 4), [0, 3, 1], 1, 1.0, None, "mean"),
             ("p=2 margin weight sum", (3, 4), [2, 2, 0], 2, 0.7, (4,), "sum"),
             ("none", (4, 3), [1, 0, 2, 1], 1, 1.5, None, "none"),
             ("(5,) 0-d target none", (5,), 3, 2, 1.0, (5,), "none")]
    out = []
    for i, (name, shape, t, p, margin, wshape, reduction) in enumerate(specs):
        x = make_arg(shape, key=(op, i, "x"), low=-1.0, high=1.0)
        w = make_arg(wshape, key=(op, i, "w"), low=0.5, high=2.0, requires_grad=False) if wshape else None
        if backward:
            gshape = (len(t),) if reduction == "none" and not isinstance(t, int) else ()
            out.append(SampleInput(name, make_arg(gshape, key=(op, i, "g"), requires_grad=False), x.detach(),
                                   _int_target(t), p, margin,
                                   w, reduction))
        else:
            out.append(SampleInput(name, x, _int_target(t), p, margin, w, reduction))
    return out


multi_margin_loss_backward = defop(
    "multi_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, Scalar p, Scalar margin, "
    "Tensor? weight=None, str reduction=\"mean\") -> Tensor",
    kernel=_multi_margin_backward_kernel, meta=_multi_margin_backward_meta,
    grads={"grad_output": _not_implemented("multi_margin_loss_backward"),
           "self": _not_implemented("multi_margin_loss_backward"), "target": None, "weight": None},
    # PyTorch records a node named NotImplemented whose backward raises (derivatives.yaml: not_implemented)
    backward_name="NotImplemented", differentiable=False,
    samples=lambda op: _multi_margin_samples(op, backward=True), gradgrad=False,
    torch="lambda g, x, t, p, margin, weight=None, reduction='mean': torch.ops.aten.multi_margin_loss_backward("
          "g, x, t, p, margin, weight, " + _ENUM + ")",
    doc="The gradient of multi_margin_loss: for each class d counted in the sum, (1 or 2z) * weight[target] / "
        "C at d and minus that at the target class, times grad_output (divided by N for 'mean').")

_multi_margin_loss = defop(
    "_multi_margin_loss(Tensor self, Tensor target, Scalar p, Scalar margin, Tensor? weight, str reduction) -> Tensor",
    kernel=_multi_margin_kernel, meta=_multi_margin_meta,
    grads={"self": lambda grad, self, target, p, margin, weight, reduction:
               multi_margin_loss_backward(grad, self, target, p, margin, weight, reduction),
           "target": None, "weight": NotDifferentiable("multi_margin_loss")},
    backward_name="MultiMarginLossBackward0", gradgrad=False,
    samples=_multi_margin_samples,
    torch="lambda x, t, p, margin, weight, reduction: torch._C._nn.multi_margin_loss(x, t, p, margin, weight, " +
          _ENUM + ")",
    doc="ATen's multi_margin_loss; multi_margin_loss is the public op (PyTorch's Python checks, size_average "
        "and reduce).")


def _multi_margin_loss_public(input, target, p, margin, weight, size_average, reduce, reduction):
    reduction = _reduction_arg(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    return _multi_margin_loss(input, target, p, margin, weight, reduction)


multi_margin_loss = defop(
    f"multi_margin_loss(Tensor input, Tensor target, Scalar p=1, Scalar margin=1.0, Tensor? weight=None, "
    f"{_LEGACY}, str reduction=\"mean\") -> Tensor",
    composite=_multi_margin_loss_public, gradgrad=False,
    samples=lambda op: [
        SampleInput("mean", make_arg((3, 4), key=(op, 0), low=-1.0, high=1.0), _int_target([1, 0, 3])),
        SampleInput("p=2 weight none", make_arg((3, 4), key=(op, 1), low=-1.0, high=1.0), _int_target([2, 2, 0]), 2,
                    0.8, make_arg((4,), key=(op, 2), low=0.5, high=2.0, requires_grad=False), reduction="none"),
        SampleInput("legacy size_average=False", make_arg((2, 5), key=(op, 3), low=-1.0, high=1.0),
                    _int_target([4, 1]), 1, 1.0, None, False)],
    torch="torch.nn.functional.multi_margin_loss",
    doc="The multi-class hinge loss: sum over classes d != target of max(0, margin - x[target] + x[d])^p "
        "(p 1 or 2), times weight[target], over C; one value per sample, reduced.")


# ---- multilabel_margin_loss ---------------------------------------------------------------------

def _multilabel_check(input, target, reduction):
    check_reduction(reduction)
    nframe, dim = _frames(input)
    if input.ndim <= 1:
        ok = target.ndim <= 1 and int(np.prod(target.shape)) == dim
    else:
        ok = target.ndim == 2 and tuple(target.shape) == (nframe, dim)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {sizes(target.shape)} for input of size: {sizes(input.shape)}")
    return nframe, dim


def _multilabel_meta(self, target, reduction):
    nframe, _ = _multilabel_check(self, target, reduction)
    require_floating("multilabel_margin_loss_forward_out_frame", self.dtype)
    _require(np.int64, target.dtype)
    return MetaArray((nframe,) if reduction == "none" and target.ndim > 1 else (), self.dtype)


def _multilabel_terms(xp, self, target, nframe, dim):
    """The (nframe, targets, classes) mask of the hinge terms counted, and their z = 1 - x[y] + x[d]."""
    t = target.reshape(nframe, dim)
    if t.size and (int(t.min()) < -1 or int(t.max()) >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    require_floating("multilabel_margin_loss_forward_out_frame", self.dtype)
    _require(np.int64, target.dtype)
    x = self.reshape(nframe, dim)
    listed = xp.cumprod(t >= 0, axis=1).astype(bool)         # the targets before the first -1
    safe = xp.where(listed, t, 0)
    is_target = ((safe[:, :, None] == xp.arange(dim)) & listed[:, :, None]).any(axis=1)
    z = 1 - xp.take_along_axis(x, safe, axis=1)[:, :, None] + x[:, None, :]
    counts = listed[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return safe, listed, z, counts


def _multilabel_kernel(xp, self, target, reduction):
    _multilabel_meta(self, target, reduction)
    nframe, dim = _frames(self)
    shape = (nframe,) if reduction == "none" and target.ndim > 1 else ()
    if self.size == 0:
        return xp.zeros(shape, dtype=self.dtype)
    _, _, z, counts = _multilabel_terms(xp, self, target, nframe, dim)
    per_frame = xp.where(counts, z, 0).sum(axis=(1, 2)) / dim
    if reduction == "none":
        return per_frame.reshape(shape).astype(self.dtype, copy=False)
    total = per_frame.sum()
    return xp.asarray(total / nframe if reduction == "mean" else total).astype(self.dtype, copy=False)


def _multilabel_backward_meta(grad_output, self, target, reduction):
    _multilabel_meta(self, target, reduction)
    return MetaArray(self.shape, self.dtype)


def _multilabel_backward_kernel(xp, grad_output, self, target, reduction):
    _multilabel_backward_meta(grad_output, self, target, reduction)
    nframe, dim = _frames(self)
    if self.size == 0:
        return xp.zeros(self.shape, dtype=self.dtype)
    safe, listed, _, counts = _multilabel_terms(xp, self, target, nframe, dim)
    g = 1.0 / (nframe * dim) if reduction == "mean" else 1.0 / dim
    counts = counts.astype(self.dtype)
    # + g at each counted class d, - g at the target y_j of each counted term
    per_target = counts.sum(axis=2)                                       # (nframe, targets)
    at_target = ((safe[:, :, None] == xp.arange(dim)) & listed[:, :, None]) * per_target[:, :, None]
    grad = g * (counts.sum(axis=1) - at_target.sum(axis=1))
    scale = grad_output.reshape(nframe, 1) if reduction == "none" and grad_output.ndim > 0 else grad_output
    return (grad * scale).reshape(self.shape).astype(self.dtype, copy=False)


def _multilabel_samples(op, backward=False):
    specs = [("mean", (3, 4), [[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 0, 0]], "mean"),
             ("repeated target sum", (2, 5), [[4, 4, 1, -1, 3], [0, -1, -1, -1, -1]], "sum"),
             ("none", (3, 3), [[2, -1, 0], [0, 1, -1], [1, 0, 2]], "none"),
             ("(4,) none", (4,), [2, 0, -1, 3], "none")]
    out = []
    for i, (name, shape, t, reduction) in enumerate(specs):
        x = make_arg(shape, key=(op, i, "x"), low=-1.0, high=1.0)
        if backward:
            gshape = (shape[0],) if reduction == "none" and len(shape) == 2 else ()
            out.append(SampleInput(name, make_arg(gshape, key=(op, i, "g"), requires_grad=False), x.detach(),
                                   _int_target(t), reduction))
        else:
            out.append(SampleInput(name, x, _int_target(t), reduction))
    return out


multilabel_margin_loss_backward = defop(
    "multilabel_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, str reduction) -> Tensor",
    kernel=_multilabel_backward_kernel, meta=_multilabel_backward_meta,
    grads={"grad_output": _not_implemented("multilabel_margin_loss_backward"),
           "self": _not_implemented("multilabel_margin_loss_backward"), "target": None},
    backward_name="NotImplemented", differentiable=False,
    samples=lambda op: _multilabel_samples(op, backward=True), gradgrad=False,
    torch="lambda g, x, t, reduction: torch.ops.aten.multilabel_margin_loss_backward(g, x, t, " + _ENUM +
          ", torch.ops.aten.multilabel_margin_loss_forward(x, t, " + _ENUM + ")[1])",
    doc="The gradient of multilabel_margin_loss: +1/C at each class counted, -1/C at the target of each "
        "counted term, times grad_output (divided by N for 'mean'). ATen's takes is_target too; this one "
        "recomputes it from the target.")

_multilabel_margin_loss = defop(
    "_multilabel_margin_loss(Tensor self, Tensor target, str reduction) -> Tensor",
    kernel=_multilabel_kernel, meta=_multilabel_meta,
    grads={"self": lambda grad, self, target, reduction: multilabel_margin_loss_backward(grad, self, target,
                                                                                          reduction),
           "target": None},
    backward_name="MultilabelMarginLossBackward0", gradgrad=False,
    samples=_multilabel_samples,
    torch="lambda x, t, reduction: torch._C._nn.multilabel_margin_loss(x, t, " + _ENUM + ")",
    doc="ATen's multilabel_margin_loss (its forward's loss; is_target is recomputed where needed); "
        "multilabel_margin_loss is the public op.")


def _multilabel_margin_loss_public(input, target, size_average, reduce, reduction):
    return _multilabel_margin_loss(input, target, _reduction_arg(size_average, reduce, reduction))


multilabel_margin_loss = defop(
    f"multilabel_margin_loss(Tensor input, Tensor target, {_LEGACY}, str reduction=\"mean\") -> Tensor",
    composite=_multilabel_margin_loss_public, gradgrad=False,
    samples=lambda op: [
        SampleInput("mean", make_arg((2, 4), key=(op, 0), low=-1.0, high=1.0), _int_target([[3, 0, -1, 1],
                                                                                             [1, 2, 3, 0]])),
        SampleInput("legacy reduce=False", make_arg((2, 3), key=(op, 1), low=-1.0, high=1.0),
                    _int_target([[2, -1, 0], [0, 1, -1]]), None, False)],
    torch="torch.nn.functional.multilabel_margin_loss",
    doc="The multi-label hinge loss: for each listed target y (the classes before the first -1) and each "
        "class d not listed, max(0, 1 - (x[y] - x[d])), summed over C; one value per sample, reduced.")
