"""torch.optim.ASGD (torch/optim/asgd.py, `_single_tensor_asgd`): SGD with a decaying step
size eta and, after step t0, a running average `ax` of the parameters."""
from __future__ import annotations

from ..creation import ones, tensor, zeros_like
from ..watchers import unreplayable
from .optimizer import Optimizer, _float_state, _scalar_dtype, _use_no_grad, single_tensor_only

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        single_tensor_only("ASGD", differentiable, capturable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        # NOTE: the averaging is decided from mu's value, and eta and mu are new host values each step
        unreplayable("ASGD decides its averaging from the value of its mu")
        for group in self.param_groups:
            lambd, lr, t0, alpha = group["lambd"], group["lr"], group["t0"], group["alpha"]
            weight_decay = group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    state["eta"] = tensor(float(lr), dtype=_scalar_dtype())
                    state["mu"] = ones((), dtype=_scalar_dtype())
                    state["ax"] = zeros_like(param)
                grad = param.grad if not group["maximize"] else -param.grad
                mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
                step_t.add_(1)
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                eta_value = eta.item()
                param.mul_(1 - lambd * eta_value)
                param.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_(param.sub(ax).mul_(mu))
                else:
                    ax.copy_(param)
                step = step_t.item()
                eta.copy_(tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.copy_(tensor(1 / max(1, step - t0)))
        return loss
