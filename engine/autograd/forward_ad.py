"""Forward-mode AD (torch.autograd.forward_ad): dual levels, dual tensors, and how tangents flow.

A dual tensor is an ordinary Tensor whose AutogradMeta holds a tangent in `fw_grad` (PyTorch's
fw_grad_). Only one level exists at a time, as in PyTorch ("Nested forward mode AD is not supported").

While a level is open the ForwardAD dispatch key is included in every call, so its fallback runs
before any other kernel; outside a level no call pays anything. The fallback finds the tangents of
the op's inputs and, where there are any, computes the output tangents with the double-vjp trick
instead of per-op JVP formulas: with u a zero cotangent that requires grad, g = J^T u is linear in u,
so the gradient of g with respect to u in the direction of the input tangents is J v. Every agrad
backward formula is differentiable, so this holds for every op. When the primals or tangents require
grad (and grad mode is on) the tangent keeps its graph, as PyTorch's tangents do.

Views follow PyTorch's forward views (autograd_meta.cpp): the tangent of a view is the same view of
its input's tangent, so an in-place op on a view updates the tangent of the base; a view of a base
that only later gets a tangent finds it lazily (`tangent_of`). In-place ops (autograd/inplace.py)
write their new tangent into the existing one (keeping views of it in step), or give the base of a
view a zero tangent first.
"""
from __future__ import annotations

import weakref
from collections import namedtuple

from .._tensor import AutogradMeta, DifferentiableViewMeta, Tensor, replay_view
from ..creation import zeros
from ..generator import numpy_rng
from ..dispatch_keys import CONJUGATE, FORWARD_AD, NEGATIVE, DispatchKey
from ..dispatcher import call, ops, register_fallback
from ..grad_mode import ExcludeDispatchKeyGuard, enable_grad, set_grad_enabled, tls
from .backward_and_grad import grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level",
           "tangent_of", "set_tangent"]

_current_level = -1
# the tensors given a tangent at the open level, whose tangents its exit deletes (PyTorch's
# ForwardADLevel keeps its ForwardGrads for the same reason)
_duals: list = []
# the tangents of the open level's op outputs, by their backward Node and output number: an output that
# a backward unpacks from its Node (autograd/saved_variable.py) is a new Tensor with the output's
# history, and must have the output's tangent too, as PyTorch's SavedVariable keeps the output's
# fw_grad_ (forward-over-reverse: jvp(grad(f)), a Hessian by jacfwd(jacrev(f)), through tanh or exp,
# whose backward formulas use the output)
_output_tangents: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# fw_grad of unpack_dual's primal: a view for backward, but no forward view (PyTorch's _fw_primal), so it
# does not find its base's tangent. False, not None: the layers below read fw_grad as `None or False: none`
_NOT_A_FORWARD_VIEW = False
NOT_A_FORWARD_VIEW = _NOT_A_FORWARD_VIEW      # for autograd/function.py's forward view checks


def _float(t) -> bool:
    return t.is_floating_point() or t.is_complex()


# ---- the tangents -----------------------------------------------------------------------------------

def tangent_of(t):
    """t's tangent at the open level, or None: its own, or for a view of a base that has one, that
    view of the base's tangent (made on first need and kept, as PyTorch's fw_grad() does)."""
    m = t._autograd_meta
    if m is None:
        return None
    fw = getattr(m, "fw_grad", None)
    if fw is not None:
        return None if fw is _NOT_A_FORWARD_VIEW else fw
    if m.__class__ is DifferentiableViewMeta:
        bm = m.base._autograd_meta
        base_t = getattr(bm, "fw_grad", None) if bm is not None else None
        if base_t is not None and base_t is not _NOT_A_FORWARD_VIEW:
            with ExcludeDispatchKeyGuard(FORWARD_AD):
                fw = replay_view(base_t, m.view_fn)
            _set_tangent(t, fw)
            return fw
    elif _output_tangents and m.grad_fn is not None:
        fw = _output_tangents.get(m.grad_fn, {}).get(m.output_nr)
        if fw is not None:
            _set_tangent(t, fw)
            return fw
    return None


def _set_tangent(t, tangent) -> None:
    m = t._autograd_meta
    if m is None:
        m = t._autograd_meta = AutogradMeta()
    m.fw_grad = tangent
    _duals.append(weakref.ref(t))


def alias_tangent(alias, t) -> None:
    """`alias` (autograd/inplace.py's stand-in for self as the op's input) gets t's tangent."""
    tangent = tangent_of(t)
    if tangent is not None:
        _set_tangent(alias, tangent)


def update_inplace(self, out) -> None:
    """`self` was overwritten in place by `out`, the result of the out-of-place op (autograd/inplace.py):
    its tangent becomes out's."""
    new = tangent_of(out) if out is not self else None
    if new is not None:
        set_tangent(self, new, is_inplace_op=True)


