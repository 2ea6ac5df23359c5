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

from .._tensor import (CREATION_DEFAULT, CREATION_IN_CUSTOM_FUNCTION, CREATION_MULTI_OUTPUT_NODE,
                       DifferentiableViewMeta, Tensor, filled, version_counter)
from ..errors import FreedGraphError
from ..dispatch_keys import FORWARD_AD
from ..grad_mode import ExcludeDispatchKeyGuard, is_grad_enabled, no_grad
from . import forward_ad
from .inplace import check_inplace, rebase_history
from .node import Node, collect_next_edges, record, set_history
from ..watchers import unreplayable
from .saved_variable import ERR_BACKWARD_TWICE, SAVED_NONE, SavedVariable

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "NestedIOFunction", "once_differentiable"]

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

    def save_for_forward(self, *tensors) -> None:
        """Save tensors for jvp, which reads them as ctx.saved_tensors (kept as they are: jvp runs
        during apply, so nothing can change them in between)."""
        for t in tensors:
            if not (t is None or isinstance(t, Tensor)):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                     "non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

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


class _Cleared(tuple):
    """A Node's `_saved` once clear_saved_tensors_on_access has handed them out: nothing to release."""


_CLEARED = _Cleared()


class BackwardCFunction(FunctionCtx, Node):
    """The Node of one Function.apply call; named '<Function>Backward' as in PyTorch."""

    # what ctx.saved_tensors gives while jvp runs: save_for_forward's tensors (python_function.cpp's
    # saved_for_forward); None the rest of the time
    _jvp_saved = None

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
        if self._jvp_saved is not None:
            return self._jvp_saved
        if self._saved is None:     # forward ran without recording a graph
            return tuple(self._to_save)
        if self._saved is _CLEARED:
            raise RuntimeError("Trying to access the saved tensors of a Function whose clear_saved_tensors_on_access "
                               "is True a second time: they can only be accessed once.")
        tensors = tuple(sv.unpack(self, detached_in_place_ok=True) if sv is not None else None for sv in self._saved)
        if getattr(self._cls, "clear_saved_tensors_on_access", False):
            # the Function's backward holds the only references from now on: each is freed once it lets go
            self.release_variables()
            self._saved = _CLEARED
        return tensors

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The SavedVariables of save_for_backward (`.data`, `.unpack_hook`, `register_hooks`)."""
        if not self._saved:
            return ()
        if any(sv is not None and sv._released for sv in self._saved):
            raise FreedGraphError(ERR_BACKWARD_TWICE)
        return tuple(SAVED_NONE if sv is None else sv for sv in self._saved)

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
        return self._user_fn()(self, *grads)

    def _user_fn(self):
        """The Function's backward or its alias vjp, whichever it defines (function.py's _get_user_fn)."""
        backward_fn, vjp_fn = self._cls.backward, self._cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                               "You should only implement one of them.")
        return vjp_fn if vjp_fn is not Function.vjp else backward_fn

    def apply_jvp(self, *tangents):
        """The Function's jvp on these input tangents (function.py's BackwardCFunction.apply_jvp)."""
        return self._forward_cls.jvp(self, *tangents)

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

    vjp = backward      # the same method under its other name: a Function defines one of the two

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """The output tangents from the input tangents (None for a non-Tensor input), for forward AD."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    # PyTorch's defaults for torch.func.vmap. agrad's vmap (func/vmap.py) calls the function once per sample,
    # so a Function runs as it is there and neither is consulted; they are here for code that reads or sets them.
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The Function's batching rule: (output, out_dims) from batched inputs and their in_dims."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

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
        if is_executable:
            # the inputs' history before forward runs, as THPFunction_apply collects it: forward may
            # modify an input in place (ctx.mark_dirty), which must not be taken for its history
            node.set_next_edges(collect_next_edges(args[i] for i in positions))
        dual = forward_ad._current_level >= 0
        with no_grad():
            if dual:
                # forward AD off inside forward, as PyTorch's AutoFwGradMode(false): the outputs' tangents
                # come from jvp alone
                with ExcludeDispatchKeyGuard(FORWARD_AD):
                    outputs = _run_forward(cls, node, args, kwargs, has_setup_context)
            else:
                outputs = _run_forward(cls, node, args, kwargs, has_setup_context)
        single = not isinstance(outputs, tuple)
        raw = (outputs,) if single else outputs
        dirty = tuple(node._dirty)
        outs = _wrap_outputs(node, raw, {id(args[i]) for i in positions}, is_executable)
        if dual:
            _process_forward_mode_ad(node, args, positions, raw, outs, dirty)
        # NOTE: the Node forgets the dirty tensors (PyTorch clears ctx.dirty_tensors): one it
        # holds while being that tensor's grad_fn would be a reference cycle
        node._dirty = ()
        if is_executable:
            out_ids = {id(o) for o in outs}
            try:
                node._saved = [None if t is None else SavedVariable(t, is_output=id(t) in out_ids)
                               for t in node._to_save]
            finally:
                # NOTE: forgotten even when a pack hook raises (non-reentrant checkpoint's early stop
                # does): an output held by the Node that is its grad_fn would be a reference cycle
                node._to_save = ()
        return outs[0] if single else outs


