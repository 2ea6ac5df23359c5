"""`defop`: declare an op once — schema, kernel, Meta rule, backward formulas, samples.

From one declaration this registers, through the dispatcher's own `define`/`impl`:
- a `CPU` and a `CUDA` kernel (the same array-API function, called with `xp` =
  NumPy or CuPy, after PyTorch's type promotion of the tensor arguments),
- a `Meta` kernel (the shape rule, on MetaArrays),
- an `Autograd` kernel that records a Node named as PyTorch names it
  (`MulBackward0`), saves exactly what the formulas of the inputs that need a
  gradient use (parameters name what is saved, as in derivatives.yaml), and
  redispatches below Autograd,
or a single `CompositeImplicitAutograd` kernel for ops written with other ops.
Formulas are written with agrad ops, so with create_graph they are differentiated
again; broadcasting is undone centrally by the engine (validate_outputs).
"""
from __future__ import annotations

import dis
import functools
import inspect
import types

import numpy as np

from .. import dtypes
from .._device import _BACKENDS
from .._tensor import AutogradMeta, Tensor, VariableVersion, filled, load_op_library, make_view
from ..autograd import recording
from ..autograd.anomaly_mode import _state as _anomaly
from ..autograd.edge import INVALID_EDGE
from ..autograd.engine import register_release, should_compute_output
from ..autograd.node import (_METADATA, ZEROS, Node, _next_sequence_nr, grad_accumulator, gradient_edge, metadata_of,
                             record_outputs)
from ..autograd.saved_variable import RELEASED as _RELEASED
from ..autograd.saved_variable import (SAVED_NONE, SavedVariable, check_unversioned,
                                       save_input_value, save_output, save_value, saved_as_is,
                                       saved_output_variable, unpack_output)
from ..backends import get_backend  # importing backends registers cpu, cuda and meta
from ..backends.meta import MetaArray
from .. import codegen
from ..dispatch_keys import AUTOGRAD, PYTHON, DispatchKey
from ..dispatcher import FALLTHROUGH, Deferred, define, impl
from ..errors import DtypeNotImplementedError, UnsupportedOnDeviceError
from ..fp_warnings import QUIET as _QUIET, state as _fp_state
from ..grad_mode import saved_hooks_in_use, tls
from ..messages import scalar_type_name
from ._common import conj_of
from .. import watchers as _watchers
from ..watchers import op_observers as _observers

__all__ = ["defop", "OpInfo", "registered", "promote_same", "promote_float"]

_RESERVED = {"grad", "grads", "result"}


class OpInfo:
    """The op library's record of one op (what tests, `agrad ops` and Meta read)."""

    def __init__(self, entry, *, kernel, promote, grads, composite, samples, backward_names,
                 differentiable, gradgrad, torch, tags, special=False, saved_as=None, meta=None, overload=None):
        self.entry = entry
        self.name = entry.name
        self.kernel = kernel
        self.meta = meta                  # the Meta rule (shape and dtype of the outputs)
        self.overload = overload          # which of backward_names a call records (squeeze's three)
        self.special = special            # the kernel takes the backend's special functions (SciPy)
        self.promote = promote
        self.grads = grads
        self.composite = composite
        self.samples = samples
        self.backward_names = backward_names
        self.differentiable = differentiable
        self.gradgrad = gradgrad          # whether PyTorch's op supports double backward
        self.torch = torch                # how the reference script calls PyTorch's op
        self.tags = tags
        self.saved_as = saved_as or {}    # saved name -> how PyTorch's Node shows it (see defop)
        self._array_grads = None          # made with the Autograd kernel (see array_grads)

    @property
    def array_grads(self):
        """The formulas on arrays, when the op has them: made with its Autograd kernel, on
        the op's first call that records (or here)."""
        if self.grads is not None and self.composite is None:
            self.entry.kernel(DispatchKey.Autograd)
        return self._array_grads

    @property
    def forward_ad_supported(self) -> bool:
        """False for an op with a not_implemented derivative: PyTorch's codegen derives no forward
        formula for it, and a call with any tangent among its inputs is refused (forward_ad.py)."""
        return not any(isinstance(f, NotImplementedDerivative) for f in (self.grads or {}).values())

    def __repr__(self):
        return f"<OpInfo {self.entry.schema}>"


_infos: dict[str, OpInfo] = {}


def registered() -> list[OpInfo]:
    load_op_library()           # every family
    return [_infos[k] for k in sorted(_infos)]


def get_info(name: str) -> OpInfo:
    info = _infos.get(name)
    if info is None:
        load_op_library(name)
        info = _infos[name]
    return info


# ---- type promotion of tensor arguments ------------------------------------------------

def _needs_promotion(arrays, positions) -> bool:
    """False in the common case — every array argument has one floating dtype and any
    Python numbers are int/float, which cannot change it — so promotion costs nothing."""
    dt = None
    for i in positions:
        a = arrays[i]
        cls = a.__class__
        if cls is float or cls is int:
            continue
        d = getattr(a, "dtype", None)
        if d is None:
            return True
        if dt is None:
            if d.kind != "f":
                return True
            dt = d
        elif d != dt:
            return True
    return False


def promote_same(arrays, positions) -> None:
    """Cast every tensor argument to PyTorch's result_type of them all."""
    if _needs_promotion(arrays, positions):
        _cast(arrays, positions, dtypes.result_type([arrays[i] for i in positions]))


def promote_float(arrays, positions) -> None:
    """As promote_same, then integral/bool -> the default float (exp, div, sqrt …)."""
    if _needs_promotion(arrays, positions):
        _cast(arrays, positions, dtypes.to_float(dtypes.result_type([arrays[i] for i in positions])))


def _cast(arrays, positions, dt) -> None:
    for i in positions:
        a = arrays[i]
        d = getattr(a, "dtype", None)
        if d is not None and d != dt:
            arrays[i] = a.astype(dt)
        elif a.__class__ is int and dt.kind in "iu" and not _fits(a, dt):
            # NOTE: PyTorch wraps a Python int into a narrow integer dtype (uint8 + -1 adds 255); NumPy 2 raises
            arrays[i] = np.array(a).astype(dt)[()]


@functools.lru_cache(maxsize=None)
def _int_range(dt) -> tuple:
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def _fits(value: int, dt) -> bool:
    low, high = _int_range(dt)
    return low <= value <= high


_PROMOTIONS = {None: None, "same": promote_same, "float": promote_float}


# ---- kernels -------------------------------------------------------------------------

def _device_mismatch(op, a, b):
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                       f"{a} and {b}! (when checking arguments for {op.name})")


def _refuse_complex(op, arrays, positions, backend_type) -> None:
    """PyTorch's refusal of a complex operand by a kernel with no complex loop (`"erf_cpu" not
    implemented for 'ComplexFloat'`), for an op not declared `supports_complex`: asked after
    promotion, so a Python complex number that made the operands complex is refused too."""
    for i in positions:
        a = arrays[i]
        for x in (a if a.__class__ is list else (a,)):
            d = getattr(x, "dtype", None)
            if (d is not None and d.kind == "c") or x.__class__ is complex:
                dt = d if d is not None and d.kind == "c" else dtypes.default_complex_dtype().np
                raise DtypeNotImplementedError(f"\"{op.name}_{backend_type}\" not implemented for "
                                               f"'{scalar_type_name(dt)}'")


