"""Tensor's methods that run ops, bound onto `Tensor` in this one place (PyTorch generates
them into TensorBody.h and python_variable_methods.cpp).

`_tensor.Tensor` holds the array, the autograd metadata and the methods that need nothing
above it; it cannot import the op library, which is built on top of it. What runs an op is
bound here, once every family has registered its ops (the last step of `agrad.ops`), in an
order where a later step never replaces an earlier one unless it says so:
1. the methods written out below (`to`, `T`, the reflected and other operators, `x[i]`,
   `backward` …);
2. a method per op whose first argument is `self` (PyTorch's method variants);
3. the hot operators (`x * y`, …) as the op's own function: no method frame in between;
4. the in-place variants (`add_` …), the in-place view ops (`t_` …), the in-place random
   initialisers, `x[i] = v` and `x += y`;
5. `view(dtype)` beside `view(sizes)`.
"""
from __future__ import annotations

from .. import dtypes
from .._tensor import _UNTIL_LOADED, Tensor, _size
from ..autograd.functional import backward
from ..creation import full, tensor
from ..dispatcher import all_ops
from ..dispatcher import ops as _ops
from ._inplace import (
    _BINARY,
    _UNARY,
    _as_strided_,
    _copy_,
    _fill_,
    _index_put_,
    _method,
    _squeeze_,
    _t_,
    _transpose_,
    _unsqueeze_,
    _zero_,
)
from ._random_inplace import (
    _bernoulli_,
    _exponential_,
    _fill_diagonal_,
    _float_power_,
    _normal_,
    _random_,
    _uniform_,
)
from .conversion import _view_dtype
from .reduce.selection import allclose, equal, unique
from .shape.advanced_indexing import getitem, setitem

__all__: list = []