def _run_forward(cls, node, args, kwargs, has_setup_context):
    if has_setup_context:
        outputs = cls.forward(*args)
        cls.setup_context(node, args, outputs)
        return outputs
    return cls.forward(node, *args, **kwargs)


def _forward_base(t):
    """The tensor whose memory `t` shows as a forward view (PyTorch's forward view base), or t itself."""
    m = t._autograd_meta
    if m.__class__ is DifferentiableViewMeta and getattr(m, "fw_grad", None) is not forward_ad.NOT_A_FORWARD_VIEW:
        return m.base
    return t


def _process_forward_mode_ad(node, args, positions, raw_outputs, outputs, dirty) -> None:
    """The outputs' tangents from the Function's jvp, with PyTorch's checks on what it returns
    (custom_function.cpp's _process_forward_mode_AD): None for an output that is not differentiable,
    the input's own tangent modified in place for a dirty input, a view of the input's tangent for a
    view of an input."""
    tangents = [None] * len(args)
    versions = {}
    for i in positions:
        tangent = forward_ad.tangent_of(args[i])
        if tangent is not None:
            tangents[i] = tangent
            versions[i] = tangent._version
    if not versions:
        return      # no input has a tangent: jvp is not called
    for i in positions:
        a = args[i]
        if tangents[i] is None and (a.is_floating_point() or a.is_complex()):
            # a differentiable input without a tangent is handed zeros (python_function.cpp's jvp_user_function)
            with ExcludeDispatchKeyGuard(FORWARD_AD), no_grad():
                tangents[i] = a.new_zeros(a.shape)
    input_at = {id(args[i]): i for i in positions}
    bases = {id(_forward_base(args[i])): i for i in positions}
    node._jvp_saved = tuple(getattr(node, "saved_for_forward", ()))
    try:
        with ExcludeDispatchKeyGuard(FORWARD_AD):
            result = node.apply_jvp(*tangents)
    finally:
        node._jvp_saved = None
    if not isinstance(result, tuple):
        result = (result,)
    for k, r in enumerate(result):
        if r is not None and not isinstance(r, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(r).__name__}) for grad output {k}.")
    if len(result) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                           f"{len(outputs)} but got {len(result)})")
    dirty_ids = {id(t) for t in dirty}
    for k, (raw, out, tangent) in enumerate(zip(raw_outputs, outputs, result)):
        if (not isinstance(raw, Tensor) or id(raw) in node._non_differentiable
                or not (raw.is_floating_point() or raw.is_complex())):
            if tangent is not None:
                raise RuntimeError(f"Function's jvp returned a gradient at position {k}, but  the corresponding "
                                   f"forward output is not a differentiable Tensor.You should return None at "
                                   f"that position instead.")
            continue
        if tangent is None:
            continue
        if id(raw) in dirty_ids:
            if id(raw) not in input_at:
                raise RuntimeError("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an "
                                   "input, there is no need to pass it to mark_dirty().")
            i = input_at[id(raw)]
            if i in versions:
                # the input's tangent must have been changed in place and handed back as it is
                if tangent._version == versions[i]:
                    raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients "
                                       "inplace. If the forward is modifying an input inplace, then the jvp "
                                       "function must modify the corresponding gradient inplace.")
                if tangent is not tangents[i]:
                    raise RuntimeError("An inplace custom Function is not returning the forward mode gradients "
                                       "as-is. If the forward is modifying an input inplace, then the jvp function "
                                       "must modify the gradient inplace and return it as-is.")
            else:
                forward_ad.set_tangent(out, tangent, is_inplace_op=True)
            continue
        base = _forward_base(out)
        if base is not out and id(base) in bases:
            # a view of an input (or of its base): its tangent must be the same view of the input's
            i = bases[id(base)]
            input_tangent = forward_ad.tangent_of(args[i])
            if input_tangent is None:
                # the input had no tangent but its view gets one: as an in-place op would give it
                forward_ad.set_tangent(out, tangent, is_inplace_op=True)
                return
            tangent_base = _forward_base(tangent)
            if tangent_base is tangent:
                raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the "
                                   "jvp is not returning a view.")
            if _forward_base(input_tangent) is not input_tangent:
                if _forward_base(input_tangent) is not tangent_base:
                    raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view "
                                       "of the same base as the given grad input.")
            elif input_tangent is not tangent_base:
                raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of "
                                   "the given grad input.")
        forward_ad.set_tangent(out, tangent, is_inplace_op=False)