def _make_backend_kernel(entry, fn, promote, backend_type: str, is_meta: bool, special: bool = False,
                         meta_rule=None, supports_complex: bool = True):
    """A boxed kernel: unwrap tensors to arrays, promote, run `fn`, wrap the result.

    `fn` takes the backend's array module (`xp`) first; with `special` it also takes the
    backend's special-function namespace (scipy.special's API) after it. When NumPy/CuPy reject
    the operands (ValueError: shapes that do not broadcast), the op's `meta_rule` is asked
    first, so the error is PyTorch's message and the engine's typed error. Without
    `supports_complex`, a complex operand is refused (`_refuse_complex`): the fast path below
    sends any dtype it does not expect here."""
    positions = entry.tensor_positions
    list_positions = entry.list_positions
    key = get_backend(backend_type).key
    backends = _BACKENDS        # looked up per call: a stand-in backend may replace the registered one
    ndarray = np.ndarray
    generic = np.generic
    new = object.__new__
    # the common promotion rules are asked first whether there is anything to do (saves their call)
    needs_promotion = _needs_promotion if promote is promote_same or promote is promote_float else None

    def wrap(out, dev):
        # NumPy returns scalars (np.float32) for 0-d results; a Tensor always holds an array.
        if out.__class__ is not ndarray and not is_meta and isinstance(out, generic):
            out = np.asarray(out)
        t = new(Tensor)
        t._data, t._device, t._keys, t._autograd_meta, t._version_counter = out, dev, key, None, None
        return t

    def slow_kernel(op, keyset, args):
        arrays = args[:]
        dev = None
        for i in positions:
            a = arrays[i]
            if a.__class__ is Tensor or isinstance(a, Tensor):
                d = a._device
                if dev is None:
                    dev = d
                elif d is not dev:
                    _device_mismatch(op, dev, d)
                arrays[i] = a._data
            elif a is not None and i in list_positions:
                items = []
                for t in a:
                    if dev is None:
                        dev = t._device
                    elif t._device is not dev:
                        _device_mismatch(op, dev, t._device)
                    items.append(t._data)
                arrays[i] = items
        rec = None if is_meta else _watchers.recorder      # None unless a pass is being recorded
        if rec is not None:
            before = rec.arguments(arrays)
        if is_meta:
            if promote is not None and (needs_promotion is None or needs_promotion(arrays, positions)):
                promote(arrays, positions)
            if not supports_complex:
                _refuse_complex(op, arrays, positions, backend_type)
            out = fn(*arrays)
        else:
            # (NumPy's floating-point warnings off, as PyTorch's kernels give none: fp_warnings;
            # a cast of promotion's may overflow too)
            token = None if _fp_state.get() is _QUIET else _fp_state.set(_QUIET)
            try:
                if promote is not None and (needs_promotion is None or needs_promotion(arrays, positions)):
                    promote(arrays, positions)
                if not supports_complex:
                    _refuse_complex(op, arrays, positions, backend_type)
                try:
                    if special:
                        backend = backends[backend_type]
                        out = fn(backend.xp, backend.special, *arrays)
                    else:
                        out = fn(backends[backend_type].xp, *arrays)
                except ValueError:
                    if meta_rule is not None:
                        meta_rule(*[_as_meta(a) for a in arrays])
                    raise
            finally:
                if token is not None:
                    _fp_state.reset(token)
        if rec is not None:
            return _record(rec, fn, backends[backend_type], special, before, arrays, out, wrap, dev)
        if out.__class__ is ndarray or out.__class__ is MetaArray:       # the common cases, wrapped inline
            t = new(Tensor)
            t._data, t._device, t._keys, t._autograd_meta, t._version_counter = out, dev, key, None, None
            return t
        if out.__class__ is tuple or out.__class__ is list:
            return tuple([wrap(o, dev) for o in out])
        return wrap(out, dev)
    if is_meta or list_positions or not positions or (promote is not None and needs_promotion is None):
        return slow_kernel
    return _specialised_backend_kernel(entry, fn, promote is not None, backend_type, special, key, wrap,
                                       slow_kernel, supports_complex)


def _specialised_backend_kernel(entry, fn, checks_dtypes, backend_type, special, key, wrap, slow_kernel,
                                supports_complex=True):
    """The backend kernel for the common call, generated once per op (PyTorch generates its
    kernels' wrappers): every tensor argument a plain Tensor on one device — with one floating
    dtype when the op promotes, so promotion has nothing to do — and no pass being recorded.
    Anything else (a subclass, mixed dtypes or devices, a rejected operand) is `slow_kernel`'s.
    An op that promotes sends every non-floating dtype there already; one that does not, and is
    not `supports_complex`, sends a complex operand there (to be refused)."""
    n = len(entry.schema.arguments)
    wraps = entry.wraps_numbers
    lines = [f"def kernel(op, keyset, args):",
             f"    if _watchers.recorder is not None:",
             f"        return slow_kernel(op, keyset, args)",
             f"    dev = dt = None"]
    for i in range(n):
        lines.append(f"    x{i} = args[{i}]")
        if i not in entry.tensor_positions:
            continue
        lines += [f"    c = x{i}.__class__",
                  f"    if c is _Tensor:",
                  f"        d = x{i}._device",
                  f"        if dev is None:",
                  f"            dev = d",
                  f"        elif d is not dev:",
                  f"            return slow_kernel(op, keyset, args)",
                  f"        x{i} = x{i}._data"]
        if not checks_dtypes and not supports_complex:
            lines += [f"        if x{i}.dtype.kind == 'c':",
                      f"            return slow_kernel(op, keyset, args)"]
        if checks_dtypes:
            lines += [f"        e = x{i}.dtype",
                      f"        if dt is None:",
                      f"            dt = e",
                      f"        elif e is not dt and e != dt:",
                      f"            return slow_kernel(op, keyset, args)"]
        lines.append(f"    elif x{i} is not None{' and c is not float and c is not int' if wraps else ''}:")
        lines.append(f"        return slow_kernel(op, keyset, args)")
    lines.append("    if dev is None" + (" or dt.kind != 'f'" if checks_dtypes else "") + ":")
    lines.append("        return slow_kernel(op, keyset, args)")
    backend_args = "backend.xp, backend.special" if special else "backend.xp"
    arrays = ", ".join(f"x{i}" for i in range(n))
    lines += ["    backend = _backends[_backend_type]",
              "    token = None if _fp_state.get() is _QUIET else _fp_state.set(_QUIET)   # (fp_warnings)",
              "    try:",
              f"        out = fn({backend_args}, {arrays})",
              "    except ValueError:",
              "        return slow_kernel(op, keyset, args)     # it asks the Meta rule for PyTorch's message",
              "    finally:",
              "        if token is not None:",
              "            _fp_state.reset(token)",
              "    if out.__class__ is _ndarray:",
              "        t = _new(_Tensor)",
              "        t._data, t._device, t._keys, t._autograd_meta, t._version_counter = out, dev, _key, None, None",
              "        return t",
              "    if out.__class__ is tuple or out.__class__ is list:",
              "        return tuple([wrap(o, dev) for o in out])",
              "    return wrap(out, dev)"]
    namespace = {"_watchers": _watchers, "slow_kernel": slow_kernel, "_Tensor": Tensor, "_backends": _BACKENDS,
                 "_backend_type": backend_type, "fn": fn, "_ndarray": np.ndarray, "_new": object.__new__,
                 "_key": key, "wrap": wrap, "_fp_state": _fp_state, "_QUIET": _QUIET}
    return codegen.define(lines, namespace, f"<agrad {backend_type} kernel {entry.name}>", "kernel", owner=entry.name)


def _record(rec, fn, backend, special, before, arrays, out, wrap, dev):
    """The backend kernel's result, its call added to the pass being recorded (engine/replay/recorder.py)."""
    result = tuple([wrap(o, dev) for o in out]) if out.__class__ is tuple or out.__class__ is list else wrap(out, dev)
    rec.kernel(fn, (backend.xp, backend.special) if special else (backend.xp,), before, arrays, out, result)
    return result


