"""torch.utils._pytree: the pytrees of agrad.func.pytree (one implementation), under torch's name, for the
code that PyTorch writes against this module (a __torch_dispatch__ handler unwrapping its arguments)."""
from ..func.pytree import (LeafSpec, TreeSpec, tree_all, tree_any, tree_flatten, tree_leaves, tree_map,  # noqa: F401
                           tree_map_only, tree_unflatten, treespec_pprint)

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_map_only", "tree_leaves",
           "tree_any", "tree_all", "treespec_pprint"]
