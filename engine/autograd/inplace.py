"""Autograd's in-place machinery, as PyTorch's (VariableTypeUtils.h's check_inplace,
variable.cpp's rebase_history, functions/tensor.cpp's CopySlices).

`x.mul_(y)` computes `mul(x, y)` and writes the result into x's memory (its base's,
for a view), bumping the version counter x shares with its base and views. In grad
mode, when x or an argument requires grad, the op's Node (MulBackward0) becomes x's
grad_fn; its edge for `self` is x's *old* history, and a formula that reads the old
`self` gets a copy saved before the write (PyTorch's `original_self`). On a view, the
base's history is rebased instead: its grad_fn becomes `CopySlices`, which runs the
in-place op's backward on the view's part of the base's gradient; the view's own
grad_fn is rebuilt from the base when next used.

PyTorch's checks come first: a leaf that requires grad, a view of one, and a view by
how it was made (its CreationMeta: an output of a multi-output view op such as split,
or of a custom Function, a view made under no_grad or inference_mode): each is
refused in grad mode with PyTorch's message for its kind (_tensor.handle_view_on_rebase).

The ops this runs are handed to it (`apply_inplace(self, op, args)`) or called by name
through the dispatcher (`clone` in CopySlices): the op library is built on top of this.
"""
from __future__ import annotations

from .._tensor import (
    AutogradMeta,
    DifferentiableViewMeta,
    Tensor,
    VariableVersion,
    filled,
    handle_view_on_rebase,
    replay_view,
    update_tensor_hooks_on_new_gradfn,
)
from ..backends.meta import MetaArray, StridedMetaArray
from ..dispatch_keys import AUTOGRAD, FORWARD_AD, INFERENCE, PYTHON
from ..dispatcher import ops as _ops
from ..errors import FreedGraphError
from ..grad_mode import no_grad, tls
from ..messages import check_result_cast
from ..watchers import before_mutation, mutation_observers, write
from . import forward_ad, inference_tensors
from .node import Node, gradient_edge
from .saved_variable import ERR_BACKWARD_TWICE, SavedVariable, _hooks_set

__all__ = ["apply_inplace", "check_inplace", "bump_version", "rebase_history", "CopySlices"]


# ---- checks ------------------------------------------------------------------------------------

def check_inplace(t: Tensor) -> None:
    """PyTorch's check_inplace, for an in-place op that autograd will record."""
    m = t._autograd_meta
    if m.__class__ is DifferentiableViewMeta:
        handle_view_on_rebase(m)
        if t.requires_grad and m.base.is_leaf:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    # NOTE: the raw grad_fn, as C++'s is_leaf(): asking a view for its grad_fn would rebuild it here
    if t.requires_grad and m.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _overlaps(data) -> bool:
    """Whether several elements share one memory location (an expanded view). An empty array has no
    elements to share one (PyTorch's is_non_overlapping_and_dense holds for numel 0), whatever its strides:
    NumPy gives a [4, 0] array the strides (0, 0)."""
    strides = getattr(data, "strides", None)
    return strides is not None and data.size != 0 and any(st == 0 and n > 1 for st, n in zip(strides, data.shape))


def _write(self: Tensor, out: Tensor) -> None:
    """Store `out` into self's memory (cast to its dtype) and bump the shared version counter."""
    data, new = self._data, out._data
    if new.shape != data.shape:
        raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast shape "
                           f"{list(new.shape)}")
    check_result_cast(new.dtype, data.dtype)
    if mutation_observers:
        before_mutation(self)
    if data.__class__ is StridedMetaArray:
        _write_inner(self, out)
    elif not isinstance(data, MetaArray):
        write(data, new)
    bump_version(self)


def _inner_tensors(t: Tensor) -> dict:
    """{name: tensor} that a wrapper subclass's instance holds: those its __tensor_flatten__ names, else
    the Tensors among its attributes."""
    flatten = getattr(t, "__tensor_flatten__", None)
    if flatten is not None:
        return {name: getattr(t, name) for name in flatten()[0]}
    names = list(getattr(t, "__dict__", {}))
    names += [n for c in type(t).__mro__ for n in c.__dict__.get("__slots__", ()) if isinstance(n, str)]
    return {n: v for n in names if isinstance(v := getattr(t, n, None), Tensor)}