def _view_kernel(kernel, view):
    """A view op's backend kernel: its output (each output, for unbind/split) shares memory with
    `self` and is marked a view of it. `view` is True, or a predicate of the arguments for
    ops that only sometimes return a view (reshape copies when the strides do not allow one)."""
    always = view is True

    def view_kernel(op, keyset, args):
        out = kernel(op, keyset, args)
        if always or view(*args):
            rest = tuple(args[1:])
            if out.__class__ is tuple:
                for i, o in enumerate(out):
                    make_view(args[0], o, op, rest, i)
            else:
                make_view(args[0], out, op, rest, None)
        return out
    return view_kernel


def _as_meta(a):
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return MetaArray(a.shape, a.dtype)
    if a.__class__ is list:
        return [_as_meta(x) for x in a]
    return a


def _refusal(name: str, backend_type: str):
    """The kernel of an op its backend declares it cannot run (Backend.refusal): it raises, naming
    the op and why, rather than computing something else; None when the backend runs the op."""
    why = get_backend(backend_type).refusal(name)
    if why is None:
        return None

    def refusing_kernel(op, keyset, args):
        raise UnsupportedOnDeviceError(f"{name} is not supported on device {backend_type}: {why}")
    return refusing_kernel


def _boxed(fn):
    """A kernel written with tensors (composites, user kernels, a device move's cast) as a boxed
    kernel, run with NumPy's floating-point warnings off as a backend kernel is (fp_warnings):
    a cast that overflows (float64 1e300 to float32) is inf without a warning, as in PyTorch."""
    def kernel(op, keyset, args):
        token = None if _fp_state.get() is _QUIET else _fp_state.set(_QUIET)
        try:
            return fn(*args)
        finally:
            if token is not None:
                _fp_state.reset(token)
    return kernel


# ---- the backward Node of a declared op -------------------------------------------------

class OpNode(Node):
    """Backward of one call of a declared op; subclasses are named MulBackward0 etc.

    NOTE: what the formulas use is saved in slots of the Node, `saved_<name>` (one class per op
    declares them), not in a dict: a recorded op keeps its Node alone alive, as PyTorch's
    SavedVariables live inside their Node. A Node's own output (`result`) is saved as its array
    and its version counter (`saved_result`, `saved_result_vc`), not as a SavedVariable holding a
    weak reference. `apply` and `release_variables` are generated per op (`_make_apply`)."""
    __slots__ = ()
    info: OpInfo = None
    saved_names: tuple = ()     # every name a formula of the op saves (each a `saved_<name>` slot)
    list_sizes = None           # the length of each Tensor[] input (a slot of the ops that have one)

    @property
    def saved(self) -> dict:
        """What this call saved, by name, as `inspect` and the in-place and inference checks read
        it: tensors as the Tensor itself (an input at version 0) or as SavedVariables."""
        out = {}
        for name in self.saved_names:
            value = getattr(self, "saved_" + name, _MISSING)
            if value is _MISSING:
                continue
            if name == "result" and self.saved_result_vc is not None:
                value = saved_output_variable(self, value, self.saved_result_vc)
            out[name] = value
        return out

    def set_saved(self, name: str, value) -> None:
        """Replace what was saved as `name` (an in-place op saves its result again, at its new version)."""
        setattr(self, "saved_" + name, value)
        if name == "result":
            self.saved_result_vc = None

    def _read_saved(self, name: str):
        """`grad_fn._saved_<name>`, PyTorch's generated attribute: what this call saved as `name`, as its
        formula sees it (a tensor unpacked, with its checks; None where this call saved nothing under
        that name). Each op's Node class has these as properties (`_saved_properties`): a __getattr__
        would run for every slot a formula reads with getattr(..., default), in the hot path."""
        value = self.saved.get(name)
        if value.__class__ is Tensor:
            value = check_unversioned(value)
        elif value.__class__ is SavedVariable:
            value = value.unpack(self)
        elif value.__class__ is list and value and value[0].__class__ is SavedVariable:
            value = [v.unpack(self) for v in value]
        shown = self.info.saved_as.get(name)
        return value if shown is None else shown(self, value)

    def _raw_saved(self, name: str):
        """`grad_fn._raw_saved_<name>`: the SavedVariable of `name` (`.data`, `.unpack_hook`,
        `register_hooks`), made (and kept, for its hooks) where the Node holds the tensor itself or an
        output's array."""
        value = self.saved.get(name)
        if value.__class__ is Tensor:
            value = saved_as_is(value)
            setattr(self, "saved_" + name, value)
        elif value.__class__ is SavedVariable and name == "result" and self.saved_result_vc is not None:
            self.set_saved(name, value)
        if value.__class__ is SavedVariable:
            return value            # (released: its register_hooks says so, as PyTorch's)
        shown = self.info.saved_as.get(name)
        if value.__class__ in (list, tuple):
            value = type(value)(self._raw_saved_item(v) for v in value)
            if shown is not None:
                value = tuple(SAVED_NONE if v is None else v for v in shown(self, value))
        return value

    @staticmethod
    def _raw_saved_item(value):
        if value is None:
            return SAVED_NONE
        return saved_as_is(value) if value.__class__ is Tensor else value


def _saved_properties(saved_names) -> dict:
    """A Node class's `_saved_<name>` and `_raw_saved_<name>` properties (PyTorch's names; a shape agrad
    saves as `self_shape` is PyTorch's `self_sym_sizes` too)."""
    props = {}
    for name in saved_names:
        value = property(functools.partial(OpNode._read_saved, name=name))
        props[f"_saved_{name}"] = value
        props[f"_raw_saved_{name}"] = property(functools.partial(OpNode._raw_saved, name=name))
        if name.endswith("_shape"):
            props[f"_saved_{name[:-len('_shape')]}_sym_sizes"] = value
    return props


def _zero_filled(node, grads):
    """The incoming gradients of a multi-output op with each missing one as zeros (None: all missing)."""
    if all(g is None for g in grads):
        return None
    return [g if g is not None else filled(shape, 0, dtype, dev)
            for g, (shape, dtype, dev) in zip(grads, node.input_metadata)]


def _array_formulas(entry, grads, array_grads, names):
    """The formulas on arrays for each input in `names`: written out in `array_grads` where they
    truly differ from the Tensor formula (a NumPy function for an agrad op), else derived from
    `grads` (`_on_arrays`); None when an input has neither (the op keeps the Tensor formulas)."""
    array_grads = array_grads or {}
    unknown = set(array_grads) - set(names)
    if unknown:
        raise TypeError(f"{entry.name}: array_grads for {sorted(unknown)}, which have no formula in grads")
    formulas = []
    for name in names:
        formula = array_grads.get(name)
        if formula is None:
            formula = _on_arrays(grads[name])
            if formula is None:
                if array_grads:
                    raise TypeError(f"{entry.name}: array_grads gives formulas for {sorted(array_grads)} but "
                                    f"the formula for {name!r} cannot be derived: write it out too")
                return None
        params = tuple(inspect.signature(formula).parameters)
        if params != tuple(inspect.signature(grads[name]).parameters):
            raise TypeError(f"{entry.name}: the array formula for {name!r} takes {params}; "
                            f"its grads formula takes other parameters")
        formulas.append(formula)
    return formulas


