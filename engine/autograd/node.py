"""Node: a backward function in the graph; AccumulateGrad and GraphRoot.

Names and fields are PyTorch's (torch/csrc/autograd/function.h): a Node's
*inputs* are the gradients flowing into it (one per output of the forward op),
its *outputs* go along `next_edges` (one per differentiable forward input).
"""
from __future__ import annotations

import itertools
import sys
import threading
import traceback
import weakref

from .._tensor import (
    AutogradMeta,
    DifferentiableViewMeta,
    RemovableHandle,
    Tensor,
    VariableVersion,
    _grad_np_dtype,
)
from ..dispatch_keys import AUTOGRAD, PYTHON
from ..dispatcher import ops as _ops
from ..watchers import add_in_place, before_mutation, mutation_observers
from ..grad_mode import tls
from .anomaly_mode import _state as _anomaly
from .edge import INVALID_EDGE, Edge

__all__ = ["Node", "ZEROS", "AccumulateGrad", "GraphRoot", "UINT64_MAX", "collect_next_edges", "gradient_edge", "record", "record_outputs", "metadata_of", "set_history", "NodeHooks",
           "grad_accumulator", "check_hook_result", "check_single_hook_result"]

UINT64_MAX = 2 ** 64 - 1          # AccumulateGrad's sequence_nr: always runs first when ready
_next_sequence_nr = itertools.count().__next__    # atomic under the GIL
ZEROS = tuple((0,) * n for n in range(9))     # shared `next_nrs` of Nodes whose edges all go to input 0


class NodeHooks:
    """A Node's hooks; most Nodes have none, so this object exists only once one is added."""
    __slots__ = ("pre", "post", "tensor_pre", "retains_grad")

    def __init__(self):
        self.pre = []              # fn(grad_outputs) -> new grad_outputs or None
        self.post = []             # fn(grad_inputs, grad_outputs) -> new grad_inputs or None
        self.tensor_pre = []       # (input_nr, fn(grad) -> new grad or None): hooks of the tensors it produced
        self.retains_grad = {}     # input_nr -> fn(grad): retain_grad() of the tensors it produced


