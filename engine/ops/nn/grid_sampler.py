"""grid_sampler_2d (ATen's GridSampler: torch.nn.functional.grid_sample of 4-D input), its backward
and double backward; grid_sample, its torch.nn.functional form (mode and padding_mode by name);
affine_grid (ATen's AffineGridGenerator, as a composite).

Every output pixel reads a few taps of its input plane — 4 (bilinear), 1 (nearest) or 16
(bicubic) — each with a weight that depends on the grid only: output = sum_t w_t(grid) *
input[tap_t(grid)]. `_taps` makes that table once per call: each tap's flat position in the
(H, W) plane (H*W, a zero, where it falls outside: padding_mode="zeros"), its weight and the
weight's first and second derivatives w.r.t. the grid's x and y, with PyTorch's coordinate maps
(grid_sampler_compute_source_index: unnormalize, then clip or reflect for border and reflection;
bicubic maps each tap instead), whose derivatives (0 where clipped, -1 where reflected) are part
of those of the weights. Everything is then two operations on the table: `_sample` (a weighted
gather: the forward, and the grid's gradient before its sum over channels) and `_splat` (its
adjoint, a scatter-add with one bincount: the input's gradient). The backward is linear in
grad_output and input, so its own gradient (PyTorch's GridSampler2DBackwardBackward0) is made
of the same two operations with the derivatives' table; a third order is not implemented.
"""
from __future__ import annotations

import math

import numpy as np

from ...backends.meta import MetaArray
from ...creation import _spaced, tensor
from ...errors import DtypeError, ShapeError
from ...messages import require_floating, scalar_type_name, size_repr, sizes
from ...user_warnings import warn_user
from .._common import weighted_bincount
from ..linalg import matmul
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.view import reshape, transpose

_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_A = -0.75                      # the cubic convolution's alpha (PyTorch's, OpenCV's)


# ---- the checks ----------------------------------------------------------------------------------

def _check_common(input, grid):
    """PyTorch's check_grid_sampler_common (after the dtypes, which its kernel checks)."""
    if input.ndim == 0 or grid.ndim == 0 or input.shape[0] != grid.shape[0]:
        raise ShapeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                         f"sizes {sizes(input.shape)} and grid with sizes {sizes(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise ShapeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                         f"grid with sizes {sizes(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise ShapeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                             f"sizes {sizes(input.shape)} with dimension {i} being empty")


def _check(input, grid, interpolation_mode, padding_mode):
    """PyTorch's checks (check_grid_sampler_common, check_grid_sampler_2d), then the kernel's dtypes."""
    _check_common(input, grid)
    if input.ndim != 4 or grid.ndim != 4:
        raise ShapeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                         f"input with sizes {sizes(input.shape)} and grid with sizes {sizes(grid.shape)}")
    if interpolation_mode not in (_BILINEAR, _NEAREST, _BICUBIC):
        raise RuntimeError(f"grid_sampler_2d: interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), "
                           f"but got {interpolation_mode}")
    if padding_mode not in (_ZEROS, _BORDER, _REFLECTION):
        raise RuntimeError(f"grid_sampler_2d: padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), but "
                           f"got {padding_mode}")
    require_floating("grid_sampler_2d_cpu_kernel_impl", input.dtype)
    if grid.dtype != input.dtype:
        raise DtypeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                         f"{scalar_type_name(grid.dtype)}")


def _check_same(name, value, expected):
    if tuple(value.shape) != tuple(expected):
        raise ShapeError(f"grid_sampler_2d: expected {name} of size {sizes(expected)}, but got {sizes(value.shape)}")


# ---- the coordinate maps (GridSampler.h), each with its derivative ------------------------------

