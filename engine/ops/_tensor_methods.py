"""Tensor's methods that run ops, bound onto `Tensor` in this one place (PyTorch generates
them into TensorBody.h and python_variable_methods.cpp).

`_tensor.Tensor` holds the array, the autograd metadata and the methods that need nothing
above it; it cannot import the op library, which is built on top of it. What runs an op is
bound here when the library loads, each method resolved on its first use, so that a method
costs the import of its op's family only when a program calls it (contents.py). Python looks
operators up on the type, so those get a stand-in that binds the real one on its first call;
every other name a method may have gets a `_LazyMethod` descriptor that binds it on first use
(Tensor has no __getattr__ once the library is loaded). In an order where a later step never
replaces an earlier one unless it says so:
1. the methods written out below (`to`, `T`, the reflected and other operators,
   `backward` …), bound at once;
2. `x[i]`, `x[i] = v` and the in-place methods and helpers of other modules (`_ELSEWHERE`:
   `zero_`, `t_`, the in-place random initialisers, `allclose` …), which replace a method of
   step 3 of the same name;
3. a method per op whose first argument is `self` (PyTorch's method variants), `view(dtype)`
   beside `view(sizes)`;
4. the hot operators (`x * y`, …) as the op's own function: no method frame in between;
5. the in-place variants (`add_` …) of the ops listed below, and `x += y`.
"""
from __future__ import annotations

import importlib
import math
import warnings

import numpy as np

from .. import _linalg_utils, dtypes, memory_formats
from .._tensor import _UNTIL_LOADED, Tensor, _has_torch_dispatch, _size
from ..autograd.backward_and_grad import backward
from ..autograd.inplace import bump_version, check_inplace
from ..autograd.tensor_functions import Resize
from ..creation import empty_strided, full, tensor
from ..dispatcher import UnknownOperatorError, get_op
from ..dispatcher import ops as _ops
from ..dispatch_keys import TORCH_FUNCTION
from ..grad_mode import is_grad_enabled, is_inference_mode_enabled, tls
from ..overrides import (DisableTorchFunction, _disabled_torch_function_impl, _tensor_torch_function,
                         handle_torch_function, has_torch_function_unary)
from ..messages import tensor_type_name
from ..warn_once import warn_once
from ..watchers import before_mutation, mutation_observers

__all__: list = []


