"""In-place random initialisers and fill_diagonal_, as Tensor methods: uniform_, normal_,
bernoulli_, exponential_, log_normal_, cauchy_, geometric_, random_ and fill_diagonal_ (plus the Tensor methods of the
non-op functions allclose, equal and unique; float_power_, which needs a double self; and
sinc_, deg2rad_, rad2deg_, heaviside_).

The random values are drawn from agrad's global generator (creation.manual_seed), so a
seed gives the same numbers on every device, and written with the in-place machinery
(`apply_inplace` over `copy`): the version counter moves on, a leaf that requires grad is
refused under grad mode (allowed under no_grad, as in PyTorch), and a non-leaf records
PyTorch's Node (UniformBackward0, RandomBackward0/1/2, …) whose gradient is zero.
fill_diagonal_ is PyTorch's composite: fill_ on the diagonal view(s), so a non-leaf's
grad_fn is CopySlices.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import creation, dtypes
from .._tensor import Tensor
from ..autograd.inplace import apply_inplace
from ..errors import DtypeNotImplementedError
from ..generator import numpy_rng
from ..messages import c_type_name, scalar_type_name
from .conversion import copy
from .pointwise.binary import float_power

_MANTISSA = {"float16": 11, "float32": 24, "float64": 53}


def _num(x) -> str:
    """A double as PyTorch prints it in these messages (1, 0.5, -0.1)."""
    return f"{float(x):g}"


def _write_random(self: Tensor, values, backward_name: str) -> Tensor:
    src = creation.tensor(values, dtype=self.dtype, device=self.device)
    return apply_inplace(self, copy, (src,), None, backward_name)


def _floating_only(self, kernel, complex_too=False):
    """A floating self, or a complex one where ATen draws its parts as view_as_real's floats (`complex_too`)."""
    if not (self.dtype.is_floating_point or (complex_too and self.dtype.is_complex)):
        raise DtypeNotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(self.dtype.np)}'")


def _uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    from_ = kwargs.pop("from", from_)
    _no_extra(kwargs, "uniform_")
    _floating_only(self, "check_uniform_bounds", complex_too=True)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(from_)} > "
                           f"to={_num(to)}")
    real = self.dtype.to_real().np
    shape = tuple(self.shape) + ((2,) if self.dtype.is_complex else ())
    values = (from_ + (to - from_) * _rng(generator).random(shape)).astype(real)
    if to > from_:      # rounding to a narrow float can land on `to`: keep the range half-open
        values = np.where(values >= to, np.nextafter(real.type(to), real.type(from_)), values)
    return _write_random(self, creation.complex_draws(values) if self.dtype.is_complex else values,
                         "UniformBackward0")


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    _floating_only(self, "normal_kernel_cpu", complex_too=True)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    if self.dtype.is_complex:       # each part of view_as_real with std/√2, as ATen's normal_
        values = creation.complex_draws(_rng(generator).normal(mean, std * np.sqrt(0.5), (*self.shape, 2)))
    else:
        values = _rng(generator).normal(mean, std, tuple(self.shape))
    return _write_random(self, values, "NormalBackward0")


def _bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        raise TypeError("bernoulli_(): agrad takes p as a float (PyTorch's bernoulli_(Tensor p) is not supported)")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    return _write_random(self, _rng(generator).random(tuple(self.shape)) < p, "BernoulliBackward2")


def _exponential_(self, lambd=1.0, *, generator=None):
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {scalar_type_name(self.dtype.np)}")
    return _write_random(self, _rng(generator).exponential(1.0 / lambd, tuple(self.shape)), "ExponentialBackward0")


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    _floating_only(self, "log_normal_cpu")
    return _write_random(self, _rng(generator).lognormal(mean, std, tuple(self.shape)), "LogNormalBackward0")


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {c_type_name(self.dtype.np)}")
    values = median + sigma * _rng(generator).standard_cauchy(tuple(self.shape))
    return _write_random(self, values, "CauchyBackward0")