def _unnormalize(xp, coord, size, align_corners, fused=True):
    """[-1, 1] -> pixel coordinates, and d(it)/d(coord): a number."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2), (size - 1) / 2
    if not fused:
        return (coord + 1) * (size / 2) - 0.5, size / 2
    # NOTE: PyTorch's CPU kernel computes (coord + 1) * (size / 2) - 0.5 as one fused multiply-subtract,
    # one rounding, and that rounding decides whether a grid point on a border (affine_grid's pixel
    # centers) is inside it: so does this, as ((coord + 1) * size - 1) / 2 rounded once. (Its double
    # backward, made of separate ops, rounds twice: `fused=False`.)
    a = coord + 1
    if a.dtype != np.float64:           # float32's product is exact in float64
        return ((a.astype(np.float64) * size - 1) / 2).astype(a.dtype), size / 2
    p = a * size
    split = a * 134217729.0             # Veltkamp: a = hi + lo, hi of 26 bits, so hi * size is exact
    hi = split - (split - a)
    err = (hi * size - p) + (a - hi) * size     # the product's rounding error, exactly (Dekker)
    s = p - 1
    back = s - p
    err = err + ((p - (s - back)) + (-1 - back))         # and the subtraction's (Knuth's TwoSum)
    return xp.where(xp.isfinite(err), s + err, s) / 2, size / 2    # (an infinite coordinate stays one)


def _clip(xp, coord, size):
    """coord clipped to [0, size - 1] (NaN to 0, as PyTorch's); its derivative, 0 on and beyond the borders."""
    inside = (coord > 0) & (coord < size - 1)
    return xp.minimum(xp.fmax(coord, 0), size - 1), inside.astype(coord.dtype)


def _reflect(xp, coord, twice_low, twice_high):
    """coord reflected into [low, high] until it falls inside; its derivative, +1 or -1."""
    if twice_low == twice_high:
        return xp.zeros_like(coord), xp.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = coord - low
    sign = xp.where(shifted < 0, -1.0, 1.0).astype(coord.dtype)
    shifted = xp.abs(shifted)
    extra = xp.fmod(shifted, span)
    even = xp.floor(shifted / span) % 2 == 0
    return xp.where(even, extra + low, span - extra + low), xp.where(even, sign, -sign)


def _padded(xp, coord, size, padding_mode, align_corners):
    """PyTorch's compute_coordinates: coord moved inside the plane by border or reflection padding;
    and its derivative (1 with zeros padding)."""
    if padding_mode == _BORDER:
        return _clip(xp, coord, size)
    if padding_mode == _REFLECTION:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord, sign = _reflect(xp, coord, *twice)
        coord, inside = _clip(xp, coord, size)
        return coord, sign * inside
    return coord, xp.ones_like(coord)


def _cubic(t):
    """The 4 cubic convolution coefficients of fraction t, their first and second derivatives in t."""
    def near(x):            # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1, (3 * (_A + 2) * x - 2 * (_A + 3)) * x, \
            6 * (_A + 2) * x - 2 * (_A + 3)

    def far(x):             # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A, (3 * _A * x - 10 * _A) * x + 8 * _A, \
            6 * _A * x - 10 * _A
    c0, c1, c2, c3 = far(t + 1), near(t), near(1 - t), far(2 - t)
    # c2 and c3 are functions of (1 - t) and (2 - t): their odd derivatives change sign
    return ([c0[0], c1[0], c2[0], c3[0]], [c0[1], c1[1], -c2[1], -c3[1]], [c0[2], c1[2], c2[2], c3[2]])


# ---- the tap table -----------------------------------------------------------------------------

def _taps(xp, input_shape, grid, interpolation_mode, padding_mode, align_corners, fused=True):
    with np.errstate(invalid="ignore", over="ignore"):      # NaN and inf coordinates: PyTorch warns of none
        return _tap_table(xp, input_shape, grid, interpolation_mode, padding_mode, align_corners, fused)


def _tap_table(xp, input_shape, grid, interpolation_mode, padding_mode, align_corners, fused):
    """(positions (N, T, P) int64 in the (H, W) plane, H*W where a tap reads zero;
    {"w", "x", "y", "xx", "xy", "yy"}: each (N, T, P), the taps' weights and their derivatives
    w.r.t. the grid's x and y). `fused`: the coordinates as PyTorch's kernels round them, else
    as its double backward does."""
    n, _, h, w = input_shape
    g = grid.reshape(n, grid.shape[1] * grid.shape[2], 2)
    gx, gy = g[..., 0], g[..., 1]
    rows, cols, table = [], [], {k: [] for k in ("w", "x", "y", "xx", "xy", "yy")}
    zero = xp.zeros_like(gx)

    def tap(row, col, weight, dx, dy, dxx=zero, dxy=zero, dyy=zero):
        rows.append(row)
        cols.append(col)
        for k, v in zip(("w", "x", "y", "xx", "xy", "yy"), (weight, dx, dy, dxx, dxy, dyy)):
            table[k].append(v)

    if interpolation_mode == _BICUBIC:
        ix, mx = _unnormalize(xp, gx, w, align_corners, fused)
        iy, my = _unnormalize(xp, gy, h, align_corners, fused)
        x0, y0 = xp.floor(ix), xp.floor(iy)
        (cx, dcx, ddcx), (cy, dcy, ddcy) = _cubic(ix - x0), _cubic(iy - y0)
        cols_at = [_padded(xp, x0 + (i - 1), w, padding_mode, align_corners)[0] for i in range(4)]
        for j in range(4):
            row = _padded(xp, y0 + (j - 1), h, padding_mode, align_corners)[0]
            for i in range(4):
                tap(row, cols_at[i], cx[i] * cy[j], dcx[i] * cy[j] * mx, cx[i] * dcy[j] * my,
                    ddcx[i] * cy[j] * (mx * mx), dcx[i] * dcy[j] * (mx * my), cx[i] * ddcy[j] * (my * my))
    else:
        ix, mx = _unnormalize(xp, gx, w, align_corners, fused)
        iy, my = _unnormalize(xp, gy, h, align_corners, fused)
        ix, dix = _padded(xp, ix, w, padding_mode, align_corners)
        iy, diy = _padded(xp, iy, h, padding_mode, align_corners)
        mx, my = dix * mx, diy * my                          # d(pixel coordinate) / d(grid)
        if interpolation_mode == _NEAREST:
            tap(xp.rint(iy), xp.rint(ix), xp.ones_like(ix), zero, zero)     # NOTE: rint rounds half to even
        else:
            x0, y0 = xp.floor(ix), xp.floor(iy)
            we, ns = ix - x0, iy - y0                       # the distances to the west and north taps
            ea, so = 1 - we, 1 - ns
            mxy = mx * my
            tap(y0, x0, so * ea, -so * mx, -ea * my, dxy=mxy)           # nw
            tap(y0, x0 + 1, so * we, so * mx, -we * my, dxy=-mxy)       # ne
            tap(y0 + 1, x0, ns * ea, -ns * mx, ea * my, dxy=-mxy)       # sw
            tap(y0 + 1, x0 + 1, ns * we, ns * mx, we * my, dxy=mxy)     # se
    row, col = xp.stack(rows, 1), xp.stack(cols, 1)
    inside = (row >= 0) & (row < h) & (col >= 0) & (col < w)
    flat = xp.where(inside, row, 0).astype(np.int64) * w + xp.where(inside, col, 0).astype(np.int64)
    positions = xp.where(inside, flat, h * w)
    return positions, {k: xp.stack(v, 1).astype(grid.dtype, copy=False) for k, v in table.items()}


def _picked(xp, values, positions):
    """(N, C, T, P): values (N, C, H, W) read at each tap (zero at H*W)."""
    n, c, h, w = values.shape
    flat = values.reshape(n, c, h * w)
    flat = xp.concatenate([flat, xp.zeros((n, c, 1), dtype=values.dtype)], axis=2)
    t, p = positions.shape[1:]
    return xp.take_along_axis(flat, positions.reshape(n, 1, t * p), axis=2).reshape(n, c, t, p)


def _sample(xp, values, positions, weights):
    """(N, C, P): sum over taps of weights (N, T, P) times the values read."""
    return (_picked(xp, values, positions) * weights[:, None]).sum(axis=2)


def _splat(xp, amounts, positions, weights, plane_shape, dtype):
    """_sample's adjoint: amounts (N, C, P) times the taps' weights added at the taps' positions,
    (N, C, H, W)."""
    n, c = amounts.shape[:2]
    size = plane_shape[0] * plane_shape[1] + 1
    planes = (xp.arange(n * c).reshape(n, c, 1, 1) * size)
    where = (planes + positions[:, None]).reshape(-1)
    added = (amounts[:, :, None, :] * weights[:, None]).reshape(-1)
    out = weighted_bincount(xp, where, added, n * c * size).reshape(n, c, size)[:, :, :-1]
    return out.astype(dtype, copy=False).reshape((n, c) + tuple(plane_shape))


def _channel_sum(xp, grad_output, values, positions):
    """(N, T, P): sum over channels of grad_output (N, C, P) times the values (N, C, H, W) read at each tap."""
    return (grad_output[:, :, None, :] * _picked(xp, values, positions)).sum(axis=1)


# ---- the kernels -------------------------------------------------------------------------------

def _forward_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, padding_mode)
    return MetaArray(tuple(input.shape[:2]) + tuple(grid.shape[1:3]), input.dtype)


