"""`inspect`: the node table and the backward graph, from the Meta build only.

Nothing here runs a kernel or allocates tensor data: shapes come from Meta
inference and the order from the engine's own dry run (`execution_plan`).

A large graph is inspected as it is written out (`Inspection`): each node's row is made as
the Meta build reaches it, and a value leaves the build once nothing later reads it, so what
is held is the backward graph being shown, not every node's Meta tensor and row.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterator

import agrad

from .binding import GETITEM, BoundNode
from .build import CheckedGraph
from .executor import node_name
from .results import InspectBackwardNode, InspectLeaf, InspectNode, InspectResult, Rows
from .runner import _cyclic_gc_paused, output_names, release_plan
from .spec import TensorRef


def _kernel(bound: BoundNode, refs: list[TensorRef], meta: dict, device: str, paths: dict) -> str:
    """The dispatch path a real run takes, e.g. "Autograd -> CPU" (`paths`: found so far, per
    op, device and whether grad is required: a large graph asks the same question many times)."""
    if bound.op == GETITEM:
        return "output selection" if bound.selects_output else "getitem"
    requires_grad = False
    for r in refs:                      # (a loop, not any() over a generator: a row a node of a large graph)
        value = meta.get(r.name)
        for t in value if value.__class__ is tuple else (value,):
            if getattr(t, "requires_grad", False):
                requires_grad = True
                break
        if requires_grad:
            break
    key = (bound.entry, device, requires_grad)
    found = paths.get(key)
    if found is None:
        try:
            found = paths[key] = bound.entry.explain(agrad.dispatcher.keyset_for(device, requires_grad))
        except (RuntimeError, ValueError, KeyError) as exc:
            found = paths[key] = f"unavailable ({exc})"
    return found


def format_arg(value) -> str:
    """An argument as the user wrote it, for the args column."""
    if isinstance(value, TensorRef):
        return value.name
    if isinstance(value, list):
        return "[" + ", ".join(format_arg(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _describe_args(bound: BoundNode) -> list[str]:
    if bound.op == GETITEM:
        return [format_arg(bound.args[0]) + str(bound.args[1])]
    # `given` is in schema order, so the arguments written positionally come first.
    written = len(bound.spec.args)
    return [format_arg(v) if i < written else f"{arg.name}={format_arg(v)}"
            for i, (arg, v, _) in enumerate(bound.given)]


def _meta_grad_tensor(value, root, env):
    if isinstance(value, TensorRef):
        return env[value.name]
    return agrad.empty(root.shape, dtype=root.dtype, device="meta")


def _passes(graph: CheckedGraph, env: dict):
    """(roots, grad_tensors, inputs) of each backward pass, on Meta tensors (`env`: the build).

    Without `backward:`, the outputs that require grad stand as one pass, so the
    graph autograd recorded can still be looked at.
    """
    spec = graph.spec
    if not spec.backward:
        roots = [env[name] for name in output_names(graph)
                 if not isinstance(env.get(name), tuple) and env[name].requires_grad]
        if roots:
            yield roots, [agrad.empty(r.shape, dtype=r.dtype, device="meta") for r in roots], None
        return
    for pass_ in spec.backward:
        roots = [env[r.name] for r in pass_.roots]
        grads = None
        if pass_.grad_tensors is not None:
            grads = [_meta_grad_tensor(g, root, env) for g, root in zip(pass_.grad_tensors, roots)]
        inputs = [env[r.name] for r in pass_.inputs] if pass_.inputs is not None else None
        yield roots, grads, inputs


def _view_of(value, names: dict[int, str]) -> str | None:
    """The name of the node or leaf a view shares memory with (its `_base`), if it is a view."""
    base = value._base if isinstance(value, agrad.Tensor) else None
    if base is None:
        return None
    return names.get(id(base), "(an intermediate tensor)")


class Inspection:
    """One inspect of a checked graph, made as it is read: `nodes()` (the Meta build runs as its
    rows are read), then `backward()` and `order()`, which first finish the build. Each is read
    once. A graph whose check kept its Meta build (a small one) is read off that build; any
    other is built here, each value let go of once nothing later reads it (runner.release_plan).
    `edges`: also collect the forward edges (only DOT draws them; a 1,000,000-node graph has
    millions)."""

    def __init__(self, graph: CheckedGraph, *, edges: bool = True):
        self.graph = graph
        self.edges: list[tuple[str, str, list[int]]] | None = [] if edges else None
        self.selected: dict[str, int] = {}      # node -> the output it selects of a multi-output node
        made, release = self._built()           # sets `env`: the build's values still held (all, when kept)
        self._rows = self._node_rows(made, release)
        self._ids: dict | None = None           # backward Node -> id: the order Nodes were first named in
        self._dependencies: dict | None = None
        self._order: array | None = None

    def nodes(self) -> Iterator[InspectNode]:
        return self._rows

    def backward(self) -> Iterator[InspectBackwardNode]:
        from agrad.autograd.saved_variable import describe, saved_variables
        ids, dependencies = self._backward_graph()
        spec = self.graph.spec
        leaf_names = {id(self.env[name]): name for name in spec.inputs if name in self.env}
        labels = self.labels
        for fn, fid in ids.items():
            owner, line = labels.get(fn) or _labels_in(fn._metadata)
            if owner is None and hasattr(fn, "variable"):
                owner = leaf_names.get(id(fn.variable))
            if line is None and owner in spec.inputs:
                line = spec.inputs[owner].pos.line
            yield InspectBackwardNode(
                id=fid, name=node_name(fn), node=owner,
                next_edges=[None if f is None else (ids[f], nr) for f, nr in zip(fn.next_fns, fn.next_nrs)],
                sequence_nr=fn.sequence_nr, topological_nr=fn.topological_nr,
                dependencies=dependencies.get(fn, 0), line=line,
                saved=[{"name": name, **describe(sv)} for name, sv in saved_variables(fn)])

    def order(self) -> array:
        """The backward ids in the engine's ready-queue order, every pass's after the one before."""
        self._backward_graph()
        return self._order

    def leaves(self) -> list[InspectLeaf]:
        env = self.env
        return [InspectLeaf(name, list(env[name].shape), env[name].dtype.name, bool(env[name].requires_grad))
                for name in self.graph.spec.inputs if name in env]

    def _built(self):
        """(i, bound, value) of each node in order, and `release`: the names to drop after node i."""
        graph = self.graph
        self.labels: dict = {}                  # Node -> (YAML node, line) of a build made here
        if graph._meta is not None:
            self.env = graph._meta
            return ((i, bound, graph._meta.get(bound.name)) for i, bound in enumerate(graph.order)), None
        release = release_plan(graph)
        self.env, made = graph.meta_build(release, self.labels)
        return ((i, bound, value) for i, bound, value, _ in made), release

    def _node_rows(self, made, release) -> Iterator[InspectNode]:
        graph = self.graph
        env = self.env
        default_device = str(agrad.device(graph.options.device or graph.spec.device))
        # the device each value will be on in a real run (Meta tensors forget it), while it is held
        devices = {name: str(agrad.device(leaf.device)) for name, leaf in graph.leaves.items()}
        # id(tensor) -> name, for view_of: a value's entry goes with it, unless views of it are alive
        names = {id(v): name for name, v in env.items() if isinstance(v, agrad.Tensor)}
        bases: dict[int, object] = {}           # the values views were made of, held while named
        paths: dict[tuple, str] = {}
        for i, bound, value in made:
            name = bound.name
            first = value[0] if isinstance(value, tuple) and value else value
            refs = bound.refs()
            device = devices[name] = _device(bound, refs, devices, default_device)
            if isinstance(first, agrad.Tensor):
                names[id(first)] = name
                base = first._base
                if base is not None:
                    bases.setdefault(id(base), base)
            if bound.selects_output:
                self.selected[name] = bound.args[1].items[0]
            if self.edges is not None:
                self.edges.extend(self._edges_into(bound, refs))
            yield InspectNode(
                name=name, op=bound.op, args=_describe_args(bound),
                shape=list(first.shape) if first is not None else [],
                dtype=first.dtype.name if first is not None else "",
                device=device, kernel=_kernel(bound, refs, env, device, paths),
                line=bound.spec.line, view_of=_view_of(first, names))
            for gone in release[i] if release is not None else ():
                devices.pop(gone, None)
                held = env.get(gone)
                if held is not None and id(held) not in bases and names.get(id(held)) == gone:
                    del names[id(held)]

    def _edges_into(self, bound: BoundNode, refs: list[TensorRef]):
        env = self.env
        for ref in refs:
            src = env.get(ref.name)
            if isinstance(src, tuple):       # `g[0]`: what flows is the selected output
                src = src[self.selected[bound.name]] if bound.name in self.selected else None
            yield ref.name, bound.name, list(src.shape) if src is not None else []

    def _backward_graph(self) -> tuple[dict, dict]:
        """(ids, dependencies) of every backward Node a pass visits, once the build is whole: a
        Node's id is the order it was first named in, listing each pass's Nodes breadth first
        with their next edges; its dependencies are those of the first pass that listed it."""
        if self._ids is None:
            for _ in self._rows:            # the build must be whole before its graph is walked
                pass
            ids: dict = {}
            dependencies: dict | None = None
            order = array("q")
            for roots, grads, inputs in _passes(self.graph, self.env):
                plan = agrad.autograd.graph.execution_plan(roots, grad_tensors=grads, inputs=inputs)
                if dependencies is None:
                    dependencies, listed = plan.dependencies, plan.nodes
                else:
                    listed = [fn for fn in plan.nodes if fn not in dependencies]
                    dependencies.update((fn, plan.dependencies.get(fn, 0)) for fn in listed)
                for fn in listed:
                    ids.setdefault(fn, len(ids))
                    for nxt in fn.next_fns:
                        if nxt is not None:
                            ids.setdefault(nxt, len(ids))
                for fn in plan.order:
                    if fn not in ids:       # the GraphRoot the engine starts a pass of several roots from
                        ids[fn] = len(ids)
                    order.append(ids[fn])
            self._ids, self._dependencies, self._order = ids, dependencies or {}, order
        return self._ids, self._dependencies


def _labels_in(metadata: dict | None) -> tuple:
    """(YAML node, line) of a Node labelled in its metadata (a kept Meta build's), else Nones."""
    return (None, None) if metadata is None else (metadata.get("yaml_node"), metadata.get("line"))


def _device(bound: BoundNode, refs: list[TensorRef], devices: dict[str, str], default: str) -> str:
    """The device a node's value will be on in a real run: a `to`'s target, else its first input's."""
    if bound.op == "to":
        target = next((value for arg, value, _ in bound.given if arg.name == "device"), None)
        if isinstance(target, str):
            return str(agrad.device(target))
    for ref in refs:
        if ref.name in devices:
            return devices[ref.name]
    return default


def inspect_graph(graph: CheckedGraph, file: str, *, edges: bool = True, streamed: bool = False) -> InspectResult:
    """`edges=False`: without the forward edges (only DOT draws them). `streamed`: `nodes`,
    `backward` and `order` are Rows made as they are read, in that order (`agrad inspect --format
    json` writes a large graph so); else lists."""
    inspection = Inspection(graph, edges=edges)
    if streamed:
        nodes = Rows(len(graph.order), _gc_paused(inspection.nodes))
        backward = Rows(None, _gc_paused(inspection.backward))
        order = Rows(None, _gc_paused(inspection.order))
    else:
        nodes = list(inspection.nodes())
        backward = list(inspection.backward())
        order = list(inspection.order())
    return InspectResult(graph=graph.spec.name, file=file, nodes=nodes, backward=backward, order=order,
                         edges=inspection.edges if inspection.edges is not None else [],   # (filled as read)
                         leaves=inspection.leaves(), outputs=output_names(graph),
                         selected=inspection.selected)


def _gc_paused(rows):
    """`rows()` read with the cyclic collector paused, as Graph.inspect's lists are made: the
    Meta graph holds no cycles, and a streamed result is made after Graph.inspect returns."""
    with _cyclic_gc_paused():
        yield from rows()
