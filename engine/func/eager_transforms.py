"""torch.func's differentiation transforms, ported from PyTorch 2.13's torch/_functorch/eager_transforms.py
with its argument handling, its pytrees and its messages: vjp, grad and grad_and_value, jacrev, jvp,
jacfwd, hessian and linearize.

Reverse mode runs on agrad's autograd through a GradLevel (grad_level.py says how a level's tensors go
in and come out). Forward mode runs on agrad's forward AD (autograd/forward_ad.py): the outermost jvp
opens a dual level and makes its primals dual, as torch.func's does. agrad's forward AD has one level
at a time, so a jvp inside an open level (jvp(jvp(f)), jacfwd(jacfwd(f))) computes its J v with the
double-vjp trick instead (the vjp g = J^T u is linear in u, so the gradient of g with respect to u
in the direction v is J v): the same numbers, made of reverse-mode ops, which the enclosing level's
forward AD differentiates like any other ops. jvp(grad(f)) and grad(jvp(f)) need no such help: the
backward's ops carry tangents, and tangents keep their graph where the primals require grad.

linearize computes J^T u once and, on each call of its jvp_fn, the gradient of it with respect to u
(the double-vjp trick again): the forward pass runs once, as PyTorch's traced graph does.
"""
from __future__ import annotations

import functools

from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd.backward_and_grad import grad as _grad
from ..creation import zeros_like
from ..dispatcher import ops as _ops
from ..grad_mode import enable_grad, is_grad_enabled
from .grad_level import GradLevel
from .pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten, treespec_pprint

__all__ = ["vjp", "grad", "grad_and_value", "jacrev", "jvp", "jacfwd", "hessian", "linearize", "debug_unwrap"]


def _as_tuple(val) -> tuple:
    return val if isinstance(val, tuple) else (val,)


def _float(t) -> bool:
    return t.is_floating_point() or t.is_complex()


# ---- argnums -------------------------------------------------------------------------------------------

def _validate_and_wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _slice_argnums(args: tuple, argnums, as_tuple: bool = True):
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        argnums = _validate_and_wrap_argnum(argnums, len(args))
        return (args[argnums],) if as_tuple else args[argnums]
    argnums = tuple(_validate_and_wrap_argnum(a, len(args)) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(args[i] for i in argnums)


def _replace_args(old_args: tuple, new_args: tuple, argnums) -> tuple:
    """old_args with the entries at argnums (already validated) replaced by new_args."""
    if isinstance(argnums, int):
        argnums = (_validate_and_wrap_argnum(argnums, len(old_args)),)
    else:
        argnums = tuple(_validate_and_wrap_argnum(a, len(old_args)) for a in argnums)
    return tuple(new_args[argnums.index(i)] if i in argnums else old_args[i] for i in range(len(old_args)))


# ---- checks ----------------------------------------------------------------------------------------------

def _error_if_complex(func_name: str, args, is_input: bool) -> None:
    for idx, arg in enumerate(tree_leaves(args)):
        if isinstance(arg, Tensor) and arg.is_complex():
            which = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{func_name}: Expected all {which} to be real but received complex tensor at "
                               f"flattened input idx: {idx}")


def _assert_non_empty_tensor_output(output: list, api: str) -> None:
    if (len(output) == 1 and output[0] is None) or len(output) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {output})")
    for o in output:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _assert_non_empty_list_of_tensors(output: list, api: str, argname: str) -> None:
    if len(output) == 0:
        raise RuntimeError(f"{api}: Expected {argname} to contain at least one Tensor.")
    for out in output:
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{api}: Expected {argname} to only contain Tensors, got {type(out)}")


def _split_aux(output, api: str):
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


# ---- vjp --------------------------------------------------------------------------------------------------

def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=False, create_graph=True) -> tuple:
    """autograd.grad over the outputs that require grad; zeros for an input that none of them reaches."""
    if grad_outputs is None:
        diff_outputs = tuple(out for out in outputs if out.requires_grad)
    else:
        pairs = tuple((out, go) for out, go in zip(outputs, grad_outputs) if out.requires_grad)
        diff_outputs, grad_outputs = (tuple(zip(*pairs)) if pairs else ((), ()))
    if len(diff_outputs) == 0:
        return tuple(zeros_like(inp) for inp in inputs)
    grad_inputs = _grad(diff_outputs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
                        allow_unused=True)
    return tuple(zeros_like(inp) if gi is None else gi for gi, inp in zip(grad_inputs, inputs))


