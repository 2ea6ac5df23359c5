"""Everything `agrad.<name>` offers; loaded on first use by the package's __getattr__. Every op
is `agrad.<op>` through this module's __getattr__: `agrad.ops` imports its family on first use."""
from __future__ import annotations

import builtins
import math

from . import backends  # noqa: F401,I001 — registers cpu, cuda, meta before anything makes a tensor
from . import dtypes
from ._device import DeviceUnavailableError, device
from .dtypes import (bool_, can_cast, complex64, complex128, dtype, float16, float32, float64, get_default_dtype, int8,
                     int16, int32, int64,
                     promote_types, set_default_dtype, uint8, uint32, uint64)
from .type_info import finfo, iinfo
from .runtime_settings import *  # noqa: F401,F403 — set_num_threads, use_deterministic_algorithms, …
from .runtime_settings import __all__ as _runtime_settings
from .layouts import layout, strided
from .memory_formats import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from ._tensor import Size, Tensor
# NOTE: not creation's zeros_like, ones_like, full_like, empty_like: agrad.<name> is the op of that name
from .creation import (arange, as_tensor, empty, empty_permuted, empty_strided, eye, from_numpy, full,
                       get_default_device, get_rng_state, initial_seed, linspace, logspace, manual_seed, ones, rand, randint, randn,
                       randperm, seed, set_default_device, set_rng_state, tensor, tril_indices, triu_indices, zeros)
from .generator import Generator, default_generator
from . import autograd, creation, dispatcher
from .utils import _python_dispatch  # noqa: F401 — registers the Python key's fallback (modes, __torch_dispatch__)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autograd.inference_tensors import is_inference
from . import ops
from . import amp
from .amp import GradScaler, autocast
from .amp.amp_kernels import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: F401
from .amp.state import (autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
                        get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled,
                        is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled,
                        set_autocast_cpu_dtype, set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled,
                        set_autocast_gpu_dtype)
from .legacy_tensor_types import *  # noqa: F401,F403 — agrad.FloatTensor, agrad.LongTensor, …
from .legacy_tensor_types import __all__ as _legacy_types
from .warn_once import is_warn_always_enabled, set_warn_always
from ._tensor_str import set_printoptions

bool = bool_  # noqa: A001 — agrad.bool, as torch.bool
# PyTorch's other names of dtypes (torch.float is torch.float32, torch.long torch.int64); like agrad.bool,
# not in __all__, so that `from agrad import *` leaves Python's int and float alone
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128
# torch's constants (torch.pi is math.pi; torch.newaxis is None, as NumPy's)
pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None

__all__ = ["Tensor", "Size", "tensor", "as_tensor", "from_numpy", "empty", "empty_strided", "empty_permuted", "zeros",
           "ones", "full", "arange", "linspace",
           "logspace", "eye",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand", "randn", "randint", "manual_seed",
           "get_rng_state", "set_rng_state", "device",
           "DeviceUnavailableError", "dtypes", "float16", "float32", "float64", "complex64", "complex128",
           "cfloat", "cdouble", "uint8", "int8", "int16", "int32",
           "int64", "uint32", "uint64", "bool_", "layout", "strided",
           "memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
           "get_default_dtype", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "is_inference", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled", "autograd",
           "dispatcher", "ops", "library", "testing", "save", "load", "is_tensor", "set_warn_always",
           "is_warn_always_enabled", "set_printoptions", "broadcast_shapes", "tril_indices", "triu_indices",
           # constants, dtypes and the default dtype and device
           "pi", "e", "inf", "nan", "newaxis", "dtype", "finfo", "iinfo", "promote_types", "result_type", "can_cast",
           "set_default_dtype", "set_default_tensor_type", "get_default_device", "set_default_device", "typename",
           "is_floating_point", "is_complex", "is_signed", "is_nonzero", "is_same_size", "numel", "is_conj", "is_neg",
           "get_device", "asarray", "frombuffer", "scalar_tensor",
           # window functions
           "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
           # generators
           "Generator", "default_generator", "seed", "initial_seed", "randperm",
           # automatic mixed precision (agrad.amp)
           "amp", "autocast", "GradScaler", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_cpu_enabled",
           "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
           "set_autocast_gpu_dtype",
           "lobpcg", "vmap", "cond",
           ] + _runtime_settings + _legacy_types + list(ops.__all__)


def is_tensor(obj) -> bool:
    """torch.is_tensor: whether `obj` is a Tensor (a Parameter too)."""
    return isinstance(obj, Tensor)


