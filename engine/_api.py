"""Everything `agrad.<name>` offers; loaded on first use by the package's __getattr__."""
from __future__ import annotations

from . import backends  # noqa: F401,I001 — registers cpu, cuda, meta before anything makes a tensor
from . import dtypes
from ._device import DeviceUnavailableError, device
from .dtypes import (bool_, float16, float32, float64, get_default_dtype, int8, int16, int32, int64, uint8, uint32,
                     uint64)
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from ._tensor import Tensor
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, logspace,
                       manual_seed, ones, ones_like, rand, randint, randn, tensor, zeros, zeros_like)
from . import autograd, dispatcher
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.inference_tensors import is_inference
from . import ops
from .ops import *  # noqa: F401,F403 — every op is agrad.<op>
from . import library, testing
from .serialization import load, save

bool = bool_  # noqa: A001 — agrad.bool, as torch.bool

__all__ = ["Tensor", "tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "full", "arange", "linspace",
           "logspace", "eye",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand", "randn", "randint", "manual_seed", "device",
           "DeviceUnavailableError", "dtypes", "float16", "float32", "float64", "uint8", "int8", "int16", "int32",
           "int64", "uint32", "uint64", "bool_",
           "get_default_dtype", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "is_inference", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "autograd",
           "dispatcher", "ops", "library", "testing", "save", "load"] + list(ops.__all__)
