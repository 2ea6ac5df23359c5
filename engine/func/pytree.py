"""The pytrees of torch.utils._pytree that agrad.func needs: how the transforms flatten their arguments,
in_dims, out_dims, outputs and cotangents, and put them back together.

A pytree is a tuple, a list, a dict (OrderedDict and defaultdict too) or a namedtuple of pytrees;
anything else, None included, is a leaf (PyTorch 2.13 makes None a leaf as well). A dict's children go
in its insertion order and its keys are the spec's context, so two dicts with the same keys in another
order have different specs, as in PyTorch. A TreeSpec prints as PyTorch's does (`TreeSpec(tuple, None,
[*,\\n  *])`), since the transforms' error messages show it.
"""
from __future__ import annotations

from collections import OrderedDict, defaultdict

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_map_only", "tree_leaves",
           "tree_any", "tree_all", "broadcast_to_and_flatten", "treespec_pprint"]


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(tree):
    """(node type, context, children) of a container, or None for a leaf."""
    t = type(tree)
    if _is_namedtuple(tree):
        return t, t, list(tree)
    if t is tuple or t is list:
        return t, None, list(tree)
    if t is dict or t is OrderedDict:
        return t, list(tree.keys()), list(tree.values())
    if t is defaultdict:
        return t, [tree.default_factory, list(tree.keys())], list(tree.values())
    return None


def _rebuild(node_type, context, children):
    if node_type is tuple or node_type is list:
        return node_type(children)
    if node_type is dict or node_type is OrderedDict:
        return node_type(zip(context, children))
    if node_type is defaultdict:
        return defaultdict(context[0], zip(context[1], children))
    return node_type(*children)              # a namedtuple


class TreeSpec:
    """The structure of a pytree: a node's type, its context (a dict's keys) and its children's specs."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self._context = context
        self._children = children_specs
        self.num_children = len(children_specs)
        self.num_leaves = sum(c.num_leaves for c in children_specs)

    def is_leaf(self) -> bool:
        return False

    def __repr__(self, indent: int = 0) -> str:
        text = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if self.num_children > 0:
            indent += 2
            text += self._children[0].__repr__(indent)
            text += "," if self.num_children > 1 else ""
            text += ",".join("\n" + " " * indent + child.__repr__(indent) for child in self._children[1:])
        return text + "])"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        return (other.__class__ is self.__class__ and str(self.type) == str(other.type)
                and self._context == other._context and self._children == other._children)

    def __hash__(self):
        return id(self)

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self, indent: int = 0) -> str:
        return "*"

    def __eq__(self, other) -> bool:
        return isinstance(other, LeafSpec)

    def __hash__(self):
        return 0


_LEAF = LeafSpec()


def _walk(node, leaves: list) -> TreeSpec:
    found = _children(node)
    if found is None:
        leaves.append(node)
        return _LEAF
    node_type, context, children = found
    return TreeSpec(node_type, context, [_walk(c, leaves) for c in children])


def tree_flatten(tree):
    """(the leaves, left to right; the TreeSpec that tree_unflatten rebuilds the tree from)."""
    # NOTE: module-level recursion, not a nested function calling itself: that closure would be a reference
    # cycle holding the leaves until the next garbage collection (AccumulateGrad steals a gradient only when
    # nothing else holds it)
    leaves: list = []
    spec = _walk(tree, leaves)
    return leaves, spec


def tree_leaves(tree) -> list:
    return tree_flatten(tree)[0]


def _build(spec: TreeSpec, it):
    if spec.is_leaf():
        return next(it)
    return _rebuild(spec.type, spec._context, [_build(c, it) for c in spec._children])


def tree_unflatten(leaves, treespec: TreeSpec):
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a "
                         f"pytree that holds {treespec.num_leaves} items ({treespec}).")
    return _build(treespec, iter(leaves))


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def tree_map_only(type_or_types, fn, tree):
    """tree_map of `fn` over the leaves that are instances of `type_or_types` (a type or a tuple of
    types); the other leaves stay as they are (torch.utils._pytree.tree_map_only, without its curried form)."""
    return tree_map(lambda x: fn(x) if isinstance(x, type_or_types) else x, tree)


def tree_any(pred, tree) -> bool:
    return any(map(pred, tree_leaves(tree)))


def tree_all(pred, tree) -> bool:
    return all(map(pred, tree_leaves(tree)))


def _flatten_up_to(prefix_spec: TreeSpec, tree) -> list:
    """tree's subtrees at the leaves of prefix_spec; ValueError where tree's structure differs above them."""
    if prefix_spec.is_leaf():
        return [tree]
    found = _children(tree)
    if found is None or found[0] is not prefix_spec.type and str(found[0]) != str(prefix_spec.type):
        raise ValueError(f"Node type mismatch; expected {prefix_spec.type}, but got {type(tree)}.")
    node_type, context, children = found
    if len(children) != prefix_spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {prefix_spec.num_children}, but got {len(children)}.")
    if node_type in (dict, OrderedDict, defaultdict):
        keys = context if node_type is not defaultdict else context[1]
        prefix_keys = prefix_spec._context if node_type is not defaultdict else prefix_spec._context[1]
        if set(keys) != set(prefix_keys):
            raise ValueError(f"Node keys mismatch; expected {prefix_keys}, but got {keys}.")
        children = [tree[k] for k in prefix_keys]      # the prefix's order
    out = []
    for child_spec, child in zip(prefix_spec._children, children):
        out.extend(_flatten_up_to(child_spec, child))
    return out


def broadcast_to_and_flatten(prefix_tree, treespec: TreeSpec):
    """prefix_tree's leaves, each repeated for every leaf of the subtree of treespec it stands for (as
    in_dims=(0, None) stands for a whole pytree argument); None where prefix_tree is not a prefix of
    treespec's structure (PyTorch's _broadcast_to_and_flatten)."""
    full_tree = tree_unflatten([0] * treespec.num_leaves, treespec)
    prefix_leaves, prefix_spec = tree_flatten(prefix_tree)
    try:
        subtrees = _flatten_up_to(prefix_spec, full_tree)
    except ValueError:
        return None
    result = []
    for value, subtree in zip(prefix_leaves, subtrees):
        result.extend([value] * tree_flatten(subtree)[1].num_leaves)
    return result


class _Asterisk(str):
    def __repr__(self) -> str:
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The structure drawn with `*` for each leaf: `(*, [*, *])`."""
    return repr(tree_unflatten([_Asterisk("*")] * treespec.num_leaves, treespec))
