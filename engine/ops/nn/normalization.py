"""Normalisation: batch_norm, group_norm, layer_norm (ops with PyTorch's Native*Backward0
nodes), instance_norm, rms_norm and normalize (composites, as in PyTorch).

Every norm here is one normalisation `(x - mean) * rsqrt(var + eps)` over some dims of
the input, then a per-channel (or per-element, for layer_norm) affine. The backward
formulas recompute x_hat with agrad ops (`_normalized`, `_layer_normalized`) and share one
input-gradient formula (`_norm_grad`), so double backward needs nothing more. batch_norm in
training mode updates running_mean and running_var in place, as PyTorch does (momentum,
unbiased variance).
"""
from __future__ import annotations

import numpy as np

from ...backends.meta import MetaArray
from ...errors import DimensionError, ShapeError
from ...grad_mode import no_grad
from ...messages import require_floating, sizes
from ..pointwise.binary import clamp
from ..pointwise.unary import rsqrt
from ..reduce.arithmetic import (
    mean,
    mean_of,
    norm,
    sum,  # noqa: A004
)
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.join import cat
from ..shape.view import expand, reshape

# ---- shared: the normalisation and its input gradient, with agrad ops ---------------------------


def _normalized(input, dims, eps):
    """x_hat and rsqrt(var + eps) over `dims` (biased variance), recomputed with agrad ops."""
    centered = input - mean(input, dims, True)
    rstd = (mean(centered * centered, dims, True) + eps) ** -0.5
    return centered * rstd, rstd


def _norm_grad(g, input, dims, eps):
    """d/d input of x_hat over `dims`, given g = grad * weight."""
    x_hat, rstd = _normalized(input, dims, eps)
    return rstd * (g - mean(g, dims, True) - x_hat * mean(g * x_hat, dims, True))


def _channel(t, ndim):
    """A per-channel (C,) tensor shaped to broadcast against (N, C, *)."""
    return reshape(t, [1, -1] + [1] * (ndim - 2))


def _reduce_dims(ndim):
    return [0] + list(range(2, ndim))


def _xp_normalize(xp, x, axes, eps):
    """x_hat over `axes`, and the mean and biased variance it used (kept dims)."""
    mu = mean_of(xp, x, axes, True)
    centered = x - mu
    var = mean_of(xp, centered * centered, axes, True)
    return centered / xp.sqrt(var + eps), mu, var


# ---- batch_norm ---------------------------------------------------------------------------------

def _bn_meta(input, running_mean, running_var, weight, bias, training, momentum, eps):
    if input.ndim < 2:
        raise DimensionError(f"Dimension out of range (expected to be in range of [-{max(input.ndim, 1)}, "
                             f"{max(input.ndim, 1) - 1}], but got 1)")
    c = input.shape[1]
    if training and input.size // max(c, 1) <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{sizes(input.shape)}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode")
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.size != c:
            raise ShapeError(f"{name} should contain {c} elements not {t.size}")
    require_floating("batch_norm", input.dtype)
    return MetaArray(input.shape, input.dtype)