def _wrap_outputs(node: BackwardCFunction, outputs: tuple, input_ids: set, is_executable: bool) -> tuple:
    """Give each output its place in the graph (custom_function.cpp's _process_backward_mode_ad):
    a slot on the Node for every output; history for the differentiable ones; a dirty input takes
    the Node as its new grad_fn in place (rebase_history, through CopySlices for a view); an
    input returned as is comes back as a new tensor."""
    # `ctx._is_pure_view = True` (PyTorch's): the one output is a plain view of the one input, which an
    # in-place op may change as any view (its history rebased past this Function's backward)
    pure_view = bool(getattr(node, "_is_pure_view", False))
    if pure_view and (len(outputs) != 1 or len(input_ids) != 1):
        raise RuntimeError("Pure view custom Function can only have one input Tensor and one output Tensor. "
                           "Open an issue if you need to support more.")
    dirty = {id(t) for t in node._dirty}
    for t in node._dirty:       # python_function.cpp's _mark_dirty: before any output is wrapped
        version_counter(t).version += 1
    non_differentiable = node._non_differentiable
    kinds = []
    wrapped = []
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            kinds.append(_NOT_A_TENSOR)
            if is_executable:
                node.input_metadata += (((), None, None),)
            wrapped.append(o)
            continue
        is_input, is_modified = id(o) in input_ids, id(o) in dirty
        differentiable = is_executable and id(o) not in non_differentiable and (o.is_floating_point() or o.is_complex())
        kinds.append(_DIFFERENTIABLE if differentiable else _NON_DIFFERENTIABLE)
        if not differentiable:
            if is_executable:
                node.add_input_metadata(o)
            if is_input and o.requires_grad:
                o = o.detach()
            elif is_input and not is_modified:
                o = _view_as_self(o)
            elif o.requires_grad and not o._is_view():
                o.detach_()
        elif is_modified:
            _check_dirty_output(o, is_input, len(outputs))
            node.add_input_metadata(o)
            rebase_history(o, node, i)
        else:
            if is_input:
                o = _view_as_self(o)
            set_history(o, node)
            m = o._autograd_meta
            if m.__class__ is DifferentiableViewMeta:
                # PyTorch's set_gradient_edge: this grad_fn is the view's own, not to be rebuilt
                # from its base for in-place changes forward made before returning it
                m.attr_version = o._version
        if not (is_input and is_modified) and o._is_view():
            # an in-place op on it would rebase its history past this Function's backward: refused,
            # unless the Function says it is a pure view
            o._autograd_meta.creation_meta = CREATION_DEFAULT if pure_view else CREATION_IN_CUSTOM_FUNCTION
        wrapped.append(o)
    if kinds.count(_DIFFERENTIABLE) > 1:
        # several differentiable outputs: their views are refused in place as a multi-output view op's are
        for o in wrapped:
            if isinstance(o, Tensor) and o._is_view():
                o._autograd_meta.creation_meta = CREATION_MULTI_OUTPUT_NODE
    if dirty - {id(o) for o in outputs}:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    node._output_kinds = tuple(kinds)
    return tuple(wrapped)


def _view_as_self(t: Tensor) -> Tensor:
    """An input returned as is comes back as a view of itself, made with grad mode off."""
    with no_grad():
        return t.view_as(t)


_NOT_AN_INPUT = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                 "mutated should be passed to ctx.mark_dirty().")


def _check_dirty_output(t: Tensor, is_input: bool, num_outputs: int) -> None:
    """What PyTorch checks before rebasing the history of a dirty output (its set_history's
    is_modified branch), in its order and with its messages."""
    meta = t._autograd_meta
    # NOTE: the raw grad_fn, as PyTorch's is_leaf(): asking a view for its grad_fn would rebuild it now
    if (meta is None or meta.grad_fn is None) and t.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    is_view = t._is_view()
    if not is_input:
        if is_view:     # a view of an intermediate of forward
            raise RuntimeError(_NOT_AN_INPUT)
        warnings.warn(_NOT_AN_INPUT, UserWarning, stacklevel=4)      # the caller of apply
    if is_view and num_outputs > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
            "return more than one Tensor. This is not supported by the current autograd engine. You should either "
            "make sure the input is not a view (using .clone() for example) or make your Function only return one "
            "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single "
            "Tensor and a second one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change.")
    if meta is not None:
        meta.grad = None
        meta.hooks = None
    check_inplace(t)        # a view of a leaf, an output of a multi-output view op: as an in-place op