class _Methods:
    """The methods of step 1, written as in a class body; `bind` copies them onto Tensor."""

    def __iter__(self):
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def to(self, *args, device=None, dtype=None, copy=False) -> "Tensor":
        for a in args:     # t.to("cuda"), t.to(agrad.float64), t.to(other_tensor)
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            else:
                device = a
        return _ops.to(self, device=device, dtype=dtype, copy=copy)

    def view_as(self, other) -> "Tensor":
        return _ops.view(self, list(other.shape))

    def reshape_as(self, other) -> "Tensor":
        return _ops.reshape(self, list(other.shape))

    def expand_as(self, other) -> "Tensor":
        return _ops.expand(self, list(other.shape))

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False) -> "Tensor":
        return full(_size(size), fill_value, dtype=dtype or self.dtype, device=device or self._device,
                    requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> "Tensor":
        return self.new_full(size, 0, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> "Tensor":
        return self.new_full(size, 1, dtype=dtype, device=device, requires_grad=requires_grad)

    new_empty = new_zeros          # NOTE: zero-filled: agrad never hands out uninitialised memory

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False) -> "Tensor":
        return tensor(data, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    @property
    def T(self):
        return _ops.permute(self, list(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    def __radd__(self, other): return _ops.add(other, self)
    def __rsub__(self, other): return _ops.sub(other, self)
    def __rmul__(self, other): return _ops.mul(other, self)
    def __rtruediv__(self, other): return _ops.div(other, self)
    def __floordiv__(self, other): return _ops.floor_divide(self, other)
    def __rfloordiv__(self, other): return _ops.floor_divide(other, self)
    def __mod__(self, other): return _ops.remainder(self, other)
    def __rmod__(self, other): return _ops.remainder(other, self)
    def __and__(self, other): return _ops.bitwise_and(self, other)
    def __rand__(self, other): return _ops.bitwise_and(other, self)
    def __or__(self, other): return _ops.bitwise_or(self, other)
    def __ror__(self, other): return _ops.bitwise_or(other, self)
    def __xor__(self, other): return _ops.bitwise_xor(self, other)
    def __rxor__(self, other): return _ops.bitwise_xor(other, self)
    def __invert__(self): return _ops.bitwise_not(self)
    def __lshift__(self, other): return _ops.bitwise_left_shift(self, other)
    def __rlshift__(self, other): return _ops.bitwise_left_shift(other, self)
    def __rshift__(self, other): return _ops.bitwise_right_shift(self, other)
    def __rrshift__(self, other): return _ops.bitwise_right_shift(other, self)
    def __rpow__(self, other): return _ops.pow(other, self)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __abs__(self): return _ops.abs(self)
    def __eq__(self, other): return _ops.eq(self, other)
    def __ne__(self, other): return _ops.ne(self, other)
    def __lt__(self, other): return _ops.lt(self, other)
    def __le__(self, other): return _ops.le(self, other)
    def __gt__(self, other): return _ops.gt(self, other)
    def __ge__(self, other): return _ops.ge(self, other)

    def __getitem__(self, index):
        return getitem(self, index)


# step 3: `x * y` calls the op's function itself: the Python method that would forward to it is
# one frame per op that a chain of small ops would feel (the reflected ones swap their arguments)
_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__matmul__": "matmul",
              "__neg__": "neg", "__pow__": "pow"}

# step 4: the in-place variants PyTorch gives ops of other families, beside _inplace.py's lists
_INPLACE_ALSO = ("sinc", "deg2rad", "rad2deg", "heaviside")


def _sizes_method(fn):
    def method(self, *sizes, **kwargs):
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
            sizes = sizes[0]
        return fn(self, list(sizes), **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _op_methods():
    """Step 2: {name: method} for every op whose first argument is `self`."""
    methods = {}
    for entry in all_ops():
        args = entry.schema.arguments
        name = entry.name
        if "::" in name or not args or args[0].name != "self":
            continue
        rest = [a for a in args[1:] if not a.has_default]
        positional = [a for a in args[1:] if not a.kwarg_only]
        # varargs sizes only where the int list is the one positional argument: t.roll(1, 0) is
        # shifts=1, dims=0 and t.logsumexp(0, True) is keepdim=True, as in PyTorch
        if (len(rest) == 1 and rest[0] is args[1] and args[1].is_list and args[1].base == "int"
                and len(positional) == 1):
            methods[name] = _sizes_method(entry.function)      # t.reshape(2, 3) and t.reshape([2, 3])
        else:
            methods[name] = entry.function
    return methods


def _iop(name):
    def method(self, other):
        return getattr(self, name)(other)
    method.__name__ = method.__qualname__ = f"__i{name[:-1]}__" if name != "div_" else "__itruediv__"
    return method


def _view_method(view):
    """Tensor.view: `t.view(dtype)` is the bitcast, anything else the `view` op's sizes."""
    def method(self, *args, **kwargs):
        if (len(args) == 1 and not kwargs and isinstance(args[0], dtypes.dtype)) or set(kwargs) == {"dtype"}:
            return _view_dtype(self, args[0] if args else kwargs["dtype"])
        return view(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = "view"
    method.__doc__ = view.__doc__
    return method


# what a class body defines besides its methods (`__hash__` is None there because `__eq__` is
# defined: Tensor keeps object's hash, as torch.Tensor does)
_CLASS_MACHINERY = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__",
                    "__firstlineno__", "__static_attributes__"}


def bind() -> None:
    for name, value in vars(_Methods).items():                                         # step 1
        if name not in _CLASS_MACHINERY:
            setattr(Tensor, name, value)
    for name, method in _op_methods().items():                                         # step 2
        if not hasattr(Tensor, name):
            setattr(Tensor, name, method)
    for method, op in _OPERATORS.items():                                              # step 3
        setattr(Tensor, method, getattr(_ops, op))
    registered = {entry.name for entry in all_ops()}                                  # step 4
    for name in _UNARY + _BINARY + _INPLACE_ALSO:
        if name in registered and not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _method(name + "_", getattr(_ops, name)))
    inplace = {"zero_": _zero_, "fill_": _fill_, "copy_": _copy_, "index_put_": _index_put_, "__setitem__": setitem,
               "t_": _t_, "transpose_": _transpose_, "swapdims_": _transpose_, "swapaxes_": _transpose_,
               "squeeze_": _squeeze_, "unsqueeze_": _unsqueeze_, "as_strided_": _as_strided_,
               "uniform_": _uniform_, "normal_": _normal_, "bernoulli_": _bernoulli_, "exponential_": _exponential_,
               "random_": _random_, "fill_diagonal_": _fill_diagonal_,
               "float_power_": _float_power_,          # needs a double self: replaces the generic variant
               "allclose": allclose, "equal": equal, "unique": unique}
    for name, method in inplace.items():
        if method.__name__ == "_" + name:               # _uniform_ is Tensor.uniform_ in tracebacks too
            method.__name__ = method.__qualname__ = name
        setattr(Tensor, name, method)
    for name in ("add_", "sub_", "mul_", "div_"):
        method = _iop(name)
        setattr(Tensor, method.__name__, method)
    Tensor.view = _view_method(Tensor.view)                                            # step 5
    del Tensor.__getattr__                  # _tensor's stand-in: every method is here now
    for name in _UNTIL_LOADED:
        if hasattr(getattr(Tensor, name), "stand_in"):
            raise RuntimeError(f"Tensor.{name} is still _tensor's stand-in: bind it here")