def _bn_kernel(xp, input, running_mean, running_var, weight, bias, training, momentum, eps):
    _bn_meta(input, running_mean, running_var, weight, bias, training, momentum, eps)
    axes = tuple(_reduce_dims(input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        out, mu, var = _xp_normalize(xp, input, axes, eps)
        n = input.size // input.shape[1]
        # NOTE: in place, as PyTorch: the running stats are buffers the caller keeps
        if running_mean is not None:
            running_mean[...] = (1 - momentum) * running_mean + momentum * mu.reshape(-1)
        if running_var is not None:
            running_var[...] = (1 - momentum) * running_var + momentum * var.reshape(-1) * (n / (n - 1))
    else:
        out = (input - running_mean.reshape(shape)) / xp.sqrt(running_var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.astype(input.dtype, copy=False)


def _bn_x_hat(input, running_mean, running_var, training, eps):
    if training:
        return _normalized(input, _reduce_dims(input.ndim), eps)[0]
    return (input - _channel(running_mean, input.ndim)) * _channel((running_var + eps) ** -0.5, input.ndim)


def _bn_grad_input(grad, input, running_mean, running_var, weight, training, eps):
    g = grad if weight is None else grad * _channel(weight, input.ndim)
    if training:
        return _norm_grad(g, input, _reduce_dims(input.ndim), eps)
    return g * _channel((running_var + eps) ** -0.5, input.ndim)


def _bn_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)

    def stats(c, k):
        return arg((c,), (k, "m"), requires_grad=False), arg((c,), (k, "v"), low=0.5, high=2.0, requires_grad=False)
    return [SampleInput("(3,4,5) training w b", arg((3, 4, 5), 0), *stats(4, 1), arg((4,), 2), arg((4,), 3), True),
            SampleInput("(4,3) training, no stats, no affine", arg((4, 3), 4), None, None, training=True),
            SampleInput("(2,3,3,3) eval w b", arg((2, 3, 3, 3), 5), *stats(3, 6), arg((3,), 7), arg((3,), 8)),
            SampleInput("(2,2,2,3,2) training momentum eps", arg((2, 2, 2, 3, 2), 9), *stats(2, 10), arg((2,), 11),
                        None, True, 0.3, 1e-3),
            SampleInput("(3,4)T eval w b", arg((3, 4), 12, transposed=True), *stats(4, 13), arg((4,), 15),
                        arg((4,), 14))]


batch_norm = defop(
    "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, Tensor? bias=None, "
    "bool training=False, float momentum=0.1, float eps=1e-05) -> Tensor",
    kernel=_bn_kernel, meta=_bn_meta,
    grads={"input": _bn_grad_input,
           "running_mean": None, "running_var": None,
           "weight": lambda grad, input, running_mean, running_var, training, eps:
               sum(grad * _bn_x_hat(input, running_mean, running_var, training, eps), _reduce_dims(input.ndim)),
           "bias": lambda grad: sum(grad, _reduce_dims(grad.ndim))},
    backward_name="NativeBatchNormBackward0", samples=_bn_samples, torch="torch.nn.functional.batch_norm",
    doc="Normalises each channel (dim 1) of (N, C, *) input over the batch and spatial dims — by the batch's "
        "statistics when training (then running_mean/running_var, if given, are updated in place: "
        "(1 - momentum) * running + momentum * batch, the variance unbiased), else by the running ones — then "
        "weight * x + bias per channel.")


# ---- group_norm ---------------------------------------------------------------------------------

def _gn_meta(input, num_groups, weight, bias, eps):
    if input.ndim < 2:
        raise ShapeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    c = input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise ShapeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {sizes(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise ShapeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {sizes(t.shape)} and input of shape {sizes(input.shape)}")
    require_floating("group_norm", input.dtype)
    return MetaArray(input.shape, input.dtype)


def _gn_kernel(xp, input, num_groups, weight, bias, eps):
    _gn_meta(input, num_groups, weight, bias, eps)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    # NOTE: xp.reshape, not the method: (N, C, ...) -> (N, G, -1) splits C and merges it with the
    # rest, which a chunked dask array reshapes only through its xp (backends/dask.py)
    grouped = xp.reshape(input, (input.shape[0], num_groups, -1))
    out = xp.reshape(_xp_normalize(xp, grouped, (2,), eps)[0], input.shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.astype(input.dtype, copy=False)


def _grouped(t, num_groups):
    return reshape(t, [t.shape[0], num_groups, -1])


def _gn_x_hat(input, num_groups, eps):
    return reshape(_normalized(_grouped(input, num_groups), [2], eps)[0], list(input.shape))


def _gn_grad_input(grad, input, num_groups, weight, eps):
    g = grad if weight is None else grad * _channel(weight, input.ndim)
    dx = _norm_grad(_grouped(g, num_groups), _grouped(input, num_groups), [2], eps)
    return reshape(dx, list(input.shape))


def _gn_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,4,3) 2 groups w b", arg((2, 4, 3), 0), 2, arg((4,), 1), arg((4,), 2)),
            SampleInput("(2,6,2,2) 3 groups no affine", arg((2, 6, 2, 2), 3), 3),
            SampleInput("(3,8) 2 groups weight eps", arg((3, 8), 4), 2, arg((8,), 5), eps=1e-3),
            SampleInput("(1,4,3)T 1 group w b", arg((1, 4, 3), 6, transposed=True), 1, arg((4,), 8), arg((4,), 7))]


group_norm = defop(
    "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor",
    kernel=_gn_kernel, meta=_gn_meta,
    grads={"input": _gn_grad_input,
           "weight": lambda grad, input, num_groups, eps:
               sum(grad * _gn_x_hat(input, num_groups, eps), _reduce_dims(input.ndim)),
           "bias": lambda grad: sum(grad, _reduce_dims(grad.ndim))},
    backward_name="NativeGroupNormBackward0", samples=_gn_samples, torch="torch.nn.functional.group_norm",
    doc="Normalises (N, C, *) input over each group of C / num_groups channels and the spatial dims, then "
        "weight * x + bias per channel.")


# ---- instance_norm: batch_norm over (1, N*C, *), as PyTorch --------------------------------------

def _repeat_channels(t, n):
    # NOTE: new tensors (PyTorch's repeat), not views: the caller's buffers are written after the call
    return None if t is None else cat([t] * n)


def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    if use_input_stats:
        spatial = int(np.prod(input.shape[2:])) if input.ndim > 2 else 1
        if spatial <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{sizes(input.shape)}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n, c = input.shape[0], input.shape[1]
    stats = [_repeat_channels(t, n) for t in (running_mean, running_var)]
    out = batch_norm(reshape(input, [1, n * c] + list(input.shape[2:])), stats[0], stats[1],
                     _repeat_channels(weight, n), _repeat_channels(bias, n), use_input_stats, momentum, eps)
    if use_input_stats:
        # PyTorch averages the per-instance running stats back into the caller's buffers
        with no_grad():
            for buffer, updated in zip((running_mean, running_var), stats):
                if buffer is not None:
                    buffer.copy_(mean(reshape(updated, [n, c]), [0]))
    return reshape(out, list(input.shape))


def _in_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,3,4) no stats", arg((2, 3, 4), 0)),
            SampleInput("(2,2,3,2) stats w b", arg((2, 2, 3, 2), 1), arg((2,), 2, requires_grad=False),
                        arg((2,), 3, low=0.5, high=2.0, requires_grad=False), arg((2,), 4), arg((2,), 5)),
            SampleInput("(2,3,4) running stats used", arg((2, 3, 4), 6), arg((3,), 7, requires_grad=False),
                        arg((3,), 8, low=0.5, high=2.0, requires_grad=False), use_input_stats=False),
            SampleInput("(1,2,5)T weight momentum eps", arg((1, 2, 5), 9, transposed=True), None, None,
                        arg((2,), 10), momentum=0.5, eps=1e-3)]


instance_norm = defop(
    "instance_norm(Tensor input, Tensor? running_mean=None, Tensor? running_var=None, Tensor? weight=None, "
    "Tensor? bias=None, bool use_input_stats=True, float momentum=0.1, float eps=1e-05) -> Tensor",
    composite=_instance_norm, samples=_in_samples, torch="torch.nn.functional.instance_norm",
    doc="Normalises each (instance, channel) of (N, C, *) input over its spatial dims: batch_norm over the input "
        "viewed as (1, N*C, *), as PyTorch does; running stats, if given, are updated with the mean over the batch.")


# ---- rms_norm, normalize --------------------------------------------------------------------------

def _rms_norm(input, normalized_shape, weight, eps):
    shape = tuple(normalized_shape)
    k = len(shape)
    if weight is not None and tuple(weight.shape) != shape:
        raise ShapeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{sizes(weight.shape)} and normalized_shape = {sizes(shape)}")
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"Given normalized_shape={sizes(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size{sizes(input.shape)}")
    require_floating("rms_norm", input.dtype.np)
    if eps is None:
        eps = float(np.finfo(input.dtype.np).eps)
    dims = list(range(input.ndim - k, input.ndim))
    out = input * rsqrt(mean(input * input, dims, True) + eps)
    return out if weight is None else out * weight


