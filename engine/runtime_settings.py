"""The process-wide settings PyTorch keeps and agrad keeps with it: thread counts, deterministic
algorithms, float32 matmul precision, flushing denormals (torch/__init__.py and ATen's Context, with their checks and
messages).

agrad keeps them as state to read back, so that code written for PyTorch runs and sees what it
set; they change no numerics. agrad's kernels are NumPy's, which are deterministic already and
compute float32 products in float32 whatever the precision asked; NumPy's BLAS picks its own
threads (OPENBLAS_NUM_THREADS, MKL_NUM_THREADS), which these counts do not set.

The scaled-dot-product-attention backends the user enabled (ATen Context's userEnabled*SDP and its
priority order, which torch.nn.attention.sdpa_kernel sets) are the exception: they choose whether
scaled_dot_product_attention may run at all, as PyTorch's CPU backend choice reads them.
"""
from __future__ import annotations

import os
import warnings

__all__ = ["set_num_threads", "get_num_threads", "init_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "set_flush_denormal",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision"]


def _cores() -> int:
    # PyTorch's default for both pools: the cores this process may run on
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


_state = {"num_threads": None, "num_interop_threads": None, "interop_set": False, "deterministic": False,
          "warn_only": False, "matmul_precision": "highest"}


def _int_argument(name, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuntimeError(f"{name} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return value


def set_num_threads(num: int) -> None:
    """torch.set_num_threads: the intra-op thread count get_num_threads gives back (agrad keeps it; NumPy's
    kernels do not read it)."""
    _state["num_threads"] = _int_argument("set_num_threads", num)


def get_num_threads() -> int:
    """torch.get_num_threads: what set_num_threads set, else the cores this process may run on."""
    return _state["num_threads"] or _cores()


def init_num_threads() -> None:
    """torch.init_num_threads: sets up the calling thread's intra-op pool in PyTorch; agrad has none to set
    up (NumPy's BLAS keeps its own), so it does nothing."""


def set_flush_denormal(mode: bool) -> bool:
    """torch.set_flush_denormal: whether denormal floats could be flushed to zero. agrad's kernels are
    NumPy's, which leave the CPU's denormal mode alone: False, PyTorch's answer where it is unsupported."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def set_num_interop_threads(num: int) -> None:
    """torch.set_num_interop_threads: once only, as PyTorch's (agrad keeps the count; nothing reads it)."""
    num = _int_argument("set_num_interop_threads", num)
    if _state["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _state["num_interop_threads"], _state["interop_set"] = num, True


def get_num_interop_threads() -> int:
    return _state["num_interop_threads"] or _cores()


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """torch.use_deterministic_algorithms: the flag PyTorch's nondeterministic kernels read. agrad's
    kernels are all deterministic (NumPy on the host), so the flag is kept and raises nothing."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """torch.set_deterministic_debug_mode: "default" (0), "warn" (1) or "error" (2), the same flag as
    use_deterministic_algorithms."""
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """torch.set_float32_matmul_precision: "highest", "high" or "medium", kept for
    get_float32_matmul_precision. agrad's float32 products are always computed in float32 ("highest"):
    there is no TF32 or bfloat16 path to allow."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


# ATen Context's SDP flags, by torch.nn.attention's names (all enabled, as PyTorch starts), and its
# priority order of the SDPBackend values (flash, efficient, math, cudnn, overrideable)
_sdp_enabled = {"cudnn": True, "flash": True, "mem_efficient": True, "math": True, "overrideable": True}
_sdp_priority = [1, 2, 0, 3, 4]


def sdp_enabled(name: str) -> bool:
    """Whether the SDP backend `name` ("flash", "mem_efficient", "math", "cudnn", "overrideable") is
    enabled (torch._C._get_<name>_sdp_enabled)."""
    return _sdp_enabled[name]


def set_sdp_enabled(name: str, enabled: bool) -> None:
    if name not in _sdp_enabled:
        raise KeyError(name)
    _sdp_enabled[name] = bool(enabled)


def sdp_priority_order() -> list[int]:
    return list(_sdp_priority)


def set_sdp_priority_order(order) -> None:
    _sdp_priority[:] = [int(b) for b in order]
