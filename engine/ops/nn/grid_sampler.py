"""grid_sampler_2d and grid_sampler_3d (ATen's GridSampler: torch.nn.functional.grid_sample of 4-D and
5-D input), their backward and double backward; grid_sampler (ATen's, dispatching on the input's
rank) and grid_sample, its torch.nn.functional form (mode and padding_mode by name);
affine_grid_generator (ATen's AffineGridGenerator) and its backward, and affine_grid over it.

Every output location reads a few taps of its input plane (or volume) — 2^d (bilinear, trilinear),
1 (nearest) or 16 (bicubic, 2-d only) — each with a weight that depends on the grid only: output =
sum_t w_t(grid) * input[tap_t(grid)]. `_taps` makes that table once per call: each tap's flat
position in the (H, W) plane or (D, H, W) volume (its size, a zero, where it falls outside:
padding_mode="zeros"), its weight and the weight's first and second derivatives w.r.t. the grid's
coordinates (x, y and z), with PyTorch's coordinate maps (grid_sampler_compute_source_index:
unnormalize, then clip or reflect for border and reflection; bicubic maps each tap instead), whose
derivatives (0 where clipped, -1 where reflected) are part of those of the weights. Everything is
then two operations on the table: `_sample` (a weighted gather: the forward, and the grid's gradient
before its sum over channels) and `_splat` (its adjoint, a scatter-add with one bincount: the
input's gradient). The backward is linear in grad_output and input, so its own gradient (PyTorch's
GridSampler2DBackwardBackward0, GridSampler3DBackwardBackward0) is made of the same two operations
with the derivatives' table; a third order is not implemented.
"""
from __future__ import annotations

import functools
import itertools
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
_AXES = "xyz"                   # the grid's coordinates, in its last dimension's order
# the CPU kernels' names in PyTorch's dtype message
_KERNEL_NAMES = {2: "grid_sampler_2d_cpu_kernel_impl", 3: "grid_sampler3d_cpu"}


def _derivative_keys(dims):
    """The tap table's keys: the weight, its derivative along each axis, then each pair of axes
    ("w", "x", "y", "xx", "xy", "yy" in 2-d)."""
    axes = _AXES[:dims]
    return ("w",) + tuple(axes) + tuple(a + b for i, b in enumerate(axes) for a in axes[:i + 1])


def _pair(k, l):
    return _AXES[min(k, l)] + _AXES[max(k, l)]


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


def _check_rank(input, grid, interpolation_mode, dims):
    """PyTorch's check_grid_sampler_2d / check_grid_sampler_3d."""
    if input.ndim != dims + 2 or grid.ndim != dims + 2:
        raise ShapeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number of dimensions, but "
                         f"got input with sizes {sizes(input.shape)} and grid with sizes {sizes(grid.shape)}")
    if dims == 3 and interpolation_mode == _BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _check(input, grid, interpolation_mode, padding_mode, dims):
    """PyTorch's checks (check_grid_sampler_common, then the 2-d or 3-d one), then the kernel's dtypes."""
    _check_common(input, grid)
    _check_rank(input, grid, interpolation_mode, dims)
    modes = (_BILINEAR, _NEAREST, _BICUBIC) if dims == 2 else (_BILINEAR, _NEAREST)
    if interpolation_mode not in modes:
        raise RuntimeError(f"grid_sampler_{dims}d: interpolation_mode must be 0 ({'bi' if dims == 2 else 'tri'}"
                           f"linear), 1 (nearest){' or 2 (bicubic)' if dims == 2 else ''}, but got "
                           f"{interpolation_mode}")
    if padding_mode not in (_ZEROS, _BORDER, _REFLECTION):
        raise RuntimeError(f"grid_sampler_{dims}d: padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), "
                           f"but got {padding_mode}")
    require_floating(_KERNEL_NAMES[dims], input.dtype)
    if grid.dtype != input.dtype:
        raise DtypeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                         f"{scalar_type_name(grid.dtype)}")


