"""torch._dynamo.eval_frame.OptimizedModule: what compiling (or disabling) a Module gives.

It holds the original module as its one child, `_orig_mod`, so that its parameters, buffers and state_dict keys are
the original's with `_orig_mod.` before them, exactly as torch's, and load_state_dict takes those keys. Every other
attribute is the original's: reads fall through to it, writes and deletes go to it (all but the wrapper's own,
_opt_mod_attributes), `training` mirrors it. Its forward is the compile (or disable) context's wrapper of the
original module's __call__, so the original's hooks run inside it; a lazy module infers its parameters first.
It pickles as torch's does, as the original module and the context (__reduce__).
"""
from __future__ import annotations

from collections.abc import Sized

from ..nn.modules.module import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """Wraps the original nn.Module object and later patches its forward method to the compiled self.forward."""

    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable", "_torchdynamo_wrapper_id",
                           "get_compiler_config", "forward", "_forward", "__dict__", "named_children_walk",
                           "_super_module_initialized"}

    def __init__(self, mod: Module, dynamo_ctx) -> None:
        # NOTE: first, since reading and writing attributes of `self` goes through `_orig_mod`
        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod            # Module.__setattr__ registers it as the child
        self.dynamo_ctx = dynamo_ctx
        self._initialize()
        self.training = self._orig_mod.training

    def __len__(self) -> int:
        if isinstance(self._orig_mod, Sized):
            return len(self._orig_mod)
        raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")

    def _initialize(self) -> None:
        self.forward = self.dynamo_ctx(self._orig_mod.__call__)
        if hasattr(self._orig_mod, "_initialize_hook"):
            self._forward = self.forward
            self.forward = self._call_lazy_check

    def __reduce__(self):
        return (self.__class__, (self._orig_mod, self.dynamo_ctx))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("forward", None)
        state.pop("__call__", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__ = state
        self._initialize()

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        # Module.__init__'s default is ignored: `training` is the original module's
        if self._super_module_initialized:
            self._orig_mod.training = value

    def __getattr__(self, name: str):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def _call_lazy_check(self, *args, **kwargs):
        if hasattr(self._orig_mod, "_initialize_hook") and callable(getattr(self._orig_mod, "_infer_parameters",
                                                                              None)):
            # a lazy module's parameters are made from the first input before the compiled call
            self._orig_mod._infer_parameters(self._orig_mod, args, kwargs)
        return self._forward(*args, **kwargs)

    def __dir__(self):
        orig_mod_attrs = self._orig_mod.__dir__()
        return orig_mod_attrs + [attr for attr in super().__dir__() if attr not in orig_mod_attrs]
