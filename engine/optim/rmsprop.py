"""torch.optim.RMSprop (torch/optim/rmsprop.py, `_single_tensor_rmsprop`)."""
from __future__ import annotations

from ..creation import zeros_like
from ..watchers import host_numbers
from .optimizer import Optimizer, _float_state, _use_no_grad

__all__ = ["RMSprop"]


def _rmsprop_numbers(group) -> tuple:
    """The step's numbers from the group's lr (host numbers: a replayed step asks again)."""
    return (-group["lr"],)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, *,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
            weight_decay, centered = group["weight_decay"], group["centered"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    state["square_avg"] = zeros_like(param)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(param)
                    if centered:
                        state["grad_avg"] = zeros_like(param)
                grad = param.grad if not group["maximize"] else -param.grad
                square_avg = state["square_avg"]
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if centered:
                    grad_avg = state["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                (minus_lr,) = host_numbers(_rmsprop_numbers, group)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    param.add_(buf, alpha=minus_lr)
                else:
                    param.addcdiv_(grad, avg, value=minus_lr)
        return loss
