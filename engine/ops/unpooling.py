"""max_unpool2d (PyTorch's F.max_unpool2d): max_pool2d's partial inverse.

Each input value is written at its flat index in a zero (H_out, W_out) plane, with one
fancy assignment over all planes; the gradient reads grad back at the same indices
(a `gather`, PyTorch's max_pool_double_backward), whose own gradient is scatter_add,
so double backward needs nothing more.
"""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from ..errors import ShapeError
from ..messages import require_floating, scalar_type_name, sizes
from .indexing_advanced import gather
from .pooling import max_pool2d_with_indices
from .registry import defop
from .samples import SampleInput, make_arg
from .shape import reshape


def _two(value, name):
    value = (value,) if isinstance(value, int) else tuple(value)
    if len(value) not in (1, 2):
        raise RuntimeError(f"max_unpool2d: {name} must either be a single int, or a tuple of two ints")
    return value * 2 if len(value) == 1 else value


def _unpool_size(self, indices, kernel_size, stride, padding, output_size):
    """The (H_out, W_out) plane, as torch.nn.functional._unpool_output_size, after PyTorch's checks."""
    if indices.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {scalar_type_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(self.shape):
        raise ShapeError(f"Expected shape of indices to be same as that of the input tensor ({sizes(self.shape)}) "
                         f"but got indices tensor with shape: {sizes(indices.shape)}")
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise ShapeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                         f"{self.ndim} dimensions.")
    require_floating("max_unpool2d", self.dtype)
    kernel = _two(kernel_size, "kernel_size")
    stride = kernel if stride is None or len(tuple(stride)) == 0 else _two(stride, "stride")
    padding = _two(padding, "padding")
    default = tuple((self.shape[-2 + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(2))
    if output_size is None:
        return default
    output_size = tuple(output_size)
    if len(output_size) == self.ndim:
        output_size = output_size[-2:]
    if len(output_size) != 2:
        raise ValueError(f"output_size should be a sequence containing 2 or {self.ndim} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(2):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return output_size


def _unpool_meta(self, indices, kernel_size, stride=None, padding=0, output_size=None):
    return MetaArray(tuple(self.shape[:-2]) + _unpool_size(self, indices, kernel_size, stride, padding,
                                                           output_size), self.dtype)


def _unpool_kernel(xp, self, indices, kernel_size, stride, padding, output_size):
    oh, ow = _unpool_size(self, indices, kernel_size, stride, padding, output_size)
    planes = int(np.prod(self.shape[:-2]))
    flat = indices.reshape(planes, -1)
    bad = (flat < 0) | (flat >= oh * ow)
    if bool(bad.any()):
        raise RuntimeError(f"Found an invalid max index: {int(flat[bad][0])} (output volumes are of size "
                           f"{oh}x{ow})")
    out = xp.zeros((planes, oh * ow), dtype=self.dtype)
    rows = xp.broadcast_to(xp.arange(planes)[:, None], flat.shape)
    out[rows, flat] = self.reshape(planes, -1)      # NOTE: repeated indices: one of the values wins, as in PyTorch
    return out.reshape(tuple(self.shape[:-2]) + (oh, ow))


def _unpool_grad(grad, indices):
    """PyTorch's max_pool_double_backward(grad, indices, 2): grad read at each index."""
    plane = reshape(grad, list(grad.shape[:-2]) + [-1])
    return reshape(gather(plane, -1, reshape(indices, list(indices.shape[:-2]) + [-1])), list(indices.shape))


def _unpool_samples(op):
    def pooled(shape, key, kernel, stride=None, padding=0):
        x = make_arg(shape, key=(op, key), requires_grad=False)
        values, idx = max_pool2d_with_indices(x, kernel, stride or [], padding)
        return make_arg(tuple(values.shape), key=(op, key, "v")), idx
    v0, i0 = pooled((2, 3, 4, 4), 0, [2, 2])
    v1, i1 = pooled((1, 2, 5, 5), 1, [2, 2])
    v2, i2 = pooled((2, 6, 7), 2, [3, 3], [3, 3], [1, 1])
    return [SampleInput("(2,3,4,4) k2", v0, i0, [2, 2]),
            SampleInput("(1,2,5,5) k2 output_size", v1, i1, [2, 2], output_size=[5, 5]),
            SampleInput("(2,6,7) unbatched k3 s3 p1", v2, i2, [3, 3], [3, 3], [1, 1], [6, 7])]


max_unpool2d = defop(
    "max_unpool2d(Tensor self, Tensor indices, int[] kernel_size, int[]? stride=None, int[] padding=0, "
    "int[]? output_size=None) -> Tensor",
    kernel=_unpool_kernel, meta=_unpool_meta,
    grads={"self": lambda grad, indices: _unpool_grad(grad, indices), "indices": None},
    backward_name="MaxUnpool2DBackward0",
    samples=_unpool_samples, torch="torch.nn.functional.max_unpool2d",
    doc="max_pool2d's partial inverse: each value of (N, C, H, W) or (C, H, W) self placed at its flat index "
        "(from max_pool2d's return_indices) in a zero (H_out, W_out) plane; H_out = (H - 1) * stride - "
        "2 * padding + kernel_size unless output_size is given.")