def broadcast_shapes(*shapes) -> Size:
    """torch.broadcast_shapes: the shape tensors of these shapes broadcast to (an int is a 1-D shape),
    with torch._refs._broadcast_shapes' checks and messages."""
    # (builtins.int: agrad.int is the dtype)
    shapes = tuple((s,) if isinstance(s, builtins.int) else s for s in shapes if s is not None)
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            elif shape[idx] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! Mismatching "
                                   f"argument at index {arg_idx} had {shape}; but expected shape should be "
                                   f"broadcastable to {common}")
    return Size(common)


def _must_be_tensor(fn: str, value, name: str = "input", position: builtins.int = 1) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def is_floating_point(input) -> bool:
    _must_be_tensor("is_floating_point", input)
    return input.is_floating_point()


def is_complex(input) -> bool:
    """False for every agrad tensor: agrad has no complex dtypes."""
    _must_be_tensor("is_complex", input)
    return input.is_complex()


def is_signed(input) -> bool:
    _must_be_tensor("is_signed", input)
    return input.is_signed()


def is_nonzero(input) -> bool:
    _must_be_tensor("is_nonzero", input)
    return input.is_nonzero()


def is_same_size(input, other) -> bool:
    _must_be_tensor("is_same_size", input)
    _must_be_tensor("is_same_size", other, "other", 2)
    return input.is_same_size(other)


def is_conj(input) -> bool:
    """False for every agrad tensor (no conjugate views)."""
    _must_be_tensor("is_conj", input)
    return input.is_conj()


def is_neg(input) -> bool:
    """False for every agrad tensor (no lazily negated views)."""
    _must_be_tensor("is_neg", input)
    return input.is_neg()


def get_device(input) -> builtins.int:
    """torch.get_device: the CUDA device's index, -1 on the CPU."""
    _must_be_tensor("get_device", input)
    return input.get_device()


def numel(input) -> builtins.int:
    _must_be_tensor("numel", input)
    return input.numel()