def _forward_kernel(xp, input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, padding_mode)
    positions, table = _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners)
    out = _sample(xp, input, positions, table["w"])
    return out.reshape(tuple(input.shape[:2]) + tuple(grid.shape[1:3])).astype(input.dtype, copy=False)


def _backward_meta(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    out = _forward_meta(input, grid, interpolation_mode, padding_mode, align_corners)
    _check_same("grad_output", grad_output, out.shape)
    return MetaArray(input.shape, input.dtype), MetaArray(grid.shape, grid.dtype)


def _backward_kernel(xp, grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    _backward_meta(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask)
    positions, table = _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners)
    n, c = input.shape[:2]
    g = grad_output.reshape(n, c, grid.shape[1] * grid.shape[2])
    grad_input = _splat(xp, g, positions, table["w"], input.shape[2:], input.dtype) if output_mask[0] else \
        xp.zeros(input.shape, dtype=input.dtype)
    if not output_mask[1]:
        return grad_input, xp.zeros(grid.shape, dtype=grid.dtype)
    s = _channel_sum(xp, g, input, positions)
    grad_grid = xp.stack([(table["x"] * s).sum(axis=1), (table["y"] * s).sum(axis=1)], -1)
    return grad_input, grad_grid.reshape(grid.shape).astype(grid.dtype, copy=False)


def _double_meta(grad_grad_input, grad_grad_grid, grad_output, input, grid, interpolation_mode, padding_mode,
                 align_corners, output_mask):
    out = _forward_meta(input, grid, interpolation_mode, padding_mode, align_corners)
    _check_same("grad_output", grad_output, out.shape)
    _check_same("grad_grad_input", grad_grad_input, input.shape)
    _check_same("grad_grad_grid", grad_grad_grid, grid.shape)
    return (MetaArray(grad_output.shape, grad_output.dtype), MetaArray(input.shape, input.dtype),
            MetaArray(grid.shape, grid.dtype))


def _double_kernel(xp, grad_grad_input, grad_grad_grid, grad_output, input, grid, interpolation_mode, padding_mode,
                   align_corners, output_mask):
    """The gradients of grid_sampler_2d_backward's (grad_input, grad_grid) w.r.t. grad_output, input and
    grid, given theirs (grad_grad_input, grad_grad_grid): with u = grad_grad_grid's (x, y) per pixel,
      d grad_output = sample(grad_grad_input, w) + sample(input, u . dw)
      d input       = splat(grad_output, u . dw)
      d grid_k      = sum_c grad_output * (sample(grad_grad_input, dw_k) + sample(input, u . d(dw_k)))."""
    _double_meta(grad_grad_input, grad_grad_grid, grad_output, input, grid, interpolation_mode, padding_mode,
                 align_corners, output_mask)
    # NOTE: PyTorch's terms in grad_grad_input call its kernels (grid_sampler_2d and its backward), those
    # in grad_grad_grid are made of separate ops: two tables, which differ only where rounding puts a grid
    # point on one side of a border or a pixel in one and on the other side in the other
    at, t = _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners)
    at2, t2 = (at, t) if align_corners else \
        _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners, fused=False)
    n, c = input.shape[:2]
    g = grad_output.reshape(n, c, grid.shape[1] * grid.shape[2])
    u = grad_grad_grid.reshape(n, 1, grid.shape[1] * grid.shape[2], 2)
    ux, uy = u[..., 0], u[..., 1]                       # (N, 1, P): broadcast over the taps
    along = ux * t2["x"] + uy * t2["y"]                 # the weights' derivative along u
    outs = []
    if output_mask[0]:
        d_out = _sample(xp, grad_grad_input, at, t["w"]) + _sample(xp, input, at2, along)
        outs.append(d_out.reshape(grad_output.shape).astype(grad_output.dtype, copy=False))
    else:
        outs.append(xp.zeros(grad_output.shape, dtype=grad_output.dtype))
    outs.append(_splat(xp, g, at2, along, input.shape[2:], input.dtype) if output_mask[1] else
                xp.zeros(input.shape, dtype=input.dtype))
    if output_mask[2]:
        s_gg, s_in = _channel_sum(xp, g, grad_grad_input, at), _channel_sum(xp, g, input, at2)
        dx = (t["x"] * s_gg).sum(axis=1) + ((ux * t2["xx"] + uy * t2["xy"]) * s_in).sum(axis=1)
        dy = (t["y"] * s_gg).sum(axis=1) + ((ux * t2["xy"] + uy * t2["yy"]) * s_in).sum(axis=1)
        outs.append(xp.stack([dx, dy], -1).reshape(grid.shape).astype(grid.dtype, copy=False))
    else:
        outs.append(xp.zeros(grid.shape, dtype=grid.dtype))
    return tuple(outs)


