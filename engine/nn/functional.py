"""agrad.nn.functional: torch.nn.functional's names for the ops agrad has (`F.relu`,
`F.conv2d`, `F.cross_entropy` …). Each is the op itself (`agrad.nn.functional.conv2d is
agrad.conv2d`), so a model written against `torch.nn.functional as F` runs unchanged; the
functions with PyTorch's `inplace` flag (relu, elu, dropout, …) take it, and with
`inplace=True` write the result into their input as the op's in-place variant does (its
Node named as PyTorch names it: EluBackward1, LeakyReluBackward1 …); `relu_`, `elu_` … are
those variants. The functions PyTorch writes in Python over its ops (lp_pool, local_response_norm,
dropout1d …) are written here the same way, over agrad's ops, with PyTorch's checks and messages."""
from __future__ import annotations

import inspect
import math
import warnings

import numpy as np

from .. import _api as _agrad
from .. import codegen
from .._tensor import Tensor as _Tensor
from ..autograd.inplace import apply_inplace
from ..dispatch_keys import TORCH_FUNCTION as _TORCH_FUNCTION
from ..grad_mode import tls as _tls
from ..messages import require_floating, sizes
from ..messages import size_repr as _size
from ..overrides import _disabled_torch_function_impl, handle_torch_function, modes_pushed

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


# ---- fold / unfold: PyTorch's Python wrappers of col2im / im2col -----------------------------------

def _pair(value, name):
    # NOTE: torch's _pair doubles a number and keeps a sequence as it is, so a 1-element list is refused
    value = tuple(value) if isinstance(value, (list, tuple)) else (value, value)
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return list(value)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold: agrad.im2col (every sliding block of input as a column)."""
    return _agrad.im2col(input, _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"),
                         _pair(padding, "padding"), _pair(stride, "stride"))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold: agrad.col2im (the columns added back into an output_size plane)."""
    return _agrad.col2im(input, _pair(output_size, "output_size"), _pair(kernel_size, "kernel_size"),
                         _pair(dilation, "dilation"), _pair(padding, "padding"), _pair(stride, "stride"))


__all__ += ["fold", "unfold"]


# ---- pooling: adaptive pools' None sizes, adaptive_max_pool1d/3d, lp_pool, max_unpool1d/3d ---------

def _tuple(value, n):
    """torch's _single/_pair/_triple: a number repeated n times, a sequence kept as it is."""
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * n


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool2d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool2d: agrad.adaptive_avg_pool2d, a None size the input's."""
    return _agrad.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


def adaptive_avg_pool3d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool3d: agrad.adaptive_avg_pool3d, a None size the input's."""
    return _agrad.adaptive_avg_pool3d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool2d_with_indices: (values, flat indices in each plane)."""
    return _agrad.adaptive_max_pool2d(input, _list_with_default(output_size, input.size()), True)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool2d: agrad.adaptive_max_pool2d, a None size the input's."""
    return _agrad.adaptive_max_pool2d(input, _list_with_default(output_size, input.size()), return_indices)


def _nonempty(input, op, tail=""):
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}: Expected input to have non-zero size for non-batch dimensions, but "
                               f"{'input has sizes' if not tail else 'got'} {sizes(input.shape)} with dimension "
                               f"{i} being empty{tail}")