class _Methods:
    """The methods of step 1, written as in a class body; `bind` copies them onto Tensor."""

    __torch_function__ = classmethod(_tensor_torch_function)

    def __init_subclass__(cls, **kwargs):
        """A subclass that defines a __torch_dispatch__ and keeps Tensor's __torch_function__ gets the disabled
        one, as torch's _TensorMeta makes it (THPVariableMetaType_init): its ops reach its handler as they are
        called, their results not converted to the subclass on the way."""
        super(Tensor, cls).__init_subclass__(**kwargs)
        if _has_torch_dispatch(cls):
            handler = getattr(cls.__torch_function__, "__func__", cls.__torch_function__)
            if handler is _tensor_torch_function:
                cls.__torch_function__ = _disabled_torch_function_impl

    def __iter__(self):
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    # removed in PyTorch 1.9 (torch/_tensor.py keeps them): each raises the error that names its replacement
    def solve(self, other):
        return _linalg_utils.solve(self, other)

    def lstsq(self, other):
        return _linalg_utils.lstsq(self, other)

    def eig(self, eigenvectors=False):
        return _linalg_utils.eig(self, eigenvectors=eigenvectors)

    def symeig(self, eigenvectors=False):
        return _linalg_utils._symeig(self, eigenvectors=eigenvectors)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        if (self.__class__ is not Tensor or tls.included & TORCH_FUNCTION) and has_torch_function_unary(self):
            # (torch/_tensor.py's: a Python method, not an op)
            return handle_torch_function(Tensor.backward, (self,), self, gradient=gradient, retain_graph=retain_graph,
                                         create_graph=create_graph, inputs=inputs)
        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def to(self, *args, device=None, dtype=None, copy=False, memory_format=None) -> "Tensor":
        for a in args:     # t.to("cuda"), t.to(agrad.float64), t.to(other_tensor)
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            else:
                device = a
        return _ops.to(self, device=device, dtype=dtype, copy=copy, memory_format=memory_format)

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

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False) -> "Tensor":
        return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self._device,
                             requires_grad=requires_grad)

    def new(self, *args, device=None) -> "Tensor":
        """The legacy constructor (Tensor.new): `x.new()` empty, `x.new(2, 3)` or `x.new(y.shape)` of that
        size (zero-filled, as new_empty), `x.new([1, 2])` from data, `x.new(t)` t itself; x's dtype and
        device. (A tuple of ints is a size: agrad's shapes are tuples, where PyTorch's are torch.Size.)"""
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0]
        if len(args) == 1 and (isinstance(args[0], list) or
                               isinstance(args[0], tuple) and not all(isinstance(a, int) for a in args[0])):
            return tensor(args[0], dtype=self.dtype, device=device or self._device)
        return self.new_zeros(*args if args else (0,), device=device)

    def resize_(self, *sizes, memory_format=None) -> "Tensor":
        """Tensor.resize_: this tensor takes the shape `sizes` in place, keeping its leading elements
        (a larger one is extended with zeros: agrad never hands out uninitialised memory); the version
        moves only if the shape does. Refused on a tensor that requires grad, as in PyTorch. With
        memory_format the kept storage is seen with that format's strides (channels_last: NHWC)."""
        if self.requires_grad and not is_inference_mode_enabled():     # (inference mode records nothing)
            raise RuntimeError("cannot resize variables that require grad")
        if mutation_observers:
            before_mutation(self)
        shape = _size(sizes)
        if shape == tuple(self.shape) and memory_format is None:
            return self
        xp = self._device.backend.xp
        flat = self._data.reshape(-1)
        n = math.prod(shape)
        if n <= flat.size:
            data = flat[:n]                         # a view of the same memory, as PyTorch keeps the storage
        else:
            data = xp.zeros(n, dtype=flat.dtype)
            data[:flat.size] = flat
        data = memory_formats.view_in(data, shape, memory_format)
        self._data = data
        if self._autograd_meta is not None:
            self._autograd_meta.grad_accumulator = None     # (as set_'s)
        bump_version(self)
        return self

    def resize_as_(self, the_template, memory_format=None) -> "Tensor":
        return self.resize_(the_template.shape, memory_format=memory_format)

    # torch/csrc/utils/tensor_apply.cpp: a Python callable on each element, in place, CPU only; autograd sees
    # nothing (a tensor that requires grad is refused) and the version does not move, as in PyTorch
    def apply_(self, callable) -> "Tensor":  # noqa: A002 — PyTorch's name
        if self.requires_grad:
            raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.")
        return _elementwise_python(self, "apply_", callable, {})

    def map_(self, tensor, callable) -> "Tensor":  # noqa: A002
        if self.requires_grad:
            raise RuntimeError("Can't call map_() on Variable that requires grad. Use var.detach().map_() instead.")
        return _elementwise_python(self, "map_", callable, {"'other'": tensor})

    def map2_(self, x, y, callable) -> "Tensor":  # noqa: A002
        if self.requires_grad:
            raise RuntimeError("Can't call map2_() on Variable that requires grad. Use var.detach().map2_() instead.")
        return _elementwise_python(self, "map2_", callable, {"argument 'x'": x, "argument 'y'": y})

    def resize(self, *sizes) -> "Tensor":
        """The deprecated out-of-place resize (torch/_tensor.py's): a reshape to as many elements, through the
        Resize Function (ResizeBackward)."""
        warnings.warn("non-inplace resize is deprecated", stacklevel=2)
        return Resize.apply(self, sizes)

    def resize_as(self, tensor) -> "Tensor":
        warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
        return Resize.apply(self, tensor.size())

    def set_(self, source=None) -> "Tensor":
        """Tensor.set_(source): this tensor takes source's memory, shape and strides (set_() makes it
        empty). In-place rules as PyTorch's: a leaf that requires grad only outside grad mode."""
        if source is None:
            source = full((0,), 0, dtype=self.dtype, device=self._device)
        if is_grad_enabled() and (self.requires_grad or source.requires_grad):
            check_inplace(self)
        m = self._autograd_meta
        if m is not None:
            # a graph recorded before set_ keeps the old accumulator, and later ones get a new one: a
            # gradient with respect to this tensor is not one with respect to what it was (PyTorch's
            # generated set_ resets it, as resize_'s)
            m.grad_accumulator = None
        if mutation_observers:
            before_mutation(self)
        self._data, self._device = source._data, source._device
        bump_version(self)
        return self

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False) -> "Tensor":
        return tensor(data, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    def as_subclass(self, cls) -> "Tensor":
        """An instance of `cls` sharing this tensor's memory and history: PyTorch's
        `THPVariable_NewWithVar(cls, self.alias())`, so a view of self (AliasBackward0 where self
        requires grad), with no attributes of its own."""
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not issubclass(cls, Tensor):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        if self.__class__ is Tensor and not tls.included & TORCH_FUNCTION:
            view = _ops.alias(self)
        else:
            with DisableTorchFunction():       # (torch's as_subclass is no call a handler sees)
                view = _ops.alias(self)
        out = Tensor._make.__func__(cls, view._data, view._device, view._keys)
        out._autograd_meta, out._version_counter = view._autograd_meta, view._version_counter
        return out

    # methods whose argument order differs from the op's (PyTorch's: self first)
    def polygamma(self, n) -> "Tensor":
        return _ops.polygamma(n, self)

    def where(self, condition, other) -> "Tensor":
        return _ops.where(condition, self, other)

    @property
    def T(self):
        return _ops.permute(self, list(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    @property
    def real(self):
        return _ops.real(self)

    @real.setter
    def real(self, value):
        _ops.real(self).copy_(value)

    @property
    def imag(self):
        return _ops.imag(self)

    @imag.setter
    def imag(self, value):
        _ops.imag(self).copy_(value)

    @property
    def mH(self):
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                               f"tensor.")
        return _ops.transpose(self, -2, -1).conj()       # the conjugate transpose (a real tensor's conj is itself)

    @property
    def H(self):
        # ATen's matrix_H: a 2-D tensor's conjugate transpose, a 0-D tensor itself (deprecated)
        if self.ndim == 0:
            warn_once("tensor_H_0d", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
            return self
        if self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
                               + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""))
        return _ops.transpose(self, -2, -1).conj()

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


# step 4: `x * y` calls the op's function itself: the Python method that would forward to it is
# one frame per op that a chain of small ops would feel (the reflected ones swap their arguments)
_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__matmul__": "matmul",
              "__neg__": "neg", "__pow__": "pow"}

