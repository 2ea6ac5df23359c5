"""`inspect --format dot`: the graph as Graphviz DOT.

Two clusters: the forward graph (tensors, edges labelled with the shape that
flows along them, and with the output index out of a multi-output node; leaves
that require grad and outputs coloured as torchviz colours them) and the backward graph (grad_fn nodes, next_edges labelled with
input_nr). A dotted edge ties each tensor to the grad_fn that will differentiate it.
`--graph forward` or `backward` draws one cluster alone (and no dotted ties), which is
what a big graph's picture can afford.
"""
from __future__ import annotations

from agrad.cli.tensor_text import shape_text


# torchviz's colours: parameters light blue, outputs green; other inputs grey.
PARAMETER_COLOUR, OUTPUT_COLOUR, INPUT_COLOUR = "lightblue", "darkolivegreen1", "lightgrey"


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _forward_id(name: str) -> str:
    return _quote(f"fwd:{name}")


def _backward_id(node_id: int) -> str:
    return _quote(f"bwd:{node_id}")


GRAPHS = ("both", "forward", "backward")


def inspect_dot(result, graph: str = "both") -> str:
    """`graph`: both clusters tied by dotted edges, or the forward or backward graph alone."""
    lines = [f"digraph {_quote(result.graph)} {{",
             "  compound=true;",
             '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    if graph in ("both", "forward"):
        lines += _forward_cluster(result)
    if graph in ("both", "backward"):
        lines += _backward_cluster(result)
    if graph == "both":
        forward_names = {n.name for n in result.nodes}
        for b in result.backward:
            if b.node in forward_names:
                lines.append(f"  {_forward_id(b.node)} -> {_backward_id(b.id)} "
                             "[style=dotted, arrowhead=none, constraint=false];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _forward_cluster(result) -> list[str]:
    lines = ["  subgraph cluster_forward {",
             '    label="forward";']
    outputs = set(result.outputs)
    for n in result.nodes:
        label = f"{n.name}\n{n.op}\n{shape_text(n.shape)} {n.dtype}"
        colour = f", style=filled, fillcolor={OUTPUT_COLOUR}" if n.name in outputs else ""
        lines.append(f"    {_forward_id(n.name)} [label={_quote(label)}, shape=box{colour}];")
    # As torchviz draws them: a leaf that requires grad (a parameter) in blue with its shape, other inputs grey.
    declared = {n.name for n in result.nodes}
    for leaf in result.leaves:
        declared.add(leaf.name)
        label, colour = leaf.name, INPUT_COLOUR
        if leaf.requires_grad:
            label, colour = f"{leaf.name}\n{shape_text(leaf.shape)} {leaf.dtype}", PARAMETER_COLOUR
        lines.append(f"    {_forward_id(leaf.name)} [label={_quote(label)}, shape=ellipse, style=filled, "
                     f"fillcolor={colour}];")
    for src, _, _ in result.edges:       # a result built without its leaves: name them all the same
        if src not in declared:
            declared.add(src)
            lines.append(f"    {_forward_id(src)} [label={_quote(src)}, shape=ellipse, style=filled, "
                         f"fillcolor={INPUT_COLOUR}];")
    for src, dst, shape in result.edges:
        label = shape_text(shape)
        if dst in result.selected:        # out of a multi-output node: which output flows
            label = f"output {result.selected[dst]}\n{label}"
        lines.append(f"    {_forward_id(src)} -> {_forward_id(dst)} [label={_quote(label)}];")
    lines.append("  }")
    return lines


def _backward_cluster(result) -> list[str]:
    lines = ["  subgraph cluster_backward {", '    label="backward";']
    for b in result.backward:
        label = b.name if b.node is None else f"{b.name}\n({b.node})"
        lines.append(f"    {_backward_id(b.id)} [label={_quote(label)}, shape=ellipse];")
    for b in result.backward:
        for edge in b.next_edges:
            if edge is not None:
                target, input_nr = edge
                lines.append(f"    {_backward_id(b.id)} -> {_backward_id(target)} "
                             f"[label={_quote(f'input_nr {input_nr}')}];")
    lines.append("  }")
    return lines