def _check_nonnegative(shape):
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {sizes(shape)}")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """ATen's adaptive_max_pool1d: adaptive_max_pool2d of (N, C, 1, L) input."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for adaptive_max_pool1d)")
    output_size = _tuple(output_size, 1)
    if len(output_size) != 1:
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one int (got "
                           f"{len(output_size)})")
    _nonempty(input, "adaptive_max_pool1d()")
    _check_nonnegative(list(input.shape[:-1]) + [1, output_size[0]])
    values, indices = _agrad.adaptive_max_pool2d(input.unsqueeze(-2), [1, output_size[0]], True)
    return values.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def _adaptive_windows(n_in, n_out):
    """(n_out, k): window i's positions [floor(i·n_in/n_out), ceil((i+1)·n_in/n_out)), padded to the
    longest window with its own last position (a repeat changes neither the max nor its index)."""
    i = np.arange(n_out)
    start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    k = int((end - start).max()) if n_out else 1
    return np.minimum(start[:, None] + np.arange(k), end[:, None] - 1)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """ATen's adaptive_max_pool3d over agrad's ops: every window gathered from the flattened (D·H·W)
    planes with one index_select, the max over each window and its flat index."""
    output_size = _list_with_default(output_size, input.size())
    ndim = input.dim()
    if ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {sizes(input.shape)}")
    _nonempty(input, "adaptive_max_pool3d()")
    out = _tuple(output_size, 3)
    if len(out) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    require_floating("adaptive_max_pool3d_cpu", input.dtype.np)
    _check_nonnegative(list(input.shape[:-3]) + list(out))
    (d, h, w), (od, oh, ow) = input.shape[-3:], out
    wd, wh, ww = _adaptive_windows(d, od), _adaptive_windows(h, oh), _adaptive_windows(w, ow)
    taps = ((wd[:, None, None, :, None, None] * h + wh[None, :, None, None, :, None]) * w
            + ww[None, None, :, None, None, :]).reshape(od, oh, ow, wd.shape[1] * wh.shape[1] * ww.shape[1])
    taps = _agrad.tensor(taps, dtype=_agrad.int64, device=input.device)
    windows = input.flatten(-3).index_select(-1, taps.flatten())
    values, which = windows.reshape(*input.shape[:-3], *taps.shape).max(-1)
    indices = taps.expand(*input.shape[:-3], *taps.shape).gather(-1, which.unsqueeze(-1)).squeeze(-1)
    return values, indices


def adaptive_max_pool3d(input, output_size, return_indices=False):
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


for _name in ("adaptive_max_pool1d", "adaptive_max_pool3d"):
    globals()[_name].__doc__ = (f"torch.nn.functional.{_name}: the max over output_size windows (as "
                                f"adaptive_avg_pool's); return_indices also returns each max's flat index.")


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, dims):
    """torch's lp_pool1d/2d/3d: (sum over each window of x^p)^(1/p), as avg_pool · kernel elements."""
    max_pool = (_agrad.max_pool1d, _agrad.max_pool2d, _agrad.max_pool3d)[dims - 1]
    avg_pool = (_agrad.avg_pool1d, _agrad.avg_pool2d, _agrad.avg_pool3d)[dims - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    # NOTE: lp_pool1d multiplies by kernel_size itself, as PyTorch's does (an int there)
    kernel = kernel_size if dims == 1 else math.prod(_tuple(kernel_size, dims))
    return (_agrad.sign(out) * _agrad.relu(_agrad.abs(out))).mul(kernel).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


for _name in ("lp_pool1d", "lp_pool2d", "lp_pool3d"):
    globals()[_name].__doc__ = (f"torch.nn.functional.{_name}: the power-average pool, (sum of x^p over each "
                                f"window)^(1/p); p = inf is max_pool of |x|.")


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's _unpool_output_size: (size - 1)·stride + kernel - 2·padding per dim, or output_size
    (its spatial sizes, or all of them) when it lies within a stride of that."""
    n = len(kernel_size)
    default_size = [(input.size()[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        ret = default_size
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(n):
            min_size, max_size = default_size[d] - stride[d], default_size[d] + stride[d]
            if not (min_size < output_size[d] < max_size):
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and '
                                 f'{max_size})')
        ret = output_size
    for d in range(n):
        if ret[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return ret


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """torch.nn.functional.max_unpool1d: max_unpool2d of (N, C, L, 1), as PyTorch's."""
    kernel_size = _tuple(kernel_size, 1)
    stride = _tuple(stride, 1) if stride is not None else kernel_size
    padding = _tuple(padding, 1)
    output_size = list(_unpool_output_size(input, kernel_size, stride, padding, output_size))
    return _agrad.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), [kernel_size[0], 1], [stride[0], 1],
                               [padding[0], 0], output_size + [1]).squeeze(-1)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """torch.nn.functional.max_unpool3d: each value of (N, C, D, H, W) or (C, D, H, W) input scattered to
    its flat index (max_pool3d's return_indices) in a zero output_size volume."""
    kernel_size = _tuple(kernel_size, 3)
    stride = _tuple(stride, 3) if stride is not None else kernel_size
    padding = _tuple(padding, 3)
    output_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    # ATen's max_unpooling3d_shape_check, in its order
    if indices.dtype != _agrad.int64:
        raise RuntimeError("elements in indices should be type int64")
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if len(output_size) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in output_size, but "
                           f"got {len(output_size)} elements.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({sizes(input.shape)}) but got indices tensor with shape: {sizes(indices.shape)}")
    _nonempty(input, "max_unpooling3d_forward_out_cpu()", ".")
    if min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {sizes(stride)}")
    require_floating("max_unpool3d", input.dtype.np)
    volume = math.prod(output_size)
    planes = list(input.shape[:-3])
    flat = indices.reshape(-1, math.prod(input.shape[-3:]))
    bad = (flat < 0) | (flat >= volume)
    if bool(bad.any()):
        raise RuntimeError(f"Found an invalid max index: {flat[bad][0].item()} (output volumes are of size "
                           f"{'x'.join(str(s) for s in output_size)})")
    # NOTE: repeated indices: one of the values wins, as in PyTorch
    out = _agrad.zeros((flat.shape[0], volume), dtype=input.dtype, device=input.device)
    out = out.scatter(1, flat, input.reshape(flat.shape))
    return out.reshape(*planes, *output_size)


