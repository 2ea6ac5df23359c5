"""SavedVariable: a tensor a backward formula needs, saved at forward time.

An output saved by its own grad_fn is stored without that grad_fn (a Tensor
holding the Node that holds the Tensor would be a reference cycle); unpacking
gives it back its history, exactly as PyTorch's SavedVariable does.
"""
from __future__ import annotations

import abc
import re
import weakref

from .._tensor import AutogradMeta, Tensor, VariableVersion
from ..dispatch_keys import AUTOGRAD, PYTHON
from ..errors import FreedGraphError
from ..grad_mode import no_grad, saved_hooks_in_use, tls

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


ERR_DETACHED_IN_PLACE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not supported, "
    "please use out-of-place `.detach()` instead")


ERR_REGISTER_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph are "
    "freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through "
    "the graph a second time or if you need to access saved values after calling backward.")


ERR_PACK_IN_PLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook can not be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need "
    "to perform in-place operations on the input to a pack hook.")


def _hooks_set() -> tuple:
    """This thread's saved-tensor hooks (innermost last): read only while some block is open in any
    thread, as a thread-local read costs several times the global count's."""
    return tls.saved_hooks if saved_hooks_in_use.count else ()


class SavedVariable:
    __slots__ = ("_tensor", "_data", "_device", "_keys", "_output_nr", "_output_ref", "_counter", "_version",
                 "_saved_for_name", "_released", "_is_leaf", "_hooks")

    def __init__(self, tensor: Tensor, is_output: bool):
        self._hooks = None
        hooks = _hooks_set()
        if hooks:
            _pack(self, tensor, is_output, *hooks[-1])
            return
        vc = tensor._version_counter          # shared with the tensor's views and detach()ed aliases
        self._version = 0 if vc is None else vc.version
        self._released = False
        if is_output:
            if vc is None:
                # NOTE: the counter exists from now on: views made later share it, and they may
                # change the output after it is gone (only the counter tells, see unpack)
                vc = tensor._version_counter = VariableVersion()
            self._tensor = None
            self._data, self._device, self._keys = tensor._data, tensor._device, tensor._keys & ~AUTOGRAD
            if self._keys & PYTHON:
                # a subclass with a __torch_dispatch__ (whose array may be no data at all: a wrapper's) is kept
                # as its handler's detach gives it, as torch's SavedVariable keeps tensor_data(), the
                # shallow_copy_and_detach that a Python tensor's interpreter answers with aten::detach
                self._data = tensor.detach()
            meta = tensor._autograd_meta
            self._output_nr = meta.output_nr if meta is not None else 0
            # the Node class, for the message if the tensor is modified (name() only when it is needed)
            self._saved_for_name = meta.grad_fn.__class__ if meta is not None and meta.grad_fn is not None else None
            self._output_ref = weakref.ref(tensor)
            self._counter = vc
        else:
            self._tensor = tensor
            self._output_ref = None
            meta = tensor._autograd_meta
            self._is_leaf = meta is None or meta.grad_fn is None

    def unpack(self, saved_for=None, *, detached_in_place_ok=False) -> Tensor:
        """The saved tensor, after checking it has not changed since it was saved. A saved input
        that had a history and has none now was detached in place: PyTorch refuses to unpack it
        unless it is given the Node the tensor is unpacked for, which its generated formulas never
        give for an input and a custom Function's ctx.saved_tensors always does. Here formulas
        pass their Node for every saved tensor (it is an output's grad_fn), so a custom Function
        says so itself with `detached_in_place_ok`."""
        if self._released:
            raise FreedGraphError(ERR_BACKWARD_TWICE)
        if self._hooks is not None:
            return self._hooks.unpack(self, saved_for)
        if self._output_ref is None:
            t = self._tensor
            if not self._is_leaf and t._autograd_meta.grad_fn is None and not detached_in_place_ok:
                raise RuntimeError(ERR_DETACHED_IN_PLACE)
            vc = t._version_counter
            if vc is not None and vc.version != self._version:
                _raise_modified(t, self._version, t.grad_fn.name() if t.grad_fn is not None else None,
                                t.output_nr)
            return t
        live = self._output_ref()
        vc = live._version_counter if live is not None else self._counter
        if vc is not None and vc.version != self._version:
            # NOTE: named after the Node that saved it, as PyTorch's message (the tensor may have a newer grad_fn)
            node_class = self._saved_for_name
            _raise_modified(live if live is not None else self, self._version,
                            node_class.__name__ if isinstance(node_class, type) else node_class,
                            self._output_nr, vc.version)
        t = self._output_tensor()
        t._version_counter = vc         # the output's data and version, as PyTorch's unpacked output shares them
        if saved_for is not None and tls.grad_enabled:
            # create_graph: the unpacked output is differentiable again, through its own node
            t._autograd_meta = AutogradMeta(grad_fn=saved_for, output_nr=self._output_nr)
            t._keys |= AUTOGRAD
        return t

    def unpack_data(self):
        """The saved array, after unpack()'s checks, without making a Tensor of it (a backward
        formula on arrays; see engine/ops/registry.py `array_grads`). A subclass with a
        __torch_dispatch__ gives the tensor it keeps instead, unchecked: its formulas are ops its handler
        sees, which run on what unpack() gives."""
        if self._released:
            raise FreedGraphError(ERR_BACKWARD_TWICE)
        t = self._tensor
        if self._hooks is not None:
            return self.unpack()._data
        if t is not None:
            if t._keys & PYTHON:
                return t
            vc = t._version_counter
            if (vc is None or vc.version == self._version) and (self._is_leaf or t._autograd_meta.grad_fn is not None):
                return t._data
        elif self._output_ref is not None:
            if self._keys & PYTHON:
                return self._data
            live = self._output_ref()
            vc = live._version_counter if live is not None else self._counter
            if vc is None or vc.version == self._version:
                return self._data
        return self.unpack()._data        # raises what unpack() raises

    def reset_data(self) -> None:
        self._released = True
        self._tensor = self._data = self._hooks = None

    # ---- torch._C._autograd.SavedTensor: what `grad_fn._raw_saved_<name>` gives -------------------

    @property
    def data(self):
        """The saved tensor as it is kept: the input itself, an output's data without its history, or
        the unpack hook's result on what the pack hook kept."""
        if self._released:
            raise FreedGraphError(ERR_BACKWARD_TWICE)
        if self._hooks is not None:
            return self._hooks.unpack_hook(self._hooks.packed)
        if self._output_ref is None:
            return self._tensor
        return self._output_tensor()

    def _output_tensor(self) -> Tensor:
        """A new tensor of the saved output's data, without history: a subclass's, through its handler's
        detach again (torch's unpack makes a variable of the saved tensor_data(): a second detach)."""
        if self._keys & PYTHON:
            return self._data.detach()
        return Tensor._make(self._data, self._device, self._keys)

    @property
    def unpack_hook(self):
        return self._hooks.unpack_hook if self._hooks is not None else None

    def register_hooks(self, *hooks) -> None:
        """register_hooks(pack_hook, unpack_hook): pack the saved tensor now with `pack_hook`, to be
        unpacked by `unpack_hook` (SavedVariable::register_hooks): one pair per saved tensor."""
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported: (self, pack_hook: Callable, unpack_hook: Callable) -> None")
        if self._hooks is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        if self._released:
            raise RuntimeError(ERR_REGISTER_FREED)
        is_output = self._output_ref is not None
        if is_output:
            # packed without its history, but still not a leaf (PyTorch keeps is_leaf_ from the save):
            # unpacked, it gets the Node it is unpacked for back, and double backward goes through it
            _pack(self, self.unpack(detached_in_place_ok=True), True, *hooks, is_leaf=self._saved_for_name is None)
        else:
            _pack(self, self._tensor, False, *hooks)