# ---- samples -----------------------------------------------------------------------------------

_MODES = [(_BILINEAR, _ZEROS, False), (_BILINEAR, _BORDER, True), (_BILINEAR, _REFLECTION, False),
          (_BILINEAR, _REFLECTION, True), (_NEAREST, _ZEROS, False), (_NEAREST, _REFLECTION, True),
          (_BICUBIC, _ZEROS, True), (_BICUBIC, _BORDER, False), (_BICUBIC, _REFLECTION, False),
          (_BICUBIC, _REFLECTION, True)]
_MODE_NAMES = ("bilinear", "nearest", "bicubic")
_PADDING_NAMES = ("zeros", "border", "reflection")


def _grid(shape, key):
    """A grid in [-1.6, 1.6], so that every padding mode is at work (random: no coordinate falls on a
    kink of the weights or a jump of nearest's rounding but with probability ~1e-6)."""
    return make_arg(shape, key=key, low=-1.6, high=1.6)


def _forward_samples(op):
    out = []
    for k, (mode, padding, align) in enumerate(_MODES):
        shape = ((2, 3, 4, 5), (2, 3, 4, 2)) if k % 2 == 0 else ((1, 2, 5, 3), (1, 2, 6, 2))
        x = make_arg(shape[0], key=(op, k, "x"))
        g = _grid(shape[1], (op, k, "grid"))
        out.append(SampleInput(f"{_MODE_NAMES[mode]} {_PADDING_NAMES[padding]} align_corners={align}", x, g,
                               mode, padding, align))
    out.append(SampleInput("(1,2,1,1) input", make_arg((1, 2, 1, 1), key=(op, "one")),
                           _grid((1, 2, 2, 2), (op, "one", "grid")), _BILINEAR, _REFLECTION, True))
    return out


