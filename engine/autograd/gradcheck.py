"""gradcheck: analytic gradients against central finite differences, as torch.autograd.gradcheck.

PyTorch's torch/autograd/gradcheck.py is the reference: its checks, in its order, with its
messages and exception types.
- Every input that requires grad and is not float64 is warned about ("Input #i requires
  gradient and is not a double precision ...") and then checked, in its own dtype.
- The function runs in the caller's grad mode, the finite differences too. Only the outputs
  that require grad (the differentiable outputs) are compared; a function with none must
  have a numerical gradient of 0.
- Each analytic Jacobian is computed twice: the two must agree within `nondet_tol`, or
  backward is not reentrant.
- An output whose shape or dtype changes when an input is perturbed is an AssertionError,
  which `raise_exception=False` does not turn into False (only a GradcheckError does).
Defaults are PyTorch's (eps=1e-6, atol=1e-5, rtol=1e-3). The slow mode compares whole
Jacobians (one backward per output element, twice; two forwards per input element);
`fast_mode` compares one projection v^T J u with PyTorch's non-negative unit vectors u, v
and its tolerance atol * sum(u) * sum(v) (HIPS/autograd's check in a random direction).

`numerical_jacobian`, `analytical_jacobian` and `jacobian_report` are the pieces
`gradcheck_report` (`agrad check`) and `agrad check --workers` build their verdicts from.
Matrices here are (output elements, input elements); messages print them transposed, as
PyTorch's Jacobians are laid out.

Complex numbers as PyTorch checks them (its _gradcheck_real_imag): a function with complex outputs is
checked twice in backward mode, as the function of their imaginary parts, then of their real parts
("While considering the imaginary part of complex outputs only, ..."); for a complex input the
numerical Jacobian is the conjugate Wirtinger derivative ds/dx + i ds/dy (a real and an imaginary
perturbation), which is what backward gives for a real output. In forward mode complex inputs are
split instead: the function of their real parts (imaginary parts held), then of their imaginary parts.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from .. import creation
from .._tensor import Tensor
from ..generator import draws_refused
from ..grad_mode import enable_grad, no_grad
from .backward_and_grad import grad as autograd_grad
from .function import Function

__all__ = ["gradcheck", "gradgradcheck", "gradcheck_report", "JacobianReport", "GradcheckError",
           "get_numerical_jacobian", "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    pass


@dataclass
class JacobianReport:
    input_index: int              # position in `inputs`
    max_abs_err: float
    max_rel_err: float
    worst_index: tuple | None     # element of the input where the error is largest (slow mode)
    passed: bool
    numerical: np.ndarray | None = None
    analytical: np.ndarray | None = None
    # where two backward passes gave this input different gradients (by more than nondet_tol): the
    # largest difference. Backward is not reentrant, and the input fails (gradcheck raises for it).
    nondeterminism: float | None = None


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _float_outputs(out) -> list[Tensor]:
    """The floating-point and complex tensors among a function's outputs: the ones with a Jacobian."""
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex())]


def _parts_of_outputs(fn):
    """(fn with real() applied to its complex outputs, fn with imag() applied): PyTorch's _real_and_imag_output."""
    from ..dispatcher import ops

    def applied(part):
        def wrapped(*inputs):
            return tuple(part(o) if isinstance(o, Tensor) and o.is_complex() else o for o in _as_tuple(fn(*inputs)))
        return wrapped
    return applied(ops.real), applied(ops.imag)


def _parts_of_inputs(fn, complex_positions, inputs):
    """PyTorch's _real_and_imag_input: fn of the real parts of its complex inputs (their imaginary parts
    held at the inputs' own), and fn of their imaginary parts (real parts held)."""
    def applied(rebuild):
        def wrapped(*args):
            args = list(args)
            for k in complex_positions:
                args[k] = rebuild(args[k], inputs[k])
            return _as_tuple(fn(*args))
        return wrapped
    return (applied(lambda x, orig: x + orig.detach().imag * 1j),
            applied(lambda x, orig: orig.detach().real + x * 1j))


def _check_inputs(inputs) -> list[int]:
    """Positions of the inputs that require grad; PyTorch's warning for each one not in double, and
    its refusal of one that overlaps itself (a dimension of stride 0: an expanded tensor), whose
    finite differences would perturb several elements at once."""
    positions = []
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp._data.dtype not in (np.float64, np.complex128):
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ", stacklevel=3)
            # (an empty tensor overlaps nothing; NumPy may give it stride 0 where PyTorch would not)
            if inp.numel() and not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                                   "inputs that are non-overlapping to be able to compute the numerical gradients "
                                   "correctly. You should call .contiguous on the input before passing it to "
                                   "gradcheck.")
            positions.append(idx)
    if not positions:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    return positions


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t._host())


def _like(t: Tensor, array) -> Tensor:
    """`array` as a tensor of t's dtype on t's device."""
    return Tensor._make(t._device.backend.asarray(array, t._data.dtype, t._device), t._device, t._device.backend.key)


def _perturbed(inputs, i, array) -> list:
    t = inputs[i]
    p = Tensor._make(t._device.backend.asarray(array, t._data.dtype, t._device), t._device, t._keys)
    if t.requires_grad:
        # it stands for the input: the function sees a tensor that requires grad, as the input does
        p.requires_grad_(True)
    return [p if j == i else x for j, x in enumerate(inputs)]


