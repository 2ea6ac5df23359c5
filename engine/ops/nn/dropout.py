"""dropout (ATen's Dropout): the input times a seeded Bernoulli mask (`_dropout_mask`),
scaled by 1 / (1 - p), so a seed gives the same mask on every device.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ... import creation, dtypes
from ...backends.meta import MetaArray
from ..registry import defop
from ..samples import SampleInput, make_arg

# ---- dropout ------------------------------------------------------------------------------------


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _mask_dtype(input):
    return input.dtype if input.dtype.kind == "f" else dtypes.get_default_dtype().np


def _check_seed(seed):
    # NumPy's default_rng takes non-negative seeds only; said on Meta too, before any run.
    if seed is not None and seed < 0:
        raise ValueError(f"dropout seed must be a non-negative integer, but got {seed}")


def _dropout_mask_meta(input, p, seed):
    _check_p(p)
    _check_seed(seed)
    return MetaArray(input.shape, _mask_dtype(input))


def _dropout_mask_kernel(xp, input, p, seed):
    _check_p(p)
    _check_seed(seed)
    # NOTE: drawn on the host with NumPy's PCG64 so a seed gives the same mask on every device
    rng = np.random.default_rng(seed) if seed is not None else creation._generator
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
    _check_seed(seed)
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
