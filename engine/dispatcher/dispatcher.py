"""The dispatcher: operator name -> OperatorEntry -> kernel per dispatch key.

A call computes its key set from the tensor arguments (their backend key, plus
Autograd when one requires grad), adds the thread-local included keys and drops
the excluded ones (grad mode off drops Autograd), then runs the kernel of the
highest-priority key. The key set -> kernel lookup is cached per operator, so a
call costs one dict lookup after the first.

Kernels are boxed: `kernel(op, keyset, args)` with `args` a list in schema order.
"""
from __future__ import annotations

import sys
import warnings

from .._tensor import Tensor, load_op_library
from .. import codegen
from ..creation import tensor as _tensor_of
from ..generator import seed_of
from ..dispatch_keys import (
    _ALIAS_TARGETS,
    AUTOGRAD,
    BACKEND_KEYS,
    FORWARD_AD,
    RUNTIME_KEYS,
    TORCH_FUNCTION,
    DispatchKey,
    format_keyset,
    parse_key,
)
from ..grad_mode import is_grad_enabled, no_grad, tls
from ..messages import check_result_cast
from ..overrides import _dispatch_op, _disabled_torch_function_impl
from ..watchers import op_observers as _observers
from .schema import Schema, parse_schema

__all__ = ["OperatorEntry", "define", "impl", "register_fallback", "get_op", "all_ops", "ops", "namespace",
           "UnknownOperatorError", "FALLTHROUGH", "Deferred", "keyset_for", "call"]

_NUMBER_TYPES = (int, float, bool, complex)
_COMPOSITE_SERVES = frozenset(_ALIAS_TARGETS[DispatchKey.CompositeImplicitAutograd])
_EXPLICIT_SERVES = frozenset(_ALIAS_TARGETS[DispatchKey.CompositeExplicitAutograd])


class UnknownOperatorError(KeyError):
    def __str__(self):
        return self.args[0]


def FALLTHROUGH(op, keyset, args):
    """Marker kernel: skip this key and try the next one (PyTorch's fallthrough)."""
    raise AssertionError("FALLTHROUGH is never called")


class Deferred:
    """A kernel registered as what makes it: made on the first lookup that reaches its key,
    then kept in its place. The op library registers its generated kernels so: an op costs
    no compile until it runs, and then only for the keys it runs with (CPU, not CUDA or Meta)."""
    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make

    def __repr__(self):
        return f"<Deferred {getattr(self.make, '__qualname__', self.make)}>"