def _outputs_at(fn, inputs, i, array) -> list:
    """fn's float outputs, each with a host copy of its values, with inputs[i] holding `array`.

    As PyTorch's (`input.data.copy_` in _compute_numerical_gradient), the input itself is written in place,
    outside autograd (no version bump), and restored: a function that reads it through a closure sees the
    perturbation as well. The values are copied at once, as an output may alias the input. (A read-only
    array cannot be written: the function then gets a fresh tensor holding `array`.)"""
    t = inputs[i]
    data = t._data
    flags = getattr(data, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):
        outs = _float_outputs(fn(*_perturbed(inputs, i, array)))
        return [(o, np.array(_host(o))) for o in outs]
    saved = data.copy()
    data[...] = t._device.backend.asarray(array, data.dtype, t._device)
    try:
        outs = _float_outputs(fn(*inputs))
        return [(o, np.array(_host(o))) for o in outs]
    finally:
        data[...] = saved


def _same_dtype_and_shape(minus: Tensor, plus: Tensor, eps, idx=None) -> None:
    on_index = f"on index {idx} " if idx is not None else ""
    if minus.shape != plus.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed "
                             f"{on_index}by {eps}, but got: shapes {minus.shape} and {plus.shape}.")
    if minus.dtype != plus.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
                             f"{on_index}by {eps}, but got: dtypes {minus.dtype} and {plus.dtype}.")


def _central_difference(fn, inputs, i, minus, plus, eps, idx=None) -> list[np.ndarray]:
    """(f(plus) - f(minus)) / 2 eps, flattened, for every float output, in the output's dtype (as
    PyTorch computes it); `minus` and `plus` are values of inputs[i]. The minus side runs first."""
    f_minus = _outputs_at(fn, inputs, i, minus)
    f_plus = _outputs_at(fn, inputs, i, plus)
    columns = []
    for (a, a_values), (b, b_values) in zip(f_minus, f_plus):
        _same_dtype_and_shape(a, b, eps, idx)
        columns.append(((b_values - a_values) / (2 * eps)).reshape(-1))
    return columns


def _differentiable(fn, inputs) -> list[bool]:
    return [o.requires_grad for o in _float_outputs(fn(*inputs))]


def numerical_jacobian(fn, inputs, i, eps, columns: range | None = None, *, keep: list[bool] | None = None
                       ) -> list[np.ndarray]:
    """One matrix per output compared: d output (flattened) / d inputs[i] (flattened), by central
    differences. `keep`: which float outputs (default: `compared_outputs`); `columns`: only those columns (the elements of inputs[i] perturbed), as `agrad check
    --workers` shares them out. Each column depends on nothing but its index."""
    x = inputs[i]
    base = np.array(_host(x), order="K")
    keep = compared_outputs(fn, inputs) if keep is None else keep
    done = []
    for j in (range(base.size) if columns is None else columns):
        # NOTE: the input's memory layout is kept (PyTorch perturbs the input in place): what an op
        # reads through strides (as_strided) sees the same element at the same place
        at = np.unravel_index(j, base.shape)
        idx = tuple(int(v) for v in at)

        def along(step):
            minus, plus = base.copy(order="K"), base.copy(order="K")
            minus[at] -= step
            plus[at] += step
            return [c for c, k in zip(_central_difference(fn, inputs, i, minus, plus, eps, idx), keep) if k]
        if base.dtype.kind == "c":
            # the conjugate Wirtinger derivative: ds/dx + i ds/dy (PyTorch's numerical C -> R Jacobian)
            done.append([dx + 1j * dy for dx, dy in zip(along(eps), along(eps * 1j))])
        else:
            done.append(along(eps))
    if done:
        return [np.stack([c[o] for c in done], axis=1) for o in range(len(done[0]))]
    return [np.zeros((o.numel(), 0), o._data.dtype) for o, k in zip(_float_outputs(fn(*inputs)), keep) if k]


def vjp(output: Tensor, diff_inputs: list, grad_output: Tensor) -> tuple:
    """One row of the analytic Jacobian: the gradients of `output` for `grad_output` (None where
    an input is unused), the graph kept for the next row. A caller of gradcheck_report may pass
    another function that gives the same (graphs/check_replay.py replays the first one's kernels)."""
    return autograd_grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)


def _vjps(output: Tensor, diff_inputs: list, grad_outputs, nondet_tol, vjp=vjp,
          unstable: dict | None = None) -> list[np.ndarray]:
    """v^T J for each row v of `grad_outputs` (arrays of output's shape), per input: matrices
    (rows, input elements) in the input's dtype. Computed twice, as PyTorch checks that
    backward is reentrant; a gradient of the wrong size is reported as PyTorch does. Where the
    two differ by more than nondet_tol: GradcheckError, or with `unstable` (a report's), the
    largest difference recorded there by input position, as a verdict."""
    def rows():
        per_input = [np.zeros((len(grad_outputs), t.numel()), t._data.dtype) for t in diff_inputs]
        sizes_ok = True
        for r, seed in enumerate(grad_outputs):
            grads = vjp(output, diff_inputs, _like(output, seed))
            for k, g in enumerate(grads):
                if g is None:
                    continue
                if g.shape != diff_inputs[k].shape:
                    sizes_ok = False
                    continue
                per_input[k][r] = _host(g).reshape(-1)
        return per_input, sizes_ok

    first, sizes_ok = rows()
    second, _ = rows()
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    # (NaN differences count as equal, as in PyTorch's `not max > tol`)
    differing = {k: float(np.max(np.abs(a - b))) for k, (a, b) in enumerate(zip(first, second))
                 if a.size and np.max(np.abs(a - b)) > nondet_tol}
    if differing and unstable is not None:
        for k, difference in differing.items():
            unstable[k] = max(unstable.get(k, 0.0), difference)
    elif differing:
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches numerical "
                             f"gradient.The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    return first


def _jacobian(output: Tensor, diff_inputs: list, nondet_tol, vjp=vjp, unstable: dict | None = None) -> list[np.ndarray]:
    """d output / d each input, one backward per output element (twice: see `_vjps`)."""
    n = output.numel()
    return _vjps(output, diff_inputs, np.eye(n, dtype=output._data.dtype).reshape((n, *output.shape)), nondet_tol,
                 vjp, unstable)


