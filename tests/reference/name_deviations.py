"""grad_fn names where agrad deliberately differs from PyTorch 2.13, and why.

Keyed by (op, agrad's name, PyTorch's name). Each difference comes from PyTorch's
view/copy machinery or from a C++ call path a declared graph cannot reach; the
gradients themselves are checked against PyTorch's values all the same.
"""

_NO_VIEWS = ("agrad has no views: reshape always records ViewBackward0, where PyTorch first copies a "
             "non-contiguous input and records UnsafeViewBackward0 (or CloneBackward0)")

NAME_DEVIATIONS = {
    ("reshape", "ViewBackward0", "UnsafeViewBackward0"): _NO_VIEWS,
    ("flatten", "ViewBackward0", "UnsafeViewBackward0"): _NO_VIEWS,
    ("matmul", "ViewBackward0", "UnsafeViewBackward0"): "matmul folds batch dims with reshape; " + _NO_VIEWS,
    ("matmul", "ViewBackward0", "CloneBackward0"): "matmul folds batch dims with reshape; " + _NO_VIEWS,
    ("matmul", "ViewBackward0", "SqueezeBackward4"): "1-D @ 2-D drops the added dimension with reshape, "
                                                    "PyTorch with an in-place squeeze_",
    ("sum_to_size", "SumToSizeBackward0", "ViewBackward0"): "PyTorch's sum_to_size is sum(keepdim) + view; "
                                                            "agrad has one op (the engine's unbroadcast)",
    ("linear", "AddBackward0", "ViewBackward0"): "1-D input: PyTorch reshapes around addmm; agrad adds the bias "
                                                 "to matmul's result",
    ("conv2d", "ConvolutionBackward0", "SqueezeBackward1"): "unbatched input: PyTorch unsqueezes, convolves and "
                                                            "squeezes; agrad's kernel takes (C, H, W) directly",
    ("nll_loss", "NllLoss2DBackward0", "ViewBackward0"): "(N, C, d) input: PyTorch reshapes to 4-D for "
                                                         "nll_loss2d; agrad's kernel takes any trailing dims",
    ("cross_entropy", "NllLoss2DBackward0", "ViewBackward0"): "as nll_loss",
    ("nll_loss_backward", "NllLossBackwardBackward0", "NllLoss2DBackwardBackward0"): "as nll_loss",
    ("cross_entropy", "DivBackward0", "DivBackward1"): "PyTorch's C++ divides by a Scalar (div.Scalar); a "
                                                       "Python number is wrapped as a tensor (div.Tensor)",
    ("max_pool2d_double_backward", "MaxPool2dDoubleBackwardBackward0", "ViewBackward0"):
        "the reference is a composition of PyTorch ops, not one op",
    ("conv2d_backward_input", "ConvolutionBackwardBackward0", "ViewBackward0"):
        "the reference slices aten::convolution_backward's outputs; agrad has one op per gradient",
    ("conv2d_backward_weight", "ConvolutionBackwardBackward0", "ViewBackward0"):
        "the reference slices aten::convolution_backward's outputs; agrad has one op per gradient",
}
