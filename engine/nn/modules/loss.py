"""torch.nn's loss layers (torch/nn/modules/loss.py): each holds its options and calls its
functional op. A class weight (`weight`, `pos_weight`) is a buffer, as in PyTorch, so it
follows `model.to(...)` and appears in state_dict() when given.

`_Loss` and `_WeightedLoss` take PyTorch's deprecated `size_average`/`reduce`: either one,
when given, decides `reduction` (with PyTorch's warning), so the layers with no options of
their own (L1Loss, MSELoss, BCELoss, SoftMarginLoss, …) and the ones added with PyTorch's
whole signature (HingeEmbeddingLoss, PoissonNLLLoss, MultiMarginLoss, …) take them where
PyTorch does. NLLLoss, CrossEntropyLoss, BCEWithLogitsLoss, SmoothL1Loss and KLDivLoss keep
their options after `weight` keyword-only (`reduction=`, `ignore_index=` …)."""
from __future__ import annotations

import math
import warnings

from ...ops.nn.loss import legacy_get_string
from .. import functional as F
from .distance import PairwiseDistance
from .linear import Linear
from .module import Module

__all__ = ["L1Loss", "MSELoss", "NLLLoss", "NLLLoss2d", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
           "MultiLabelMarginLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
           "LinearCrossEntropyLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, *, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(weight, reduction=reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """Deprecated: NLLLoss (which takes any number of spatial dimensions), PyTorch's old name for it."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning,
                      stacklevel=2)
        if size_average is not None or reduce is not None:
            reduction = legacy_get_string(size_average, reduce)
        super().__init__(weight, ignore_index=ignore_index, reduction=reduction)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight=None, *, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction=reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class LinearCrossEntropyLoss(_WeightedLoss):
    """torch.nn.LinearCrossEntropyLoss (PyTorch 2.13): a Linear(in_features, C·prod(out_features)) whose
    logits, seen as (N, C, *out_features), go into cross entropy — F.linear_cross_entropy. The weight is
    stored flat, as in PyTorch (`linear.weight` is (C·prod(out_features), in_features)) and reshaped in
    forward. `options` (PyTorch's chunked kernel) is not available in agrad: F.linear_cross_entropy
    refuses anything but None."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight=None, ignore_index: int | None = None,
                 label_smoothing: float = 0.0, options=None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # NOTE: Linear holds 2-D weights only: stored flat, reshaped to (C, *out_features, in) in forward
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input, target):
        linear_weight = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (self.linear.bias.reshape((self.num_classes, *self.out_features))
                       if self.linear.bias is not None else None)
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, *, reduction: str = "mean", pos_weight=None) -> None:
        super().__init__(reduction=reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, *, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    def __init__(self, *, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False, size_average=None,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             f"instead")
        # the default distance is a PairwiseDistance layer: a submodule, as in PyTorch
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