def compared_outputs(fn, inputs) -> list[bool]:
    """Which float outputs of `fn` a check compares: those that require grad, as PyTorch's; when
    none does, all of them, whose numerical gradient must then be 0."""
    differentiable = _differentiable(fn, inputs)
    return differentiable if any(differentiable) else [True] * len(differentiable)


def analytical_jacobian(fn, inputs, diff_positions, *, nondet_tol: float = 0.0,
                        keep: list[bool] | None = None, vjp=vjp, unstable: dict | None = None) -> list[list[np.ndarray]]:
    """[output][input] matrices for the outputs `keep` selects (default: `compared_outputs`); an
    output that does not require grad has zeros. `vjp`: how a row is computed (`vjp`'s contract);
    `unstable`: see `_vjps`."""
    floats = _float_outputs(fn(*inputs))
    keep = compared_outputs(fn, inputs) if keep is None else keep
    diff_inputs = [inputs[i] for i in diff_positions]
    return [_jacobian(o, diff_inputs, nondet_tol, vjp, unstable) if o.requires_grad else
            [np.zeros((o.numel(), x.numel()), x._data.dtype) for x in diff_inputs]
            for o, k in zip(floats, keep) if k]


def _allclose(analytical, numerical, rtol, atol) -> bool:
    return bool(np.all(np.abs(analytical - numerical) <= atol + rtol * np.abs(numerical)))


def _compare(numerical, analytical, atol, rtol):
    diff = np.abs(analytical - numerical)
    scale = np.maximum(np.abs(numerical), np.abs(analytical))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1), 0.0)
    return diff, rel, _allclose(analytical, numerical, rtol, atol)


def _printed(matrix: np.ndarray, like: Tensor) -> Tensor:
    """A Jacobian as PyTorch prints it: (input elements, output elements)."""
    return Tensor._make(like._device.backend.asarray(np.ascontiguousarray(matrix.T), matrix.dtype, like._device),
                        like._device, like._device.backend.key)


def _mismatch(output_idx, input_idx, numerical, analytical, complex_indices=(), test_imag=False) -> str:
    return (_part_prefix(output_idx in complex_indices, test_imag, "outputs") +
            f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _part_prefix(is_complex: bool, test_imag: bool, element: str) -> str:
    """PyTorch's _get_notallclose_msg prefix, for a check of one part of complex outputs (inputs)."""
    if not is_complex:
        return ""
    return f"While considering the {'imaginary' if test_imag else 'real'} part of complex {element} only, "


def _unit_vector(rng, n: int, dtype) -> np.ndarray:
    """PyTorch's fast-mode vector: uniform in [0, 1), normalised (real: a complex dtype's real one)."""
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return (v / norm if norm > 0 else v).astype(np.empty(0, dtype).real.dtype)


def _input_vectors(rng, inputs, diff_positions) -> list:
    """u per input: a unit vector, or for a complex input a pair (for its real and imaginary parts)."""
    us = []
    for i in diff_positions:
        n, dtype = inputs[i].numel(), inputs[i]._data.dtype
        us.append((_unit_vector(rng, n, dtype), _unit_vector(rng, n, dtype)) if dtype.kind == "c"
                  else _unit_vector(rng, n, dtype))
    return us


def _sum_of(u) -> float:
    """sum(u) for the tolerance (PyTorch's _adjusted_atol takes a pair's first vector)."""
    return float(np.sum(u[0] if isinstance(u, tuple) else u))


def _numerical_jvps(fn, inputs, i, u, eps) -> list[np.ndarray]:
    base = np.array(_host(inputs[i]))

    def along(direction):
        step = (direction * eps).reshape(base.shape)
        return _central_difference(fn, inputs, i, base - step, base + step, eps)
    if isinstance(u, tuple):            # J u of a complex input: ds/dx along u_re + i ds/dy along u_im
        return [dx + 1j * dy for dx, dy in zip(along(u[0]), along(u[1] * 1j))]
    return along(u)


def _u_dot(vj: np.ndarray, u) -> complex | float:
    """(v^T J) u, J's columns for a complex input taken as PyTorch's fast mode takes them: the real parts
    against u_re, the imaginary parts against u_im."""
    if isinstance(u, tuple):
        return np.sum(vj.real * u[0]) + 1j * np.sum(vj.imag * u[1])
    return np.sum(vj * u)


def _gradcheck_helper(fn, inputs, eps, atol, rtol, nondet_tol, fast_mode, seed, check_forward_ad=False,
                      check_backward_ad=True, check_undefined_grad=False) -> bool:
    """PyTorch's _gradcheck_helper up to the batched and undefined backward checks: the Jacobians by
    backward mode, then by forward mode (and its undefined-tangent check), then backward's handling of
    a zero grad_output."""
    inputs = _as_tuple(inputs)
    diff_positions = _check_inputs(inputs)
    floats = _float_outputs(fn(*inputs))
    outputs = [o for o in floats if o.requires_grad]
    if check_backward_ad:
        complex_indices = [k for k, o in enumerate(outputs) if o.is_complex()]
        if any(o.is_complex() for o in floats):
            real_fn, imag_fn = _parts_of_outputs(fn)
            for part_fn, test_imag in ((imag_fn, True), (real_fn, False)):     # PyTorch's order
                _backward_check(part_fn, inputs, diff_positions, eps, atol, rtol, nondet_tol, fast_mode, seed,
                                complex_indices, test_imag)
        else:
            _backward_check(fn, inputs, diff_positions, eps, atol, rtol, nondet_tol, fast_mode, seed)
    if check_forward_ad:
        complex_inputs = [i for i in diff_positions if inputs[i].is_complex()]
        if complex_inputs:
            real_fn, imag_fn = _parts_of_inputs(fn, complex_inputs, inputs)
            for part_fn, part, test_imag in ((imag_fn, "imag", True), (real_fn, "real", False)):
                parts = tuple(getattr(x, part).detach().clone().requires_grad_(x.requires_grad) if k in complex_inputs
                              else x for k, x in enumerate(inputs))
                _forward_check(part_fn, parts, diff_positions, eps, atol, rtol, nondet_tol, fast_mode, seed,
                               [diff_positions.index(i) for i in complex_inputs], test_imag)
                if check_undefined_grad:
                    _check_undefined_forward(part_fn, parts, diff_positions, seed)
        else:
            _forward_check(fn, inputs, diff_positions, eps, atol, rtol, nondet_tol, fast_mode, seed)
            if check_undefined_grad:
                _check_undefined_forward(fn, inputs, diff_positions, seed)
    if check_backward_ad and outputs:
        _backward_mul_by_grad_output(outputs, [inputs[i] for i in diff_positions])
    return True


def _backward_check(fn, inputs, diff_positions, eps, atol, rtol, nondet_tol, fast_mode, seed, complex_indices=(),
                    test_imag=False) -> None:
    """The Jacobians by backward mode against the numerical ones (of fn's real outputs: a function with
    complex ones is checked part by part, `test_imag` saying which, `complex_indices` which outputs)."""
    floats = _float_outputs(fn(*inputs))
    outputs = [o for o in floats if o.requires_grad]
    if fast_mode:
        _fast_gradcheck(fn, inputs, diff_positions, floats, outputs, eps, atol, rtol, nondet_tol, seed,
                        complex_indices, test_imag)
    elif not outputs:
        _check_no_differentiable_outputs(fn, inputs, diff_positions, floats, eps)
    else:
        keep = [o.requires_grad for o in floats]
        numerical = [numerical_jacobian(fn, inputs, i, eps, keep=keep) for i in diff_positions]  # [input][output]
        for oi, o in enumerate(outputs):
            analytical = _jacobian(o, [inputs[i] for i in diff_positions], nondet_tol)
            for j, (a, i) in enumerate(zip(analytical, diff_positions)):
                n = numerical[j][oi]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_mismatch(oi, j, _printed(n, o), _printed(a, inputs[i]), complex_indices,
                                                   test_imag))


