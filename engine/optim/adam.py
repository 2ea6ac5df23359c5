"""torch.optim.Adam and AdamW (torch/optim/adam.py, `_single_tensor_adam`; AdamW is Adam with
decoupled weight decay, as torch/optim/adamw.py is since PyTorch 2.6)."""
from __future__ import annotations

from ..creation import zeros_like
from ..ops import maximum
from ..watchers import host_numbers
from .optimizer import Optimizer, _float_state, _use_no_grad, check_betas

__all__ = ["Adam", "AdamW"]


def _adam_numbers(group, step_t) -> tuple:
    """The step's numbers from the group's lr and the step count: -step_size, the square
    root of the second bias correction, the decoupled decay's factor (host numbers: a
    replayed step asks again, after its own `step_t.add_(1)`)."""
    lr, (beta1, beta2) = group["lr"], group["betas"]
    step = step_t.item()
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    return -step_size, bias_correction2 ** 0.5, float(1 - lr * group["weight_decay"])


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 maximize=False, decoupled_weight_decay=False):
        check_betas(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (beta1, beta2), eps = group["betas"], group["eps"]
            weight_decay, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    state["exp_avg"] = zeros_like(param)
                    state["exp_avg_sq"] = zeros_like(param)
                    if amsgrad:
                        state["max_exp_avg_sq"] = zeros_like(param)
                grad = param.grad if not maximize else -param.grad
                exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
                step_t.add_(1)
                minus_step_size, bias_correction2_sqrt, decay = host_numbers(_adam_numbers, group, step_t)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param.mul_(decay)
                    else:
                        grad = grad.add(param, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                if amsgrad:
                    max_exp_avg_sq = state["max_exp_avg_sq"]
                    max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq))
                    denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                param.addcdiv_(exp_avg, denom, value=minus_step_size)
        return loss


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        # NOTE: as PyTorch's AdamW: a loaded state dict cannot turn the decay back into L2
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self.__setstate__({})
