"""torch.optim.Adamax (torch/optim/adamax.py, `_single_tensor_adamax`)."""
from __future__ import annotations

from ..creation import zeros_like
from ..ops import maximum
from ..watchers import host_numbers
from .optimizer import Optimizer, _float_state, _use_no_grad, check_betas, single_tensor_only

__all__ = ["Adamax"]


def _adamax_numbers(group, step_t) -> tuple:
    """-clr, the bias-corrected step size, from the group's lr and the step count (host
    numbers: a replayed step asks again, after its own `step_t.add_(1)`)."""
    clr = group["lr"] / (1 - group["betas"][0] ** step_t.item())
    return (-clr,)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_betas(lr, eps, betas, weight_decay)
        single_tensor_only("Adamax", differentiable, capturable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (beta1, beta2), eps, weight_decay = group["betas"], group["eps"], group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    state["exp_avg"] = zeros_like(param)
                    state["exp_inf"] = zeros_like(param)
                grad = param.grad if not group["maximize"] else -param.grad
                exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
                step_t.add_(1)
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                # torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
                exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                (minus_clr,) = host_numbers(_adamax_numbers, group, step_t)
                param.addcdiv_(exp_avg, exp_inf, value=minus_clr)
        return loss