class Node:
    # NOTE: the edges are two flat tuples, not Edge objects: a recorded op keeps one Node alive per op,
    # and every extra object it keeps costs its allocation and the cyclic GC's visits (PyTorch keeps
    # none). `next_edges` makes the Edges when asked; the engine reads the tuples.
    __slots__ = ("next_fns", "next_nrs", "sequence_nr", "topological_nr", "input_metadata", "hooks", "_metadata",
                 "__weakref__")

    def __init__(self, sequence_nr: int | None = None):
        self.sequence_nr = _next_sequence_nr() if sequence_nr is None else sequence_nr
        self.next_fns: tuple = ()             # per output: the Node its gradient goes to, or None
        self.next_nrs: tuple = ()             # per output: which input of that Node
        self.topological_nr = 0
        self.input_metadata: tuple = ()     # (shape, numpy dtype, device) per incoming gradient (see metadata_of)
        self.hooks: NodeHooks | None = None
        self._metadata = None
        if _anomaly.enabled:
            # where the forward op ran, for anomaly reports (PyTorch's metadata["traceback_"]), and the
            # Node whose backward made this one, if any (its "parent_")
            self.metadata["traceback_"] = "".join(traceback.format_stack()[:-2])
            if _anomaly.evaluating is not None:
                self.metadata["parent_"] = _anomaly.evaluating

    # -- graph structure ---------------------------------------------------------
    @property
    def next_edges(self) -> tuple:
        return tuple(map(Edge, self.next_fns, self.next_nrs))

    @next_edges.setter
    def next_edges(self, edges) -> None:
        self.set_next_edges(edges)

    def set_next_edges(self, edges) -> None:
        edges = tuple(edges)
        self.next_fns = fns = tuple([e.function for e in edges])
        nrs = tuple([e.input_nr for e in edges])
        self.next_nrs = ZEROS[len(nrs)] if len(nrs) < len(ZEROS) and not any(nrs) else nrs
        topo = 0
        for fn in fns:
            if fn is not None and fn.topological_nr >= topo:
                topo = fn.topological_nr + 1
        self.topological_nr = topo

    def add_input_metadata(self, t: Tensor) -> int:
        self.input_metadata += ((t._data.shape, t._data.dtype, t._device),)
        return len(self.input_metadata) - 1

    @property
    def next_functions(self) -> tuple:
        return tuple(zip(self.next_fns, self.next_nrs))

    @property
    def num_inputs(self) -> int:
        return len(self.input_metadata)

    @property
    def num_outputs(self) -> int:
        return len(self.next_fns)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def name(self) -> str:
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self.sequence_nr

    def _set_sequence_nr(self, sequence_nr: int) -> None:
        """Where the Node runs among those ready at once: higher first (the engine reads it when it
        queues the Node, so a change made before backward orders that backward)."""
        self.sequence_nr = sequence_nr

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"   # PyTorch's: the class, not name()

    # -- behaviour ---------------------------------------------------------------
    def apply(self, grads: list) -> list:
        raise NotImplementedError(f"{self.name()}.apply")

    def __call__(self, *grads):
        """Run the backward function directly: one gradient per input, as PyTorch's Node call."""
        if len(grads) != len(self.input_metadata):
            raise TypeError(f"expected {len(self.input_metadata)} arguments, got {len(grads)} instead")
        outputs = self.apply(list(grads))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def release_variables(self) -> None:
        """Free saved tensors once a pass no longer needs them (keep_graph=False)."""

    # -- hooks -------------------------------------------------------------------
    def _hooks(self) -> NodeHooks:
        if self.hooks is None:
            self.hooks = NodeHooks()
        return self.hooks

    def register_hook(self, fn) -> RemovableHandle:
        """Post-hook `fn(grad_inputs, grad_outputs)`; may return replacement grad_inputs."""
        hooks = self._hooks().post
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """Pre-hook `fn(grad_outputs)`; may return replacement grad_outputs."""
        hooks = self._hooks().pre
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_tensor_pre_hook(self, input_nr: int, fn) -> RemovableHandle:
        hooks = self._hooks().tensor_pre
        entry = (input_nr, fn)
        hooks.append(entry)
        return RemovableHandle(hooks, entry)

    def register_retains_grad_hook(self, input_nr: int, fn) -> None:
        self._hooks().retains_grad[input_nr] = fn

    def tensor_pre_hooks(self) -> list:
        return self.hooks.tensor_pre if self.hooks is not None else []


def check_hook_result(prev: tuple, result, hook) -> None:
    """What a Node pre- or post-hook returned replaces what it was given (python_hook.cpp's check_result)."""
    if result.__class__ is not tuple:
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(prev):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(prev)})")
    for old, new in zip(prev, result):
        if new is not None:
            check_single_hook_result(old, new, hook)


def check_single_hook_result(old, new, hook) -> None:
    """A hook's replacement gradient keeps the gradient's dtype, device and shape."""
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new._data.dtype != old._data.dtype or new._device.type != old._device.type:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was {_type_string(old)} got "
                           f"{_type_string(new)})")
    if new._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _hook_name(hook) -> str:
    return getattr(hook, "__name__", "<unknown>")


def _type_string(t) -> str:
    """PyTorch's legacy type string: agrad.FloatTensor, agrad.cuda.DoubleTensor."""
    from ..messages import scalar_type_name
    where = "" if t._device.type == "cpu" else f"{t._device.type}."
    return f"agrad.{where}{scalar_type_name(t._data.dtype)}Tensor"