class Error(Node):
    """A Node whose backward raises (PyTorch's DelayedError, which Python sees as `Error`): the
    grad_fn of what a @once_differentiable backward returns, so differentiating it again fails."""
    __slots__ = ("msg",)

    def __init__(self, msg: str):
        super().__init__()
        self.msg = msg

    def apply(self, grads):
        raise RuntimeError(self.msg)


def delayed_error(msg: str, tensor):
    """PyTorch's DelayedError applied in a backward formula: `tensor` under a Node that raises `msg`
    when a backward reaches it, where a gradient is right but its own derivative would not be
    (scatter_reduce's prod with two zeros scattered to one place). Without create_graph, or where
    the tensor has no history, the tensor itself."""
    if not is_grad_enabled() or not tensor.requires_grad:
        return tensor
    alias = tensor.detach()
    record(Error(msg), collect_next_edges([tensor]), (alias,))
    return alias


class InplaceFunction(Function):
    """torch.autograd.function.InplaceFunction: a Function that carries an `inplace` flag its
    forward may read (a legacy base class some code still subclasses)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


# ---- NestedIOFunction: the legacy Function over nested lists/tuples/dicts of tensors -------------

def _nesting_error(obj, accepted: str) -> ValueError:
    return ValueError(f"Auto nesting doesn't know how to process an input object of type {type(obj).__name__}. "
                      f"Accepted types: {accepted}, or lists/tuples of them")


def _iter_nested(obj, accept_none: bool = False):
    """The tensors of a nested structure, in order (with its Nones, where `accept_none`)."""
    if isinstance(obj, Tensor) or accept_none and obj is None:
        yield obj
    elif obj is None:
        return
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_nested(o, accept_none)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_nested(o, accept_none)
    else:
        raise _nesting_error(obj, "Tensors or None" if accept_none else "Tensors")


def _map_tensor_data(obj):
    """The structure with each tensor replaced by its `.data`."""
    if isinstance(obj, Tensor):
        return obj.data
    if obj is None:
        return None
    if isinstance(obj, (list, tuple)):
        mapped = (_map_tensor_data(x) for x in obj)
        return type(obj)(*mapped) if hasattr(obj, "_fields") else type(obj)(mapped)
    if isinstance(obj, dict):
        return {k: _map_tensor_data(v) for k, v in obj.items()}
    raise _nesting_error(obj, "Tensors")


def _unflatten(flat, proto):
    """The flat sequence `flat` in the nested list/tuple structure of `proto`."""
    def helper(flat, proto):
        if not isinstance(proto, (list, tuple)):
            return flat[0], flat[1:]
        res = []
        for e in proto:
            if e is None:
                res.append(e)
            else:
                e, flat = helper(flat, e)
                res.append(e)
        return type(proto)(res), flat
    return helper(flat, proto)[0]


class NestedIOFunction(Function):
    """torch.autograd.NestedIOFunction, kept (as in PyTorch) only for backward compatibility: a
    legacy, instance-style Function whose forward_extended/backward_extended take and return nested
    structures of tensors. As in PyTorch 2.13 its legacy call path is gone: calling an instance
    raises AttributeError (there is no Function._do_forward any more), and `apply` reaches forward
    with the backward Node as self, which has no nested input. Use Function."""

    def _do_forward(self, *input):
        self._nested_input = input
        flat_input = tuple(_iter_nested(input))
        flat_output = super()._do_forward(*flat_input)
        return _unflatten(flat_output, self._nested_output)

    def _do_backward(self, gradients, retain_variables):
        self.retain_variables = retain_variables
        result = super()._do_backward(gradients, retain_variables)
        if not retain_variables:
            del self._nested_output
            del self._to_save_nested
        return result

    def backward(self, *gradients):
        nested_gradients = _unflatten(gradients, self._nested_output)
        result = self.backward_extended(*nested_gradients)
        return tuple(_iter_nested(result, accept_none=True))

    __call__ = _do_forward

    def forward(self, *args):
        nested_tensors = _map_tensor_data(self._nested_input)
        result = self.forward_extended(*nested_tensors)
        del self._nested_input
        self._nested_output = result
        return tuple(_iter_nested(result))

    def save_for_backward(self, *args) -> None:
        self.to_save = tuple(_iter_nested(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return _unflatten(self.to_save, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs) -> None:
        self.dirty_tensors = tuple(_iter_nested((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        self.non_differentiable = tuple(_iter_nested((args, kwargs)))

    def forward_extended(self, *input):
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """User defined backward."""
        raise NotImplementedError


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