# A formula made of these runs unchanged on NumPy arrays, with the result the ops would give:
# agrad's + - * / and unary - are NumPy's ufuncs (wrapped numbers stay weak scalars in both), and
# a comparison or branch reads only plain values (an array in a condition fails in both). Only
# same-dtype arrays take the array path, so no promotion rule can differ.
_ARRAY_OPERATORS = {"+", "-", "*", "/", "==", "!="}
_PLAIN_OPCODES = {"RESUME", "NOP", "CACHE", "NOT_TAKEN", "TO_BOOL", "LOAD_FAST", "LOAD_FAST_LOAD_FAST",
                  "LOAD_FAST_BORROW", "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "LOAD_SMALL_INT", "RETURN_VALUE",
                  "RETURN_CONST", "UNARY_NEGATIVE", "IS_OP", "JUMP_FORWARD", "POP_JUMP_IF_FALSE",
                  "POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_IF_NONE",
                  "POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
                  "BINARY_ADD", "BINARY_SUBTRACT", "BINARY_MULTIPLY", "BINARY_TRUE_DIVIDE"}       # ≤ 3.10's
_CALL_OPCODES = {"PUSH_NULL", "PRECALL", "CALL", "CALL_FUNCTION", "LOAD_GLOBAL"}


def _on_arrays(formula):
    """`formula` as a function of arrays, derived from its bytecode, or None:
    - made of operators on its parameters and numbers (`grad * result`), and `conj_of` (which takes an
      array as it takes a Tensor: `grad * conj_of(other)`): the formula itself;
    - one call of an op on its parameters and numbers (`tanh_backward(grad, result)`): that
      op's backend kernel on NumPy (`kernel(np, grad, result)`), which is what the op would run."""
    code = getattr(formula, "__code__", None)
    if code is None or code.co_freevars:
        return None
    instructions = [i for i in dis.get_instructions(code)]
    # the only global a plain formula may call: conj_of, itself on arrays (any call is then one of it)
    conjugates = bool(code.co_names) and set(code.co_names) <= {"conj_of"} and \
        formula.__globals__.get("conj_of") is conj_of
    plain = True
    for ins in instructions:
        if ins.opname == "LOAD_CONST" and not isinstance(ins.argval, (int, float, type(None))):
            return None
        if ins.opname in ("BINARY_OP", "COMPARE_OP"):
            plain = plain and ins.argrepr.removeprefix("bool(").removesuffix(")") in _ARRAY_OPERATORS
        elif ins.opname not in _PLAIN_OPCODES and ins.opname != "LOAD_CONST" and \
                not (conjugates and ins.opname in _CALL_OPCODES):
            plain = False
    if plain and (not code.co_names or conjugates):
        return formula
    return _kernel_call(formula, code, instructions)


def _kernel_call(formula, code, instructions):
    steps = [i for i in instructions if i.opname not in ("RESUME", "NOP", "CACHE", "PUSH_NULL", "PRECALL")]
    if len(steps) < 3 or steps[0].opname != "LOAD_GLOBAL" or steps[-2].opname not in ("CALL", "CALL_FUNCTION") \
            or steps[-1].opname != "RETURN_VALUE":
        return None
    op_function = formula.__globals__.get(steps[0].argval)
    entry = getattr(op_function, "op", None) if isinstance(op_function, types.FunctionType) else None
    info = getattr(entry, "info", None)
    if info is None or info.kernel is None or info.promote not in ("same", "float"):     # pointwise kernels
        return None
    arguments, constants = [], {}
    for ins in steps[1:-2]:
        if ins.opname in ("LOAD_FAST", "LOAD_FAST_BORROW"):
            arguments.append(ins.argval)
        elif ins.opname in ("LOAD_CONST", "LOAD_SMALL_INT") and isinstance(ins.argval, (int, float)):
            constants[f"_c{len(constants)}"] = ins.argval
            arguments.append(f"_c{len(constants) - 1}")
        else:
            return None
    if len(inspect.signature(info.kernel).parameters) != len(arguments) + 1:     # not (xp, *args): special
        return None
    params = ", ".join(code.co_varnames[:code.co_argcount])
    source = f"def on_arrays({params}):\n    return _kernel(_np, {', '.join(arguments)})\n"
    return codegen.define(source, {"_kernel": info.kernel, "_np": np, **constants},
                          f"<agrad array formula {entry.name}>", "on_arrays", owner=entry.name)


# the classes an array formula takes as they are: scalars, strings, `None`, shapes
_PLAIN = (float, int, bool, str, type(None), tuple)


def _array_path(params_per_input) -> list:
    """The body of `apply`'s path through `array_grads`: the saved values unpacked to arrays
    (each checked to have the gradient's dtype, else the Tensor formulas run: their promotion is
    PyTorch's, not NumPy's), then each formula whose input needs a gradient."""
    # (a dispatch mode, the Python key included, sees the formulas' ops: they take the dispatcher then)
    lines = ["    if single and grad.__class__ is _Tensor and not _tls.grad_enabled and _watchers.recorder is None "
             "and not _observers and not _tls.included & _PYTHON and _use_arrays[0]:",
             "        g = grad._data",
             "        if g.__class__ is _ndarray:",
             "            dt = g.dtype",
             "            arrays = True"]
    names = sorted({p for params in params_per_input for p in params} - {"grad", "grads"})
    local = {name: f"a_{k}" for k, name in enumerate(names)}
    for name in names:
        v = local[name]
        lines.append(f"            {v} = getattr(self, 'saved_{name}', _MISSING)")
        if name == "result":
            # the Node's own output, saved as its array: its version counter must not have moved
            lines += [f"            vc = getattr(self, 'saved_result_vc', None)",
                      f"            if vc is not None:",
                      f"                if vc.version:",
                      f"                    _unpack_output(self, {v}, vc)     # raises the in-place error",
                      f"                if {v}.dtype is not dt and {v}.dtype != dt:",
                      f"                    arrays = False",
                      f"            else:"]
            ind = "    "
        else:
            ind = ""
        lines += [f"{ind}            c = {v}.__class__",
                  f"{ind}            if c is _Tensor:",
                  f"{ind}                vc = {v}._version_counter",
                  f"{ind}                if vc is not None and (vc.version or vc.detached):",
                  f"{ind}                    _check_unversioned({v})",
                  f"{ind}                {v} = {v}._data",
                  f"{ind}                if {v}.dtype is not dt and {v}.dtype != dt:",
                  f"{ind}                    arrays = False",
                  f"{ind}            elif c is _SavedVariable:",
                  f"{ind}                {v} = {v}.unpack_data()",
                  f"{ind}                if {v}.dtype is not dt and {v}.dtype != dt:",
                  f"{ind}                    arrays = False",
                  f"{ind}            elif c not in _PLAIN and {v} is not _MISSING:",
                  f"{ind}                arrays = False"]
    lines.append("            if arrays:")
    for j, params in enumerate(params_per_input):
        call = ", ".join("g" if p == "grad" else "grads" if p == "grads" else local[p] for p in params)
        lines += [f"                if edges[{j}] is None:",
                  f"                    o{j} = None",
                  f"                else:",
                  f"                    r = _a{j}({call})",
                  f"                    if r is g:",
                  f"                        o{j} = grad",
                  f"                    else:",
                  f"                        if r.__class__ is not _ndarray:",
                  f"                            r = _asarray(r)",
                  f"                        o{j} = t = _new(_Tensor)",
                  f"                        t._data = r",
                  f"                        t._device = grad._device",
                  f"                        t._keys = grad._keys & _NOT_AUTOGRAD",
                  f"                        t._autograd_meta = t._version_counter = None"]
    lines.append("                return [" + ", ".join(f"o{j}" for j in range(len(params_per_input))) + "]")
    return lines


