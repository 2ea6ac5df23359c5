"""im2col and col2im (ATen's Im2Col and Col2Im: torch.nn.functional's unfold and fold, which
agrad.nn.functional writes with PyTorch's argument handling).

im2col reads every sliding block of a (N, C, H, W) or (C, H, W) input into a column:
out[n, (c*kh + i)*kw + j, b*bw + a] = input[n, c, b*sh - ph + i*dh, a*sw - pw + j*dw], zero where
that falls in the padding. Both ops are built on one table, the flat (H*W) position each
(kernel tap, block) reads, padding pointing at a sentinel one past the plane, as the pools'
(pooling.py): im2col is one `take` through it, col2im (the adjoint: every block's column
summed back into the plane) one `bincount` over it. Each is linear and the other's adjoint,
so each one's gradient is the other (derivatives.yaml's formulas).
"""
from __future__ import annotations

import numpy as np

from ...backends.meta import MetaArray
from ...errors import DimensionError, DtypeNotImplementedError, ShapeError
from ...messages import scalar_type_name, sizes
from .._common import weighted_bincount
from ..registry import defop
from ..samples import SampleInput, make_arg


def _two(value, name):
    value = tuple(value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return value


def _params(kernel_size, dilation, padding, stride):
    return (_two(kernel_size, "kernel_size"), _two(dilation, "dilation"), _two(padding, "padding"),
            _two(stride, "stride"))


def _blocks(size, kernel, dilation, padding, stride):
    """The number of sliding blocks along one dim (div_rtn: Python's // rounds down as it does)."""
    return (size + 2 * padding - (dilation * (kernel - 1) + 1)) // stride + 1


def _check_dtype(name, dtype):
    if np.dtype(dtype).kind not in "fb":
        raise DtypeNotImplementedError(f'"{name}" not implemented for \'{scalar_type_name(dtype)}\'')


def _check_positive(kernel, dilation, padding, stride, order):
    checks = {"kernel": (min(kernel) > 0, "kernel size should be greater than zero, but got kernel_height: "
                                          f"{kernel[0]} kernel_width: {kernel[1]}"),
              "dilation": (min(dilation) > 0, "dilation should be greater than zero, but got dilation_height: "
                                              f"{dilation[0]} dilation_width: {dilation[1]}"),
              "padding": (min(padding) >= 0, f"padding should be non-negative, but got pad_height: {padding[0]} "
                                             f"pad_width: {padding[1]}"),
              "stride": (min(stride) > 0, "stride should be greater than zero, but got stride_height: "
                                          f"{stride[0]} stride_width: {stride[1]}")}
    for what in order:
        ok, message = checks[what]
        if not ok:
            raise RuntimeError(message)


def _im2col_geometry(self, kernel_size, dilation, padding, stride):
    """PyTorch's im2col_shape_check, in its order: ((H, W), (blocks_h, blocks_w), params)."""
    params = _params(kernel_size, dilation, padding, stride)
    kernel, dilation, padding, stride = params
    _check_positive(kernel, dilation, padding, stride, ("kernel", "dilation", "padding", "stride"))
    shape = tuple(self.shape)
    # NOTE: PyTorch reads sizes of the input before it checks its dims: these are its errors for 0, 1, 2 dims
    if len(shape) == 0:
        raise DimensionError("Dimension specified as 1 but tensor has no dimensions")
    if len(shape) < 3:
        raise DimensionError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], "
                             f"but got {-2 if len(shape) == 1 else 2})")
    if len(shape) not in (3, 4) or 0 in shape[-3 if len(shape) == 4 else 0:]:
        raise ShapeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                         f"dimensions for input, but got: {sizes(shape)}")
    size = shape[-2:]
    blocks = tuple(_blocks(*a) for a in zip(size, kernel, dilation, padding, stride))
    if min(blocks) < 1:
        raise ShapeError(f"Given input with spatial size ({size[0]}, {size[1]}), kernel_size=({kernel[0]}, "
                         f"{kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
                         f"{padding[1]}), calculated shape of the array of sliding blocks as ({blocks[0]}, "
                         f"{blocks[1]}), but its components must be at least one.")
    return size, blocks, params