__all__ += [_name for _name in ("adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
                                 "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
                                 "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
                                 "max_unpool1d", "max_unpool3d") if _name not in __all__]


# ---- fractional_max_pool2d/3d: ATen's FractionalMaxPool2d.cpp / 3d.cpp over agrad's ops ----------

def _fractional_intervals(samples, n_in, n_out, pool):
    """ATen's generate_intervals for one axis: each window's start, (planes, n_out), computed in the
    samples' dtype as ATen computes it (scalar_t): int((i + u)·α) - int(u·α), α = (n_in - pool) / (n_out - 1),
    the last window ending at the input's end."""
    seq = np.zeros(samples.shape + (max(n_out, 0),), dtype=np.int64)
    if n_out > 1:
        scalar = samples.dtype.type
        alpha = scalar(n_in - pool) / scalar(n_out - 1)
        u = samples[..., None]
        i = np.arange(n_out - 1).astype(samples.dtype)
        seq[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    if n_out > 0:
        seq[..., -1] = n_in - pool
    return seq


def _fractional_max_pool(input, kernel_size, output_size, random_samples, dims):
    """ATen's fractional_max_pool2d/3d (its checks and messages in its order): in each plane, the
    windows of kernel_size start where `_fractional_intervals` puts them (one sample per plane and
    axis); each output is its window's max (the last NaN if there is one, else the first max) and
    its flat index in the plane. The values are a gather of the input at those indices, so the
    gradient goes to each window's chosen element, as ATen's backward sends it."""
    name = f"fractional_max_pool{dims}d"
    ints = "tuple of Ints" if dims == 2 else "tuple of three Ints"
    kernel, out = _tuple(kernel_size, dims), _tuple(output_size, dims)
    if len(kernel) != dims:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or {ints}")
    if len(out) != dims:
        raise RuntimeError(f"{name}: output_size must either be a single Int or {ints}")
    where = f"{name}()" if dims == 2 else f"{name}_out()"
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(f"{where}: Expected {dims + 1}D or {dims + 2}D tensor, but got: {sizes(input.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch dimensions, but "
                               f"got{sizes(input.shape)} with dimension {i} being empty.")
    spatial = tuple(input.shape[-dims:])
    axis_names = ("height", "width") if dims == 2 else ("time", "height", "width")
    # NOTE: ATen's 3-d check is strict (one element less room than the 2-d one) and goes time, width, height
    for d in ((0, 1) if dims == 2 else (0, 2, 1)):
        last = out[d] + kernel[d] - 1
        if last > spatial[d] or (dims == 3 and last == spatial[d]):
            raise RuntimeError(f"{where}: pool {axis_names[d]} {kernel[d]} too large relative to input "
                               f"{axis_names[d]} {spatial[d]}")
    batched = input.dim() == dims + 2
    n, c = (input.shape[0] if batched else 1), input.shape[-dims - 1]
    # ATen's fractional_max_pool_check_shape
    if random_samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if random_samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {random_samples.dim()}")
    if random_samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if random_samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if random_samples.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got {random_samples.shape[2]}.")
    require_floating(f"{name}_out_frame", input.dtype.np)

    x = input if batched else input.unsqueeze(0)
    samples = np.asarray(random_samples.detach()[:n].cpu().numpy())
    # each axis's window starts, (n, c, out[d]); a 2-d plane's samples are (w, h), a 3-d one's (t, h, w)
    starts = [_fractional_intervals(samples[:, :, (1 - d) if dims == 2 else d], spatial[d], out[d], kernel[d])
              for d in range(dims)]
    strides = [math.prod(spatial[d + 1:]) for d in range(dims)]
    base = np.zeros((n, c) + tuple(max(o, 0) for o in out), dtype=np.int64)     # each window's first element
    for d in range(dims):
        base = base + (starts[d] * strides[d]).reshape((n, c) + tuple(base.shape[2 + d] if e == d else 1
                                                                       for e in range(dims)))
    offsets = np.zeros((), dtype=np.int64)                                      # the window's elements, in order
    for d in range(dims):
        offsets = (offsets[..., None] + np.arange(max(kernel[d], 0)) * strides[d])
    offsets = offsets.reshape(-1)
    planes, k, p = x.flatten(2), offsets.size, math.prod(base.shape[2:])
    if k == 0:      # an empty window: -inf at its start, as ATen's loop leaves it
        indices = _agrad.tensor(base, device=input.device)
        values = _agrad.full(base.shape, -math.inf, dtype=input.dtype, device=input.device)
    else:
        taps = _agrad.tensor((base.reshape(n, c, p, 1) + offsets).reshape(n, c, p * k), device=input.device)
        with _agrad.no_grad():
            windows = planes.gather(2, taps).reshape(n, c, p, k)
            nan = windows.isnan()
            last_nan = (k - 1) - nan.to(_agrad.int64).flip(-1).argmax(-1)
            which = _agrad.where(nan.any(-1), last_nan, windows.argmax(-1))
            indices = taps.reshape(n, c, p, k).gather(3, which.unsqueeze(-1)).reshape(n, c, p)
        values = planes.gather(2, indices).reshape(base.shape)
        indices = indices.reshape(base.shape)
    return (values, indices) if batched else (values.squeeze(0), indices.squeeze(0))


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """torch.nn.functional.fractional_max_pool2d_with_indices: (values, flat indices in each plane) of
    max windows of kernel_size placed pseudo-randomly (one sample in [0, 1) per plane and axis:
    `_random_samples`, (N, C, 2), else drawn) to give output_size, or output_ratio of the input's."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of "
                             "Ints.")
        _output_ratio = _tuple(output_ratio, 2)
        output_size = [int(input.size(-2) * _output_ratio[0]), int(input.size(-1) * _output_ratio[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = _agrad.rand(n_batch, input.size(-3), 2, dtype=input.dtype, device=input.device)
    return _fractional_max_pool(input, kernel_size, output_size, _random_samples, 2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """torch.nn.functional.fractional_max_pool3d_with_indices: as fractional_max_pool2d's, over (T, H, W)
    with (N, C, 3) samples."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        _output_ratio = _tuple(output_ratio, 3)
        output_size = [int(input.size(-3) * _output_ratio[0]), int(input.size(-2) * _output_ratio[1]),
                       int(input.size(-1) * _output_ratio[2])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 4 else input.size(0)
        _random_samples = _agrad.rand(n_batch, input.size(-4), 3, dtype=input.dtype, device=input.device)
    return _fractional_max_pool(input, kernel_size, output_size, _random_samples, 3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]


for _name in ("fractional_max_pool2d", "fractional_max_pool3d"):
    globals()[_name].__doc__ = (f"torch.nn.functional.{_name}: {_name}_with_indices' values, or both with "
                                f"return_indices.")
__all__ += [_name for _name in ("fractional_max_pool2d", "fractional_max_pool2d_with_indices",
                                 "fractional_max_pool3d", "fractional_max_pool3d_with_indices")
            if _name not in __all__]


# ---- dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout: ATen's _dropout_impl --------------------

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout_unbatched(input, p, training, inplace, batched, seed):
    """dropout1d and dropout3d: an unbatched input is given a batch dim of 1 for the feature mask."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _agrad.dropout_impl(input, p, training, inplace, True, False, seed)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False, *, seed=None):
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           f"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           f"channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout_unbatched(input, p, training, inplace, input.dim() == 3, seed)


def _feature_dim_warning(name, inp_dim, spatial, dims):
    warnings.warn(f"{name}: Received a {inp_dim}-D input to {name}, which is deprecated and will result in an "
                  f"error in a future release. To retain the behavior and silence this warning, please use dropout "
                  f"instead. Note that {name} exists to provide channel-wise dropout on inputs with {spatial} "
                  f"spatial dimensions, a channel dimension, and an optional batch dimension (i.e. {dims[0]}D or "
                  f"{dims[1]}D inputs).", stacklevel=4)


def dropout2d(input, p=0.5, training=True, inplace=False, *, seed=None):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        _feature_dim_warning("dropout2d", inp_dim, 2, (3, 4))
    if inp_dim == 3:
        # NOTE: PyTorch treats 3-D input as (N, C, L), not as unbatched (C, H, W) (pytorch#77081)
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=3)
    return _agrad.dropout_impl(input, p, training, inplace, True, False, seed)


def dropout3d(input, p=0.5, training=True, inplace=False, *, seed=None):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        _feature_dim_warning("dropout3d", inp_dim, 3, (4, 5))
    return _feature_dropout_unbatched(input, p, training, inplace, inp_dim == 5, seed)


def alpha_dropout(input, p=0.5, training=False, inplace=False, *, seed=None):
    _check_p(p)
    return _agrad.dropout_impl(input, p, training, inplace, False, True, seed)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False, *, seed=None):
    _check_p(p)
    return _agrad.dropout_impl(input, p, training, inplace, True, True, seed)


for _name, _what in (("dropout1d", "each channel of (N, C, L) or (C, L) input"),
                     ("dropout2d", "each channel of (N, C, H, W) input (3-D input: (N, C, L))"),
                     ("dropout3d", "each channel of (N, C, D, H, W) or (C, D, H, W) input"),
                     ("alpha_dropout", "each element, for SELU networks (the mean and variance kept)"),
                     ("feature_alpha_dropout", "each channel, as alpha_dropout")):
    globals()[_name].__doc__ = (f"torch.nn.functional.{_name}: zeroes {_what} with probability p in training; "
                                f"`seed` as F.dropout's.")


# ---- local_response_norm, bilinear, channel_shuffle, the deprecated upsample functions ------------

def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """torch.nn.functional.local_response_norm: input / (k + α·mean of x² over `size` neighbouring
    channels)^β, the mean an avg_pool over the zero-padded channel dim, as PyTorch's."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} "
                         f"dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = _agrad.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = _agrad.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        shape = input.size()
        div = div.view(shape[0], 1, shape[1], shape[2], -1)
        div = _agrad.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _agrad.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(shape)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# bilinear and channel_shuffle are the op library's (agrad.bilinear, agrad.channel_shuffle), as torch's
channel_shuffle = native_channel_shuffle = _agrad.channel_shuffle


def _deprecated_upsample(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=4)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """torch.nn.functional.upsample (deprecated): interpolate."""
    _deprecated_upsample("upsample")
    return _agrad.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_nearest (deprecated): interpolate(mode="nearest")."""
    _deprecated_upsample("upsample_nearest")
    return _agrad.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_bilinear (deprecated): interpolate(mode="bilinear", align_corners=True)."""
    _deprecated_upsample("upsample_bilinear")
    return _agrad.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ += [_name for _name in ("dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                                "local_response_norm", "bilinear", "channel_shuffle", "native_channel_shuffle",
                                "upsample", "upsample_nearest", "upsample_bilinear") if _name not in __all__]


# ---- losses and samplers that are Python in torch.nn.functional too ---------------------------------

def _ctc_lengths(args):
    """PyTorch's two ctc_loss overloads: both lengths int tensors, or both lists (tuples) of ints."""
    *_, input_lengths, target_lengths = args
    if all(isinstance(v, _agrad.Tensor) for v in (input_lengths, target_lengths)):
        return input_lengths, target_lengths
    if all(isinstance(v, (list, tuple)) for v in (input_lengths, target_lengths)):
        return tuple(_agrad.tensor(list(v), dtype=_agrad.int64) for v in (input_lengths, target_lengths))
    got = ", ".join("Tensor" if isinstance(a, _agrad.Tensor) else type(a).__name__ for a in args)
    raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}, int, int, bool), but "
                    f"expected one of:\n * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of "
                    f"ints target_lengths, int blank, int reduction, bool zero_infinity)\n * (Tensor log_probs, "
                    f"Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank, int reduction, bool "
                    f"zero_infinity)")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """torch.nn.functional.ctc_loss: agrad.ctc_loss, the lengths int tensors or (as PyTorch's other
    overload) lists or tuples of ints."""
    input_lengths, target_lengths = _ctc_lengths((log_probs, targets, input_lengths, target_lengths))
    return _agrad.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """torch.nn.functional.triplet_margin_with_distance_loss: max(0, margin + d(anchor, positive) -
    d(anchor, negative)) for any distance d (pairwise_distance by default); with swap, the smaller of
    d(anchor, negative) and d(positive, negative)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = _agrad.pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _agrad.minimum(dist_neg, distance_function(positive, negative))
    loss = _agrad.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return _agrad.sum(loss)
    if reduction == "mean":
        return _agrad.mean(loss)
    return loss


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """torch.nn.functional.gumbel_softmax: softmax((logits + g) / tau) along dim, g drawn from
    Gumbel(0, 1) with agrad's global generator; with `hard`, the one-hot of its largest element,
    differentiated as the soft sample (straight through: y_hard - y_soft.detach() + y_soft)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=3)
    if not logits.is_floating_point():
        from ..messages import scalar_type_name
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {scalar_type_name(logits.dtype.np)}")
    # PyTorch's -log(Exponential(1)): the exponential drawn by inversion, -log(1 - U)
    gumbels = -_agrad.log(-_agrad.log1p(-_agrad.rand_like(logits)))
    y_soft = _agrad.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _agrad.scatter(_agrad.zeros_like(logits), dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False, *, seed=None):
    """torch.nn.functional.rrelu: agrad.rrelu (slopes drawn from `seed`, or agrad's global generator),
    or with inplace=True its in-place variant (the result written into input)."""
    if inplace:
        return _agrad.rrelu_(input, lower, upper, training, seed=seed)
    return _agrad.rrelu(input, lower, upper, training, seed=seed)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, *, seed=None):
    return rrelu(input, lower, upper, training, inplace=True, seed=seed)


