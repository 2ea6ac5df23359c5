"""as_strided: a view given by its geometry (sizes, strides in elements, storage offset) over
the memory of self's storage, and its gradient, PyTorch's as_strided_backward.

The storage of a tensor is the array that owns its memory (the end of NumPy's/CuPy's `.base`
chain); a storage offset counts elements from its start, as Tensor.storage_offset() does, so
`x[1:].as_strided(...)` starts where `x[1:]` starts unless an offset is given. Like PyTorch,
as_strided refuses negative strides and a geometry that reaches outside the storage.

Geometries may overlap (several elements on one memory location). The gradient follows
PyTorch's note "as_strided Backward and layout-aware/agnostic autograd": the gradient is
scattered into a zero "storage" at the output's positions (summed where the output overlaps),
divided by how many input elements share each position where the input overlaps, and read
back with the input's geometry. It is written with agrad ops (index_add, as_strided), so it
is differentiable again.
"""
from __future__ import annotations

from ... import creation
from ...backends.meta import MetaArray
from ..registry import defop
from ..samples import SampleInput, make_arg
from .advanced_indexing import index_add
from .view import reshape

__all__: list[str] = []


def _storage(array):
    """The array that owns `array`'s memory (never a view of another array of its kind)."""
    root = array
    while True:
        base = root.base
        if base is not None and base.__class__ is not array.__class__:
            base = getattr(base, "base", None)      # NumPy's stride tricks keep their source in a DummyArray
        if base is None or base.__class__ is not array.__class__:
            return root
        root = base


def _address(array) -> int:
    ctypes = getattr(array, "ctypes", None)
    return ctypes.data if ctypes is not None else array.data.ptr


def _required(size, stride, offset) -> int:
    """Elements of storage the geometry reaches (PyTorch's computeStorageNbytes / itemsize)."""
    if any(n == 0 for n in size):
        return 0
    return offset + 1 + sum(st * (n - 1) for n, st in zip(size, stride))


def _check(self, size, stride, storage_offset):
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if storage_offset is not None and storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    return size, stride


def _as_strided_meta(self, size, stride, storage_offset):
    size, _ = _check(self, size, stride, storage_offset)
    return MetaArray(size, self.dtype)


def _as_strided_kernel(xp, self, size, stride, storage_offset):
    size, stride = _check(self, size, stride, storage_offset)
    root = _storage(self)
    itemsize = self.dtype.itemsize
    offset = (_address(self) - _address(root)) // itemsize if storage_offset is None else storage_offset
    available = root.nbytes // itemsize
    need = _required(size, stride, offset)
    if need > available:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {need * itemsize} are out of bounds "
                           f"for storage of size {available * itemsize}")
    strides = tuple(st * itemsize for st in stride)
    if 0 in size:
        # no element is read, so no offset is out of bounds (PyTorch skips the check; NumPy cannot place
        # an array past its buffer's end: the empty view starts at the end instead)
        flat = xp.lib.stride_tricks.as_strided(root, shape=(available,), strides=(itemsize,))
        return flat[min(offset, available):][:0].reshape(size)
    if xp.__name__ == "numpy" and (root.flags.c_contiguous or root.flags.f_contiguous):
        # built on the storage itself, so the result's `.base` is the storage (storage_offset() reads it)
        return xp.ndarray(size, self.dtype, buffer=root, offset=offset * itemsize, strides=strides)
    flat = xp.lib.stride_tricks.as_strided(root, shape=(available,), strides=(itemsize,))
    return xp.lib.stride_tricks.as_strided(flat[offset:], shape=size, strides=strides)


def _maybe_overlapping(sizes, strides) -> bool:
    """PyTorch's _maybe_overlapping_memory: from the smallest stride up, each must step past
    everything the smaller ones reach."""
    reach = 0
    for st, n in sorted(zip(strides, sizes)):
        if st <= reach:
            return True
        reach += st * (n - 1)
    return False


def _as_strided_backward(grad, self_geometry, size, stride, storage_offset):
    """PyTorch's as_strided_backward (FunctionsManual.cpp)."""
    inp_sizes, inp_strides, inp_offset = self_geometry
    device, dtype = grad.device, grad.dtype
    out_sizes, out_strides = [], []
    for i in reversed(range(grad.ndim)):          # output: size-0 -> zeros, size 1 dropped, expanded dims summed
        n, st = size[i], stride[i]
        if n == 0:
            return creation.zeros(tuple(inp_sizes), dtype=dtype, device=device)
        if n == 1:
            grad = grad.squeeze(i)
        elif st == 0:
            grad = grad.sum(i)
        else:
            out_sizes.insert(0, n)
            out_strides.insert(0, st)
    if any(n == 0 for n in inp_sizes):
        return creation.zeros(tuple(inp_sizes), dtype=dtype, device=device)
    kept = [(n, st) for n, st in zip(inp_sizes, inp_strides) if n != 1]
    out_overlap = _maybe_overlapping(out_sizes, out_strides)
    inp_overlap = _maybe_overlapping([n for n, _ in kept], [st for _, st in kept])
    out_offset = inp_offset if storage_offset is None else storage_offset
    shared = min(inp_offset, out_offset)
    inp_eff, out_eff = inp_offset - shared, out_offset - shared
    base_size = max(_required(inp_sizes, inp_strides, inp_eff), _required(out_sizes, out_strides, out_eff))
    positions = creation.arange(base_size, device=device)
    out_positions = reshape(as_strided(positions, out_sizes, out_strides, out_eff), [-1])
    # one scatter serves both cases: where the output does not overlap it is PyTorch's copy_
    storage = index_add(creation.zeros(base_size, dtype=dtype, device=device), 0, out_positions,
                        reshape(grad, [-1]))
    if inp_overlap:
        inp_positions = reshape(as_strided(positions, inp_sizes, inp_strides, inp_eff), [-1])
        count = index_add(creation.zeros(base_size, dtype=dtype, device=device), 0, inp_positions,
                          creation.ones(inp_positions.shape[0], dtype=dtype, device=device))
        storage = storage / count       # NaN where no input element is (outside what the input sees)
    return as_strided(storage, inp_sizes, inp_strides, inp_eff).contiguous()


def _samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(6,) -> (3,2) overlapping", arg((6,), 0), [3, 2], [1, 1]),
            SampleInput("(4,3) -> (2,2) offset 1", arg((4, 3), 1), [2, 2], [3, 1], 1),
            SampleInput("(3,4)T -> transposed window", arg((3, 4), 2, transposed=True), [2, 3], [1, 3]),
            SampleInput("(5,) -> expanded (3,2) stride 0", arg((5,), 3), [3, 2], [0, 2], 0),
            SampleInput("(2,5) -> (4,) offset 3", arg((2, 5), 4), [4], [2], 3),
            SampleInput("(6,) -> (2,2,2) overlapping 3-D", arg((6,), 5), [2, 2, 2], [2, 1, 1]),
            SampleInput("(3,) -> 0-d offset 2", arg((3,), 6), [], [], 2)]


as_strided = defop(
    "as_strided(Tensor self, int[] size, int[] stride, int? storage_offset=None) -> Tensor",
    supports_complex=True, kernel=_as_strided_kernel, meta=_as_strided_meta, view=True,
    grads={"self": _as_strided_backward},
    samples=_samples, torch="torch.as_strided",
    doc="A view of self's storage with the given sizes, strides (in elements, not negative) and storage offset "
        "(default: self's); elements may share memory. Its gradient sums over shared output positions and shares "
        "among shared input positions, as PyTorch's.")
