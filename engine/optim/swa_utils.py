"""torch.optim.swa_utils (torch/optim/swa_utils.py): AveragedModel (stochastic weight averaging and
exponential moving averages of a module's parameters, and of its buffers with use_buffers=True),
the averaging functions, update_bn and the SWALR schedule.

It sits above agrad.nn (AveragedModel is a Module), so agrad.optim imports it on first use.
"""
from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import dtypes
from .._tensor import Tensor
from ..creation import tensor
from ..foreach import _foreach_add_, _foreach_addcdiv_, _foreach_lerp_, _foreach_sub
from ..grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

# torch's _get_foreach_kernels_supported_devices: elsewhere (the CPU) the default average is per tensor
_FOREACH_DEVICES = ("cuda", "xpu", "mtia")


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_float(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """In place over lists: ema <- decay * ema + (1 - decay) * current (a lerp for floating
    tensors; integer buffers get the product rounded down by copy_, as torch's)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if _is_float(ema_param_list[0]):
                _foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In place over lists: avg <- avg + (current - avg) / (n + 1)."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if _is_float(averaged_param_list[0]):
                weight = 1 / (num_averaged + 1)
                # NOTE: torch passes the tensor as the lerp's Scalar weight: its value, in the default dtype
                _foreach_lerp_(averaged_param_list, current_param_list,
                               weight.item() if isinstance(weight, Tensor) else weight)
            else:
                diffs = _foreach_sub(current_param_list, averaged_param_list)
                if isinstance(num_averaged, Tensor):
                    _foreach_addcdiv_(averaged_param_list, diffs, [num_averaged + 1] * len(averaged_param_list))
                else:
                    _foreach_add_(averaged_param_list, diffs, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """One tensor's new average: decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """One tensor's new average: avg + (current - avg) / (n + 1)."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _group_by_device_and_dtype(averaged: list, current: list) -> dict:
    """torch's _group_tensors_by_device_and_dtype for two lists: pairs grouped by the averaged
    tensor's (device, dtype), in first-seen order."""
    groups: dict = {}
    for p_averaged, p_model in zip(averaged, current):
        pair = groups.setdefault((p_averaged.device, p_averaged.dtype), ([], []))
        pair[0].append(p_averaged)
        pair[1].append(p_model)
    return groups


class AveragedModel(Module):
    """A deep copy of `model` whose parameters (and buffers, with use_buffers) are running
    averages of `model`'s, updated by update_parameters(model): the first call copies, later
    ones apply avg_fn (per tensor) or multi_avg_fn (per list), by default the equal-weight mean."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                      else self.parameters())
        model_param = itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()
        self_param_detached, model_param_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_param_detached.append(p_averaged.detach())
            model_param_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for (device, _), (self_params, model_params) in _group_by_device_and_dtype(
                        self_param_detached, model_param_detached).items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(self_params, model_params, n_averaged)
                    elif device.type in _FOREACH_DEVICES:
                        get_swa_multi_avg_fn()(self_params, model_params, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(self_params, model_params, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(self_param_detached, model_param_detached, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if not self.use_buffers:
            # NOTE: as torch's: without use_buffers the buffers (BatchNorm's statistics) are the model's latest
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """One pass over `loader` (batches: tensors, or lists/tuples whose first element is the input)
    in training mode, with every BatchNorm's statistics reset and momentum None: the running
    statistics become the plain average over the pass. The model's mode and momenta are restored."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:     # noqa: A001 - torch's name
            if isinstance(input, (list, tuple)):
                input = input[0]     # noqa: A001
            if device is not None:
                input = input.to(device)     # noqa: A001
            model(input)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs steps ("cos" or "linear"), then
    holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):     # noqa: B020
            group["swa_lr"] = swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        # NOTE: torch's form: the lr before annealing is recovered from the group's current lr and
        # the previous step's alpha, so another scheduler's changes carry through
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