def vjp(func, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) is the vector-Jacobian product of func at
    primals with cotangents (a pytree shaped like func's output), one gradient per primal."""
    return _vjp_with_argnums(func, *primals, has_aux=has_aux)


def _vjp_with_argnums(func, *primals, argnums=None, has_aux: bool = False):
    level = GradLevel()
    with enable_grad():
        if argnums is None:
            diff_primals = tree_map(level.wrap, primals)
            primals = diff_primals
        else:
            diff_primals = tree_map(level.wrap, _slice_argnums(primals, argnums, as_tuple=False))
            primals = _replace_args(primals, _as_tuple(diff_primals) if isinstance(argnums, tuple)
                                    else (diff_primals,), argnums)
        primals_out = func(*primals)
        aux = None
        if has_aux:
            primals_out, aux = _split_aux(primals_out, "vjp(f, *primals)")
            aux = level.unwrap(aux)
        flat_primals_out, primals_out_spec = tree_flatten(primals_out)
        _assert_non_empty_tensor_output(flat_primals_out, "vjp(f, *primals)")
        flat_diff_primals, primals_spec = tree_flatten(diff_primals)
        results = level.unwrap(primals_out)
        outputs_reach_outside = level.reaches_outside(flat_primals_out)
        for primal_out in flat_primals_out:
            if not _float(primal_out):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {primal_out.dtype}")

    def wrapper(cotangents, retain_graph: bool = True, create_graph=None):
        flat_cotangents, cotangents_spec = tree_flatten(cotangents)
        if primals_out_spec != cotangents_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {treespec_pprint(cotangents_spec)}, "
                               f"primal output: {treespec_pprint(primals_out_spec)}")
        if create_graph is None:
            # torch's default, is_grad_enabled(), where something outside can differentiate the result
            create_graph = level.needs_graph(is_grad_enabled(),
                                             outputs_reach_outside or level.reaches_outside(flat_cotangents))
        result = _autograd_grad(flat_primals_out, flat_diff_primals, flat_cotangents, retain_graph=retain_graph,
                                create_graph=create_graph)
        return level.unwrap(tree_unflatten(result, primals_spec))

    if has_aux:
        return results, wrapper, aux
    return results, wrapper


