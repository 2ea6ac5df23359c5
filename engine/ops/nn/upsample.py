"""interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area) and its backward op.

Every mode is separable: along each spatial dim, output position j reads input
positions i0[j] and i1[j] with weights 1 - lam[j] and lam[j] (nearest: i0 with weight
1; bicubic: four positions, clamped to the input, with PyTorch's cubic convolution
weights, A = -0.75), computed once per dim with PyTorch's index arithmetic
(area_pixel_compute_source_index, nearest_idx — float32 for nearest, as PyTorch).
'area' is adaptive average pooling to the output size, as F.interpolate computes it (the
`interpolate` function calls adaptive_avg_pool1d/2d/3d, whose grad_fn the result gets).
The forward gathers along one dim at a time; the backward, its adjoint, adds each dim's
weighted gradients back with one `bincount` per dim (pad's `_add_along`, shape/pad.py). Both are linear, so interpolate and
interpolate_backward differentiate into each other.
"""
from __future__ import annotations

import math

import numpy as np

from ...backends.meta import MetaArray
from ...errors import ShapeError
from ...messages import require_floating
from ..registry import defop
from ..samples import SampleInput, grad_output_samples, make_arg
from ..shape.pad import _add_along
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

_MODES = {"nearest": "UpsampleNearest{}DBackward0", "nearest-exact": "UpsampleNearestExact{}DBackward0",
          "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
          "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0"}
_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}
_CUBIC_A = -0.75            # PyTorch's cubic convolution constant (get_cubic_upsample_coefficients)
# the modes F.interpolate computes as adaptive average pooling (`_area`), not with interpolate's kernel
_AREA = "area"
# the kernel whose dtype check refuses a mode's integer input, where it is not upsample_<mode>
_DTYPE_KERNEL = {"bicubic": "compute_indices_weights_cubic"}
_BACKWARD_NAMES = sorted({name.format(k) for name in _MODES.values() for k in (1, 2, 3)})


def _plan(shape, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias):
    """F.interpolate's checks, in its order; the output shape and the scale per dim (None: from the sizes)."""
    dims = len(shape) - 2
    if mode not in _MODES and mode != _AREA:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {len(shape)}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                  f"area | nearest-exact (got {mode})")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by agrad")
    if mode in ("nearest", "nearest-exact", _AREA) and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if dims < 1 or dims > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {len(shape)}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                  f"area | nearest-exact (got {mode})")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = list(shape[2:])
    if size is not None:
        size = list(size) * dims if len(size) == 1 else list(size)
        if len(size) != dims:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {spatial} and output size of {size}. Please provide input tensor "
                             f"in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        out, scales = size, [None] * dims
    elif scale_factor is not None:
        scales = [float(scale_factor)] * dims if not isinstance(scale_factor, (list, tuple)) else list(scale_factor)
        if len(scales) != dims:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {spatial} and scale_factor of shape {scales}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, "
                             f"...,sK) format.")
        out = [math.floor(float(n) * s) for n, s in zip(spatial, scales)]
        if recompute_scale_factor:
            scales = [None] * dims
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode in _LINEAR_DIMS and _LINEAR_DIMS[mode] != dims:
        raise NotImplementedError(f"Got {len(shape)}D input, but {mode} mode needs {_LINEAR_DIMS[mode] + 2}D input")
    if mode == "bicubic" and dims != 2:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {len(shape)}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                  f"area | nearest-exact (got {mode})")
    if min(out) <= 0 or min(spatial) <= 0:
        raise RuntimeError("Input and output sizes should be greater than 0, but got input (" +
                           ", ".join(map(str, spatial)) + ") output (" + ", ".join(map(str, out)) + ")")
    return tuple(shape[:2]) + tuple(out), scales