class AccumulateGrad(Node):
    """The sink of a leaf: sets `leaf.grad` the first time and adds to it afterwards."""
    __slots__ = ("variable", "_lock")

    def __init__(self, variable: Tensor):
        super().__init__(sequence_nr=UINT64_MAX)
        self.variable = variable
        # the dtype the engine casts the leaf's gradient to: its grad_dtype (None: none)
        self.input_metadata = ((variable._data.shape, _grad_np_dtype(variable), variable._device),)
        self._lock = threading.Lock()     # backward passes on several threads may share a leaf

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"      # PyTorch's: a C++ Node's name is its qualified C++ name

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return []
        meta = self.variable._autograd_meta
        if not self.variable.requires_grad:
            return []           # the leaf was detached in place since (AccumulateGrad::apply)
        with self._lock:
            accumulate_grad(self.variable, grad, grads)
        hooks = meta.post_acc_grad_hooks
        if hooks:
            variable = self.variable
            for hook in tuple(hooks):     # a copy: a hook may remove itself
                result = hook(variable)
                if result is not None and result is not variable:
                    check_single_hook_result(variable, result, hook)
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return []

    def tensor_pre_hooks(self):
        # a leaf's hooks live on the leaf: its accumulator may be created after them
        hooks = self.variable._autograd_meta.hooks
        own = self.hooks.tensor_pre if self.hooks is not None else []
        return [(0, h) for h in hooks] + own if hooks else own


def _owns_memory(data, grad) -> bool:
    """Whether `data` (the array of `grad`) alone holds its memory: not a view, or the only view of a
    fresh array (a backward formula's `mm(...).t()`), without repeated elements. Stealing it then is
    safe; copying a [2048, 2048] gradient per leaf per pass is not free. A view made in backward
    (a transpose's backward) also keeps its base tensor: that one counts as the view itself when
    nothing else holds it (PyTorch looks at the gradient's own use count alone)."""
    base = getattr(data, "base", 0)
    if base is None:
        return True
    # references to base: `data.base`, our `base`, getrefcount's argument, and the base tensor's own
    # array where only the view holds that tensor (that array is base, or a view of it held by nothing else)
    expected = 3
    meta = grad._autograd_meta
    if meta.__class__ is DifferentiableViewMeta and sys.getrefcount(meta.base) <= 2:   # meta's, the argument
        owned = meta.base._data
        if owned is base or (getattr(owned, "base", None) is base and sys.getrefcount(owned) <= 3):
            expected += 1           # the base tensor's array (its slot, `owned`, the argument: nothing else)
        owned = None
    return base.__class__ is data.__class__ and base.base is None and sys.getrefcount(base) <= expected \
        and 0 not in data.strides and data.size == base.size


def _obeys_layout_contract(data, variable_data) -> bool:
    """PyTorch's gradient layout contract (utils::obeys_layout_contract): `.grad` has the strides of
    its leaf where the leaf is non-overlapping and dense, else it is contiguous."""
    if not hasattr(variable_data, "strides") or not hasattr(data, "strides"):
        return True             # an array without strides (Meta, dask): no layout to keep
    if data.strides == variable_data.strides and data.flags.c_contiguous:
        return True             # both contiguous, the common case: no need to work out the leaf's layout
    if _dense_order(variable_data) is None:
        return bool(data.flags.c_contiguous)
    for size, stride, wanted in zip(data.shape, data.strides, variable_data.strides):
        if stride != wanted if size != 1 else stride == 0:
            return False
    return True


def _dense_order(array) -> list[int] | None:
    """The dimensions of `array` from outermost to innermost when its elements fill their memory
    with no gap and no overlap (is_non_overlapping_and_dense); None otherwise."""
    shape, strides = array.shape, array.strides
    order = sorted(range(len(shape)), key=lambda d: -strides[d])       # stable: size-1 dimensions stay put
    expected = array.itemsize
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return None
            expected *= shape[d]
    return order


def _permuted_layout(variable_data) -> tuple[list[int], list[int]] | None:
    """(order, inverse) of a leaf that is dense but not contiguous: a copy laid out as it is the
    contiguous copy of the gradient permuted by `order`, permuted back by `inverse`. None where a
    contiguous copy is the layout contract's (contiguous, not dense, or no strides: Meta, dask)."""
    order = _dense_order(variable_data) if hasattr(variable_data, "strides") else None
    if order is None or order == sorted(order):
        return None
    return order, sorted(range(len(order)), key=order.__getitem__)


