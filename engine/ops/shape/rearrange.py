"""Rearranging ops (ATen's TensorShape): flip, roll, repeat (and tile), repeat_interleave,
movedim, swapaxes/swapdims, unflatten, ravel, broadcast_to, broadcast_tensors, meshgrid.

Each is its own adjoint's partner: flip undoes flip, roll by -shifts undoes roll, and a
repeat is undone by summing the copies. The rest are composites of permute, transpose,
reshape, expand and index_select, so they get those ops' gradients (and become views
wherever those are views), as in PyTorch, where they are CompositeImplicitAutograd too.
"""
from __future__ import annotations

import math

import numpy as np

from ... import dtypes
from ...backends.meta import MetaArray
from ...errors import ShapeError
from ...shapes import broadcast_shapes, normalize_dim, normalize_dims
from ..conversion import clone, contiguous
from ..reduce.arithmetic import sum  # noqa: A004
from ..registry import defop
from ..samples import SampleInput, make_arg
from .advanced_indexing import index_select
from .view import expand, flatten, permute, reshape, transpose, unsqueeze, view

# ---- flip / roll ------------------------------------------------------------------------------


def _flip_dims(self, dims):
    return normalize_dims(dims, self.ndim) if len(dims) and self.ndim else ()


def _flip_kernel(xp, self, dims):
    d = _flip_dims(self, dims)
    return xp.flip(self, axis=d).copy() if d else self.copy()


flip = defop(
    "flip(Tensor self, int[] dims) -> Tensor",
    supports_complex=True,
    kernel=_flip_kernel, meta=lambda self, dims: (_flip_dims(self, dims), MetaArray(self.shape, self.dtype))[1],
    grads={"self": lambda grad, dims: flip(grad, dims)},
    samples=lambda op: [
        SampleInput("(3,4) [0]", make_arg((3, 4), key=(op, 0)), [0]),
        SampleInput("(2,3,4) [0,-1]", make_arg((2, 3, 4), key=(op, 1)), [0, -1]),
        SampleInput("T [1]", make_arg((4, 3), key=(op, 2), transposed=True), [1]),
        SampleInput("[] none", make_arg((2, 3), key=(op, 3)), []),
        SampleInput("0-d", make_arg((), key=(op, 4)), [0]),
        SampleInput("int64", make_arg((5,), key=(op, 5), low=-9, high=9, integer=True, dtype=dtypes.int64), [0]),
        SampleInput("uint8", make_arg((2, 3), key=(op, 6), low=0, high=255, integer=True, dtype=dtypes.uint8), [1])],
    torch="torch.flip", doc="A copy with the order of the elements reversed along each of dims.")


def _roll_dims(self, shifts, dims):
    dims = () if dims is None else dims        # PyTorch's parser reads dims=None as its default []
    if len(shifts) != len(dims) and not (len(shifts) == 1 and not dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if not shifts:
        raise RuntimeError("`shifts` required")
    return tuple(normalize_dim(d, self.ndim) for d in dims)


def _roll_kernel(xp, self, shifts, dims):
    d = _roll_dims(self, shifts, dims)
    if self.ndim == 0:
        return self.copy()
    return xp.roll(self, shifts[0] if not d else tuple(shifts), axis=d or None)


roll = defop(
    "roll(Tensor self, int[] shifts, int[] dims=[]) -> Tensor",
    supports_complex=True, kernel=_roll_kernel,
    meta=lambda self, shifts, dims: (_roll_dims(self, shifts, dims), MetaArray(self.shape, self.dtype))[1],
    grads={"self": lambda grad, shifts, dims: roll(grad, [-s for s in shifts], dims)},
    samples=lambda op: [
        SampleInput("flat 3", make_arg((3, 4), key=(op, 0)), 3),
        SampleInput("dim 1 by -1", make_arg((3, 4), key=(op, 1)), -1, 1),
        SampleInput("(2,3,4) two dims", make_arg((2, 3, 4), key=(op, 2)), [1, 5], [0, 2]),
        SampleInput("T kw", make_arg((4, 3), key=(op, 3), transposed=True), shifts=2, dims=0),
        SampleInput("0-d", make_arg((), key=(op, 4)), 1)],
    torch="torch.roll",
    doc="Elements shifted along dims, wrapping around (without dims: over the flattened tensor, same shape).")


# ---- repeat / tile ------------------------------------------------------------------------------

def _repeat_shape(shape, repeats):
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           "of tensor")
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(repeats)}: {list(repeats)}")
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    return tuple(r * s for r, s in zip(repeats, padded))