_use_arrays = [True]      # tests switch the array formulas off to compare them with the Tensor ones
_MISSING = object()


def _unpack_lines(name: str, v: str, indent: str) -> list:
    """Lines that read saved `name` into local `v` as the formula takes it (checked for in-place changes)."""
    lines = [f"{v} = self.saved_{name}"]
    if name == "result":
        # the Node's own output: as its array and version counter, or a SavedVariable (see _make_saver)
        lines += ["vc = self.saved_result_vc",
                  "if vc is not None:",
                  f"    {v} = _unpack_output(self, {v}, vc)",
                  f"elif {v}.__class__ is _SavedVariable:",
                  f"    {v} = {v}.unpack(self)",
                  f"elif {v}.__class__ is list:",
                  f"    {v} = [v.unpack(self) if v.__class__ is _SavedVariable else v for v in {v}]"]
    else:
        lines += [f"c = {v}.__class__",
                  "if c is _Tensor:",
                  f"    vc = {v}._version_counter",
                  "    if vc is not None and (vc.version or vc.detached):",
                  f"        _check_unversioned({v})",
                  "elif c is _SavedVariable:",
                  f"    {v} = {v}.unpack(self)",
                  "elif c is list:",
                  f"    {v} = [v.unpack(self) if v.__class__ is _SavedVariable else v for v in {v}]"]
    return [indent + line for line in lines]


def _make_apply(entry, formulas, params_per_input, is_list, array_formulas=None):
    """`apply` of one op's Node classes, generated once (the one way a declared op's backward
    runs): the incoming gradient (several: a multi-output op, missing ones as zeros), the array
    formulas where they apply, else each formula whose input needs a gradient, called with its
    saved arguments read from the Node's slots; a Tensor[] input's formula gives one gradient per
    element (`list_sizes`)."""
    has_list = any(is_list)
    lines = ["def apply(self, grads):",
             "    edges = self.next_fns",
             "    if len(grads) == 1:",
             "        grad = grads[0]",
             "        if grad is None:",
             "            return [None] * len(edges)",
             "        single = True",
             "    else:",
             "        grads = _zero_filled(self, grads)",
             "        if grads is None:",
             "            return [None] * len(edges)",
             "        grad = grads[0]",
             "        single = False"]
    if array_formulas is not None:
        lines += _array_path(params_per_input)
    lines.append("    out = []")
    if has_list:
        lines += ["    sizes = self.list_sizes", "    e = 0"]
    k_list = 0
    for j, params in enumerate(params_per_input):
        call = []
        unpack = []
        for k, name in enumerate(params):
            if name in ("grad", "grads"):
                call.append(name)
                continue
            unpack += _unpack_lines(name, f"v{k}", "        ")
            call.append(f"v{k}")
        formula_call = f"_f{j}({', '.join(call)})"
        if is_list[j]:
            lines += [f"    n = sizes[{k_list}]",
                      "    if _any_edge(edges, e, n):"] + unpack + [
                      f"        out.extend({formula_call})",
                      "    else:",
                      "        out.extend([None] * n)",
                      "    e += n"]
            k_list += 1
            continue
        at = "e" if has_list else str(j)
        if isinstance(formulas[j], NotImplementedDerivative):
            lines += [f"    if not _should_compute(edges[{at}]):",
                      "        out.append(None)",
                      "    else:",
                      f"        raise NotImplementedError({formulas[j].message!r})"]
            if has_list:
                lines.append("    e += 1")
            continue
        lines += [f"    if edges[{at}] is None:",
                  "        out.append(None)",
                  "    else:"] + unpack + [f"        out.append({formula_call})"]
        if has_list:
            lines.append("    e += 1")
    lines.append("    return out")
    namespace = {"_SavedVariable": SavedVariable, "_Tensor": Tensor, "_tls": tls, "_zero_filled": _zero_filled,
                 "_check_unversioned": check_unversioned, "_unpack_output": unpack_output, "_any_edge": _any_edge,
                 "_watchers": _watchers, "_observers": _observers, "_use_arrays": _use_arrays,
                 "_ndarray": np.ndarray, "_MISSING": _MISSING, "_PLAIN": _PLAIN, "_asarray": np.asarray,
                 "_new": object.__new__, "_NOT_AUTOGRAD": ~AUTOGRAD, "_should_compute": should_compute_output,
                 "_PYTHON": PYTHON}
    namespace.update({f"_f{j}": f for j, f in enumerate(formulas)})
    namespace.update({f"_a{j}": f for j, f in enumerate(array_formulas or ())})
    return codegen.define(lines, namespace, f"<agrad backward {entry.name}>", "apply", owner=entry.name)


def _any_edge(edges, start: int, n: int) -> bool:
    for i in range(start, start + n):
        if edges[i] is not None:
            return True
    return False


def _make_release(entry, names):
    """`release_variables` of one op's Node classes: each saved tensor replaced by RELEASED (a
    second backward through it raises), the numbers and shapes kept (a second pass through `x + 1`
    succeeds, as in PyTorch)."""
    lines = ["def release_variables(self):"]
    for name in names:
        if name == "result":
            lines += ["    if getattr(self, 'saved_result_vc', None) is not None:",
                      "        self.saved_result = _RELEASED",
                      "        self.saved_result_vc = None"]
        lines += [f"    v = getattr(self, 'saved_{name}', None)",
                  "    c = v.__class__",
                  "    if c is _Tensor or c is _SavedVariable or (c is list and v and v[0].__class__ is _SavedVariable):",
                  f"        self.saved_{name} = _RELEASED"]
    if len(lines) == 1:
        lines.append("    return None")
    namespace = {"_Tensor": Tensor, "_SavedVariable": SavedVariable, "_RELEASED": _RELEASED}
    return codegen.define(lines, namespace, f"<agrad release {entry.name}>", "release_variables", owner=entry.name)


class _SavePlan:
    """For each mask of inputs that need a gradient: the names their formulas use."""

    def __init__(self, formulas_params):
        self._params = formulas_params
        self._cache = {}

    def names(self, mask: int) -> tuple:
        names = self._cache.get(mask)
        if names is None:
            used = set()
            for k, params in enumerate(self._params):
                if mask >> k & 1:
                    used.update(params)
            names = self._cache[mask] = tuple(sorted(used - {"grad", "grads"}))
        return names


def _make_saver(names, arg_index, op_name):
    """`save(node, out, args)` for one mask of inputs that need a gradient, generated once: sets
    the Node's `saved_<name>` slots to what their formulas use (tensors as save_input_value /
    SavedVariables, shapes, scalars); a single fresh output saved by its own Node as its array and
    a new version counter (PyTorch saves an output without its grad_fn: no cycle, no weak reference)."""
    lines = ["def save(node, out, args):"] + _saver_lines(names, arg_index, "    ")
    return codegen.define(lines, _SAVER_NAMESPACE, f"<agrad save {op_name}>", "save", owner=op_name)


