"""torch.optim.Adafactor (torch/optim/_adafactor.py, `_single_tensor_adafactor`): second
moments factored into row and column means for matrices, a relative step size and an
update clipped to RMS d."""
from __future__ import annotations

import numpy as np

from ..creation import zeros_like
from ..watchers import unreplayable
from .optimizer import Optimizer, _float_state, _use_no_grad

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      maximize=maximize))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        # NOTE: the step size and the clipping are read from the norms of the parameter and update
        unreplayable("Adafactor's step size is read from the parameter's and the update's norms")
        for group in self.param_groups:
            lr, beta2_decay, d, weight_decay = group["lr"], group["beta2_decay"], group["d"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    if param.grad.dim() > 1:
                        state["row_var"] = param.grad.new_zeros(list(param.grad.shape[:-1]) + [1])
                        state["col_var"] = param.grad.new_zeros(list(param.grad.shape[:-2]) + [1, param.grad.shape[-1]])
                    else:
                        state["variance"] = zeros_like(param.grad)
                grad = param.grad if not group["maximize"] else -param.grad
                step_t = state["step"]
                if eps1 is None:
                    eps1 = float(np.finfo(param.dtype.np).eps)
                step_t.add_(1)
                step_float = step_t.item()
                one_minus_beta2_t = step_float ** beta2_decay
                rho_t = min(lr, 1 / (step_float ** 0.5))
                alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
                if weight_decay != 0:
                    param.mul_(1 - lr * weight_decay)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    # (g * g).mean(dim=-1) without the intermediate g * g
                    row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
                    row_var.lerp_(row_mean, one_minus_beta2_t)
                    col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
                    col_var.lerp_(col_mean, one_minus_beta2_t)
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    grad_squared = grad * grad
                    variance.lerp_(grad_squared, one_minus_beta2_t)
                    var_estimate = variance.clone()
                # eps1 squared: the square root after it keeps eps1's magnitude
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
                update.mul_(grad)
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                param.add_(update, alpha=-alpha / denom)
        return loss
