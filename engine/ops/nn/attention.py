"""scaled_dot_product_attention, composed as PyTorch's math reference composes it:
softmax(q @ kᵀ · scale + bias) @ v, where the bias is -inf outside a causal or bool
mask or a float mask added as is, with dropout on the attention weights (agrad's
seeded dropout, so a seed gives the same weights on every device). The gradients
come from the ops it is made of.
"""
from __future__ import annotations

import math

from ... import dtypes
from ..._tensor import filled
from ..linalg import matmul
from ..pointwise.binary import where
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.diagonal import tril
from ..shape.view import expand, reshape, transpose, unsqueeze
from .dropout import dropout
from .softmax import softmax


def _repeat_heads(t, groups):
    """(…, Hk, S, E) -> (…, Hk·groups, S, E), each head repeated `groups` times in place
    (PyTorch's repeat_interleave over dim -3)."""
    shape = list(t.shape)
    wide = expand(unsqueeze(t, -3), shape[:-2] + [groups] + shape[-2:])
    return reshape(wide, shape[:-3] + [shape[-3] * groups] + shape[-2:])


def _cpu_flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa) -> bool:
    """Whether PyTorch's CPU backend choice (sdp_utils_cpp.cpp) takes its flash kernel, which applies an
    explicit attn_mask on top of is_causal's; its math fallback refuses the pair. Flash wants 4-D q, k, v
    with one batch size, one head size, heads equal (or grouped, with enable_gqa), unit last strides, no
    dropout, and a 2-D or 4-D mask that does not require grad (even under no_grad)."""
    qkv = (query, key, value)
    if dropout_p > 0.0 or attn_mask.requires_grad or any(t.ndim != 4 for t in qkv) or attn_mask.ndim not in (2, 4):
        return False
    if not (query.shape[0] == key.shape[0] == value.shape[0]) or not (query.shape[-1] == key.shape[-1] ==
                                                                        value.shape[-1]):
        return False
    q_heads, kv_heads = query.shape[1], key.shape[1]
    if kv_heads != value.shape[1] or (q_heads != kv_heads and not (enable_gqa and q_heads % kv_heads == 0)):
        return False
    return all(t.stride(-1) == 1 for t in qkv)


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False,
          seed=None):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at least 2 dimensions")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        if query.shape[-3] % key.shape[-3]:
            raise RuntimeError(f"number of heads in query ({query.shape[-3]}) must be a multiple of the number of "
                               f"heads in key/value ({key.shape[-3]})")
        groups = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, groups), _repeat_heads(value, groups)
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = matmul(query, transpose(key, -2, -1)) * scale_factor
    L, S = query.shape[-2], key.shape[-2]
    if is_causal:
        if attn_mask is not None and not _cpu_flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa):
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        scores = where(tril(filled((L, S), True, dtypes.bool_.np, query._device)), scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == dtypes.bool_:
            scores = where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True, seed=seed)
    return matmul(weights, value)


def _qkv(op, k, q_shape, kv_shape=None, v_dim=None):
    kv_shape = kv_shape or q_shape
    v_shape = kv_shape[:-1] + (v_dim or kv_shape[-1],)
    return (make_arg(q_shape, key=(op, k, "q")), make_arg(kv_shape, key=(op, k, "k")),
            make_arg(v_shape, key=(op, k, "v")))


def _sdpa_samples(op):
    from ...creation import tensor
    mask = tensor([[True, False, True, True], [True, True, False, True], [False, True, True, True]])
    return [SampleInput("(2,3,4)", *_qkv(op, 0, (2, 3, 4))),
            SampleInput("causal (1,2,4,3)", *_qkv(op, 1, (1, 2, 4, 3)), is_causal=True),
            SampleInput("bool mask, S != L, Ev != E", *_qkv(op, 2, (2, 3, 2), (2, 4, 2), v_dim=3), mask),
            SampleInput("float mask, scale", *_qkv(op, 3, (3, 2)), make_arg((3, 3), key=(op, 3, "m")), scale=0.7),
            SampleInput("causal, L < S", *_qkv(op, 4, (2, 2, 3), (2, 4, 3)), is_causal=True),
            SampleInput("gqa 4 heads over 2", *_qkv(op, 5, (1, 4, 3, 2), (1, 2, 3, 2)), enable_gqa=True),
            # PyTorch's CPU flash path applies both masks (its math path refuses the pair)
            SampleInput("causal and float mask, 4-D", *_qkv(op, 7, (1, 2, 3, 2)),
                        make_arg((3, 3), key=(op, 7, "m"), requires_grad=False), is_causal=True),
            SampleInput("dropout, seed", *_qkv(op, 6, (2, 3, 4)), dropout_p=0.3, seed=5)]


# PyTorch's dropout draws from its own generator: the reference applies agrad's seeded
# mask (NumPy's default_rng, as `dropout`'s reference does) to the math reference.
_TORCH = ("lambda q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, "
          "seed=None: torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, "
          "scale=scale, enable_gqa=enable_gqa) if dropout_p == 0 else "
          "torch.softmax(q @ k.transpose(-2, -1) * (scale or q.shape[-1] ** -0.5), -1) "
          "* torch.as_tensor((__import__('numpy').random.default_rng(seed).random((*q.shape[:-1], k.shape[-2])) "
          "< 1 - dropout_p) / (1 - dropout_p), dtype=q.dtype) @ v")

scaled_dot_product_attention = defop(
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
    "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False, int? seed=None) -> Tensor",
    composite=_sdpa, samples=_sdpa_samples, torch=_TORCH,
    doc="softmax(query @ keyᵀ · scale + mask) @ value over the last two dimensions (scale defaults to "
        "1/sqrt(E)); attn_mask: bool (True attends) or float (added); is_causal: the lower-triangular mask "
        "(top-left aligned); dropout_p: dropout on the weights, from `seed` (agrad's global generator if None); "
        "enable_gqa: key/value heads shared by groups of query heads.")