def _geometric_(self, p, *, generator=None):
    """The number of Bernoulli(p) trials to the first success (1, 2, …), in any dtype but bool."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    if self.dtype == dtypes.bool_:
        raise DtypeNotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    return _write_random(self, _rng(generator).geometric(p, tuple(self.shape)), "GeometricBackward0")


def _dtype_range(dt) -> tuple[int, int]:
    """The integers random_ may produce for a dtype: its range, or the exactly representable ones of a float."""
    if dt.name == "bool":
        return 0, 1
    if dt.is_floating_point:
        m = 2 ** _MANTISSA[dt.name]
        return -m, m
    info = np.iinfo(dt.np)
    return int(info.min), int(info.max)


def _random_(self, *args, generator=None, **kwargs):
    """random_(): [0, the dtype's max] (2^mantissa for floats); random_(to): [0, to);
    random_(from, to): [from, to) — to=None means up to the dtype's max."""
    if "from" in kwargs:
        args = (kwargs.pop("from"),) + args
    if "to" in kwargs:
        args = args + (kwargs.pop("to"),)         # random_(to=5) is random_(5), random_(from=1, to=5) random_(1, 5)
    _no_extra(kwargs, "random_")
    if any(not isinstance(a, (int, np.integer)) or isinstance(a, bool) for a in args if a is not None) \
            or len(args) > 2:
        raise TypeError(f"random_() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of: (*, Generator "
                        f"generator), (int from, int? to, *, Generator generator), (int to, *, Generator generator)")
    dt = self.dtype
    low, high = _dtype_range(dt)
    name = c_type_name(dt.np)
    if not args:
        lo, hi, node = 0, high, "RandomBackward2"
    elif len(args) == 1:
        lo, hi, node = 0, int(args[0]) - 1, "RandomBackward1"
        if lo > hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from=0 >= to={args[0]}")
        _check_bound(hi, low, high, dt, f"to - 1 is out of bounds for {name}")
    else:
        lo = int(args[0])
        if args[1] is None:
            _check_bound(lo, low, high, dt, f"from is out of bounds for {name}")
            hi = high
        else:
            if lo >= args[1]:
                raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={args[1]}")
            hi = int(args[1]) - 1
            _check_bound(lo, low, high, dt, f"from is out of bounds for {name}")
            _check_bound(hi, low, high, dt, f"to - 1 is out of bounds for {name}")
        node = "RandomBackward0"
    values = _rng(generator).integers(lo, hi, size=tuple(self.shape), endpoint=True, dtype=np.int64)
    return _write_random(self, values, node)


def _check_bound(value, low, high, dt, msg):
    if dt.is_floating_point:
        info = np.finfo(dt.np)
        if not -float(info.max) <= value <= float(info.max):
            raise RuntimeError(msg)
        if not low <= value <= high:        # representable, but not every integer near it is: a warning
            m = _MANTISSA[dt.name]
            warnings.warn(f"{msg.split(' is out')[0]} is out of bounds [-(2^{m}), 2^{m}]. Due to precision "
                          f"limitations {c_type_name(dt.np)} can support discrete uniform distribution only within "
                          f"this range. This warning will become an error in version 1.7 release, please fix the "
                          f"code in advance", UserWarning, stacklevel=3)
    elif not low <= value <= high:
        raise RuntimeError(msg)


def _no_extra(kwargs, name):
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")


def _rng(generator):
    return numpy_rng(generator)


def _fill_diagonal_(self, fill_value, wrap=False):
    n = self.ndim
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if n > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    diag = self
    for _ in range(n - 1):      # x[i, i, ..., i]: the diagonal of the first two dims, n - 1 times
        diag = diag.diagonal(0, 0, 1)
    diag.fill_(fill_value)
    if wrap and n == 2 and height > width + 1:
        # PyTorch continues the diagonal through memory every width + 1 elements past row width + 1
        if not self.is_contiguous():
            raise RuntimeError("fill_diagonal_(wrap=True) of a tall matrix needs a contiguous tensor in agrad")
        step = width + 1
        self.reshape(-1)[width * step::step].fill_(fill_value)
    return self


def _float_power_(self, exponent):
    if self.dtype != dtypes.float64:        # float_power's result is double: it cannot be written into another dtype
        raise RuntimeError(f"the base given to float_power_ has dtype {scalar_type_name(self.dtype.np)} but the "
                           f"operation's result requires dtype Double")
    return apply_inplace(self, float_power, (exponent,))