def _backward_samples(op):
    out = []
    for s in _forward_samples(op):
        x, g = s.args[0], s.args[1]
        go = make_arg(tuple(x.shape[:2]) + tuple(g.shape[1:3]), key=(op, s.name, "g"))
        out.append(SampleInput(s.name, go, x, g, *s.args[2:], [True, True]))
    return out


def _double_samples(op):
    out = []
    for s in _backward_samples(op)[::3]:
        go, x, g = (a.detach() for a in s.args[:3])
        ggi = make_arg(tuple(x.shape), key=(op, s.name, "ggi"), requires_grad=False)
        ggg = make_arg(tuple(g.shape), key=(op, s.name, "ggg"), requires_grad=False)
        out.append(SampleInput(s.name, ggi, ggg, go, x, g, *s.args[3:6], [True, True, True]))
    return out


def _double_backward_not_implemented(grads):
    raise NotImplementedError("the derivative for 'grid_sampler_2d_double_backward' is not implemented: agrad "
                              "differentiates grid_sampler_2d twice, not three times")


_MODE_ARGS = "int interpolation_mode, int padding_mode, bool align_corners"

grid_sampler_2d_double_backward = defop(
    f"grid_sampler_2d_double_backward(Tensor grad_grad_input, Tensor grad_grad_grid, Tensor grad_output, "
    f"Tensor input, Tensor grid, {_MODE_ARGS}, bool[] output_mask) -> (Tensor, Tensor, Tensor)",
    kernel=_double_kernel, meta=_double_meta,
    grads=dict.fromkeys(("grad_grad_input", "grad_grad_grid", "grad_output", "input", "grid"),
                        _double_backward_not_implemented),
    samples=_double_samples, gradgrad=False,
    torch="lambda ggi, ggg, g, x, grid, m, p, a, output_mask: (lambda g, x, grid: torch.autograd.grad("
          "torch.ops.aten.grid_sampler_2d_backward(g, x, grid, m, p, a, [True, True]), (g, x, grid), (ggi, ggg)))("
          "g.detach().requires_grad_(), x.detach().requires_grad_(), grid.detach().requires_grad_())",
    doc="The gradients of grid_sampler_2d_backward's (grad_input, grad_grid) w.r.t. grad_output, input and grid "
        "(PyTorch's GridSampler2DBackwardBackward0); an output output_mask leaves out is zeros.")

