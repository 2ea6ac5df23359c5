"""torch.autograd.graph: looking at a backward graph without running it (what `agrad inspect`
shows); increment_version, the way to tell autograd of a change it did not see; and the hooks on
tensors saved for backward (saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks,
allow_mutation_on_saved_tensors)."""
from __future__ import annotations

import abc
import collections
import contextlib
import weakref

from .. import watchers as _watchers
from .._tensor import Tensor
from ..grad_mode import no_grad, saved_hooks_in_use, tls
from ..dispatch_keys import INFERENCE
from .engine import get_default_engine
from .backward_and_grad import _as_tuple, _make_grads, _output_edges, _root_edges
from .inplace import bump_version
from .edge import GradientEdge
from .node import Node as _EngineNode
from .node import AccumulateGrad, gradient_edge


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge of the graph a gradient for `tensor` arrives by: its grad_fn and output number, or a
    leaf's AccumulateGrad (made now if no op has used the leaf yet). backward and grad take it in place
    of the tensor (`inputs=`), which then need not be alive."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    edge = gradient_edge(tensor)
    return GradientEdge(edge.function, edge.input_nr)


class Node(abc.ABC):
    """torch.autograd.graph.Node: what every grad_fn is (`isinstance(t.grad_fn, Node)`), as an
    abstract base the engine's Node classes are virtual subclasses of, not a class they inherit."""

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and issubclass(subclass, _EngineNode):
            return True
        return NotImplemented


def increment_version(tensor) -> None:
    """Mark `tensor` (or each tensor of an iterable) as modified in place, as if an in-place op had run:
    a backward that saved it at an older version then refuses it. Inference tensors have no version
    counter and are left alone (torch.autograd.graph.increment_version)."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    try:
        tensors = list(tensors)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    if not all(isinstance(t, Tensor) for t in tensors):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
    for t in tensors:
        if not t._keys & INFERENCE:
            bump_version(t)


class ExecutionPlan:
    """The Nodes a backward pass would visit, their dependency counts, and the order
    the engine's ready queue would run them in (computed by the engine itself)."""

    def __init__(self, nodes, dependencies, order):
        self.nodes = nodes                    # every reachable Node, parents before children
        self.dependencies = dependencies      # Node -> number of gradients it waits for
        self.order = order                    # Nodes in execution order

    def __repr__(self):
        return f"ExecutionPlan({len(self.nodes)} nodes, order={[n.name() for n in self.order]})"


def execution_plan(roots, grad_tensors=None, inputs=None) -> ExecutionPlan:
    roots = _as_tuple(roots, "roots")
    if grad_tensors is None:
        grad_tensors = [None] * len(roots)
    grads = _make_grads(roots, list(_as_tuple(grad_tensors, "grad_tensors")))
    root_edges = _root_edges(roots)
    outputs = _output_edges(_as_tuple(inputs, "inputs"), accumulate_grad=True) if inputs is not None else None
    nodes, dependencies = walk([e.function for e in root_edges])
    task = get_default_engine().execute(root_edges, grads, True, False, True, outputs, dry_run=True)
    return ExecutionPlan(nodes, dependencies, task.order)


def walk(roots) -> tuple[list, dict]:
    """Every Node reachable from `roots` (breadth first) and its number of incoming edges."""
    order = list(roots)
    dependencies = {n: 0 for n in roots}        # (also the Nodes seen: a Node is listed when first met)
    i = 0
    while i < len(order):
        for nxt in order[i].next_fns:
            if nxt is None:
                continue
            count = dependencies.get(nxt)
            if count is None:
                dependencies[nxt] = 1
                order.append(nxt)
            else:
                dependencies[nxt] = count + 1
        i += 1
    return order, dependencies


# ---- hooks on several tensors at once -------------------------------------------------------------