def _check_same(dims, name, value, expected):
    if tuple(value.shape) != tuple(expected):
        raise ShapeError(f"grid_sampler_{dims}d: expected {name} of size {sizes(expected)}, but got "
                         f"{sizes(value.shape)}")
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
    """(positions (N, T, P) int64 in the flattened (H, W) plane or (D, H, W) volume, its size where a
    tap reads zero; {key: (N, T, P)} for each of _derivative_keys: the taps' weights and their
    derivatives w.r.t. the grid's coordinates). `fused`: the coordinates as PyTorch's kernels round
    them, else as its double backward does."""
    n, spatial = input_shape[0], tuple(input_shape[2:])
    dims = len(spatial)
    extents = spatial[::-1]                                 # x's (W) first, as the grid's coordinates
    g = grid.reshape(n, math.prod(grid.shape[1:-1]), dims)
    keys = _derivative_keys(dims)
    at, table = [], {k: [] for k in keys}
    zero = xp.zeros_like(g[..., 0])

    def tap(coords, values):
        """One tap: its integer coordinates (x first) and {key: value} (a missing key is zero)."""
        at.append(coords)
        for k in keys:
            table[k].append(values.get(k, zero))

    if interpolation_mode == _BICUBIC:
        (ix, mx), (iy, my) = (_unnormalize(xp, g[..., k], extents[k], align_corners, fused) for k in range(2))
        x0, y0 = xp.floor(ix), xp.floor(iy)
        (cx, dcx, ddcx), (cy, dcy, ddcy) = _cubic(ix - x0), _cubic(iy - y0)
        cols_at = [_padded(xp, x0 + (i - 1), extents[0], padding_mode, align_corners)[0] for i in range(4)]
        for j in range(4):
            row = _padded(xp, y0 + (j - 1), extents[1], padding_mode, align_corners)[0]
            for i in range(4):
                tap((cols_at[i], row), {"w": cx[i] * cy[j], "x": dcx[i] * cy[j] * mx, "y": cx[i] * dcy[j] * my,
                                        "xx": ddcx[i] * cy[j] * (mx * mx), "xy": dcx[i] * dcy[j] * (mx * my),
                                        "yy": cx[i] * ddcy[j] * (my * my)})
    else:
        coords, slopes = [], []                             # pixel coordinates, d(them) / d(grid)
        for k in range(dims):
            c, m = _unnormalize(xp, g[..., k], extents[k], align_corners, fused)
            c, dc = _padded(xp, c, extents[k], padding_mode, align_corners)
            coords.append(c)
            slopes.append(dc * m)
        if interpolation_mode == _NEAREST:
            tap([xp.rint(c) for c in coords], {"w": xp.ones_like(zero)})       # NOTE: rint rounds half to even
        else:
            low = [xp.floor(c) for c in coords]
            far = [c - c0 for c, c0 in zip(coords, low)]    # the distance to the low tap: the high tap's weight
            near = [1 - f for f in far]
            # the corners in PyTorch's order (nw, ne, sw, se; then t*, b* in 3-d): x varies fastest
            for bits in itertools.product((0, 1), repeat=dims):
                bits = bits[::-1]
                factor = [far[k] if b else near[k] for k, b in enumerate(bits)]
                slope = [slopes[k] if b else -slopes[k] for k, b in enumerate(bits)]

                def product(skip):
                    out = None
                    for k in range(dims):
                        if k not in skip:
                            out = factor[k] if out is None else out * factor[k]
                    return out
                values = {"w": product(())}
                for k in range(dims):
                    rest = product((k,))
                    values[_AXES[k]] = slope[k] * rest
                    for l in range(k):
                        rest2 = product((k, l))
                        mixed = slope[l] * slope[k]
                        values[_pair(k, l)] = mixed if rest2 is None else mixed * rest2
                tap([c0 + b for c0, b in zip(low, bits)], values)
    stacked = [xp.stack([a[k] for a in at], 1) for k in range(dims)]
    inside = None
    flat = 0
    for k in reversed(range(dims)):                         # z, y, x: row-major over (D,) H, W
        ok = (stacked[k] >= 0) & (stacked[k] < extents[k])
        inside = ok if inside is None else inside & ok
        flat = flat * extents[k] + xp.where(ok, stacked[k], 0).astype(np.int64)
    positions = xp.where(inside, flat, math.prod(spatial))
    return positions, {k: xp.stack(v, 1).astype(grid.dtype, copy=False) for k, v in table.items()}


