"""torch.optim.NAdam (torch/optim/nadam.py, `_single_tensor_nadam`): Adam with Nesterov
momentum, whose momentum coefficient mu_t warms up by `momentum_decay`."""
from __future__ import annotations

from ..creation import ones, zeros_like
from ..watchers import host_numbers
from .optimizer import Optimizer, _float_state, _scalar_dtype, _use_no_grad, check_betas, single_tensor_only

__all__ = ["NAdam"]


def _momentum_cache(group, step: float) -> tuple:
    """mu_t and mu_{t+1}, the momentum coefficients of this step and the next."""
    beta1, momentum_decay = group["betas"][0], group["momentum_decay"]
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    return float(mu), float(mu_next)


def _nadam_numbers(group, step_t) -> tuple:
    """From the lr and the step count: the second bias correction, the decoupled decay's
    factor and mu_t (host numbers: a replayed step asks again)."""
    step = step_t.item()
    return (float(1 - group["betas"][1] ** step), float(1 - group["lr"] * group["weight_decay"]),
            _momentum_cache(group, step)[0])


def _nadam_step_sizes(group, step_t, mu_product) -> tuple:
    """The two addcdiv values, from mu_product as the step left it (its float32 value, as
    torch's `_get_value(mu_product)` reads it). NOTE: mu and mu_next are computed again here
    from the live step count: numbers passed in would be the recorded step's constants."""
    mu, mu_next = _momentum_cache(group, step_t.item())
    lr, product = group["lr"], mu_product.item()
    product_next = product * mu_next
    return float(-lr * (1.0 - mu) / (1.0 - product)), float((-lr * mu_next) / (1.0 - product_next))


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_betas(lr, eps, betas, weight_decay)
        single_tensor_only("NAdam", differentiable, capturable)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

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
                    state["mu_product"] = ones((), dtype=_scalar_dtype())
                    state["exp_avg"] = zeros_like(param)
                    state["exp_avg_sq"] = zeros_like(param)
                grad = param.grad if not group["maximize"] else -param.grad
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                mu_product, step_t = state["mu_product"], state["step"]
                step_t.add_(1)
                bias_correction2, decay, mu = host_numbers(_nadam_numbers, group, step_t)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param.mul_(decay)
                    else:
                        grad = grad.add(param, alpha=weight_decay)
                mu_product.mul_(mu)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt()
                grad_size, avg_size = host_numbers(_nadam_step_sizes, group, step_t, mu_product)
                denom.add_(eps)
                param.addcdiv_(grad, denom, value=grad_size)
                param.addcdiv_(exp_avg, denom, value=avg_size)
        return loss