def _saver_lines(names, arg_index, indent: str) -> list:
    """The body of a saver (`_make_saver`), at `indent`; the autograd kernel inlines it where an op's
    masks are few (see _make_autograd_kernel)."""
    lines = []
    for k, (name, kind, index) in enumerate(_save_steps(names, arg_index)):
        slot = f"node.saved_{name}"
        if kind == _SAVE_ARGUMENT:
            lines.append(f"    v{k} = args[{index}]")
            # save_input_value inline: the common case saves the Tensor itself
            # (saved-tensor hooks pack every saved tensor: a SavedVariable then)
            lines.append(f"    {slot} = (v{k} if not _hooks_in_use.count and ((c{k} := v{k}._version_counter) is None or "
                         f"not (c{k}.version or c{k}.detached)) else _save_input(v{k})) if v{k}.__class__ is _Tensor "
                         f"else v{k} if v{k}.__class__ is int or v{k}.__class__ is float else _save_value(v{k})")
        elif kind == _SAVE_RESULT:
            lines += ["    if out.__class__ is _Tensor and out._autograd_meta.__class__ is _AutogradMeta:",
                      "        if out._version_counter is None and not _hooks_in_use.count:",
                      f"            {slot} = out._data",
                      "            node.saved_result_vc = out._version_counter = _VariableVersion()",
                      "        else:",
                      f"            {slot} = _save_output(out)",
                      "            node.saved_result_vc = None",
                      "    else:",
                      f"        {slot} = _save_results(out)",
                      "        node.saved_result_vc = None"]
        elif kind == _SAVE_OPTIONS:
            lines.append(f"    {slot} = (args[{index}]._device, args[{index}].dtype)")
        elif kind == _SAVE_GEOMETRY:
            lines.append(f"    {slot} = (args[{index}].shape, args[{index}].stride(), args[{index}].storage_offset())")
        else:
            lines.append(f"    v{k} = args[{index}]")
            # (a Tensor's array's shape: equal to its agrad.Size, without making one per recorded op)
            lines.append(f"    {slot} = v{k}._data.shape if v{k}.__class__ is _Tensor else [t.shape for t in v{k}] "
                         f"if v{k}.__class__ is list else getattr(v{k}, 'shape', ())")
    if not lines:
        lines.append("    pass                # the formulas use the gradient alone")
    return [indent + line[4:] for line in lines]


def _save_results(out):
    return [SavedVariable(o, True) for o in out] if out.__class__ is tuple else SavedVariable(out, True)


_SAVER_NAMESPACE = {"_save_input": save_input_value, "_save_output": save_output, "_Tensor": Tensor,
                    "_AutogradMeta": AutogradMeta, "_save_value": save_value, "_save_results": _save_results,
                    "_VariableVersion": VariableVersion, "_hooks_in_use": saved_hooks_in_use}


def _save_steps(names, arg_index) -> tuple:
    """What saving `names` does, decided once per mask: (name, _SAVE_RESULT | _SAVE_SHAPE |
    _SAVE_ARGUMENT, argument index)."""
    steps = []
    for name in names:
        if name == "result":
            steps.append((name, _SAVE_RESULT, -1))
        elif name in arg_index:
            steps.append((name, _SAVE_ARGUMENT, arg_index[name]))
        elif name.endswith("_options"):     # `self_options`: (device, dtype), not the tensor
            steps.append((name, _SAVE_OPTIONS, arg_index[name[:-8]]))
        elif name.endswith("_geometry"):    # `self_geometry`: (sizes, strides, storage offset), PyTorch's
            steps.append((name, _SAVE_GEOMETRY, arg_index[name[:-9]]))
        else:                   # `self_shape`: the shape, not the tensor (PyTorch's self_sym_sizes)
            steps.append((name, _SAVE_SHAPE, arg_index[name[:-6]]))
    return tuple(steps)


_SAVE_RESULT, _SAVE_SHAPE, _SAVE_ARGUMENT, _SAVE_OPTIONS, _SAVE_GEOMETRY = 0, 1, 2, 3, 4


def _strip_history(t) -> None:
    """An output derivatives.yaml lists as not differentiable (output_differentiability): no grad_fn,
    no requires_grad, though the Node keeps its metadata (linalg_lu's P)."""
    t._autograd_meta = None
    t._keys &= ~AUTOGRAD


def _make_autograd_kernel(entry, diff_inputs, node_classes, overload, save_plan, arg_index, refused=(),
                          not_differentiable=()):
    """The op's Autograd kernel, generated once per op as PyTorch generates VariableType: the
    edges of its differentiable inputs unrolled into the Node's next_fns and next_nrs (a loop for
    a Tensor[] input), the Node built without a constructor call (its class chosen by `overload`
    where the op has several), the history of a single output set inline (several:
    record_outputs), then what the formulas use saved. No Edge object is made: a leaf's edge is its
    accumulator, input 0; a non-leaf's is its grad_fn and output_nr."""
    lists = entry.list_positions
    has_list = any(pos in lists for pos in diff_inputs)
    lines = ["def kernel(op, keyset, args):"]
    for pos, name, function in refused:         # NotDifferentiable: refused before anything runs
        lines += [f"    a = args[{pos}]",
                  "    if a.__class__ is _Tensor and a._autograd_meta is not None and a.requires_grad:",
                  f"        raise RuntimeError(\"The function '{function}' is not differentiable with respect to "
                  f"argument '{name}'. This input cannot have requires_grad True.\")"]
    lines += ["    below = keyset & _after_autograd",
             "    k = _cache.get(below)",
             "    if k is None:",
             "        k = op.lookup(below)",
             "    out = k(op, below, args)"]
    plan = None if has_list or overload is not None or not_differentiable else \
        _recording_plan(node_classes[0], diff_inputs, save_plan, arg_index)
    if plan is not None:        # the common case recorded in C (autograd/recording.py); this Python is its reference
        lines += ["    record = _recording.record",
                  "    if record is not None and record(_plan, out, args):",
                  "        return out"]
    lines += ["    mask = 0"]
    if has_list:
        lines += ["    fns = []", "    nrs = []", "    sizes = []"]
    for j, pos in enumerate(diff_inputs):
        if pos in lists:
            lines += [f"    a = args[{pos}]",
                      f"    sizes.append(len(a))",
                      f"    for t in a:",
                      f"        e = _gradient_edge(t)",
                      f"        if e.function is not None:",
                      f"            mask |= {1 << j}",
                      f"        fns.append(e.function)",
                      f"        nrs.append(e.input_nr)"]
            continue
        lines += [f"    a = args[{pos}]",
                  f"    m = a._autograd_meta if a.__class__ is _Tensor else 0",
                  f"    n{j} = 0",
                  f"    if m is None:",
                  f"        f{j} = None",
                  f"    elif m.__class__ is _AutogradMeta and m.grad_fn is not None:",
                  f"        f{j} = m.grad_fn",
                  f"        n{j} = m.output_nr",
                  f"        mask |= {1 << j}",
                  f"    elif m.__class__ is _AutogradMeta and m.requires_grad:",
                  f"        r = m.grad_accumulator",
                  f"        f{j} = r() if r is not None else None",
                  f"        if f{j} is None:",
                  f"            f{j} = _grad_accumulator(a)",
                  f"        mask |= {1 << j}",
                  f"    else:",
                  f"        e = _gradient_edge(a) if a is not None else _INVALID",
                  f"        f{j}, n{j} = e.function, e.input_nr",
                  f"        if f{j} is not None:",
                  f"            mask |= {1 << j}"]
        if has_list:
            lines += [f"    fns.append(f{j})", f"    nrs.append(n{j})"]
    node_class = "_Node" if overload is None else "_classes[_overload(*args)]"
    n = len(diff_inputs)
    lines += ["    if not mask:",
              "        return out",
              "    if _anomaly.enabled:",
              f"        node = {node_class}()          # records where the op ran",
              "    else:",
              f"        node = _new({node_class})",
              "        node.sequence_nr = _next_sequence_nr()",
              "        node.hooks = node._metadata = None",
              *(["    node.list_sizes = sizes"] if has_list else []),
              "    topo = 0"]
    if has_list:
        lines += ["    node.next_fns = tuple(fns)",
                  "    node.next_nrs = tuple(nrs) if any(nrs) or len(nrs) >= len(_ZEROS) else _ZEROS[len(nrs)]",
                  "    for f in fns:",
                  "        if f is not None and f.topological_nr >= topo:",
                  "            topo = f.topological_nr + 1"]
    else:
        fs = "".join(f"f{j}, " for j in range(n))
        ns = "".join(f"n{j}, " for j in range(n))
        any_nr = " or ".join(f"n{j}" for j in range(n))
        lines += [f"    node.next_fns = ({fs})",
                  f"    node.next_nrs = ({ns}) if {any_nr} else _ZEROS[{n}]"]
        for j in range(n):
            lines += [f"    if f{j} is not None and f{j}.topological_nr >= topo:",
                      f"        topo = f{j}.topological_nr + 1"]
    lines += ["    node.topological_nr = topo",
              "    if out.__class__ is _Tensor:",
              "        data = out._data",
              "        md = _metadata.get(data.shape)",
              "        if md is None or md[0][1] is not data.dtype or md[0][2] is not out._device:",
              "            md = _metadata_of(data, out._device)",
              "        node.input_metadata = md",
              "        m = out._autograd_meta",
              "        if m is None:",
              "            # AutogradMeta(False, node, 0) without its __init__ call",
              "            out._autograd_meta = m = _new(_AutogradMeta)",
              "            m.requires_grad = m.retains_grad = False",
              "            m.grad = m.grad_accumulator = m.hooks = m.post_acc_grad_hooks = None",
              "            m.grad_fn, m.output_nr = node, 0",
              "        else:",
              "            m.grad_fn, m.output_nr, m.requires_grad = node, 0, False",
              "        out._keys |= _AUTOGRAD",
              "    else:",
              "        node.input_metadata = ()",
              "        _record_outputs(node, out)",
              *_save_call(n, has_list, save_plan, arg_index),
              *[f"    _strip_history(out[{i}])" for i in not_differentiable],
              "    return out"]
    namespace = {"_after_autograd": ~AUTOGRAD, "_cache": entry._cache, "_Tensor": Tensor, "_INVALID": INVALID_EDGE,
                 "_AutogradMeta": AutogradMeta, "_gradient_edge": gradient_edge, "_grad_accumulator": grad_accumulator,
                 "_anomaly": _anomaly, "_Node": node_classes[0], "_classes": node_classes, "_overload": overload,
                 "_new": object.__new__, "_next_sequence_nr": _next_sequence_nr, "_AUTOGRAD": AUTOGRAD,
                 "_ZEROS": ZEROS, "_record_outputs": record_outputs, "_metadata": _METADATA, "_metadata_of": metadata_of, "_savers": {}, "_make_saver": _make_saver,
                 "_names_for_mask": save_plan.names, "_arg_index": arg_index, "_recording": recording,
                 "_plan": plan, "_strip_history": _strip_history, **_SAVER_NAMESPACE}
    return codegen.define(lines, namespace, f"<agrad autograd kernel {entry.name}>", "kernel", owner=entry.name)