def _picked(xp, values, positions):
    """(N, C, T, P): values (N, C, *spatial) read at each tap (zero at the spatial size)."""
    n, c = values.shape[:2]
    flat = values.reshape(n, c, math.prod(values.shape[2:]))
    flat = xp.concatenate([flat, xp.zeros((n, c, 1), dtype=values.dtype)], axis=2)
    t, p = positions.shape[1:]
    return xp.take_along_axis(flat, positions.reshape(n, 1, t * p), axis=2).reshape(n, c, t, p)


def _sample(xp, values, positions, weights):
    """(N, C, P): sum over taps of weights (N, T, P) times the values read."""
    return (_picked(xp, values, positions) * weights[:, None]).sum(axis=2)


def _splat(xp, amounts, positions, weights, spatial, dtype):
    """_sample's adjoint: amounts (N, C, P) times the taps' weights added at the taps' positions,
    (N, C, *spatial)."""
    n, c = amounts.shape[:2]
    size = math.prod(spatial) + 1
    planes = (xp.arange(n * c).reshape(n, c, 1, 1) * size)
    where = (planes + positions[:, None]).reshape(-1)
    added = (amounts[:, :, None, :] * weights[:, None]).reshape(-1)
    out = weighted_bincount(xp, where, added, n * c * size).reshape(n, c, size)[:, :, :-1]
    return out.astype(dtype, copy=False).reshape((n, c) + tuple(spatial))


def _channel_sum(xp, grad_output, values, positions):
    """(N, T, P): sum over channels of grad_output (N, C, P) times the values (N, C, *spatial) read at each tap."""
    return (grad_output[:, :, None, :] * _picked(xp, values, positions)).sum(axis=1)


# ---- the kernels (of grid_sampler_2d and _3d: `dims`) ------------------------------------------

def _out_shape(input, grid):
    return tuple(input.shape[:2]) + tuple(grid.shape[1:-1])


def _forward_meta(dims, input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, padding_mode, dims)
    return MetaArray(_out_shape(input, grid), input.dtype)


def _forward_kernel(dims, xp, input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, padding_mode, dims)
    positions, table = _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners)
    out = _sample(xp, input, positions, table["w"])
    return out.reshape(_out_shape(input, grid)).astype(input.dtype, copy=False)


def _backward_meta(dims, grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    out = _forward_meta(dims, input, grid, interpolation_mode, padding_mode, align_corners)
    _check_same(dims, "grad_output", grad_output, out.shape)
    return MetaArray(input.shape, input.dtype), MetaArray(grid.shape, grid.dtype)


def _backward_kernel(dims, xp, grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                     output_mask):
    _backward_meta(dims, grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask)
    positions, table = _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners)
    n, c = input.shape[:2]
    g = grad_output.reshape(n, c, positions.shape[2])
    grad_input = _splat(xp, g, positions, table["w"], input.shape[2:], input.dtype) if output_mask[0] else \
        xp.zeros(input.shape, dtype=input.dtype)
    if not output_mask[1]:
        return grad_input, xp.zeros(grid.shape, dtype=grid.dtype)
    s = _channel_sum(xp, g, input, positions)
    grad_grid = xp.stack([(table[a] * s).sum(axis=1) for a in _AXES[:dims]], -1)
    return grad_input, grad_grid.reshape(grid.shape).astype(grid.dtype, copy=False)