# (ctc_loss and rrelu are ops too, listed already)
__all__ += [_name for _name in ("ctc_loss", "triplet_margin_with_distance_loss", "gumbel_softmax", "rrelu", "rrelu_")
            if _name not in __all__]


# ---- scaled_dot_product_attention with a causal bias; linear_cross_entropy -----------------------

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False, **kwargs):
    """torch.nn.functional.scaled_dot_product_attention: agrad.scaled_dot_product_attention, except that
    a CausalBias attn_mask (agrad.nn.attention.bias) computes as its `_dispatch` says, as torch's
    CausalBias.__torch_function__ makes it (`kwargs`: the op's dropout `seed`)."""
    from .attention.bias import CausalBias
    if isinstance(attn_mask, CausalBias):
        return CausalBias._dispatch(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                    enable_gqa=enable_gqa, **kwargs)
    return _agrad.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                               enable_gqa=enable_gqa, **kwargs)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """torch.nn.functional.linear_cross_entropy (PyTorch 2.13): cross_entropy(linear(input, linear_weight,
    linear_bias), target, ...) with PyTorch's shape checks. linear_weight (C, *out_features, in_features)
    gives logits (N, C, *out_features), the K-dimensional loss; ignore_index None means -100 for class
    indices and is refused for class probabilities. agrad computes PyTorch's reference path: `options`
    (its LinearCrossEntropyOptions, a chunked kernel that saves memory) is not available."""
    if options is not None:
        raise NotImplementedError("linear_cross_entropy: agrad has no chunked implementation; pass options=None "
                                  "(the reference implementation)")
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if len(out_features) > 0 and len(num_batches) == 0:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    # NOTE: as cross_entropy tells probabilities from class indices: by the target's shape
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = _agrad.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return _agrad.cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                                label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]


