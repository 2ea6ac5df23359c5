"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a whole function, ported from
PyTorch 2.13's torch/autograd/functional.py with its checks, its order and its messages.

The contract each function keeps, as PyTorch's does:
- `inputs` (and `v`) are a Tensor or a tuple of Tensors, and the results come back in the same form: a
  Tensor for a Tensor, a tuple for a tuple (`_as_tuple` in, `_tuple_postprocess` out); a Jacobian is
  nested outputs-then-inputs, a Hessian inputs-then-inputs.
- The function is called on fresh Tensor objects (`_grad_preprocess`): detached leaves that require grad,
  or, with `create_graph=True`, views of the inputs that already require grad, so that the results stay
  differentiable back to the caller's tensors. Without `create_graph` the results are detached.
- A gradient autograd does not reach is a tensor of zeros (`_fill_in_zeros`); with `strict=True` it is
  a RuntimeError instead, as is an output that does not require grad, or (with `create_graph=True`) a
  result that does not depend on the inputs.
- jvp and hvp use the double-backward trick: the backward of a vjp is linear in its grad_outputs, so
  differentiating it with respect to them gives the forward-mode product.

agrad has no vmap with batching rules (agrad.func.vmap is a loop). `vectorize=True` hands the standard
basis to `autograd.grad(is_grads_batched=True)`, which runs one backward per basis vector: the numbers and checks
of PyTorch's vectorized path, not its speed. `strategy="forward-mode"` (with vectorize=True, the only case
PyTorch runs) gives forward AD's results by the double-backward trick batched over the inputs' basis:
each entry in its output's dtype, with a graph where PyTorch's tangents would have one; PyTorch's errors
for its other cases.
"""
from __future__ import annotations

from .._tensor import Tensor
from ..creation import zeros_like
from ..dispatcher import ops as _ops
from ..grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .backward_and_grad import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# -- utilities ----------------------------------------------------------------------------------------
def _as_tuple_nocheck(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp, arg_name=None, fn_name=None):
    """(whether `inp` was a tuple, `inp` as a tuple of Tensors); without names, only the tuple."""
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                                f"but the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the given {arg_name} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo _as_tuple: `to_unpack` is one flag, or two for a nested result (outer, inner)."""
    if isinstance(to_unpack, tuple):
        if len(to_unpack) != 2:
            raise AssertionError("Expected to_unpack tuple to have exactly 2 elements")
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph) -> tuple:
    # NOTE: always a new Tensor object, so that gradients are taken with respect to what the function was
    # given and not to the same tensors the function may have captured (pytorch/pytorch#32576). A view keeps
    # the caller's graph when create_graph asks for it; agrad has no sparse tensors, so PyTorch's clone()
    # for those has no counterpart here.
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph) -> tuple:
    """Detach what goes back to the user unless create_graph asked for history (nested tuples too)."""
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple) -> None:
    """`v` has one tensor per tensor of `other`, each of its size (other's sizes are right by definition)."""
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict) -> None:
    """strict mode's errors for tensors that do not require grad; `input_type` says which stage made them."""
    if not strict:
        return
    if input_type not in ["outputs", "grad_inputs", "jacobian", "hessian"]:
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            # only grad_inputs can hold None
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i} is independent of the "
                    "input. This is not allowed in strict mode. You should ensure that your function is thrice "
                    "differentiable and that the hessian depends on the inputs.")
            if input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided function with "
                    f"respect to input {i} is independent of the input. This is not allowed in strict mode. You "
                    "should ensure that your function is twice differentiable and that the jacobian depends on the "
                    "inputs (this would be violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False) -> tuple:
    """autograd.grad that accepts None among `outputs` and skips the outputs that do not require grad
    (None for every input when none is left); unused inputs give None."""
    if not isinstance(outputs, tuple):
        raise AssertionError("Expected outputs to be a tuple")
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    if not isinstance(grad_outputs, tuple):
        raise AssertionError("Expected grad_outputs to be a tuple")
    if len(outputs) != len(grad_outputs):
        raise AssertionError(f"Expected outputs and grad_outputs to have the same length, but got {len(outputs)} "
                             f"and {len(grad_outputs)}")
    kept = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not kept:
        # no differentiable output: nothing for the engine to do
        return (None,) * len(inputs)
    return _grad(tuple(out for out, _ in kept), inputs, tuple(g for _, g in kept), allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph, is_grads_batched=is_grads_batched)