def _double_meta(dims, grad_grad_input, grad_grad_grid, grad_output, input, grid, interpolation_mode,
                 padding_mode, align_corners, output_mask):
    out = _forward_meta(dims, input, grid, interpolation_mode, padding_mode, align_corners)
    _check_same(dims, "grad_output", grad_output, out.shape)
    _check_same(dims, "grad_grad_input", grad_grad_input, input.shape)
    _check_same(dims, "grad_grad_grid", grad_grad_grid, grid.shape)
    return (MetaArray(grad_output.shape, grad_output.dtype), MetaArray(input.shape, input.dtype),
            MetaArray(grid.shape, grid.dtype))


def _double_kernel(dims, xp, grad_grad_input, grad_grad_grid, grad_output, input, grid, interpolation_mode,
                   padding_mode, align_corners, output_mask):
    """The gradients of grid_sampler_{2,3}d_backward's (grad_input, grad_grid) w.r.t. grad_output, input
    and grid, given theirs (grad_grad_input, grad_grad_grid): with u = grad_grad_grid's coordinates per
    location,
      d grad_output = sample(grad_grad_input, w) + sample(input, u . dw)
      d input       = splat(grad_output, u . dw)
      d grid_k      = sum_c grad_output * (sample(grad_grad_input, dw_k) + sample(input, u . d(dw_k)))."""
    _double_meta(dims, grad_grad_input, grad_grad_grid, grad_output, input, grid, interpolation_mode,
                 padding_mode, align_corners, output_mask)
    # NOTE: PyTorch's terms in grad_grad_input call its kernels (grid_sampler_2d and its backward), those
    # in grad_grad_grid are made of separate ops: two tables, which differ only where rounding puts a grid
    # point on one side of a border or a pixel in one and on the other side in the other
    at, t = _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners)
    at2, t2 = (at, t) if align_corners else \
        _taps(xp, input.shape, grid, interpolation_mode, padding_mode, align_corners, fused=False)
    n, c = input.shape[:2]
    p = at.shape[2]
    g = grad_output.reshape(n, c, p)
    u = grad_grad_grid.reshape(n, 1, p, dims)
    us = [u[..., k] for k in range(dims)]                  # each (N, 1, P): broadcast over the taps
    along = sum(us[k] * t2[_AXES[k]] for k in range(dims))     # the weights' derivative along u
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
        d = [(t[_AXES[k]] * s_gg).sum(axis=1)
             + (sum(us[l] * t2[_pair(k, l)] for l in range(dims)) * s_in).sum(axis=1) for k in range(dims)]
        outs.append(xp.stack(d, -1).reshape(grid.shape).astype(grid.dtype, copy=False))
    else:
        outs.append(xp.zeros(grid.shape, dtype=grid.dtype))
    return tuple(outs)
# ---- samples -----------------------------------------------------------------------------------

_MODES = [(_BILINEAR, _ZEROS, False), (_BILINEAR, _BORDER, True), (_BILINEAR, _REFLECTION, False),
          (_BILINEAR, _REFLECTION, True), (_NEAREST, _ZEROS, False), (_NEAREST, _REFLECTION, True),
          (_BICUBIC, _ZEROS, True), (_BICUBIC, _BORDER, False), (_BICUBIC, _REFLECTION, False),
          (_BICUBIC, _REFLECTION, True)]
# (every third one is trilinear: the double backward's samples, as nearest's has no gradient to take)
_MODES_3D = [(_BILINEAR, _ZEROS, False), (_NEAREST, _ZEROS, True), (_BILINEAR, _BORDER, True),
             (_BILINEAR, _REFLECTION, False), (_NEAREST, _BORDER, False), (_NEAREST, _REFLECTION, False),
             (_BILINEAR, _REFLECTION, True)]
