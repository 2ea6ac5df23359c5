"""Custom autograd Functions: `class Exp(Function)` with static forward/backward.

As in PyTorch, `ctx` is the backward Node itself (`ExpBackward`): forward runs with
grad mode off, then the Node takes the edges of the tensor arguments and becomes
the grad_fn of the outputs (torch/csrc/autograd/python_function.cpp, custom_function.cpp).
The Node has one incoming-gradient slot per forward output, differentiable or not, so
backward always receives one gradient per output.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from .._tensor import Tensor, filled, version_counter
from ..grad_mode import is_grad_enabled, no_grad
from .node import Node, collect_next_edges, record, set_history
from ..watchers import unreplayable
from .saved_variable import SavedVariable

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]

# what each incoming-gradient slot of a Function's Node stands for
_DIFFERENTIABLE, _NON_DIFFERENTIABLE, _NOT_A_TENSOR = 0, 1, 2


class FunctionCtx:
    """What forward() may tell backward(): saved tensors and flags."""

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        """These inputs were modified in place by forward (and must be returned by it)."""
        _check_variables(tensors, "mark_dirty can only accept variables, but argument {i} is of type {t}")
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        _check_variables(tensors, "mark_non_differentiable only accepts variable arguments, but got {t}")
        self._non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (True, the default) or None for gradients that are undefined."""
        self._materialize_grads = bool(value)


def _check_variables(tensors, message: str) -> None:
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise RuntimeError(message.format(i=i, t=type(t).__name__))


class BackwardCFunction(FunctionCtx, Node):
    """The Node of one Function.apply call; named '<Function>Backward' as in PyTorch."""

    def __init__(self, cls):
        Node.__init__(self)
        self._cls = cls
        self._to_save = ()
        self._saved = None
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self._materialize_non_diff_grads = True
        self._output_kinds = ()
        self._input_positions = ()
        self.needs_input_grad = ()

    def name(self) -> str:
        return f"{self._cls.__name__}Backward"

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:     # forward ran without recording a graph
            return tuple(self._to_save)
        return tuple(sv.unpack(self) if sv is not None else None for sv in self._saved)

    @property
    def saved_variables(self) -> tuple:
        """The deprecated name of saved_tensors (PyTorch warns the same)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def apply(self, grads):
        if self._materialize_grads:
            grads = [self._zeros(i) if g is None else g for i, g in enumerate(grads)]
        result = self._backward(*grads)
        if not isinstance(result, tuple):
            result = (result,)
        num_forward_inputs = len(self.needs_input_grad)
        if len(result) > num_forward_inputs and all(r is None for r in result[num_forward_inputs:]):
            result = result[:num_forward_inputs]      # extra Nones are allowed, as in PyTorch
        if len(result) != num_forward_inputs:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {num_forward_inputs}, got {len(result)})")
        positions = set(self._input_positions)
        for i, r in enumerate(result):
            if r is None:
                continue
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if i not in positions:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
        return [result[i] for i in self._input_positions]

    def _zeros(self, i: int):
        """The gradient backward sees for an output nothing flowed into (PyTorch's materialize_grads)."""
        kind = self._output_kinds[i]
        if kind == _NOT_A_TENSOR or (kind == _NON_DIFFERENTIABLE and not self._materialize_non_diff_grads):
            return None
        shape, dtype, dev = self.input_metadata[i]
        return filled(shape, 0, dtype, dev)

    def _backward(self, *grads):
        return self._cls.backward(self, *grads)

    def release_variables(self) -> None:
        if self._saved:
            for sv in self._saved:
                if sv is not None:
                    sv.reset_data()


class Function:
    def __init_subclass__(cls, **kwargs):
        # PyTorch's FunctionMeta: each Function has its own Node class, `<Name>Backward`, whose
        # `_forward_cls` is the Function; every call's grad_fn is an instance of it
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,), {"_forward_cls": cls})

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      f"so you should invoke them on the class itself. Instantiating an autograd function will raise "
                      f"an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional (PyTorch 2): with it, forward(*args) takes no ctx and this saves what backward needs."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward with grad mode off and record its Node. Keyword arguments go to forward as they
        are (never inputs of the Node); with setup_context, they are bound to forward's positions."""
        has_setup_context = cls.setup_context is not Function.setup_context
        if has_setup_context:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        unreplayable(f"{cls.__name__} is an autograd.Function")
        node = cls._backward_cls(cls)
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        node._input_positions = positions
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        is_executable = is_grad_enabled() and any(node.needs_input_grad)
        with no_grad():
            if has_setup_context:
                outputs = cls.forward(*args)
                cls.setup_context(node, args, outputs)
            else:
                outputs = cls.forward(node, *args, **kwargs)
        if is_executable:
            node.set_next_edges(collect_next_edges(args[i] for i in positions))
        single = not isinstance(outputs, tuple)
        outs = _wrap_outputs(node, (outputs,) if single else outputs, {id(args[i]) for i in positions},
                             is_executable)
        if is_executable:
            out_ids = {id(o) for o in outs}
            node._saved = [None if t is None else SavedVariable(t, is_output=id(t) in out_ids)
                           for t in node._to_save]
            node._to_save = ()
        return outs[0] if single else outs


