"""agrad.nn.functional: torch.nn.functional's names for the ops agrad has (`F.relu`,
`F.conv2d`, `F.cross_entropy` …). Each is the op itself (`agrad.nn.functional.conv2d is
agrad.conv2d`), so a model written against `torch.nn.functional as F` runs unchanged; the
functions with PyTorch's `inplace` flag (relu, elu, dropout, …) take it, and with
`inplace=True` write the result into their input as the op's in-place variant does (its
Node named as PyTorch names it: EluBackward1, LeakyReluBackward1 …); `relu_`, `elu_` … are
those variants."""
from __future__ import annotations

from .. import _api as _agrad
from ..autograd.inplace import apply_inplace

# torch.nn.functional's public functions, as of PyTorch 2.13 (those agrad lacks are left out below)
_TORCH_NAMES = (
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "affine_grid", "alpha_dropout", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "batch_norm", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu",
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_embedding_loss", "cosine_similarity", "cross_entropy", "ctc_loss", "dropout", "dropout1d",
    "dropout2d", "dropout3d", "elu", "embedding", "embedding_bag", "feature_alpha_dropout", "fold",
    "fractional_max_pool2d", "fractional_max_pool3d", "gaussian_nll_loss", "gelu", "glu", "grid_sample",
    "group_norm", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hinge_embedding_loss",
    "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear",
    "local_response_norm", "log_softmax", "logsigmoid", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d",
    "max_unpool3d", "mish", "mse_loss", "multi_head_attention_forward", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss", "normalize", "one_hot", "pad",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu",
    "relu6", "rms_norm", "rrelu", "scaled_dot_product_attention", "selu", "sigmoid", "silu", "smooth_l1_loss",
    "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh", "tanhshrink",
    "threshold", "triplet_margin_loss", "triplet_margin_with_distance_loss", "unfold", "upsample",
    "upsample_bilinear", "upsample_nearest",
)

# `F.unfold` is im2col, not Tensor.unfold: only the names whose agrad op is torch.nn.functional's
_NOT_THE_SAME = {"unfold"}

__all__ = [name for name in _TORCH_NAMES if name not in _NOT_THE_SAME and hasattr(_agrad, name)]
globals().update({name: getattr(_agrad, name) for name in __all__})     # the `inplace` ones: replaced below


# ---- the `inplace` flags -------------------------------------------------------------------------

def _variant(op, input, args, inplace, backward_name=None):
    return apply_inplace(input, op, args, None, backward_name) if inplace else op(input, *args)


def relu(input, inplace=False):
    return _variant(_agrad.relu, input, (), inplace)


def relu6(input, inplace=False):
    # NOTE: PyTorch's relu6(inplace=True) is hardtanh_(input, 0, 6)
    return _variant(_agrad.hardtanh, input, (0.0, 6.0), True) if inplace else _agrad.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    return _variant(_agrad.elu, input, (alpha,), inplace, "EluBackward1")


def selu(input, inplace=False):
    return _variant(_agrad.selu, input, (), inplace, "EluBackward1")


def celu(input, alpha=1.0, inplace=False):
    return _variant(_agrad.celu, input, (alpha,), inplace, "CeluBackward1")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _variant(_agrad.leaky_relu, input, (negative_slope,), inplace, "LeakyReluBackward1")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _variant(_agrad.hardtanh, input, (min_val, max_val), inplace)


def hardsigmoid(input, inplace=False):
    return _variant(_agrad.hardsigmoid, input, (), inplace)


def hardswish(input, inplace=False):
    return _variant(_agrad.hardswish, input, (), inplace)


def silu(input, inplace=False):
    return _variant(_agrad.silu, input, (), inplace)


def mish(input, inplace=False):
    return _variant(_agrad.mish, input, (), inplace)


def dropout(input, p=0.5, training=True, inplace=False, *, seed=None):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not inplace:
        return _agrad.dropout(input, p, training, seed=seed)
    if p == 0 or not training or input.numel() == 0:
        return input            # PyTorch's dropout_ leaves its input as it is
    return apply_inplace(input, _agrad.dropout, (p, training), {"seed": seed})


def relu_(input):
    return relu(input, inplace=True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def threshold(input, threshold, value, inplace=False):   # noqa: A002 — PyTorch's names
    return _variant(_agrad.threshold, input, (threshold, value), inplace, "ThresholdBackward1")


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


_INPLACE_FLAGS = ("relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardsigmoid", "hardswish",
                  "silu", "mish", "dropout", "threshold")
__all__ += [name + "_" for name in ("relu", "elu", "selu", "celu", "leaky_relu", "hardtanh")]
for _name in _INPLACE_FLAGS:
    globals()[_name].__doc__ = (f"torch.nn.functional.{_name}: agrad.{_name}, or with inplace=True its in-place "
                                f"variant (the result written into input).")