def _forward_check(fn, inputs, diff_positions, eps, atol, rtol, nondet_tol, fast_mode, seed, complex_indices=(),
                   test_imag=False) -> None:
    """The Jacobians by forward mode against the numerical ones (of fn's real inputs: complex ones are
    split by the caller, `complex_indices` saying which of the checked inputs they are)."""
    floats = _float_outputs(fn(*inputs))
    outputs = [o for o in floats if o.requires_grad]
    if not outputs:
        if fast_mode:
            _fast_gradcheck(fn, inputs, diff_positions, floats, outputs, eps, atol, rtol, nondet_tol, seed)
        else:
            _check_no_differentiable_outputs(fn, inputs, diff_positions, floats, eps)
    elif fast_mode:
        _fast_forward_gradcheck(fn, inputs, diff_positions, floats, eps, atol, rtol, seed, complex_indices, test_imag)
    else:
        _slow_forward_gradcheck(fn, inputs, diff_positions, floats, eps, atol, rtol, complex_indices, test_imag)


def _check_no_differentiable_outputs(fn, inputs, diff_positions, floats, eps) -> None:
    for i in diff_positions:
        for jacobian in numerical_jacobian(fn, inputs, i, eps, keep=[True] * len(floats)):
            if np.any(jacobian != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# -- forward mode: the Jacobian's columns J u from the tangents of the outputs --------------------
def _forward_ad_jvps(fn, inputs, diff_positions, directions) -> list:
    """[input][direction][float output]: J u as flat arrays, by forward AD, for each direction u (an
    array of the input's shape) given as the tangent of that input, the others' tangents zero (as
    PyTorch's _get_analytical_jacobian_forward_ad, its duals made of detached inputs). An output
    without a tangent has J u = 0."""
    from . import forward_ad as fwAD
    found = []
    with fwAD.dual_level():
        duals = list(inputs)
        tangents = []
        for i in diff_positions:
            x = inputs[i].detach()
            duals[i] = fwAD.make_dual(x, _like(x, np.zeros(x.shape)))
            # the dual's own tangent, which fn's ops read (make_dual may keep a copy for a view)
            tangents.append(fwAD.unpack_dual(duals[i]).tangent)
        for tangent, us in zip(tangents, directions):
            per_input = []
            for u in us:
                with no_grad():
                    tangent.copy_(_like(tangent, u))
                per_input.append([np.zeros(o.numel(), o._data.dtype) if t is None else np.array(_host(t)).reshape(-1)
                                  for o, t in ((o, fwAD.unpack_dual(o).tangent) for o in _float_outputs(fn(*duals)))])
                with no_grad():
                    tangent.zero_()
            found.append(per_input)
    return found


def _forward_mismatch(output_idx, input_idx, numerical, analytical, complex_indices=(), test_imag=False) -> str:
    return (_part_prefix(input_idx in complex_indices, test_imag, "inputs") +
            f"Jacobian computed with forward mode mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n")


def _slow_forward_gradcheck(fn, inputs, diff_positions, floats, eps, atol, rtol, complex_indices=(),
                            test_imag=False) -> None:
    """Whole Jacobians: one forward-AD evaluation per input element (a unit tangent), against central
    differences."""
    keep = [o.requires_grad for o in floats]
    outputs = [o for o, k in zip(floats, keep) if k]
    directions = []
    for i in diff_positions:
        n = inputs[i].numel()
        eye = np.eye(n, dtype=inputs[i]._data.dtype)
        directions.append([eye[j].reshape(inputs[i].shape) for j in range(n)])
    analytical = _forward_ad_jvps(fn, inputs, diff_positions, directions)
    for j, i in enumerate(diff_positions):
        numerical = numerical_jacobian(fn, inputs, i, eps, keep=keep)
        columns = [[c for c, k in zip(col, keep) if k] for col in analytical[j]]
        for oi, (o, n) in enumerate(zip(outputs, numerical)):
            a = (np.stack([c[oi] for c in columns], axis=1) if columns
                 else np.zeros((o.numel(), 0), o._data.dtype))
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_forward_mismatch(oi, j, _printed(n, o), _printed(a, inputs[i]), complex_indices,
                                                       test_imag))