def _elementwise_python(self, name, fn, others):
    """self[i] = fn(self[i], *(o[i] for o in others)) for every element, the others broadcast to self, each
    result converted to self's dtype as a Python number is (ints truncated)."""
    for what, other in others.items():
        if not isinstance(other, Tensor) or other.dtype != self.dtype:
            got = tensor_type_name(other.dtype.np) if isinstance(other, Tensor) else type(other).__name__
            raise TypeError(f"{name}: expected {tensor_type_name(self.dtype.np)} for {what} (got {got})")
    if self._device.type == "meta":
        return self
    if self._device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    arrays = [_ops.expand(o, list(self.shape))._data for o in others.values()]
    data = self._data
    kind = data.dtype.kind
    convert = bool if kind == "b" else int if kind in "iu" else float
    for index in np.ndindex(data.shape):
        value = fn(data[index].item(), *(a[index].item() for a in arrays))
        if not isinstance(value, (int, float, np.number)):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        data[index] = convert(value)
    return self


# step 2: what other modules hold, as (module below agrad.ops, its name)
_ELSEWHERE = {"__getitem__": ("shape.advanced_indexing", "getitem"), "__setitem__": ("shape.advanced_indexing", "setitem"),
              "zero_": ("_inplace", "_zero_"), "fill_": ("_inplace", "_fill_"), "copy_": ("_inplace", "_copy_"),
              "index_put_": ("_inplace", "_index_put_"), "t_": ("_inplace", "_t_"),
              "transpose_": ("_inplace", "_transpose_"), "swapdims_": ("_inplace", "_transpose_"),
              "swapaxes_": ("_inplace", "_transpose_"), "squeeze_": ("_inplace", "_squeeze_"),
              "unsqueeze_": ("_inplace", "_unsqueeze_"), "as_strided_": ("_inplace", "_as_strided_"),
              "uniform_": ("_random_inplace", "_uniform_"), "normal_": ("_random_inplace", "_normal_"),
              "bernoulli_": ("_random_inplace", "_bernoulli_"), "exponential_": ("_random_inplace", "_exponential_"),
              "log_normal_": ("_random_inplace", "_log_normal_"), "cauchy_": ("_random_inplace", "_cauchy_"),
              "geometric_": ("_random_inplace", "_geometric_"), "random_": ("_random_inplace", "_random_"),
              "fill_diagonal_": ("_random_inplace", "_fill_diagonal_"),
              "float_power_": ("_random_inplace", "_float_power_"),     # needs a double self: not the generic variant
              "polygamma_": ("_inplace", "_polygamma_"),       # polygamma takes n first: not the generic variant
              "allclose": ("reduce.selection", "allclose"), "equal": ("reduce.selection", "equal"),
              "unique": ("reduce.selection", "unique"),
              "eq_": ("_inplace", "_eq_"), "ne_": ("_inplace", "_ne_"), "lt_": ("_inplace", "_lt_"),
              "le_": ("_inplace", "_le_"), "gt_": ("_inplace", "_gt_"), "ge_": ("_inplace", "_ge_"),
              "not_equal_": ("_inplace", "_ne_"), "less_": ("_inplace", "_lt_"),
              "less_equal_": ("_inplace", "_le_"), "greater_": ("_inplace", "_gt_"),
              "greater_equal_": ("_inplace", "_ge_"), "logical_and_": ("_inplace", "_logical_and_"),
              "logical_or_": ("_inplace", "_logical_or_"), "logical_xor_": ("_inplace", "_logical_xor_"),
              "logical_not_": ("_inplace", "_logical_not_"),
              "lu": ("lu_factorization", "lu"), "lu_solve": ("lu_factorization", "lu_solve")}