class _Packed:
    """What a SavedVariable keeps when saved-tensor hooks packed its tensor (PyTorch's SavedVariable
    with hooks_: save_metadata's fields): the packed object, the unpack hook, and how to give the
    unpacked tensor its history back."""
    __slots__ = ("packed", "unpack_hook", "grad_fn", "requires_grad", "accumulator")

    def unpack(self, sv: SavedVariable, saved_for) -> Tensor:
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(value).__name__}")
        # an output's history is the Node it is unpacked for (kept at save time for any other non-leaf)
        grad_fn = self.grad_fn if self.grad_fn is not None or sv._is_leaf else saved_for
        if grad_fn is None and not self.requires_grad and not value.requires_grad:
            # PyTorch's SavedVariable::unpack returns the hook's tensor itself when it needs no history
            # ("Avoid detaching if we don't need to"): a custom Function's saved input comes back as is
            return value
        # make_variable(data, Edge(grad_fn, output_nr)), or a leaf's, whatever the grad mode (as
        # PyTorch's): a recomputation (checkpoint) unpacks its inputs in a backward pass without
        # create_graph and records on them under enable_grad
        t = Tensor._make(value._data, value._device, value._keys & ~AUTOGRAD)
        if grad_fn is not None:
            t._autograd_meta = AutogradMeta(grad_fn=grad_fn, output_nr=sv._output_nr)
            t._keys |= AUTOGRAD
        elif self.requires_grad:
            # the leaf's accumulator while it lives; once it is gone (the graphs using the leaf were
            # freed), a new one on first use, as PyTorch's set_grad_accumulator with an expired pointer
            accumulator = self.accumulator() if self.accumulator is not None else None
            t._autograd_meta = AutogradMeta(requires_grad=True)
            if accumulator is not None:
                t._autograd_meta.grad_accumulator = weakref.ref(accumulator)
            t._keys |= AUTOGRAD
        return t


