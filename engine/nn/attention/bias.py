"""torch.nn.attention.bias (torch/nn/attention/bias.py): causal biases to pass to
F.scaled_dot_product_attention as its attn_mask. `causal_upper_left(L, S)` is is_causal's mask
(tril of ones), `causal_lower_right(L, S)` aligns the diagonal to the bottom-right corner (tril with
offset S - L, what a query block at the end of a key sequence attends).

A CausalBias is a Tensor subclass whose value is never read: F.scaled_dot_product_attention hands a
CausalBias mask to `CausalBias._dispatch` (torch's `__torch_function__` does the same), which runs
is_causal=True for an upper-left (or square) bias and the materialized bool mask for a lower-right
one — PyTorch's path where no fused kernel can run, as on the CPU."""
from __future__ import annotations

from enum import IntEnum, auto
from warnings import warn

from ... import _api as _agrad
from ..._tensor import Tensor
from . import SDPAParams, _raise_kernel_warnings

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """UPPER_LEFT: `tril(ones(L, S))`, the diagonal from the top-left corner (is_causal's).
    LOWER_RIGHT: `tril(ones(L, S), diagonal=S - L)`, the diagonal ending in the bottom-right corner.
    The two are the same when L == S."""
    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


def _validate_sdpa_input(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                         allow_lowp_kv=False) -> None:
    # torch/nn/attention/_utils.py's checks, with its ValueErrors
    if not allow_lowp_kv and (query.dtype != key.dtype or query.dtype != value.dtype):
        raise ValueError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                         f"{query.dtype}, key.dtype: {key.dtype}, and value.dtype: {value.dtype} instead.")
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but got query.device: "
                         f"{query.device}, key.device: {key.device}, and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                         f"{query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} instead.")


class CausalBias(Tensor):
    """A causal attention bias of `variant` for `seq_len_q` queries over `seq_len_kv` keys; build one
    with causal_upper_left or causal_lower_right. Its repr is the materialized mask's."""

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                 stacklevel=2)

    def _upper_left(self, device) -> Tensor:
        return _agrad.tril(_agrad.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=_agrad.bool))

    def _lower_right(self, device) -> Tensor:
        diagonal_offset = self.seq_len_kv - self.seq_len_q
        return _agrad.tril(_agrad.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=_agrad.bool),
                           diagonal=diagonal_offset)

    def _materialize(self, device=None) -> Tensor:
        """The bias as a bool mask (True attends) on `device` (the CPU by default)."""
        if device is None:
            device = _agrad.device("cpu")
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        elif self.variant == CausalVariant.LOWER_RIGHT:
            return self._lower_right(device)

    @staticmethod
    def _dispatch(query, key, value, attn_mask: CausalBias, dropout_p: float = 0.0, is_causal: bool = False,
                  scale: float | None = None, enable_gqa: bool = False, **kwargs) -> Tensor:
        """scaled_dot_product_attention with this bias as its mask (`kwargs`: agrad's dropout seed)."""
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or attn_mask.variant == CausalVariant.UPPER_LEFT:
            return _agrad.scaled_dot_product_attention(query, key, value, None, dropout_p, True, scale=scale,
                                                       enable_gqa=enable_gqa, **kwargs)
        elif attn_mask.variant == CausalVariant.LOWER_RIGHT:
            _validate_sdpa_input(query, key, value, None, dropout_p, is_causal, scale)
            sdpa_params = SDPAParams(query, key, value, None, dropout_p, is_causal, enable_gqa)
            # NOTE: torch runs its fused kernels' lower-right causal mode here where can_use_flash_attention or
            # can_use_efficient_attention allow; agrad has neither kernel (both are False), so it always takes
            # torch's fallback: the materialized mask
            _raise_kernel_warnings(sdpa_params)
            return _agrad.scaled_dot_product_attention(query, key, value, attn_mask._materialize(query.device),
                                                       dropout_p, False, scale=scale, enable_gqa=enable_gqa,
                                                       **kwargs)
        else:
            raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: {attn_mask.variant}")

    def __repr__(self) -> str:
        return self._materialize().__repr__()


CausalBias.__module__ = CausalVariant.__module__ = __name__


def causal_upper_left(*size) -> CausalBias:
    """The UPPER_LEFT causal bias of size (seq_len_q, seq_len_kv): `tril(ones(size))`."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size) -> CausalBias:
    """The LOWER_RIGHT causal bias of size (seq_len_q, seq_len_kv): `tril(ones(size), size[1] - size[0])`."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
