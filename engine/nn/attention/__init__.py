"""torch.nn.attention (torch/nn/attention/__init__.py): what alters F.scaled_dot_product_attention —
`SDPBackend`, the `sdpa_kernel` context manager that enables a list of backends (and may make its
order their priority), `SDPAParams` and `can_use_flash_attention` / `can_use_efficient_attention`
(torch.backends.cuda's), and the causal biases of `agrad.nn.attention.bias`.

A backend is a kernel choice, not a semantics: agrad has one kernel, the math composition, and
computes with it whichever backend is chosen. The flags are ATen Context's (agrad.runtime_settings),
read by scaled_dot_product_attention as PyTorch's CPU backend choice reads them: it runs where MATH
is enabled, or FLASH_ATTENTION and the CPU flash kernel's constraints hold, and raises PyTorch's
errors otherwise. There is no flash or memory-efficient GPU kernel, so can_use_* are False, as a
CPU-only PyTorch answers (silently, even with debug=True)."""
from __future__ import annotations

import contextlib
import enum
from warnings import warn

from ... import runtime_settings

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# If True, the causal biases warn why a fused kernel was not used (torch's Note: [SDPA warnings])
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """An enum-like class that contains the different backends for scaled dot product attention:
    ERROR, MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, OVERRIDEABLE (torch's values)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


class SDPAParams:
    """torch.backends.cuda.SDPAParams: the arguments a backend choice looks at, read-only."""
    __slots__ = ("_args",)
    _names = ("query", "key", "value", "attn_mask", "dropout", "is_causal", "enable_gqa")

    def __init__(self, *args) -> None:
        from ..._tensor import Tensor
        q, k, v, mask, dropout, causal, gqa = args if len(args) == 7 else (None,) * 7
        if not (all(isinstance(t, Tensor) for t in (q, k, v)) and (mask is None or isinstance(mask, Tensor))
                and isinstance(dropout, (int, float)) and isinstance(causal, bool) and isinstance(gqa, bool)):
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            "supported:\n    1. SDPAParams(query: Tensor, key: Tensor, value: Tensor, attn_mask: "
                            "Tensor | None, dropout: float, is_causal: bool, enable_gqa: bool)")
        self._args = (q, k, v, mask, float(dropout), causal, gqa)


for _i, _name in enumerate(SDPAParams._names):
    setattr(SDPAParams, _name, property(lambda self, i=_i: self._args[i]))


def can_use_flash_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether the flash-attention kernel could run `params`: agrad has none, so False."""
    return False


def can_use_efficient_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether the memory-efficient kernel could run `params`: agrad has none, so False."""
    return False


def _raise_kernel_warnings(params: SDPAParams) -> None:
    """With WARN_FOR_UNFUSED_KERNELS, warn why the fused kernels cannot run `params`."""
    if WARN_FOR_UNFUSED_KERNELS:
        if not can_use_efficient_attention(params):
            warn("Efficient attention can't be used because:", stacklevel=2)
            can_use_efficient_attention(params, True)
        if not can_use_flash_attention(params):
            warn("Flash attention can't be used because:", stacklevel=2)
            can_use_flash_attention(params, True)


_backend_names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "mem_efficient": "EFFICIENT_ATTENTION",
                  "math": "MATH", "overrideable": "OVERRIDEABLE"}


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list:
    backends = [SDPBackend[val] for name, val in _backend_names.items() if runtime_settings.sdp_enabled(name)]
    if with_priority:
        order = runtime_settings.sdp_priority_order()
        backends = sorted(backends, key=lambda backend: order.index(int(backend)))
    return backends


def _sdpa_kernel(backends, set_priority: bool = False) -> None:
    for name, val in _backend_names.items():
        runtime_settings.set_sdp_enabled(name, SDPBackend[val] in backends)
    if set_priority:
        # the given backends first, in their order, then the rest in their previous order
        user_priority = [int(backend) for backend in backends]
        user_priority += [b for b in runtime_settings.sdp_priority_order() if b not in user_priority]
        runtime_settings.set_sdp_priority_order(user_priority)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Enable only `backends` (an SDPBackend or a list of them) for scaled_dot_product_attention inside
    the block; with set_priority, their order is also their priority. The previous flags (and order)
    come back on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous_backends = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous_backends, set_priority)


from . import bias  # noqa: E402 — bias imports this module's names