def _area_pixel_scale(n_in, n_out, scale, align_corners) -> float:
    """PyTorch's area_pixel_compute_scale: the step in the input between output positions."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _taps(n_in, n_out, scale, mode, align_corners):
    """Per output position: (i0, i1, lam) on the host; nearest modes have lam = 0."""
    dst = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        s = np.float32(1.0 / scale if scale else n_in / n_out)      # NOTE: PyTorch computes these in float
        if mode == "nearest" and n_out == n_in:
            src = dst
        elif mode == "nearest" and n_out == 2 * n_in:
            src = dst >> 1
        else:
            pos = dst.astype(np.float32) + (np.float32(0.5) if mode == "nearest-exact" else np.float32(0))
            src = np.minimum(np.floor(pos * s).astype(np.int64), n_in - 1)
        return src, src, np.zeros(n_out)
    s = _area_pixel_scale(n_in, n_out, scale, align_corners)
    real = s * dst if align_corners else np.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    lam = np.clip(real - i0, 0.0, 1.0)
    return i0, i0 + (i0 < n_in - 1), lam


def _cubic_taps(n_in, n_out, scale, align_corners):
    """Per output position: the 4 input positions it reads (clamped to the input) and their weights,
    PyTorch's bicubic: the source index without the clamp at 0 (area_pixel_compute_source_index with
    cubic=True), guard_index_and_lambda, and get_cubic_upsample_coefficients with A = -0.75."""
    dst = np.arange(n_out)
    s = _area_pixel_scale(n_in, n_out, scale, align_corners)
    real = s * dst if align_corners else s * (dst + 0.5) - 0.5
    i = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    t = np.clip(real - i, 0.0, 1.0)
    a = _CUBIC_A

    def near(x):        # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):         # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)
    taps = np.clip(i[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return taps, weights


def _cubic_dims(xp, shape, out_shape, scales, align_corners):
    for k, scale in enumerate(scales):
        axis = 2 + k
        taps, weights = _cubic_taps(shape[axis], out_shape[axis], scale, align_corners)
        yield axis, [(xp.asarray(taps[:, j]), weights[:, j]) for j in range(4)]


def _each_dim(xp, shape, out_shape, scales, mode, align_corners):
    for k, scale in enumerate(scales):
        axis = 2 + k
        i0, i1, lam = _taps(shape[axis], out_shape[axis], scale, mode, align_corners)
        yield axis, xp.asarray(i0), xp.asarray(i1), lam


def _weights(xp, lam, axis, ndim, dtype):
    return xp.asarray(lam.reshape((-1,) + (1,) * (ndim - 1 - axis))).astype(dtype)


def _check_dtype(mode, dtype):
    # NOTE: PyTorch's nearest modes also take uint8 (a pure gather), and bilinear does (_bilinear_uint8)
    if not (mode in ("nearest", "nearest-exact", "bilinear") and dtype == np.uint8):
        require_floating(_DTYPE_KERNEL.get(mode, f"upsample_{mode}"), dtype)


def _not_area(mode):
    if mode == _AREA:
        raise RuntimeError("interpolate: mode 'area' is adaptive average pooling; agrad.interpolate calls "
                           "adaptive_avg_pool1d/2d/3d for it, the op does not take it")


def _uint8_linear_taps(n_in, n_out, scale, align_corners):
    """One dimension of PyTorch's uint8 bilinear (its separable CPU kernel, UpSampleKernel's
    `_compute_index_ranges_weights` with support 1 and the AVX path's fixed point): per output position
    the input positions it reads (padded with weight 0 to one width), their int16 weights, and the
    weights' precision in bits."""
    s = _area_pixel_scale(n_in, n_out, scale, align_corners)
    first, weights = [], []
    for i in range(n_out):
        center = s * i + 0.5 if align_corners else s * (i + 0.5)
        lo = max(int(center - 0.5), 0)                      # int(center - support + 0.5)
        hi = min(int(center + 1.5), n_in)
        w = [max(0.0, 1.0 - abs(j + lo - center + 0.5)) for j in range(hi - lo)]
        total = sum(w)
        first.append(lo)
        weights.append([v / total for v in w] if total else w)
    width = max(len(w) for w in weights)
    largest = max(max(w) for w in weights if w)
    precision = 0
    while precision < 15 and int(0.5 + largest * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    taps = np.array([[min(lo + j, n_in - 1) for j in range(width)] for lo in first], dtype=np.int64)
    fixed = np.array([[int(0.5 + v * (1 << precision)) for v in w] + [0] * (width - len(w)) for w in weights],
                     dtype=np.int64)
    return taps, fixed, precision


def _bilinear_uint8(xp, input, out_shape, scales, align_corners):
    """PyTorch's uint8 bilinear, exactly: width first, then height, each pass in its fixed point
    (int16 weights, an int32 sum started at half a unit, shifted back and clamped to uint8)."""
    x = input
    for k in reversed(range(len(scales))):
        axis = 2 + k
        taps, fixed, precision = _uint8_linear_taps(input.shape[axis], out_shape[axis], scales[k], align_corners)
        acc = 1 << (precision - 1)
        for j in range(taps.shape[1]):
            w = xp.asarray(fixed[:, j].reshape((-1,) + (1,) * (x.ndim - 1 - axis)))
            acc = acc + xp.take(x, xp.asarray(taps[:, j]), axis=axis).astype(np.int64) * w
        x = xp.clip(acc >> precision, 0, 255).astype(np.uint8)
    return x


def _interpolate_meta(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias):
    _not_area(mode)
    out, _ = _plan(input.shape, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
    _check_dtype(mode, input.dtype)
    return MetaArray(out, input.dtype)


def _interpolate_kernel(xp, input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias):
    out_shape, scales = _plan(input.shape, size, scale_factor, mode, align_corners, recompute_scale_factor,
                              antialias)
    _check_dtype(mode, input.dtype)
    _not_area(mode)
    if mode == "bilinear" and input.dtype == np.uint8:
        return _bilinear_uint8(xp, input, out_shape, scales, align_corners)
    x = input
    if mode == "bicubic":
        for axis, taps in _cubic_dims(xp, input.shape, out_shape, scales, align_corners):
            x = sum(xp.take(x, i, axis=axis) * _weights(xp, w, axis, x.ndim, x.dtype) for i, w in taps)
        return x.astype(input.dtype, copy=False)
    for axis, i0, i1, lam in _each_dim(xp, input.shape, out_shape, scales, mode, align_corners):
        if mode in _LINEAR_DIMS:
            w = _weights(xp, lam, axis, x.ndim, x.dtype)
            x = xp.take(x, i0, axis=axis) * (1 - w) + xp.take(x, i1, axis=axis) * w
        else:
            x = xp.take(x, i0, axis=axis)
    return x.astype(input.dtype, copy=False)


def _backward_meta(grad_output, input_size, size, scale_factor, mode, align_corners, recompute_scale_factor):
    _not_area(mode)
    out, _ = _plan(tuple(input_size), size, scale_factor, mode, align_corners, recompute_scale_factor, False)
    if tuple(grad_output.shape) != tuple(out):
        raise ShapeError(f"Expected grad_output to have the same shape as output; output.size({len(out)}) = "
                           f"{list(out)} but got grad_output.size = {list(grad_output.shape)}")
    return MetaArray(tuple(input_size), grad_output.dtype)


def _backward_kernel(xp, grad_output, input_size, size, scale_factor, mode, align_corners, recompute_scale_factor):
    _backward_meta(grad_output, input_size, size, scale_factor, mode, align_corners, recompute_scale_factor)
    out_shape, scales = _plan(tuple(input_size), size, scale_factor, mode, align_corners, recompute_scale_factor,
                              False)
    _not_area(mode)
    g = grad_output
    if mode == "bicubic":
        for axis, taps in _cubic_dims(xp, tuple(input_size), out_shape, scales, align_corners):
            n = input_size[axis]
            g = sum(_add_along(xp, g * _weights(xp, w, axis, g.ndim, g.dtype), axis, i, n) for i, w in taps)
        return g
    for axis, i0, i1, lam in _each_dim(xp, tuple(input_size), out_shape, scales, mode, align_corners):
        n = input_size[axis]
        if mode in _LINEAR_DIMS:
            w = _weights(xp, lam, axis, g.ndim, g.dtype)
            g = _add_along(xp, g * (1 - w), axis, i0, n) + _add_along(xp, g * w, axis, i1, n)
        else:
            g = _add_along(xp, g, axis, i0, n)
    return g


def _kernel_samples(op):
    def arg(shape, k):
        return make_arg(shape, key=(op, k))
    return [SampleInput("nearest x2 (1,2,3,3)", arg((1, 2, 3, 3), 0), scale_factor=2.0),
            SampleInput("nearest size (2,1,4,5)->(3,7)", arg((2, 1, 4, 5), 1), [3, 7]),
            SampleInput("nearest 1-D scale 1.7", arg((2, 2, 5), 2), scale_factor=1.7),
            SampleInput("nearest 3-D down", arg((1, 1, 4, 3, 4), 3), [2, 3, 3]),
            SampleInput("nearest-exact scale 1.5", arg((1, 2, 4, 3), 4), scale_factor=[1.5, 2.5], mode="nearest-exact"),
            SampleInput("bilinear x2", arg((1, 2, 3, 4), 5), scale_factor=2.0, mode="bilinear"),
            SampleInput("bilinear align_corners size", arg((2, 1, 4, 3), 6), [5, 7], mode="bilinear",
                        align_corners=True),
            SampleInput("bilinear down, scale 0.6", arg((1, 1, 5, 6), 7), scale_factor=[0.6, 0.75], mode="bilinear"),
            SampleInput("bilinear recompute_scale_factor", arg((1, 1, 3, 5), 8), scale_factor=1.7, mode="bilinear",
                        recompute_scale_factor=True),
            SampleInput("linear align_corners", arg((2, 2, 4), 9), 7, mode="linear", align_corners=True),
            SampleInput("trilinear", arg((1, 1, 2, 3, 2), 10), scale_factor=1.5, mode="trilinear"),
            SampleInput("bicubic x2", arg((1, 2, 3, 4), 11), scale_factor=2.0, mode="bicubic"),
            SampleInput("bicubic align_corners size", arg((2, 1, 4, 3), 12), [6, 7], mode="bicubic",
                        align_corners=True),
            SampleInput("bicubic down, scale 0.6", arg((1, 1, 5, 6), 13), scale_factor=[0.6, 0.75], mode="bicubic"),
            SampleInput("bicubic to 1x1, align_corners", arg((1, 1, 3, 4), 14), [1, 1], mode="bicubic",
                        align_corners=True)]


def _samples(op):
    """interpolate's: the interpolating modes (the op's kernel) and 'area' (adaptive average pooling)."""
    def arg(shape, k):
        return make_arg(shape, key=(op, "area", k))
    return _kernel_samples(op) + [
        SampleInput("area 1-D size", arg((2, 2, 7), 0), 3, mode="area"),
        SampleInput("area 2-D scale 0.5", arg((1, 2, 6, 5), 1), scale_factor=0.5, mode="area"),
        SampleInput("area 2-D up", arg((1, 1, 3, 4), 2), [5, 6], mode="area"),
        SampleInput("area 3-D", arg((1, 1, 4, 3, 5), 3), [2, 3, 2], mode="area")]


def _name(input, size, scale_factor, mode, *rest):
    return _BACKWARD_NAMES.index(_MODES[mode].format(input.ndim - 2))


interpolate_backward = defop(
    "interpolate_backward(Tensor grad_output, int[] input_size, int[]? size=None, float[]? scale_factor=None, "
    "str mode=\"nearest\", bool? align_corners=None, bool? recompute_scale_factor=None) -> Tensor",
    kernel=_backward_kernel, meta=_backward_meta,
    grads={"grad_output": lambda grad, size, scale_factor, mode, align_corners, recompute_scale_factor:
               interpolate(grad, size, scale_factor, mode, align_corners, recompute_scale_factor)},
    backward_name=[n.replace("Backward0", "BackwardBackward0") for n in _BACKWARD_NAMES],
    overload=lambda grad_output, input_size, size, scale_factor, mode, *rest:
        _BACKWARD_NAMES.index(_MODES[mode].format(len(input_size) - 2)),
    samples=lambda op: grad_output_samples(op, interpolate, _kernel_samples(op),
                                           lambda s: ((list(s.args[0].shape),) + s.args[1:], s.kwargs)),
    torch="lambda g, input_size, *args, **kwargs: (lambda x: torch.autograd.grad(torch.nn.functional.interpolate("
          "x, *args, **kwargs), x, g, create_graph=True)[0])(torch.zeros(input_size, dtype=g.dtype, "
          "requires_grad=True))",
    doc="The gradient of interpolate: each output's gradient, weighted, added back to the inputs it read.")

interpolate = defop(
    "interpolate(Tensor input, int[]? size=None, float[]? scale_factor=None, str mode=\"nearest\", "
    "bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor",
    kernel=_interpolate_kernel, meta=_interpolate_meta,
    grads={"input": lambda grad, input_shape, size, scale_factor, mode, align_corners, recompute_scale_factor:
               interpolate_backward(grad, input_shape, size, scale_factor, mode, align_corners,
                                    recompute_scale_factor)},
    backward_name=_BACKWARD_NAMES, overload=_name, samples=_samples, torch="torch.nn.functional.interpolate",
    doc="Resizes the spatial dims of (N, C, *) input to `size` or by `scale_factor`: 'nearest', 'nearest-exact', "
        "'linear' (3-D), 'bilinear' or 'bicubic' (4-D), 'trilinear' (5-D), with PyTorch's align_corners and "
        "recompute_scale_factor, or 'area' (adaptive average pooling to the output size); antialias is not "
        "supported.")


# ---- mode="area": adaptive average pooling, as F.interpolate computes it ----------------------------

_interpolate_op = interpolate


def _area(input, size, scale_factor, recompute_scale_factor, antialias):
    # NOTE: F.interpolate computes the output size from scale_factor for 'area' (recompute_scale_factor)
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by agrad")
    size = (size,) if isinstance(size, int) else size
    out, _ = _plan(tuple(input.shape), size, scale_factor, _AREA, None, recompute_scale_factor, False)
    spatial = list(out[2:])
    dims = input.ndim - 2
    pool = adaptive_avg_pool1d if dims == 1 else adaptive_avg_pool2d if dims == 2 else adaptive_avg_pool3d
    return pool(input, spatial)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """interpolate(Tensor input, int[]? size=None, float[]? scale_factor=None, str mode="nearest",
    bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor

    As torch.nn.functional.interpolate: 'area' is adaptive average pooling to the output size
    (adaptive_avg_pool1d/2d/3d, their grad_fn), every other mode the interpolate op."""
    if mode == _AREA:
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
        return _area(input, size, scale_factor, recompute_scale_factor, antialias)
    return _interpolate_op(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)


# NOTE: PyTorch decides 'area' in Python (F.interpolate calls adaptive_avg_pool*d); so does agrad's function
interpolate.op = _interpolate_op.op
interpolate.__module__ = "agrad"
_interpolate_op.op.function = interpolate
