"""torch.cond and torch.while_loop (PyTorch 2.13's torch/_higher_order_ops/cond.py and while_loop.py), as
they behave in eager mode: the argument checks and messages of their Python fronts, then the branch or
the loop run as Python, which is what their dense kernels (cond_op_dense, while_loop_dense) do.

agrad has no compiler: PyTorch sends a tensor predicate and every while_loop through torch.compile, which
traces both branches and the body on fake tensors first. What that tracing adds is kept where the eager
run can see it: a loop body's results must match the carried inputs in number and metadata (shape,
dtype, strides, device, checked at each step, PyTorch's messages). A branch not taken is not run, so the two
branches' results are not compared, and inputs returned as outputs (aliasing, which tracing refuses) are
not detected. Gradients flow through the ops the branch or the body ran, recorded as usual (the grad_fn
is theirs, where PyTorch records CondAutogradOpBackward / WhileLoopAutogradOpBackward around them).
"""
from __future__ import annotations

from ._tensor import Tensor
from .dtypes import bool_
from .func.pytree import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["cond", "while_loop"]


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands); pred is a bool (or int or float) or a tensor of
    one element, operands a tuple or list of (possibly nested dict/list/tuple of) tensors."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)

    if not isinstance(pred, (bool, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or any(not isinstance(t, Tensor) for t in tree_leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only "
                           f"consists of tensor leaves, but got {operands}.")
    return true_fn(*operands) if pred else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """val = carried_inputs; while cond_fn(*val): val = body_fn(*val); return val. cond_fn returns a bool or a
    boolean 0-d tensor; body_fn returns as many tensors or ints as it takes, each with its input's
    metadata. The result has the structure body_fn returns; with no iteration it is a copy of carried_inputs
    (a tuple, tensors cloned: without tracing the body, its structure is not known then)."""
    flat_inputs = tree_leaves(carried_inputs)
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    allowed_types = (Tensor, int)
    if not all(isinstance(arg, allowed_types) for arg in flat_inputs):
        raise AssertionError(f"{flat_inputs} can only be of {allowed_types} but got "
                             f"{tuple(type(arg) for arg in flat_inputs)}")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")

    # the functions see the carried values in carried_inputs' structure, the loop carries their leaves
    # (PyTorch's flat_cond_fn / flat_body_fn), and the result has the body's structure
    flat, in_spec = tree_flatten(carried_inputs)
    should_loop = _checked_pred(cond_fn(*tree_unflatten(flat, in_spec)))
    if not should_loop:
        return tuple(tree_unflatten([val.clone() if isinstance(val, Tensor) else val for val in flat], in_spec))
    while should_loop:
        out = body_fn(*tree_unflatten(flat, in_spec))
        out_leaves = tree_leaves(out)
        _check_body_output(out_leaves, flat)
        flat = out_leaves
        should_loop = _checked_pred(cond_fn(*tree_unflatten(flat, in_spec)))
    return out


def _checked_pred(pred):
    if (isinstance(pred, Tensor) and tuple(pred.shape) == () and pred.dtype == bool_) or isinstance(pred, bool):
        return pred
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")


def _check_body_output(lhs_list, rhs_list) -> None:
    """The body's results match what it was given, leaf for leaf: what PyTorch's tracing of the body checks
    (torch._higher_order_ops.utils' check_meta_consistency: shape, dtype, strides, device; an int where a
    tensor was), with its messages."""
    if len(lhs_list) != len(rhs_list):
        raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same number of outputs but got "
                           f"lhs:{lhs_list} and rhs:{rhs_list}")
    all_diffs = []
    for i, (lhs, rhs) in enumerate(zip(lhs_list, rhs_list)):
        if isinstance(lhs, Tensor) and isinstance(rhs, Tensor):
            diff = ", ".join(f"'{name}: {x} vs {y}'" for name, x, y in (
                ("shape", lhs.shape, rhs.shape), ("dtype", lhs.dtype, rhs.dtype),
                ("stride", lhs.stride(), rhs.stride())) if x != y)
        elif not (isinstance(lhs, int) and isinstance(rhs, int)):
            diff = f"type: {lhs} vs {rhs}"
        else:
            diff = ""
        if diff:
            all_diffs.append(f"pair[{i}] differ in {diff}, where lhs is {lhs} and rhs is {rhs}")
        if isinstance(lhs, Tensor) and isinstance(rhs, Tensor) and lhs.device != rhs.device:
            all_diffs.append(f"pair[{i}] differ in device, where lhs is {lhs} and rhs is {rhs}")
    if all_diffs:
        diff_str = "\n".join(all_diffs)
        raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same metadata but found:\n{diff_str}")