grid_sampler_2d_backward = defop(
    f"grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, {_MODE_ARGS}, bool[] output_mask) "
    f"-> (Tensor, Tensor)",
    kernel=_backward_kernel, meta=_backward_meta,
    grads={"grad_output": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [True, False, False])[0],
           "input": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [False, True, False])[1],
           "grid": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [False, False, True])[2]},
    backward_name="GridSampler2DBackwardBackward0", samples=_backward_samples, gradgrad=False,
    torch="torch.ops.aten.grid_sampler_2d_backward",
    doc="The gradients of grid_sampler_2d: (grad_input, grad_grid), each exactly as PyTorch's kernel computes "
        "it; an output output_mask leaves out is zeros (PyTorch's is undefined).")

grid_sampler_2d = defop(
    f"grid_sampler_2d(Tensor input, Tensor grid, {_MODE_ARGS}) -> Tensor",
    kernel=_forward_kernel, meta=_forward_meta,
    grads={"input": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                        [True, False])[0],
           "grid": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                        [False, True])[1]},
    backward_name="GridSampler2DBackward0", samples=_forward_samples, torch="torch.grid_sampler_2d",
    doc="(N, C, H, W) input sampled at the (N, H_out, W_out, 2) grid's (x, y) locations in [-1, 1]: "
        "interpolation_mode 0 bilinear, 1 nearest, 2 bicubic; padding_mode 0 zeros, 1 border, 2 reflection.")


# ---- grid_sample and affine_grid: torch.nn.functional's --------------------------------------------

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _grid_sample(input, grid, mode, padding_mode, align_corners):
    if mode not in _MODE_NAMES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDING_NAMES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warn_user(_ALIGN_WARNING)
        align_corners = False
    if input.ndim != 4:         # PyTorch's grid_sampler_3d, with its checks
        _check_common(input, grid)
        if input.ndim != 5 or grid.ndim != 5:
            raise ShapeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                             f"input with sizes {sizes(input.shape)} and grid with sizes {sizes(grid.shape)}")
        if mode == "bicubic":
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("grid_sample of 5-D (volumetric) input: agrad has grid_sampler_2d, not "
                                  "grid_sampler_3d")
    return grid_sampler_2d(input, grid, _MODE_NAMES.index(mode), _PADDING_NAMES.index(padding_mode), align_corners)


