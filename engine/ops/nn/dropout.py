"""dropout (ATen's Dropout): the input times a seeded Bernoulli mask (`_dropout_mask`),
scaled by 1 / (1 - p), so a seed gives the same mask on every device; ATen's _dropout_impl
(feature and alpha dropout) and torch's top-level forms of them (alpha_dropout(input, p, train) …).
"""
from __future__ import annotations

import contextlib
import math

import numpy as np

from ... import creation, dtypes
from ...backends.meta import MetaArray
from ...generator import check_seed, seeded_rng
from ..registry import defop
from ..samples import SampleInput, make_arg

# ---- dropout ------------------------------------------------------------------------------------


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _mask_dtype(input):
    return input.dtype if input.dtype.kind == "f" else dtypes.get_default_dtype().np


def _dropout_mask_meta(input, p, seed):
    _check_p(p)
    check_seed("dropout", seed)
    return MetaArray(input.shape, _mask_dtype(input))


def _dropout_mask_kernel(xp, input, p, seed):
    _check_p(p)
    # NOTE: drawn on the host with NumPy's PCG64 so a seed gives the same mask on every device
    rng = seeded_rng("dropout", seed)
    keep = rng.random(input.shape) < 1.0 - p
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    mask = (keep * scale).astype(_mask_dtype(input))
    if xp is np:
        return mask
    # a CuPy array's device is a context: the mask goes where the input lives (a dask array has none)
    device = getattr(input, "device", None)
    with device if hasattr(device, "__enter__") else contextlib.nullcontext():
        return xp.asarray(mask)


_TORCH_MASK = ("(__import__('numpy').random.default_rng(seed).random(tuple(input.shape)) < 1 - p) "
               "* (1.0 / (1 - p) if p < 1 else 0.0)")

_dropout_mask = defop(
    "_dropout_mask(Tensor input, float p, int? seed=None) -> Tensor",
    kernel=_dropout_mask_kernel, meta=_dropout_mask_meta,
    samples=lambda op: [SampleInput("(3,4) p=0.5", make_arg((3, 4), key=(op, 0)), 0.5, seed=0)],
    torch=f"lambda input, p, seed=None: torch.as_tensor({_TORCH_MASK}, dtype=input.dtype)",
    doc="Dropout's scaled keep-mask: 1/(1-p) where kept (probability 1-p), 0 elsewhere; from `seed` "
        "(NumPy's default_rng), or agrad's global generator when seed is None.")


def _dropout(input, p, training, seed):
    _check_p(p)
    check_seed("dropout", seed)
    if not training or p == 0 or input.numel() == 0:
        return input
    return input * _dropout_mask(input, p, seed=seed)


dropout = defop(
    "dropout(Tensor input, float p=0.5, bool training=True, *, int? seed=None) -> Tensor",
    composite=_dropout,
    samples=lambda op: [SampleInput("(4,5) p=0.5", make_arg((4, 5), key=(op, 0)), 0.5, seed=1),
                        SampleInput("(3,) p=0.2", make_arg((3,), key=(op, 1)), p=0.2, seed=7),
                        SampleInput("p=1", make_arg((2, 2), key=(op, 2)), 1.0, seed=0),
                        SampleInput("eval", make_arg((2, 2), key=(op, 3)), 0.5, False, seed=0)],
    torch=f"lambda input, p=0.5, training=True, seed=None: input if not training or p == 0 else "
          f"input * torch.as_tensor({_TORCH_MASK}, dtype=input.dtype)",
    doc="Zeroes each element with probability p and scales the rest by 1/(1-p); the mask comes from `seed` "
        "and is the same on every device. An identity when not training.")


# ---- native_dropout: ATen's, the output and its keep-mask ---------------------------------------------

def _native_dropout_meta(input, p, train, seed):
    check_seed("dropout", seed)
    if input.size and (train is None or train) and not 0.0 <= 1.0 - p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1.0 - p}")   # ATen's bernoulli_(1 - p)
    return MetaArray(input.shape, input.dtype), MetaArray(input.shape, np.dtype(bool))


def _native_dropout_kernel(xp, input, p, train, seed):
    _native_dropout_meta(input, p, train, seed)
    if input.size and (train is None or train):
        # NOTE: _dropout_mask's scaled keep-mask (the same for a seed on every device), as F.dropout's
        noise = _dropout_mask_kernel(xp, input, p, seed)
        return (input * noise).astype(input.dtype, copy=False), noise != 0
    return input.copy(), xp.ones(input.shape, dtype=bool)


