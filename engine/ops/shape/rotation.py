"""Mirror images and quarter turns, composites over flip and transpose as PyTorch's are
(TensorTransformations.cpp): flipud (flip of dim 0) and fliplr (flip of dim 1), whose
grad_fn is FlipBackward0; and rot90, an op of its own since PyTorch 2.x (Rot90Backward0,
its gradient the opposite turn)."""
from __future__ import annotations

from ... import dtypes
from ...backends.meta import MetaArray
from ..registry import defop
from ..samples import SampleInput, make_arg
from .rearrange import flip


def _flipud(self):
    if self.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(self, [0])


def _fliplr(self):
    if self.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(self, [1])


def _flip_samples(op):
    return [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0))),
            SampleInput("(2,3,2)", make_arg((2, 3, 2), key=(op, 1))),
            SampleInput("T (4,3)", make_arg((4, 3), key=(op, 2), transposed=True))]


flipud = defop("flipud(Tensor self) -> Tensor", composite=_flipud, samples=_flip_samples, torch="torch.flipud",
               doc="self upside down: flip along dim 0.")
fliplr = defop("fliplr(Tensor self) -> Tensor", composite=_fliplr, samples=_flip_samples, torch="torch.fliplr",
               doc="self left to right: flip along dim 1.")


def _rot90_check(self, k, dims):
    dims = list(dims)
    n = self.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    for i in (0, 1):
        if not -n <= dims[i] < n:
            raise RuntimeError(f"Rotation dim{i} out of range, dim{i} = {dims[i]}")
    return dims


def _rot90_meta(self, k, dims):
    d0, d1 = (d % self.ndim for d in _rot90_check(self, k, dims))
    shape = list(self.shape)
    if k % 2:
        shape[d0], shape[d1] = shape[d1], shape[d0]
    return MetaArray(tuple(shape), self.dtype)


def _rot90_kernel(xp, self, k, dims):
    # NumPy's rot90 turns from its first axis towards its second, as PyTorch's
    return xp.ascontiguousarray(xp.rot90(self, k % 4, axes=tuple(_rot90_check(self, k, dims))))


rot90 = defop(
    "rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor",
    supports_complex=True, kernel=_rot90_kernel, meta=_rot90_meta,
    # derivatives.yaml: grad.rot90(-k, dims), the turn undone
    grads={"self": lambda grad, k, dims: rot90(grad, -k, dims)},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0))),
        *[SampleInput(f"(2,3,4) k={k} dims [2,0]", make_arg((2, 3, 4), key=(op, 1)), k, [2, 0]) for k in (2, 3, 4, -1)],
        SampleInput("T (4,3) k=1 dims [-1,-2]", make_arg((4, 3), key=(op, 2), transposed=True), 1, [-1, -2]),
        SampleInput("int64", make_arg((2, 3), key=(op, 3), dtype=dtypes.int64, low=-5, high=5, integer=True))],
    torch="torch.rot90", doc="self turned k quarter turns in the plane of dims, from dims[0] towards dims[1].")
