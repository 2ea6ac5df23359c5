"""Tensors combined by a product structure: cartesian_prod (the rows of every combination
of the vectors' elements, PyTorch's composite of meshgrid, flatten and stack: StackBackward0),
combinations (PyTorch's meshgrid masked to i1 < i2 < …, stacked)
and block_diag (the tensors as the blocks of a block-diagonal matrix, a kernel of its own
with derivatives.yaml's block_diag_backward: each block's slice of the gradient)."""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...backends.meta import MetaArray
from ...creation import empty, tensor
from ..registry import defop
from ..samples import SampleInput, make_arg
from .advanced_indexing import index_select
from .indexing import slice as slice_op
from .join import promote_list, stack
from .rearrange import _varargs, meshgrid
from .view import flatten, reshape


def _cartesian_prod(tensors):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([flatten(g) for g in meshgrid(tensors, indexing="ij")], 1)


cartesian_prod = _varargs(defop(
    "cartesian_prod(Tensor[] tensors) -> Tensor", composite=_cartesian_prod,
    samples=lambda op: [
        SampleInput("(3,),(2,)", [make_arg((3,), key=(op, 0)), make_arg((2,), key=(op, 1))]),
        SampleInput("three", [make_arg((2,), key=(op, 2)), make_arg((1,), key=(op, 3)), make_arg((2,), key=(op, 4))]),
        SampleInput("one", [make_arg((3,), key=(op, 5))])],
    torch="lambda tensors: torch.cartesian_prod(*tensors)",
    doc="Every combination of the vectors' elements, one per row (itertools.product's order)."), "cartesian_prod")


def _combinations(self, r, with_replacement):
    # ATen's combinations: r copies of self in a meshgrid, each masked to the index tuples i1 < i2 < …
    # (<= with replacement) and stacked. NOTE: here each copy is picked by those tuples' indices
    # (index_select), the same values and StackBackward0, where masked_select's size would depend on
    # the mask's values and Meta could not tell it
    if self.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty((0,), dtype=self.dtype, device=self.device)
    n = self.shape[0]
    index = np.indices((n,) * r)
    mask = np.ones((n,) * r, dtype=bool)
    for i in range(r - 1):
        mask &= index[i] <= index[i + 1] if with_replacement else index[i] < index[i + 1]
    picks = [tensor(index[i][mask], dtype=dtypes.int64, device=self.device) for i in range(r)]
    return stack([index_select(self, 0, p) for p in picks], 1)


combinations = defop(
    "combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor", composite=_combinations,
    samples=lambda op: [
        SampleInput("(4,)", make_arg((4,), key=(op, 0))),
        SampleInput("(4,) r=3", make_arg((4,), key=(op, 1)), 3),
        SampleInput("(3,) with replacement", make_arg((3,), key=(op, 2)), 2, True),
        SampleInput("r=1", make_arg((3,), key=(op, 3)), 1)],
    torch="torch.combinations",
    doc="The length-r combinations of the vector's elements, one per row (itertools.combinations' order; "
        "with_replacement: combinations_with_replacement's).")


def _block_shape(i, shape):
    """The (rows, columns) of block i: a scalar is 1x1, a vector one row."""
    if len(shape) > 2:
        raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                           f"{len(shape)} dimensions")
    return (shape[0] if len(shape) == 2 else 1), (shape[-1] if shape else 1)


def _block_diag_meta(tensors):
    blocks = [_block_shape(i, t.shape) for i, t in enumerate(tensors)]
    dtype = dtypes.result_type(tensors) if tensors else np.dtype(np.float32)
    return MetaArray((sum(r for r, _ in blocks), sum(c for _, c in blocks)), dtype)


def _block_diag_kernel(xp, tensors):
    out_meta = _block_diag_meta(tensors)
    out = xp.zeros(out_meta.shape, dtype=out_meta.dtype)
    row = col = 0
    for i, t in enumerate(tensors):
        rows, cols = _block_shape(i, t.shape)
        out[row:row + rows, col:col + cols] = t.reshape(rows, cols)
        row, col = row + rows, col + cols
    return out


def _block_diag_backward(grad, shapes):
    out, row, col = [], 0, 0
    for i, shape in enumerate(shapes):
        rows, cols = _block_shape(i, shape)
        block = slice_op(slice_op(grad, 0, row, row + rows), 1, col, col + cols)
        out.append(block if len(shape) == 2 else reshape(block, list(shape)))
        row, col = row + rows, col + cols
    return out


block_diag = _varargs(defop(
    "block_diag(Tensor[] tensors) -> Tensor",
    supports_complex=True, kernel=_block_diag_kernel, meta=_block_diag_meta, promote=promote_list,
    grads={"tensors": lambda grad, tensors_shape: _block_diag_backward(grad, tensors_shape)},
    samples=lambda op: [
        SampleInput("(2,3),(1,2)", [make_arg((2, 3), key=(op, 0)), make_arg((1, 2), key=(op, 1))]),
        SampleInput("0-d, (3,), (2,2)T, (0,)", [make_arg((), key=(op, 2)), make_arg((3,), key=(op, 3)),
                                               make_arg((2, 2), key=(op, 4), transposed=True),
                                               make_arg((0,), key=(op, 5))]),
        SampleInput("int64 and float64", [make_arg((2,), key=(op, 6), dtype=dtypes.int64, low=-5, high=5,
                                                   integer=True), make_arg((2, 1), key=(op, 7))])],
    torch="lambda tensors: torch.block_diag(*tensors)",
    doc="The tensors as the diagonal blocks of one matrix (a scalar is 1x1, a vector one row)."), "block_diag")
