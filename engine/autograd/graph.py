"""Looking at a backward graph without running it: what `agrad inspect` shows; and
increment_version, torch.autograd.graph's way to tell autograd of a change it did not see."""
from __future__ import annotations

from .._tensor import Tensor
from ..dispatch_keys import INFERENCE
from .engine import get_default_engine
from .backward_and_grad import _as_tuple, _make_grads, _output_edges, _root_edges
from .inplace import bump_version
from .node import Node  # noqa: F401 — torch.autograd.graph.Node: every grad_fn is one


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