_MODE_NAMES = ("bilinear", "nearest", "bicubic")
_PADDING_NAMES = ("zeros", "border", "reflection")
# (input, grid) shapes of the samples, alternately
_SHAPES = {2: (((2, 3, 4, 5), (2, 3, 4, 2)), ((1, 2, 5, 3), (1, 2, 6, 2))),
           3: (((2, 2, 3, 4, 3), (2, 2, 3, 2, 3)), ((1, 2, 2, 3, 4), (1, 3, 2, 2, 3)))}


def _grid(shape, key):
    """A grid in [-1.6, 1.6], so that every padding mode is at work (random: no coordinate falls on a
    kink of the weights or a jump of nearest's rounding but with probability ~1e-6)."""
    return make_arg(shape, key=key, low=-1.6, high=1.6)


def _forward_samples(dims):
    def samples(op):
        out = []
        for k, (mode, padding, align) in enumerate(_MODES if dims == 2 else _MODES_3D):
            shape = _SHAPES[dims][k % 2]
            x = make_arg(shape[0], key=(op, k, "x"))
            g = _grid(shape[1], (op, k, "grid"))
            out.append(SampleInput(f"{_MODE_NAMES[mode]} {_PADDING_NAMES[padding]} align_corners={align}", x, g,
                                   mode, padding, align))
        ones = (1, 2) + (1,) * dims
        out.append(SampleInput(f"({','.join(map(str, ones))}) input", make_arg(ones, key=(op, "one")),
                               _grid((1,) + (2,) * dims + (dims,), (op, "one", "grid")), _BILINEAR, _REFLECTION,
                               True))
        return out
    return samples


def _backward_samples(dims):
    def samples(op):
        out = []
        for s in _forward_samples(dims)(op):
            x, g = s.args[0], s.args[1]
            go = make_arg(_out_shape(x, g), key=(op, s.name, "g"))
            out.append(SampleInput(s.name, go, x, g, *s.args[2:], [True, True]))
        return out
    return samples


def _double_samples(dims):
    def samples(op):
        out = []
        for s in _backward_samples(dims)(op)[::3]:
            go, x, g = (a.detach() for a in s.args[:3])
            ggi = make_arg(tuple(x.shape), key=(op, s.name, "ggi"), requires_grad=False)
            ggg = make_arg(tuple(g.shape), key=(op, s.name, "ggg"), requires_grad=False)
            out.append(SampleInput(s.name, ggi, ggg, go, x, g, *s.args[3:6], [True, True, True]))
        return out
    return samples


_MODE_ARGS = "int interpolation_mode, int padding_mode, bool align_corners"


# grid_sampler_2d and _3d, their backward and double backward: the kernels above with `dims` bound

def _not_twice(dims):
    """The double backward's `grads`: a third derivative is not implemented."""
    def not_implemented(grads):
        raise NotImplementedError(f"the derivative for 'grid_sampler_{dims}d_double_backward' is not implemented: "
                                  f"agrad differentiates grid_sampler_{dims}d twice, not three times")
    return dict.fromkeys(("grad_grad_input", "grad_grad_grid", "grad_output", "input", "grid"), not_implemented)


def _double_torch(dims):
    return (f"lambda ggi, ggg, g, x, grid, m, p, a, output_mask: (lambda g, x, grid: torch.autograd.grad("
            f"torch.ops.aten.grid_sampler_{dims}d_backward(g, x, grid, m, p, a, [True, True]), (g, x, grid), "
            f"(ggi, ggg)))(g.detach().requires_grad_(), x.detach().requires_grad_(), grid.detach().requires_grad_())")


def _double_doc(dims):
    return (f"The gradients of grid_sampler_{dims}d_backward's (grad_input, grad_grid) w.r.t. grad_output, input "
            f"and grid (PyTorch's GridSampler{dims}DBackwardBackward0); an output output_mask leaves out is zeros.")


