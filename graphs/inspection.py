"""`inspect`: the node table and the backward graph, from the Meta build only.

Nothing here runs a kernel or allocates tensor data: shapes come from Meta
inference and the order from the engine's own dry run (`execution_plan`).
"""
from __future__ import annotations

import agrad

from .binding import GETITEM, BoundNode
from .build import CheckedGraph
from .results import InspectBackwardNode, InspectLeaf, InspectNode, InspectResult
from .runner import output_names
from .spec import TensorRef


def _devices(graph: CheckedGraph) -> dict[str, str]:
    """The device each node's value will be on in a real run (Meta tensors forget it)."""
    devices = {name: str(agrad.device(leaf.device)) for name, leaf in graph.leaves.items()}
    for bound in graph.order:
        given = {arg.name: value for arg, value, _ in bound.given}
        target = given.get("device") if bound.op == "to" else None
        if isinstance(target, str):
            devices[bound.name] = str(agrad.device(target))
            continue
        sources = [devices[r.name] for r in bound.refs() if r.name in devices]
        devices[bound.name] = sources[0] if sources else str(agrad.device(graph.options.device or graph.spec.device))
    return devices


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _kernel(bound: BoundNode, refs: list[TensorRef], meta: dict, device: str, paths: dict) -> str:
    """The dispatch path a real run takes, e.g. "Autograd -> CPU" (`paths`: found so far, per
    op, device and whether grad is required: a large graph asks the same question many times)."""
    if bound.op == GETITEM:
        return "output selection" if bound.selects_output else "getitem"
    requires_grad = any(getattr(t, "requires_grad", False) for r in refs for t in _as_tuple(meta.get(r.name)))
    key = (bound.entry, device, requires_grad)
    if key not in paths:
        try:
            paths[key] = bound.entry.explain(agrad.dispatcher.keyset_for(device, requires_grad))
        except (RuntimeError, ValueError, KeyError) as exc:
            paths[key] = f"unavailable ({exc})"
    return paths[key]


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


def _passes(graph: CheckedGraph):
    """(roots, grad_tensors, inputs) of each backward pass, on Meta tensors.

    Without `backward:`, the outputs that require grad stand as one pass, so the
    graph autograd recorded can still be looked at.
    """
    spec = graph.spec
    if not spec.backward:
        roots = [graph.meta[name] for name in output_names(graph)
                 if not isinstance(graph.meta.get(name), tuple) and graph.meta[name].requires_grad]
        if roots:
            yield roots, [agrad.empty(r.shape, dtype=r.dtype, device="meta") for r in roots], None
        return
    for pass_ in spec.backward:
        roots = [graph.meta[r.name] for r in pass_.roots]
        grads = None
        if pass_.grad_tensors is not None:
            grads = [_meta_grad_tensor(g, root, graph.meta) for g, root in zip(pass_.grad_tensors, roots)]
        inputs = [graph.meta[r.name] for r in pass_.inputs] if pass_.inputs is not None else None
        yield roots, grads, inputs


def _view_of(value, names: dict[int, str]) -> str | None:
    """The name of the node or leaf a view shares memory with (its `_base`), if it is a view."""
    base = value._base if isinstance(value, agrad.Tensor) else None
    if base is None:
        return None
    return names.get(id(base), "(an intermediate tensor)")


def inspect_graph(graph: CheckedGraph, file: str, *, edges: bool = True) -> InspectResult:
    """`edges=False`: without the forward edges (only DOT draws them; a 1,000,000-node graph
    has millions)."""
    from agrad.autograd.saved_variable import describe, saved_variables
    spec = graph.spec
    meta = graph.meta
    devices = _devices(graph)
    nodes, forward_edges = [], []
    selected: dict[str, int] = {}
    paths: dict[tuple, str] = {}
    tensor_names = {id(v): name for name, v in meta.items() if isinstance(v, agrad.Tensor)}
    # each node's line, read off its BoundNode (`spec.nodes` would make and keep every NodeSpec of a large file)
    line_of = {k: v.pos.line for k, v in spec.inputs.items()}
    for bound in graph.order:
        line = line_of[bound.name] = bound.spec.line
        value = meta.get(bound.name)
        first = value[0] if isinstance(value, tuple) and value else value
        refs = bound.refs()
        kernel = _kernel(bound, refs, meta, devices.get(bound.name, "cpu"), paths)
        nodes.append(InspectNode(
            name=bound.name, op=bound.op, args=_describe_args(bound),
            shape=list(first.shape) if first is not None else [],
            dtype=first.dtype.name if first is not None else "",
            device=devices.get(bound.name, ""), kernel=kernel,
            line=line, view_of=_view_of(first, tensor_names)))
        if bound.selects_output:
            selected[bound.name] = bound.args[1].items[0]
        for ref in refs if edges else ():
            src = meta.get(ref.name)
            if isinstance(src, tuple):       # `g[0]`: what flows is the selected output
                src = src[selected[bound.name]] if bound.name in selected else None
            shape = list(src.shape) if src is not None else []
            forward_edges.append((ref.name, bound.name, shape))

    leaf_names = {id(graph.meta[name]): name for name in spec.inputs if name in graph.meta}
    ids: dict[object, int] = {}
    backward: list[InspectBackwardNode] = []
    order: list[int] = []

    def node_id(fn) -> int:
        if fn not in ids:
            ids[fn] = len(ids)
        return ids[fn]

    listed: set = set()
    for roots, grads, inputs in _passes(graph):
        plan = agrad.autograd.graph.execution_plan(roots, grad_tensors=grads, inputs=inputs)
        for fn in plan.nodes:
            if fn in listed:
                continue
            listed.add(fn)
            fid = node_id(fn)
            owner = fn.metadata.get("yaml_node")
            if owner is None and hasattr(fn, "variable"):
                owner = leaf_names.get(id(fn.variable))
            backward.append(InspectBackwardNode(
                id=fid, name=fn.name(), node=owner,
                next_edges=[None if e.function is None else (node_id(e.function), e.input_nr) for e in fn.next_edges],
                sequence_nr=fn.sequence_nr, topological_nr=fn.topological_nr,
                dependencies=plan.dependencies.get(fn, 0), line=line_of.get(owner),
                saved=[{"name": name, **describe(sv)} for name, sv in saved_variables(fn)]))
        order.extend(node_id(fn) for fn in plan.order)
    backward.sort(key=lambda b: b.id)
    leaves = [InspectLeaf(name, list(graph.meta[name].shape), graph.meta[name].dtype.name,
                          bool(graph.meta[name].requires_grad)) for name in spec.inputs if name in graph.meta]
    return InspectResult(graph=spec.name, file=file, nodes=nodes, backward=backward, order=order, edges=forward_edges,
                         leaves=leaves, outputs=output_names(graph), selected=selected)