class _MultiHandle:
    """The handle of a multi-grad hook: removes the hook of every tensor it was registered on."""
    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def _will_execute(graph_task, node, reached: dict) -> bool:
    """Whether `node` runs in `graph_task`: reachable from its root (a walk made once per pass and
    hook, in `reached`) and, in a pass computing some inputs only, on a path to one of them."""
    if "nodes" not in reached:
        reached["nodes"] = set(walk([graph_task.graph_root])[1]) if graph_task.graph_root is not None else set()
    if node not in reached["nodes"]:
        return False
    if not graph_task.exec_info:
        return True
    info = graph_task.exec_info.get(node)
    if info is None or not info.should_execute():
        return False
    if isinstance(node, AccumulateGrad) and info.captures is not None:
        # (a leaf whose gradient autograd.grad captures: its hook never runs; backward(inputs=...) is fine)
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return True


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """torch.autograd.graph.register_multi_grad_hook: mode "all" calls `fn(grads)` once per backward
    pass, with the gradient of each tensor (None for one the pass does not reach), once all that it
    reaches are computed; mode "any" calls `fn(grad)` with the first one computed. Returns a handle
    whose remove() removes it."""
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    engine = get_default_engine()
    if mode == "any":
        ran: set = set()

        def first(grad):
            key = engine.current_graph_task().id
            if key in ran:
                return
            ran.add(key)
            fn(grad)
        return _MultiHandle(tuple(t.register_hook(first) for t in tensors if t.requires_grad))
    tensors = tuple(tensors)
    nodes = [gradient_edge(t).function for t in tensors]
    pending: dict = {}          # graph task id -> [calls still to come, gradients so far]

    def inner(idx):
        def hook(grad):
            graph_task = engine.current_graph_task()
            key = graph_task.id
            state = pending.get(key)
            if state is None:
                reached: dict = {}
                state = pending[key] = [sum(_will_execute(graph_task, n, reached) for n in nodes),
                                        [None] * len(tensors)]
            state[1][idx] = grad
            state[0] -= 1
            if state[0] <= 0:
                del pending[key]
                fn(state[1])
        return hook
    return _MultiHandle(tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors)))


# ---- hooks on the tensors saved for backward -------------------------------------------------------

_hooks_disabled: list = [None]      # the message pushing hooks raises while disabled (None: enabled)


class saved_tensors_hooks:
    """Within the block, every tensor an op saves for backward is handed to `pack_hook`, which
    returns what to keep, and given back by `unpack_hook(kept)` when backward needs it (PyTorch's
    torch.autograd.graph.saved_tensors_hooks). The innermost pair applies; Python numbers are not
    packed. (The stack is this thread's, as PyTorch's is.)"""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks_disabled[0] is not None:
            raise RuntimeError(_hooks_disabled[0])
        tls.saved_hooks = tls.saved_hooks + ((self.pack_hook, self.unpack_hook),)
        saved_hooks_in_use.count += 1
        return self

    def __exit__(self, *exc):
        # an exit without its enter (a hook that exits a context during backward) pops nothing
        if tls.saved_hooks:
            tls.saved_hooks = tls.saved_hooks[:-1]
            saved_hooks_in_use.count = max(0, saved_hooks_in_use.count - 1)


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept on the CPU and moved back to their device when backward needs them."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Within the block, setting saved-tensor hooks raises RuntimeError(error_message); entered where
    hooks are set already, it raises so itself (SavedTensorDefaultHooks::disable)."""
    previous = _hooks_disabled[0]
    _hooks_disabled[0] = error_message
    try:
        if tls.saved_hooks:
            raise RuntimeError(error_message)
        yield
    finally:
        _hooks_disabled[0] = previous


# ---- allow_mutation_on_saved_tensors ---------------------------------------------------------------
# (PyTorch's torch/autograd/graph.py, mechanism for mutation on saved tensors:)
# 1. each tensor saved for backward is packed to a _Handle, remembering the tensor itself, its identity
#    and version (a tid), and what it aliases (an sid: its memory and version);
# 2. before any in-place op changes a tensor, each saved tensor aliasing it at the same version is
#    cloned, and the original forgotten;
# 3. backward unpacks the clone where one was made, else the original.
# A handle lives as long as the SavedVariable that holds it, so the maps below (weak on the handle)
# forget a saved tensor once backward frees it or its graph dies.

_allow_mutation_on_saved_tensors_enabled: bool = False


def _get_sid(tensor) -> tuple:
    """What a tensor aliases, at which version. PyTorch uses data_ptr(), the address of the tensor's first
    element; agrad uses the start of its memory (data_ptr() less the storage offset), so that a view
    that does not start where its base does (`b[1:]`) is seen to alias the saved base too."""
    return tensor.data_ptr() - tensor.storage_offset() * tensor.element_size(), tensor._version


def _get_tid(tensor) -> tuple:
    return (id(tensor),) + _get_sid(tensor)


class _Handle:
    """What a saved tensor is packed to: the key of the context's maps (held by the SavedVariable only)."""
    __slots__ = ("__weakref__",)