# step 5: PyTorch's in-place variants of the ops agrad has (bound when the op exists)
_UNARY = ("abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
          "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "sigmoid", "relu", "sign", "erf", "erfc", "erfinv",
          "reciprocal", "square", "floor", "ceil", "round", "trunc", "frac", "lgamma", "digamma", "clamp",
          "clamp_min", "clamp_max", "leaky_relu", "silu", "elu", "hardtanh", "nan_to_num", "logit")
_BINARY = ("add", "sub", "mul", "div", "pow", "fmod", "remainder", "atan2", "hypot", "lerp", "addcmul", "addcdiv",
           "masked_fill", "index_put", "index_add", "index_reduce", "scatter", "scatter_add", "scatter_reduce", "true_divide",
           "multiply", "subtract", "xlogy", "copysign", "float_power")
# the in-place forms of the aliases (pointwise/aliases.py) and others torch has. NOTE: not the
# comparisons' (gt_ …, in _ELSEWHERE): the comparison op has no Node, where PyTorch's gt_ records GtBackward0
_ALIASES = ("absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "arctan2", "negative", "fix",
            "divide", "sgn", "conj_physical")
_INPLACE = frozenset(_UNARY + _BINARY + _ALIASES + ("sinc", "deg2rad", "rad2deg", "heaviside", "acosh", "asinh",
                                                    "atanh", "clip", "floor_divide", "i0", "mvlgamma",
                                                    "addmm", "addmv", "addr", "addbmm", "baddbmm", "renorm",
                                                    "cumsum", "cumprod", "tril", "triu", "igamma", "igammac",
                                                    "gcd", "lcm", "ldexp", "nextafter", "index_fill", "index_copy",
                                                    "masked_scatter", "put", "bitwise_and", "bitwise_or",
                                                    "bitwise_xor", "bitwise_not", "bitwise_left_shift",
                                                    "bitwise_right_shift"))


