"""NumPy's splitting functions, composites over slice as PyTorch's are (TensorShape.cpp):
tensor_split (NumPy's array_split: n nearly equal sections, or cuts at given indices),
hsplit, vsplit and dsplit. Every piece is a view of self made by slice, so its grad_fn is
SliceBackward0 and its gradient slice's."""
from __future__ import annotations

from ... import dtypes
from ..._tensor import Tensor
from ...shapes import normalize_dim
from ..registry import defop
from ..samples import SampleInput, make_arg
from .indexing import slice as slice_op


def _check_has_dims(self):
    if self.ndim == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with "
                           f"{self.ndim} dims")


def _split_at(self, indices, dim):
    _check_has_dims(self)
    d = normalize_dim(dim, self.ndim)
    starts = [0] + [int(i) for i in indices]
    ends = [int(i) for i in indices] + [self.shape[d]]
    return [slice_op(self, d, start, end) for start, end in zip(starts, ends)]


def _section_indices(size, sections):
    """The cuts of `sections` pieces: the first size % sections pieces one longer (NumPy's array_split)."""
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    base, extra = divmod(size, sections)
    cuts, at = [], 0
    for i in range(sections - 1):
        at += base + (1 if i < extra else 0)
        cuts.append(at)
    return cuts


def _tensor_split_samples(op):
    x = make_arg((7, 4), key=(op, 0))
    return [SampleInput("(7,4) 3 sections", x, 3),
            SampleInput("(7,4) indices [2,5]", x, [2, 5]),
            SampleInput("(7,4) indices [-1] dim 1", x, [-1], 1),
            SampleInput("(7,4) indices [5,2] (an empty piece)", x, [5, 2]),
            SampleInput("(7,4) 4 sections dim -1", x, 4, dim=-1),
            SampleInput("T (3,5) 2 sections dim 1", make_arg((3, 5), key=(op, 1), transposed=True), 2, 1),
            SampleInput("(2,6,2) 8 sections dim 1", make_arg((2, 6, 2), key=(op, 2)), 8, dim=1)]


_tensor_split = defop(
    "tensor_split(Tensor self, SymInt[] indices, int dim=0) -> Tensor[]",
    composite=_split_at, samples=_tensor_split_samples, torch="torch.tensor_split",
    doc="self cut along dim into `sections` nearly equal pieces (the first ones one longer), or at the given "
        "indices; every piece a view.")


def tensor_split(self, indices_or_sections, dim=0):
    """tensor_split(Tensor self, SymInt[] indices, int dim=0) -> Tensor[]

    As torch.tensor_split: an int is a number of sections (tensor_split.sections), a list the
    indices to cut at (tensor_split.indices), a long tensor either (0-d: sections, 1-d: indices)."""
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype != dtypes.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{t.dtype}")
        if t.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {t.ndim} dims")
        indices_or_sections = t.item() if t.ndim == 0 else [int(i) for i in t.tolist()]
    if isinstance(indices_or_sections, (list, tuple)):
        return tuple(_tensor_split(self, list(indices_or_sections), dim))
    _check_has_dims(self)
    size = self.shape[normalize_dim(dim, self.ndim)]
    return tuple(_tensor_split(self, _section_indices(size, int(indices_or_sections)), dim))


# NOTE: as split's: the dispatcher cannot tell `2` (sections) from `[2]` (an index) once an `int[]`
# is bound, so PyTorch's overloads are told apart here, before it
tensor_split.op = _tensor_split.op
tensor_split.__module__ = "agrad"
_tensor_split.op.function = tensor_split


def _numpy_split(name, min_dims, dim_of):
    def fn(self, indices_or_sections):
        if self.ndim < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                               f"with {self.ndim} dimensions!")
        dim = dim_of(self)
        if isinstance(indices_or_sections, (list, tuple)):
            return tuple(_tensor_split(self, list(indices_or_sections), dim))
        sections = int(indices_or_sections)
        if sections == 0 or self.shape[dim] % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {self.shape[dim]} is not divisible by the split_size {sections}!")
        return tensor_split(self, sections, dim)
    return fn


def _numpy_split_samples(shape):
    def samples(op):
        x = make_arg(shape, key=(op, 0))
        return [SampleInput("2 sections", x, 2), SampleInput("indices [1,3]", x, [1, 3])]
    return samples


def _numpy_split_op(name, min_dims, dim_of, shape, doc):
    op = defop(f"{name}(Tensor self, SymInt[] indices) -> Tensor[]", composite=_numpy_split(name, min_dims, dim_of),
               samples=_numpy_split_samples(shape), torch=f"torch.{name}", doc=doc)
    # an int (sections, which must divide the size) or a list of indices, as tensor_split's
    fn = op.op.function = _numpy_split(name, min_dims, dim_of)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__, fn.__module__, fn.op = op.__doc__, "agrad", op.op
    return fn


hsplit = _numpy_split_op("hsplit", 1, lambda self: 0 if self.ndim == 1 else 1, (2, 4, 2),
                         "tensor_split along dim 1 (dim 0 of a vector); sections must divide the size.")
vsplit = _numpy_split_op("vsplit", 2, lambda self: 0, (4, 2),
                         "tensor_split along dim 0 of a matrix or larger; sections must divide the size.")
dsplit = _numpy_split_op("dsplit", 3, lambda self: 2, (2, 2, 4),
                         "tensor_split along dim 2 of a 3-D tensor or larger; sections must divide the size.")