def _fast_forward_gradcheck(fn, inputs, diff_positions, floats, eps, atol, rtol, seed, complex_indices=(),
                            test_imag=False) -> None:
    """J u for one random unit u per input, by forward AD and by central differences along u; the
    tolerance atol * sum(u) (PyTorch's _adjusted_atol without v)."""
    rng = np.random.default_rng(seed)
    us = [_unit_vector(rng, inputs[i].numel(), inputs[i]._data.dtype) for i in diff_positions]
    keep = [o.requires_grad for o in floats]
    outputs = [o for o, k in zip(floats, keep) if k]
    analytical = _forward_ad_jvps(fn, inputs, diff_positions,
                                  [[u.reshape(inputs[i].shape)] for i, u in zip(diff_positions, us)])
    for j, (i, u) in enumerate(zip(diff_positions, us)):
        numerical = [c for c, k in zip(_numerical_jvps(fn, inputs, i, u, eps), keep) if k]
        a_all = [c for c, k in zip(analytical[j][0], keep) if k]
        for oi, (o, a, n) in enumerate(zip(outputs, a_all, numerical)):
            if not _allclose(a, n, rtol, atol * float(np.sum(u))):
                raise GradcheckError(_forward_mismatch(oi, j, _printed(np.atleast_2d(n), o),
                                                       _printed(np.atleast_2d(a), inputs[i]), complex_indices,
                                                       test_imag))


def _check_undefined_forward(fn, inputs, diff_positions, seed) -> None:
    """_test_undefined_forward_mode: with the other inputs' tangents random, an input given a zero
    tangent and one given none must give the outputs the same tangents."""
    from . import forward_ad as fwAD
    rng = np.random.default_rng(seed)
    us = [_unit_vector(rng, inputs[i].numel(), inputs[i]._data.dtype) for i in diff_positions]
    with fwAD.dual_level():
        duals = list(inputs)
        for i, u in zip(diff_positions, us):
            x = inputs[i].detach()
            duals[i] = fwAD.make_dual(x, _like(x, u.reshape(x.shape)))
        for i in diff_positions:
            kept = duals[i]
            x = inputs[i].detach()
            duals[i] = fwAD.make_dual(x, _like(x, np.zeros(x.shape)))
            zero_tangent = _float_outputs(fn(*duals))
            duals[i] = x
            no_tangent = _float_outputs(fn(*duals))
            duals[i] = kept
            for k, (o1, o2) in enumerate(zip(zero_tangent, no_tangent)):
                t1, t2 = fwAD.unpack_dual(o1).tangent, fwAD.unpack_dual(o2).tangent
                if t1 is not None and t2 is not None and not np.allclose(_host(t1), _host(t2)):
                    raise GradcheckError(f"Mismatch in tangent values for output with index: {k} when input: "
                                         f"{inputs[i]} has an undefined tangent value.  Got: {t1} but expected: "
                                         f"{t2}")


def _fast_gradcheck(fn, inputs, diff_positions, floats, outputs, eps, atol, rtol, nondet_tol, seed,
                    complex_indices=(), test_imag=False) -> None:
    rng = np.random.default_rng(seed)
    us = _input_vectors(rng, inputs, diff_positions)
    vs = [_unit_vector(rng, o.numel(), o._data.dtype) for o in outputs]
    keep = [o.requires_grad for o in floats]
    numerical = []                                     # [input][output]: v . (J u)
    for i, u in zip(diff_positions, us):
        jvps = _numerical_jvps(fn, inputs, i, u, eps)
        if not outputs:
            for jvp in jvps:
                if jvp.size and np.max(np.abs(jvp)) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        numerical.append([np.sum(v * jvp) for v, jvp in zip(vs, (j for j, k in zip(jvps, keep) if k))])
    diff_inputs = [inputs[i] for i in diff_positions]
    for oi, (o, v) in enumerate(zip(outputs, vs)):
        vjs = _vjps(o, diff_inputs, [v.reshape(o.shape)], nondet_tol)
        for j, (vj, u) in enumerate(zip(vjs, us)):
            a, n = _u_dot(vj[0], u), numerical[j][oi]
            if not _allclose(a, n, rtol, atol * _sum_of(u) * float(np.sum(v))):
                raise GradcheckError(_mismatch(oi, j, _printed(np.atleast_2d(n), o),
                                               _printed(np.atleast_2d(a), diff_inputs[j]), complex_indices, test_imag))


