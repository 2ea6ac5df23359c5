"""torch.optim.Adadelta (torch/optim/adadelta.py, `_single_tensor_adadelta`)."""
from __future__ import annotations

from ..creation import zeros_like
from ..watchers import host_numbers
from .optimizer import Optimizer, _float_state, _use_no_grad, single_tensor_only

__all__ = ["Adadelta"]


def _adadelta_numbers(group) -> tuple:
    """The step's numbers from the group's lr (host numbers: a replayed step asks again)."""
    return (-group["lr"],)


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        single_tensor_only("Adadelta", differentiable, capturable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            rho, eps, weight_decay = group["rho"], group["eps"], group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    state["square_avg"] = zeros_like(param)
                    state["acc_delta"] = zeros_like(param)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                state["step"].add_(1)
                grad = param.grad if not group["maximize"] else -param.grad
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_()
                delta.div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                (minus_lr,) = host_numbers(_adadelta_numbers, group)
                param.add_(delta, alpha=minus_lr)
        return loss