def _clone_obey_contract(grad, variable):
    """A copy of `grad` laid out as the layout contract asks (utils::clone_obey_contract): with the
    strides of `variable` where it is non-overlapping and dense, else contiguous (no grad mode:
    with create_graph, accumulate_grad makes the differentiable copy itself)."""
    layout = _permuted_layout(variable._data)
    if layout is None:
        return _ops.clone(grad, memory_format="contiguous_format")
    order, inverse = layout
    copy = _ops.permute(_ops.clone(_ops.permute(grad, order), memory_format="contiguous_format"), inverse)
    return Tensor._make(copy._data, copy._device, copy._device.backend.key)     # a tensor, not a view


def accumulate_grad(variable, grad, grads) -> None:
    """PyTorch's AccumulateGrad::accumulateGrad. Without create_graph: the first gradient becomes
    `.grad` itself when nothing else holds it or its memory (PyTorch's use_count check; here the
    reference counts: `grads` and this frame's names) and it has its leaf's layout, else a copy
    with that layout; later ones are added into `.grad` in place, so `g = x.grad` sees them.
    With create_graph: `.grad` is a differentiable copy (CopyBackwards), then `.grad + grad` out
    of place."""
    meta = variable._autograd_meta
    old = meta.grad
    if not tls.grad_enabled:
        if grad.requires_grad:
            grad = grad.detach()
        if old is None and grad._keys & PYTHON:
            # a subclass with a __torch_dispatch__ has no array to look at: stolen through its handler's
            # detach where nothing else holds it and it has its leaf's strides (PyTorch's
            # update_grad(new_grad.detach())), else the copy
            steal = sys.getrefcount(grad) <= 4 and grad.stride() == variable.stride()
            meta.grad = grad.detach() if steal else _clone_obey_contract(grad, variable)
            return
        if old is None:
            data = grad._data
            # 4 references to grad: the `grads` list, the caller's `grad`, ours, getrefcount's argument;
            # 3 to its array: the tensor, `data`, getrefcount's argument
            if sys.getrefcount(grad) > 4 or sys.getrefcount(data) > 3 \
                    or not getattr(getattr(data, "flags", None), "writeable", True) or not _owns_memory(data, grad) \
                    or tls.grad_layout_enforced and not _obeys_layout_contract(data, variable._data):
                grad = _clone_obey_contract(grad, variable)
            elif grad._autograd_meta.__class__ is DifferentiableViewMeta:
                grad = grad.detach()        # PyTorch's update_grad(new_grad.detach()): `.grad` is no view
            meta.grad = grad
            return
        data = old._data
        flags = getattr(data, "flags", None)        # None: a Meta array, nothing to add into
        if old.__class__ is Tensor and not old.requires_grad and flags is not None \
                and getattr(flags, "writeable", True) and 0 not in data.strides \
                and data.shape == grad._data.shape and data.dtype == grad._data.dtype:
            if mutation_observers:
                before_mutation(old)        # (PyTorch's `variable_grad += new_grad` is an in-place op too)
            add_in_place(data, grad._data)
            vc = old._version_counter
            if vc is None:
                old._version_counter = VariableVersion(1)
            else:
                vc.version += 1
            return
        if old._keys & PYTHON:
            old.add_(grad)          # PyTorch's `variable_grad += new_grad`, which its handler runs
            return
        meta.grad = old + grad
        return
    if old is None:
        # clone_obey_contract's new_empty_strided(...).copy_(grad): laid out as the leaf, and
        # CopyBackwards when grad has a history, as PyTorch's
        device = grad._device
        layout = _permuted_layout(variable._data)
        shape = grad.shape if layout is None else tuple(grad.shape[d] for d in layout[0])
        empty = device.backend.full(shape, 0, grad._data.dtype, device)
        if layout is not None:
            empty = empty.transpose(layout[1])
        meta.grad = Tensor._make(empty, device, device.backend.key).copy_(grad)
        return
    meta.grad = old + grad