def _repeat_kernel(xp, self, repeats):
    _repeat_shape(self.shape, repeats)
    return xp.tile(self, tuple(repeats))


def _repeat_grad(grad, self_shape, repeats):
    """Sum the copies: grad viewed as (r0, s0, r1, s1, ...), summed over every r."""
    padded = (1,) * (len(repeats) - len(self_shape)) + tuple(self_shape)
    split = [n for r, s in zip(repeats, padded) for n in (r, s)]
    if not split:
        return grad
    return reshape(sum(reshape(grad, split), list(range(0, len(split), 2))), list(self_shape))


def _repeat_samples(op):
    return [SampleInput("(2,3) [2,1]", make_arg((2, 3), key=(op, 0)), [2, 1]),
            SampleInput("(3,) [2,2]", make_arg((3,), key=(op, 1)), [2, 2]),
            SampleInput("T (4,3) [1,3,2]", make_arg((4, 3), key=(op, 2), transposed=True), [1, 3, 2]),
            SampleInput("0-d [3]", make_arg((), key=(op, 3)), [3]),
            SampleInput("zero [0,2]", make_arg((2, 2), key=(op, 4)), [0, 2]),
            SampleInput("int64", make_arg((2,), key=(op, 5), low=-5, high=5, integer=True, dtype=dtypes.int64), [3])]


repeat = defop(
    "repeat(Tensor self, int[] repeats) -> Tensor",
    supports_complex=True, kernel=_repeat_kernel,
    meta=lambda self, repeats: MetaArray(_repeat_shape(self.shape, repeats), self.dtype),
    grads={"self": _repeat_grad}, samples=_repeat_samples, torch="lambda x, repeats: x.repeat(*repeats)",
    doc="The tensor tiled repeats[i] times along each dimension (leading repeats add dimensions).")


def _tile(self, dims):
    dims = list(dims)
    return repeat(self, [1] * (self.ndim - len(dims)) + dims)


tile = defop(
    "tile(Tensor self, int[] dims) -> Tensor",
    composite=_tile,
    samples=lambda op: _repeat_samples(op) + [SampleInput("(2,3,2) [2]", make_arg((2, 3, 2), key=(op, 6)), [2])],
    torch="torch.tile", doc="repeat, with dims padded by leading 1s when it has fewer entries than the tensor.")


# ---- repeat_interleave --------------------------------------------------------------------------

def _interleave_index(repeats, size, like):
    """The int64 index tensor that repeats each of `size` positions by `repeats` (a tensor)."""
    from ...creation import tensor
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError("repeat_interleave only accept int32 or int64 repeats tensor")
    counts = np.asarray(repeats.cpu().numpy()).reshape(-1)
    if counts.size == 1 and size is not None:
        counts = np.repeat(counts, size)
    if size is not None and counts.size != size:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats.shape[0] if repeats.ndim else 1} and input.size(dim) = {size}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    return tensor(index, dtype=dtypes.int64, device=like.device)


def _repeat_interleave(self, repeats=None, dim=None, output_size=None):
    if repeats is None:        # repeat_interleave(repeats): each position repeated repeats[i] times
        return _interleave_index(self, None, self)
    x = self
    if dim is None:
        x, dim = flatten(x), 0
    d = normalize_dim(dim, x.ndim)
    if x.ndim == 0:
        x = reshape(x, [1])
    if isinstance(repeats, int):
        # PyTorch's int overload: a new axis expanded `repeats` times, then merged into dim
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        shape = list(x.shape)
        y = expand(unsqueeze(x, d + 1), shape[:d + 1] + [repeats] + shape[d + 1:])
        return flatten(clone(y), d, d + 1)
    if not hasattr(repeats, "ndim"):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not {type(repeats).__name__}")
    return index_select(x, d, _interleave_index(repeats, x.shape[d], x))


repeat_interleave = defop(
    "repeat_interleave(Tensor self, Tensor? repeats=None, int? dim=None, *, SymInt? output_size=None) -> Tensor",
    composite=_repeat_interleave, wraps_numbers=True, tags=("dynamic_output_shape",),
    samples=lambda op: [
        SampleInput("int flat", make_arg((2, 3), key=(op, 0)), 2),
        SampleInput("int dim 1", make_arg((2, 3), key=(op, 1)), 3, 1),
        SampleInput("tensor dim 0", make_arg((3, 2), key=(op, 2)), _int64([1, 0, 2]), 0),
        SampleInput("tensor one dim -1 kw", make_arg((2, 3), key=(op, 3)), _int64([2]), dim=-1),
        SampleInput("tensor flat", make_arg((2, 2), key=(op, 4), transposed=True), _int64([1, 2, 0, 3])),
        SampleInput("0-d int", make_arg((), key=(op, 5)), 3),
        SampleInput("repeats only", _int64([2, 0, 1]))],
    torch="torch.repeat_interleave",
    doc="Each element (or slice along dim) repeated: `repeats` an int or one count per position (flattened "
        "without dim); repeat_interleave(repeats) alone gives the index that repeats each position.")