def set_tangent(self, new, is_inplace_op: bool) -> None:
    """Give `self` the tangent `new` (PyTorch's _set_fw_grad). For an in-place op it is written into the
    tangent self has (or finds through its base) so that its views and base see it; a view of a base
    without a tangent gives the base a zero one first."""
    if tuple(new.shape) != tuple(self.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the "
                           f"original Tensor, this is not supported. Tensor is of size {list(self.shape)} "
                           f"while the given forward gradient is of size {list(new.shape)}.")
    if not is_inplace_op:
        if not _has_same_meta(new, self):
            new = _new_with_same_meta(new, self)
        _set_tangent(self, new)
        return
    with ExcludeDispatchKeyGuard(FORWARD_AD):
        existing = tangent_of(self)
        if existing is not None:
            if existing is not new:
                existing.copy_(new)
            return
        m = self._autograd_meta
        if m.__class__ is DifferentiableViewMeta and getattr(m, "fw_grad", None) is not _NOT_A_FORWARD_VIEW:
            # a view of a base without a tangent: the base gets a zero one, and the view's part of it is written
            base = m.base
            _set_tangent(base, ops.zeros_like(base))
            view_t = replay_view(base._autograd_meta.fw_grad, m.view_fn)
            view_t.copy_(new)
            _set_tangent(self, view_t)
            return
    _set_tangent(self, new)


def _has_same_meta(tangent, primal) -> bool:
    """PyTorch's has_same_meta: the same conjugate and negative bits, offset, strides (where a size is not 0
    or 1) and storage size, so that a view of the primal's storage replays on the tangent's (a backend
    without strides: only the bits)."""
    if tangent.is_conj() != primal.is_conj() or tangent.is_neg() != primal.is_neg():
        return False
    if not (hasattr(tangent._data, "strides") and hasattr(primal._data, "strides")):
        return True
    if tangent.storage_offset() != primal.storage_offset():
        return False
    if any(a != b and n not in (0, 1) for a, b, n in zip(tangent.stride(), primal.stride(), primal.shape)):
        return False
    return len(tangent.untyped_storage()) // tangent.element_size() == \
        len(primal.untyped_storage()) // primal.element_size()


def _new_with_same_meta(tangent, primal):
    """The tangent's values in a new tensor laid out as the primal in a storage of the primal's size
    (PyTorch's _new_zeros_with_same_feature_meta then copy_), so the caller's tangent is never written."""
    with ExcludeDispatchKeyGuard(FORWARD_AD):
        numel = len(primal.untyped_storage()) // primal.element_size()
        out = zeros(numel, dtype=tangent.dtype, device=tangent.device).as_strided(
            list(primal.shape), list(primal.stride()), primal.storage_offset())
        # the primal's bits too (agrad's values are resolved: copy_ writes the tangent's values as they are)
        out._keys |= primal._keys & (CONJUGATE | NEGATIVE if out.is_complex() else NEGATIVE)
        return out.copy_(tangent)


# ---- the ForwardAD key's fallback ---------------------------------------------------------------------

def _dual_inputs(op, args):
    """[(position, index in a Tensor[] or None, input, its tangent)] for the inputs that have a tangent."""
    found = []
    for i in op.tensor_positions:
        a = args[i]
        if a.__class__ is list or a.__class__ is tuple:
            for j, t in enumerate(a):
                if isinstance(t, Tensor):
                    tangent = tangent_of(t)
                    if tangent is not None:
                        found.append((i, j, t, tangent))
        elif isinstance(a, Tensor):
            tangent = tangent_of(a)
            if tangent is not None:
                found.append((i, None, a, tangent))
    return found


def _outputs(result) -> list:
    return list(result) if result.__class__ is tuple or result.__class__ is list else [result]


def _jvp(op, args, duals, differentiable):
    """The tangents of op(*args)'s outputs (None where an output has none), by the double-vjp trick on
    the op run once more, on primals that require grad. `differentiable`: keep the graph of the result
    (the primals or the tangents require grad), else the primals are detached."""
    args = [list(a) if a.__class__ is list or a.__class__ is tuple else a for a in args]
    primals = []
    for i, j, a, _ in duals:
        # an alias keeps a primal's own history reachable; a detached one starts a fresh graph
        p = ops.alias(a) if differentiable and a.requires_grad else a.detach().requires_grad_()
        if j is None:
            args[i] = p
        else:
            args[i][j] = p
        primals.append(p)
    outputs = _outputs(call(op, args))
    diff = [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and _float(o) and o.requires_grad]
    tangents = [None] * len(outputs)
    if not diff:
        return tangents
    # g is linear in u, so u's value never enters J v; ones, not zeros: a formula that takes the log of its
    # grad_output (logcumsumexp's) has no derivative at zero. A complex output's u is zero: a backward that
    # checks its grad_output (linalg_eig_backward's phase check) must not see a loss that is not there
    us = [(ops.zeros_like if outputs[k].is_complex() else ops.ones_like)(outputs[k]).requires_grad_() for k in diff]
    gs = grad([outputs[k] for k in diff], primals, us, create_graph=True, allow_unused=True)
    pairs = [(g, d[3]) for g, d in zip(gs, duals) if g is not None and g.requires_grad]
    jvps = (grad([g for g, _ in pairs], us, [v for _, v in pairs], create_graph=differentiable, allow_unused=True)
            if pairs else [None] * len(us))
    roots = {id(_root(d[3]._data)) for d in duals}
    for k, u, jv in zip(diff, us, jvps):
        if jv is None:
            jv = ops.zeros_like(u)
        elif id(_root(jv._data)) in roots:
            # a backward that hands its grad on as it is (clone, a reshape) gives an input's tangent back:
            # the output's tangent must be its own, as an in-place op on the output writes into it
            jv = jv.clone()
        tangents[k] = jv
    return tangents