def _native_dropout_grad(grad, result, p, train):
    # derivatives.yaml: grad * mask * scale, the scale 1 out of training, 0 for p = 1, else 1 / (1 - p)
    scale = 1.0 if train is False else (0.0 if p == 1 else 1.0 / (1.0 - p))
    return grad * result[1].detach() * scale


native_dropout = defop(
    "native_dropout(Tensor input, float p, bool? train, *, int? seed=None) -> (Tensor, Tensor)",
    kernel=_native_dropout_kernel, meta=_native_dropout_meta, grads={"input": _native_dropout_grad},
    backward_name="NativeDropoutBackward0",
    samples=lambda op: [SampleInput("(4,5) p=0.5", make_arg((4, 5), key=(op, 0)), 0.5, True, seed=1),
                        SampleInput("(3,) p=0.2 train=None", make_arg((3,), key=(op, 1)), 0.2, None, seed=7),
                        SampleInput("p=1", make_arg((2, 2), key=(op, 2)), 1.0, True, seed=0),
                        SampleInput("eval", make_arg((2, 2), key=(op, 3)), 0.5, False, seed=0)],
    # (PyTorch's own where it draws nothing; else agrad's mask applied as PyTorch applies its own)
    torch=f"lambda input, p, train, seed=None: torch.native_dropout(input, p, train) if train is False or p == 1 "
          f"else (lambda mask: (input * mask, mask != 0))(torch.as_tensor({_TORCH_MASK}, dtype=input.dtype))",
    doc="ATen's native_dropout: (input times dropout's scaled keep-mask, the mask as bool) when train is True or "
        "None, (a copy of input, all True) when False; the mask comes from `seed` (agrad's), as dropout's.")


# ---- ATen's _dropout_impl and the dropout family of torch's top level ----------------------------------

# SELU's scale · alpha: -this is SELU's saturation, the value a dropped unit takes before the affine correction
_SELU_ALPHA = 1.7580993408473766


def dropout_impl(input, p, training, inplace, feature, alpha, seed=None):
    """ATen's _dropout_impl: input · noise, noise a Bernoulli(1 - p) keep-mask per element (per (N, C) map
    when `feature`) scaled by 1 / (1 - p); alpha dropout scales it by a = 1/√((α²p + 1)(1 - p)) and adds
    b = α·a·(keep - 1 + p), which keeps SELU's zero mean and unit variance. (F.dropout1d/2d/3d,
    F.alpha_dropout and F.feature_alpha_dropout run it too.)"""
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = creation.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input.mul(zero)
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else tuple(input.shape)
    # NOTE: the mask is _dropout_mask's, as F.dropout's: the same for a seed on every device
    noise = _dropout_mask(creation.empty(shape, dtype=input.dtype, device=input.device), p, seed=seed)
    if not alpha:
        return input.mul_(noise) if inplace else input.mul(noise)
    keep = (noise != 0).to(input.dtype)
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
    keep = keep * a
    return (input.mul_(keep) if inplace else input.mul(keep)).add_(b)


def _aten_dropout(name, feature, alpha, inplace):
    def dropout(input, p, train):
        return dropout_impl(input, p, train, inplace, feature, alpha)
    dropout.__name__ = dropout.__qualname__ = name
    dropout.__doc__ = (f"torch.{name}(input, p, train): {'each (N, C) channel' if feature else 'each element'} "
                       f"dropped with probability p{' (alpha dropout, for SELU networks)' if alpha else ''}"
                       f"{', in place' if inplace else ''}.")
    return dropout


# torch's top-level forms (input, p, train), ATen's functions; F's own take (input, p, training, inplace)
dropout_ = _aten_dropout("dropout_", False, False, True)
feature_dropout = _aten_dropout("feature_dropout", True, False, False)
feature_dropout_ = _aten_dropout("feature_dropout_", True, False, True)
alpha_dropout = _aten_dropout("alpha_dropout", False, True, False)
alpha_dropout_ = _aten_dropout("alpha_dropout_", False, True, True)
feature_alpha_dropout = _aten_dropout("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _aten_dropout("feature_alpha_dropout_", True, True, True)

__all__ = ["dropout_impl", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_"]
