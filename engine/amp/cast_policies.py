"""Autocast's op lists: which ops autocast touches on each device type, and how (PyTorch 2.13's
aten/src/ATen/autocast_mode.cpp, TORCH_LIBRARY_IMPL(aten, AutocastCPU) and (aten, Autocast) with the
AT_FORALL_* lists of autocast_mode.h). An op on no list falls through: it runs in its inputs' dtypes.

The lists are written with ATen's names and overloads, as the source has them; agrad has one op per name
(its `sum` serves sum and sum.dim_IntList), so an entry serves the agrad op of its base name; agrad's pad
and interpolate, each several ATen ops, take the policy of the one their arguments pick (BY_ARGUMENTS). ATen
ops agrad has not are kept: the lists stay comparable line for line with PyTorch's (tests/engine/test_autocast.py
compares them with the ops torch 2.13's AutocastCPU and AutocastCUDA keys serve). Policies (autocast_mode.h's
CastPolicy):
- lower_precision_fp: floating inputs cast to the device type's autocast dtype;
- fp32: floating inputs cast to float32;
- fp32_set_opt_dtype: the op's `dtype` argument, if not given and the first input is eligible, set to float32;
- fp32_append_dtype: norm's overloads without a dtype run as the dtype overload with float32 (the first
  input's dtype where that is not eligible);
- promote: every floating input cast to the widest of their dtypes (float32 over the autocast dtype);
- banned: refused with the message below (binary_cross_entropy on CUDA).
"""
from __future__ import annotations

LOWER_PRECISION_FP, FP32, FP32_SET_OPT_DTYPE, FP32_APPEND_DTYPE, PROMOTE, BANNED = (
    "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote", "banned")

_CPU_LOWER_PRECISION_FP = """
    conv1d conv1d.padding conv2d conv2d.padding conv3d conv3d.padding bmm mm linalg_vecdot baddbmm addmm
    _addmm_activation addbmm linear _convolution.deprecated matmul conv_tbc mkldnn_rnn_layer conv_transpose1d
    conv_transpose2d.input conv_transpose3d.input prelu scaled_dot_product_attention _native_multi_head_attention"""
_CPU_FP32 = """
    avg_pool3d binary_cross_entropy grid_sampler polar prod prod.dim_int quantile quantile.scalar nanquantile
    nanquantile.scalar stft stft.center cdist grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace
    view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d
    max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d
    replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss
    poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss huber_loss margin_ranking_loss soft_margin_loss
    triplet_margin_loss multi_margin_loss ctc_loss.IntList ctc_loss.Tensor kl_div multilabel_margin_loss
    binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft
    fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_cond.p_str linalg_matrix_rank
    linalg_matrix_rank.tol_tensor linalg_matrix_rank.atol_rtol_tensor linalg_matrix_rank.atol_rtol_float
    linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product
    linalg_tensorinv linalg_tensorsolve fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve
    fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d multilabel_margin_loss_forward linalg_qr
    linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex"""
_CPU_PROMOTE = "stack cat index_copy"

# autocast_mode.h's AT_FORALL_* lists, which CUDA's key registers (with cudnn's two convolutions)
_CUDA_LOWER_PRECISION_FP = """
    _convolution.deprecated _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d.input
    conv_transpose3d.input convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm
    baddbmm bmm chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell
    rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention scaled_dot_product_attention cudnn_convolution
    cudnn_convolution_transpose"""
_CUDA_FP32 = """
    acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow.Tensor_Scalar
    pow.Tensor_Tensor pow.Scalar softplus layer_norm native_layer_norm rms_norm group_norm frobenius_norm.dim
    nuclear_norm nuclear_norm.dim cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d
    hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
    multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits
    dist pdist cdist renorm logsumexp upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d
    _upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d
    _upsample_bilinear2d_aa upsample_trilinear3d upsample_bicubic2d _upsample_bicubic2d_aa"""
