"""The factories as ops (ATen's TensorFactories, Fill): the *_like factories (zeros_like,
ones_like, empty_like, full_like, rand_like, randn_like), so a graph file can call them,
and `fill`, the op behind `fill_`/`zero_`. Each *_like is engine/creation.py's function,
taking the input's shape, dtype and device unless told otherwise, as an explicit composite
(PyTorch's CompositeExplicitAutograd: a __torch_dispatch__ handler sees the op). No gradient flows
through them (PyTorch's outputs are new leaves; fill's gradient to self is zero). The
random ones take `seed` (keyword-only, as `dropout` does) in place of PyTorch's
`generator`: with a seed the values are NumPy's PCG64 stream on every device; without,
agrad's global generator (`manual_seed`).
"""
from __future__ import annotations

from .. import creation, dtypes, memory_formats
from ..backends.meta import MetaArray
from ..messages import checked_convert
from .registry import defop
from .samples import SampleInput, make_arg


def _fill_kernel(xp, self, value):
    return xp.full(self.shape, checked_convert(value, self.dtype), dtype=self.dtype)


fill = defop(
    "fill(Tensor self, Scalar value) -> Tensor",
    supports_complex=True, kernel=_fill_kernel, meta=lambda self, value: MetaArray(self.shape, self.dtype),
    grads={"self": lambda grad: creation.zeros_like(grad)},
    samples=lambda op: [SampleInput("(2,3) 2.5", make_arg((2, 3), key=(op, 0)), 2.5),
                        SampleInput("0-d -1", make_arg((), key=(op, 1)), -1)],
    torch="torch.fill",
    doc="A tensor of self's shape and dtype filled with value (the pure form of fill_).")

_OPTIONS = ("*, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, "
            "MemoryFormat? memory_format=None")


def _filled_like(value):
    def like(input, dtype, device, requires_grad, memory_format):
        factory = creation.ones_like if value else creation.zeros_like
        return factory(input, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format)
    return like


def _like_samples(*extra):
    def samples(op):
        x = make_arg((2, 3), key=(op, 0), requires_grad=False)
        return [SampleInput("(2,3)", x, *extra),
                SampleInput("dtype=float32", x, *extra, dtype=dtypes.float32),
                SampleInput("int64 input", creation.tensor([[1, 2], [3, 4]]), *extra),
                SampleInput("0-d requires_grad", make_arg((), key=(op, 1), requires_grad=False), *extra,
                            requires_grad=True),
                SampleInput("(2,3,2,2) channels_last", make_arg((2, 3, 2, 2), key=(op, 2), requires_grad=False),
                            *extra, memory_format=memory_formats.channels_last)]
    return samples


def _torch_like(name, extra=""):
    return f"lambda input, {extra}dtype=None, device=None, requires_grad=False, memory_format=None: " \
           f"torch.{name}(input, {extra}dtype=dtype, device=device, requires_grad=requires_grad, " \
           f"memory_format=memory_format or torch.preserve_format)"


zeros_like = defop(f"zeros_like(Tensor input, {_OPTIONS}) -> Tensor", composite=_filled_like(0), differentiable=False,
                   explicit=True,
                   samples=_like_samples(), torch=_torch_like("zeros_like"),
                   doc="Zeros of the input's shape (its dtype and device unless given).")
ones_like = defop(f"ones_like(Tensor input, {_OPTIONS}) -> Tensor", composite=_filled_like(1), differentiable=False,
                  explicit=True,
                  samples=_like_samples(), torch=_torch_like("ones_like"),
                  doc="Ones of the input's shape (its dtype and device unless given).")
empty_like = defop(f"empty_like(Tensor input, {_OPTIONS}) -> Tensor", composite=_filled_like(0), differentiable=False,
                   explicit=True,
                   samples=_like_samples(),
                   doc="A tensor of the input's shape; filled with zeros (uninitialised memory would make runs "
                       "irreproducible).")


def _full_like(input, fill_value, dtype, device, requires_grad, memory_format):
    return creation.full_like(input, fill_value, dtype=dtype, device=device, requires_grad=requires_grad,
                              memory_format=memory_format)


full_like = defop(f"full_like(Tensor input, Scalar fill_value, {_OPTIONS}) -> Tensor", composite=_full_like,
                  differentiable=False, explicit=True,
                  samples=_like_samples(2.5), torch=_torch_like("full_like", "fill_value, "),
                  doc="fill_value everywhere, of the input's shape, dtype (so 2.5 in an int64 tensor is 2) and "
                      "device unless given.")


def _random_like(fn):
    def like(input, dtype, device, requires_grad, memory_format, seed):
        return fn(input, dtype=dtype, device=device, requires_grad=requires_grad, seed=seed,
                  memory_format=memory_format)
    return like


def _random_samples(op):
    x = make_arg((3, 4), key=(op, 0), requires_grad=False)
    return [SampleInput("seed=0", x, seed=0), SampleInput("float32 seed=1", x, dtype=dtypes.float32, seed=1)]


rand_like = defop(f"rand_like(Tensor input, {_OPTIONS}, int? seed=None) -> Tensor",
                  composite=_random_like(creation.rand_like), differentiable=False, explicit=True,
                  samples=_random_samples,
                  doc="Uniform [0, 1) values of the input's shape; from `seed`, else agrad's global generator.")
randn_like = defop(f"randn_like(Tensor input, {_OPTIONS}, int? seed=None) -> Tensor",
                   composite=_random_like(creation.randn_like), differentiable=False, explicit=True,
                   samples=_random_samples,
                   doc="Standard normal values of the input's shape; from `seed`, else agrad's global generator "
                       "(with `seed` the same numbers as a graph input `{init: normal, seed: ...}`).")
