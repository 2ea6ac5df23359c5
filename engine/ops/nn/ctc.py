"""The Connectionist Temporal Classification loss (ATen's LossCTC): ctc_loss.

`_ctc_loss` is ATen's CPU kernel, Graves et al.'s alpha recursion in log space, one step per
time step over the whole batch and every extended-target position at once; its backward op
`_ctc_loss_backward` runs the beta recursion and returns PyTorch's gradient,
exp(log_probs) - exp(log(sum of alpha beta over the positions of each label) + nll - log_probs),
times the incoming gradient: the gradient through the log_softmax that makes log_probs, not the
derivative with respect to log_probs as free variables (it differs by exp(log_probs), which a
log_softmax's backward removes), so neither op is gradchecked on its own: their values and
gradients are compared with PyTorch's (tests/engine/test_nn_losses.py gradchecks ctc_loss
through a log_softmax). PyTorch implements no second derivative; the Node of the backward op
raises, as PyTorch's.

ATen's `_ctc_loss` also returns log_alpha, uninitialised outside each sample's lengths; here it
is recomputed by the backward op, so `_ctc_loss` returns the loss alone. `ctc_loss`, the public
op, is ATen's ctc_loss_impl: a (T, C) input is one unbatched sample, the targets are made
int64, zero_infinity zeroes infinite losses (and their gradients), 'mean' divides each loss by
its target length (at least 1) before averaging. Lengths are int tensors here;
torch.nn.functional.ctc_loss's lists and tuples are made tensors by agrad.nn.functional.
"""
from __future__ import annotations

import numpy as np

from ... import creation
from ...backends.meta import MetaArray
from ...errors import DtypeError, ShapeError
from ...messages import require_floating, tensor_type_name
from ..conversion import to
from ..pointwise.binary import clamp_min, eq, where
from ..reduce.arithmetic import (
    mean,
    sum,  # noqa: A004
)
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.view import squeeze, unsqueeze
from .loss import get_enum

_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def _ints(xp, t) -> list:
    """A lengths array's values on the host."""
    return [int(v) for v in np.asarray(t.get() if hasattr(t, "get") else t).reshape(-1)]


def _check_shapes(log_probs, targets, input_lengths, target_lengths, blank):
    """ctc_loss_allocate_outputs' checks that need no values."""
    if targets.dtype not in (np.int64, np.int32):
        raise DtypeError(f"Expected tensor for argument #2 'targets' to have scalar type Long; but got "
                         f"{tensor_type_name(targets.dtype)} instead{_CHECKING}")
    if log_probs.ndim != 3:
        raise ShapeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for argument #1 "
                         f"'log_probs'{_CHECKING}")
    if not 1 <= targets.ndim < 3:
        raise ShapeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for argument #2 "
                         f"'targets'{_CHECKING}")
    batch, labels = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if t.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        if int(np.prod(t.shape)) != batch:
            raise RuntimeError(f"{name} must be of size batch_size")
    if targets.ndim == 2 and targets.shape[0] != batch:
        raise ShapeError(f"Expected tensor to have size {batch} at dimension 0, but got size {targets.shape[0]} for "
                         f"argument #2 'targets'{_CHECKING}")
    require_floating("ctc_loss_cpu", log_probs.dtype)


def _ctc_meta(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    _check_shapes(log_probs, targets, input_lengths, target_lengths, blank)
    return MetaArray((log_probs.shape[1],), log_probs.dtype)


def _extended_targets(xp, log_probs, targets, il, tl, blank):
    """The checks on the lengths' values, and (extended targets l' (B, 2S+1) with blank where a
    sample's l' has ended, whether position s may be reached from s - 2)."""
    max_input = log_probs.shape[0]
    batch = log_probs.shape[1]
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v}{_CHECKING}")
    if targets.ndim == 1:
        if targets.shape[0] != np.sum(tl, dtype=np.int64):
            raise ShapeError(f"Expected tensor to have size {int(np.sum(tl))} at dimension 0, but got size "
                             f"{targets.shape[0]} for argument #2 'targets'{_CHECKING}")
    elif targets.shape[1] < max(tl, default=0):
        raise ShapeError(f"Expected tensor to have size at least {max(tl)} at dimension 1, but got size "
                         f"{targets.shape[1]} for argument #2 'targets'{_CHECKING}")
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v}{_CHECKING}")
        if v > max_input:
            raise RuntimeError(f"Expected input_lengths to have value at most {max_input}, but got value {v}"
                               f"{_CHECKING}")
    s_max = max(tl, default=0)
    length = 2 * s_max + 1
    tl_a = xp.asarray(np.asarray(tl, dtype=np.int64).reshape(batch, 1))
    pos = xp.arange(s_max)
    if targets.ndim == 1:
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64) if batch else np.zeros(0, np.int64)
        flat = xp.asarray(starts.reshape(batch, 1)) + pos
        padded = targets[xp.minimum(flat, max(targets.shape[0] - 1, 0))] if targets.shape[0] else \
            xp.zeros((batch, s_max), dtype=np.int64)
    else:
        padded = targets[:, :s_max]
    padded = xp.where(pos < tl_a, padded, blank).astype(np.int64)
    prime = xp.full((batch, length), blank, dtype=np.int64)
    prime[:, 1::2] = padded
    s = xp.arange(length)
    skip = xp.zeros((batch, length), dtype=bool)
    skip[:, 2:] = prime[:, 2:] != prime[:, :-2]
    return prime, skip, (s <= 2 * tl_a)


