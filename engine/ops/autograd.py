"""`grad` as an op, so a graph file can take gradients inside the graph (gradient
penalties, Hessian-vector products). It is CompositeImplicitAutograd: it runs the
engine, and with create_graph=True its results carry the graph of the backward
pass, so later ops (and later backward passes) differentiate through it."""
from __future__ import annotations

from ..autograd.backward_and_grad import grad as autograd_grad
from .registry import defop


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph):
    grads = autograd_grad(list(outputs), list(inputs), grad_outputs=grad_outputs, retain_graph=retain_graph,
                          create_graph=create_graph, allow_unused=True, materialize_grads=True)
    return tuple(grads)


grad = defop(
    "grad(Tensor[] outputs, Tensor[] inputs, Tensor[]? grad_outputs=None, bool create_graph=False, "
    "bool? retain_graph=None) -> Tensor[]",
    composite=_grad,
    doc="The gradients of `outputs` with respect to `inputs` (torch.autograd.grad), one output per input; "
        "an input nothing reaches gets zeros. retain_graph defaults to create_graph.",
    tags=("autograd",))
