"""Creating tensors: agrad.tensor and the factory functions."""
from __future__ import annotations

import operator
import threading

import numpy as np

from . import (
    backends,  # noqa: F401 — devices are usable once their backends are registered
    dtypes,
    memory_formats,
)
from ._allocation import check_allocation
from ._device import device as Device
from ._tensor import Tensor
from .dispatch_keys import INFERENCE
from .errors import DtypeNotImplementedError
from .generator import Generator, check_seed, default_generator, numpy_rng
from .messages import CONVERT_NAME, checked_convert, scalar_type_name
from .grad_mode import tls

__all__ = ["tensor", "as_tensor", "from_numpy", "empty", "empty_strided", "empty_permuted", "zeros", "ones", "full",
           "arange",
           "linspace", "logspace",
           "eye", "zeros_like", "ones_like", "full_like", "empty_like", "rand", "randn", "randint", "rand_like",
           "randn_like", "randperm", "normal", "set_default_device", "get_default_device", "manual_seed", "seed",
           "initial_seed", "get_rng_state", "set_rng_state"]

_CPU = None
# torch.set_default_device's device, per thread as PyTorch's (_GLOBAL_DEVICE_CONTEXT); None is the CPU
_default_device = threading.local()


def set_default_device(device) -> None:
    """torch.set_default_device: where the factories (tensor, zeros, rand, arange …) put a tensor given no
    device, in this thread; None puts them back on the CPU. A device that is not there (cuda without a
    GPU) is refused when a factory uses it, as in PyTorch."""
    _default_device.device = None if device is None else Device(device)


def get_default_device() -> Device:
    """torch.get_default_device: the factories' device (cuda with its index)."""
    return getattr(_default_device, "device", None) or _cpu()


def _resolve(dtype, device):
    dev = Device(device) if device is not None else (getattr(_default_device, "device", None) or _cpu())
    backend = dev.backend
    if dev.type != "cpu" and dev.type != "meta":
        backend.check_device(dev)
    np_dtype = None
    if dtype is not None:
        np_dtype = (dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_name(str(dtype))).np
    return dev, backend, np_dtype


def _cpu():
    global _CPU
    if _CPU is None:
        _CPU = Device("cpu")
    return _CPU


def _finish(array, dev, backend, requires_grad):
    t = Tensor._make(array, dev, backend.key | _inference_key())
    if requires_grad:
        if array.dtype.kind not in "fc":    # (a factory's message: Tensor.requires_grad_'s starts "only")
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _inference_key() -> int:
    """Made in inference mode: an inference tensor (it carries the InferenceMode key)."""
    return INFERENCE if tls.inference_mode else 0


def _infer_np_dtype(data) -> np.dtype:
    """PyTorch's inference: floats -> default dtype, ints -> int64, bools -> bool; arrays and NumPy
    scalars keep theirs."""
    if isinstance(data, (np.ndarray, np.generic)):     # a NumPy scalar keeps its dtype too, as in PyTorch
        return dtypes.from_numpy(data.dtype).np
    arr = np.asarray(data)
    kind = arr.dtype.kind
    if kind == "f":
        return dtypes.get_default_dtype().np
    if kind == "c":
        return dtypes.default_complex_dtype().np
    if kind in "iu":
        return np.dtype(np.int64)
    if kind == "b":
        return np.dtype(np.bool_)
    raise TypeError(f"cannot make a tensor from data of type {arr.dtype}")


def tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of `data` (a number, nested lists, a NumPy array or a Tensor)."""
    if isinstance(data, Tensor):
        data = data._host() if data._device.type != "meta" else data._data
    dev, backend, np_dtype = _resolve(dtype, device)
    if np_dtype is None:
        np_dtype = data.dtype if dev.type == "meta" and hasattr(data, "shape") else _infer_np_dtype(data)
    if dev.type == "cpu":
        array = np.array(data, dtype=np_dtype)      # always a copy, as torch.tensor
    else:
        array = backend.asarray(np.asarray(data, dtype=np_dtype) if dev.type != "meta" else data, np_dtype, dev)
    return _finish(array, dev, backend, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with `array`."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy(array.dtype)
    return Tensor._make(array, _cpu(), _cpu().backend.key | _inference_key())


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    return tuple(int(s) for s in size)


def _host_shape(size, np_dtype, dev=None) -> tuple:
    """`size` as a shape, refused (check_allocation) where its array would be made in this process's
    memory: on the CPU, or drawn on the host (the random factories, whatever the device)."""
    shape = _shape(size)
    if dev is None or dev.type == "cpu":
        check_allocation(shape, np_dtype)
    return shape


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    dev, backend, np_dtype = _resolve(dtype, device)
    if np_dtype is None:
        np_dtype = _infer_np_dtype(fill_value)
    fill_value = checked_convert(fill_value, np_dtype)
    return _finish(backend.full(_host_shape((size,), np_dtype, dev), fill_value, np_dtype, dev), dev, backend,
                   requires_grad)


def _filled(value):
    def factory(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
        dev, backend, np_dtype = _resolve(dtype, device)
        np_dtype = np_dtype or dtypes.get_default_dtype().np
        return _finish(backend.full(_host_shape(size, np_dtype, dev), value, np_dtype, dev), dev, backend,
                       requires_grad)
    return factory


zeros = _filled(0)
ones = _filled(1)
empty = _filled(0)     # NOTE: filled anyway; uninitialised memory would make runs irreproducible
zeros.__name__, ones.__name__, empty.__name__ = "zeros", "ones", "empty"


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """torch.empty_strided: a tensor of `size` whose elements lie `stride` elements apart in a storage
    of their own (zero-filled, as `empty`), e.g. the transposed layout (2, 2) / (1, 2)."""
    size, stride = _shape((size,)), _shape((stride,))
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for {len(size)} sizes")
    if any(s < 0 for s in size + stride):
        raise RuntimeError(f"empty_strided: sizes and strides must be non-negative, got {list(size)} and {list(stride)}")
    dev, backend, np_dtype = _resolve(dtype, device)
    np_dtype = np_dtype or dtypes.get_default_dtype().np
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    storage = backend.full((n,), 0, np_dtype, dev)
    xp = backend.xp
    data = xp.lib.stride_tricks.as_strided(storage, size, tuple(st * storage.itemsize for st in stride))
    return _finish(data, dev, backend, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, pin_memory=False,
                   requires_grad=False) -> Tensor:
    """torch.empty_permuted: a tensor of `size` whose dims lie in memory in the order `physical_layout`
    (outermost first: (0, 2, 1) for (2, 3, 4) gives strides (12, 1, 3)), with ATen's checks."""
    size, physical_layout = _shape((size,)), tuple(physical_layout)
    dim = len(size)
    if dim != len(physical_layout):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {dim} is not equal to len(physical_layout) = {len(physical_layout)}")
    seen = set()
    for i, d in enumerate(physical_layout):
        if not 0 <= d < dim:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {dim - 1}, but got {d} at "
                               f"index {i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    stride, step = [0] * dim, 1
    for d in reversed(physical_layout):         # the innermost dim of memory first
        stride[d] = step
        step *= max(size[d], 1)
    return empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad)


def _laid_out_like(made: Tensor, t: Tensor, memory_format) -> Tensor:
    """A *_like factory's result in `memory_format` (preserve_format, the default: `t`'s strides where it
    is dense, as PyTorch's empty_like), made row-major and copied into that layout when it differs."""
    if made._device.type == "meta" or getattr(t._data, "strides", None) is None:
        return made
    order = memory_formats.dims_order(t._data, memory_format)
    if order == tuple(range(t.ndim)):
        return made
    data = memory_formats.copy(made._device.backend.xp, made._data, memory_format, like=t._data)
    return _finish(data, made._device, made._device.backend, made.requires_grad)