def _alphas(xp, log_probs, prime, skip, valid, il):
    """log alpha (B, T, 2S+1) (-inf outside each sample's lengths) and the log probabilities of l'."""
    steps = log_probs.shape[0]
    neginf = -np.inf
    lp = xp.stack([xp.take_along_axis(log_probs[t], prime, axis=1) for t in range(steps)], axis=1)  # (B, T, L)
    alpha = xp.full(lp.shape, neginf, dtype=log_probs.dtype)
    il_a = xp.asarray(np.asarray(il, dtype=np.int64))
    if steps == 0 or lp.shape[2] == 0:
        return alpha, lp
    first = xp.where(valid[:, :2], lp[:, 0, :2], neginf)
    alpha[:, 0, :2] = xp.where((il_a > 0)[:, None], first, neginf)
    for t in range(1, steps):
        la1 = alpha[:, t - 1]
        la2 = xp.full(la1.shape, neginf, dtype=la1.dtype)
        la2[:, 1:] = la1[:, :-1]
        la3 = xp.full(la1.shape, neginf, dtype=la1.dtype)
        la3[:, 2:] = la1[:, :-2]
        la3 = xp.where(skip, la3, neginf)
        lamax = xp.maximum(xp.maximum(la1, la2), la3)
        lamax = xp.where(lamax == neginf, 0, lamax)     # cannot do -inf - -inf
        step = xp.log(xp.exp(la1 - lamax) + xp.exp(la2 - lamax) + xp.exp(la3 - lamax)) + lamax + lp[:, t]
        alpha[:, t] = xp.where(valid & (t < il_a)[:, None], step, neginf)
    return alpha, lp


def _nll(xp, alpha, il, tl, dtype):
    out = []
    for b, (i, n) in enumerate(zip(il, tl)):
        if i == 0:
            out.append(0.0 if n == 0 else np.inf)
        elif n == 0:
            out.append(-float(alpha[b, i - 1, 0]))
        else:
            l1, l2 = float(alpha[b, i - 1, 2 * n]), float(alpha[b, i - 1, 2 * n - 1])
            m = max(l1, l2)
            m = 0.0 if m == -np.inf else m
            out.append(-(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m))
    # NOTE: computed in the input's dtype, as ATen's scalar_t
    return xp.asarray(np.array(out, dtype=np.float64).astype(dtype))