def _recording_plan(node_class, diff_inputs, save_plan, arg_index):
    """The C recording's plan of an op (autograd/recording.py), or None: without the C build, or
    with more differentiable inputs than it records. A mask whose savers save a shape, options or
    geometry is left to the Python kernel."""
    if not 1 <= len(diff_inputs) <= 4:
        return None
    saves = []
    for mask in range(1, 1 << len(diff_inputs)):
        steps = _save_steps(save_plan.names(mask), arg_index)
        saves.append(steps if all(kind in (_SAVE_RESULT, _SAVE_ARGUMENT) for _, kind, _ in steps) else None)
    return recording.make_plan(node_class, tuple(diff_inputs), tuple(saves))


def _save_call(n: int, has_list: bool, save_plan, arg_index) -> list:
    """The autograd kernel's lines that save what the formulas of the inputs needing a gradient
    use: with one or two differentiable inputs (1 to 3 masks), each mask's saver inline, so
    recording an op makes no call to save; with more, the saver of the call's mask, made on first use."""
    if has_list or n > 2:
        return ["    save = _savers.get(mask)",
                "    if save is None:",
                "        save = _savers[mask] = _make_saver(_names_for_mask(mask), _arg_index, op.name)",
                "    save(node, out, args)"]
    masks = [(1 << n) - 1] + list(range(1, (1 << n) - 1))      # every input needing a gradient first
    lines = []
    for i, mask in enumerate(masks):
        head = "if" if i == 0 else "elif"
        lines += ([f"    {head} mask == {mask}:"] if i < len(masks) - 1 else ["    else:"]) + \
            _saver_lines(save_plan.names(mask), arg_index, "        ")
    if len(masks) == 1:
        lines = _saver_lines(save_plan.names(masks[0]), arg_index, "    ")
    return lines


# ---- defop -------------------------------------------------------------------------------

def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("::")[-1].split("_"))


def defop(schema: str, *, kernel=None, meta=None, promote=None, grads=None, composite=None, samples=None,
          backward_name=None, overload=None, wraps_numbers=False, differentiable=None, gradgrad=True,
          torch=None, doc="", tags=(), special=False, view=None, array_grads=None, moves_device=False,
          saved_as=None, given_none=None, output_differentiability=None, supports_complex=False):
    """Declare an op. Returns its Python function (also `agrad.<name>`).

    `supports_complex=True`: the kernel computes complex64/complex128 operands as PyTorch does, and the
    `grads` formulas are derivatives.yaml's complex ones (their `.conj()`s); without it the backend
    kernels refuse a complex operand with PyTorch's NotImplementedError (`_refuse_complex`). A
    composite op needs no declaration: the ops it calls decide.
    `moves_device=True`: the op's result lives on another backend than its input (`_to_copy`), so
    its CPU and CUDA kernel is `kernel(*tensors)` on Tensors, not a function of arrays.
    `special=True`: the kernel is `kernel(xp, special, *args)`, `special` being the backend's
    special-function namespace (scipy.special on CPU, cupyx.scipy.special on CUDA).
    `view=True`: the op is a view op (its output shares memory with `self`, PyTorch's view
    ops); a callable `view(*args) -> bool` says per call (reshape).
    `array_grads`: the formulas of `grads` again, written on NumPy arrays (same parameters), for the
    backward without create_graph on the CPU when every array has the gradient's dtype: the same
    kernels, without a dispatcher call per formula op (each must give bit-identical results to its
    `grads` formula; tests/engine/test_array_grads.py checks).
    `saved_as`: {saved name: fn(node, value) -> value} where agrad saves something in another form
    than PyTorch's Node does, so that `grad_fn._saved_<name>` and `_raw_saved_<name>` show PyTorch's
    (an index's tensors as PyTorch's Tensor?[], None where a dim is not indexed).
    `output_differentiability`: derivatives.yaml's, a bool per output; a floating output marked False
    leaves the op without history (linalg_lu's P), as an integer output always does.
    `given_none`: {argument: value}, what an explicit None of an optional argument means where
    PyTorch's parser then picks another overload (dispatcher.define)."""
    entry = define(schema, doc=doc, wraps_numbers=wraps_numbers, given_none=given_none, _depth=3)
    arguments = entry.schema.arguments
    arg_index = {a.name: i for i, a in enumerate(arguments)}
    if composite is not None:
        if kernel is not None or grads is not None:
            raise TypeError(f"{entry.name}: a composite op gets its kernels and gradients from the ops it calls")
        impl(entry.name, DispatchKey.CompositeImplicitAutograd, _boxed(composite), _depth=3)
        refusing = _refusal(entry.name, "dask")     # called without grad, a refused composite says so itself
        if refusing is not None:
            impl(entry.name, DispatchKey.Dask, refusing, _depth=3)
        differentiable = True if differentiable is None else differentiable
    else:
        if kernel is None or meta is None:
            raise TypeError(f"{entry.name}: an op needs a kernel and a Meta rule (or a composite)")
        rule = _PROMOTIONS[promote] if not callable(promote) else promote
        # each kernel is generated by the first call that needs it (dispatcher.Deferred)
        for backend_type, key in (("cpu", DispatchKey.CPU), ("cuda", DispatchKey.CUDA), ("dask", DispatchKey.Dask)):
            impl(entry.name, key, Deferred(functools.partial(_backend_kernel, entry, kernel, rule, backend_type,
                                                             special, meta, moves_device, view, supports_complex)),
                 _depth=3)
        impl(entry.name, DispatchKey.Meta,
             Deferred(functools.partial(_backend_kernel, entry, meta, rule, "meta", False, None, False, view,
                                        supports_complex)),
             _depth=3)
        differentiable = grads is not None if differentiable is None else differentiable

    info = OpInfo(entry, kernel=kernel, promote=promote, grads=grads, composite=composite,
                  samples=samples, backward_names=None, differentiable=differentiable,
                  gradgrad=gradgrad, torch=torch, tags=tuple(tags) + (("view",) if view else ()), special=special,
                  saved_as=saved_as, meta=meta, overload=overload)
    info.supports_complex = supports_complex or composite is not None
    entry.info = info
    if composite is None:
        if grads is None:
            # outputs never require grad (comparisons, detach, integer results)
            impl(entry.name, DispatchKey.Autograd, FALLTHROUGH, _depth=3)
        else:
            _register_autograd(entry, info, grads, backward_name, overload, arg_index, array_grads,
                               tuple(i for i, d in enumerate(output_differentiability or ()) if not d))
    _infos[entry.name] = info
    return entry.function


