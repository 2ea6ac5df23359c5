"""torch.nn.modules.lazy.LazyModuleMixin (torch/nn/modules/lazy.py): modules whose parameters take
their shapes from the first input.

A lazy module (`LazyLinear(out_features)`, `LazyConv2d(out_channels, k)`, `LazyBatchNorm1d()` …)
is its regular class constructed with zero sizes, whose parameters and buffers are then replaced
by UninitializedParameter / UninitializedBuffer. Two hooks registered at construction do the rest:
- a forward pre-hook, `_infer_parameters`, runs `initialize_parameters(*args, **kwargs)` (the
  class's own: it materializes every uninitialized tensor from the input's shape and resets them),
  removes both hooks and turns the module into its `cls_to_become` (LazyLinear -> Linear) in
  place, before the first forward runs;
- a load_state_dict pre-hook, `_lazy_load_hook`, materializes an uninitialized tensor to the shape
  of the initialized one being loaded into it, so a state dict of either kind loads into a module
  of either kind (the module stays lazy until its first forward).
Until then state_dict() holds the uninitialized tensors themselves (not detached aliases)."""
from __future__ import annotations

import itertools

from ...grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """The mixin of the lazy modules: put it first, before the regular class, and define
    `cls_to_become` and `initialize_parameters(self, *args, **kwargs)`."""

    # modules inheriting from this will change their __class__ to it once fully initialized
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # NOTE: as torch's: an uninitialized tensor is saved as itself (its detach() would be refused)
        for name, param in self._parameters.items():
            if param is not None:
                if not (is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """load_state_dict pre-hook: an uninitialized parameter or buffer that the state dict gives an
        initialized value takes that value's shape (the copy that follows fills it)."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        """Initialize parameters according to the input batch properties."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether any of the module's own parameters or buffers is still uninitialized."""
        for param in itertools.chain(self._parameters.values(), self._buffers.values()):
            if is_lazy(param):
                return True
        return False

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialize from the first call's arguments, then become cls_to_become."""
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
