"""agrad.func, as torch.func: composable function transforms on agrad's engine.

    from agrad.func import grad, vmap, jacrev, functional_call
    per_sample_grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)

eager_transforms.py holds the differentiation transforms (grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian, linearize), vmap.py vmap (a loop over the mapped dimension: agrad has no batching
rules), functional_call.py functional_call and stack_module_state, batch_norm_replacement.py
replace_all_batch_norm_modules_; pytree.py the pytrees they flatten their arguments with,
grad_level.py how a reverse-mode transform's tensors go in and come out.
"""
from .batch_norm_replacement import replace_all_batch_norm_modules_
from .eager_transforms import debug_unwrap, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .functional_call import functional_call, stack_module_state
from .vmap import vmap

# not torch.func's functionalize (agrad runs ops eagerly and has no functional IR for it to produce) nor
# rearrange (einops)
__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize", "functional_call",
           "stack_module_state", "vmap", "replace_all_batch_norm_modules_", "debug_unwrap"]