# ---- grad -------------------------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function that returns (the gradient of func with respect to the arguments at argnums, func's
    value); func must return a scalar Tensor (with has_aux, a (scalar, aux) tuple)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value_impl(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """A function that returns the gradient of func with respect to the arguments at argnums (with
    has_aux, (gradient, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        results = _grad_and_value_impl(func, argnums, has_aux, args, kwargs)
        if has_aux:
            g, (_, aux) = results
            return g, aux
        return results[0]
    return wrapper


def _grad_and_value_impl(func, argnums, has_aux: bool, args: tuple, kwargs: dict):
    level = GradLevel()
    with enable_grad():
        diff_args = tree_map(level.wrap, _slice_argnums(args, argnums, as_tuple=False))
        args = _replace_args(args, diff_args if isinstance(argnums, tuple) else (diff_args,), argnums)
        output = func(*args, **kwargs)
        aux = None
        if has_aux:
            output, aux = _split_aux(output, "grad_and_value(f)(*args)")
        if not isinstance(output, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        flat_diff_args, spec = tree_flatten(diff_args)
        # NOTE: retain_graph, where torch.func's frees: its levels have a graph each, agrad's transforms
        # share one, and a transform outside this one differentiates through the forward nodes again
        flat_grad_input = _autograd_grad((output,), flat_diff_args, retain_graph=True,
                                         create_graph=level.needs_graph(level.outer_grad,
                                                                        level.reaches_outside((output,))))
        grad_input = level.unwrap(tree_unflatten(flat_grad_input, spec))
        output = level.unwrap(output)
        if has_aux:
            aux = level.unwrap(aux)
    if has_aux:
        return grad_input, (output, aux)
    return grad_input, output


# ---- jacrev -------------------------------------------------------------------------------------------------

def _chunk_sizes(total: int, chunk_size: int) -> list:
    sizes = [chunk_size] * (total // chunk_size)
    if total % chunk_size:
        sizes.append(total % chunk_size)
    return sizes


def _chunked_standard_basis_for_(tensors, tensor_numels, chunk_size=None):
    """The standard basis of the space of all `tensors` together, in chunks of chunk_size rows: for each
    chunk, one tensor per input of shape (rows, *its shape), the rows' ones on a shifted diagonal."""
    total_numel = sum(tensor_numels)
    if chunk_size and chunk_size < total_numel:
        chunk_numels = _chunk_sizes(total_numel, chunk_size)
    else:
        chunk_size = total_numel
        chunk_numels = [total_numel]
    diag_start_indices, start = [], 0
    for numel in tensor_numels:
        diag_start_indices.append(start)
        start -= numel
    for chunk_idx, rows in enumerate(chunk_numels):
        chunks = tuple(t.new_zeros(rows, numel) for t, numel in zip(tensors, tensor_numels))
        for chunk, diag_start in zip(chunks, diag_start_indices):
            chunk.diagonal(diag_start + chunk_idx * chunk_size).fill_(1)
        yield tuple(chunk.view(rows, *t.shape) for chunk, t in zip(chunks, tensors))


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """A function that returns the Jacobian of func with respect to the arguments at argnums, by reverse
    mode: one vjp per row of the output's standard basis, chunk_size rows at a time (None: all at once),
    nested as the outputs' pytree of the inputs' pytrees."""
    from .vmap import vmap

    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper_fn(*args):
        _error_if_complex("jacrev", args, is_input=True)
        vjp_out = _vjp_with_argnums(func, *args, argnums=argnums, has_aux=has_aux)
        if has_aux:
            output, vjp_fn, aux = vjp_out
        else:
            output, vjp_fn = vjp_out
        flat_output, output_spec = tree_flatten(output)
        _error_if_complex("jacrev", flat_output, is_input=False)
        flat_output_numels = tuple(out.numel() for out in flat_output)
        primals = _slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)

        chunked_results = []
        for flat_basis_chunk in _chunked_standard_basis_for_(flat_output, flat_output_numels, chunk_size):
            if chunk_size == 1:
                flat_basis_chunk = [t.squeeze(0) for t in flat_basis_chunk]
            basis = tree_unflatten(flat_basis_chunk, output_spec)
            chunked_result = vjp_fn(basis) if chunk_size == 1 else vmap(vjp_fn)(basis)
            flat_results = tree_leaves(chunked_result)
            if chunk_size == 1:
                flat_results = [t.unsqueeze(0) for t in flat_results]
            chunked_results.append(flat_results)
        if len(chunked_results) == 1:
            flat_jacobians_per_input = chunked_results[0]
        else:
            flat_jacobians_per_input = [_ops.cat([r[idx] for r in chunked_results], 0)
                                        for idx in range(len(flat_primals))]

        flat_input_flat_output = [
            tuple(split.view(out.shape + primal.shape)
                  for split, out in zip(result.split(list(flat_output_numels), dim=0), flat_output))
            for result, primal in zip(flat_jacobians_per_input, flat_primals)]
        flat_output_flat_input = tuple(zip(*flat_input_flat_output))
        flat_output_input = tuple(tree_unflatten(flat_input, primals_spec) for flat_input in flat_output_flat_input)
        if isinstance(argnums, int):
            flat_output_input = tuple(flat_input[0] for flat_input in flat_output_input)
        output_input = tree_unflatten(flat_output_input, output_spec)
        if has_aux:
            return output_input, aux
        return output_input

    return wrapper_fn


# ---- jvp ----------------------------------------------------------------------------------------------------

_JVP_STR = "jvp(f, primals, tangents)"


def _zero_tangent(primal, strict: bool):
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                           "This is not allowed with strict=True.")
    return zeros_like(primal)


