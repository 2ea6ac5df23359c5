"""The op library's table of contents: which family module declares each op, so that a
program imports only the families of the ops it calls (`agrad.ops.<op>`, a graph's ops,
a Tensor method), as ATen's generated registration files name each op's file.

`FAMILIES` is written by `python -m agrad.ops` (`write()`), from the declarations themselves;
tests/engine/test_op_contents.py fails while it is out of date. An op it does not list still
works (the library then imports every family to find it), only slower to start.
"""
from __future__ import annotations

# family module (below agrad.ops) -> (the ops it declares, the plain functions its __all__ exports)
FAMILIES = {
    "autograd": (
        ("grad",),
        ()),
    "blas": (
        ("addbmm", "addmv", "addr"),
        ()),
    "conversion": (
        ("_to_copy", "_view_dtype", "clone", "contiguous", "copy", "detach", "to"),
        ()),
    "decompositions": (
        ("cholesky", "geqrf", "linalg_cholesky", "linalg_cholesky_ex", "linalg_eig", "linalg_eigh",
         "linalg_eigvals", "linalg_eigvalsh", "linalg_householder_product", "linalg_qr", "linalg_svd",
         "linalg_svdvals", "orgqr", "ormqr", "qr", "svd"),
        ()),
    "determinants": (
        ("det", "inverse", "linalg_det", "linalg_inv", "linalg_inv_ex", "linalg_slogdet", "logdet",
         "matrix_power", "slogdet"),
        ()),
    "distributions": (
        ("bernoulli", "binomial", "multinomial", "normal", "poisson", "randint_like"),
        ()),
    "factories": (
        ("empty_like", "fill", "full_like", "ones_like", "rand_like", "randn_like", "zeros_like"),
        ()),
    "ldl_factorization": (
        ("linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_ldl_solve"),
        ()),
    "least_squares": (
        ("_linalg_lstsq", "linalg_lstsq", "linalg_matrix_rank", "linalg_pinv", "pinverse"),
        ()),
    "linalg": (
        ("_einsum", "addmm", "baddbmm", "bilinear", "bmm", "cross", "dot", "einsum", "ger", "kron",
         "linalg_cross", "linear", "matmul", "mm", "mv", "outer", "trace"),
        ()),
    "linalg_products": (
        ("chain_matmul", "inner", "linalg_diagonal", "linalg_multi_dot", "linalg_vander", "linalg_vecdot",
         "tensordot", "vdot"),
        ()),
    "lu_factorization": (
        ("linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_lu_solve", "lu_unpack"),
        ("lu", "lu_solve")),
    "matrix_functions": (
        ("linalg_matrix_exp", "matrix_exp"),
        ()),
    "nn.attention": (
        ("scaled_dot_product_attention",),
        ()),
    "nn.convolution": (
        ("_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
         "conv_transpose3d", "convolution", "convolution_backward", "convolution_backward_input",
         "convolution_backward_weight"),
        ()),
    "nn.ctc": (
        ("_ctc_loss", "_ctc_loss_backward", "ctc_loss"),
        ()),
    "nn.distance": (
        ("_cdist_forward", "_euclidean_dist", "cdist", "cosine_similarity", "dist", "pairwise_distance",
         "pdist"),
        ()),
    "nn.dropout": (
        ("_dropout_mask", "dropout", "native_dropout"),
        ("alpha_dropout", "alpha_dropout_", "dropout_", "dropout_impl", "feature_alpha_dropout",
         "feature_alpha_dropout_", "feature_dropout", "feature_dropout_")),
    "nn.embedding_bag": (
        ("_embedding_bag", "_embedding_bag_freq", "embedding_bag"),
        ()),
    "nn.grid_sampler": (
        ("affine_grid", "affine_grid_generator", "affine_grid_generator_backward", "grid_sample",
         "grid_sampler", "grid_sampler_2d", "grid_sampler_2d_backward", "grid_sampler_2d_double_backward",
         "grid_sampler_3d", "grid_sampler_3d_backward", "grid_sampler_3d_double_backward"),
        ()),
    "nn.im2col": (
        ("col2im", "im2col"),
        ()),
    "nn.loss": (
        ("_huber_loss", "_smooth_l1_loss", "_soft_margin_loss", "binary_cross_entropy",
         "binary_cross_entropy_backward", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
         "cross_entropy", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "huber_loss_backward",
         "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss", "mse_loss_backward",
         "multilabel_soft_margin_loss", "nll_loss", "nll_loss_backward", "poisson_nll_loss",
         "smooth_l1_loss", "smooth_l1_loss_backward", "soft_margin_loss", "triplet_margin_loss"),
        ()),
    "nn.multi_margin": (
        ("_multi_margin_loss", "_multilabel_margin_loss", "multi_margin_loss", "multi_margin_loss_backward",
         "multilabel_margin_loss", "multilabel_margin_loss_backward"),
        ()),
    "nn.normalization": (
        ("batch_norm", "group_norm", "instance_norm", "layer_norm", "native_batch_norm", "native_group_norm",
         "native_layer_norm", "norm_except_dim", "normalize", "rms_norm"),
        ()),
    "nn.pixel_shuffle": (
        ("channel_shuffle", "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle"),
        ()),
    "nn.pooling": (
        ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "adaptive_avg_pool3d",
         "adaptive_avg_pool3d_backward", "adaptive_max_pool2d", "adaptive_max_pool2d_backward", "avg_pool1d",
         "avg_pool2d", "avg_pool2d_backward", "avg_pool3d", "avg_pool3d_backward", "max_pool1d",
         "max_pool1d_with_indices", "max_pool2d", "max_pool2d_double_backward", "max_pool2d_with_indices",
         "max_pool2d_with_indices_backward", "max_pool3d", "max_pool3d_double_backward",
         "max_pool3d_with_indices", "max_pool3d_with_indices_backward", "max_unpool2d"),
        ()),
    "nn.rnn": (
        ("gru", "gru_cell", "lstm", "lstm_cell", "rnn_relu", "rnn_relu_cell", "rnn_tanh", "rnn_tanh_cell"),
        ()),
    "nn.softmax": (
        ("_log_softmax_backward_data", "_softmax_backward_data", "log_softmax", "softmax", "softmin"),
        ()),
    "nn.upsample": (
        ("interpolate", "interpolate_backward"),
        ()),
    "norms": (
        ("frobenius_norm", "linalg_cond", "linalg_matrix_norm", "linalg_norm", "nuclear_norm", "renorm"),
        ()),
    "pointwise.activation": (
        ("_prelu_kernel", "_prelu_kernel_backward", "_rrelu_noise", "celu", "elu", "elu_backward", "gelu",
         "gelu_backward", "glu", "glu_backward", "hardshrink", "hardshrink_backward", "hardsigmoid",
         "hardsigmoid_backward", "hardswish", "hardswish_backward", "hardtanh", "hardtanh_backward",
         "leaky_relu", "leaky_relu_backward", "log_sigmoid_backward", "logsigmoid", "mish", "mish_backward",
         "prelu", "relu", "relu6", "rrelu", "selu", "sigmoid", "sigmoid_backward", "silu", "silu_backward",
         "softplus", "softplus_backward", "softshrink", "softshrink_backward", "softsign", "tanh",
         "tanh_backward", "tanhshrink", "threshold", "threshold_backward"),
        ()),
    "pointwise.aliases": (
        ("absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "divide",
         "fix", "greater", "greater_equal", "less", "less_equal", "multiply", "negative", "not_equal",
         "positive", "subtract"),
        ()),
    "pointwise.bessel": (
        ("i0", "special_airy_ai", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0",
         "special_bessel_y1", "special_i0e", "special_i1", "special_i1e", "special_modified_bessel_i0",
         "special_modified_bessel_i1", "special_modified_bessel_k0", "special_modified_bessel_k1",
         "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1",
         "special_spherical_bessel_j0"),
        ()),
    "pointwise.binary": (
        ("_compare_as_self", "add", "addcdiv", "addcmul", "atan2", "clamp", "clamp_max", "clamp_min", "clip",
         "copysign", "div", "eq", "float_power", "floor_divide", "fmax", "fmin", "fmod", "ge", "gt",
         "heaviside", "hypot", "ldexp", "le", "lerp", "logaddexp", "logaddexp2", "lt", "maximum", "minimum",
         "mul", "ne", "nextafter", "pow", "remainder", "rsub", "sub", "true_divide", "where"),
        ()),
    "pointwise.complex": (
        ("_conj", "_conj_physical", "_neg_view", "_neg_view_copy", "angle", "complex", "conj",
         "conj_physical", "imag", "polar", "real", "resolve_conj", "resolve_neg", "view_as_complex",
         "view_as_real"),
        ()),
    "pointwise.logical": (
        ("bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift",
         "bitwise_xor", "gcd", "isclose", "isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf",
         "isreal", "lcm", "logical_and", "logical_not", "logical_or", "logical_xor", "signbit"),
        ()),
    "pointwise.polynomials": (
        ("special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u",
         "special_chebyshev_polynomial_v", "special_chebyshev_polynomial_w", "special_hermite_polynomial_h",
         "special_hermite_polynomial_he", "special_laguerre_polynomial_l", "special_legendre_polynomial_p",
         "special_shifted_chebyshev_polynomial_t", "special_shifted_chebyshev_polynomial_u",
         "special_shifted_chebyshev_polynomial_v", "special_shifted_chebyshev_polynomial_w"),
        ()),
    "pointwise.special": (
        ("digamma", "erf", "erfc", "erfinv", "igamma", "igammac", "lgamma", "mvlgamma", "polygamma",
         "special_entr", "special_erfcx", "special_log_ndtr", "special_ndtr", "special_ndtri",
         "special_xlog1py", "special_zeta", "xlogy"),
        ()),
    "pointwise.unary": (
        ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "deg2rad", "exp",
         "exp2", "expm1", "floor", "frac", "frexp", "log", "log10", "log1p", "log2", "logit", "nan_to_num",
         "neg", "rad2deg", "reciprocal", "round", "rsqrt", "sgn", "sign", "sin", "sinc", "sinh", "sqrt",
         "square", "tan", "trunc"),
        ()),
    "reduce.arithmetic": (
        ("linalg_vector_norm", "logsumexp", "mean", "nanmean", "nansum", "norm", "prod", "sum", "sum_to_size"),
        ()),
    "reduce.bucketization": (
        ("bucketize", "searchsorted"),
        ()),
    "reduce.correlation": (
        ("corrcoef", "cov"),
        ()),
    "reduce.cumulative": (
        ("cumprod", "cumsum", "diff", "logcumsumexp"),
        ()),
    "reduce.histogram": (
        ("_histogramdd_bin_edges", "_histogramdd_from_bin_tensors", "histc", "histogram"),
        ("histogramdd",)),
    "reduce.integration": (
        ("cumulative_trapezoid", "gradient", "trapezoid", "trapz"),
        ()),
    "reduce.moments": (
        ("std", "std_mean", "var", "var_mean"),
        ()),
    "reduce.segment_reduce": (
        ("_segment_reduce_backward", "segment_reduce"),
        ()),
    "reduce.selection": (
        ("_unique2", "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "argwhere",
         "bincount", "count_nonzero", "cummax", "cummin", "kthvalue", "max", "median", "min", "mode",
         "msort", "nanmedian", "nanquantile", "quantile", "sort", "topk", "unique_consecutive", "unique_dim"),
        ("allclose", "equal", "unique")),
    "reduce.vander": (
        ("vander",),
        ()),
    "shape.advanced_indexing": (
        ("_embedding_counts", "_embedding_renorm", "_index", "_index_backward", "_masked_select_backward",
         "embedding", "embedding_dense_backward", "gather", "index_add", "index_put", "index_select",
         "masked_fill", "masked_select", "nonzero", "nonzero_static", "one_hot", "scatter", "scatter_add",
         "scatter_reduce", "take", "take_along_dim"),
        ("getitem", "setitem", "unravel_index")),
    "shape.diagonal": (
        ("diag", "diag_embed", "diagflat", "diagonal", "diagonal_backward", "diagonal_copy", "tril", "triu"),
        ()),
    "shape.index_reduce": (
        ("index_reduce",),
        ()),
    "shape.index_writes": (
        ("index_copy", "index_fill", "masked_scatter", "put"),
        ()),
    "shape.indexing": (
        ("alias", "narrow", "select", "select_backward", "slice", "slice_backward"),
        ()),
    "shape.join": (
        ("cat", "chunk", "split", "split_with_sizes", "stack", "unbind", "unsafe_chunk", "unsafe_split",
         "unsafe_split_with_sizes"),
        ()),
    "shape.pad": (
        ("constant_pad_nd", "pad", "pad_backward"),
        ()),
    "shape.products": (
        ("block_diag", "cartesian_prod", "combinations"),
        ()),
    "shape.rearrange": (
        ("broadcast_tensors", "broadcast_to", "flip", "meshgrid", "moveaxis", "movedim", "ravel", "repeat",
         "repeat_interleave", "roll", "swapaxes", "swapdims", "tile", "unflatten"),
        ()),
    "shape.rotation": (
        ("fliplr", "flipud", "rot90"),
        ()),
    "shape.splitting": (
        ("dsplit", "hsplit", "tensor_split", "vsplit"),
        ()),
    "shape.stacking": (
        ("atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "concat", "concatenate", "dstack",
         "hstack", "row_stack", "vstack"),
        ()),
    "shape.strided": (
        ("as_strided",),
        ()),
    "shape.view": (
        ("_unsafe_view", "adjoint", "expand", "flatten", "permute", "reshape", "squeeze", "t", "transpose",
         "unfold", "unfold_backward", "unsqueeze", "view"),
        ()),
    "shape.view_copy": (
        ("alias_copy", "as_strided_copy", "detach_copy", "expand_copy", "narrow_copy", "permute_copy",
         "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
         "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy"),
        ()),
    "shape.view_scatter": (
        ("as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_inverse", "slice_scatter"),
        ()),
    "short_time_fourier": (
        ("istft", "stft"),
        ()),
    "solve": (
        ("cholesky_inverse", "cholesky_solve", "linalg_solve", "linalg_solve_ex", "linalg_solve_triangular",
         "linalg_tensorinv", "linalg_tensorsolve", "triangular_solve"),
        ()),
    "spectral": (
        ("_fft_c2c", "_fft_c2r", "_fft_r2c", "fft_fft", "fft_fft2", "fft_fftn", "fft_fftshift", "fft_hfft",
         "fft_hfft2", "fft_hfftn", "fft_ifft", "fft_ifft2", "fft_ifftn", "fft_ifftshift", "fft_ihfft",
         "fft_ihfft2", "fft_ihfftn", "fft_irfft", "fft_irfft2", "fft_irfftn", "fft_rfft", "fft_rfft2",
         "fft_rfftn"),
        ()),
}