def _pack(sv: SavedVariable, tensor: Tensor, is_output: bool, pack_hook, unpack_hook, is_leaf=None) -> None:
    """SavedVariable's constructor with hooks (set_hooks_and_pack_data): the pack hook gets the tensor
    itself, without grad; its result is all that is kept. `is_leaf`: whether the tensor was a leaf when
    it was saved, where `tensor` no longer tells (an output's data, hooks registered after the save)."""
    from .node import grad_accumulator      # (node imports this module)

    meta = tensor._autograd_meta
    sv._released = False
    sv._tensor = sv._data = sv._output_ref = None
    sv._is_leaf = (meta is None or meta.grad_fn is None) if is_leaf is None else is_leaf
    sv._output_nr = meta.output_nr if meta is not None else 0
    vc = tensor._version_counter
    sv._version = version = 0 if vc is None else vc.version
    hooks = sv._hooks = _Packed()
    hooks.unpack_hook = unpack_hook
    hooks.grad_fn = meta.grad_fn if meta is not None and not sv._is_leaf and not is_output else None
    hooks.requires_grad = tensor.requires_grad and sv._is_leaf
    hooks.accumulator = weakref.ref(grad_accumulator(tensor)) if hooks.requires_grad else None
    with no_grad():
        hooks.packed = pack_hook(tensor)
    if (0 if tensor._version_counter is None else tensor._version_counter.version) != version:
        raise RuntimeError(ERR_PACK_IN_PLACE)


_new = object.__new__


class SavedNone:
    """A saved value that was None (a default-constructed SavedVariable): what `_raw_saved_tensors`
    shows for `ctx.save_for_backward(x, None)`'s None."""
    __slots__ = ()
    data = unpack_hook = None

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")


SAVED_NONE = SavedNone()


