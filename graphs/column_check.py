"""Checks the nodes of a file kept column-wise (`spec.NodeColumns`) shape by shape.

A generated file repeats a few expression shapes over many nodes (`nK: tanh(nK-1) * 0.999 + x`).
On Meta a node's value depends only on its expression's shape, the ops and keywords it names
and what its input tensors are (executor.SharedResults), so a node whose shape, words and input
tensors were all seen before takes the value found then: no NodeSpec, binding or key per op.
The first node of each signature is made, bound and run as the node-by-node check does it.
For `load` every other node keeps only how it binds, its signature's (the first's layouts,
binding._layout): a ColumnOrder makes the BoundNodes a run needs when it reads them, with no
schema matched and no op run again.

Whatever that check would report, and whatever this one does not model (a name used before
its node, a cycle, a multi-output op, an op that must run on its own), answers None: the
caller then checks node by node, so every diagnostic is that check's own.
"""
from __future__ import annotations

from agrad import codegen

from .binding import GETITEM, Binder, layout_key
from .column_order import Binding, ColumnOrder, templates
from .diagnostics import Collector
from .executor import SharedResults, plan_parts
from .expressions import Shape, names_and_shifts, names_in


def check_columns(checker, leaves, keep: bool = False) -> tuple[ColumnOrder | None, list] | None:
    """Build `checker.meta` for the graph's column-wise nodes, shape by shape; None (nothing
    reported) where the graph must be checked node by node. Else (the run order, the BoundNodes
    of the first node of each signature: every Meta value of the graph is one of theirs); the
    order (a ColumnOrder, in the file's order, which this check requires) only with `keep`,
    for `load`."""
    spec = checker.spec
    columns = spec.columns
    if len(columns.entries) < SharedResults.MIN_NODES or any(e.__class__ is list for e in columns.entries):
        return None
    scratch = Collector(spec.file)          # any problem found here is found again, and reported, node by node
    reporting, checker.c = checker.c, scratch
    try:
        missing: set[str] = set()
        checker.make_meta_leaves(leaves, missing)
        return None if missing else _build(checker, Binder(spec, scratch), scratch, keep)
    finally:
        checker.c = reporting


def _build(checker, binder: Binder, scratch: Collector, keep: bool) -> tuple[ColumnOrder | None, list] | None:
    meta = checker.meta
    columns = checker.spec.columns
    shared = SharedResults(meta)
    seen: dict[tuple, object] = {}          # signature -> the node's value
    signatures: dict[Shape, object] = {}    # shape -> its signature's function
    binding_of: dict[tuple, Binding] = {}   # signature -> how its nodes bind (with `keep`)
    bindings: list = []                     # per node, its signature's Binding (with `keep`)
    firsts: list = []                       # the BoundNodes of each signature's first node
    make = columns.make
    for i, ((name, text), shape) in enumerate(zip(columns.block.nodes.items(), columns.entries)):
        signature = signatures.get(shape)
        if signature is None:
            signature = signatures[shape] = _signature(shape)
        names = names_in(text)
        try:
            key = signature(names, meta)
        except KeyError:
            return None                     # undefined, or defined later (an order to work out, maybe a cycle)
        value = seen.get(key)
        if value is None:
            made = make(i, name, text, shape, *names_and_shifts(text))
            bound = _first_of_signature(made, meta, binder, shared, scratch)
            if bound is None:
                return None
            value = seen[key] = meta[made[-1].name]
            firsts += bound
            if keep:
                layouts = [(binder.layouts.get(layout_key(b.spec, b.schema)), b.schema, b.entry) for b in bound]
                binding_of[key] = Binding(layouts, *templates(bound, [plan_parts(b) for b in bound], name, names))
        if keep:
            # the same shape, ops and keywords as the signature's first node: bound as it was, each
            # argument taken from this node, when the order is read (no schema matched again)
            bindings.append(binding_of[key])
        meta[name] = value
    return (ColumnOrder(columns, bindings, binder.bind_arguments) if keep else None), firsts


def _signature(shape: Shape):
    """The function `(names, meta) -> signature` of a node of `shape`: the shape, the identity of
    each tensor it reads (Meta values are canonical: alike inputs are one object, SharedResults)
    and each op and keyword it names."""
    parts = [f"id(meta[names[{k}]])" for k in shape.refs] + [f"names[{k}]" for k in shape.words]
    return codegen.define([
        "def signature(names, meta):",
        f"    return (shape, {''.join(p + ', ' for p in parts)})"], {"shape": shape}, "<agrad shape signature>",
        "signature")


def _first_of_signature(made, meta: dict, binder: Binder, shared: SharedResults, scratch: Collector):
    """Bind and run one node's NodeSpecs on Meta; their BoundNodes, or None where it needs the
    node-by-node check (a problem, or an op outside what a signature decides)."""
    if not made:
        return None
    bound_nodes = []
    for node in made:
        entry = None if node.op == GETITEM else binder.entry(node)
        if entry is None or not SharedResults.shares(entry):
            return None
        bound = binder.bind_arguments(node, entry.schema, entry)
        if bound is None or bound.multi_output or binder.takes_tensor_list(entry.schema) or scratch.diagnostics:
            return None
        if any(ref.name not in meta for ref in bound.refs()):
            return None
        try:
            meta[node.name] = shared.apply(bound, meta)
        except (Exception, SystemExit):     # noqa: BLE001 - as run_nodes: the node-by-node check reports it
            return None
        bound_nodes.append(bound)
    return bound_nodes
