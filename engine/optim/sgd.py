"""torch.optim.SGD (torch/optim/sgd.py, `_single_tensor_sgd`)."""
from __future__ import annotations

from ..watchers import host_numbers
from .optimizer import Optimizer, _use_no_grad

__all__ = ["SGD"]


def _sgd_numbers(group) -> tuple:
    """The step's numbers from the group's lr (host numbers: a replayed step asks again)."""
    return (-group["lr"],)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            momentum, dampening = group["momentum"], group["dampening"]
            weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                d_p = param.grad if not maximize else -param.grad
                if weight_decay != 0:
                    d_p = d_p.add(param, alpha=weight_decay)
                if momentum != 0:
                    state = self.state[param]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = d_p.clone().detach()
                        state["momentum_buffer"] = buf
                    else:
                        buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                    d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
                (minus_lr,) = host_numbers(_sgd_numbers, group)
                param.add_(d_p, alpha=minus_lr)
        return loss