def _wrap_outputs(node: BackwardCFunction, outputs: tuple, input_ids: set, is_executable: bool) -> tuple:
    """Give each output its place in the graph (custom_function.cpp's _wrap_outputs): a slot on
    the Node for every output; history for the differentiable ones; a dirty input takes the
    Node as its new grad_fn in place; an input returned as is comes back as a new tensor."""
    dirty = {id(t) for t in node._dirty}
    if dirty - {id(o) for o in outputs}:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    non_differentiable = node._non_differentiable
    kinds = []
    wrapped = []
    for o in outputs:
        if not isinstance(o, Tensor):
            kinds.append(_NOT_A_TENSOR)
            if is_executable:
                node.input_metadata.append(((), None, None))
            wrapped.append(o)
            continue
        is_input, is_modified = id(o) in input_ids, id(o) in dirty
        if is_modified:
            version_counter(o).version += 1
        differentiable = is_executable and id(o) not in non_differentiable and o.is_floating_point()
        kinds.append(_DIFFERENTIABLE if differentiable else _NON_DIFFERENTIABLE)
        if not differentiable:
            if is_executable:
                node.add_input_metadata(o)
            if is_input and (o.requires_grad or not is_modified):
                o = o.detach()
            elif o.requires_grad and not o._is_view():
                o.detach_()
        elif is_modified:
            _rebase_history(o, node, is_input, len(outputs))
        else:
            if is_input:
                o = o.detach()
            set_history(o, node)
        wrapped.append(o)
    node._output_kinds = tuple(kinds)
    return tuple(wrapped)


def _rebase_history(t: Tensor, node: BackwardCFunction, is_input: bool, num_outputs: int) -> None:
    """A dirty input: its grad_fn becomes `node` (PyTorch's rebase_history)."""
    if t.is_leaf and t.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    if not is_input:
        warnings.warn("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there "
                      "is no need to pass it to mark_dirty().", UserWarning, stacklevel=4)
    is_view = t._is_view()
    if is_view and num_outputs > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
            "return more than one Tensor. This is not supported by the current autograd engine. You should either "
            "make sure the input is not a view (using .clone() for example) or make your Function only return one "
            "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single "
            "Tensor and a second one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change.")
    meta = t._autograd_meta
    if meta is not None:
        meta.grad = None
        meta.hooks = None
    if is_view:
        # the base's grad_fn becomes a CopySlices around `node`, as for an in-place op on a view
        from .inplace import _rebase_history as rebase_view_history
        node.add_input_metadata(t)
        rebase_view_history(t, node)
    else:
        set_history(t, node)


class Error(Node):
    """A Node whose backward raises (PyTorch's DelayedError, which Python sees as `Error`): the
    grad_fn of what a @once_differentiable backward returns, so differentiating it again fails."""
    __slots__ = ("msg",)

    def __init__(self, msg: str):
        super().__init__()
        self.msg = msg

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Run backward with grad mode off; under create_graph its results get an `Error` grad_fn,
    so that differentiating them again raises instead of silently giving no gradient."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # NOTE: as PyTorch: the Error node's inputs are fresh leaves that require grad, so that
        # its outputs (aliases of the gradients) have it as their grad_fn
        leaves = [o.detach().requires_grad_() if o is not None else None for o in outs]
        err = Error("trying to differentiate twice a function that was marked with @once_differentiable")
        wrapped = tuple(leaf.detach() if leaf is not None else None for leaf in leaves)
        record(err, collect_next_edges(leaves), wrapped)
        return wrapped[0] if single else wrapped
    return wrapper