class OperatorEntry:
    """One operator: its schema, its kernels per dispatch key, and the lookup cache."""
    __slots__ = ("name", "schema", "dispatch_table", "_cache", "defined_at", "registered_at",
                 "tensor_positions", "list_positions", "intlist_positions", "wraps_numbers",
                 "has_backward", "doc", "function", "info", "given_none", "_packet", "__weakref__")

    def __init__(self, schema: Schema, defined_at: str, doc: str = ""):
        self.name = schema.name
        self.schema = schema
        self.dispatch_table: dict[DispatchKey, object] = {}
        self._cache: dict[int, object] = {}
        self.defined_at = defined_at
        self.registered_at: dict[DispatchKey, str] = {}
        args = schema.arguments
        self.tensor_positions = tuple(i for i, a in enumerate(args) if a.is_tensor)
        self.list_positions = frozenset(i for i, a in enumerate(args) if a.is_tensor and a.is_list)
        self.intlist_positions = tuple(i for i, a in enumerate(args) if a.base in ("int", "SymInt") and a.is_list)
        self.wraps_numbers = False      # elementwise ops keep Python numbers as numbers
        self.has_backward = False
        self.doc = doc
        self.function = None            # the Python-level function, agrad.<name>
        self.info = None                # the op library's declaration (agrad.ops.registry.OpInfo)
        self.given_none = {}            # argument -> what an explicit None means (see define)
        self._packet = None             # its OpOverloadPacket, made when first asked for (packet())

    def __repr__(self):
        return f"<OperatorEntry {self.schema}>"

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def packet(self):
        """The op's OpOverloadPacket (`agrad.ops.aten.<name>`), one per operator."""
        packet = self._packet
        if packet is None:
            from .overloads import OpOverloadPacket
            packet = self._packet = OpOverloadPacket(self)
        return packet

    def call_boxed(self, args: list):
        """Call with the arguments as one list in schema order (PyTorch's callBoxed): how code
        below the op library (a view's replay in `_tensor`) calls an op it was handed."""
        return call(self, list(args))

    def keys(self) -> list[str]:
        """The keys with a kernel; a fallthrough (skip to the next key) is marked as one."""
        return [k.name if kernel is not FALLTHROUGH else f"{k.name}[fallthrough]"
                for k, kernel in self.dispatch_table.items()]

    def has_kernel(self, key) -> bool:
        return parse_key(key) in self.dispatch_table

    def kernel(self, key):
        """The kernel registered for `key` (None if none), made now if it was Deferred."""
        key = parse_key(key)
        kernel = self.dispatch_table.get(key)
        if kernel.__class__ is Deferred:
            kernel = self.dispatch_table[key] = kernel.make()
        return kernel

    def generate(self) -> None:
        """Make the op's function and every Deferred kernel now, not on their first call
        (`agrad ops NAME --source` shows the code)."""
        codegen.resolve(self.function)
        for key in list(self.dispatch_table):
            self.kernel(key)

    # -- lookup --------------------------------------------------------------------
    def lookup(self, keyset: int):
        kernel = self._cache.get(keyset)
        if kernel is None:
            kernel = self._cache[keyset] = self._compute_kernel(keyset)
        return kernel

    def _kernel_for_key(self, key: DispatchKey):
        # PyTorch's order: the key's own kernel, then a CompositeExplicitAutograd kernel (a backend key),
        # then a CompositeImplicitAutograd kernel, then the key's fallback.
        table = self.dispatch_table
        kernel = table.get(key)
        if kernel is None:
            alias = DispatchKey.CompositeExplicitAutograd
            kernel = table.get(alias) if key in _EXPLICIT_SERVES else None
            if kernel is None:
                alias = DispatchKey.CompositeImplicitAutograd
                kernel = table.get(alias) if key in _COMPOSITE_SERVES else None
            if kernel is None:
                serves = _fallback_serves.get(key)
                return _fallbacks.get(key) if serves is None or serves(self) else FALLTHROUGH
            key = alias
        if kernel.__class__ is Deferred:
            kernel = table[key] = kernel.make()
        return kernel

    def _compute_kernel(self, keyset: int):
        if not self.tensor_positions and not keyset & BACKEND_KEYS:
            keyset |= DispatchKey.CPU       # no Tensor argument (profiler::_record_function_enter): the default backend's
        for key in RUNTIME_KEYS:
            if not keyset & key:
                continue
            kernel = self._kernel_for_key(key)
            if kernel is FALLTHROUGH:
                continue
            if kernel is None:
                raise NotImplementedError(
                    f"Could not run '{self.name}' with arguments from the '{key.name}' backend. "
                    f"'{self.name}' is only available for these backends: [{', '.join(self.keys())}].")
            return kernel
        if not keyset & BACKEND_KEYS:
            raise TypeError(f"{self.name}(): expected at least one argument to be a Tensor")
        raise NotImplementedError(f"{self.name}: no kernel for {format_keyset(keyset)}")

    def explain(self, keyset: int) -> str:
        """The path a call with `keyset` takes, e.g. 'Autograd -> CPU' (for `agrad inspect`)."""
        steps = []
        for key in RUNTIME_KEYS:
            if not keyset & key:
                continue
            kernel = self._kernel_for_key(key)
            if kernel is FALLTHROUGH:
                continue
            if kernel is None:
                steps.append(f"{key.name} (missing)")
                break
            if kernel is self.dispatch_table.get(key):
                steps.append(key.name)
            elif kernel is self.dispatch_table.get(DispatchKey.CompositeImplicitAutograd):
                steps.append("CompositeImplicitAutograd")
                break
            elif kernel is self.dispatch_table.get(DispatchKey.CompositeExplicitAutograd):
                steps.append("CompositeExplicitAutograd")
                break
            else:
                steps.append(f"{key.name} (fallback)")
            if key != DispatchKey.Autograd:
                break
        return " -> ".join(steps)

    def redispatch(self, keyset: int, args):
        """Call the kernel below the current key, as VariableType does below Autograd."""
        return self.lookup(keyset)(self, keyset, args)