def _backend_kernel(entry, fn, rule, backend_type, special, meta_rule, moves_device, view, supports_complex=True):
    """The op's kernel for one backend (`meta`: its Meta rule), made on its first lookup; an op the
    backend declares it cannot run gets a kernel that refuses, naming it (`_refusal`)."""
    refusing = _refusal(entry.name, backend_type) if backend_type != "meta" else None
    if refusing is not None:
        return refusing
    if moves_device:
        k = _boxed(fn)
    else:
        k = _make_backend_kernel(entry, fn, rule, backend_type, backend_type == "meta", special, meta_rule,
                                 supports_complex)
    return _view_kernel(k, view) if view else k


class NotImplementedDerivative:
    """A `grads` entry for derivatives.yaml's `not_implemented("igamma: input")`: the op records as
    usual, and its backward raises PyTorch's NotImplementedError only when the pass running wants that
    input's gradient (autograd.grad for the other inputs alone succeeds)."""

    def __init__(self, what: str):
        self.what = what
        self.message = f"the derivative for '{what}' is not implemented."


class NotDifferentiable:
    """A `grads` entry for an input derivatives.yaml leaves out (not `non_differentiable`): PyTorch
    refuses a call where it requires grad, naming the ATen function, as this does (its generated
    check_no_requires_grad); None is an input that simply gets no gradient."""

    def __init__(self, function: str):
        self.function = function


def _register_autograd(entry, info, grads, backward_name, overload, arg_index, array_grads=None,
                       not_differentiable=()):
    """Check the formulas now (a mistake in a declaration fails its import); the Autograd kernel,
    its Node classes and their `apply` are generated on the op's first call that records."""
    arguments = entry.schema.arguments
    tensor_names = [a.name for a in arguments if a.is_tensor]
    unknown = set(grads) - set(tensor_names)
    if unknown:
        raise TypeError(f"{entry.name}: gradient formulas for {sorted(unknown)}, which are not tensor arguments")
    missing = [n for n in tensor_names if n not in grads]
    if missing:
        raise TypeError(f"{entry.name}: no gradient formula for argument(s) {missing}; "
                        f"give one, or None for an input that has no gradient")
    params_per_input, diff_inputs = [], []
    refused = tuple((arg_index[n], n, f.function) for n, f in grads.items() if isinstance(f, NotDifferentiable))
    for name in tensor_names:
        formula = grads[name]
        if formula is None or isinstance(formula, NotDifferentiable):
            continue
        params = ("grad",) if isinstance(formula, NotImplementedDerivative) else _parameters(formula)
        bad = [p for p in params if p not in _RESERVED and p not in arg_index and _derived(p, arg_index) is None]
        if bad:
            raise TypeError(f"{entry.name}: the formula for {name!r} uses {bad}, which are neither arguments "
                            f"of the schema, nor 'grad', 'grads', 'result', nor '<argument>_shape'")
        params_per_input.append(params)
        diff_inputs.append(arg_index[name])
    has_list = any(arguments[i].is_list for i in diff_inputs)
    if array_grads:
        if has_list:
            raise TypeError(f"{entry.name}: array_grads are for ops without Tensor[] arguments")
        unknown = set(array_grads) - {arguments[i].name for i in diff_inputs}
        if unknown:
            raise TypeError(f"{entry.name}: array_grads for {sorted(unknown)}, which have no formula in grads")
    names = backward_name if isinstance(backward_name, (list, tuple)) else \
        [backward_name or f"{_camel(entry.name)}Backward0"]
    info.backward_names = list(names)
    info._array_grads = None

    def make():
        formulas = [grads[arguments[i].name] for i in diff_inputs]
        is_list = [arguments[i].is_list for i in diff_inputs]
        saved_names = tuple(sorted({p for params in params_per_input for p in params} - {"grad", "grads"}))
        arrays = None
        if not has_list:
            arrays = _array_formulas(entry, grads, array_grads, [arguments[i].name for i in diff_inputs])
        info._array_grads = None if arrays is None else dict(zip([arguments[i].name for i in diff_inputs], arrays))
        slots = tuple(f"saved_{n}" for n in saved_names) + (("saved_result_vc",) if "result" in saved_names else ()) \
            + (("list_sizes",) if has_list else ())
        body = {"__slots__": slots, "info": info, "saved_names": saved_names,
                "apply": _make_apply(entry, formulas, params_per_input, is_list, arrays),
                "release_variables": _make_release(entry, saved_names), **_saved_properties(saved_names)}
        node_classes = [type(n, (OpNode,), body) for n in names]
        for cls in node_classes:
            register_release(cls, saved_names)
        return _make_autograd_kernel(entry, tuple(diff_inputs), node_classes, overload,
                                     _SavePlan(params_per_input), arg_index, refused, not_differentiable)
    impl(entry.name, DispatchKey.Autograd, Deferred(make), _depth=4)


def _parameters(fn) -> tuple:
    """The names of `fn`'s parameters: from its code for a plain function (the common formula,
    read without building an inspect.Signature), else inspect's."""
    codegen.resolve(fn)         # another op's function, not yet called: its real parameters
    code = getattr(fn, "__code__", None)
    if code is not None and fn.__class__ is types.FunctionType and not code.co_flags & 0x0C:   # no *args/**kw
        return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return tuple(inspect.signature(fn).parameters)


def _derived(param: str, arg_index) -> str | None:
    """`self_shape` names the shape of argument `self`, `self_options` its (device, dtype),
    `self_geometry` its (sizes, strides, storage offset) (PyTorch's self.sym_sizes(), self.options()
    and TensorGeometry(self)): saved instead of the tensor."""
    for suffix in ("_shape", "_options", "_geometry"):
        if param.endswith(suffix) and param[:-len(suffix)] in arg_index:
            return param[:-len(suffix)]
    return None