def _col2im_geometry(self, output_size, kernel_size, dilation, padding, stride):
    """PyTorch's col2im_shape_check, in its order: ((H, W), (blocks_h, blocks_w), params)."""
    size = _two(output_size, "output_size")
    params = _params(kernel_size, dilation, padding, stride)
    kernel, dilation, padding, stride = params
    _check_positive(kernel, dilation, padding, stride, ("kernel", "stride", "dilation", "padding"))
    shape = tuple(self.shape)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise ShapeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                         f"dimensions for input, but got: {sizes(shape)}")
    planes, length = shape[-2:]
    if planes % (kernel[0] * kernel[1]):
        raise ShapeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                         f"got input.size(1)={planes} and kernel_size=({kernel[0]}, {kernel[1]}).")
    blocks = tuple(_blocks(*a) for a in zip(size, kernel, dilation, padding, stride))
    geometry = (f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kernel[0]}, {kernel[1]}), "
                f"dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
                f"stride=({stride[0]}, {stride[1]}), ")
    if length != blocks[0] * blocks[1]:
        raise ShapeError(f"{geometry}expected size of input's dimension 2 to match the calculated number of sliding "
                         f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)="
                         f"{length}.")
    if min(blocks) < 1:
        raise ShapeError(f"{geometry}calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), "
                         f"which is too small (non-positive)")
    if min(size) < 1:
        raise ShapeError(f"Expected output spatial size to be positive, but got: output_size=({size[0]}, "
                         f"{size[1]}).")
    return size, blocks, params


def _taps(size, blocks, params):
    """(kh*kw*blocks_h*blocks_w,) flat positions in the (H, W) plane read by each (tap, block), in
    im2col's row order; H*W (the sentinel) where the tap is in the padding."""
    (h, w), (bh, bw), ((kh, kw), (dh, dw), (ph, pw), (sh, sw)) = size, blocks, params
    rows = (np.arange(kh) * dh)[:, None] + np.arange(bh) * sh - ph          # (kh, bh)
    cols = (np.arange(kw) * dw)[:, None] + np.arange(bw) * sw - pw          # (kw, bw)
    inside = ((rows >= 0) & (rows < h))[:, None, :, None] & ((cols >= 0) & (cols < w))[None, :, None, :]
    flat = rows[:, None, :, None] * w + cols[None, :, None, :]
    return np.where(inside, flat, h * w).reshape(-1)


def _im2col_meta(self, kernel_size, dilation, padding, stride):
    size, (bh, bw), ((kh, kw), *_) = _im2col_geometry(self, kernel_size, dilation, padding, stride)
    _check_dtype("im2col_out_cpu", self.dtype)
    return MetaArray(tuple(self.shape[:-3]) + (self.shape[-3] * kh * kw, bh * bw), self.dtype)


def _im2col_kernel(xp, self, kernel_size, dilation, padding, stride):
    size, blocks, params = _im2col_geometry(self, kernel_size, dilation, padding, stride)
    _check_dtype("im2col_out_cpu", self.dtype)
    (kh, kw), lead, c = params[0], tuple(self.shape[:-3]), self.shape[-3]
    planes = self.reshape(lead + (c, size[0] * size[1]))
    padded = xp.concatenate([planes, xp.zeros(lead + (c, 1), dtype=self.dtype)], axis=-1)
    # one flat index array: what every library's indexing takes (dask's takes no n-d one)
    cols = xp.take(padded, xp.asarray(_taps(size, blocks, params)), axis=-1)
    # (split, then merge: dask reshapes one way at a time)
    cols = cols.reshape(lead + (c, kh * kw, blocks[0] * blocks[1]))
    return cols.reshape(lead + (c * kh * kw, blocks[0] * blocks[1]))