# ---- the registry -------------------------------------------------------------------

_operators: dict[str, OperatorEntry] = {}
# (the TorchFunction key's: a call that a __torch_function__ handler wants goes to it, overrides.py)
_fallbacks: dict[DispatchKey, object] = {DispatchKey.TorchFunction: _dispatch_op}
_fallback_serves: dict[DispatchKey, object] = {}


def _caller(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def define(schema: str, *, doc: str = "", wraps_numbers: bool = False, given_none=None,
           _depth: int = 2) -> OperatorEntry:
    """Register an operator. `wraps_numbers`: Python numbers in its Tensor arguments stay
    numbers (PyTorch's wrapped numbers: elementwise ops), else they become 0-d tensors.
    `given_none`: {argument: value} for an optional argument whose None, when passed, selects
    another of PyTorch's overloads than leaving it out does (`x.sum()` is sum, SumBackward0;
    `x.sum(dim=None)` is sum.dim_IntList, SumBackward1): the None passed arrives as `value` (the
    overload's equivalent, [] for every dimension), the argument left out as its default."""
    parsed = parse_schema(schema)
    where = _caller(_depth)
    existing = _operators.get(parsed.name)
    if existing is not None:
        raise RuntimeError(
            f"Tried to register an operator ({parsed}) with the same name and overload name multiple times. "
            f"Each overload's schema should only be registered with a single call to def(). "
            f"Duplicate registration: {where}. Original registration: {existing.defined_at}")
    entry = OperatorEntry(parsed, where, doc)
    entry.wraps_numbers = wraps_numbers
    entry.given_none = dict(given_none or {})
    entry.function = _make_function(entry)
    _operators[parsed.name] = entry
    return entry


def impl(name: str, key, kernel, *, _depth: int = 2) -> None:
    """Register `kernel(op, keyset, args)` for `key` (a DispatchKey or its name)."""
    entry = get_op(name)
    key = parse_key(key)
    where = _caller(_depth)
    if key in entry.dispatch_table:
        warnings.warn(f"Overriding a previously registered kernel for the same operator and the same dispatch key\n"
                      f"  operator: {entry.schema}\n    registered at {entry.registered_at[key]}\n"
                      f"  dispatch key: {key.name}\n  new kernel: registered at {where}", stacklevel=_depth)
    entry.dispatch_table[key] = kernel
    entry.registered_at[key] = where
    if key in (DispatchKey.Autograd, DispatchKey.CompositeImplicitAutograd) and kernel is not FALLTHROUGH:
        entry.has_backward = True
    entry._cache.clear()


def register_fallback(key, kernel, *, serves=None) -> None:
    """A kernel that serves every operator for `key` when the operator has none of its own; with
    `serves(entry) -> bool`, only those it says, the key falling through for the others (as PyTorch's
    Autocast key: a fallthrough fallback, and a kernel for each op on its lists). The answer is kept
    in the lookup cache: an op the fallback does not serve costs its calls nothing."""
    key = parse_key(key)
    if key in _ALIAS_TARGETS:
        raise ValueError(f"a fallback cannot be registered for the alias key {key.name}")
    _fallbacks[key] = kernel
    _fallback_serves[key] = serves
    for entry in _operators.values():
        entry._cache.clear()


def get_op(name: str) -> OperatorEntry:
    entry = _operators.get(name)
    if entry is None:
        load_op_library(name)         # its family not yet loaded (see load_op_library)
        entry = _operators.get(name)
    if entry is None:
        import difflib
        close = difflib.get_close_matches(name, list(_operators), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise UnknownOperatorError(f"unknown operator '{name}'{hint}")
    return entry


def all_ops() -> list[OperatorEntry]:
    load_op_library()
    return sorted(_operators.values(), key=lambda e: e.name)


class _OpNamespace:
    """`ops.<name>`: an operator by name, looked up in the registry on first use and kept (PyTorch's
    `torch.ops.aten.<name>`). `ops` gives the op's function: how the layers below the op library
    (autograd's engine and Nodes) call ops, by name through the dispatcher, never by importing the
    library, which is built on top of them. A namespace of `namespace(ns)` gives PyTorch's objects,
    OpOverloadPackets (`agrad.ops.aten.add.Tensor`, `agrad.ops.myops.scale`)."""

    def __init__(self, ns: str = "aten", packets: bool = False):
        self._ns = ns
        self._packets = packets

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        qualified = name if self._ns == "aten" else f"{self._ns}::{name}"
        try:
            entry = get_op(qualified)
        except UnknownOperatorError as exc:       # getattr(ops, name, default) works, as on torch.ops
            if self._packets:
                raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'") from None
            raise AttributeError(str(exc)) from None
        value = entry.packet() if self._packets else entry.function
        setattr(self, name, value)
        return value

    def __repr__(self):
        return f"<module 'agrad.ops.{self._ns}' from 'agrad.ops'>"


ops = _OpNamespace()
_namespaces: dict = {}


def namespace(ns: str) -> _OpNamespace:
    """`agrad.ops.<ns>` (`aten`, `profiler`, a namespace of agrad.library's): its ops' OpOverloadPackets."""
    space = _namespaces.get(ns)
    if space is None:
        space = _namespaces[ns] = _OpNamespace(ns, packets=True)
    return space


def has_namespace(ns: str) -> bool:
    """Whether `ns` names a namespace of operators (one that is registered or that loads on first use)."""
    prefix = ns + "::"
    load_op_library(prefix)         # a namespace the op library registers on first use (profiler) is made now
    return ns == "aten" or any(name.startswith(prefix) for name in _operators)


def keyset_for(device, requires_grad: bool) -> int:
    """The key set a call on tensors of `device` gets (for explaining dispatch without calling)."""
    from .._device import device as Device
    key = Device(device).backend.key
    return key | (AUTOGRAD if requires_grad else 0)


# ---- the call path --------------------------------------------------------------------



def call(op: OperatorEntry, args: list):
    keyset = 0
    for i in op.tensor_positions:
        a = args[i]
        if a.__class__ is Tensor:
            keyset |= a._keys
        elif a is not None:
            keyset |= _unusual_tensor_argument(op, args, i, a)
    for i in op.intlist_positions:
        a = args[i]
        if a is not None and a.__class__ is not tuple and a.__class__ is not str:   # str: conv's padding="same"
            args[i] = (a,) if isinstance(a, int) else tuple(a)
    keyset = (keyset | tls.included) & tls.keep
    kernel = op._cache.get(keyset)
    if kernel is None:
        kernel = op.lookup(keyset)
    if _observers:
        return _observed_call(op, kernel, keyset, args)
    return kernel(op, keyset, args)


def call_with_out(op: OperatorEntry, args: list, out):
    """An op called with `out=` (PyTorch's out variants): computed as usual, then written into `out`
    (a tensor, or a tuple for an op with several results), resized where its shape differs (with
    PyTorch's warning when it had elements), and returned. Autograd records no out= call: one where
    an argument requires grad is refused, as in PyTorch."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if not all(isinstance(o, Tensor) for o in outs):
        raise TypeError(f"{op.name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    tensors = [a for a in args if isinstance(a, Tensor)] + [t for a in args if isinstance(a, (list, tuple))
                                                            for t in a if isinstance(t, Tensor)]
    if tls.included & FORWARD_AD and any(_has_tangent(t) for t in tensors + list(outs)):
        raise NotImplementedError(f"Trying to use forward AD with {op.name}_out that does not support it because "
                                  "it is an out= function")
    if is_grad_enabled() and any(t.requires_grad for t in tensors + list(outs)):
        raise RuntimeError(f"{op.name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    result = call(op, args)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outs):
        raise TypeError(f"{op.name}(): out= takes {len(results)} tensor(s), got {len(outs)}")
    with no_grad():
        for r, o in zip(results, outs):
            check_result_cast(r.dtype.np, o.dtype.np)       # (copy_ below would cast anything)
            if o.shape != r.shape:
                if o.numel():
                    warnings.warn(f"An output with one or more elements was resized since it had shape "
                                  f"{list(o.shape)}, which does not match the required output shape "
                                  f"{list(r.shape)}. This behavior is deprecated, and in a future PyTorch release "
                                  "outputs will not be resized unless they have zero elements. You can explicitly "
                                  "reuse an out tensor t by resizing it, inplace, to zero elements with "
                                  "t.resize_(0).", UserWarning, stacklevel=3)
                o.resize_(r.shape)
            o.copy_(r)
    return out


def _has_tangent(t) -> bool:
    """Whether `t` is a dual tensor of the open forward-AD level (its own tangent: autograd/forward_ad.py)."""
    m = t._autograd_meta
    fw = getattr(m, "fw_grad", None) if m is not None else None
    return fw is not None and fw is not False


def _unusual_tensor_argument(op, args, i, a) -> int:
    """A Tensor position holding something else: a subclass, a list (Tensor[]), or a number
    (kept as a number by elementwise ops, PyTorch's wrapped numbers; else a 0-d tensor). A subclass
    that overrides __torch_function__ (one not disabled, as nn.Parameter's is), or any other object
    with a handler, adds the TorchFunction key: the call goes to the handlers (overrides.py)."""
    if isinstance(a, Tensor):
        cls = a.__class__
        if cls._op_guard is not None:
            cls._op_guard(op)
        if cls.__torch_function__ is _disabled_torch_function_impl or tls.torch_function:
            return a._keys
        return a._keys | TORCH_FUNCTION
    if i in op.list_positions and isinstance(a, (list, tuple)):
        items = list(a)
        keyset = 0
        for j, t in enumerate(items):
            if t.__class__ is Tensor:
                keyset |= t._keys
            elif isinstance(t, Tensor):
                cls = t.__class__
                if cls._op_guard is not None:
                    cls._op_guard(op)
                keyset |= t._keys
                if cls.__torch_function__ is not _disabled_torch_function_impl and not tls.torch_function:
                    keyset |= TORCH_FUNCTION
            elif hasattr(t, "__torch_function__") and not tls.torch_function:
                keyset |= TORCH_FUNCTION
            else:
                items[j] = t = _scalar_tensor(op, i, t)
                keyset |= t._keys
        if keyset & TORCH_FUNCTION:
            return keyset           # (the list as given: the handlers see the call as it was made)
        args[i] = items
        return keyset
    if isinstance(a, _NUMBER_TYPES) or _is_numpy_scalar(a):
        if op.wraps_numbers:
            return 0
        args[i] = t = _scalar_tensor(op, i, a)
        return t._keys
    if hasattr(a, "__torch_function__") and not tls.torch_function:
        return TORCH_FUNCTION
    raise TypeError(f"{op.name}(): argument '{op.schema.arguments[i].name}' must be Tensor, "
                    f"not {type(a).__name__}")


def _observed_call(op, kernel, keyset, args):
    """The call with its watchers told (agrad.watchers.op_observers): op_start(op, args) before,
    op_end(op, result) after (result None when the call raised)."""
    for obs in _observers:
        obs.op_start(op, args)
    result = None
    try:
        result = kernel(op, keyset, args)
        return result
    finally:
        for obs in reversed(_observers):
            obs.op_end(op, result)


def _is_numpy_scalar(a) -> bool:
    import numpy as np
    return isinstance(a, np.generic)


def _scalar_tensor(op, i, value):
    if not (isinstance(value, _NUMBER_TYPES) or _is_numpy_scalar(value)):
        raise TypeError(f"{op.name}(): argument '{op.schema.arguments[i].name}' must be Tensor, "
                        f"not {type(value).__name__}")
    return _tensor_of(value)


def _fast_path(entry: OperatorEntry, names: list[str]) -> str:
    """The common call, inlined: every tensor argument a plain Tensor, the key set's
    kernel already cached, no profiler. Anything else takes `call`'s general path.
    (PyTorch generates its Python bindings for the same reason.)"""
    positions = entry.tensor_positions
    if not positions or entry.list_positions or entry.intlist_positions:
        return ""
    tensors = [names[i] for i in positions]
    if entry.wraps_numbers:
        # elementwise ops keep a Python float or int as a number; it adds no key
        prelude = "".join(f"    _c{k} = {t}.__class__\n" for k, t in enumerate(tensors))
        accepted = " and ".join(f"(_c{k} is _Tensor or _c{k} is float or _c{k} is int)" for k in range(len(tensors)))
        keys = " | ".join(f"({t}._keys if _c{k} is _Tensor else 0)" for k, t in enumerate(tensors))
    else:
        prelude = ""
        accepted = " and ".join(f"{t}.__class__ is _Tensor" for t in tensors)
        keys = " | ".join(f"{t}._keys" for t in tensors)
    return (f"{prelude}    if {accepted} and not _observers:\n"
            f"        keyset = ({keys} | _tls.included) & _tls.keep\n"
            f"        kernel = _cache.get(keyset)\n"
            f"        if kernel is not None:\n"
            f"            return kernel(_op, keyset, [{', '.join(names)}])\n")


# PyTorch's argument parser takes NumPy's names for two arguments (python_arg_parser.cpp,
# numpy_compatibility_arg_names): `x.sum(axis=1)`, `x.mean(keepdims=True)`.
_NUMPY_ALIASES = {"dim": "axis", "keepdim": "keepdims"}
_UNSET = object()


class _Omitted:
    """The value of an argument of `given_none` (see define) left out: its schema default follows."""
    __slots__ = ()

    def __repr__(self):
        return "OMITTED"


OMITTED = _Omitted()


def _numpy_aliases(arguments) -> dict:
    """{argument: alias} for the arguments that may come under their NumPy name: those with a
    default, or required ones that no later positional argument without a default follows."""
    names = {a.name for a in arguments}
    aliases = {}
    for i, a in enumerate(arguments):
        alias = _NUMPY_ALIASES.get(a.name)
        if alias is None or alias in names:
            continue
        later = [b for b in arguments[i + 1:] if not b.kwarg_only]
        if a.has_default or a.kwarg_only or all(b.has_default for b in later):
            aliases[a.name] = alias
    return aliases


def _alias_prelude(py_name: str, arguments, aliases: dict) -> str:
    lines = []
    for i, a in enumerate(arguments):
        alias = aliases.get(a.name)
        if alias is None:
            continue
        lines.append(f"    if {alias} is not _UNSET:\n")
        if a.has_default:
            lines.append(f"        if {a.name} is not _d{i}:\n"
                         f"            raise TypeError(\"{py_name}() got multiple values for argument "
                         f"'{a.name}' (as '{alias}')\")\n"
                         f"        {a.name} = {alias}\n")
        else:
            lines.append(f"        if {a.name} is not _UNSET:\n"
                         f"            raise TypeError(\"{py_name}() got multiple values for argument "
                         f"'{a.name}' (as '{alias}')\")\n"
                         f"        {a.name} = {alias}\n"
                         f"    elif {a.name} is _UNSET:\n"
                         f"        raise TypeError(\"{py_name}() missing required argument '{a.name}'\")\n")
    return "".join(lines)


def _generator_prelude(py_name: str) -> str:
    """A random op's `generator=` (PyTorch's argument): its schema takes `int? seed`, which a graph
    file can write; a Generator given becomes the seed it draws (generator.seed_of)."""
    return (f"    if generator is not None:\n"
            f"        if seed is not None:\n"
            f"            raise TypeError(\"{py_name}() takes a seed or a generator, not both\")\n"
            f"        seed = _seed_of(generator)\n")


def _make_function(entry: OperatorEntry):
    """`def add(self, other, *, alpha=1)` that calls the dispatcher, generated on its first call
    (codegen.deferred: an op a program never calls costs no compile).

    A generated signature binds arguments at C speed; inspect.Signature.bind would
    cost more than the whole rest of the call.
    """
    py_name = entry.name.split("::")[-1]
    fn = codegen.deferred(py_name, lambda: _function_source(entry, py_name), owner=entry.name)
    fn.__doc__ = f"{entry.schema}\n\n{entry.doc}".strip()
    fn.__qualname__ = py_name
    fn.__module__ = "agrad"
    fn.op = entry
    return fn


def _function_source(entry: OperatorEntry, py_name: str):
    params, names, defaults, given_none = [], [], {}, []
    star = False
    arguments = entry.schema.arguments
    aliases = _numpy_aliases(arguments)
    for i, a in enumerate(arguments):
        if a.kwarg_only and not star:
            params.append("*")
            star = True
        pname = a.name
        if pname in entry.given_none:
            defaults[f"_d{i}"] = OMITTED         # told apart from a None passed
            params.append(f"{pname}=_d{i}")
            given_none.append(f"    if {pname} is _d{i}:\n        {pname} = _default{i}\n"
                              f"    elif {pname} is None:\n        {pname} = _none{i}\n")
            defaults[f"_default{i}"], defaults[f"_none{i}"] = a.default, entry.given_none[pname]
        elif a.has_default:
            defaults[f"_d{i}"] = a.default
            params.append(f"{pname}=_d{i}")
        elif pname in aliases and not a.kwarg_only:
            params.append(f"{pname}=_UNSET")      # may come as its alias instead
        else:
            params.append(pname)
        names.append(pname)
    if aliases:
        params += ([] if star else ["*"]) + [f"{alias}=_UNSET" for alias in aliases.values()]
        star = True
    params += ([] if star else ["*"]) + ["out=None"]            # PyTorch's out variants (call_with_out)
    takes_generator = any(a.name == "seed" and a.base == "int" and a.optional for a in arguments)
    if takes_generator:
        params.append("generator=None")
    src = (f"def {py_name}({', '.join(params)}):\n"
           f"{_alias_prelude(py_name, arguments, aliases)}"
           f"{_generator_prelude(py_name) if takes_generator else ''}"
           f"{''.join(given_none)}"
           f"    if out is not None:\n"
           f"        return _call_with_out(_op, [{', '.join(names)}], out)\n"
           f"{_fast_path(entry, names)}"
           f"    return _call(_op, [{', '.join(names)}])\n")
    namespace = {"_call": call, "_call_with_out": call_with_out, "_op": entry, "_cache": entry._cache,
                 "_seed_of": seed_of, "_Tensor": Tensor, "_tls": tls, "_observers": _observers, "_UNSET": _UNSET,
                 **defaults}
    return src, namespace, f"<agrad op {entry.name}>"
