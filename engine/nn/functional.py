"""agrad.nn.functional: torch.nn.functional's names for the ops agrad has (`F.relu`,
`F.conv2d`, `F.cross_entropy` …). Each is the op itself (`agrad.nn.functional.relu is
agrad.relu`), so a model written against `torch.nn.functional as F` runs unchanged."""
from __future__ import annotations

from .. import _api as _agrad

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
globals().update({name: getattr(_agrad, name) for name in __all__})