def _col2im_meta(self, output_size, kernel_size, dilation, padding, stride):
    size, _, ((kh, kw), *_) = _col2im_geometry(self, output_size, kernel_size, dilation, padding, stride)
    _check_dtype("col2im_out_cpu", self.dtype)
    return MetaArray(tuple(self.shape[:-2]) + (self.shape[-2] // (kh * kw),) + size, self.dtype)


def _col2im_kernel(xp, self, output_size, kernel_size, dilation, padding, stride):
    size, blocks, params = _col2im_geometry(self, output_size, kernel_size, dilation, padding, stride)
    _check_dtype("col2im_out_cpu", self.dtype)
    (kh, kw), lead = params[0], tuple(self.shape[:-2])
    c, plane = self.shape[-2] // (kh * kw), size[0] * size[1] + 1
    n = int(np.prod(lead + (c,)))
    taps = xp.asarray(_taps(size, blocks, params)).reshape(1, -1)
    positions = (xp.arange(n) * plane)[:, None] + taps
    sums = weighted_bincount(xp, positions.reshape(-1), self.reshape(-1).astype(np.float64),
                             n * plane)
    # (a bool fold is True where any column adds a True, as PyTorch's saturating sum)
    return sums.reshape(n, plane)[:, :-1].astype(self.dtype).reshape(lead + (c,) + size)


def _im2col_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,3,5,6) k2", arg((2, 3, 5, 6), 0), [2, 2], [1, 1], [0, 0], [1, 1]),
            SampleInput("k(2,3) d(2,1) p(1,2) s(2,3)", arg((1, 2, 6, 7), 1), [2, 3], [2, 1], [1, 2], [2, 3]),
            SampleInput("unbatched T k3 p1 s2", arg((2, 5, 4), 2, transposed=True), [3, 3], [1, 1], [1, 1], [2, 2]),
            SampleInput("single ints k2 s2", arg((1, 1, 4, 4), 3), 2, 1, 0, 2)]


def _col2im_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    # (input, output_size, kernel_size, dilation, padding, stride): overlapping blocks add up
    return [SampleInput("(2,12,20)->(5,6) k2", arg((2, 12, 20), 0), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]),
            SampleInput("k(2,3) d(2,1) p(1,2) s(2,3)", arg((1, 12, 9), 1), [6, 7], [2, 3], [2, 1], [1, 2], [2, 3]),
            SampleInput("unbatched T k3 p1 s2", arg((18, 6), 2, transposed=True), [5, 4], [3, 3], [1, 1], [1, 1],
                        [2, 2]),
            SampleInput("single ints k2 s1 p1", arg((1, 4, 36), 3), [5, 5], 2, 1, 1, 1)]


im2col = defop(
    "im2col(Tensor self, int[] kernel_size, int[] dilation, int[] padding, int[] stride) -> Tensor",
    kernel=_im2col_kernel, meta=_im2col_meta,
    grads={"self": lambda grad, self_shape, kernel_size, dilation, padding, stride:
           col2im(grad, list(self_shape[-2:]), kernel_size, dilation, padding, stride)},
    backward_name="Im2ColBackward0", samples=_im2col_samples,
    torch="torch._C._nn.im2col",
    doc="torch.nn.functional.unfold: every sliding block of a (N, C, H, W) or (C, H, W) input as a column, "
        "(N, C*kh*kw, L) with L the number of blocks; padding reads as zero.")

col2im = defop(
    "col2im(Tensor self, int[] output_size, int[] kernel_size, int[] dilation, int[] padding, int[] stride) "
    "-> Tensor",
    kernel=_col2im_kernel, meta=_col2im_meta,
    grads={"self": lambda grad, kernel_size, dilation, padding, stride:
           im2col(grad, kernel_size, dilation, padding, stride)},
    backward_name="Col2ImBackward0", samples=_col2im_samples,
    torch="torch._C._nn.col2im",
    doc="torch.nn.functional.fold, im2col's adjoint: each column of (N, C*kh*kw, L) or (C*kh*kw, L) input "
        "added back into an output_size plane at the positions its block covers.")