def _like(factory_value):
    def like(t: Tensor, *, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
        made = full(t.shape, factory_value, dtype=dtype or t.dtype, device=device or t.device,
                    requires_grad=requires_grad)
        return _laid_out_like(made, t, memory_format)
    return like


zeros_like = _like(0)
ones_like = _like(1)
empty_like = _like(0)


def full_like(t: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    made = full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)
    return _laid_out_like(made, t, memory_format)


def _number_dtype(*values):
    """PyTorch's factory inference: any float among the numbers -> the default float, else int64."""
    if any(isinstance(v, float) or (hasattr(v, "dtype") and np.dtype(v.dtype).kind == "f") for v in values):
        return dtypes.get_default_dtype()
    return dtypes.int64


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`[start, end)` by `step`, as torch.arange: the length is ceil((end - start) / step), computed in
    double; the values start + i * step in the result's accumulate type (for an integer dtype, start and
    step are converted to int64 first, as PyTorch's kernel does)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = _number_dtype(start, end, step)
    dev, _, np_dtype = _resolve(dtype, device)
    if np_dtype.kind == "c":
        raise DtypeNotImplementedError(f"\"arange_cpu\" not implemented for '{scalar_type_name(np_dtype)}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = int(np.ceil((float(end) - float(start)) / float(step)))
    acc = np.float64 if np_dtype.kind == "f" else np.int64
    values = acc(start) + np.arange(size, dtype=acc) * acc(step)
    return tensor(values.astype(np_dtype), dtype=dtype, device=dev, requires_grad=requires_grad)


_RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).")


def inclusive_range(start, end, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """torch.range (deprecated, as it warns): `[start, end]` by `step`, end included; its length
    trunc((end - start) / step) + 1, the values start + i * step in the accumulate type, the dtype the
    default float dtype unless given (whatever the arguments' types, unlike arange)."""
    import math

    from .user_warnings import warn_user

    warn_user(_RANGE_WARNING)
    dev, _, np_dtype = _resolve(dtypes.get_default_dtype() if dtype is None else dtype, device)
    acc = np.float64 if np_dtype.kind == "f" else np.int64
    first, last, by = float(start), float(end), float(step)
    if by == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(first) and math.isfinite(last)):
        raise RuntimeError(f"unsupported range: {acc(start)} -> {acc(end)}")
    if (by > 0 and last < first) or (by < 0 and last > first):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = int((acc(end) - acc(start)) / acc(step) + 1)
    values = acc(start) + np.arange(size, dtype=acc) * acc(step)
    return tensor(values.astype(np_dtype), dtype=dtypes.from_numpy(np_dtype), device=dev,
                  requires_grad=requires_grad)


inclusive_range.__name__ = inclusive_range.__qualname__ = "range"


def _triangle_indices(name, row, col, offset, dtype, device, lower):
    """torch.tril_indices / triu_indices: the (row, column) coordinates of a row x col matrix's lower
    (upper) triangle from diagonal `offset`, as a 2 x N tensor in row-major order."""
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dev, _, np_dtype = _resolve(dtypes.int64 if dtype is None else dtype, device)
    if np_dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise DtypeNotImplementedError(f"\"{name}\" not implemented for '{scalar_type_name(np_dtype)}'")
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return tensor(np.stack([rows, cols]).astype(np_dtype).reshape(2, -1), dtype=dtypes.from_numpy(np_dtype),
                  device=dev)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


for _fn, _which in ((tril_indices, "lower"), (triu_indices, "upper")):
    _fn.__doc__ = (f"torch.{_fn.__name__}: the (row, column) indices of a row x col matrix's {_which} triangle from "
                   f"diagonal offset, a 2 x N int64 (or int32) tensor in row-major order.")


def _spaced(start, end, steps, np_dtype, name="linspace"):
    """PyTorch's linspace kernel: the first half from start, the second half back from end (so the
    last value is exactly end), in the result's float type (double for an integer result)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if np_dtype.kind == "b":
        raise DtypeNotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
    work = np_dtype if np_dtype.kind in "fc" else np.dtype(np.float64)
    start, end = work.type(start), work.type(end)
    step = (end - start) / work.type(steps - 1) if steps > 1 else work.type(0)
    i = np.arange(steps, dtype=work)
    values = np.where(i < steps // 2, start + step * i, end - step * (work.type(steps - 1) - i))
    if steps == 1:
        values[:] = start        # PyTorch fills a single step with start (the loop above would give end)
    return values, work


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`steps` values evenly spaced from start to end inclusive; the default float dtype unless given (its
    complex type for a complex start or end; integer results truncate toward zero, as PyTorch's)."""
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        dtype = dtypes.default_complex_dtype()
    dev, _, np_dtype = _resolve(dtype or dtypes.get_default_dtype(), device)
    values, _ = _spaced(start, end, steps, np_dtype)
    return tensor(_cast(values, np_dtype), dtype=np_dtype.name, device=dev, requires_grad=requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """base ** linspace(start, end, steps)."""
    dev, _, np_dtype = _resolve(dtype or dtypes.get_default_dtype(), device)
    exponents, work = _spaced(start, end, steps, np_dtype, "logspace")
    values = np.power(work.type(base), exponents)
    return tensor(_cast(values, np_dtype), dtype=np_dtype.name, device=dev, requires_grad=requires_grad)


def _cast(values, np_dtype):
    if np_dtype.kind in "iu":
        return np.trunc(values).astype(np_dtype)
    return values.astype(np_dtype)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return tensor(np.eye(n, m), dtype=dtype or dtypes.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def manual_seed(seed) -> Generator:
    """torch.manual_seed: seed agrad's default generator (NumPy's PCG64: the same numbers on every
    device); returns it. A seed is any integer in [-2^63, 2^64) (or what int() makes one of)."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """torch.seed: seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """torch.initial_seed: the default generator's seed (0 until manual_seed: agrad's runs repeat)."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """torch.get_rng_state: the default generator's state, to give back to set_rng_state."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """torch.set_rng_state: put the default generator back to a state get_rng_state gave."""
    default_generator.set_state(new_state)


def complex_draws(pairs: np.ndarray) -> np.ndarray:
    """A complex array from draws made over view_as_real's shape (..., 2): PyTorch draws a complex
    tensor's values as the floats of that view, real and imaginary parts interleaved."""
    return pairs[..., 0] + 1j * pairs[..., 1]


def _sampled(sample, rng, shape, np_dtype) -> np.ndarray:
    """`sample`'s draws of `shape`; for a complex dtype each part drawn (randn's scaled by 1/√2, so
    that the complex values have unit variance, as torch.randn's)."""
    if np_dtype.kind != "c":
        return sample(rng, shape)
    pairs = sample(rng, (*shape, 2))
    return complex_draws(pairs * np.sqrt(0.5) if sample is _normal else pairs)


def _random(sample):
    def factory(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
        dtype = dtype or dtypes.get_default_dtype()
        np_dtype = _resolve(dtype, device)[2]
        values = _sampled(sample, numpy_rng(generator), _host_shape(size, np_dtype), np_dtype)
        return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)
    return factory


def _uniform(rng, shape):
    return rng.random(shape)


def _normal(rng, shape):
    return rng.standard_normal(shape)


rand = _random(_uniform)
randn = _random(_normal)
rand.__name__, randn.__name__ = "rand", "randn"


def normal(mean, std, size, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """torch.normal's float_float overload: normal draws of mean `mean` and standard deviation `std` (numbers),
    of `size`, the default float dtype unless `dtype` (agrad.normal takes the tensor overloads to the op)."""
    if not std >= 0:            # (NaN too, as ATen's check)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    dev, _, np_dtype = _resolve(dtype or dtypes.get_default_dtype(), device)
    if np_dtype.kind not in "fc":
        raise DtypeNotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{scalar_type_name(np_dtype)}'")
    shape = _host_shape((size,), np_dtype)
    if np_dtype.kind == "c":        # each part of view_as_real drawn with std/√2, as ATen's normal_
        values = complex_draws(numpy_rng(generator).normal(float(mean), float(std) * np.sqrt(0.5), (*shape, 2)))
    else:
        values = numpy_rng(generator).normal(float(mean), float(std), shape)
    return tensor(values.astype(np_dtype), dtype=dtypes.from_numpy(np_dtype), device=dev, requires_grad=requires_grad)


def randint(*args, low=None, high=None, size=None, dtype=None, device=None, requires_grad=False,
            generator=None) -> Tensor:
    """PyTorch's randint(low=0, high, size): integers uniform in [low, high), int64 unless `dtype`
    is given, drawn from `generator` or agrad's global one (manual_seed)."""
    args = list(args)
    if size is None and args and isinstance(args[-1], (list, tuple)):
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None and args:
        low = args.pop()
    if args or size is None or high is None:
        raise TypeError("randint() expects (low=0, high, size) with size a tuple of ints")
    low = 0 if low is None else int(low)
    if low >= int(high):
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={int(high)}")
    values = numpy_rng(generator).integers(low, int(high), size=_host_shape((size,), np.int64))
    return tensor(values, dtype=dtype or dtypes.int64, device=device, requires_grad=requires_grad)


# the most elements randperm can number exactly in a float dtype (ATen's check_supported_max_int_with_precision)
_RANDPERM_LIMITS = {"float16": (2 ** 11 + 1, "2049", "Half"), "float32": (2 ** 24 + 1, "2^24+1", "Float"),
                    "float64": (2 ** 53 + 1, "2^53+1", "Double")}


def randperm(n, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    """torch.randperm: a random permutation of 0 … n-1 (int64 unless `dtype`), with PyTorch's checks."""
    # an integer: a float (NaN included) or a bool is PyTorch's TypeError
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    n = operator.index(n)
    dev, _, np_dtype = _resolve(dtype or dtypes.int64, device)
    check_allocation((n,), np_dtype)            # (as ATen's randperm: its result is allocated before the checks)
    if np_dtype.kind == "b":
        raise DtypeNotImplementedError("\"randperm\" not implemented for 'Bool'")
    if np_dtype.kind in "iu" and max(n - 1, 0) > np.iinfo(np_dtype).max:
        raise RuntimeError(f"value cannot be converted to type {CONVERT_NAME[np_dtype.name]} without overflow")
    limit = _RANDPERM_LIMITS.get(np_dtype.name)
    if limit is not None and n > limit[0]:
        raise RuntimeError(f"n cannot be greater than {limit[1]} for {limit[2]} type.")
    values = numpy_rng(generator).permutation(n).astype(np_dtype)
    return tensor(values, dtype=dtypes.from_numpy(np_dtype), device=dev, requires_grad=requires_grad)


def _random_like(sample, name):
    def like(t: Tensor, *, dtype=None, device=None, requires_grad=False, generator=None, seed=None,
             memory_format=None) -> Tensor:
        """Random values of `t`'s shape (its dtype and device unless given): drawn on the host from
        `generator`, a new generator seeded with `seed`, or agrad's global one (manual_seed), so a seed
        gives the same numbers on every device."""
        check_seed(name, seed)          # (before the Meta shortcut: a graph file's negative seed is found there)
        dtype = dtype or t.dtype
        device = device or t.device
        if Device(device).type == "meta":
            return full(t.shape, 0, dtype=dtype, device=device, requires_grad=requires_grad)
        rng = np.random.default_rng(seed) if seed is not None else numpy_rng(generator)
        shape = _host_shape(t.shape, _resolve(dtype, device)[2])
        made = tensor(_sampled(sample, rng, shape, _resolve(dtype, device)[2]), dtype=dtype, device=device,
                      requires_grad=requires_grad)
        return _laid_out_like(made, t, memory_format)
    return like


rand_like = _random_like(_uniform, "rand_like")
randn_like = _random_like(_normal, "randn_like")
rand_like.__name__, randn_like.__name__ = "rand_like", "randn_like"
