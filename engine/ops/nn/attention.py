"""scaled_dot_product_attention, composed as PyTorch's math reference composes it:
softmax(q @ kᵀ · scale + bias) @ v, where the bias is -inf outside a causal or bool
mask or a float mask added as is, with dropout on the attention weights (agrad's
seeded dropout, so a seed gives the same weights on every device). The gradients
come from the ops it is made of.
"""
from __future__ import annotations

import math
import warnings

from ... import dtypes
from ..._tensor import filled
from ...messages import c_type_name
from ...runtime_settings import sdp_enabled
from ...shapes import normalize_dim
from ..linalg import matmul
from ..pointwise.binary import where
from ..reduce.arithmetic import sum  # noqa: A004
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


def _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Why PyTorch's CPU flash kernel would not run these inputs (sdp_utils_cpp.cpp's
    use_flash_attention_cpp, its checks in order): the first failed check's debug message, "" for a
    check that fails silently, None when flash applies. Flash wants 4-D q, k, v with one batch size, one
    head size, heads equal (or grouped, with enable_gqa), no dropout, a 2-D or 4-D mask that broadcasts
    and does not require grad (even under no_grad), nonzero lengths, unit last strides, float dtypes."""
    qkv = (query, key, value)
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not query.ndim == key.ndim == value.ndim == 4:
        return (f"All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: "
                f"{query.ndim}, Key dim: {key.ndim}, Value dim: {value.ndim} instead.")
    sizes = f"Query.sizes(): {list(query.shape)}, Key%s: {list(key.shape)}, Value%s: {list(value.shape)}"
    if not query.shape[0] == key.shape[0] == value.shape[0]:
        return ("For dense inputs, both fused kernels require query, key and value to have the same batch_size. "
                + sizes % (".sizes()", ".sizes()") + " instead. To broadcast dense inputs, try using unsqueeze and "
                "expand_to before passing them into the kernel.")
    q_heads, k_heads, v_heads = query.shape[1], key.shape[1], value.shape[1]
    if enable_gqa:
        if k_heads != v_heads:
            return ("Both fused kernels require key and value to have the same num_heads and batch_size but got: "
                    f"Key sizes: {list(key.shape)}, Value sizes: {list(value.shape)}, Query sizes: "
                    f"{list(query.shape)} instead.")
        if q_heads % k_heads:
            return ("The number of heads in key/value must divide number of heads in query.Got input Key sizes(): "
                    f"{k_heads}, Value sizes(): {v_heads}, Query sizes(): {q_heads} instead.")
    elif not q_heads == k_heads == v_heads:
        return ("For dense input, both fused kernels require query, key and value to have the same num_heads. "
                + sizes % (" sizes()", " sizes()") + " instead. To broadcast dense inputs, try using unsqueeze and "
                "expand_to before passing them into the kernel.")
    if attn_mask is not None:
        m = attn_mask.shape
        normalize_dim(-2, attn_mask.ndim)      # PyTorch's check reads size(-2): its IndexError under 2 dims
        if attn_mask.requires_grad or m[-2] not in (query.shape[2], 1) or m[-1] not in (key.shape[2], 1):
            return ""
        if not (attn_mask.ndim == 2 or attn_mask.ndim == 4 and m[0] in (1, query.shape[0]) and m[1] in (1, q_heads)):
            return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); "
                    "4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})")
    if not query.shape[-1] == key.shape[-1] == value.shape[-1]:
        return (f"Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): "
                f"{query.shape[-1]}, Key.size(-1): {key.shape[-1]}, Value.size(-1): {value.shape[-1]} instead.")
    if query.shape[-2] == 0 or key.shape[-2] == 0:
        return "All fused kernels do not support zero seq_len_q or seq_len_kv."
    # (on the CPU the mask's own stride does not matter)
    if any(t.stride(-1) != 1 for t in qkv):
        return (f"All fused kernels require the last dimension of the input to have stride 1. Got "
                f"Query.stride(-1): {query.stride(-1)}, Key.stride(-1): {key.stride(-1)}, Value.stride(-1): "
                f"{value.stride(-1)}")
    if not (query.dtype == key.dtype == value.dtype and query.dtype.is_floating_point):
        names = [c_type_name(t.dtype.np) for t in qkv]
        return (f"Expected query, key and value to all be of dtype: {{Float, Double, BFloat16, Half}}. Got Query "
                f"dtype: {names[0]}, Key dtype: {names[1]}, and Value dtype: {names[2]} instead.")
    return None


def _choose_kernel(query, key, value, attn_mask, dropout_p, enable_gqa) -> str:
    """PyTorch's CPU backend choice (select_sdp_backend_cpp): "flash" where the flash kernel is enabled and
    applies, else "math" where math is enabled; with neither, PyTorch's errors (the flash kernel's reason
    given as warnings first, when only it was enabled). agrad computes both kernels' value with the one
    composition below; the choice decides whether an explicit mask and is_causal may meet. The CPU's rules
    hold on every device: agrad has no GPU kernels (flash, efficient, cuDNN) whose own rules would apply."""
    if not sdp_enabled("math") and not sdp_enabled("flash"):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    refusal = _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa) if sdp_enabled("flash") else ""
    if refusal is None:
        return "flash"
    if sdp_enabled("math"):
        return "math"
    warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=4)
    if refusal:
        warnings.warn(refusal, UserWarning, stacklevel=4)
    raise RuntimeError("No available kernel.  Aborting execution.")


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False,
          seed=None):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at least 2 dimensions")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")
    if 0 in value.shape or query.shape[-2] == 0:
        # NOTE: PyTorch's guard before any backend is chosen (attention.cpp): with no value or no query
        # row the output is zeros; sum() * 0 makes every input's gradient zeros of its shape
        out = filled(list(query.shape[:-1]) + [value.shape[-1]], 0, query.dtype.np, query._device)
        return out + (sum(query) + sum(key) + sum(value)) * 0
    kernel = _choose_kernel(query, key, value, attn_mask, dropout_p, enable_gqa)
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        if query.shape[-3] % key.shape[-3]:
            raise RuntimeError(f"number of heads in query ({query.shape[-3]}) must be a multiple of the number of "
                               f"heads in key/value ({key.shape[-3]})")
        # (each of key and value by its own group count, as PyTorch's math path repeats them)
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    # NOTE: with a head size of 0 every score is an empty sum, 0, whatever the scale: the weights are
    # uniform and the output is the values' mean, as PyTorch's math path gives
    scale_factor = (1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0) if scale is None else scale
    scores = matmul(query, transpose(key, -2, -1)) * scale_factor
    L, S = query.shape[-2], key.shape[-2]
    if is_causal:
        if attn_mask is not None and kernel != "flash":
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