# ---- torch/nn/functional.py's helpers ---------------------------------------------------------------

def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _agrad.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as a float one of target_type (-inf where True); a float mask as it is."""
    if mask is not None:
        _mask_dtype = mask.dtype
        _mask_is_float = mask.is_floating_point()
        if _mask_dtype != _agrad.bool and not _mask_is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and _mask_dtype != other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} "
                          "is deprecated. Use same type for both instead.", stacklevel=2)
        if not _mask_is_float:
            mask = _agrad.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v through one packed (3E, E) weight: one linear for self-attention, two for
    encoder-decoder attention (k is v), three otherwise."""
    E = q.size(-1)
    if k is v:
        if q is k:
            # self-attention
            proj = linear(q, w, b)
            # NOTE: (3, E), not (E, 3), keeps chunk()'s order (PyTorch: "for better memory coalescing")
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        # encoder-decoder attention
        w_q, w_kv = w.split([E, E * 2])
        if b is None:
            b_q = b_kv = None
        else:
            b_q, b_kv = b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    if b is None:
        b_q = b_k = b_v = None
    else:
        b_q, b_k, b_v = b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v through their own weights (kdim, vdim other than embed_dim)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)),
                           ("key bias", b_k, (Eq,)), ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {name} shape of {shape}, but got {_size(t.shape)}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D query) or not (2-D); PyTorch's AssertionErrors otherwise."""
    if query.dim() == 3:
        is_batched = True
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                                 f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                                 f" but found {attn_mask.dim()}-D tensor instead")
    elif query.dim() == 2:
        is_batched = False
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                                 f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                                     f" but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected_shape:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got "
                                         f"{_size(attn_mask.shape)}")
    else:
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                             "query tensor")
    return is_batched


