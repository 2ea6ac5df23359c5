"""Joining and splitting: cat, stack (Tensor[] inputs) and split, split_with_sizes,
chunk, unbind (Tensor[] outputs). Each is the inverse of another one here, which is
what its backward formula calls: cat <-> split_with_sizes, stack <-> unbind."""
from __future__ import annotations

from ... import dtypes
from ...backends.meta import MetaArray
from ...errors import DimensionError, ShapeError
from ...shapes import normalize_dim
from ..registry import defop
from ..samples import SampleInput, make_arg
from .indexing import slice as slice_op
from .view import reshape


def promote_list(arrays, positions) -> None:
    """PyTorch's result_type over the tensors of a Tensor[] argument (cat, stack)."""
    for i in positions:
        items = arrays[i]
        if items:
            dt = dtypes.result_type(items)
            arrays[i] = [a if a.dtype == dt else a.astype(dt) for a in items]


def _along(dim_index, lo, hi):
    return (slice(None),) * dim_index + (slice(lo, hi),)


# ---- cat ------------------------------------------------------------------------------------

def _cat_plan(shapes, dim):
    """(dim, output shape, positions that take part). 1-D empty tensors are skipped, as
    PyTorch's legacy rule has it (`cat([tensor([]), x])` is x)."""
    if not shapes:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, s in enumerate(shapes):
        if len(s) == 0:
            raise ShapeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    used = [i for i, s in enumerate(shapes) if tuple(s) != (0,)]
    if not used:
        normalize_dim(dim, 1)
        return 0, (0,), used
    ref = tuple(shapes[used[0]])
    d = normalize_dim(dim, len(ref))
    total = 0
    for i in used:
        s = tuple(shapes[i])
        if len(s) != len(ref):
            raise ShapeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(s)}")
        for k, (want, got) in enumerate(zip(ref, s)):
            if k != d and want != got:
                raise ShapeError(f"Sizes of tensors must match except in dimension {d}. Expected size {want} "
                                 f"but got size {got} for tensor number {i} in the list.")
        total += s[d]
    return d, ref[:d] + (total,) + ref[d + 1:], used


def _cat_kernel(xp, tensors, dim):
    d, shape, used = _cat_plan([t.shape for t in tensors], dim)
    if not used:
        return xp.zeros(shape, dtype=tensors[0].dtype)
    return xp.concatenate([tensors[i] for i in used], axis=d)


def _cat_meta(tensors, dim):
    _, shape, _ = _cat_plan([t.shape for t in tensors], dim)
    return MetaArray(shape, tensors[0].dtype)


def _cat_backward(grad, shapes, dim):
    d, _, used = _cat_plan(shapes, dim)
    out = [None] * len(shapes)
    pieces = split_with_sizes(grad, [shapes[i][d] for i in used], d) if used else ()
    for i, piece in zip(used, pieces):
        out[i] = piece
    for i in range(len(shapes)):
        if out[i] is None:      # a skipped 1-D empty input: its gradient is empty too
            out[i] = slice_op(reshape(grad, [-1]), 0, 0, 0, 1)
    return out


def _cat_samples(op):
    a = make_arg((2, 3), key=(op, 0))
    return [
        SampleInput("(2,3)+(1,3) dim 0", [a, make_arg((1, 3), key=(op, 1))]),
        SampleInput("(2,3)+(2,1)+(2,2) dim -1", [a, make_arg((2, 1), key=(op, 2)), make_arg((2, 2), key=(op, 3))],
                    -1),
        SampleInput("T (3,2)+(3,2) dim 1", [make_arg((3, 2), key=(op, 4), transposed=True),
                                            make_arg((3, 2), key=(op, 5))], dim=1),
        SampleInput("one tensor", [make_arg((4,), key=(op, 6))]),
        SampleInput("legacy empty skipped", [make_arg((0,), key=(op, 7)), a], 1),
        SampleInput("float32 (no grad)+float64", [make_arg((2,), key=(op, 8), dtype=dtypes.float32,
                                                           requires_grad=False), make_arg((3,), key=(op, 9))]),
        SampleInput("(2,2,2)+(2,1,2) dim 1", [make_arg((2, 2, 2), key=(op, 10)), make_arg((2, 1, 2), key=(op, 11))],
                    1),
    ]