class GraphRoot(Node):
    """The root when backward starts from several tensors: its outputs are their gradients."""
    __slots__ = ("outputs",)

    def __init__(self, edges, grads):
        super().__init__()
        self.set_next_edges(edges)
        self.outputs = list(grads)

    def name(self) -> str:
        return "torch::autograd::GraphRoot"

    def apply(self, grads):
        return list(self.outputs)


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad, shared by every op that uses the leaf (held weakly by the leaf)."""
    meta = t._autograd_meta
    ref = meta.grad_accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        with _accumulator_lock:      # two threads must not make two (PyTorch's mutex): .grad is added to in place
            ref = meta.grad_accumulator
            acc = ref() if ref is not None else None
            if acc is None:
                acc = AccumulateGrad(t)
                meta.grad_accumulator = weakref.ref(acc)
    return acc


_accumulator_lock = threading.Lock()


def gradient_edge(t) -> Edge:
    """Where the gradient of `t` goes: its grad_fn, its leaf accumulator, or nowhere."""
    if t.__class__ is not Tensor and not isinstance(t, Tensor):
        return INVALID_EDGE
    meta = t._autograd_meta
    if meta is None:
        return INVALID_EDGE
    if meta.__class__ is DifferentiableViewMeta:
        if meta.current_grad_fn(t) is None and meta.base.requires_grad:
            return Edge(grad_accumulator(t), 0)    # a view made under no_grad is a leaf that requires grad
    if meta.grad_fn is not None:
        return Edge(meta.grad_fn, meta.output_nr)
    if meta.requires_grad:
        return Edge(grad_accumulator(t), 0)
    return INVALID_EDGE


def collect_next_edges(tensors) -> list[Edge]:
    return [gradient_edge(t) for t in tensors]


def record(node: Node, edges, outputs) -> None:
    """Record `node` as the backward of one call: where its gradients go (`edges`, one per
    differentiable input: collect_next_edges), then each output in order, a floating Tensor
    taking `node` as its grad_fn and anything else keeping its place among the Node's outputs
    with no history, so every output_nr stays the output's index (PyTorch's set_history).
    How a backward Node enters the graph: defop's Autograd kernels (whose generated form
    inlines these steps for one output), agrad.library's kernels and its not-implemented
    fallback, once_differentiable's error Node. Two callers differ on purpose: an in-place op
    rebases its target's history (autograd/inplace.py) and a custom Function's outputs may be
    dirty inputs or views (function.py's _wrap_outputs), as in PyTorch."""
    node.set_next_edges(edges)
    record_outputs(node, outputs)


def record_outputs(node: Node, outputs) -> None:
    """record's second half, for a Node whose edges are set: each output's history in order (`outputs` one
    Tensor or a sequence of them: a subclass's instance is one output, not the sequence its __iter__ gives)."""
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    for o in outputs:
        if o.__class__ is Tensor or isinstance(o, Tensor):
            if o._data.dtype.kind in "fc":
                set_history(o, node)
            else:
                node.add_input_metadata(o)


_METADATA: dict = {}


def metadata_of(data, device) -> tuple:
    """`input_metadata` of a Node with one output, `((shape, dtype, device),)`, one shared tuple per
    shape seen (for the last dtype and device it came with): a recorded op keeps no metadata object
    of its own alive. Tuples, so a shared one is never changed in place."""
    shape = data.shape
    md = _METADATA.get(shape)
    if md is None or md[0][1] is not data.dtype or md[0][2] is not device:
        if len(_METADATA) >= 4096:         # bounded: shapes that change every call are not reused
            _METADATA.clear()
        md = _METADATA[shape] = ((shape, data.dtype, device),)
    return md


def set_history(t: Tensor, node: Node) -> None:
    """Make `t` the next output of `node` (its grad_fn), recording its metadata."""
    output_nr = len(node.input_metadata)
    data = t._data
    node.input_metadata += ((data.shape, data.dtype, t._device),)
    meta = t._autograd_meta
    if meta is None:
        t._autograd_meta = AutogradMeta(grad_fn=node, output_nr=output_nr)
    else:
        meta.grad_fn, meta.output_nr, meta.requires_grad = node, output_nr, False
    t._keys |= AUTOGRAD