class _swap_with_cloned(saved_tensors_hooks):
    """The saved-tensor hooks of the context: pack to a _Handle, unpack to the clone if one was made."""

    def __init__(self, ctx: "_AllowMutationOnSavedContext") -> None:
        def pack_hook(tensor):
            tid = _get_tid(tensor)
            ctx.sid_to_tid[tid[1:]].add(tid)
            # the same tensor at the same version may be saved several times: one handle, one clone
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            return handle

        def unpack_hook(handle):
            error_msg = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                         "in which the graph was originally recorded.")
            if not _allow_mutation_on_saved_tensors_enabled:
                raise AssertionError(error_msg)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(error_msg)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


class _CloneArgBeforeMutateMode:
    """Clones the saved tensors an in-place op is about to change. PyTorch's is a TorchDispatchMode
    reading each op's schema for the arguments it writes; agrad's in-place paths (apply_inplace, the
    in-place view ops, resize_, set_, gradient accumulation) tell agrad.watchers.mutation_observers
    of the tensor they change, before they change it."""

    def __init__(self, ctx: "_AllowMutationOnSavedContext") -> None:
        self.ctx = ctx

    def __enter__(self):
        _watchers.mutation_observers.append(self)
        return self

    def __exit__(self, *exc):
        _watchers.mutation_observers.remove(self)

    def before_mutation(self, tensor) -> None:
        ctx = self.ctx
        tids = ctx.sid_to_tid.get(_get_sid(tensor))
        if not tids:
            return
        for tid in tids:
            # saved once, but freed by a backward since (`out.backward(); a.sin_()`): nothing to keep
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:
                continue
            with no_grad():     # (PyTorch clones below autograd: the clone has no history of its own)
                ctx.cloned[handle] = ctx.original[handle].clone()
            del ctx.original[handle]


class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors block, cleared when it exits."""

    def __init__(self) -> None:
        self.cloned = weakref.WeakKeyDictionary()              # _Handle -> the clone made before a mutation
        self.original = weakref.WeakKeyDictionary()            # _Handle -> the saved tensor, not yet mutated
        self.tid_to_weakhandle = weakref.WeakValueDictionary()  # tid -> _Handle
        self.sid_to_tid = collections.defaultdict(set)         # sid -> the tids saved aliasing it

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Within the block, a tensor saved for backward may be modified in place: it is cloned just before
    its first modification, and backward uses the clone. Forward and backward both run inside the
    block; it yields its _AllowMutationOnSavedContext, cleared on exit
    (torch.autograd.graph.allow_mutation_on_saved_tensors)."""
    global _allow_mutation_on_saved_tensors_enabled
    ctx = _AllowMutationOnSavedContext()
    with _swap_with_cloned(ctx), _CloneArgBeforeMutateMode(ctx):
        try:
            if _allow_mutation_on_saved_tensors_enabled:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _allow_mutation_on_saved_tensors_enabled = True
            yield ctx
        finally:
            ctx.clear()
            _allow_mutation_on_saved_tensors_enabled = False