def _backward_doc(dims):
    return (f"The gradients of grid_sampler_{dims}d: (grad_input, grad_grid), each as PyTorch's kernel computes it; "
            f"an output output_mask leaves out is zeros (PyTorch's is undefined).")


_DOUBLE_SCHEMA = ("_double_backward(Tensor grad_grad_input, Tensor grad_grad_grid, Tensor grad_output, Tensor input, "
                  f"Tensor grid, {_MODE_ARGS}, bool[] output_mask) -> (Tensor, Tensor, Tensor)")
_BACKWARD_SCHEMA = f"_backward(Tensor grad_output, Tensor input, Tensor grid, {_MODE_ARGS}, bool[] output_mask) " \
                   f"-> (Tensor, Tensor)"

grid_sampler_2d_double_backward = defop(
    "grid_sampler_2d" + _DOUBLE_SCHEMA,
    kernel=functools.partial(_double_kernel, 2), meta=functools.partial(_double_meta, 2), grads=_not_twice(2),
    samples=_double_samples(2), gradgrad=False, torch=_double_torch(2), doc=_double_doc(2))

grid_sampler_3d_double_backward = defop(
    "grid_sampler_3d" + _DOUBLE_SCHEMA,
    kernel=functools.partial(_double_kernel, 3), meta=functools.partial(_double_meta, 3), grads=_not_twice(3),
    samples=_double_samples(3), gradgrad=False, torch=_double_torch(3), doc=_double_doc(3))

grid_sampler_2d_backward = defop(
    "grid_sampler_2d" + _BACKWARD_SCHEMA,
    kernel=functools.partial(_backward_kernel, 2), meta=functools.partial(_backward_meta, 2),
    grads={"grad_output": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [True, False, False])[0],
           "input": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [False, True, False])[1],
           "grid": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [False, False, True])[2]},
    backward_name="GridSampler2DBackwardBackward0", samples=_backward_samples(2), gradgrad=False,
    torch="torch.ops.aten.grid_sampler_2d_backward", doc=_backward_doc(2))

grid_sampler_3d_backward = defop(
    "grid_sampler_3d" + _BACKWARD_SCHEMA,
    kernel=functools.partial(_backward_kernel, 3), meta=functools.partial(_backward_meta, 3),
    grads={"grad_output": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_3d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [True, False, False])[0],
           "input": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_3d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [False, True, False])[1],
           "grid": lambda grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_3d_double_backward(grads[0], grads[1], grad_output, input, grid, interpolation_mode,
                                               padding_mode, align_corners, [False, False, True])[2]},
    backward_name="GridSampler3DBackwardBackward0", samples=_backward_samples(3), gradgrad=False,
    torch="torch.ops.aten.grid_sampler_3d_backward", doc=_backward_doc(3))

grid_sampler_2d = defop(
    f"grid_sampler_2d(Tensor input, Tensor grid, {_MODE_ARGS}) -> Tensor",
    kernel=functools.partial(_forward_kernel, 2), meta=functools.partial(_forward_meta, 2),
    grads={"input": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                        [True, False])[0],
           "grid": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_2d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                        [False, True])[1]},
    backward_name="GridSampler2DBackward0", samples=_forward_samples(2), torch="torch.grid_sampler_2d",
    doc="(N, C, H, W) input sampled at the (N, H_out, W_out, 2) grid's (x, y) locations in [-1, 1]: "
        "interpolation_mode 0 bilinear, 1 nearest, 2 bicubic; padding_mode 0 zeros, 1 border, 2 reflection.")