def _safe_unpack_dual(dual, strict: bool):
    if not isinstance(dual, Tensor):
        raise RuntimeError(f"{_JVP_STR}: expected f(*args) to return only tensors, got unsupported type {type(dual)}")
    primal, tangent = forward_ad.unpack_dual(dual)
    return primal, (_zero_tangent(primal, strict) if tangent is None else tangent)


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian-vector product of func at primals with tangents[, aux]), by forward
    mode; primals and tangents are tuples of the same pytree structure."""
    return _jvp_with_argnums(func, primals, tangents, argnums=None, strict=strict, has_aux=has_aux)


def _jvp_with_argnums(func, primals, tangents, argnums, *, strict: bool = False, has_aux: bool):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP_STR}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff_args = primals if argnums is None else _slice_argnums(primals, argnums)
    flat_primals, primals_spec = tree_flatten(diff_args)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP_STR}: Expected primals and tangents to have the same python structure. For "
                           f"example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with "
                           f"structure {primals_spec} and tangents with structure {tangents_spec}")
    _assert_non_empty_list_of_tensors(flat_primals, _JVP_STR, "primals")
    _assert_non_empty_list_of_tensors(flat_tangents, _JVP_STR, "tangents")

    def call(flat_inputs):
        inputs = tree_unflatten(flat_inputs, primals_spec)
        args = inputs if argnums is None else _replace_args(primals, inputs, argnums)
        out = func(*args)
        aux = None
        if has_aux:
            out, aux = _split_aux(out, _JVP_STR)
        flat_out, spec = tree_flatten(out)
        _assert_non_empty_tensor_output(flat_out, _JVP_STR)
        return flat_out, spec, aux

    if forward_ad._current_level >= 0:
        return _nested_jvp(call, flat_primals, flat_tangents, strict, has_aux)
    with forward_ad.dual_level():
        flat_duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
        flat_out, spec, aux = call(flat_duals)
        primals_out, tangents_out = zip(*[_safe_unpack_dual(dual, strict) for dual in flat_out])
        if has_aux:
            aux = tree_map(lambda a: forward_ad.unpack_dual(a).primal if isinstance(a, Tensor) else a, aux)
    primals_out, tangents_out = tree_unflatten(primals_out, spec), tree_unflatten(tangents_out, spec)
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def _nested_jvp(call, flat_primals, flat_tangents, strict: bool, has_aux: bool):
    """jvp inside an open dual level: J v by the double-vjp trick (see the module's docstring)."""
    level = GradLevel()
    with enable_grad():
        wrapped = [level.wrap(p) for p in flat_primals]
        flat_out, spec, aux = call(wrapped)
        tangents_out = [None] * len(flat_out)
        diff = [k for k, o in enumerate(flat_out) if isinstance(o, Tensor) and _float(o) and o.requires_grad]
        if diff:
            # ones, not zeros: g is linear in u whatever u is, and a backward formula that takes the log of
            # its grad_output (logcumsumexp's) has no derivative at zero
            us = [_ops.ones_like(flat_out[k]).requires_grad_() for k in diff]
            for u in us:
                level.own(u)
            gs = _grad([flat_out[k] for k in diff], wrapped, us, create_graph=True, allow_unused=True)
            pairs = [(g, v) for g, v in zip(gs, flat_tangents) if g is not None and g.requires_grad]
            jvs = (_grad([g for g, _ in pairs], us, [v for _, v in pairs], create_graph=True, allow_unused=True)
                   if pairs else [None] * len(us))
            for k, jv in zip(diff, jvs):
                tangents_out[k] = jv
        tangents_out = [_zero_tangent(o, strict) if t is None else t for o, t in zip(flat_out, tangents_out)]
        primals_out = level.unwrap(tree_unflatten(flat_out, spec))
        tangents_out = level.unwrap(tree_unflatten(tangents_out, spec))
        if has_aux:
            return primals_out, tangents_out, level.unwrap(aux)
    return primals_out, tangents_out


# ---- jacfwd and hessian ----------------------------------------------------------------------------------------

def _safe_unflatten(tensor, dim: int, shape):
    if len(shape) == 0:
        return tensor.squeeze(dim)
    return tensor.unflatten(dim, shape)


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """A function that returns the Jacobian of func with respect to the arguments at argnums, by forward
    mode: one jvp per vector of the inputs' standard basis (vmapped, a loop: see vmap), nested as
    jacrev's."""
    from .vmap import vmap

    @functools.wraps(func)
    def wrapper_fn(*args):
        _error_if_complex("jacfwd", args, is_input=True)
        primals = args if argnums is None else _slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)
        flat_primals_numels = tuple(p.numel() for p in flat_primals)
        flat_basis = next(_chunked_standard_basis_for_(flat_primals, flat_primals_numels))
        basis = tree_unflatten(flat_basis, primals_spec)

        def push_jvp(basis):
            output = _jvp_with_argnums(func, args, basis, argnums=argnums, has_aux=has_aux)
            _error_if_complex("jacfwd", output[0], is_input=False)
            if has_aux:
                _, jvp_out, aux = output
                return jvp_out, aux
            return output[1]

        results = vmap(push_jvp, randomness=randomness)(basis)
        aux = None
        if has_aux:
            results, aux = results
            flat_aux, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([value[0] for value in flat_aux], aux_spec)
        jac_outs, spec = tree_flatten(results)
        jac_outs_ins = tuple(
            tuple(_safe_unflatten(jac_out_in, -1, primal.shape)
                  for primal, jac_out_in in zip(flat_primals, jac_out.movedim(0, -1).split(list(flat_primals_numels),
                                                                                           dim=-1)))
            for jac_out in jac_outs)
        jac_outs_ins = tuple(tree_unflatten(jac_ins, primals_spec) for jac_ins in jac_outs_ins)
        if isinstance(argnums, int):
            jac_outs_ins = tuple(jac_ins[0] for jac_ins in jac_outs_ins)
        if has_aux:
            return tree_unflatten(jac_outs_ins, spec), aux
        return tree_unflatten(jac_outs_ins, spec)

    return wrapper_fn


