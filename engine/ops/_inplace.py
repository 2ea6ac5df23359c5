"""The in-place Tensor methods, bound by _tensor_methods.py: `zero_`, `fill_`, `copy_`,
`index_put_`, the comparisons `eq_` … `ge_` (and their aliases `less_` …) and `logical_and_` …
`logical_not_`, the `<op>_` variants of out-of-place ops, and the in-place view ops `t_`,
`transpose_`, `swapdims_`, `swapaxes_`, `squeeze_`, `unsqueeze_`, `as_strided_`. Not an op family: each
method runs an out-of-place op and writes its result back. Recording an in-place op
(checks, the version counter, rebasing a view's base onto CopySlices) is autograd's:
engine/autograd/inplace.py.

An in-place view op changes how a tensor looks at its memory, not the memory: the tensor
takes the layout of the out-of-place view op's result, its version counter moves on, and
autograd records the view op's Node under the in-place variant's name (`t_` is TBackward1,
`squeeze_(dim)` SqueezeBackward4), as PyTorch does. A view stays a view of its base (the
step joins the ops that rebuild it from the base); the same checks as any in-place op apply
(a leaf that requires grad, an output of a multi-view op, a view made under no_grad).
"""
from __future__ import annotations

from .._tensor import DifferentiableViewMeta, Tensor
from ..autograd.forward_ad import _set_tangent, tangent_of
from ..autograd.inference_tensors import ERR_INPLACE
from ..autograd.inplace import _renamed, apply_inplace, bump_version, check_inplace
from ..dispatch_keys import INFERENCE
from ..grad_mode import tls
from ..watchers import before_mutation, mutation_observers
from .conversion import copy
from .factories import fill
from .pointwise.binary import _compare_as_self
from .pointwise.logical import logical_and, logical_not, logical_or, logical_xor
from .pointwise.special import polygamma
from .shape.advanced_indexing import index_put
from .shape.strided import as_strided
from .shape.view import squeeze, t, transpose, unsqueeze

# ---- the in-place methods -------------------------------------------------------------------------


# in-place variants whose result of a complex self is real: PyTorch refuses them by name
_REAL_OF_COMPLEX = {"abs_": "abs", "absolute_": "abs"}