cat = defop(
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    supports_complex=True, kernel=_cat_kernel, meta=_cat_meta, promote=promote_list,
    grads={"tensors": lambda grad, tensors_shape, dim: _cat_backward(grad, tensors_shape, dim)},
    samples=_cat_samples, torch="torch.cat")


# ---- stack ----------------------------------------------------------------------------------

def _stack_plan(shapes, dim):
    if not shapes:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tuple(shapes[0])
    for i, s in enumerate(shapes[1:], 1):
        if tuple(s) != ref:
            raise ShapeError(f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and "
                             f"{list(s)} at entry {i}")
    d = normalize_dim(dim, len(ref) + 1)
    return d, ref[:d] + (len(shapes),) + ref[d:]


def _stack_kernel(xp, tensors, dim):
    d, _ = _stack_plan([t.shape for t in tensors], dim)
    return xp.stack(tensors, axis=d)


stack = defop(
    "stack(Tensor[] tensors, int dim=0) -> Tensor",
    supports_complex=True, kernel=_stack_kernel, promote=promote_list,
    meta=lambda tensors, dim: MetaArray(_stack_plan([t.shape for t in tensors], dim)[1], tensors[0].dtype),
    grads={"tensors": lambda grad, dim: unbind(grad, dim)},
    samples=lambda op: [
        SampleInput("0-d x3", [make_arg((), key=(op, i)) for i in range(3)]),
        SampleInput("(2,3) x2 dim 1", [make_arg((2, 3), key=(op, 3)), make_arg((2, 3), key=(op, 4))], 1),
        SampleInput("(2,3) x2 dim -1", [make_arg((2, 3), key=(op, 5)), make_arg((2, 3), key=(op, 6))], dim=-1),
        SampleInput("T (3,2) x2", [make_arg((3, 2), key=(op, 7), transposed=True), make_arg((3, 2), key=(op, 8))]),
        SampleInput("one tensor", [make_arg((4,), key=(op, 9))])],
    torch="torch.stack")


# ---- split, split_with_sizes, chunk, unbind ---------------------------------------------------

# NOTE: every output is a tensor object (and a view, and an edge in the backward graph);
# a request for millions of them is a mistake, refused before any is made.
MAX_PIECES = 100_000


def _check_piece_count(op, count):
    if count > MAX_PIECES:
        raise RuntimeError(f"{op} would make {count:,} tensors; agrad makes at most {MAX_PIECES:,} outputs "
                           "from one op")