def _grid_sample_samples(op):
    out = []
    for k, (mode, padding, align) in enumerate(_MODES[::3]):
        x = make_arg((2, 3, 4, 5), key=(op, k, "x"))
        g = _grid((2, 3, 2, 2), (op, k, "grid"))
        out.append(SampleInput(f"{_MODE_NAMES[mode]} {_PADDING_NAMES[padding]} {align}", x, g, _MODE_NAMES[mode],
                               _PADDING_NAMES[padding], align))
    out.append(SampleInput("defaults align_corners=False", make_arg((1, 2, 3, 3), key=(op, "d")),
                           _grid((1, 2, 2, 2), (op, "d", "grid")), align_corners=False))
    return out


grid_sample = defop(
    "grid_sample(Tensor input, Tensor grid, str mode=\"bilinear\", str padding_mode=\"zeros\", "
    "bool? align_corners=None) -> Tensor",
    composite=_grid_sample, samples=_grid_sample_samples, torch="torch.nn.functional.grid_sample",
    doc="torch.nn.functional.grid_sample of 4-D input: grid_sampler_2d with mode ('bilinear', 'nearest', "
        "'bicubic') and padding_mode ('zeros', 'border', 'reflection') by name; align_corners=None warns and "
        "means False.")


def _base_grid(size, align_corners, dtype):
    """(prod(spatial), dims + 1): every output location's normalized coordinates (x first) and a 1
    (PyTorch's make_base_grid_4D/5D, with its linspace_from_neg_one)."""
    axes = []
    for n in reversed(size[2:]):            # x (the last dim) first
        if n <= 1:
            values = np.zeros(1)
        else:
            values, _ = _spaced(-1, 1, n, np.dtype(dtype))
            if not align_corners:
                values = values * (n - 1) / n
        axes.append(values.astype(dtype))
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]       # each (D, H, W) or (H, W)
    return np.stack([m.reshape(-1) for m in mesh] + [np.ones(math.prod(size[2:]), dtype)], -1).astype(dtype)


def _affine_grid(theta, size, align_corners):
    if align_corners is None:
        warn_user(_ALIGN_WARNING)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) in (4, 5):
        dims = len(size) - 2
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (dims, dims + 1):
            raise ValueError(f"Expected a batch of {dims}D affine matrices of shape Nx{dims}x{dims + 1} for size "
                             f"{size}. Got {size_repr(theta.shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(size[2:]) == 1:
        warn_user("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
              "This is not an intended use case of affine_grid. See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {dims + 1}] but "
                         f"got: [{theta.shape[0]}, {dims + 1}].")
    base = tensor(_base_grid(size, align_corners, theta.dtype.np), device=theta.device)
    # (N, prod(spatial), dims + 1) @ theta^T: PyTorch's base_grid.view(N, -1, dims + 1).bmm(theta.transpose(1, 2))
    return reshape(matmul(base, transpose(theta, 1, 2)), [size[0]] + size[2:] + [dims])


affine_grid = defop(
    "affine_grid(Tensor theta, int[] size, bool? align_corners=None) -> Tensor",
    composite=_affine_grid,
    samples=lambda op: [
        SampleInput("(2,2,3) -> (2,3,4,5)", make_arg((2, 2, 3), key=(op, 0)), [2, 3, 4, 5], False),
        SampleInput("align_corners (1,1,3,2)", make_arg((1, 2, 3), key=(op, 1)), [1, 1, 3, 2], True),
        SampleInput("3-D (2,3,4) -> (2,1,2,3,4)", make_arg((2, 3, 4), key=(op, 2)), [2, 1, 2, 3, 4], False)],
    torch="torch.nn.functional.affine_grid",
    doc="torch.nn.functional.affine_grid: the (N, H, W, 2) (or (N, D, H, W, 3)) grid of normalized "
        "coordinates, each location's [x, y, (z,) 1] times theta (N, 2, 3) (or (N, 3, 4)) transposed.")