def _check_key_padding_mask(key_padding_mask, src_len, bsz):
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")


# ---- torch.nn.functional.multi_head_attention_forward -----------------------------------------------

def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward: query (L, N, E) or (L, E), key and value
    (S, N, E_k/E_v) or (S, E_k/E_v) -> (attn_output (L, N, E) or (L, E), attn_output_weights or None).
    key_padding_mask (N, S) / (S,) and attn_mask (L, S) / (N·num_heads, L, S): bool (True = ignored)
    or float (added); weights averaged over the heads (N, L, S) unless average_attn_weights=False
    (N, num_heads, L, S)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)

    # an unbatched input runs as a batch of one, squeezed again at the end
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len, _, _ = key.shape

    key_padding_mask = _canonical_mask(mask=key_padding_mask, mask_name="key_padding_mask",
                                       other_type=_none_or_dtype(attn_mask), other_name="attn_mask",
                                       target_type=query.dtype)

    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")

    if is_causal and key_padding_mask is None and not need_weights:
        # no padding mask and no weights wanted: SDPA applies the causal hint itself
        attn_mask = None
    else:
        attn_mask = _canonical_mask(mask=attn_mask, mask_name="attn_mask", other_type=None, other_name="",
                                    target_type=query.dtype, check_other=False)
        if key_padding_mask is not None:
            # merged with the padding mask, attn_mask is no longer causal
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        # separate projection weights allow other embedding dimensions for key and value
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {_size(key.shape[:2])} do not match value's "
                                 f"{_size(value.shape[:2])}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {_size(key.shape)} does not match value shape {_size(value.shape)}")

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        if in_proj_bias is None:
            b_q = b_k = b_v = None
        else:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    # attn_mask as 3-D
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            correct_2d_size = (tgt_len, src_len)
            if tuple(attn_mask.shape) != correct_2d_size:
                raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, but should be "
                                   f"{correct_2d_size}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            correct_3d_size = (bsz * num_heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != correct_3d_size:
                raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but should be "
                                   f"{correct_3d_size}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # bias_k and bias_v appended along the sequence (one more key, never masked)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _agrad.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _agrad.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    else:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")

    # the heads as the batch: (N·num_heads, L or S, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}")
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}")
        v = static_v

    # one zero key and value appended (add_zero_attn)
    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = _agrad.cat([k, _agrad.zeros(zero_attn_shape, dtype=k.dtype, device=k.device)], dim=1)
        v = _agrad.cat([v, _agrad.zeros(zero_attn_shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)

    # the padding mask merged into attn_mask
    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, src_len, bsz)
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        _B, _Nt, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            attn_output_weights = _agrad.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = _agrad.bmm(q_scaled, k.transpose(-2, -1))
        attn_output_weights = softmax(attn_output_weights, dim=-1)
        if dropout_p > 0.0:
            attn_output_weights = dropout(attn_output_weights, p=dropout_p)

        attn_output = _agrad.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))

        # the weights averaged over the heads, or per head
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = attn_output_weights.mean(dim=1)

        if not is_batched:
            attn_output = attn_output.squeeze(1)
            attn_output_weights = attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights

    # attn_mask (1, L, S) -> (1, 1, L, S), (N·num_heads, L, S) -> (N, num_heads, L, S), as SDPA takes it
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)

    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)

    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)

    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


