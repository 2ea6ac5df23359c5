"""torch.nn.Parameter (torch/nn/parameter.py): a Tensor subclass that a Module registers as
one of its parameters when it is assigned as an attribute (`self.weight = Parameter(...)`).

`Parameter(t)` shares t's memory and version counter (PyTorch's `_make_subclass` on a
detached alias), is a leaf, and requires grad unless told otherwise. Ops on a Parameter
return plain Tensors, as in PyTorch.

torch.nn.Buffer (PyTorch 2.5+) is not a class of tensors but a mark: `Buffer(t, persistent=...)`
is a detached alias of t (its requires_grad kept) with `_is_buffer` and `persistent` set, and
`isinstance(x, Buffer)` asks for the mark (torch's _BufferMeta). A Module registers a marked
tensor assigned as an attribute as a buffer, persistent as marked.

UninitializedParameter and UninitializedBuffer are the lazy modules' placeholders of unknown
shape (see UninitializedTensorMixin); `is_lazy` tells them apart.
"""
from __future__ import annotations

from .._tensor import Tensor
from ..overrides import _disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


class Parameter(Tensor):
    __slots__ = ()
    # (as torch's: no handler of its own, so ops on a Parameter give plain Tensors; the dispatcher
    # takes it as a plain Tensor without asking for one)
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            import agrad
            data = agrad.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data): expected a Tensor, got {type(data).__name__}")
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass        # NOTE: everything happens in __new__

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.data.clone(), self.requires_grad)
        return memo[id(self)]

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


Parameter.__module__ = "agrad.nn"


class _BufferMeta(type):
    # NOTE: as torch's: `isinstance(t, Buffer)` is True for any tensor with the _is_buffer mark, since
    # Buffer(...) returns a plain Tensor (a buffer stays a Tensor through `module.to` and state_dict)
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that, assigned as a Module attribute, is registered as one of its buffers
    (part of its state, not a parameter); `persistent=False` keeps it out of the state_dict."""
    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            import agrad
            data = agrad.empty(0)
        # NOTE: torch calls data.detach() unchecked, so anything else raises its AttributeError
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


Buffer.__module__ = "agrad.nn"


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share (torch/nn/parameter.py): a tensor
    whose shape is not known yet. It holds an empty tensor of the dtype and device to materialize
    with; `materialize(shape)` gives it a tensor of that shape and turns it into its `cls_to_become`
    in place (same object: an optimizer built before the lazy module's first forward trains it).

    Until then it refuses what torch's `__torch_function__` refuses: every op of the dispatcher
    (`_op_guard`, which the dispatcher asks of a Tensor subclass it is passed) and every Tensor
    method but the conversions below (an UninitializedBuffer's results are UninitializedBuffers, by
    Tensor.__torch_function__: `module.double()` before the first forward leaves it uninitialized);
    properties (`dtype`, `device`, `requires_grad`, `grad`, `data` …) still answer, `.shape` raises
    torch's RuntimeError, the repr is `<UninitializedParameter>`. (A property that runs an op, `.T`,
    is refused here where torch answers.)"""
    __slots__ = ()
    cls_to_become = None

    # torch's _allowed_methods, by name (char and short where agrad has them)
    _allowed_methods = frozenset({"size", "copy_", "is_complex", "is_floating_point", "half", "float", "double",
                                  "char", "short", "int", "long", "cuda", "cpu", "to", "get_device",
                                  "materialize", "share_memory_"})
    # the dispatcher's ops those methods run
    _allowed_ops = frozenset({"to", "_to_copy", "copy"})

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give this tensor memory of `shape` (on its own device and dtype unless told) and make it a
        `cls_to_become` (Parameter or Tensor)."""
        import agrad
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = agrad.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    def __deepcopy__(self, memo):
        raise self._refusal("<method '__deepcopy__' of 'agrad.Tensor' objects>")

    @classmethod
    def _refusal(cls, func) -> ValueError:
        return ValueError(f"Attempted to use an uninitialized parameter in {func}. This error happens when you are "
                          f"using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` "
                          "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
                          "parameters before calling torch functions")

    @classmethod
    def _op_guard(cls, op) -> None:
        if op.name not in cls._allowed_ops:
            raise cls._refusal(repr(op))

    def __getattribute__(self, name):
        # NOTE: torch's __torch_function__ sees every Tensor method called on the tensor; here a method
        # of Tensor's (not a property, not this class's own) is refused when it is looked up
        if name[0] != "_" and name not in UninitializedTensorMixin._allowed_methods:
            for klass in type(self).__mro__:
                found = klass.__dict__.get(name)
                if found is not None:
                    kind = type(found)
                    if klass in (Tensor, Parameter) and hasattr(kind, "__get__") and not hasattr(kind, "__set__"):
                        raise type(self)._refusal(f"<method '{name}' of 'agrad.Tensor' objects>")
                    break
        return object.__getattribute__(self, name)


def is_lazy(param) -> bool:
    """Whether `param` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


def _uninitialized(cls, requires_grad, device, dtype):
    import agrad
    data = agrad.empty(0, device=device, dtype=dtype)
    if requires_grad and not (data.is_floating_point() or data.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t = cls._make(data._data, data._device, data._keys)
    Tensor.requires_grad_(t, requires_grad)
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's before its first forward); it
    becomes a Parameter when materialized."""
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _uninitialized(cls, requires_grad, device, dtype)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy BatchNorm's running statistics); it becomes a
    Tensor when materialized."""
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _uninitialized(cls, requires_grad, device, dtype)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


for _cls in (UninitializedParameter, UninitializedBuffer):
    _cls.__module__ = "agrad.nn"