class SavedTensor(abc.ABC):
    """torch.autograd.SavedTensor: what a Node's `_raw_saved_<name>` is, with `data` and
    `register_hooks`. An abstract base SavedVariable and SavedNone are virtual subclasses of (as
    autograd.graph.Node is of the engine's Nodes), so `isinstance` holds while the engine keeps
    making its own; made from Python it is refused, as PyTorch's binding refuses it."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is SavedTensor and issubclass(subclass, (SavedVariable, SavedNone)):
            return True
        return NotImplemented


def released() -> SavedVariable:
    """A SavedVariable already released: what a released Node keeps in place of each saved tensor
    (one shared object), so that reading it raises the backward-twice error while the values it
    saved that are not tensors stay readable (a second pass through `x + 1` succeeds, as in PyTorch)."""
    sv = _new(SavedVariable)
    sv._released, sv._tensor, sv._data, sv._output_ref, sv._hooks = True, None, None, None, None
    return sv


RELEASED = released()      # OpNode.release_variables puts it in place of each saved tensor


def check_unversioned(tensor: Tensor) -> Tensor:
    """An input a formula saved as the Tensor itself (save_input_value): saved at version 0, not
    detached, so any in-place op since makes it stale, and a detach_() since (of a tensor that had
    a history) is refused (SavedVariable.unpack's checks)."""
    vc = tensor._version_counter
    if vc is not None and vc.version:
        _raise_modified(tensor, 0, tensor.grad_fn.name() if tensor.grad_fn is not None else None,
                        tensor.output_nr)
    if vc is not None and vc.detached:
        raise RuntimeError(ERR_DETACHED_IN_PLACE)
    return tensor


def save_input_value(tensor: Tensor):
    """What a declared op saves of a plain Tensor input: the Tensor itself while it is at version 0
    (no version counter yet, or one no in-place op has moved: any later one is seen at unpack
    by check_unversioned) and was not detached in place, else a SavedVariable recording its
    version. The common case keeps no object per saved input alive (PyTorch's SavedVariable
    lives inside its Node)."""
    vc = tensor._version_counter
    if not _hooks_set() and (vc is None or not (vc.version or vc.detached)):
        return tensor
    return save_input(tensor)


def save_value(value):
    """What a declared op saves of an argument that is neither a plain Tensor nor a Python number: a
    Tensor subclass as a SavedVariable, a Tensor[] as a list of them, anything else as it is."""
    if value.__class__ is list and value and value[0].__class__ is Tensor:
        return [SavedVariable(v, False) for v in value]
    if isinstance(value, Tensor):
        return SavedVariable(value, False)
    return value


def save_input(tensor: Tensor) -> SavedVariable:
    """`SavedVariable(tensor, False)` without the constructor call: an op saves one or two per call."""
    if _hooks_set():
        return SavedVariable(tensor, False)
    return saved_as_is(tensor)


def saved_as_is(tensor: Tensor) -> SavedVariable:
    """A saved input kept as the tensor itself, whatever hooks are set (save_input's own case, and
    what `_raw_saved_<name>` makes of an input a Node holds as the Tensor)."""
    sv = _new(SavedVariable)
    sv._hooks = None
    vc = tensor._version_counter
    sv._version = 0 if vc is None else vc.version
    sv._released = False
    sv._tensor = tensor
    sv._output_ref = None
    meta = tensor._autograd_meta
    sv._is_leaf = meta is None or meta.grad_fn is None
    return sv


def save_output(tensor: Tensor) -> SavedVariable:
    """`SavedVariable(tensor, True)` for a fresh output of the Node being built, without the
    constructor call."""
    if _hooks_set():
        return SavedVariable(tensor, True)
    sv = _new(SavedVariable)
    sv._hooks = None
    vc = tensor._version_counter
    if vc is None:
        vc = tensor._version_counter = VariableVersion()      # as SavedVariable(tensor, True)
    sv._version = vc.version
    sv._released = False
    sv._tensor = None
    sv._data, sv._device, sv._keys = tensor._data, tensor._device, tensor._keys & ~AUTOGRAD
    meta = tensor._autograd_meta
    sv._output_nr = meta.output_nr
    sv._saved_for_name = meta.grad_fn.__class__
    sv._output_ref = weakref.ref(tensor)
    sv._counter = vc
    return sv


def unpack_output(node, data, vc) -> Tensor:
    """A Node's single output saved as its array and version counter (the op library's saver),
    as SavedVariable(output, True).unpack(node) gives it: unchanged since (else PyTorch's error,
    naming the Node), and with create_graph differentiable again through `node` itself."""
    dev = node.input_metadata[0][2]
    if vc.version:
        _raise_modified(Tensor._make(data, dev, dev.backend.key), 0, node.__class__.__name__, 0, vc.version)
    t = Tensor._make(data, dev, dev.backend.key)
    t._version_counter = vc
    if tls.grad_enabled:
        t._autograd_meta = AutogradMeta(grad_fn=node, output_nr=0)
        t._keys |= AUTOGRAD
    return t


def _no_live_tensor():
    return None


def saved_output_variable(node, data, vc) -> SavedVariable:
    """The SavedVariable that `unpack_output`'s saved array stands for (what `inspect` and the
    checks reading `node.saved` see)."""
    dev = node.input_metadata[0][2]
    sv = _new(SavedVariable)
    sv._version, sv._released, sv._tensor, sv._hooks = 0, False, None, None
    sv._data, sv._device, sv._keys = data, dev, dev.backend.key
    sv._output_nr, sv._saved_for_name, sv._output_ref, sv._counter = 0, node.__class__, _no_live_tensor, vc
    return sv


def _raise_modified(t, expected: int, fn_name, output_nr, version=None):
    from ..messages import tensor_type_name
    data = t._data
    version = t._version if version is None else version
    # PyTorch 2.13 prints the Node's name without "Backward0": "output 0 of Exp"
    which = f", which is output {output_nr} of {re.sub(r'Backward[0-9]*$', '', fn_name)}," if fn_name else ""
    raise RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{tensor_type_name(data.dtype)} {list(data.shape)}]{which} is at version {version}; expected version "
        f"{expected} "
        f"instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        f"with agrad.autograd.set_detect_anomaly(True, check_nan=False).")