def _int64(values):
    from ...creation import tensor
    return tensor(values, dtype=dtypes.int64)


# ---- movedim / swapaxes / swapdims / unflatten / broadcast_to ------------------------------------------

def _movedim(self, source, destination):
    n = self.ndim
    src = [normalize_dim(d, n) for d in source]
    dst = [normalize_dim(d, n) for d in destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
                           f"contain the same number of dims as destination ({list(destination)} dims)")
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    rest = iter(d for d in range(n) if d not in src)
    placed = dict(zip(dst, src))
    return permute(self, [placed[i] if i in placed else next(rest) for i in range(n)])


movedim = defop(
    "movedim(Tensor self, int[] source, int[] destination) -> Tensor",
    composite=_movedim,
    samples=lambda op: [SampleInput("(2,3,4) 0->2", make_arg((2, 3, 4), key=(op, 0)), 0, 2),
                        SampleInput("(2,3,4,5) [0,1]->[-1,0]", make_arg((2, 3, 4, 5), key=(op, 1)), [0, 1], [-1, 0]),
                        SampleInput("T kw", make_arg((4, 3), key=(op, 2), transposed=True),
                                    source=1, destination=0)],
    torch="torch.movedim", doc="The dims in source moved to the positions in destination; the others keep "
                               "their order.")

moveaxis = defop(
    "moveaxis(Tensor self, int[] source, int[] destination) -> Tensor",
    composite=_movedim,
    samples=lambda op: [SampleInput("(2,3,4) 0->2", make_arg((2, 3, 4), key=(op, 0)), 0, 2),
                        SampleInput("(2,3,4,5) [0,1]->[-1,0]", make_arg((2, 3, 4, 5), key=(op, 1)), [0, 1], [-1, 0])],
    torch="torch.moveaxis", doc="movedim, NumPy's name.")

swapaxes = defop(
    "swapaxes(Tensor self, int axis0, int axis1) -> Tensor",
    composite=lambda self, axis0, axis1: transpose(self, axis0, axis1),
    samples=lambda op: [SampleInput("(2,3,4) 0,2", make_arg((2, 3, 4), key=(op, 0)), 0, 2),
                        SampleInput("(3,2) -1,0", make_arg((3, 2), key=(op, 1)), -1, 0)],
    torch="torch.swapaxes", doc="transpose, NumPy's name.")

swapdims = defop(
    "swapdims(Tensor self, int dim0, int dim1) -> Tensor",
    composite=lambda self, dim0, dim1: transpose(self, dim0, dim1),
    samples=lambda op: [SampleInput("(2,3,4) 1,-1", make_arg((2, 3, 4), key=(op, 0)), 1, -1)],
    torch="torch.swapdims", doc="transpose.")


def _unflatten(self, dim, sizes):
    d = normalize_dim(dim, self.ndim)
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = self.shape[d] if self.ndim else 1
    if sizes.count(-1) > 1:
        raise ShapeError("only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or size % known:
            raise ShapeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
                             f"({size}) in the input tensor")
        sizes[sizes.index(-1)] = size // known
    elif known != size:
        raise ShapeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
                         f"({size}) in the input tensor")
    shape = list(self.shape)
    return view(self, shape[:d] + sizes + shape[d + 1:])


unflatten = defop(
    "unflatten(Tensor self, int dim, SymInt[] sizes) -> Tensor",
    composite=_unflatten,
    samples=lambda op: [SampleInput("(2,6) dim 1 [2,3]", make_arg((2, 6), key=(op, 0)), 1, [2, 3]),
                        SampleInput("(12,) -1 [2,-1,3]", make_arg((12,), key=(op, 1)), -1, [2, -1, 3]),
                        SampleInput("(4,3) dim 0 [4,1] kw", make_arg((4, 3), key=(op, 2)), dim=0, sizes=[4, 1])],
    torch="torch.unflatten", doc="Dimension dim split into sizes (one of them may be -1), a view.")