def collect() -> dict:
    """FAMILIES as the declarations say: every family imported, each op under the module
    whose `defop` call declared it (OperatorEntry.defined_at)."""
    import importlib
    import os

    from ..dispatcher import all_ops
    from . import family_modules

    root = os.path.dirname(os.path.abspath(__file__))
    modules = family_modules()
    by_file = {}
    table = {}
    for name in modules:
        module = importlib.import_module(f"{__package__}.{name}")
        by_file[os.path.abspath(module.__file__)] = name
        table[name] = ([], getattr(module, "__all__", ()))
    for entry in all_ops():
        path = os.path.abspath(entry.defined_at.rpartition(":")[0])
        if path.startswith(root) and path in by_file:
            table[by_file[path]][0].append(entry.name)
    return {name: (tuple(sorted(ops)), tuple(sorted(set(helpers) - set(ops))))     # an op in __all__ is an op
            for name, (ops, helpers) in sorted(table.items())}


def write() -> None:
    """Rewrite FAMILIES in this file from `collect()`."""
    import textwrap

    def names(values) -> str:
        if not values:
            return "()"
        text = ", ".join(f'"{v}"' for v in values) + ("," if len(values) == 1 else "")
        return "(" + "\n         ".join(textwrap.wrap(text, 100, break_long_words=False, break_on_hyphens=False)) + ")"

    body = "".join(f'    "{name}": (\n        {names(ops)},\n        {names(helpers)}),\n'
                   for name, (ops, helpers) in collect().items())
    with open(__file__, encoding="utf-8") as f:
        text = f.read()
    start = text.index("FAMILIES = {")
    end = text.index("\n}\n", start) + 3
    with open(__file__ + ".tmp", "w", encoding="utf-8") as f:
        f.write(text[:start] + "FAMILIES = {\n" + body + "}\n" + text[end:])
    import os
    os.replace(__file__ + ".tmp", __file__)
