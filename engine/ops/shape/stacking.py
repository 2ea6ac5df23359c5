"""NumPy's joining functions, composites over cat as PyTorch's are (TensorShape.cpp):
concat and concatenate (cat's other names), hstack, vstack (row_stack), dstack,
column_stack, and the atleast_1d/2d/3d that give each piece the dimensions they join along.
Every result's grad_fn is CatBackward0, its gradient cat's."""
from __future__ import annotations

from ..registry import defop
from ..samples import SampleInput, make_arg
from .join import cat
from .view import reshape, unsqueeze


# ---- atleast_nd: views with leading (and, for 3-D, trailing) dimensions of size 1 ---------------

def _atleast_1d(self):
    return reshape(self, [1]) if self.ndim == 0 else self


def _atleast_2d(self):
    if self.ndim == 0:
        return reshape(self, [1, 1])
    return unsqueeze(self, 0) if self.ndim == 1 else self


def _atleast_3d(self):
    # PyTorch's: a vector (n,) becomes (1, n, 1), a matrix (m, n) becomes (m, n, 1)
    if self.ndim == 0:
        return reshape(self, [1, 1, 1])
    if self.ndim == 1:
        return unsqueeze(unsqueeze(self, 0), -1)
    return unsqueeze(self, -1) if self.ndim == 2 else self


def _ranks_samples(op):
    return [SampleInput(f"{len(shape)}-d", make_arg(shape, key=(op, i)))
            for i, shape in enumerate([(), (3,), (2, 3), (2, 3, 2)])]


atleast_1d = defop("atleast_1d(Tensor self) -> Tensor", composite=_atleast_1d, samples=_ranks_samples,
                   torch="torch.atleast_1d", doc="self with at least one dimension.")
atleast_2d = defop("atleast_2d(Tensor self) -> Tensor", composite=_atleast_2d, samples=_ranks_samples,
                   torch="torch.atleast_2d", doc="self with at least two dimensions (a vector becomes a row).")
atleast_3d = defop("atleast_3d(Tensor self) -> Tensor", composite=_atleast_3d, samples=_ranks_samples,
                   torch="torch.atleast_3d", doc="self with at least three dimensions (NumPy's rule).")


# ---- the joins ---------------------------------------------------------------------------------

def _check_nonempty(name, tensors):
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def _hstack(tensors):
    _check_nonempty("hstack", tensors)
    pieces = [_atleast_1d(t) for t in tensors]
    # vectors join end to end, anything larger along its columns
    return cat(pieces, 0 if pieces[0].ndim == 1 else 1)


def _vstack(tensors):
    _check_nonempty("vstack", tensors)
    return cat([_atleast_2d(t) for t in tensors], 0)


def _dstack(tensors):
    _check_nonempty("dstack", tensors)
    return cat([_atleast_3d(t) for t in tensors], 2)


def _column_stack(tensors):
    _check_nonempty("column_stack", tensors)
    # scalars and vectors become columns; matrices and larger join as they are
    return cat([reshape(t, [t.numel(), 1]) if t.ndim <= 1 else t for t in tensors], 1)


def _stacking_samples(op):
    vec = [make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1))]
    mats = [make_arg((2, 3), key=(op, 2)), make_arg((2, 3), key=(op, 3), transposed=True)]
    return [SampleInput("two vectors", vec),
            SampleInput("two matrices", mats),
            SampleInput("3-d", [make_arg((2, 3, 2), key=(op, 4)), make_arg((2, 3, 2), key=(op, 5))]),
            SampleInput("scalars", [make_arg((), key=(op, 6)), make_arg((), key=(op, 7))])]


def _column_stack_samples(op):
    return _stacking_samples(op)[:3] + [
        SampleInput("vector and matrix", [make_arg((2,), key=(op, 8)), make_arg((2, 3), key=(op, 9))])]


def _joining(name, fn, doc, samples=_stacking_samples):
    return defop(f"{name}(Tensor[] tensors) -> Tensor", composite=fn, samples=samples, torch=f"torch.{name}",
                 doc=doc)


hstack = _joining("hstack", _hstack, "The tensors joined horizontally: along dim 0 for vectors, else dim 1.")
vstack = _joining("vstack", _vstack, "The tensors joined vertically (dim 0), vectors as rows.")
row_stack = _joining("row_stack", _vstack, "vstack, NumPy's older name.")
dstack = _joining("dstack", _dstack, "The tensors joined along dim 2 (depth), each made at least 3-D.")
column_stack = _joining("column_stack", _column_stack, "The tensors joined as columns (dim 1), vectors as columns.",
                        _column_stack_samples)


def _concat_samples(op):
    a = make_arg((2, 3), key=(op, 0))
    return [SampleInput("dim 0", [a, make_arg((1, 3), key=(op, 1))]),
            SampleInput("dim -1", [a, make_arg((2, 2), key=(op, 2))], -1)]


concat = defop("concat(Tensor[] tensors, int dim=0) -> Tensor", composite=lambda tensors, dim=0: cat(tensors, dim),
               samples=_concat_samples, torch="torch.concat", doc="cat, NumPy's array API name.")
concatenate = defop("concatenate(Tensor[] tensors, int dim=0) -> Tensor",
                    composite=lambda tensors, dim=0: cat(tensors, dim),
                    samples=_concat_samples, torch="torch.concatenate", doc="cat, NumPy's name.")