broadcast_to = defop(
    "broadcast_to(Tensor self, SymInt[] size) -> Tensor",
    composite=lambda self, size: expand(self, size),
    samples=lambda op: [SampleInput("(3,1)->(2,3,4)", make_arg((3, 1), key=(op, 0)), [2, 3, 4]),
                        SampleInput("0-d->(3,)", make_arg((), key=(op, 1)), [3]),
                        SampleInput("(1,2)->(3,-1)", make_arg((1, 2), key=(op, 2)), [3, -1])],
    torch="torch.broadcast_to", doc="expand: the tensor broadcast to size (-1 keeps a dimension).")


def _ravel(self):
    # PyTorch's: self.contiguous().view(-1), a view where self is contiguous (ViewBackward0)
    return view(contiguous(self), [-1])


ravel = defop(
    "ravel(Tensor self) -> Tensor", composite=_ravel,
    samples=lambda op: [SampleInput("(2,3)", make_arg((2, 3), key=(op, 0))),
                        SampleInput("0-d", make_arg((), key=(op, 1))),
                        SampleInput("T (4,3)", make_arg((4, 3), key=(op, 2), transposed=True))],
    torch="torch.ravel", doc="self as a vector (a view where self is contiguous, else a copy).")


def _broadcast_tensors(tensors):
    shape = broadcast_shapes(*[t.shape for t in tensors])
    # PyTorch's expand_outplace: a tensor already of the common shape is returned as it is
    return [t if tuple(t.shape) == shape else expand(t, list(shape)) for t in tensors]


def _varargs(fn, name):
    """torch.<name>(a, b) and torch.<name>([a, b]) both work, as in PyTorch."""
    def varargs(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        out = fn(list(tensors))
        return tuple(out) if isinstance(out, list) else out     # PyTorch's TensorList results are tuples
    varargs.__name__ = varargs.__qualname__ = name
    varargs.__doc__, varargs.__module__, varargs.op = fn.__doc__, "agrad", fn.op
    fn.op.function = varargs
    return varargs


broadcast_tensors = _varargs(defop(
    "broadcast_tensors(Tensor[] tensors) -> Tensor[]", composite=_broadcast_tensors,
    samples=lambda op: [
        SampleInput("(3,1),(4,),()", [make_arg((3, 1), key=(op, 0)), make_arg((4,), key=(op, 1)),
                                      make_arg((), key=(op, 2))]),
        SampleInput("same shapes", [make_arg((2, 3), key=(op, 3)), make_arg((2, 3), key=(op, 4))])],
    torch="lambda tensors: torch.broadcast_tensors(*tensors)",
    doc="The tensors expanded to their common broadcast shape (views)."), "broadcast_tensors")

# ---- meshgrid -------------------------------------------------------------------------------------

def _meshgrid(tensors, indexing=None):
    if indexing is None:
        indexing = "ij"          # PyTorch warns that the default will become explicit; the result is "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = [tensors[1], tensors[0]] + list(tensors[2:]) if swap else list(tensors)
    shape = [math.prod(t.shape) for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = -1
        grids.append(expand(reshape(t, view_shape), shape))
    return [grids[1], grids[0]] + grids[2:] if swap else grids


def _meshgrid_varargs(fn):
    """torch.meshgrid(a, b) and torch.meshgrid([a, b]) both work, as in PyTorch."""
    def meshgrid(*tensors, indexing=None):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return tuple(fn(list(tensors), indexing=indexing))
    meshgrid.__doc__ = fn.__doc__
    meshgrid.__module__ = fn.__module__
    meshgrid.op = fn.op
    fn.op.function = meshgrid
    return meshgrid


meshgrid = _meshgrid_varargs(defop(
    "meshgrid(Tensor[] tensors, *, str? indexing=None) -> Tensor[]",
    composite=_meshgrid,
    samples=lambda op: [
        SampleInput("ij", [make_arg((3,), key=(op, 0)), make_arg((4,), key=(op, 1))], indexing="ij"),
        SampleInput("xy three", [make_arg((3,), key=(op, 2)), make_arg((2,), key=(op, 3)),
                                 make_arg((), key=(op, 4))], indexing="xy"),
        SampleInput("one", [make_arg((3,), key=(op, 5))], indexing="xy")],
    torch="lambda tensors, indexing=None: torch.meshgrid(*tensors, indexing=indexing)",
    doc="Coordinate grids: output i is tensors[i] expanded over the others' sizes ('ij'); 'xy' swaps the first two "
        "inputs, so the grids' first two dimensions swap (Cartesian indexing)."))
