"""torch.optim.Rprop (torch/optim/rprop.py, `_single_tensor_rprop`): per-element step sizes
grown by etaplus while the gradient keeps its sign, shrunk by etaminus when it flips."""
from __future__ import annotations

from ..creation import full_like, zeros_like
from ..ops import where
from .optimizer import Optimizer, _float_state, _use_no_grad, single_tensor_only

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        single_tensor_only("Rprop", differentiable, capturable)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize))

    @_use_no_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _float_state(param)
                    state["prev"] = zeros_like(param)
                    # NOTE: the lr is read once, here: later lr changes (a scheduler's) do not reach Rprop
                    state["step_size"] = full_like(param.grad, group["lr"])
                grad = param.grad if not group["maximize"] else -param.grad
                prev, step_size = state["prev"], state["step_size"]
                state["step"].add_(1)
                sign = grad.mul(prev).sign()
                # NOTE: torch's capturable form (where) of `sign[sign.gt(0)] = etaplus`, ...: the same
                # values, without a boolean mask whose nonzero count a replay would freeze
                sign.copy_(where(sign.gt(0), etaplus, sign))
                sign.copy_(where(sign.lt(0), etaminus, sign))
                sign.copy_(where(sign.eq(0), 1, sign))
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                # where the sign flipped, the gradient counts as 0 (no step, and no flip next time)
                grad = grad.clone()
                grad.copy_(where(sign.eq(etaminus), 0, grad))
                param.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