def _root(array):
    """The array that owns `array`'s memory (NumPy's and CuPy's .base chain)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def _forward_ad_fallback(op, keyset, args):
    duals = _dual_inputs(op, args)
    below = keyset & ~FORWARD_AD
    if not duals:
        return op.redispatch(below, args)
    info = getattr(op, "info", None)
    if info is not None and not info.forward_ad_supported:
        raise NotImplementedError(
            f"Trying to use forward AD with {op.name} that does not support it because it has not been "
            "implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?"
            "template=feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
            "implementation to derivatives.yaml")
    differentiable = tls.grad_enabled and any(a.requires_grad or v.requires_grad for _, _, a, v in duals)
    # the default Generator's NumPy generator (made now if nothing drew yet, so that the tangent's draws
    # and the primal's start from one state)
    generator = numpy_rng(None)
    state = generator.bit_generator.state
    with ExcludeDispatchKeyGuard(FORWARD_AD):
        # forward AD does not depend on grad mode (PyTorch's tangents flow under no_grad too)
        with enable_grad():
            tangents = _jvp(op, args, duals, differentiable)
        generator.bit_generator.state = state     # the primal draws the same random numbers
        result = op.redispatch(below, args)
        inputs = [d[2] for d in duals]
        for o, tangent in zip(_outputs(result), tangents):
            if tangent is None or any(o is a for a in inputs):
                continue             # no tangent, or an input handed back as it is: it keeps its own
            m = o._autograd_meta
            if m.__class__ is DifferentiableViewMeta and m.view_fn[-1][0] is op and duals[0][0] == 0:
                # a view op: the tangent is the same view of the input's tangent (PyTorch's forward views)
                with set_grad_enabled(differentiable):
                    tangent = replay_view(duals[0][3], m.view_fn[-1:])
            else:
                if not _has_same_meta(tangent, o):
                    # laid out as the output, as PyTorch's set_fw_grad does: a view of the output (a later
                    # view op) then replays on its tangent
                    with set_grad_enabled(differentiable):
                        tangent = _new_with_same_meta(tangent, o)
                if m is not None and m.grad_fn is not None:
                    _output_tangents.setdefault(m.grad_fn, {})[m.output_nr] = tangent
            _set_tangent(o, tangent)
    return result


register_fallback(DispatchKey.ForwardAD, _forward_ad_fallback)


# ---- the Python API (torch/autograd/forward_ad.py) ------------------------------------------------------

def enter_dual_level() -> int:
    """Open a forward grad level (only one may be open) and make it the default of the other functions."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    tls.included |= FORWARD_AD
    tls.refresh()
    return _current_level


def exit_dual_level(*, level=None) -> None:
    """Close the open level, deleting every tangent made at it."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    for ref in _duals:
        t = ref()
        m = t._autograd_meta if t is not None else None
        if m is not None and getattr(m, "fw_grad", None) is not None:
            del m.fw_grad
    _duals.clear()
    _output_tangents.clear()
    tls.included &= ~FORWARD_AD
    tls.refresh()
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliased to `tensor` (a view of it) with `tangent` as its tangent, as it is."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not _float(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not _float(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {level} is not supported.")
    if tangent_of(tangent) is not None:
        # PyTorch's set_fw_grad: a tangent with a tangent of its own would be second-order forward AD
        # (sic: PyTorch's message has no space before the level)
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} "
                           f"is not supported.")
    with ExcludeDispatchKeyGuard(FORWARD_AD):
        dual = ops.alias(tensor)
    set_tangent(dual, tangent, is_inplace_op=False)
    return dual


_UnpackedDualTensor = namedtuple("_UnpackedDualTensor", ["primal", "tangent"])


class UnpackedDualTensor(_UnpackedDualTensor):
    """(primal, tangent), what unpack_dual returns."""


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the primal a view of `tensor` without its tangent, the tangent as it is (None
    for a tensor that has none, or outside any level)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != _current_level:
        raise RuntimeError("Invalid level given to _unpack_dual")
    # no tangent where forward AD is off (a custom Function's forward), as PyTorch's _fw_grad under
    # AutoFwGradMode(false)
    tangent = None if tls.excluded & FORWARD_AD else tangent_of(tensor)
    with ExcludeDispatchKeyGuard(FORWARD_AD):
        primal = ops.alias(tensor)
    if primal._autograd_meta is None:
        primal._autograd_meta = AutogradMeta()
    primal._autograd_meta.fw_grad = _NOT_A_FORWARD_VIEW
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager (and decorator) in which forward AD runs: enters a level, exits it on leaving."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper
