"""`inspect --format dot`: the graph as Graphviz DOT.

Two clusters: the forward graph (tensors, edges labelled with the shape that
flows along them) and the backward graph (grad_fn nodes, next_edges labelled with
input_nr). A dotted edge ties each tensor to the grad_fn that will differentiate it.
"""
from __future__ import annotations

from agrad.cli.tensor_text import shape_text


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _forward_id(name: str) -> str:
    return _quote(f"fwd:{name}")


def _backward_id(node_id: int) -> str:
    return _quote(f"bwd:{node_id}")


def inspect_dot(result) -> str:
    lines = [f"digraph {_quote(result.graph)} {{",
             "  compound=true;",
             '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];',
             "  subgraph cluster_forward {",
             '    label="forward";']
    for n in result.nodes:
        label = f"{n.name}\n{n.op}\n{shape_text(n.shape)} {n.dtype}"
        lines.append(f"    {_forward_id(n.name)} [label={_quote(label)}, shape=box];")
    # Leaves appear only as edge sources; declare them so they are labelled by name, not by DOT id.
    declared = {n.name for n in result.nodes}
    for src, _, _ in result.edges:
        if src not in declared:
            declared.add(src)
            lines.append(f"    {_forward_id(src)} [label={_quote(src)}, shape=ellipse, style=filled, fillcolor=lightgrey];")
    for src, dst, shape in result.edges:
        lines.append(f"    {_forward_id(src)} -> {_forward_id(dst)} [label={_quote(shape_text(shape))}];")
    lines += ["  }", "  subgraph cluster_backward {", '    label="backward";']
    for b in result.backward:
        label = b.name if b.node is None else f"{b.name}\n({b.node})"
        lines.append(f"    {_backward_id(b.id)} [label={_quote(label)}, shape=ellipse];")
    for b in result.backward:
        for edge in b.next_edges:
            if edge is not None:
                target, input_nr = edge
                lines.append(f"    {_backward_id(b.id)} -> {_backward_id(target)} [label={_quote(f'input_nr {input_nr}')}];")
    lines.append("  }")
    forward_names = {n.name for n in result.nodes}
    for b in result.backward:
        if b.node in forward_names:
            lines.append(f"  {_forward_id(b.node)} -> {_backward_id(b.id)} [style=dotted, arrowhead=none, constraint=false];")
    lines.append("}")
    return "\n".join(lines) + "\n"