def _split_sizes(shape, split_size, dim):
    """The piece sizes of PyTorch's split.Tensor (the last piece may be smaller)."""
    if not shape:
        raise ShapeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    d = normalize_dim(dim, len(shape))
    size = shape[d]
    if split_size == 0 and size != 0:
        raise ShapeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    if split_size == 0:
        return d, [0]
    count = max((size + split_size - 1) // split_size, 1)
    _check_piece_count("split", count)
    return d, [split_size] * (count - 1) + [size - split_size * (count - 1)]


def _check_sizes(shape, split_sizes, dim):
    if not shape:
        raise ShapeError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, len(shape))
    _check_piece_count("split_with_sizes", len(split_sizes))
    sizes = list(split_sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != shape[d]:
        raise ShapeError(f"split_with_sizes expects split_sizes to sum exactly to {shape[d]} (input tensor's size "
                         f"at dimension {d}), but got split_sizes={sizes}")
    return d, sizes


def _pieces(self, d, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(self[_along(d, start, start + s)])
        start += s
    return tuple(out)


def _meta_pieces(self, d, sizes):
    return tuple(MetaArray(self.shape[:d] + (s,) + self.shape[d + 1:], self.dtype) for s in sizes)


def _split_plan(shape, split_size_or_sections, dim):
    # NOTE: the dispatcher hands `int[]` arguments over as tuples: one entry is a split
    # size (split.Tensor); `agrad.split` sends lists of sizes to split_with_sizes.
    if len(split_size_or_sections) == 1:
        return _split_sizes(shape, split_size_or_sections[0], dim)
    return _check_sizes(shape, split_size_or_sections, dim)


def _split_samples(op):
    x = make_arg((5, 4), key=(op, 0))
    return [
        SampleInput("(5,4) size 2", x, 2),
        SampleInput("(5,4) size 3 dim 1", x, 3, 1),
        SampleInput("(5,4) size 7 (one piece)", x, 7),
        SampleInput("(5,4) sections [1,3,1]", x, [1, 3, 1]),
        SampleInput("(5,4) sections [4] dim -1", x, [4], dim=-1),
        SampleInput("T (4,3) size 2 dim 1", make_arg((4, 3), key=(op, 1), transposed=True), 2, 1),
        SampleInput("(2,6,2) size 2 dim 1", make_arg((2, 6, 2), key=(op, 2)), 2, dim=1)]


_split = defop(
    "split(Tensor self, SymInt[] split_size_or_sections, int dim=0) -> Tensor[]",
    supports_complex=True, kernel=lambda xp, self, split_size_or_sections, dim: _pieces(self, *_split_plan(self.shape,
                                                                                   split_size_or_sections, dim)),
    meta=lambda self, split_size_or_sections, dim: _meta_pieces(self, *_split_plan(self.shape,
                                                                                  split_size_or_sections, dim)),
    grads={"self": lambda grads, dim: cat(grads, dim)},
    backward_name=("SplitBackward0", "SplitWithSizesBackward0"), view=True,
    overload=lambda self, split_size_or_sections, dim: 0 if len(split_size_or_sections) == 1 else 1,
    samples=_split_samples, torch="torch.split",
    doc="split_size_or_sections: an int (pieces of that size, the last one smaller) or a list of sizes.")

split_with_sizes = defop(
    "split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
    supports_complex=True,
    kernel=lambda xp, self, split_sizes, dim: _pieces(self, *_check_sizes(self.shape, split_sizes, dim)),
    meta=lambda self, split_sizes, dim: _meta_pieces(self, *_check_sizes(self.shape, split_sizes, dim)), view=True,
    grads={"self": lambda grads, dim: cat(grads, dim)},
    samples=lambda op: [
        SampleInput("(5,4) [2,0,3]", make_arg((5, 4), key=(op, 0)), [2, 0, 3]),
        SampleInput("(3,4) [1,3] dim -1", make_arg((3, 4), key=(op, 1)), [1, 3], -1),
        SampleInput("T (4,3) [3] dim 1", make_arg((4, 3), key=(op, 2), transposed=True), [3], dim=1)],
    torch="torch.split_with_sizes")


def split(self, split_size_or_sections, dim=0):
    """split(Tensor self, SymInt[] split_size_or_sections, int dim=0) -> Tensor[]

    As torch.split: an int gives pieces of that size (the last one smaller; grad_fn
    SplitBackward0), a list gives pieces of those sizes (split_with_sizes;
    SplitWithSizesBackward0)."""
    if isinstance(split_size_or_sections, (list, tuple)):
        return split_with_sizes(self, split_size_or_sections, dim)
    return _split(self, split_size_or_sections, dim)


# NOTE: PyTorch decides between split and split_with_sizes in Python (Tensor.split)
# because the dispatcher cannot tell `2` from `[2]` once an `int[]` is bound; so does agrad.
split.op = _split.op
split.__module__ = "agrad"
_split.op.function = split


def _chunked(self, chunks, dim, by_size, by_sizes):
    """chunk's pieces, split by `by_size` (an int size), or by `by_sizes` when they are all empty."""
    if self.ndim == 0:
        raise ShapeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dim(dim, self.ndim)
    size = self.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        # NOTE: split(0) would make one piece; PyTorch keeps `chunks` empty pieces
        _check_piece_count("chunk", chunks)
        return by_sizes(self, [0] * chunks, d)
    return by_size(self, split_size, d)


def _chunk(self, chunks, dim):
    return _chunked(self, chunks, dim, _split, split_with_sizes)


chunk = defop(
    "chunk(Tensor self, int chunks, int dim=0) -> Tensor[]",
    composite=_chunk,
    samples=lambda op: [
        SampleInput("(6,2) 3", make_arg((6, 2), key=(op, 0)), 3),
        SampleInput("(5,2) 3 uneven", make_arg((5, 2), key=(op, 1)), 3),
        SampleInput("(5,) 4 -> 3 pieces", make_arg((5,), key=(op, 2)), 4),
        SampleInput("(2,7) 2 dim -1", make_arg((2, 7), key=(op, 3)), 2, dim=-1),
        SampleInput("(2,3) 5 > size", make_arg((2, 3), key=(op, 4)), 5, 1)],
    torch="torch.chunk")


# ---- unsafe_split, unsafe_split_with_sizes, unsafe_chunk ------------------------------------------
# PyTorch's "unsafe" forms: the same pieces, sharing the input's memory, but not marked as views
# (no shared version counter, no view replay), so an in-place op on a piece is recorded as on any
# non-leaf and is not checked against the input (the caller promises it is safe).

unsafe_split = defop(
    "unsafe_split(Tensor self, SymInt split_size, int dim=0) -> Tensor[]",
    kernel=lambda xp, self, split_size, dim: _pieces(self, *_split_sizes(self.shape, split_size, dim)),
    meta=lambda self, split_size, dim: _meta_pieces(self, *_split_sizes(self.shape, split_size, dim)),
    grads={"self": lambda grads, dim: cat(grads, dim)},
    samples=lambda op: [s for s in _split_samples(op) if not isinstance(s.args[1], list)],
    torch="torch.unsafe_split",
    doc="split by an int size, the pieces not marked as views of self (PyTorch's unsafe_split).")

unsafe_split_with_sizes = defop(
    "unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
    kernel=lambda xp, self, split_sizes, dim: _pieces(self, *_check_sizes(self.shape, split_sizes, dim)),
    meta=lambda self, split_sizes, dim: _meta_pieces(self, *_check_sizes(self.shape, split_sizes, dim)),
    grads={"self": lambda grads, dim: cat(grads, dim)},
    samples=lambda op: [
        SampleInput("(5,4) [2,0,3]", make_arg((5, 4), key=(op, 0)), [2, 0, 3]),
        SampleInput("T (4,3) [1,2] dim 1", make_arg((4, 3), key=(op, 2), transposed=True), [1, 2], dim=1)],
    torch="torch.unsafe_split_with_sizes",
    doc="split_with_sizes, the pieces not marked as views of self (PyTorch's unsafe_split_with_sizes).")


def _unsafe_chunk(self, chunks, dim):
    return _chunked(self, chunks, dim, unsafe_split, unsafe_split_with_sizes)


unsafe_chunk = defop(
    "unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]",
    composite=_unsafe_chunk,
    samples=lambda op: [
        SampleInput("(6,2) 3", make_arg((6, 2), key=(op, 0)), 3),
        SampleInput("(5,2) 3 uneven", make_arg((5, 2), key=(op, 1)), 3),
        SampleInput("(2,7) 2 dim -1", make_arg((2, 7), key=(op, 3)), 2, dim=-1)],
    torch="torch.unsafe_chunk",
    doc="chunk through unsafe_split: the pieces are not marked as views of self.")


def _unbind_dim(shape, dim):
    if not shape:
        raise DimensionError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, len(shape))
    _check_piece_count("unbind", shape[d])
    return d


def _unbind_kernel(xp, self, dim):
    d = _unbind_dim(self.shape, dim)
    return tuple(self[(slice(None),) * d + (i, Ellipsis)] for i in range(self.shape[d]))    # 0-d: views too


def _unbind_meta(self, dim):
    d = _unbind_dim(self.shape, dim)
    return tuple(MetaArray(self.shape[:d] + self.shape[d + 1:], self.dtype) for _ in range(self.shape[d]))


unbind = defop(
    "unbind(Tensor self, int dim=0) -> Tensor[]",
    supports_complex=True, kernel=_unbind_kernel, meta=_unbind_meta, view=True,
    grads={"self": lambda grads, dim: stack(grads, dim)},
    samples=lambda op: [
        SampleInput("(3,2)", make_arg((3, 2), key=(op, 0))),
        SampleInput("(2,3,2) dim 1", make_arg((2, 3, 2), key=(op, 1)), 1),
        SampleInput("T (4,3) dim -1", make_arg((4, 3), key=(op, 2), transposed=True), dim=-1),
        SampleInput("(1,) -> one 0-d", make_arg((1,), key=(op, 3)))],
    torch="torch.unbind")