def _fill_in_zeros(grads, refs, strict, create_graph, stage) -> tuple:
    """Each None of `grads` made zeros shaped like `refs[i]`, or strict mode's error for `stage` (which
    backward made them: back, back_trick, double_back, double_back_trick)."""
    if stage not in ["back", "back_trick", "double_back", "double_back_trick"]:
        raise RuntimeError(f"Invalid stage argument '{stage}' to _fill_in_zeros")
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i} in the grad_outputs "
                        "when using the double backward trick to compute forward mode gradients. This is not "
                        "allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                raise RuntimeError(
                    f"The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                    "This is not allowed in strict mode as it prevents from using the double backward trick to "
                    "replace forward mode AD.")
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            if "double" not in stage:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            raise RuntimeError(f"The hessian of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        res += (grads_i,)
    return res


# -- vector products ----------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the dot product of `v` (shaped like the outputs; may be None for a single
    one-element output) with the Jacobian of `func` at `inputs`."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
    # NOTE: without create_graph the backward runs in the caller's grad mode, as PyTorch's does
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), `v` shaped like the inputs (None for a single one-element input), by the
    double-backward trick: J v is the gradient of the vjp (J^T u) with respect to u, in the direction v."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # NOTE: backward is linear in grad_outputs, so their value never enters the double-backward graph;
        # zeros only have to be free of inf and nan
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


# -- Jacobian and Hessian -----------------------------------------------------------------------------
def _construct_standard_basis_for(tensors, tensor_numels) -> tuple:
    """The N x N identity (N = sum of the numels), split by columns into one chunk per tensor, each in
    that tensor's dtype and device: row k is the k-th basis vector of the tensors laid end to end."""
    if len(tensors) != len(tensor_numels):
        raise AssertionError(f"Expected tensors and tensor_numels to have the same length, but got "
                             f"{len(tensors)} and {len(tensor_numels)}")
    if len(tensors) == 0:
        raise AssertionError("Expected at least one tensor")
    total_numel = sum(tensor_numels)
    chunks = tuple(tensor.new_zeros(total_numel, numel) for tensor, numel in zip(tensors, tensor_numels))
    diag_start_idx = 0
    for chunk, numel in zip(chunks, tensor_numels):
        chunk.diagonal(diag_start_idx).fill_(1)
        diag_start_idx -= numel
    return chunks


def _jacfwd(func, inputs, strict=False, vectorize=False):
    """PyTorch's forward-mode Jacobian: one Jacobian-vector product per basis vector of the inputs laid
    end to end (PyTorch vmaps one forward-AD pass over that basis), so entry (i, j) has output i's dtype.

    agrad has no dual tensors: each J e_k comes from the double-backward trick (see jvp), batched over the
    basis in one autograd.grad(is_grads_batched=True): the same numbers and shapes, not forward AD's cost.
    """
    if strict:
        raise RuntimeError('agrad.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                           'not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        # NOTE: PyTorch's message, its missing space included
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    input_numels = tuple(inp.numel() for inp in inputs)
    tangents = _construct_standard_basis_for(inputs, input_numels)
    # NOTE: forward AD gives the tangents a graph where they depend on inputs that require grad and grad
    # mode is on (PyTorch does not detach them); the emulation keeps the double backward's graph in that
    # case only. hessian's forward-over-reverse makes its inputs require grad, hence its flag.
    keep_graph = is_grad_enabled() and (any(inp.requires_grad for inp in inputs)
                                        or getattr(func, "_makes_inputs_require_grad", False))
    with enable_grad():
        # a fresh Tensor per input as make_dual gives one: a view keeps the caller's graph
        primals = tuple(inp.view_as(inp) if inp.requires_grad else inp.detach().requires_grad_(True)
                        for inp in inputs)
        # NOTE: PyTorch checks these with fn_name None, hence its "given to None" in the message
        is_outputs_tuple, outputs = _as_tuple(func(*primals), "outputs")
        differentiable = [i for i, out in enumerate(outputs) if out.requires_grad]
        grad_outputs = tuple(zeros_like(outputs[i], requires_grad=True) for i in differentiable)
        # J^T u, linear in u: its gradient with respect to u in the direction e_k is J e_k
        grad_inputs = _autograd_grad(tuple(outputs[i] for i in differentiable), primals, grad_outputs,
                                     create_graph=True)
        batch = (sum(input_numels),)
        # the basis as one batch per input, each row viewed as that input
        batched_tangents = tuple(t.view(batch + inp.shape) for t, inp in zip(tangents, inputs))
        kept = [(g, v) for g, v in zip(grad_inputs, batched_tangents) if g is not None]
        if kept and differentiable:
            jvps = _grad(tuple(g for g, _ in kept), grad_outputs, tuple(v for _, v in kept), allow_unused=True,
                         create_graph=keep_graph, is_grads_batched=True)
        else:
            jvps = (None,) * len(differentiable)
    per_output = [None] * len(outputs)
    for i, jv in zip(differentiable, jvps):
        per_output[i] = jv if keep_graph or jv is None else jv.detach()
    jacobian_output_input = []
    for jac_output_i, output_i in zip(per_output, outputs):
        if jac_output_i is None:
            # no tangent reaches this output (or it is not differentiable): zeros of its dtype
            jac_output_i = zeros_like(output_i.detach()).expand(batch + output_i.shape)
        jacobian_output_i = []
        for jac, input_j in zip(jac_output_i.split(input_numels, dim=0), inputs):
            # the batch dimension runs over the inputs' elements: last, then viewed as input_j's shape
            jacobian_output_i.append(jac.permute(*range(1, jac.ndim), 0).reshape((*output_i.shape, *input_j.shape)))
        jacobian_output_input.append(jacobian_output_i)
    return _tuple_postprocess(jacobian_output_input, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: for output i and input j a tensor of shape
    output_i.shape + input_j.shape, nested as (outputs)(inputs) where those were tuples.

    Without `vectorize` one backward per output element; with it, the standard basis goes to
    autograd.grad(is_grads_batched=True) in one call, as PyTorch's vmap path does (agrad runs that one
    backward per basis vector: the same values, no speed-up). `strategy="forward-mode"` needs forward-mode
    AD, which agrad lacks: it raises PyTorch's errors, and NotImplementedError where PyTorch would run it.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('agrad.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            result = _jacobian_vectorized(outputs, inputs, create_graph, strict)
        else:
            result = _jacobian_by_rows(outputs, inputs, create_graph, strict)
        result = _grad_postprocess(result, create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_by_rows(outputs, inputs, create_graph, strict) -> tuple:
    """One backward per element of each output; row j of output i's Jacobian is d out_i[j] / d inputs."""
    jacobian = ()
    for i, out in enumerate(outputs):
        jac_i = tuple([] for _ in inputs)
        for j in range(out.nelement()):
            vj = _autograd_grad((out.reshape(-1)[j],), inputs, retain_graph=True, create_graph=create_graph)
            for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                if vj_el is not None:
                    if strict and create_graph and not vj_el.requires_grad:
                        # NOTE: PyTorch's message names the output's index i here, not the input's
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                           f"{i}. This is not allowed in strict mode when create_graph=True.")
                    jac_i_el.append(vj_el)
                else:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                           f"{el_idx}. This is not allowed in strict mode.")
                    jac_i_el.append(zeros_like(inp_el))
        jacobian += (tuple(_ops.stack(jac_i_el, 0).view(out.size() + inputs[el_idx].size())
                           for el_idx, jac_i_el in enumerate(jac_i)),)
    return jacobian


