"""grad_fn names where agrad deliberately differs from PyTorch 2.13, and why.

Keyed by (op, agrad's name, PyTorch's name). Each difference comes from a C++ call
path a declared graph cannot reach, or from memory layouts NumPy and PyTorch choose
differently (which decide between view, _reshape_alias and a copy); the
gradients themselves are checked against PyTorch's values all the same.
"""

_UNSAFE_VIEW = ("2-D @ batched: PyTorch computes (b.mT @ a.mT).mT and makes it contiguous (CloneBackward0); "
                "agrad's matmul folds the batch into one bmm and reshapes it with _unsafe_view")

_EINSUM = ("PyTorch's einsum permutes, reshapes and calls bmm/mul/sum, so its grad_fn is the last of those; "
           "agrad's einsum is one kernel (EinsumBackward0) whose backward is einsum again")
_SDPA = ("agrad's scaled_dot_product_attention is PyTorch's math reference (matmul, softmax, matmul), whose last "
         "op is matmul's reshape; PyTorch's CPU kernel for 4-D inputs is one fused flash-attention op")

NAME_DEVIATIONS = {
    ("bilinear", "EinsumBackward0", "ViewBackward0"): "agrad's bilinear is one einsum (EinsumBackward0); PyTorch's "
        "is _trilinear over the flattened batch, viewed back to its shape",
    ("linalg_householder_product", "SubBackward0", "LinalgHouseholderProductBackward0"): "agrad's "
        "householder_product is a composite of its reflections (two products each, so its gradient is theirs); "
        "PyTorch's is one kernel (LAPACK's orgqr) with its own backward",
    ("linalg_tensorinv", "ViewBackward0", "ReshapeAliasBackward0"): "PyTorch's LAPACK inverse is column-major, so "
        "reshaping it is _reshape_alias; NumPy's is row-major, so agrad's reshape is a view",
    **{("einsum", "EinsumBackward0", name): _EINSUM
       for name in ("ViewBackward0", "PermuteBackward0", "SumBackward1", "MulBackward0")},
    ("_einsum", "EinsumBackward0", "ViewBackward0"): _EINSUM,
    ("scaled_dot_product_attention", "UnsafeViewBackward0", "ScaledDotProductFlashAttentionForCpuBackward0"): _SDPA,
    ("matmul", "UnsafeViewBackward0", "CloneBackward0"): _UNSAFE_VIEW,
    ("instance_norm", "ReshapeAliasBackward0", "ViewBackward0"): "batch_norm's output keeps a transposed input's "
        "memory order in NumPy, where PyTorch's is contiguous, so reshaping it back is _reshape_alias, not view",
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
    ("pdist", "LinalgVectorNormBackward0", "PdistBackward0"): "agrad's pdist is a composite (the norm of the pairs' "
                                                               "differences); PyTorch's is one kernel, _pdist_forward",
    ("pairwise_distance", "LinalgVectorNormBackward0", "NormBackward1"): "ATen's pairwise_distance calls at::norm; "
                                                                         "agrad's norm is torch.norm's Python path "
                                                                         "(linalg.vector_norm)",
    ("orgqr", "SubBackward0", "LinalgHouseholderProductBackward0"): "orgqr is linalg_householder_product, a "
                                                                     "composite in agrad",
    ("ormqr", "MmBackward0", "OrmqrBackward0"): "agrad's ormqr forms Q (householder_product) and multiplies: a "
                                                "composite, its gradient that of the products",
    ("ormqr", "BmmBackward0", "OrmqrBackward0"): "as ormqr's MmBackward0",
    ("ormqr", "UnsafeViewBackward0", "OrmqrBackward0"): "as ormqr's MmBackward0",
    ("frobenius_norm", "LinalgVectorNormBackward0", "NormBackward1"): "as pairwise_distance: ATen's frobenius_norm "
                                                                      "calls at::norm",
    ("nll_loss_backward", "NllLossBackwardBackward0", "NllLoss2DBackwardBackward0"): "as nll_loss",
    ("cross_entropy", "DivBackward0", "DivBackward1"): "PyTorch's C++ divides by a Scalar (div.Scalar); a "
                                                       "Python number is wrapped as a tensor (div.Tensor)",
    **{(f"max_pool{d}d_double_backward", f"MaxPool{d}dDoubleBackwardBackward0", "ViewBackward0"):
       "the reference is a composition of PyTorch ops, not one op" for d in (2, 3)},
    ("convolution_backward_input", "ConvolutionBackwardBackward0", "ViewBackward0"):
        "the reference slices aten::convolution_backward's outputs; agrad has one op per gradient",
    ("convolution_backward_weight", "ConvolutionBackwardBackward0", "ViewBackward0"):
        "the reference slices aten::convolution_backward's outputs; agrad has one op per gradient",
    **{(op, "ConvolutionBackward0", "SqueezeBackward1"): "as conv2d"
       for op in ("conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")},
    ("lstm", "StackBackward0", "MkldnnRnnLayerBackward0"): "PyTorch's CPU LSTM runs float32 through oneDNN's fused "
        "layer (mkldnn_rnn_layer); agrad's is ATen's own CPU path, the one PyTorch takes in float64",
    ("_convolution", "ConvolutionBackward0", "ConvolutionBackward1"): "PyTorch's _convolution records its own Node "
        "(derivatives.yaml's second Convolution entry, convolution's formulas); agrad's _convolution is convolution",
    ("native_group_norm", "MeanBackward1", "NativeGroupNormBackward0"): "agrad's native_group_norm is group_norm and "
        "its statistics recomputed with agrad ops, which differentiate them; PyTorch's one Node serves all three",
    ("native_group_norm", "RsqrtBackward0", "NativeGroupNormBackward0"): "as native_group_norm's mean",
    ("norm_except_dim", "LinalgVectorNormBackward0", "NormBackward0"): "as pairwise_distance: ATen's norm_except_dim "
        "calls at::norm; agrad's norm is torch.norm's Python path (linalg.vector_norm)",
    ("native_dropout", "NativeDropoutBackward0", "MulBackward0"): "the reference applies agrad's seeded mask with a "
        "multiplication (PyTorch's native_dropout would draw its own); where it draws none it is PyTorch's op",
    ("pad_backward", "PadBackwardBackward0", "SliceBackwardBackward0"):
        "PyTorch's circular pad is a composition of slice copies (CopySlices); its gradient has no op of its own",
    ("special_ndtr", "MulBackward0", "MulBackward1"): "(1 + erf(x/√2)) * 0.5: agrad's mul records a number factor "
                                                      "as MulBackward0, PyTorch's mul.Scalar overload as MulBackward1",
    **{(op, f"{name}Backward0", f"{name}Backward1"): "the trapezoidal rule's halving and constant spacing: "
       "PyTorch's C++ calls the Scalar overloads (div.Scalar, mul.Scalar); agrad's div and mul record a number as "
       "the Tensor overload" for op in ("trapezoid", "trapz", "cumulative_trapezoid") for name in ("Div", "Mul")},
    **{("convolution_backward", name, "ConvolutionBackwardBackward0"): "agrad's convolution_backward is a "
       "composite of the ops convolution's own backward formulas call (the bias's gradient a sum, a transposed "
       "convolution's input gradient a convolution); PyTorch's is one kernel whose Node serves its three outputs"
       for name in ("SumBackward1", "ConvolutionBackward0")},
}