rms_norm = defop(
    "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
    composite=_rms_norm,
    samples=lambda op: [
        SampleInput("(2,3,4) [4] w", make_arg((2, 3, 4), key=(op, 0)), [4], make_arg((4,), key=(op, 1))),
        SampleInput("(3,4) [3,4] w", make_arg((3, 4), key=(op, 2)), [3, 4],
                    make_arg((3, 4), key=(op, 4))),
        SampleInput("(2,5) [5] eps", make_arg((2, 5), key=(op, 3)), [5], eps=1e-3)],
    torch="torch.nn.functional.rms_norm",
    doc="x * rsqrt(mean(x**2) + eps) * weight over the last len(normalized_shape) dims; eps defaults to the "
        "dtype's machine epsilon.")


def _normalize(input, p, dim, eps):
    return input / expand(clamp(norm(input, p, [dim], True), eps), list(input.shape))


normalize = defop(
    "normalize(Tensor input, float p=2.0, int dim=1, float eps=1e-12) -> Tensor",
    composite=_normalize,
    samples=lambda op: [
        SampleInput("(3,4) default", make_arg((3, 4), key=(op, 0))),
        SampleInput("(2,3,2) p=1 dim=-1", make_arg((2, 3, 2), key=(op, 1), away_from=0.0), 1.0, -1),
        SampleInput("(4,3)T p=3 dim=0", make_arg((4, 3), key=(op, 2), transposed=True), 3.0, 0),
        SampleInput("(2,3) zero row, eps", make_arg((2, 3), key=(op, 3), low=0.0, high=1e-3), eps=0.1)],
    torch="torch.nn.functional.normalize",
    doc="input / max(norm(input, p, dim, keepdim=True), eps): each slice along dim scaled to unit p-norm.")


