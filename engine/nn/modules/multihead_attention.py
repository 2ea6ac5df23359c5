"""torch.nn.MultiheadAttention (torch/nn/modules/activation.py), line for line; the function it
calls, multi_head_attention_forward, is in agrad.nn.functional as in PyTorch.

Only PyTorch's reference path is kept: its fast path (torch._native_multi_head_attention,
taken in eval mode with nothing requiring grad) computes the same values and is an
optimisation, so it is left out. A bool mask becomes a float one (-inf where True) before
use, as in PyTorch; with need_weights the weights are softmax(baddbmm(mask, q·√(1/E), kᵀ)),
without them the heads go through agrad.scaled_dot_product_attention. The messages,
warnings and exception types are PyTorch's, with agrad.Size for torch.Size.
"""
from __future__ import annotations

from .. import init
from ..functional import _canonical_mask, _none_or_dtype, multi_head_attention_forward
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """torch.nn.modules.linear.NonDynamicallyQuantizableLinear: a Linear by another name (PyTorch's
    quantization tooling skips it); MultiheadAttention's out_proj."""


# ---- torch.nn.MultiheadAttention --------------------------------------------------------------------

class MultiheadAttention(Module):
    """MultiHead(Q, K, V) = Concat(head_1, …, head_h) Wᴼ, head_i = Attention(Q Wᵢᑫ, K Wᵢᴷ, V Wᵢⱽ).
    Parameters as PyTorch registers them: in_proj_weight (3E, E), or q/k/v_proj_weight when kdim or
    vdim differ from embed_dim; in_proj_bias (3E); out_proj; bias_k and bias_v (1, 1, E) with
    add_bias_kv. forward returns (attn_output, attn_output_weights or None)."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None) -> None:
        import agrad
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0,"
                             f" got embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim

        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(agrad.empty((embed_dim, embed_dim), **factory_kwargs))
            self.k_proj_weight = Parameter(agrad.empty((embed_dim, self.kdim), **factory_kwargs))
            self.v_proj_weight = Parameter(agrad.empty((embed_dim, self.vdim), **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(agrad.empty((3 * embed_dim, embed_dim), **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)

        if bias:
            self.in_proj_bias = Parameter(agrad.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory_kwargs)

        if add_bias_kv:
            self.bias_k = Parameter(agrad.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(agrad.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None     # NOTE: plain attributes, not None parameters, as in PyTorch

        self.add_zero_attn = add_zero_attn

        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)

        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        # checkpoints of PyTorch 1.1.0 lack _qkv_same_embed_dim
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        self.__dict__.update(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """query (L, N, E), key (S, N, kdim), value (S, N, vdim) — (N, L, E) … with batch_first, (L, E) …
        unbatched -> (attn_output like query, attn_output_weights (N, L, S) averaged over the heads,
        (N, num_heads, L, S) with average_attn_weights=False, None with need_weights=False)."""
        is_batched = query.dim() == 3

        key_padding_mask = _canonical_mask(mask=key_padding_mask, mask_name="key_padding_mask",
                                           other_type=_none_or_dtype(attn_mask), other_name="attn_mask",
                                           target_type=query.dtype)
        attn_mask = _canonical_mask(mask=attn_mask, mask_name="attn_mask", other_type=None, other_name="",
                                    target_type=query.dtype, check_other=False)

        # NOTE: PyTorch's fast path (torch._native_multi_head_attention) is left out: the reference path
        # below computes the same values

        if self.batch_first and is_batched:
            # the transposes keep which of query, key and value are the same tensor (self-attention)
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))

        if not self._qkv_same_embed_dim:
            attn_output, attn_output_weights = multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
                self.out_proj.bias, training=self.training, key_padding_mask=key_padding_mask,
                need_weights=need_weights, attn_mask=attn_mask, use_separate_proj_weight=True,
                q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
                v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights, is_causal=is_causal)
        else:
            attn_output, attn_output_weights = multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
                self.out_proj.bias, training=self.training, key_padding_mask=key_padding_mask,
                need_weights=need_weights, attn_mask=attn_mask, average_attn_weights=average_attn_weights,
                is_causal=is_causal)
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """PyTorch's fast path's one mask: (merged_mask, mask_type) — key_padding_mask alone (type 1),
        attn_mask expanded to (N, num_heads, L, L) (type 2), plus the padding mask when both are given;
        (None, None) when neither is."""
        mask_type = None
        merged_mask = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_mask_expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads,
                                                                                   -1, -1)
            merged_mask = attn_mask_expanded
            if key_padding_mask is not None:
                key_padding_mask_expanded = key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
                merged_mask = attn_mask_expanded + key_padding_mask_expanded
        return merged_mask, mask_type
