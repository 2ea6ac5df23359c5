"""torch.optim.Adagrad (torch/optim/adagrad.py, `_single_tensor_adagrad`; dense gradients)."""
from __future__ import annotations

from ..creation import full_like
from ..watchers import host_numbers
from .optimizer import Optimizer, _float_state, _use_no_grad

__all__ = ["Adagrad"]


def _adagrad_numbers(group, step_t) -> tuple:
    """The step's numbers from the group's lr and the step count (host numbers: a replayed
    step asks again, after its own `step_t.add_(1)`)."""
    step = step_t.item()
    clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
    return (-clr,)


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, *,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize))
        # NOTE: as PyTorch, Adagrad's state exists from construction, not from the first step
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _float_state(p)
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            eps, weight_decay = group["eps"], group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                step_t, state_sum = state["step"], state["sum"]
                step_t.add_(1)
                (minus_clr,) = host_numbers(_adagrad_numbers, group, step_t)
                grad = param.grad if not group["maximize"] else -param.grad
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                param.addcdiv_(grad, std, value=minus_clr)
        return loss