grid_sampler_3d = defop(
    f"grid_sampler_3d(Tensor input, Tensor grid, {_MODE_ARGS}) -> Tensor",
    kernel=functools.partial(_forward_kernel, 3), meta=functools.partial(_forward_meta, 3),
    grads={"input": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_3d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                        [True, False])[0],
           "grid": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
               grid_sampler_3d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                        [False, True])[1]},
    backward_name="GridSampler3DBackward0", samples=_forward_samples(3), torch="torch.grid_sampler_3d",
    doc="(N, C, D, H, W) input sampled at the (N, D_out, H_out, W_out, 3) grid's (x, y, z) locations in [-1, 1]: "
        "interpolation_mode 0 trilinear, 1 nearest; padding_mode 0 zeros, 1 border, 2 reflection.")


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    # ATen's grid_sampler: 4-D input is grid_sampler_2d's, any other grid_sampler_3d's (whose checks refuse it)
    op = grid_sampler_2d if input.ndim == 4 else grid_sampler_3d
    return op(input, grid, interpolation_mode, padding_mode, align_corners)


grid_sampler = defop(
    f"grid_sampler(Tensor input, Tensor grid, {_MODE_ARGS}) -> Tensor",
    composite=_grid_sampler,
    samples=lambda op: [s for d in (2, 3) for s in _forward_samples(d)(op)[::4]],
    torch="torch.grid_sampler",
    doc="torch.grid_sampler: grid_sampler_2d of 4-D input, grid_sampler_3d of 5-D input.")


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
    return grid_sampler(input, grid, _MODE_NAMES.index(mode), _PADDING_NAMES.index(padding_mode), align_corners)


def _grid_sample_samples(op):
    out = []
    for k, (mode, padding, align) in enumerate(_MODES[::3]):
        x = make_arg((2, 3, 4, 5), key=(op, k, "x"))
        g = _grid((2, 3, 2, 2), (op, k, "grid"))
        out.append(SampleInput(f"{_MODE_NAMES[mode]} {_PADDING_NAMES[padding]} {align}", x, g, _MODE_NAMES[mode],
                               _PADDING_NAMES[padding], align))
    out.append(SampleInput("defaults align_corners=False", make_arg((1, 2, 3, 3), key=(op, "d")),
                           _grid((1, 2, 2, 2), (op, "d", "grid")), align_corners=False))
    for k, (mode, padding, align) in enumerate(_MODES_3D[2::3]):
        x = make_arg((1, 2, 3, 2, 4), key=(op, k, "x3"))
        g = _grid((1, 2, 2, 3, 3), (op, k, "grid3"))
        out.append(SampleInput(f"5-D {_MODE_NAMES[mode]} {_PADDING_NAMES[padding]} {align}", x, g,
                               _MODE_NAMES[mode], _PADDING_NAMES[padding], align))
    return out


grid_sample = defop(
    "grid_sample(Tensor input, Tensor grid, str mode=\"bilinear\", str padding_mode=\"zeros\", "
    "bool? align_corners=None) -> Tensor",
    composite=_grid_sample, samples=_grid_sample_samples, torch="torch.nn.functional.grid_sample",
    doc="torch.nn.functional.grid_sample: grid_sampler with mode ('bilinear' (trilinear on 5-D input), "
        "'nearest', 'bicubic' (4-D only)) and padding_mode ('zeros', 'border', 'reflection') by name; "
        "align_corners=None warns and means False.")


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


def _check_generator(theta, size):
    """ATen's affine_grid_generator's check, then those of its bmm of the base grid and theta^T."""
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    if theta.ndim != 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(theta.ndim, 1)}, "
                         f"{max(theta.ndim, 1) - 1}], but got 2)")
    dims = len(size) - 2
    if tuple(theta.shape[:2]) != (size[0], dims) or theta.shape[2] != dims + 1:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {dims + 1}] "
                         f"but got: [{theta.shape[0]}, {theta.shape[2]}].")
    if np.dtype(theta.dtype).kind != "f":
        raise DtypeError(f"affine_grid_generator: expected a floating-point theta, but got "
                         f"{scalar_type_name(theta.dtype)}")


