"""A Module's full backward hooks (torch/utils/hooks.py's BackwardHook, PyTorch's design): the
tensors going into the module and those coming out each pass through an identity Function,
BackwardHookFunction, whose Node's hooks see the gradients: the output side's records the gradients
with respect to the outputs (and runs the backward pre-hooks, which may replace them), the input
side's calls each `hook(module, grad_input, grad_output)` once the gradients with respect to the
inputs are there (a hook may replace grad_input). Made by Module.__call__ for each call while the
module has such hooks."""
from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ...autograd.function import Function
from ...grad_mode import is_grad_enabled


class BackwardHookFunction(Function):
    """The identity on the module's tensors, as its own Node (BackwardHookFunctionBackward)."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    def __init__(self, module, user_hooks: list, user_pre_hooks: list):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size) -> tuple:
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values) -> tuple:
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # the gradient reached the module's inputs without passing through its outputs (a double
                # backward): PyTorch calls no hook then
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                       f"expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)
        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        """`args` with their tensors passed through BackwardHookFunction (`fn` gets its Node), and the
        tensors' positions; `args` as they are (and None) where none requires grad or grad is off."""
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        grad_fns = [t.grad_fn for t in new_tensors
                    if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with a code sample to "
                               "reproduce this.")
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx

    def setup_input_hook(self, args: tuple) -> tuple:
        res, self.input_tensors_index = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result):
        def fn(grad_fn):
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    new = user_pre_hook(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != len(self.grad_outputs):
                        raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                           f"{len(new)}, but expected {len(self.grad_outputs)}")
                    self.grad_outputs = new
                if self.input_tensors_index is None:
                    # no input requires grad: the hooks are called here, with no input gradients
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                            raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                               "always return None or None for all gradients.")
                    self.grad_outputs = None
                if self.grad_outputs is not None:
                    return tuple(self.grad_outputs[i] for i in self.output_tensors_index)
                return None
            grad_fn.register_hook(hook)

        single = not isinstance(result, tuple)
        if single and not isinstance(result, Tensor):
            warnings.warn(f"For backward hooks to be called, module output should be a Tensor or a tuple of Tensors "
                          f"but received {type(result)}", stacklevel=3)
        outputs = (result,) if single else result
        res, self.output_tensors_index = self._apply_on_tensors(fn, outputs)
        self.n_outputs = len(outputs)
        return res[0] if single else res