def hessian(func, argnums=0):
    """The Hessian of func with respect to the arguments at argnums: jacfwd(jacrev(func)), as torch's."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- linearize ----------------------------------------------------------------------------------------------

def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product of func at primals,
    without running func again (see the module's docstring)."""
    level = GradLevel()
    flat_primals, primals_argspec = tree_flatten(primals)
    with enable_grad():
        wrapped = [level.wrap(p) for p in flat_primals]
        output = func(*tree_unflatten(wrapped, primals_argspec))
        flat_output, output_spec = tree_flatten(output)
        diff = [k for k, o in enumerate(flat_output) if isinstance(o, Tensor) and _float(o) and o.requires_grad]
        us = [_ops.ones_like(flat_output[k]).requires_grad_() for k in diff]
        for u in us:
            level.own(u)
        gs = (_grad([flat_output[k] for k in diff], wrapped, us, create_graph=True, allow_unused=True)
              if diff else [None] * len(wrapped))
    flat_primals_meta = [(p.shape, p.device, p.dtype) for p in flat_primals]

    def forward_ad_checks(flat_tangents) -> None:
        for idx, (t, (shape, device, dtype)) in enumerate(zip(flat_tangents, flat_primals_meta)):
            if t.shape != shape:
                raise RuntimeError(f"tangent:{idx} with shape {t.shape} in flattened pytree doesn't match the shape "
                                   f"{shape} of the corresponding primal.")
            if t.device != device:
                raise RuntimeError(f"tangent:{idx} with device {t.device} in flattened pytree doesn't match the "
                                   f"device {device} of the corresponding primal.")
            if t.dtype != dtype:
                raise RuntimeError(f"tangent:{idx} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                                   f"{dtype} of the corresponding primal.")

    def jvp_fn(*tangents):
        flat_tangents, tangent_argspec = tree_flatten(tangents)
        if tangent_argspec != primals_argspec:
            raise RuntimeError(f"Expected the tangents {tangent_argspec} to have the same argspec as the primals "
                               f"{primals_argspec}")
        forward_ad_checks(flat_tangents)
        pairs = [(g, v) for g, v in zip(gs, flat_tangents) if g is not None and g.requires_grad]
        create_graph = is_grad_enabled()
        with enable_grad():
            jvs = (_grad([g for g, _ in pairs], us, [v for _, v in pairs], retain_graph=True,
                         create_graph=create_graph, allow_unused=True) if pairs else [None] * len(us))
        tangents_out = list(flat_output)
        for k, jv in zip(diff, jvs):
            tangents_out[k] = zeros_like(flat_output[k]) if jv is None else jv
        for k, o in enumerate(flat_output):
            if isinstance(o, Tensor) and k not in diff:
                tangents_out[k] = zeros_like(o)
        return tree_map(level.unwrap_one, tree_unflatten(tangents_out, output_spec))

    return tree_map(level.unwrap_one, output), jvp_fn


def debug_unwrap(tensor, *, recurse: bool = True):
    """The tensor a transform's wrapper holds: the tensor itself, since agrad's transforms hand the
    function plain tensors (a GradLevel's leaves and views, forward AD's duals, vmap's slices)."""
    return tensor
