"""The scatter ops of the view ops (ATen's TensorShape.cpp): slice_scatter, select_scatter,
diagonal_scatter and as_strided_scatter, a copy of self with src written where slice/select/diagonal would look (src of
exactly that view's shape). Each is its own Node with derivatives.yaml's formulas: self's gradient
is the scatter of zeros into grad, src's the view of grad. And slice_inverse, slice's inverse as a view:
self's storage seen with src's geometry."""
from __future__ import annotations

import builtins

from ...backends.meta import MetaArray
from ...creation import zeros_like
from ..registry import defop
from ..samples import SampleInput, make_arg
from .diagonal import _diagonal_plan, _diagonal_view, diagonal
from ...memory_formats import contiguous_format
from ..conversion import clone
from .indexing import _select_index, _slice_range, select
from .indexing import slice as slice_op
from .strided import _address, _as_strided_kernel, _check, _storage, as_strided

_pyslice = builtins.slice


def _check_src(src_shape, view_shape):
    if tuple(src_shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src_shape)}, "
                           f"slice size = {list(view_shape)}")


def _scatter_op(name, args, view_of, view_shape, grads, samples, doc):
    """An op `name(self, src, *args)`: self copied, `view_of(xp, copy, *args)` (a writable view) set to src."""
    def kernel(xp, self, src, *rest):
        _check_src(src.shape, view_shape(self.shape, *rest))
        # self's memory order kept, as clone's preserve_format keeps it (as_strided_scatter's geometry reads it)
        out = self.copy(order="K") if hasattr(self, "flags") else self.copy()
        view_of(xp, out, *rest)[...] = src
        return out

    def meta(self, src, *rest):
        _check_src(src.shape, view_shape(self.shape, *rest))
        return MetaArray(self.shape, self.dtype)

    # (no promotion: src is cast to self's dtype, as copy_ casts it)
    return defop(f"{name}(Tensor self, Tensor src, {args}) -> Tensor", kernel=kernel, meta=meta,
                 grads=grads, samples=samples, torch=f"torch.{name}", doc=doc, supports_complex=True)


def _slice_view(xp, out, dim, start, end, step):
    d, lo, hi, step, _ = _slice_range(out.shape, dim, start, end, step)
    return out[(_pyslice(None),) * d + (_pyslice(lo, hi, step),)]


def _slice_shape(shape, dim, start, end, step):
    d, _, _, _, n = _slice_range(shape, dim, start, end, step)
    return shape[:d] + (n,) + shape[d + 1:]


def _select_view(xp, out, dim, index):
    d, i = _select_index(out.shape, dim, index)
    return out[(_pyslice(None),) * d + (i, Ellipsis)]


def _select_shape(shape, dim, index):
    d, _ = _select_index(shape, dim, index)
    return shape[:d] + shape[d + 1:]


def _diagonal_shape(shape, offset, dim1, dim2):
    _, _, n, rest = _diagonal_plan(shape, offset, dim1, dim2)
    return tuple(shape[i] for i in rest) + (n,)


slice_scatter = _scatter_op(
    "slice_scatter", "int dim=0, int? start=None, int? end=None, int step=1", _slice_view, _slice_shape,
    {"self": lambda grad, src, dim, start, end, step: slice_scatter(grad, zeros_like(src), dim, start, end, step),
     "src": lambda grad, dim, start, end, step: slice_op(grad, dim, start, end, step)},
    lambda op: [
        SampleInput("(5,3) rows 1:4", make_arg((5, 3), key=(op, 0)), make_arg((3, 3), key=(op, 1)), 0, 1, 4),
        SampleInput("(3,4) dim=1 ::2", make_arg((3, 4), key=(op, 2)), make_arg((3, 2), key=(op, 3)), 1, None, None, 2),
        SampleInput("(4,) -2:", make_arg((4,), key=(op, 4)), make_arg((2,), key=(op, 5)), start=-2)],
    "self with src written into self[start:end:step] along dim.")

select_scatter = _scatter_op(
    "select_scatter", "int dim, int index", _select_view, _select_shape,
    {"self": lambda grad, src, dim, index: select_scatter(grad, zeros_like(src), dim, index),
     "src": lambda grad, dim, index: select(grad, dim, index)},
    lambda op: [
        SampleInput("(3,4) dim=1 index=2", make_arg((3, 4), key=(op, 0)), make_arg((3,), key=(op, 1)), 1, 2),
        SampleInput("(2,3,2) dim=0 index=-1", make_arg((2, 3, 2), key=(op, 2)), make_arg((3, 2), key=(op, 3)), 0, -1),
        SampleInput("(4,) -> 0-d", make_arg((4,), key=(op, 4)), make_arg((), key=(op, 5)), 0, 1)],
    "self with src written into self.select(dim, index).")