__all__ += ["multi_head_attention_forward"]


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


def threshold_(input, threshold, value):   # noqa: A002 — PyTorch's names
    return globals()["threshold"](input, threshold, value, inplace=True)


def _max_pool_with_indices(pool):
    def with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        # (as torch's: the indices are returned whatever return_indices says)
        return pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)
    with_indices.__name__ = with_indices.__qualname__ = f"{pool.__name__}_with_indices"
    with_indices.__doc__ = f"torch.nn.functional.{pool.__name__}_with_indices: (values, indices) of {pool.__name__}."
    return with_indices


max_pool1d_with_indices = _max_pool_with_indices(_agrad.max_pool1d)
max_pool2d_with_indices = _max_pool_with_indices(_agrad.max_pool2d)
max_pool3d_with_indices = _max_pool_with_indices(_agrad.max_pool3d)


_INPLACE_FLAGS = ("relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardsigmoid", "hardswish",
                  "silu", "mish", "dropout", "threshold")
__all__ += [name + "_" for name in ("relu", "elu", "selu", "celu", "leaky_relu", "hardtanh", "threshold")]
__all__ += ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices"]
for _name in _INPLACE_FLAGS:
    globals()[_name].__doc__ = (f"torch.nn.functional.{_name}: agrad.{_name}, or with inplace=True its in-place "
                                f"variant (the result written into input).")