def _backward_mul_by_grad_output(outputs, diff_inputs) -> None:
    """A zero grad_output must give zero gradients, of the input's dtype, device and size."""
    zeros = [_like(o, np.zeros(o.shape)) for o in outputs]
    grads = autograd_grad(outputs, diff_inputs, zeros, allow_unused=True)
    for g, x in zip(grads, diff_inputs):
        if g is None:
            continue
        if np.any(_host(g) != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None, seed=0) -> bool:
    """True when every analytic gradient matches finite differences; else raises GradcheckError
    (or, with raise_exception=False, returns False). PyTorch's checks besides: backward handles
    undefined output gradients (check_undefined_grad, on by default) and gives the same gradients
    batched (check_batched_grad, through autograd.grad's is_grads_batched). check_forward_ad compares
    the Jacobians forward AD gives (autograd/forward_ad.py) with the same finite differences, and
    that a zero tangent and none give the same output tangents (check_undefined_grad).
    check_batched_forward_grad gives forward AD a batch of tangents the way agrad's vmap does.
    Complex inputs and outputs are checked as PyTorch's gradcheck checks them (see the module's docstring).
    (check_grad_dtypes and masked concern sparse tensors, which agrad has not.)"""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        _gradcheck_helper(fn, inputs, eps, atol, rtol, nondet_tol, fast_mode, seed, check_forward_ad=check_forward_ad,
                          check_backward_ad=check_backward_ad, check_undefined_grad=check_undefined_grad)
        if check_batched_forward_grad:
            _check_batched_forward_grad(fn, _as_tuple(inputs))
        if not check_backward_ad:
            return True
        if check_batched_grad:
            _check_batched_grad(fn, _as_tuple(inputs), seed)
        if check_undefined_grad:
            _check_undefined_grad(fn, _as_tuple(inputs))
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


class _UndefinedGrad(Function):
    """torch._C._functions.UndefinedGrad: the identity, whose backward hands on no gradient at all
    (what an output nothing depends on gives the Nodes before it)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


_UNDEFINED_NOTE = 'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'


def _check_undefined_grad(fn, inputs) -> None:
    """_test_undefined_backward_mode: every backward must take undefined gradients for all of its
    outputs, and, where it has several, for each one alone, and give undefined or zero ones."""
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]

    def supported(outs) -> None:
        try:
            grads = autograd_grad(outs, diff, [_like(o, np.zeros(o.shape)) for o in outs], allow_unused=True)
        except RuntimeError as exc:
            _warn_undefined_check()
            raise GradcheckError(f"Expected backward function to handle undefined output grads. "
                                 f"{_UNDEFINED_NOTE}") from exc
        if any(g is not None and np.any(_host(g) != 0) for g in grads):
            _warn_undefined_check()
            raise GradcheckError(f"Expected all input grads to be undefined or zero when all output grads are "
                                 f"undefined or zero. {_UNDEFINED_NOTE}")

    def differentiable():
        return [o for o in _float_outputs(fn(*inputs)) if o.requires_grad]

    with enable_grad():
        outs = differentiable()
        supported([_UndefinedGrad.apply(o) for o in outs])
        if len(outs) > 1:
            for k in range(len(outs)):
                supported([_UndefinedGrad.apply(o) if j == k else o for j, o in enumerate(differentiable())])


def _warn_undefined_check() -> None:
    warnings.warn('Backwards compatibility: New undefined gradient support checking feature is enabled by default, '
                  'but it may break existing callers of this function. If this is true for you, you can call this '
                  'function with "check_undefined_grad=False" to disable the feature', stacklevel=5)


def _check_batched_grad(fn, inputs, seed) -> None:
    """_test_batched_grad: the gradients of a batch of grad_outputs (is_grads_batched=True) are those of
    each one alone."""
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    rng = np.random.default_rng(seed)
    with enable_grad():
        outs = [o for o in _float_outputs(fn(*inputs)) if o.requires_grad]
        if not outs:
            return
        batch = [_like(o, rng.standard_normal((2, *o.shape))) for o in outs]
        try:
            batched = autograd_grad(outs, diff, batch, retain_graph=True, allow_unused=True, is_grads_batched=True)
        except RuntimeError as exc:
            raise GradcheckError(f"While computing batched gradients, got: {exc}") from exc
        for b in range(2):
            alone = autograd_grad(outs, diff, [g[b] for g in batch], retain_graph=True, allow_unused=True)
            for i, (x, y) in enumerate(zip(batched, alone)):
                if (x is None) != (y is None) or x is not None and not np.allclose(_host(x[b]), _host(y),
                                                                                  rtol=1e-7, atol=1e-10):
                    raise GradcheckError(f"For output {i}, the batched gradient of grad_output {b} is not the "
                                         "gradient computed for it alone")


_BATCHED_FORWARD_NOTE = """
If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then set check_batched_forward_grad=False
  as a keyword argument.
- is OpInfo-based (e.g., in test_ops_fwd_gradients.py), then modify the OpInfo for the test
  to have `check_batched_forward_grad=False`