diagonal_scatter = _scatter_op(
    "diagonal_scatter", "int offset=0, int dim1=0, int dim2=1", _diagonal_view, _diagonal_shape,
    {"self": lambda grad, src, offset, dim1, dim2: diagonal_scatter(grad, zeros_like(src), offset, dim1, dim2),
     "src": lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2)},
    lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), make_arg((3,), key=(op, 1))),
        SampleInput("(3,4) offset 1", make_arg((3, 4), key=(op, 2)), make_arg((3,), key=(op, 3)), 1),
        SampleInput("(2,3,3) offset -1 dims 1,2", make_arg((2, 3, 3), key=(op, 4)), make_arg((2, 2), key=(op, 5)),
                    -1, 1, 2)],
    "self with src written into self.diagonal(offset, dim1, dim2).")


def _own_storage(grad):
    return clone(grad, memory_format=contiguous_format)


def _as_strided_shape(shape, size, stride, storage_offset):
    size, _ = _check(None, size, stride, storage_offset)
    return size


as_strided_scatter = _scatter_op(
    "as_strided_scatter", "int[] size, int[] stride, int? storage_offset=None",
    _as_strided_kernel, _as_strided_shape,
    # derivatives.yaml's, which take grad contiguous (PyTorch's note: as_strided_scatter's backward assumes a
    # contiguous input). NOTE: a contiguous copy of its own, so that the geometry's storage offset counts from
    # grad's first element, never from that of a larger array grad may be a view of
    {"self": lambda grad, src, size, stride, storage_offset:
        as_strided_scatter(_own_storage(grad), zeros_like(src), size, stride, storage_offset),
     "src": lambda grad, size, stride, storage_offset: as_strided(_own_storage(grad), size, stride, storage_offset)},
    # NOTE: PyTorch 2.13's gradient for self is grad on the written positions, not off them (it fails
    # torch.autograd.gradcheck); agrad's is derivatives.yaml's intent. So self takes no gradient in the
    # samples (the reference records src's); tests/engine/test_ops_indexing_advanced.py gradchecks self's
    lambda op: [
        SampleInput("(3,4) a column", make_arg((3, 4), key=(op, 0), requires_grad=False),
                    make_arg((3,), key=(op, 1)), [3], [4], 1),
        SampleInput("(3,4) (2,2) strides (6,2) offset 3", make_arg((3, 4), key=(op, 2), requires_grad=False),
                    make_arg((2, 2), key=(op, 3)), [2, 2], [6, 2], 3),
        SampleInput("(4,) no offset", make_arg((4,), key=(op, 4), requires_grad=False),
                    make_arg((2,), key=(op, 5)), [2], [2])],
    "self (copied with its memory order) with src written into its as_strided(size, stride, storage_offset) view.")


# ---- slice_inverse: slice's inverse as a view (functionalization's) --------------------------------

def _src_geometry(src):
    """src's sizes, strides and storage offset, in elements."""
    itemsize = src.dtype.itemsize
    offset = (_address(src) - _address(_storage(src))) // itemsize if hasattr(src, "base") else 0
    return tuple(src.shape), tuple(st // itemsize for st in src.strides), offset


def _slice_inverse_kernel(xp, self, src, dim, start, end, step):
    size, stride, offset = _src_geometry(src)
    return _as_strided_kernel(xp, self, size, stride, offset)


def _slice_inverse_meta(self, src, dim, start, end, step):
    return MetaArray(tuple(src.shape), self.dtype)


slice_inverse = defop(
    "slice_inverse(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor",
    kernel=_slice_inverse_kernel, meta=_slice_inverse_meta, view=True,
    # derivatives.yaml: self's is the slice of grad, src's grad with the slice's positions zeroed
    grads={"self": lambda grad, dim, start, end, step: slice_op(grad, dim, start, end, step),
           "src": lambda grad, self, dim, start, end, step: slice_scatter(grad, zeros_like(self), dim, start, end,
                                                                          step)},
    # (self's own storage must hold src's geometry: a slice's base is what it normally views.) NOTE: the
    # formulas hold where self is src's slice in memory too; the transposed geometry permutes self's
    # elements, so that sample takes no gradient for self (PyTorch's formula fails gradcheck there as well)
    samples=lambda op: [
        SampleInput("(3,4) whole", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1)), 0, 0, 3),
        SampleInput("(3,4) src transposed dim=1", make_arg((3, 4), key=(op, 2), requires_grad=False),
                    make_arg((3, 4), key=(op, 3), transposed=True), 1),
        SampleInput("(4,) step 1 start 0", make_arg((4,), key=(op, 4)), make_arg((4,), key=(op, 5)), 0, 0, None, 1)],
    torch="torch.slice_inverse",
    doc="The inverse of slice (functionalization's): a view of self's storage with src's sizes, strides and "
        "storage offset, self being src[start:end:step] along dim.")