from . import grad  # noqa: E402,F401 — torch.nn.functional.grad is torch.nn.grad


# ---- __torch_function__: the Python functions hand their calls to the handlers, as torch's do ------------------

# the classes no handler is asked about (an argument without a default may be a number: lp_pool's norm_type)
_PLAIN = frozenset({_Tensor, type(None), int, float, bool, str, tuple, list})


def _overloaded(value) -> bool:
    """Whether `value` (not a plain Tensor, not None) takes a call to a __torch_function__ handler."""
    handler = getattr(value.__class__, "__torch_function__", None)
    return handler is not None and handler is not _disabled_torch_function_impl and not _tls.torch_function


def _overridable(fn):
    """`fn` behind torch.nn.functional's opening lines (`if has_torch_function_variadic(input, target): return
    handle_torch_function(fn, (input, target), input, target, reduction=reduction)`), generated from its
    signature: its tensor arguments are those without a default or with None for one; those without a default
    reach a handler as positional arguments, the others as keywords (a keyword-only one only when given).
    (The functions that are ops reach the handlers through the dispatcher.) A call of plain tensors outside
    a mode costs a frame and a set lookup per tensor argument; the frame is one more that a warning of a
    function wrapped here counts in its stacklevel."""
    params, call, relevant, positional, keywords, namespace = [], [], [], [], [], {}
    star = False
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            params.append(f"*{p.name}")
            call.append(f"*{p.name}")
            positional.append(f"*{p.name}")
            star = True
            continue
        if p.kind is p.VAR_KEYWORD:
            params.append(f"**{p.name}")
            call.append(f"**{p.name}")
            keywords.append(f"**{p.name}")
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.default is p.empty:
            params.append(p.name)
        else:
            namespace[f"_d_{p.name}"] = p.default
            params.append(f"{p.name}=_d_{p.name}")
        call.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
        if p.default is p.empty or p.default is None:
            relevant.append(p.name)
        if p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
            positional.append(p.name)
        elif p.kind is p.KEYWORD_ONLY and p.default is not p.empty:     # (agrad's own: `seed`) when given
            keywords.append(f"**({{}} if {p.name} is _d_{p.name} else {{'{p.name}': {p.name}}})")
        else:
            keywords.append(f"{p.name}={p.name}")
    name = fn.__name__
    tests = " or ".join(f"({r}.__class__ is not _Tensor and {r}.__class__ not in _PLAIN and _overloaded({r}))"
                        for r in relevant)
    source = (f"def {name}({', '.join(params)}):\n"
              f"    if _pushed.count and _tls.included & _TORCH_FUNCTION{' or ' + tests if tests else ''}:\n"
              f"        return _handle({name}, ({''.join(r + ', ' for r in relevant)}), "
              f"{', '.join(positional + keywords)})\n"
              f"    return _fn({', '.join(call)})\n")
    namespace.update(_fn=fn, _Tensor=_Tensor, _PLAIN=_PLAIN, _tls=_tls, _pushed=modes_pushed,
                     _TORCH_FUNCTION=_TORCH_FUNCTION, _handle=handle_torch_function,
                     _overloaded=_overloaded)
    wrapper = codegen.define(source, namespace, f"<agrad nn.functional {name}>", name)
    wrapper.__doc__, wrapper.__qualname__, wrapper.__module__, wrapper.__wrapped__ = \
        fn.__doc__, fn.__qualname__, __name__, fn
    return wrapper


for _name in __all__:
    if getattr(globals()[_name], "op", None) is None:
        globals()[_name] = _overridable(globals()[_name])