def _method(name, op, backward_name=None):
    """The in-place variant `name` of `op` (a function of the op library), as a Tensor method."""
    refused = _REAL_OF_COMPLEX.get(name)

    def method(self, *args, **kwargs):
        return apply_inplace(self, op, args, kwargs, backward_name)

    if refused is not None:
        def method(self, *args, **kwargs):     # noqa: F811 — the variant with PyTorch's check first
            if self.is_complex():
                raise RuntimeError(f"In-place {refused} is not supported for complex tensors.")
            return apply_inplace(self, op, args, kwargs, backward_name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {op.__name__}: the result is written into self (see agrad.{op.__name__})."
    return method


def _polygamma_of(self, n):
    return polygamma(n, self)


def _polygamma_(self, n):
    # derivatives.yaml's polygamma_ (self first, unlike polygamma): PolygammaBackward1
    return apply_inplace(self, _polygamma_of, (n,), None, "PolygammaBackward1")


def _zero_(self):
    return apply_inplace(self, fill, (0,), None, "ZeroBackward0")


def _fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return apply_inplace(self, copy, (value,), None, "FillBackward3")
    return apply_inplace(self, fill, (value,), None, "FillBackward2")


def _copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not {type(src).__name__}")
    if src._device is not self._device or src._data.dtype != self._data.dtype:
        src = src.to(device=self._device)
    return apply_inplace(self, copy, (src, non_blocking), None, "CopyBackwards")


def _index_put_(self, indices, values, accumulate=False, dims=None):
    if isinstance(values, (int, float, bool)):
        from ..creation import tensor
        values = tensor(values, dtype=self.dtype, device=self.device)
    return apply_inplace(self, index_put, (list(indices), values, accumulate, dims), None, "IndexPutBackward0")


def _comparison(op):
    """Tensor.<op>_ of a comparison: self becomes 1 where it compares true with other (broadcast to
    self), 0 elsewhere, in its own dtype. Recorded as PyTorch records eq_: EqBackward0 (a number) or
    EqBackward1 (a tensor), whose gradients are zeros, so a leaf that requires grad is refused."""
    def method(self, other):
        return apply_inplace(self, _compare_as_self, (other, op))
    method.__name__ = method.__qualname__ = f"{op}_"
    method.__doc__ = f"In-place {op}: self = ({op}(self, other)) in self's dtype."
    return method


_eq_, _ne_, _lt_, _le_, _gt_, _ge_ = (_comparison(op) for op in ("eq", "ne", "lt", "le", "gt", "ge"))


def _logical(op):
    """Tensor.<name>_ of a logical op: self becomes its truth value (1 or 0 in its own dtype). Not seen
    by autograd, as in PyTorch (no derivatives.yaml entry, a non-differentiable output): self keeps its
    history, a leaf that requires grad is written without complaint, only the version counter moves."""
    def method(self, *other):
        for o in other:
            if not isinstance(o, Tensor):
                raise TypeError(f"{op.__name__}_(): argument 'other' (position 1) must be Tensor, not "
                                f"{type(o).__name__}")
        return apply_inplace(self, op, other, recorded=False)
    method.__name__ = method.__qualname__ = f"{op.__name__}_"
    method.__doc__ = f"In-place {op.__name__}: self = {op.__name__}(self, ...) in self's dtype."
    return method


_logical_and_, _logical_or_, _logical_xor_ = (_logical(op) for op in (logical_and, logical_or, logical_xor))
_logical_not_ = _logical(logical_not)


# the out-of-place op's Node -> the in-place variant's (derivatives.yaml's names)
_INPLACE_NAMES = {"TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
                  "UnsqueezeBackward0": "UnsqueezeBackward1", "SqueezeBackward0": "SqueezeBackward3",
                  "SqueezeBackward1": "SqueezeBackward4", "SqueezeBackward2": "SqueezeBackward5",
                  "AsStridedBackward0": "AsStridedBackward1"}


def apply_inplace_view(self: Tensor, view_op, *args) -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"in-place view op on {type(self).__name__}, not a Tensor")
    if self._keys & INFERENCE and not tls.inference_mode:
        raise RuntimeError(ERR_INPLACE)
    record = tls.grad_enabled and self.requires_grad
    if record:
        check_inplace(self)
    out = view_op(self, *args)          # a view of self with the new layout (and its Node, when recording)
    if mutation_observers:
        before_mutation(self)
    was_view = self._autograd_meta.__class__ is DifferentiableViewMeta
    # (forward AD) the tangent changes layout with the primal: the view op's tangent, the same view of
    # self's. A view keeps finding it through its base and its new steps (out's meta, below).
    tangent = None if was_view else tangent_of(out)
    self._data = out._data
    om = out._autograd_meta
    if was_view:
        # still a view of the same base: its steps from the base now end with this op. How it was
        # created stays (PyTorch's in-place view ops do not set it again): under no_grad, t_() does not
        # make a view "created in no_grad mode", nor forgive a multi-output or custom Function's view
        old = self._autograd_meta
        om.creation_meta = old.creation_meta
        if old.has_view_fn(self):
            # NOTE: nor do they extend a view_fn (only as_strided's geometry, read from the view, follows
            # them): the view is rebuilt, and CopySlices finds its part of the base, without this op's step.
            # PyTorch's test_autograd_inplace_views_cross_dtype records the transposed gradient this gives
            om.view_fn = old.view_fn
        if not record:
            # nor does it drop the Node the view had (C++'s raw grad_fn_, what is_leaf() reads): stale
            # now, it is rebuilt from the base when next asked for
            om.grad_fn, om.output_nr = old.grad_fn, old.output_nr
        self._autograd_meta = om
        self._keys = out._keys
    elif record:
        node = om.grad_fn
        m = self._autograd_meta
        m.grad_fn, m.output_nr, m.requires_grad = node, 0, False
    if tangent is not None:
        _set_tangent(self, tangent)
    node = self._autograd_meta.grad_fn if self._autograd_meta is not None else None
    if record and node is not None:
        name = _INPLACE_NAMES.get(node.__class__.__name__)
        if name is not None:
            node.__class__ = _renamed(node.__class__, name)
    bump_version(self)
    if was_view and record:
        # its Node is current: no rebuild on next use. (Not recorded, under no_grad: the next use with
        # grad mode on rebuilds it from the base, this op's step included, as PyTorch regenerates it.)
        om.attr_version = self._version_counter.version
    return self


def _t_(self):
    return apply_inplace_view(self, t)


def _transpose_(self, dim0, dim1):
    return apply_inplace_view(self, transpose, dim0, dim1)


def _squeeze_(self, dim=None):
    return apply_inplace_view(self, squeeze, dim)


def _unsqueeze_(self, dim):
    return apply_inplace_view(self, unsqueeze, dim)


def _as_strided_(self, size, stride, storage_offset=None):
    return apply_inplace_view(self, as_strided, size, stride, storage_offset)