def _write_inner(self: Tensor, out: Tensor) -> None:
    """The write of an in-place op into a wrapper subclass's instance, which has no memory of its own: each
    tensor it wraps takes the value of the result's (agrad runs an in-place op as its out-of-place op, whose
    result the handler gave; PyTorch's handler runs the in-place op on the wrapped tensors themselves)."""
    if out is self:
        return
    inner, new = _inner_tensors(self), _inner_tensors(out)
    if not inner or set(inner) != set(new):
        raise RuntimeError(f"an in-place op on a {type(self).__name__} (a wrapper subclass) writes the tensors it "
                           f"wraps; the op's result, a {type(out).__name__}, wraps {sorted(new)}, not {sorted(inner)}")
    with no_grad():
        for name, t in inner.items():
            t.copy_(new[name])


def bump_version(t: Tensor) -> None:
    vc = t._version_counter
    if vc is None:
        t._version_counter = VariableVersion(1)
    else:
        vc.version += 1


def _requires_grad(a) -> bool:
    if a.__class__ is Tensor or isinstance(a, Tensor):
        return a.requires_grad
    if a.__class__ is list or a.__class__ is tuple:
        return any(_requires_grad(x) for x in a)
    return False


# ---- the in-place op -----------------------------------------------------------------------------

def apply_inplace(self: Tensor, op, args=(), kwargs=None, backward_name=None, recorded=True) -> Tensor:
    """Run `op(self, *args, **kwargs)` and store its result into self, recording it as PyTorch records
    the op's in-place variant. `backward_name` renames the Node where PyTorch's in-place variant has a
    name of its own (fill_ -> FillBackward2, copy_ -> CopyBackwards). `recorded=False`: an op autograd
    does not see (PyTorch's logical_and_ …, whose outputs are not differentiable): written and its
    version counter bumped, but no check, no Node, even on a leaf that requires grad."""
    if not isinstance(self, Tensor):
        raise TypeError(f"in-place op on {type(self).__name__}, not a Tensor")
    kwargs = kwargs or {}
    if self._keys & INFERENCE and not tls.inference_mode:
        raise RuntimeError(inference_tensors.ERR_INPLACE)
    if _overlaps(self._data):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    record = recorded and tls.grad_enabled and (self.requires_grad or any(_requires_grad(a) for a in args)
                                   or any(_requires_grad(a) for a in kwargs.values()))
    if not record:
        out = op(self, *args, **kwargs)
        _write(self, out)
        if tls.included & FORWARD_AD:
            forward_ad.update_inplace(self, out)
        return self
    check_inplace(self)
    # `self` as the op's input: the same memory and the same (old) history, its own version counter
    edge = gradient_edge(self)
    data = self._data
    if _hooks_set():
        # a pack hook may keep the very tensor it is handed (allow_mutation_on_saved_tensors keeps it to
        # clone on a later mutation): PyTorch hands it original_self, a clone, so the write below must not
        # reach it. (Without hooks the copy is made only where a formula saved the old self, below.)
        data = data.copy()
    if self._keys & PYTHON and data.__class__ is StridedMetaArray:
        # a wrapper subclass: its original self is a copy its handler makes (the write changes what it wraps)
        with no_grad():
            old = self.clone()
        old._keys &= ~AUTOGRAD
    else:
        old = Tensor._make(data, self._device, self._keys & ~AUTOGRAD)
    if edge.function is not None:
        old._autograd_meta = AutogradMeta(grad_fn=edge.function, output_nr=edge.input_nr)
        old._keys |= AUTOGRAD
    if tls.included & FORWARD_AD:
        forward_ad.alias_tangent(old, self)     # the op sees self's tangent
    out = op(old, *args, **kwargs)
    om = out._autograd_meta
    node = om.grad_fn if om is not None else None
    saved = getattr(node, "saved", None)
    if saved and old._data.__class__ is not StridedMetaArray and \
            any(v is old or (v.__class__ is SavedVariable and v._tensor is old) for v in saved.values()):
        old._data = old._data.copy()          # a formula reads the old self: keep it (PyTorch's original_self)
    _write(self, out)
    if tls.included & FORWARD_AD:
        forward_ad.update_inplace(self, out)
    if node is None:
        return self
    if backward_name is not None:
        node.__class__ = _renamed(node.__class__, backward_name)
    node.input_metadata = ((self._data.shape, self._data.dtype, self._device),) + node.input_metadata[1:]
    rebase_history(self, node)
    if saved and "result" in saved:
        result = SavedVariable(self, True)     # the result is self now, at its new version
        result._output_nr, result._saved_for_name = 0, node.__class__
        node.set_saved("result", result)
    return self


_RENAMED: dict = {}


def _renamed(cls, name):
    key = (cls, name)
    new = _RENAMED.get(key)
    if new is None:
        new = _RENAMED[key] = type(name, (cls,), {"__slots__": ()})
    return new


def rebase_history(self: Tensor, node: Node, output_nr: int = 0) -> None:
    """Make output `output_nr` of `node` the history of self (PyTorch's rebase_history): directly,
    or for a view, by making the base's grad_fn a CopySlices around it. A retain_grad() hook
    moves to the new grad_fn (update_tensor_hooks_on_new_gradfn)."""
    m = self._autograd_meta
    if m.__class__ is DifferentiableViewMeta:
        base = m.base
        copy_slices = CopySlices(base, m.view_fn, node)
        bm = base._autograd_meta
        if bm is None:
            bm = base._autograd_meta = AutogradMeta()
        update_tensor_hooks_on_new_gradfn(base, bm.grad_fn, copy_slices)
        bm.grad_fn, bm.output_nr, bm.requires_grad = copy_slices, 0, False
        base._keys |= AUTOGRAD
        m.output_nr = 0
        if m.retains_grad:
            m.current_grad_fn(self)     # rebuild the view's grad_fn now, so its hook moves there
        return                 # else the view's grad_fn is rebuilt from the base when next used
    if m is None:
        m = self._autograd_meta = AutogradMeta()
    old_fn = m.grad_fn
    m.grad_fn, m.output_nr, m.requires_grad = node, output_nr, False
    self._keys |= AUTOGRAD
    if m.retains_grad:
        update_tensor_hooks_on_new_gradfn(self, old_fn, node)


class CopySlices(Node):
    """The grad_fn of a base after an in-place op on one of its views: `fn` is that op's Node.

    Backward: the base's gradient, with the view's part replaced by what `fn` gives for the
    view's old value (PyTorch's CopySlices; the view is regenerated by replaying its view ops,
    PyTorch's view_fn path). Written with agrad ops (copy_ into a view of a fresh tensor), so
    with create_graph the result is differentiable again."""
    __slots__ = ("layout", "view_fn", "fn")

    def __init__(self, base: Tensor, view_fn, fn: Node):
        super().__init__()
        self.add_input_metadata(base)
        self.layout = _layout_order(base._data)
        self.view_fn = view_fn
        self.fn = fn
        self.set_next_edges([gradient_edge(base)] + list(fn.next_edges[1:]))

    def name(self) -> str:
        return "torch::autograd::CopySlices"          # PyTorch's C++ name, as AccumulateGrad's

    def apply(self, grads):
        if self.fn is None:
            raise FreedGraphError(ERR_BACKWARD_TWICE)
        grad = grads[0]
        n = len(self.next_edges)
        if grad is None:
            return [None] * n
        shape, dtype, dev = self.input_metadata[0]
        result = _new_with_layout(shape, grad._data.dtype, grad._device, self.layout)
        result.copy_(grad)
        grad_slice = replay_view(result, self.view_fn)
        res = self.fn.apply([_ops.clone(grad_slice, memory_format="contiguous_format")])
        out = [None] * n
        for i, r in enumerate(res):
            if r is None:
                continue
            if i == 0:
                grad_slice.copy_(r)
                out[0] = result
            else:
                out[i] = r
        return out

    def release_variables(self):
        # PyTorch's: drop the wrapped Node rather than free what it saved; it may be reachable
        # another way too (the grad_fn of a tensor it saved, unpacked under create_graph)
        self.fn = None


def _layout_order(data):
    """The order of dims from the largest stride down, when it is not the plain C order."""
    strides = getattr(data, "strides", None)
    if strides is None or len(strides) < 2:
        return None
    order = sorted(range(len(strides)), key=lambda d: -strides[d])
    return None if order == list(range(len(strides))) else order


def _new_with_layout(shape, np_dtype, device, order) -> Tensor:
    """Zeros with the memory layout of the base (PyTorch's new_empty_strided(base's geometry)),
    so that replaying the view's ops on it gives views, exactly as on the base."""
    if order is None:
        return filled(tuple(shape), 0, np_dtype, device)
    t = filled(tuple(shape[d] for d in order), 0, np_dtype, device)
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    t._data = t._data.transpose(inverse)
    return t
