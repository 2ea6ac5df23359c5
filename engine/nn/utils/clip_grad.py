"""torch.nn.utils.clip_grad_norm_ and clip_grad_value_ (torch/nn/utils/clip_grad.py, the
per-tensor path): the total norm is the norm of the per-gradient norms, and every gradient
is scaled in place by min(1, max_norm / (total_norm + 1e-6))."""
from __future__ import annotations

from ..._tensor import Tensor
from ...creation import tensor
from ...grad_mode import no_grad
from ...ops import clamp, norm, stack

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Scale the gradients of `parameters` in place so that their joint norm is at most
    `max_norm`; return the joint norm before clipping."""
    with no_grad():
        grads = _grads(parameters)
        norm_type = float(norm_type)
        max_norm = float(max_norm)
        if len(grads) == 0:
            return tensor(0.0)
        first_device = grads[0].device
        norms = [norm(g, norm_type).to(device=first_device) for g in grads]
        total_norm = norm(stack(norms), norm_type)
        if error_if_nonfinite and not bool(abs(total_norm.item()) < float("inf")):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        clip_coef_clamped = clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped.to(device=g.device))
        return total_norm


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of `parameters` in place to [-clip_value, clip_value]."""
    with no_grad():
        clip_value = float(clip_value)
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
