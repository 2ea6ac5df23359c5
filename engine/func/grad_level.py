"""What a reverse-mode transform (grad, vjp, jacrev, linearize) does with the tensors it hands to the
function and the tensors it hands back: functorch's wrapping at a grad level, on agrad's one graph.

functorch gives each transform a level and wraps tensors in a level's own autograd; agrad has one
autograd, so a level is the set of fresh leaves a transform differentiates with respect to:
- in (`wrap`, PyTorch's _create_differentiable): each differentiated input becomes a new tensor, a
  detached leaf that requires grad, or, when the input already requires grad and grad mode is on (an
  outer transform, or the caller's own autograd, differentiates it), a view of it, so that the outer
  graph goes on through it. A forward-AD tangent the input carries (an enclosing jvp) is carried over.
- the backward builds a graph (create_graph, as torch.func's always does) where something outside may
  differentiate the result: the function's output reaches a tensor that requires grad and is not this
  level's (an outer transform's leaf, a captured parameter) while grad mode was on at entry, or a
  forward-AD level is open (jvp(grad(f)): the tangents flow through the backward's ops). Otherwise no
  one can, and the backward runs as a plain one.
- out (`unwrap`, PyTorch's _undo_create_differentiable): a result whose graph reaches only this level's
  leaves, or any result where grad mode was off at entry, is detached, as torch's unwrapped tensor has
  no history at the levels below; one whose graph reaches any other tensor that requires grad keeps
  its graph, as torch's keeps the history of the outer levels. Its tangent, if any, is unwrapped alike.
"""
from __future__ import annotations

from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd.node import AccumulateGrad
from ..grad_mode import is_grad_enabled
from .pytree import tree_map

__all__ = ["GradLevel", "tangent_at_open_level"]


def tangent_at_open_level(t):
    """t's forward-AD tangent, or None (also where no dual level is open)."""
    return forward_ad.tangent_of(t) if forward_ad._current_level >= 0 else None


class GradLevel:
    """One reverse-mode transform's leaves; made on entry, before the transform turns grad mode on."""

    def __init__(self):
        self.outer_grad = is_grad_enabled()
        self._leaves: list = []          # kept alive, so that their ids stay theirs
        self._ids: set = set()

    def own(self, t) -> None:
        """Count `t` (a cotangent the transform made) as this level's."""
        self._leaves.append(t)
        self._ids.add(id(t))

    def wrap(self, x):
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if self.outer_grad and x.requires_grad:
            return x.view_as(x)
        leaf = x.detach().requires_grad_()
        self.own(leaf)
        tangent = tangent_at_open_level(x)
        return leaf if tangent is None else forward_ad.make_dual(leaf, tangent)

    def reaches_outside(self, tensors) -> bool:
        """Whether any of `tensors` has a graph that reaches a tensor that requires grad and is not this
        level's."""
        return any(isinstance(t, Tensor) and t.requires_grad and self._reaches_outside(t) for t in tensors)

    @staticmethod
    def needs_graph(grad_enabled: bool, reaches_outside: bool) -> bool:
        """Whether a backward must build a graph (see the module's docstring)."""
        return forward_ad._current_level >= 0 or (grad_enabled and reaches_outside)

    def unwrap(self, tree):
        """Every leaf of tree unwrapped; a leaf that is not a Tensor is PyTorch's error."""
        def unwrap_tensor(t):
            if not isinstance(t, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
            return self.unwrap_one(t)
        return tree_map(unwrap_tensor, tree)

    def unwrap_one(self, t):
        """t unwrapped if it is a Tensor, else t as it is."""
        if not isinstance(t, Tensor) or not t.requires_grad or (self.outer_grad and self._reaches_outside(t)):
            return t
        tangent = tangent_at_open_level(t)
        out = t.detach()
        return out if tangent is None else forward_ad.make_dual(out, self.unwrap_one(tangent))

    def _reaches_outside(self, t) -> bool:
        """Whether t's graph reaches a leaf that requires grad and is not this level's."""
        if id(t) in self._ids:
            return False
        root = t.grad_fn
        if root is None:
            return True                  # a leaf of someone else's
        stack, seen = [root], {id(root)}
        while stack:
            node = stack.pop()
            if isinstance(node, AccumulateGrad):
                if id(node.variable) not in self._ids:
                    return True
                continue
            for fn, _ in node.next_functions:
                if fn is not None and id(fn) not in seen:
                    seen.add(id(fn))
                    stack.append(fn)
        return False