# ---- layer_norm ---------------------------------------------------------------------------------

def _layer_norm_meta(input, normalized_shape, weight, bias, eps):
    shape = tuple(normalized_shape)
    if len(shape) < 1:
        raise ShapeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                         f"element, but got normalized_shape = {sizes(shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ShapeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                             f"{sizes(t.shape)} and normalized_shape = {sizes(shape)}")
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"Given normalized_shape={sizes(shape)}, expected input with shape "
                         f"[*{''.join(', ' + str(s) for s in shape)}], but got input of size{sizes(input.shape)}")
    require_floating("LayerNormKernelImpl", input.dtype)
    return MetaArray(input.shape, input.dtype)


def _layer_norm_kernel(xp, input, normalized_shape, weight, bias, eps):
    _layer_norm_meta(input, normalized_shape, weight, bias, eps)
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    centered = input - mean_of(xp, input, axes, True)
    var = mean_of(xp, centered * centered, axes, True)
    out = centered / xp.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(input.dtype, copy=False)


def _layer_normalized(input, normalized_shape, eps):
    """x_hat and 1/std, recomputed with agrad ops so the gradient can be differentiated again."""
    dims = list(range(input.ndim - len(normalized_shape), input.ndim))
    centered = input - mean(input, dims, True)
    rstd = (mean(centered * centered, dims, True) + eps) ** -0.5
    return centered * rstd, rstd, dims


def _layer_norm_grad_input(grad, input, normalized_shape, weight, eps):
    x_hat, rstd, dims = _layer_normalized(input, normalized_shape, eps)
    g = grad if weight is None else grad * weight
    return rstd * (g - mean(g, dims, True) - x_hat * mean(g * x_hat, dims, True))


def _batch_sum(t, normalized_shape):
    lead = t.ndim - len(normalized_shape)
    return sum(t, list(range(lead))) if lead else t


def _layer_norm_samples(op):
    return [SampleInput("(2,3,4) [4] w b", make_arg((2, 3, 4), key=(op, 0)), [4], make_arg((4,), key=(op, 1)),
                        make_arg((4,), key=(op, 2))),
            SampleInput("(3,4)T [3,4] w", make_arg((3, 4), key=(op, 3), transposed=True), [3, 4],
                        make_arg((3, 4), key=(op, 4))),
            SampleInput("(2,5) [5] no affine", make_arg((2, 5), key=(op, 5)), [5]),
            SampleInput("(4,) eps", make_arg((4,), key=(op, 6)), [4], make_arg((4,), key=(op, 7)),
                        make_arg((4,), key=(op, 8)), eps=1e-3)]


layer_norm = defop(
    "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05) -> Tensor",
    kernel=_layer_norm_kernel, meta=_layer_norm_meta, promote="same",
    grads={"input": _layer_norm_grad_input,
           "weight": lambda grad, input, normalized_shape, eps:
               _batch_sum(grad * _layer_normalized(input, normalized_shape, eps)[0], normalized_shape),
           "bias": lambda grad, normalized_shape: _batch_sum(grad, normalized_shape)},
    backward_name="NativeLayerNormBackward0", samples=_layer_norm_samples,
    torch="torch.nn.functional.layer_norm",
    doc="(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dimensions.")


# ---- native_layer_norm, native_batch_norm, native_group_norm: ATen's, with their saved statistics ---
# PyTorch's layer_norm, batch_norm and group_norm are these ops' first outputs; here the other way round:
# each is its norm above (so its output's Node is the Native*Backward0 one) and the statistics it saves,
# recomputed. native_layer_norm's and native_batch_norm's statistics are not differentiable (PyTorch's
# output_differentiability); native_group_norm's are, through the ops that compute them.

