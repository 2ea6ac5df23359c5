"""pixel_shuffle and pixel_unshuffle (ATen's PixelShuffle): (*, C*r*r, H, W) <-> (*, C, H*r, W*r);
channel_shuffle (ATen's ChanelShuffle), the channels as (groups, C / groups) transposed, and
native_channel_shuffle, its kernel under its own name (no derivative).

Each is one reshape, one permutation and one reshape, and each is the other's inverse, so
each one's gradient is the other applied to grad (derivatives.yaml's formulas). The result
is always a new array, never a view of the input (factor 1 included), as in PyTorch.
"""
from __future__ import annotations

from ...backends.meta import MetaArray
from ...messages import sizes
from ..registry import defop
from ..samples import SampleInput, make_arg


def _shuffled_shape(name, self, factor, up):
    what = "upscale_factor" if up else "downscale_factor"
    if self.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {self.ndim} "
                           f"dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")
    *batch, c, h, w = self.shape
    if up:
        if c % (factor * factor):
            raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                               f"of upscale_factor, but input.size(-3)={c} is not divisible by {factor * factor}")
        return tuple(batch) + (c // (factor * factor), h * factor, w * factor)
    if h % factor:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {factor}")
    if w % factor:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {factor}")
    return tuple(batch) + (c * factor * factor, h // factor, w // factor)


def _shuffle_kernel(xp, self, upscale_factor):
    out = _shuffled_shape("pixel_shuffle", self, upscale_factor, True)
    r, (*batch, c, h, w), k = upscale_factor, self.shape, len(self.shape) - 3
    x = self.reshape(tuple(batch) + (c // (r * r), r, r, h, w))
    # (*, C, r, r, H, W) -> (*, C, H, r, W, r)
    x = xp.transpose(x, tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return x.reshape(out).copy() if r == 1 else x.reshape(out)


def _unshuffle_kernel(xp, self, downscale_factor):
    out = _shuffled_shape("pixel_unshuffle", self, downscale_factor, False)
    r, (*batch, c, h, w), k = downscale_factor, self.shape, len(self.shape) - 3
    x = self.reshape(tuple(batch) + (c, h // r, r, w // r, r))
    # (*, C, H/r, r, W/r, r) -> (*, C, r, r, H/r, W/r)
    x = xp.transpose(x, tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return x.reshape(out).copy() if r == 1 else x.reshape(out)


def _samples(op, up):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    if up:
        return [SampleInput("(2,8,3,4) r2", arg((2, 8, 3, 4), 0), 2),
                SampleInput("unbatched (9,2,3) r3", arg((9, 2, 3), 1), 3),
                SampleInput("(2,1,8,2,3)T r2", arg((2, 1, 8, 2, 3), 2, transposed=True), 2),
                SampleInput("r1", arg((1, 3, 2, 2), 3), 1)]
    return [SampleInput("(2,2,4,6) r2", arg((2, 2, 4, 6), 0), 2),
            SampleInput("unbatched (1,6,3) r3", arg((1, 6, 3), 1), 3),
            SampleInput("(2,1,2,4,2)T r2", arg((2, 1, 2, 4, 2), 2, transposed=True), 2),
            SampleInput("r1", arg((1, 3, 2, 2), 3), 1)]


pixel_shuffle = defop(
    "pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
    kernel=_shuffle_kernel,
    meta=lambda self, upscale_factor: MetaArray(_shuffled_shape("pixel_shuffle", self, upscale_factor, True),
                                                self.dtype),
    grads={"self": lambda grad, upscale_factor: pixel_unshuffle(grad, upscale_factor)},
    samples=lambda op: _samples(op, True), torch="torch.nn.functional.pixel_shuffle",
    doc="(*, C*r*r, H, W) rearranged to (*, C, H*r, W*r): output[..., c, h*r + i, w*r + j] = "
        "input[..., c*r*r + i*r + j, h, w] (r = upscale_factor).")

pixel_unshuffle = defop(
    "pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
    kernel=_unshuffle_kernel,
    meta=lambda self, downscale_factor: MetaArray(_shuffled_shape("pixel_unshuffle", self, downscale_factor,
                                                                  False), self.dtype),
    grads={"self": lambda grad, downscale_factor: pixel_shuffle(grad, downscale_factor)},
    samples=lambda op: _samples(op, False), torch="torch.nn.functional.pixel_unshuffle",
    doc="pixel_shuffle's inverse: (*, C, H*r, W*r) rearranged to (*, C*r*r, H, W) (r = downscale_factor).")


# ---- channel_shuffle --------------------------------------------------------------------------

def _channel_shuffle_check(self, groups):
    if self.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{sizes(self.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = self.shape[1]
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")


def _channel_shuffle_kernel(xp, self, groups):
    _channel_shuffle_check(self, groups)
    b, c, *rest = self.shape
    grouped = self.reshape(b, groups, c // groups, *rest)
    return xp.ascontiguousarray(xp.swapaxes(grouped, 1, 2)).reshape(self.shape)


def _channel_shuffle_meta(self, groups):
    _channel_shuffle_check(self, groups)
    return MetaArray(self.shape, self.dtype)


channel_shuffle = defop(
    "channel_shuffle(Tensor self, int groups) -> Tensor",
    kernel=_channel_shuffle_kernel, meta=_channel_shuffle_meta,
    # derivatives.yaml: the inverse shuffle, with C / groups groups
    grads={"self": lambda grad, groups: channel_shuffle(grad, grad.shape[1] // groups)},
    samples=lambda op: [SampleInput("(2,6,3) groups 3", make_arg((2, 6, 3), key=(op, 0)), 3),
                        SampleInput("(1,4,2,2) groups 2", make_arg((1, 4, 2, 2), key=(op, 1)), 2)],
    torch="torch.channel_shuffle",
    doc="The C channels of (N, C, *) input seen as (groups, C / groups) and transposed: channel g·(C/groups) + j "
        "moves to j·groups + g.")


def _native_channel_shuffle_not_implemented(grad):
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


native_channel_shuffle = defop(
    "native_channel_shuffle(Tensor self, int groups) -> Tensor",
    kernel=_channel_shuffle_kernel, meta=_channel_shuffle_meta,
    # no derivatives.yaml entry: PyTorch records a node named NotImplemented whose backward raises
    grads={"self": _native_channel_shuffle_not_implemented}, backward_name="NotImplemented",
    differentiable=False, gradgrad=False,
    samples=lambda op: [SampleInput("(2,6,3) groups 3", make_arg((2, 6, 3), key=(op, 0)), 3),
                        SampleInput("(1,4,2,2) groups 2", make_arg((1, 4, 2, 2), key=(op, 1)), 2)],
    torch="torch.native_channel_shuffle",
    doc="channel_shuffle's kernel under its ATen name (the one channel_shuffle calls on the CPU); not "
        "differentiable, as PyTorch's.")