def result_type(tensor1, tensor2) -> dtype:
    """torch.result_type: the dtype an op of these two operands (tensors or Python numbers) computes in,
    with PyTorch's priorities (dimensioned tensors, then 0-d tensors, then numbers: dtypes.result_type)."""
    operands = (tensor1, tensor2)
    numbers = (builtins.bool, builtins.int, builtins.float, builtins.complex)
    if not all(isinstance(x, (Tensor, *numbers)) for x in operands):
        raise TypeError(f"result_type() received an invalid combination of arguments - got "
                        f"({', '.join(type(x).__name__ for x in operands)}), but expected one of:\n"
                        f" * (Tensor tensor, Tensor other)\n * (Tensor tensor, Number other)\n"
                        f" * (Number scalar, Tensor tensor)\n * (Number scalar1, Number scalar2)\n")
    return dtypes.from_numpy(dtypes.result_type([x._data if isinstance(x, Tensor) else x for x in operands]))


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False) -> Tensor:
    """torch.normal's four overloads: a tensor mean or std (or both, broadcast) is the `normal` op, whose
    gradients are zero; two numbers and a size, the factory creation.normal."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None or dtype is not None or device is not None or requires_grad:
            raise TypeError("normal() received an invalid combination of arguments: size, dtype, device and "
                            "requires_grad are taken with a number mean and std only")
        return ops.normal(mean, std, generator=generator, out=out)
    if size is None:
        raise TypeError(f"normal() received an invalid combination of arguments - got ({type(mean).__name__}, "
                        f"{type(std).__name__}), but expected one of:\n * (Tensor mean, Tensor std, *, "
                        f"torch.Generator generator = None, Tensor out = None)\n * (Tensor mean, float std = 1, *, "
                        f"torch.Generator generator = None, Tensor out = None)\n * (float mean, Tensor std, *, "
                        f"torch.Generator generator = None, Tensor out = None)\n * (float mean, float std, tuple of "
                        f"ints size, *, torch.Generator generator = None, Tensor out = None, torch.dtype dtype = None, "
                        f"torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool "
                        f"requires_grad = False)\n")
    made = creation.normal(mean, std, size, generator=generator, dtype=dtype, device=device,
                           requires_grad=requires_grad)
    if out is None:
        return made
    with no_grad():
        return out.resize_(made.shape).copy_(made)


def set_default_tensor_type(t) -> None:
    """torch.set_default_tensor_type (deprecated, as PyTorch says once): a legacy type, agrad.DoubleTensor or
    its dotted name "agrad.DoubleTensor", sets the default dtype (agrad's legacy types are CPU types)."""
    from .legacy_tensor_types import _LegacyTensorType
    from .warn_once import warn_once

    if isinstance(t, str):
        import importlib

        module, _, name = t.rpartition(".")
        t = getattr(importlib.import_module(module), name)
    warn_once("set_default_tensor_type", "agrad.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
              "use agrad.set_default_dtype() and agrad.set_default_device() as alternatives.")
    if not isinstance(t, _LegacyTensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(t.dtype)


def typename(obj, /) -> str:
    """torch.typename: a tensor's type() ('agrad.FloatTensor'), else the object's module and qualified name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in {"", "builtins"}:
        return qualname
    return f"{module}.{qualname}"


# what a graph run does not use, imported on first use: name -> (module, its attribute or None)
_ON_FIRST_USE = {"library": ("library", None), "testing": ("testing", None), "save": ("serialization", "save"),
                 "load": ("serialization", "load"), "range": ("creation", "inclusive_range"),
                 "compile": ("compiler.eager", "compile"),     # torch.compile, run eagerly
                 # ATen's adaptive_max_pool1d: (values, indices), as F's _with_indices form
                 "adaptive_max_pool1d": ("nn.functional", "adaptive_max_pool1d_with_indices"),
                 **{name: ("windows", name) for name in ("hann_window", "hamming_window", "blackman_window",
                                                         "bartlett_window", "kaiser_window")},
                 **{name: ("from_data", name) for name in ("asarray", "frombuffer", "scalar_tensor")},
                 # torch/_lobpcg.py and torch/_lowrank.py: iterative and randomized solvers written in the ops
                 "lobpcg": ("_lobpcg", "lobpcg"),
                 **{name: ("_lowrank", name) for name in ("svd_lowrank", "pca_lowrank")},
                 # removed in PyTorch 1.9: each raises the error that names its replacement
                 "symeig": ("_linalg_utils", "_symeig"),
                 **{name: ("_linalg_utils", name) for name in ("eig", "lstsq", "matrix_rank", "solve")},
                 "vmap": ("func", "vmap"),                                          # torch.vmap is torch.func.vmap
                 "cond": ("control_flow", "cond"), "while_loop": ("control_flow", "while_loop"),
                 "from_dlpack": ("utils.dlpack", "from_dlpack"), "to_dlpack": ("utils.dlpack", "to_dlpack")}


# torch's top-level in-place functions: the in-place variants it also exposes as functions (`torch.abs_(x)` is
# `x.abs_()`: native_functions.yaml's `variants: function, method`), agrad.<name> being the Tensor method
# itself; and those of ops with no Tensor method (torch.celu_ …), the op's in-place variant named as
# PyTorch names its Node
_TENSOR_METHODS = frozenset((
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
    "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_",
    "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_",
    "zero_"))
_FUNCTION_ONLY = {"celu_": ("celu", "CeluBackward1"), "selu_": ("selu", "EluBackward1"),
                  "threshold_": ("threshold", "ThresholdBackward1"), "rrelu_": ("rrelu", "RreluWithNoiseBackward1"),
                  "embedding_renorm_": ("_embedding_renorm", "EmbeddingRenormBackward0")}


def __getattr__(name):
    if name in _TENSOR_METHODS:
        value = getattr(Tensor, name)
    elif name in _FUNCTION_ONLY:
        from .ops._inplace import _method
        op, backward_name = _FUNCTION_ONLY[name]
        value = _method(name, getattr(ops, op), backward_name)
    else:
        value = None
    if value is not None:
        globals()[name] = value
        return value
    where = _ON_FIRST_USE.get(name)
    if where is None and name.startswith("_foreach_"):
        where = ("foreach", name)
    if where is None:
        value = getattr(ops, name)
        if isinstance(value, dispatcher.dispatcher._OpNamespace):
            # `agrad.ops.aten` is not `agrad.aten`, nor `agrad.ops.profiler` the profiler (torch.profiler)
            raise AttributeError(f"module 'agrad' has no attribute {name!r}")
        return value
    import importlib

    module = importlib.import_module(f"{__package__}.{where[0]}")
    value = module if where[1] is None else getattr(module, where[1])
    if not hasattr(builtins, name):     # NOTE: agrad.range cached here would be this module's `range`
        globals()[name] = value
    return value
