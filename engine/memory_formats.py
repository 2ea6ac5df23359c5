"""torch.memory_format: the order in which a dense tensor's dimensions are laid out in memory.
`contiguous_format` is row-major (NCHW for an image batch), `channels_last` keeps the channels of
one pixel together (NHWC strides on a 4-d tensor), `channels_last_3d` the same for 5-d (NDHWC),
and `preserve_format` asks a copy to keep the strides its input has (PyTorch's clone and *_like).

Every agrad array is a NumPy (or CuPy) array with strides, so a format is only the strides a new
array is given: `copy` makes them (transpose to the format's order, copy row-major, transpose
back), `is_contiguous` and `suggest` read them with c10's rules (TensorImpl's
compute_channels_last_contiguous_2d, is_channels_last_strides_2d). `from_arg` is the one place
an argument becomes a format: the objects, or their names as strings, which graph files write and
which older callers pass ("contiguous_format").
"""
from __future__ import annotations

from .layouts import Named

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


class memory_format(Named):
    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

_BY_NAME = {f.name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}
NAMES = frozenset(_BY_NAME)

# the dimensions from the fastest-moving to the slowest, c10's loop order for each channels-last format
_ORDER = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}
_RANK = {channels_last: 4, channels_last_3d: 5}


def from_arg(value) -> memory_format | None:
    """A `memory_format=` argument as a format (None stays None: each op has its own default)."""
    if value is None or isinstance(value, memory_format):
        return value
    if isinstance(value, str):
        fmt = _BY_NAME.get(value.removeprefix("torch.").removeprefix("agrad."))
        if fmt is not None:
            return fmt
        raise ValueError(f"unknown memory format {value!r}: one of {', '.join(sorted(_BY_NAME))}")
    raise TypeError(f"memory_format must be agrad.memory_format, not {type(value).__name__}")


def _check_rank(ndim: int, fmt: memory_format) -> None:
    rank = _RANK.get(fmt)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")


def is_contiguous(shape, strides, fmt) -> bool:
    """Tensor.is_contiguous(memory_format): c10's rule, where a dimension of size 1 has any stride.
    A channels-last format asked of a tensor of another rank is False, as in PyTorch."""
    fmt = from_arg(fmt) or contiguous_format
    # NOTE: preserve_format reads as contiguous_format here, as TensorImpl::is_contiguous_default's
    order = _ORDER.get(fmt, tuple(range(len(shape) - 1, -1, -1)))
    if len(order) != len(shape):
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _strides_like(shape, strides, fmt) -> bool:
    """c10's is_channels_last_strides_2d/_3d: whether a tensor's strides, read as a layout, are the
    format's, with NCHW the answer to every ambiguous case (a channel of size 1, N111 shapes)."""
    order = _ORDER[fmt]
    if len(shape) != len(order) or strides[1] == 0:
        return False
    smallest = 0
    for d in order:
        if shape[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest(shape, strides) -> memory_format:
    """TensorBase::suggest_memory_format: the channels-last format whose strides the tensor has,
    else contiguous_format."""
    for fmt in (channels_last, channels_last_3d):
        if len(shape) == _RANK[fmt] and _strides_like(shape, strides, fmt):
            return fmt
    return contiguous_format


def _non_overlapping_and_dense(shape, strides) -> bool:
    """c10's is_non_overlapping_and_dense: some order of the dims is row-major contiguous."""
    expected = 1
    for d in sorted(range(len(shape)), key=lambda d: (strides[d], d)):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def element_strides(array) -> tuple:
    return tuple(s // array.itemsize for s in array.strides)


def resolve(array, fmt) -> memory_format:
    """The format a copy of `array` asked for with `fmt` gets: preserve_format (and None) keep a
    dense array's own strides (returned as preserve_format), else the suggested format."""
    fmt = from_arg(fmt) or preserve_format
    if fmt is not preserve_format:
        _check_rank(array.ndim, fmt)
        return fmt
    strides = getattr(array, "strides", None)
    if strides is None:                                  # a Meta array: row-major
        return contiguous_format
    strides = element_strides(array)
    if _non_overlapping_and_dense(array.shape, strides):
        return preserve_format
    return suggest(array.shape, strides)


def dims_order(like, fmt) -> tuple:
    """The dimensions from the slowest-moving to the fastest that a copy in format `fmt` of an array
    like `like` has: row-major, a channels-last order, or (preserve_format) `like`'s own order."""
    fmt = resolve(like, fmt)
    if fmt is preserve_format:
        strides = element_strides(like)
        return tuple(sorted(range(like.ndim), key=lambda d: (-strides[d], d)))
    if fmt is contiguous_format:
        return tuple(range(like.ndim))
    return _ORDER[fmt][::-1]


def copy(xp, array, fmt, like=None):
    """A new array of `array`'s values laid out in memory format `fmt`, where preserve_format keeps
    the strides of `like` (by default `array` itself; the *_like factories pass their input)."""
    if like is None:
        # the common cases first, without reading strides: AccumulateGrad and contiguous() ask for
        # contiguous_format, and a row- or column-major array is dense whatever is asked
        fmt = from_arg(fmt)
        flags = getattr(array, "flags", None)
        if fmt is contiguous_format:
            return xp.array(array, copy=True, order="C")
        if fmt in (None, preserve_format) and flags is not None and (flags.c_contiguous or flags.f_contiguous):
            return xp.array(array, copy=True, order="K")
    like = array if like is None else like
    if like is array and resolve(array, fmt) is preserve_format:
        # NumPy's order K keeps a dense array's strides, in an array of its own (base None: what
        # engine/replay's recorder looks for in a copy it may skip)
        return xp.array(array, copy=True, order="K")
    order = dims_order(like, fmt)
    if order == tuple(range(array.ndim)):
        return xp.array(array, copy=True, order="C")
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    # NumPy's recipe for a strided copy: transpose to the memory order, copy row-major, transpose back
    return xp.array(array.transpose(order), copy=True, order="C").transpose(back)


def view_in(flat, shape, fmt):
    """`flat`, a 1-d array of prod(shape) elements, seen as `shape` with format `fmt`'s strides (what
    resize_(..., memory_format=) makes of the storage it keeps)."""
    fmt = from_arg(fmt) or contiguous_format
    if fmt is preserve_format:
        raise RuntimeError("Unsupported memory format preserve_format")
    _check_rank(len(shape), fmt)
    order = _ORDER[fmt][::-1] if fmt in _ORDER else tuple(range(len(shape)))
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    return flat.reshape([shape[d] for d in order]).transpose(back)


def is_in(array, fmt) -> bool:
    """Whether `array` already has format `fmt`'s strides (contiguous() returns such a tensor itself)."""
    strides = getattr(array, "strides", None)
    if strides is None:
        claimed = getattr(array, "element_strides", None)
        if claimed is not None:                          # a wrapper subclass's array: the strides it claims
            return is_contiguous(array.shape, claimed, fmt)
        return (from_arg(fmt) or contiguous_format) in (contiguous_format, preserve_format)    # Meta: row-major
    return is_contiguous(array.shape, element_strides(array), fmt)