def _ctc_kernel(xp, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    _check_shapes(log_probs, targets, input_lengths, target_lengths, blank)
    il, tl = _ints(xp, input_lengths), _ints(xp, target_lengths)
    prime, skip, valid = _extended_targets(xp, log_probs, targets, il, tl, blank)
    alpha, _ = _alphas(xp, log_probs, prime, skip, valid, il)
    if log_probs.dtype == np.float32:       # ATen's alpha recursion runs in the input's dtype
        alpha = alpha.astype(np.float32)
    return _nll(xp, alpha, il, tl, log_probs.dtype)


def _ctc_backward_meta(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, blank,
                       zero_infinity):
    _check_shapes(log_probs, targets, input_lengths, target_lengths, blank)
    return MetaArray(log_probs.shape, log_probs.dtype)


def _ctc_backward_kernel(xp, grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, blank,
                         zero_infinity):
    _check_shapes(log_probs, targets, input_lengths, target_lengths, blank)
    il, tl = _ints(xp, input_lengths), _ints(xp, target_lengths)
    prime, skip, valid = _extended_targets(xp, log_probs, targets, il, tl, blank)
    steps, batch, labels = log_probs.shape
    neginf = -np.inf
    alpha, lp = _alphas(xp, log_probs, prime, skip, valid, il)
    length = lp.shape[2]
    il_a = xp.asarray(np.asarray(il, dtype=np.int64))
    tl_a = xp.asarray(np.asarray(tl, dtype=np.int64))
    s = xp.arange(length)
    # beta (eq. 10 and 11): from each sample's last time step back to 0
    beta = xp.full(lp.shape, neginf, dtype=lp.dtype)
    last = (s[None, :] >= 2 * tl_a[:, None] - 1) & valid
    skip_back = xp.zeros((batch, length), dtype=bool)
    skip_back[:, :-2] = (prime[:, 2:] != prime[:, :-2]) & (s[:-2] < 2 * tl_a[:, None] - 1)
    for t in range(steps - 1, -1, -1):
        lb1 = beta[:, t + 1] if t + 1 < steps else xp.full((batch, length), neginf, dtype=lp.dtype)
        lb2 = xp.full(lb1.shape, neginf, dtype=lb1.dtype)
        lb2[:, :-1] = lb1[:, 1:]
        lb2 = xp.where(s < 2 * tl_a[:, None], lb2, neginf)
        lb3 = xp.full(lb1.shape, neginf, dtype=lb1.dtype)
        lb3[:, :-2] = lb1[:, 2:]
        lb3 = xp.where(skip_back, lb3, neginf)
        lbmax = xp.maximum(xp.maximum(lb1, lb2), lb3)
        lbmax = xp.where(lbmax == neginf, 0, lbmax)
        step = xp.log(xp.exp(lb1 - lbmax) + xp.exp(lb2 - lbmax) + xp.exp(lb3 - lbmax)) + lbmax + lp[:, t]
        start = xp.where(last, lp[:, t], neginf)
        beta[:, t] = xp.where(valid & (t < il_a - 1)[:, None], step,
                              xp.where((t == il_a - 1)[:, None], start, neginf))
    # the sum of alpha beta over the positions of each label (eq. 16), added in ATen's order
    alpha_beta = alpha + beta
    collected = xp.full((batch, steps, labels), neginf, dtype=lp.dtype)
    rows = xp.arange(batch)
    for k in range(length - 1, -1, -1):
        label = prime[:, k]
        cur = collected[rows, :, label]                 # (B, T)
        new = alpha_beta[:, :, k]
        top = xp.maximum(cur, new)
        summed = xp.log(xp.exp(cur - top) + xp.exp(new - top)) + top
        collected[rows, :, label] = xp.where(cur == neginf, new, xp.where(new == neginf, cur, summed))
    collected = xp.transpose(collected, (1, 0, 2))       # (T, B, C)
    nll = neg_log_likelihood.reshape(1, batch, 1)
    out = (xp.exp(log_probs) - xp.exp(collected + nll - log_probs)) * grad.reshape(1, batch, 1)
    kept = xp.arange(steps)[:, None] < il_a[None, :]
    if zero_infinity:
        kept = kept & (neg_log_likelihood != np.inf)[None, :]
    return xp.where(kept[:, :, None], out, 0).astype(log_probs.dtype, copy=False)


def _lengths(values):
    return creation.tensor(values, dtype="int64")


def _log_probs(shape, key):
    """Log-probabilities: a log_softmax over the last dimension of uniform logits."""
    x = make_arg(shape, key=key, requires_grad=False)
    x = x - x.logsumexp(-1, keepdim=True)
    return x.detach().requires_grad_(True)


def _ctc_samples(op, backward=False):
    specs = [("padded targets", (6, 3, 5), [[1, 2, 2], [3, 3, 0], [4, 1, 2]], [6, 5, 6], [3, 2, 1], 0, False),
             ("concatenated targets blank=4", (5, 2, 5), [1, 1, 2, 0], [5, 4], [3, 1], 4, False),
             ("empty target, zero input", (4, 3, 3), [[1, 2], [2, 2], [1, 1]], [4, 0, 3], [0, 0, 2], 0, False),
             ("impossible zero_infinity", (3, 2, 4), [[1, 1, 1], [2, 3, 0]], [3, 3], [3, 2], 0, True)]
    out = []
    for i, (name, shape, targets, il, tl, blank, zero_infinity) in enumerate(specs):
        lp = _log_probs(shape, (op, i))
        args = (lp, _lengths(targets), _lengths(il), _lengths(tl))
        if backward:
            lp = lp.detach()
            nll = _ctc_loss(lp, *args[1:], blank, zero_infinity)
            g = make_arg((shape[1],), key=(op, i, "g"), requires_grad=False)
            out.append(SampleInput(name, g, lp, *args[1:], nll, blank, zero_infinity))
        else:
            out.append(SampleInput(name, *args, blank, zero_infinity))
    return out


def _ctc_not_implemented(grad):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


_ctc_loss_backward = defop(
    "_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
    "Tensor neg_log_likelihood, int blank, bool zero_infinity=False) -> Tensor",
    kernel=_ctc_backward_kernel, meta=_ctc_backward_meta,
    # PyTorch records a node named NotImplemented whose backward raises (derivatives.yaml: not_implemented)
    grads={"grad": _ctc_not_implemented, "log_probs": _ctc_not_implemented, "targets": None, "input_lengths": None,
           "target_lengths": None, "neg_log_likelihood": None},
    backward_name="NotImplemented", differentiable=False, gradgrad=False,
    samples=lambda op: _ctc_samples(op, backward=True),
    torch="lambda g, lp, t, il, tl, nll, blank, zero_infinity=False: torch.ops.aten._ctc_loss_backward(g, lp, t, "
          "il.tolist(), tl.tolist(), nll, torch._ctc_loss(lp, t, il.tolist(), tl.tolist(), blank, zero_infinity)[1], "
          "blank, zero_infinity)",
    doc="The gradient of _ctc_loss (PyTorch's: through the log_softmax of log_probs); zero past each input "
        "length, and for infinite losses with zero_infinity. ATen's takes log_alpha too; this one recomputes it.")

_ctc_loss = defop(
    "_ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, "
    "bool zero_infinity=False) -> Tensor",
    kernel=_ctc_kernel, meta=_ctc_meta,
    grads={"log_probs": lambda grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result:
               _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, result, blank,
                                  zero_infinity),
           "targets": None, "input_lengths": None, "target_lengths": None},
    backward_name="CtcLossBackward0", differentiable=False, gradgrad=False,
    samples=_ctc_samples,
    # NOTE: PyTorch's lists-of-lengths overload, the one its ctc_loss calls (CtcLossBackward0; the tensors'
    # overload records CtcLossBackward1)
    torch="lambda lp, t, il, tl, blank=0, zero_infinity=False: torch._ctc_loss(lp, t, il.tolist(), tl.tolist(), "
          "blank, zero_infinity)[0]",
    doc="ATen's _ctc_loss: each sample's negative log likelihood of its target, (T, N, C) log-probabilities, "
        "int64 or int32 targets padded (N, S) or concatenated; ctc_loss is the public op.")