"""


# torch._vmap_internals._vmap's refusal, the vmap gradcheck maps with
_RANDOM_IN_VMAP = ("vmap: We do not yet support calling random operations inside of vmap. Please perform random "
                   "operations outside of vmap as a workaround")


def _check_batched_forward_grad(fn, inputs) -> None:
    """_test_batched_grad_forward_ad: for each float input that requires grad, the output tangents of two
    random tangents (from the global generator, as torch.randn_like), each alone, against those of the same
    two stacked into one batch and mapped over. PyTorch maps with functorch's vmap; agrad's vmap
    (agrad.func.vmap) is a loop over the batch, so here each tangent is given as its row of the batch — a
    view into a larger tensor, which a forward formula that assumed its own fresh tangent would get wrong
    — and the batched result is stacked from the rows, as that vmap stacks it."""
    from . import forward_ad as fwAD
    for k, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad and x.is_floating_point()):
            continue

        def jvp(tangent, k=k, x=x) -> list:
            with fwAD.dual_level():
                duals = [fwAD.make_dual(x.detach(), tangent) if j == k else
                         (a.detach() if isinstance(a, Tensor) else a) for j, a in enumerate(inputs)]
                found = []
                for out in _as_tuple(fn(*duals)):
                    if out is None:
                        continue
                    primal, t = fwAD.unpack_dual(out)
                    found.append(_host(t).copy() if t is not None else np.zeros(primal.shape, primal._data.dtype))
                return found

        tangents = [creation.randn_like(x.detach()) for _ in range(2)]
        expected = [np.stack(shards) for shards in zip(*[jvp(t) for t in tangents])]
        batch = _like(x, np.stack([_host(t) for t in tangents]))
        try:
            with draws_refused(_RANDOM_IN_VMAP):
                rows = [jvp(batch.select(0, b)) for b in range(2)]
        except RuntimeError as exc:
            raise GradcheckError(f"While computing batched gradients, got: {exc}\n\n{_BATCHED_FORWARD_NOTE}") from exc
        for i, (res, exp) in enumerate(zip([np.stack(shards) for shards in zip(*rows)], expected)):
            if not np.allclose(res, exp, rtol=1e-5, atol=1e-8):
                raise GradcheckError(f"For output {i} and input {i}:\n\n{_BATCHED_FORWARD_NOTE}\n\nGot:\n{res}\n\n"
                                     f"Expected:\n{exp}".strip())


# -- the per-input report `agrad check` shows ----------------------------------------
def gradcheck_report(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=False, seed=0,
                     nondet_tol=0.0, vjp=vjp) -> list[JacobianReport]:
    """gradcheck's comparison as a verdict per input that requires grad (its worst element and
    errors) instead of the first mismatch. The same checks: the outputs compared are those that
    require grad (with none, every float output, against 0); backward must be reentrant (an input
    whose gradients differ between two passes fails, with the difference as its `nondeterminism`).
    `vjp`: how a row of the analytic Jacobian is computed (`vjp`'s contract)."""
    inputs = list(_as_tuple(inputs))
    diff_positions = _check_inputs(inputs)
    keep = compared_outputs(fn, inputs)
    unstable = {}
    if fast_mode:
        reports = _fast_report(fn, inputs, diff_positions, keep, eps, atol, rtol, seed, nondet_tol, unstable)
    else:
        analytical = analytical_jacobian(fn, inputs, diff_positions, nondet_tol=nondet_tol, keep=keep, vjp=vjp,
                                         unstable=unstable)
        # NOTE: the finite differences are values only: under no_grad, which tells a function that can
        # (agrad check's graph, graphs/check_replay.py) that nothing will differentiate them
        with no_grad():
            numerical = [numerical_jacobian(fn, inputs, i, eps, keep=keep) for i in diff_positions]
        reports = [jacobian_report(i, tuple(inputs[i].shape), numerical[k], [a[k] for a in analytical], atol, rtol)
                   for k, i in enumerate(diff_positions)]
    return not_reentrant(reports, unstable)


def not_reentrant(reports: list[JacobianReport], unstable: dict) -> list[JacobianReport]:
    """`reports` with each input `unstable` names (its position: the largest difference between two
    backward passes' gradients, from `_vjps`) failed for it."""
    return [replace(r, passed=False, nondeterminism=unstable[k]) if k in unstable else r
            for k, r in enumerate(reports)]


def jacobian_report(i: int, shape: tuple, numerical: list, analytical: list, atol, rtol) -> JacobianReport:
    """The verdict for input `i` (of `shape`) from its numerical and analytical matrices, one
    of each per output compared."""
    worst_abs, worst_rel, worst_idx, ok = 0.0, 0.0, None, True
    num_all = np.concatenate(numerical, axis=0) if numerical else np.zeros((0, 0))
    ana_all = np.concatenate(analytical, axis=0) if analytical else np.zeros((0, 0))
    if num_all.size:
        diff, rel, ok = _compare(num_all, ana_all, atol, rtol)
        worst_abs, worst_rel = float(diff.max()), float(rel.max())
        flat = int(np.unravel_index(np.argmax(diff), diff.shape)[1])
        worst_idx = tuple(int(v) for v in np.unravel_index(flat, shape)) if shape else ()
    return JacobianReport(i, worst_abs, worst_rel, worst_idx, ok, num_all, ana_all)


def _fast_report(fn, inputs, diff_positions, keep, eps, atol, rtol, seed, nondet_tol, unstable):
    compared = [o for o, k in zip(_float_outputs(fn(*inputs)), keep) if k]
    rng = np.random.default_rng(seed)
    us = [_unit_vector(rng, inputs[i].numel(), inputs[i]._data.dtype) for i in diff_positions]
    vs = [_unit_vector(rng, o.numel(), o._data.dtype) for o in compared]
    diff_inputs = [inputs[i] for i in diff_positions]
    vjs = [_vjps(o, diff_inputs, [v.reshape(o.shape)], nondet_tol, unstable=unstable)
           for o, v in zip(compared, vs) if o.requires_grad]
    reports = []
    for k, (i, u) in enumerate(zip(diff_positions, us)):
        with no_grad():         # values only, as in gradcheck_report
            jvps = [j for j, kept in zip(_numerical_jvps(fn, inputs, i, u, eps), keep) if kept]
        numerical = float(sum(np.sum(v * jvp) for v, jvp in zip(vs, jvps)))
        analytical = float(sum(np.sum(vj[k][0] * u) for vj in vjs))
        tolerance = atol * float(np.sum(u)) * sum(float(np.sum(v)) for v in vs)
        diff, rel, ok = _compare(np.array([numerical]), np.array([analytical]), tolerance, rtol)
        reports.append(JacobianReport(i, float(diff.max()), float(rel.max()), None, ok,
                                      np.array([numerical]), np.array([analytical])))
    return reports


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False, seed=0) -> bool:
    """gradcheck of the gradient: second derivatives through create_graph=True (PyTorch's keywords;
    check_fwd_over_rev needs forward-mode AD, which agrad has not)."""
    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck: check_fwd_over_rev needs forward-mode AD, which agrad does not have")
    if not check_rev_over_rev:
        return True
    inputs = list(_as_tuple(inputs))
    outs = [o for o in _float_outputs(fn(*inputs)) if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        from ..creation import tensor
        # (PyTorch's make_tensor of each output's dtype: a complex output gets complex ones)
        grad_outputs = [tensor(rng.standard_normal(o.shape) + 1j * rng.standard_normal(o.shape), dtype="complex128",
                               requires_grad=True) if o.is_complex() else
                        tensor(rng.standard_normal(o.shape), dtype="float64", requires_grad=True) for o in outs]
    n_in = len(inputs)
    diff_positions = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivatives(*args):
        xs, gos = list(args[:n_in]), list(args[n_in:])
        # NOTE: the first derivatives need a graph even where the caller runs gradgradcheck under
        # no_grad: they are the function checked, and without a graph they are constants
        with enable_grad():
            for i in diff_positions:
                if not xs[i].requires_grad:
                    xs[i] = xs[i].detach().requires_grad_()
            # the outputs that require grad, as grad_outputs were made for (linalg_lu's P does not)
            ys = list(zip([o for o in _float_outputs(fn(*xs)) if o.requires_grad], gos))
            if not ys:
                return ()
            grads = autograd_grad([o for o, _ in ys], [xs[i] for i in diff_positions], [g for _, g in ys],
                                  create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + list(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode, seed=seed)


# ---- PyTorch's deprecated Jacobian helpers -------------------------------------------------------
# torch.autograd.gradcheck.get_numerical_jacobian and get_analytical_jacobian: once gradcheck's own
# pieces, now public only for old code (a FutureWarning each call). Laid out as PyTorch's: one matrix
# per input, (input elements, output elements), the transpose of this module's matrices above.

def _deprecated(name: str) -> None:
    warnings.warn(f"`{name}` was part of PyTorch's private API and not meant to be exposed. We are deprecating it "
                  "and it will be removed in a future version of PyTorch. If you have a specific use for this or "
                  "feature request for this to be a stable API, please file us an issue at "
                  "https://github.com/pytorch/pytorch/issues/new", FutureWarning, stacklevel=3)


def _iter_tensors(x, only_requiring_grad: bool) -> list[Tensor]:
    """The tensors in `x` (a tensor, or nested lists and tuples of them), in order (PyTorch's _iter_tensors)."""
    found, stack = [], [x]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            if item.requires_grad or not only_requiring_grad:
                found.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
    return found


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """The Jacobians of `fn(inputs)`'s first output (fn takes the inputs as one tuple) with respect to each
    tensor of `target` that requires grad (default: of `inputs`), by central differences. agrad perturbs an
    input by handing `fn` a perturbed copy in its place (numerical_jacobian), where PyTorch perturbs it in
    place: each target must be one of `inputs` itself."""
    _deprecated("get_numerical_jacobian")
    if grad_out != 1.0:     # (kept in the signature for old callers only)
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer supports values of "
                         "grad_out != 1.0.")
    inputs = _as_tuple(inputs)

    def packed(*inps):
        return fn(inps)

    outputs = _float_outputs(packed(*inputs))
    keep = [k == 0 for k in range(len(outputs))]
    jacobians = []
    for t in _iter_tensors(inputs if target is None else target, True):
        position = next((k for k, x in enumerate(inputs) if x is t), None)
        if position is None:
            raise ValueError("get_numerical_jacobian: each target must be one of the inputs (agrad perturbs an "
                             "input by passing a perturbed copy in its place, not in place)")
        (matrix,) = numerical_jacobian(packed, inputs, position, eps, keep=keep)
        jacobians.append(_like(outputs[0], matrix.T))
    return tuple(jacobians)


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """`(jacobians, reentrant, ok1, ok2)`: d output / d each input of `inputs` that requires grad, one
    backward per output element; whether a second computation agrees within `nondet_tol`; and two flags
    of gradients of the right kind. NOTE: PyTorch's third value says whether every gradient had its
    input's dtype and its fourth whether every one had its input's size (the reverse of the names its
    tests give them, from swapped names in its code); agrad returns them in that order, as code written
    for PyTorch reads them."""
    _deprecated("get_analytical_jacobian")
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer supports values of "
                         "grad_out != 1.0.")
    if output.is_complex():
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer supports "
                         "functions that return complex outputs.")
    diff_inputs = _iter_tensors(inputs, True)
    n = output.numel()

    def columns():
        matrices = [np.zeros((t.numel(), n), t._data.dtype) for t in diff_inputs]
        sizes_ok = types_ok = True
        for j, seed in enumerate(np.eye(n, dtype=output._data.dtype).reshape((n, *output.shape))):
            for k, g in enumerate(vjp(output, diff_inputs, _like(output, seed))):
                if g is None:
                    continue
                if g.shape != diff_inputs[k].shape:
                    sizes_ok = False
                elif g.dtype != diff_inputs[k].dtype:
                    types_ok = False
                column = _host(g).reshape(-1)
                if column.size != matrices[k].shape[0]:
                    raise AssertionError(f"Expected out_jacobian column to have {column.size} elements, but got "
                                         f"{matrices[k].shape[0]}")
                matrices[k][:, j] = column
        return matrices, sizes_ok, types_ok

    first, sizes_ok, types_ok = columns()
    second, _, _ = columns()
    # (NaN differences count as equal, as in PyTorch's `max > tol`)
    reentrant = all(a.size == 0 or not np.max(np.abs(a - b)) > nondet_tol for a, b in zip(first, second))
    return tuple(_like(t, m) for t, m in zip(diff_inputs, first)), reentrant, types_ok, sizes_ok
