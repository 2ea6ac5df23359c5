"""Custom autograd Functions: `class Exp(Function)` with static forward/backward.

As in PyTorch, `ctx` is the backward Node itself (`ExpBackward`): forward runs with
grad mode off, then the Node takes the edges of the tensor arguments and becomes
the grad_fn of the outputs.
"""
from __future__ import annotations

from ..grad_mode import is_grad_enabled, no_grad
from .._tensor import Tensor, filled
from .node import Node, collect_next_edges, set_history
from .saved_variable import SavedVariable

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """What forward() may tell backward(): saved tensors and flags."""

    def save_for_backward(self, *tensors) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {tensors.index(t)} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The Node of one Function.apply call; named '<Function>Backward' as in PyTorch."""

    def __init__(self, cls):
        Node.__init__(self)
        self._cls = cls
        self._to_save = ()
        self._saved = None
        self._non_differentiable = ()
        self._materialize_grads = True
        self._input_positions = ()
        self.needs_input_grad = ()

    def name(self) -> str:
        return f"{self._cls.__name__}Backward"

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:     # forward ran without recording a graph
            return tuple(self._to_save)
        return tuple(sv.unpack(self) if sv is not None else None for sv in self._saved)

    def apply(self, grads):
        if self._materialize_grads:
            grads = [g if g is not None else filled(shape, 0, dtype, dev)
                     for g, (shape, dtype, dev) in zip(grads, self.input_metadata)]
        result = self._backward(*grads)
        if not isinstance(result, tuple):
            result = (result,)
        num_forward_inputs = len(self.needs_input_grad)
        if len(result) != num_forward_inputs:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {num_forward_inputs}, got {len(result)})")
        return [result[i] for i in self._input_positions]

    def _backward(self, *grads):
        return self._cls.backward(self, *grads)

    def release_variables(self) -> None:
        if self._saved:
            for sv in self._saved:
                if sv is not None:
                    sv.reset_data()


class Function:
    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement the backward function for custom autograd.Function.")

    @classmethod
    def apply(cls, *args):
        node = BackwardCFunction(cls)
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        node._input_positions = positions
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        is_executable = is_grad_enabled() and any(node.needs_input_grad)
        with no_grad():
            outputs = cls.forward(node, *args)
        if not is_executable:
            return outputs
        node.set_next_edges(collect_next_edges(args[i] for i in positions))
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        wrapped = []
        inputs_by_id = {id(args[i]) for i in positions}
        for o in outs:
            if isinstance(o, Tensor):
                if id(o) in inputs_by_id:       # an input returned as is: a new tensor, as PyTorch's view
                    o = o.detach()
                if id(o) not in node._non_differentiable and o.is_floating_point():
                    set_history(o, node)
            wrapped.append(o)
        out_ids = {id(o) for o in wrapped}
        node._saved = [None if t is None else SavedVariable(t, is_output=id(t) in out_ids) for t in node._to_save]
        node._to_save = ()
        return wrapped[0] if single else tuple(wrapped)


def once_differentiable(fn):
    """Run backward with grad mode off: its result is not differentiable again."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