def _ctc_loss_public(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    reduction = get_enum(reduction)
    for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if t.dtype.is_floating_point or t.dtype.name == "bool":
            raise RuntimeError(f"{name} must be integral")
    batched = log_probs.ndim == 3
    if not batched:
        log_probs = unsqueeze(log_probs, 1)
    if targets.dtype.name != "int64":
        targets = to(targets, dtype="int64")
    res = _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        res = where(eq(res, float("inf")), creation.zeros([], dtype=res.dtype, device=res.device), res)
    if reduction == "mean":
        return mean(res / to(clamp_min(target_lengths, 1), dtype=res.dtype))
    if reduction == "sum":
        return sum(res)
    return res if batched else squeeze(res, 0)


ctc_loss = defop(
    "ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, "
    "str reduction=\"mean\", bool zero_infinity=False) -> Tensor",
    composite=_ctc_loss_public, differentiable=False, gradgrad=False,
    samples=lambda op: [
        SampleInput("mean", _log_probs((6, 2, 4), (op, 0)), _lengths([[1, 2, 3], [3, 3, 0]]), _lengths([6, 5]),
                    _lengths([3, 2])),
        SampleInput("sum int32 targets", _log_probs((5, 2, 4), (op, 1)), _lengths([1, 3, 3]).to(dtype="int32"),
                    _lengths([5, 5]), _lengths([1, 2]), 0, "sum"),
        SampleInput("unbatched none", _log_probs((5, 4), (op, 2)), _lengths([2, 2]), _lengths(5), _lengths(2),
                    reduction="none"),
        SampleInput("zero_infinity none", _log_probs((3, 2, 4), (op, 3)), _lengths([[1, 1, 1], [2, 3, 0]]),
                    _lengths([3, 3]), _lengths([3, 2]), 0, "none", True),
        SampleInput("none blank=3", _log_probs((4, 3, 4), (op, 4)), _lengths([0, 1, 2, 2, 0]), _lengths([4, 4, 3]),
                    _lengths([2, 1, 2]), 3, "none")],
    torch="torch.nn.functional.ctc_loss",
    doc="The CTC loss of each (T, C) sequence of log-probabilities against its target: 'none' per sample, "
        "'sum', or 'mean' of each loss divided by its target length (at least 1); zero_infinity zeroes the "
        "losses no alignment can reach (input shorter than its target) and their gradients.")