def _sizes_method(fn):
    def method(self, *sizes, **kwargs):
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
            sizes = sizes[0]
        return fn(self, list(sizes), **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _op_entry(name):
    """The registry entry of op `name`, its family imported; None when there is no such op
    (an unknown name imports nothing: `hasattr(t, "foo")` stays cheap)."""
    from . import _FAMILY_OF

    if name not in _FAMILY_OF and not _registered(name):
        return None
    try:
        return get_op(name)
    except UnknownOperatorError:
        return None


def _registered(name) -> bool:
    from ..dispatcher.dispatcher import _operators

    return name in _operators


def _op_method(entry):
    """Step 3: the method of an op whose first argument is `self`, or None."""
    args = entry.schema.arguments
    if "::" in entry.name or not args or args[0].name != "self":
        return None
    rest = [a for a in args[1:] if not a.has_default]
    positional = [a for a in args[1:] if not a.kwarg_only]
    # varargs sizes only where the int list is the one positional argument: t.roll(1, 0) is
    # shifts=1, dims=0 and t.logsumexp(0, True) is keepdim=True, as in PyTorch
    if (len(rest) == 1 and rest[0] is args[1] and args[1].is_list and args[1].base == "int"
            and len(positional) == 1):
        return _sizes_method(entry.function)      # t.reshape(2, 3) and t.reshape([2, 3])
    return entry.function


def _elsewhere(name):
    module, attribute = _ELSEWHERE[name]
    method = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
    if method.__name__ == "_" + name:               # _uniform_ is Tensor.uniform_ in tracebacks too
        method.__name__ = method.__qualname__ = name
    return method


def _method_named(name):
    """Tensor's method `name` (steps 2, 3 and 5), or None."""
    if name in _ELSEWHERE:
        return _elsewhere(name)
    entry = _op_entry(name)
    method = _op_method(entry) if entry is not None else None
    if method is not None:
        return _view_method(method) if name == "view" else method
    if name[-1:] == "_" and name[:-1] in _INPLACE:
        entry = _op_entry(name[:-1])
        if entry is not None:
            from ._inplace import _method
            return _method(name, entry.function)
    return None


class _LazyMethod:
    """Tensor's attribute `name` until its first use, which binds the method in its place (or,
    where the name is no method, removes it and raises AttributeError, as a missing name does).

    NOTE: a descriptor per name, not `Tensor.__getattr__`: a class with __getattr__ makes every
    attribute read of its instances (`t._data`, `t._keys`, dozens per recorded op) go through
    the slow generic lookup, which CPython's specialising interpreter cannot specialise."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, cls=None):
        name = self.name
        method = _method_named(name)
        if Tensor.__dict__.get(name) is self:
            if method is None:
                delattr(Tensor, name)
            else:
                setattr(Tensor, name, method)
        if method is None:
            raise AttributeError(f"'{(cls if obj is None else type(obj)).__name__}' object has no attribute '{name}'")
        return method if obj is None else getattr(obj, name)


def _dir(self) -> list:
    """dir(tensor): its attributes, the lazily bound methods resolved first, so that every name it
    lists can be read (as torch's: a name that is an op but no method is not listed)."""
    for name, value in list(Tensor.__dict__.items()):
        if value.__class__ is _LazyMethod:
            method = _method_named(name)
            if method is None:
                delattr(Tensor, name)
            else:
                setattr(Tensor, name, method)
    return object.__dir__(self)


def _lazy_names() -> set:
    """The names steps 2, 3 and 5 may bind: every op of the table of contents or already registered
    (step 3 keeps those whose first argument is `self`), the helpers of other modules, the in-place
    variants."""
    from . import _FAMILY_OF, _HELPERS
    from ..dispatcher.dispatcher import _operators

    ops = (set(_FAMILY_OF) - _HELPERS) | set(_operators)
    return {n for n in ops if "::" not in n} | set(_ELSEWHERE) | {f"{n}_" for n in _INPLACE}


def _bound_on_first_call(name, resolve):
    """An operator's stand-in on the type (where Python looks operators up): its first call
    binds the real one in its place."""
    def method(self, *args, **kwargs):
        real = resolve()
        setattr(Tensor, name, real)
        return real(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def _iop(name):
    def method(self, other):
        return getattr(self, name)(other)
    method.__name__ = method.__qualname__ = f"__i{name[:-1]}__" if name != "div_" else "__itruediv__"
    return method


def _view_method(view):
    """Tensor.view: `t.view(dtype)` is the bitcast, anything else the `view` op's sizes."""
    def method(self, *args, **kwargs):
        if (len(args) == 1 and not kwargs and isinstance(args[0], dtypes.dtype)) or set(kwargs) == {"dtype"}:
            from .conversion import _view_dtype
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
    for name in ("__getitem__", "__setitem__"):                                        # step 2
        setattr(Tensor, name, _bound_on_first_call(name, lambda name=name: _elsewhere(name)))
    for method, op in _OPERATORS.items():                                              # step 4
        setattr(Tensor, method, _bound_on_first_call(method, lambda op=op: getattr(_ops, op)))
    for name in ("add_", "sub_", "mul_", "div_"):                                      # step 5
        method = _iop(name)
        setattr(Tensor, method.__name__, method)
    for name in _lazy_names():                                                         # steps 2, 3, 5
        if name not in Tensor.__dict__:
            setattr(Tensor, name, _LazyMethod(name))       # bound on first use
    Tensor.__dir__ = _dir
    if "__getattr__" in Tensor.__dict__:
        del Tensor.__getattr__              # _tensor's, which loaded the library: reads of slots are fast again
    for name in _UNTIL_LOADED:
        if hasattr(Tensor.__dict__.get(name), "stand_in"):
            raise RuntimeError(f"Tensor.{name} is still _tensor's stand-in: bind it here")
