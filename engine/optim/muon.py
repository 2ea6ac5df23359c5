"""torch.optim.Muon (torch/optim/_muon.py, `_single_tensor_muon`): nesterov momentum whose update
is orthogonalized by a quintic Newton-Schulz iteration, for 2-D parameters.

torch runs the iteration in bfloat16, which agrad has no dtype for. Each bfloat16 result of
torch's CPU kernels is a float32 value rounded to nearest-even at 8 bits of mantissa, so here each
op is computed wider (the matrix products in float64, exact sums of exact products for small
matrices) and rounded through float32 to bfloat16's values, kept in float32 tensors. Checked
against torch 2.13 on random matrices: the same bits for every matrix whose smaller side is under
24; above that torch's float32 accumulation order decides some bfloat16 roundings, and the
updates differ there by a few bfloat16 ulps (under 2% of the update's largest element).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..creation import empty, zeros_like
from ..ops import copy
from ..watchers import host_numbers
from .optimizer import Optimizer, _use_no_grad

__all__ = ["Muon"]

# Keller Jordan's constants, as torch's (https://kellerjordan.github.io/posts/muon/)
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5

_ADJUST_LR_FNS = ("original", "match_rms_adamw")


def _to_bfloat16_values(t):
    """`t` rounded as torch's conversion to bfloat16 rounds (through float32, then to nearest-even
    at the top 16 bits), as a float32 tensor: bfloat16 is float32's top half."""
    bits = _cast(t, dtypes.float32).view(dtypes.int32)
    # NOTE: 0xFFFF0000 as an int32 (the mask keeps sign, exponent and 7 mantissa bits)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & -65536).view(dtypes.float32)


def _bfloat16_number(x: float) -> float:
    """A Python float rounded as _to_bfloat16_values rounds (torch's clamp casts its bound to
    the tensor's dtype)."""
    bits = int(np.float32(x).view(np.uint32))
    return float(np.uint32(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).view(np.float32))


def _cast(t, dtype):
    """`t` in `dtype`, through the `copy` op rather than `.to(dtype)`: a training step's replay
    (engine/replay) gives a recorded `.to(dtype)` the recorded step's values, and `copy` it redoes."""
    return copy(empty(t.shape, dtype=dtype, device=t.device), t)


def _exact(t):
    """float64, where sums and products of bfloat16 values (and of their float32 factors) are exact."""
    return _cast(t, dtypes.float64)


def _addmm(input, mat1, mat2, beta, alpha):
    """torch's bfloat16 addmm on the CPU, of bfloat16 values given in float64: the product rounded
    to float32 (torch accumulates it in float32, here in float64) and scaled by alpha in float32,
    then beta * input added in one fused multiply-add (exact in float64: a bfloat16 times a
    float32 fits its mantissa), rounded to bfloat16. Found against torch's results: rounding
    alpha * product + beta * input in float32 op by op, or all of it in float64, misses a few
    roundings where the two terms cancel."""
    scaled = _cast(mat1 @ mat2, dtypes.float32).mul(float(np.float32(alpha)))
    return _to_bfloat16_values(input.mul(float(np.float32(beta))).add(_exact(scaled)))


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float):
    """torch's iteration: X = G / max(||G||, eps) (transposed when tall), then ns_steps times
    X <- a X + (b A + c A A) X with A = X X^T; bfloat16 values throughout (see the module)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = _to_bfloat16_values(grad)
    tall = grad.size(0) > grad.size(1)
    if tall:
        ortho_grad = ortho_grad.T
    # torch's bfloat16 norm and clamp give bfloat16 values; the division is then rounded again
    norm = _to_bfloat16_values((ortho_grad * ortho_grad).sum().sqrt()).clamp(min=_bfloat16_number(eps))
    ortho_grad = _to_bfloat16_values(ortho_grad / norm)
    for _ in range(ns_steps):
        x = _exact(ortho_grad)
        gram_matrix = _exact(_to_bfloat16_values(x @ x.T))
        gram_update = _exact(_addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c))
        ortho_grad = _addmm(x, gram_update, x, beta=a, alpha=1)
    if tall:
        ortho_grad = ortho_grad.T
    return ortho_grad


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape) -> float:
    """Keller's sqrt(max(1, A/B)) ("original", the default) or Moonshot's 0.2 sqrt(max(A, B))
    ("match_rms_adamw"): the update's RMS made alike across shapes."""
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        adjusted_ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        adjusted_ratio = 0.2 * math.sqrt(max(A, B))
    else:
        adjusted_ratio = 1.0
    return lr * adjusted_ratio


def _muon_numbers(group, shape) -> tuple:
    """The step's numbers from the group's lr (host numbers: a replayed step asks again)."""
    lr = group["lr"]
    return 1 - lr * group["weight_decay"], -_adjust_lr(lr, group["adjust_lr_fn"], shape)


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            momentum = group["momentum"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                if param.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                grad = param.grad
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                state = self.state[param]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like(grad)
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                     group["eps"])
                decay, minus_adjusted_lr = host_numbers(_muon_numbers, group, tuple(param.shape))
                param.mul_(decay)
                param.add_(update, alpha=minus_adjusted_lr)
        return loss
