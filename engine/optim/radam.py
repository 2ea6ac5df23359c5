"""torch.optim.RAdam (torch/optim/radam.py, `_single_tensor_radam`): Adam whose adaptive
term is switched on, rectified, once the variance estimate is tractable (rho_t > 5)."""
from __future__ import annotations

from ..creation import zeros_like
from ..watchers import unreplayable
from .optimizer import Optimizer, _float_state, _use_no_grad, check_betas, single_tensor_only

__all__ = ["RAdam"]


def _radam_numbers(group, step_t) -> tuple:
    """From the lr and the step count: the decoupled decay's factor, both bias corrections
    and rho_t, the length of the approximated simple moving average."""
    lr, (beta1, beta2) = group["lr"], group["betas"]
    step = step_t.item()
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    return float(1 - lr * group["weight_decay"]), bias_correction1, bias_correction2, rho_inf, rho_t


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_betas(lr, eps, betas, weight_decay)
        single_tensor_only("RAdam", differentiable, capturable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, decoupled_weight_decay=decoupled_weight_decay))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        # NOTE: whether a step rectifies is decided from the step count: a replay would freeze it
        unreplayable("RAdam decides from the step count whether a step is rectified")
        for group in self.param_groups:
            (beta1, beta2), eps, weight_decay, lr = group["betas"], group["eps"], group["weight_decay"], group["lr"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    state["exp_avg"] = zeros_like(param)
                    state["exp_avg_sq"] = zeros_like(param)
                grad = param.grad if not group["maximize"] else -param.grad
                exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
                step_t.add_(1)
                decay, bias_correction1, bias_correction2, rho_inf, rho_t = _radam_numbers(group, step_t)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param.mul_(decay)
                    else:
                        grad = grad.add(param, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_corrected_exp_avg = exp_avg / bias_correction1
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    # (bias_correction2 ** 0.5) / exp_avg_sq_sqrt: torch's Tensor.__rtruediv__ is
                    # reciprocal() * number, two roundings
                    adaptive_lr = exp_avg_sq.sqrt().add_(eps).reciprocal() * (bias_correction2 ** 0.5)
                    param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        return loss