def _generator_meta(theta, size, align_corners):
    _check_generator(theta, size)
    return MetaArray((size[0], *size[2:], len(size) - 2), theta.dtype)


def _generator_kernel(xp, theta, size, align_corners):
    _check_generator(theta, size)
    base = xp.asarray(_base_grid(size, align_corners, theta.dtype))
    # (N, prod(spatial), dims + 1) @ theta^T: ATen's base_grid.view(N, -1, dims + 1).bmm(theta.transpose(1, 2))
    return xp.matmul(base, xp.swapaxes(theta, 1, 2)).reshape(size[0], *size[2:], len(size) - 2)


def _generator_backward(grad, size, align_corners):
    # ATen's affine_grid_generator_4D/5D_backward: base_grid^T bmm grad_grid, transposed
    dims = len(size) - 2
    base = tensor(_base_grid(list(size), align_corners, grad.dtype.np), device=grad.device)
    return transpose(matmul(transpose(base, 0, 1), reshape(grad, [size[0], -1, dims])), 1, 2)


affine_grid_generator_backward = defop(
    "affine_grid_generator_backward(Tensor grad, int[] size, bool align_corners) -> Tensor",
    composite=_generator_backward,
    samples=lambda op: [
        SampleInput("(2,4,5,2) grid", make_arg((2, 4, 5, 2), key=(op, 0)), [2, 3, 4, 5], False),
        SampleInput("(1,2,3,4,3) grid align_corners", make_arg((1, 2, 3, 4, 3), key=(op, 1)), [1, 1, 2, 3, 4],
                    True)],
    torch="torch.ops.aten.affine_grid_generator_backward",
    doc="affine_grid_generator's gradient w.r.t. theta: the base grid's transpose times grad, transposed.")

affine_grid_generator = defop(
    "affine_grid_generator(Tensor theta, int[] size, bool align_corners) -> Tensor",
    kernel=_generator_kernel, meta=_generator_meta,
    grads={"theta": lambda grad, size, align_corners: affine_grid_generator_backward(grad, size, align_corners)},
    backward_name="AffineGridGeneratorBackward0",
    samples=lambda op: [
        SampleInput("(2,2,3) -> (2,3,4,5)", make_arg((2, 2, 3), key=(op, 0)), [2, 3, 4, 5], False),
        SampleInput("align_corners (1,2,3) -> (1,1,3,1)", make_arg((1, 2, 3), key=(op, 1)), [1, 1, 3, 1], True),
        SampleInput("(2,3,4) -> (2,1,2,3,4)", make_arg((2, 3, 4), key=(op, 2)), [2, 1, 2, 3, 4], False)],
    torch="torch.affine_grid_generator",
    doc="ATen's affine_grid_generator: the (N, H, W, 2) (or (N, D, H, W, 3)) grid of normalized coordinates, "
        "each location's [x, y, (z,) 1] times theta (N, 2, 3) (or (N, 3, 4)) transposed.")


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
    return affine_grid_generator(theta, size, align_corners)


affine_grid = defop(
    "affine_grid(Tensor theta, int[] size, bool? align_corners=None) -> Tensor",
    composite=_affine_grid,
    samples=lambda op: [
        SampleInput("(2,2,3) -> (2,3,4,5)", make_arg((2, 2, 3), key=(op, 0)), [2, 3, 4, 5], False),
        SampleInput("align_corners (1,1,3,2)", make_arg((1, 2, 3), key=(op, 1)), [1, 1, 3, 2], True),
        SampleInput("3-D (2,3,4) -> (2,1,2,3,4)", make_arg((2, 3, 4), key=(op, 2)), [2, 1, 2, 3, 4], False)],
    torch="torch.nn.functional.affine_grid",
    doc="torch.nn.functional.affine_grid: affine_grid_generator after PyTorch's checks of theta and size "
        "(align_corners=None warns and means False).")