def _jacobian_vectorized(outputs, inputs, create_graph, strict) -> tuple:
    """The outputs flattened and laid end to end; the standard basis of that vector is the batch of
    grad_outputs of one batched autograd.grad, whose result per input is split back by output."""
    if strict:
        raise RuntimeError("agrad.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    output_numels = tuple(output.numel() for output in outputs)
    grad_outputs = _construct_standard_basis_for(outputs, output_numels)
    flat_outputs = tuple(output.reshape(-1) for output in outputs)
    vj = list(_autograd_grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph, is_grads_batched=True))
    for el_idx, vj_el in enumerate(vj):
        if vj_el is None:
            vj[el_idx] = zeros_like(inputs[el_idx]).expand((sum(output_numels),) + inputs[el_idx].shape)
    # per input, one block per output; then transposed to (outputs)(inputs)
    jacobian_input_output = [[jac.view(output_j.shape + input_i.shape)
                              for jac, output_j in zip(jac_input_i.split(output_numels, dim=0), outputs)]
                             for jac_input_i, input_i in zip(vj, inputs)]
    return tuple(zip(*jacobian_input_output))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient, nested (inputs)(inputs) where the
    inputs are a tuple. `vectorize` and `outer_jacobian_strategy` apply to the outer Jacobian (see jacobian)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # _grad_preprocess keeps the graph only of inputs that require grad
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    # the forward-mode Jacobian of jac_func keeps a graph, as PyTorch's does (its duals now require grad)
    jac_func._makes_inputs_require_grad = outer_jacobian_strategy == "forward-mode"

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_and_gradient(func, inputs, v, create_graph, strict, fn_name):
    """What vhp and hvp share: the checked inputs and v, the single one-element output and its gradient
    (with a graph, to be differentiated again)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function: the gradient of its gradient in the direction v."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_function_and_gradient(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function, by the double-backward trick on v^T H (H v = (v^T H)^T,
    but PyTorch computes it this way, and so its strict-mode checks)."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_function_and_gradient(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        # NOTE: PyTorch checks `jac` again here, not `double_back`; kept so that the errors are its errors
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)