def saved_variables(node) -> list:
    """(name, SavedVariable) for every tensor `node` saved for its backward: a declared op's
    formula arguments (`self`, `other`, `result`), a custom Function's `saved_tensors[i]`, and for
    CopySlices those of the in-place op it wraps. For `inspect`; released ones are left out."""
    out = []
    saved = getattr(node, "saved", None)
    if isinstance(saved, dict):
        for name, value in saved.items():
            if value.__class__ is Tensor:         # saved at version 0 (save_input_value)
                value = save_input(value)
                value._version = 0
            if value.__class__ is SavedVariable:
                out.append((name, value))
            elif value.__class__ is list:
                out.extend((f"{name}[{i}]", v) for i, v in enumerate(value) if v.__class__ is SavedVariable)
    own = getattr(node, "_saved", None)
    if isinstance(own, list):
        out.extend((f"saved_tensors[{i}]", v) for i, v in enumerate(own) if v.__class__ is SavedVariable)
    inner = getattr(node, "fn", None)
    if inner is not None and hasattr(inner, "next_edges"):
        out.extend(saved_variables(inner))
    return [(name, v) for name, v in out if not v._released]


def describe(saved: SavedVariable) -> dict:
    """Shape, dtype, the version it was saved at, and the version its tensor is at now (None when
    that tensor is gone): a backward fails when the two differ."""
    data = saved._data if saved._output_ref is not None else saved._tensor._data
    if saved._output_ref is None:
        vc = saved._tensor._version_counter
    else:
        live = saved._output_ref()
        vc = live._version_counter if live is not None else saved._counter
    from ..dtypes import from_numpy
    return {"shape": list(data.shape), "dtype": from_numpy(data.dtype).name, "version": saved._version,
            "current_version": vc.version if vc is not None else 0, "is_output": saved._output_ref is not None}