_CUDA_FP32_SET_OPT_DTYPE = """
    prod prod.dim_int softmax.int log_softmax.int cumprod cumsum linalg_vector_norm linalg_matrix_norm
    linalg_matrix_norm.str_ord sum sum.dim_IntList"""
_CUDA_FP32_APPEND_DTYPE = "norm.Scalar norm.ScalarOpt_dim"
_CUDA_PROMOTE = "addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add"
_CUDA_BANNED = "binary_cross_entropy"

# ATen's name -> agrad's, where they differ (F.cross_entropy is ATen's cross_entropy_loss)
_AGRAD_NAME = {"cross_entropy_loss": "cross_entropy"}

# An ATen composite not on CPU's lists whose result is the autocast dtype all the same, because the matrix product
# it is made of is on them (einsum's CPU kernel contracts with bmm); agrad's einsum is a kernel of its own, so it is
# listed here to give torch's result. (linalg_pinv is another such, ending in a matmul; agrad's refuses float16.)
_CPU_THROUGH_THEIR_PRODUCTS = "einsum"


def _pad_aten_name(args):
    """agrad's pad is ATen's constant_pad_nd, reflection_padNd, replication_padNd or _pad_circular, by its mode."""
    kind = {"reflect": "reflection_pad", "replicate": "replication_pad"}.get(args[2])
    return f"{kind}{len(args[1]) // 2}d" if kind else None


def _interpolate_aten_name(args):
    """agrad's interpolate is ATen's upsample_<mode><N>d (or adaptive_avg_pool<N>d for mode="area"), by its mode."""
    n, mode, antialias = args[0].ndim - 2, args[3], args[6]
    if mode == "area":
        return f"adaptive_avg_pool{n}d"
    if mode == "nearest-exact":
        return f"_upsample_nearest_exact{n}d"
    name = f"upsample_{mode}{n}d"
    return "_" + name + "_aa" if antialias else name


# agrad op -> the ATen op a call of it is, from its arguments
BY_ARGUMENTS = {"pad": _pad_aten_name, "interpolate": _interpolate_aten_name}


def _table(*lists) -> dict[str, str]:
    table = {}
    for names, policy in lists:
        for name in names.split():
            table[_AGRAD_NAME.get(name.split(".")[0], name.split(".")[0])] = policy
    return table


# device type -> {agrad op name (or ATen's, for BY_ARGUMENTS): policy}
POLICIES = {
    "cpu": _table((_CPU_LOWER_PRECISION_FP, LOWER_PRECISION_FP), (_CPU_FP32, FP32), (_CPU_PROMOTE, PROMOTE),
                  (_CPU_THROUGH_THEIR_PRODUCTS, LOWER_PRECISION_FP)),
    "cuda": _table((_CUDA_LOWER_PRECISION_FP, LOWER_PRECISION_FP), (_CUDA_FP32, FP32),
                   (_CUDA_FP32_SET_OPT_DTYPE, FP32_SET_OPT_DTYPE), (_CUDA_FP32_APPEND_DTYPE, FP32_APPEND_DTYPE),
                   (_CUDA_PROMOTE, PROMOTE), (_CUDA_BANNED, BANNED)),
}

# the agrad ops some list of some device type names (for every other op the Autocast key falls through)
LISTED = frozenset(name for table in POLICIES.values() for name in table) | frozenset(BY_ARGUMENTS)

ATEN_NAMES = {
    "cpu": (_CPU_LOWER_PRECISION_FP + _CPU_FP32 + " " + _CPU_PROMOTE).split(),
    "cuda": (_CUDA_LOWER_PRECISION_FP + _CUDA_FP32 + _CUDA_FP32_SET_OPT_DTYPE + " " + _CUDA_FP32_APPEND_DTYPE + " "
             + _CUDA_PROMOTE + " " + _CUDA_BANNED).split(),
}

ERR_BINARY_CROSS_ENTROPY = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")