def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    with no_grad():
        dims = list(range(input.ndim - len(normalized_shape), input.ndim))
        centered = input - mean(input, dims, True)
        return out, mean(input, dims, True), rsqrt(mean(centered * centered, dims, True) + eps)


native_layer_norm = defop(
    "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)",
    composite=_native_layer_norm,
    samples=lambda op: [SampleInput(s.name, *(list(s.args) + [None] * (4 - len(s.args))), s.kwargs.get("eps", 1e-5))
                        for s in _layer_norm_samples(op)],
    torch="torch.native_layer_norm",
    doc="ATen's native_layer_norm: (layer_norm's output, the mean, 1/sqrt(var + eps)), the statistics of shape "
        "input.shape[:-len(normalized_shape)] + [1] * len(normalized_shape).")


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    with no_grad():                     # the batch's statistics, before batch_norm updates the running ones
        if training:
            dims = _reduce_dims(input.ndim)
            centered = input - mean(input, dims, True)
            saved = (reshape(mean(input, dims, True), [-1]), reshape(rsqrt(mean(centered * centered, dims, True)
                                                                           + eps), [-1]))
        else:                           # PyTorch's CPU kernel saves nothing in evaluation
            saved = tuple(reshape(input, [-1])[:0].clone() for _ in range(2))
    return (batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps), *saved)


def _native_bn_samples(op):
    out = []
    for s in _bn_samples(op):
        args = list(s.args) + [None] * (5 - len(s.args))
        training = args[5] if len(args) > 5 else s.kwargs.get("training", False)
        momentum = args[6] if len(args) > 6 else 0.1
        eps = args[7] if len(args) > 7 else 1e-5
        out.append(SampleInput(s.name, args[0], args[3], args[4], args[1], args[2], training, momentum, eps))
    return out


native_batch_norm = defop(
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    composite=_native_batch_norm, samples=_native_bn_samples, torch="torch.native_batch_norm",
    doc="ATen's native_batch_norm: (batch_norm's output, save_mean, save_invstd), the batch's per-channel mean and "
        "1/sqrt(var + eps) when training (empty in evaluation); the running statistics are updated in place.")


def _native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    if not input.is_contiguous():
        raise RuntimeError("Expected X.is_contiguous(memory_format) to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    out = group_norm(input, group, weight, bias, eps)
    grouped = _grouped(input, group)
    centered = grouped - mean(grouped, [2], True)
    return out, mean(grouped, [2]), rsqrt(mean(centered * centered, [2]) + eps)


def _native_gn_samples(op):
    out = []
    for s in _gn_samples(op):
        x, groups = s.args[0], s.args[1]
        if not x.is_contiguous():       # refused, as PyTorch's kernel refuses it
            continue
        args = list(s.args[2:]) + [None] * (4 - len(s.args))
        n, c = x.shape[0], x.shape[1]
        out.append(SampleInput(s.name, x, args[0], args[1], n, c, x.numel() // (n * c), groups,
                               s.kwargs.get("eps", 1e-5)))
    return out


native_group_norm = defop(
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, int N, int C, int HxW, int group, float eps) "
    "-> (Tensor, Tensor, Tensor)",
    composite=_native_group_norm, samples=_native_gn_samples, torch="torch.native_group_norm",
    doc="ATen's native_group_norm: (group_norm's output, the (N, group) means, 1/sqrt(var + eps)); the "
        "statistics are differentiable, as PyTorch's.")


# ---- norm_except_dim: weight_norm's norm (ATen's WeightNorm.cpp) -------------------------------------

def _norm_except_dim(v, pow, dim):
    if dim == -1:
        return norm(v, pow)
    if dim == 0:
        return reshape(norm(reshape(v, [v.shape[0], -1]), pow, [1]), [v.shape[0]] + [1] * (v.ndim - 1))
    if dim == v.ndim - 1:
        return reshape(norm(reshape(v, [-1, v.shape[-1]]), pow, [0]), [1] * (v.ndim - 1) + [v.shape[-1]])
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


norm_except_dim = defop(
    "norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor",
    composite=_norm_except_dim,
    samples=lambda op: [SampleInput(f"(3,4,5) dim={d} pow={p}", make_arg((3, 4, 5), key=(op, d)), p, d)
                        for d, p in ((0, 2), (1, 3), (2, 2), (-1, 2))],
    torch="torch.norm_except_dim",
    doc="The pow-norm of v over every dimension but dim, keeping v's rank (size 1 but at dim); dim=-1: the norm of "
        "all of v. weight_norm's g is norm_except_dim(v, 2, dim).")
