"""gradcheck: analytic gradients against central finite differences, in float64.

Defaults are PyTorch's (eps=1e-6, atol=1e-5, rtol=1e-3). The slow mode compares
whole Jacobians (one backward per output element, two forwards per input
element); `fast_mode` compares one random projection v^T J u, which costs one
backward and two forwards whatever the sizes (HIPS/autograd's check in a random
direction, PyTorch's fast gradcheck).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._tensor import Tensor
from .functional import grad as autograd_grad
from ..grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck", "gradcheck_report", "JacobianReport", "GradcheckError"]


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


def _outputs(fn, inputs) -> list[Tensor]:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor) and o.is_floating_point()]


def _as_float64_cpu(t: Tensor) -> np.ndarray:
    if t._data.dtype != np.float64:
        raise GradcheckError(f"gradcheck needs float64 inputs for precision, got {t.dtype.name}; "
                             f"convert with .double()")
    return np.array(t._host(), dtype=np.float64)


def _perturbed(inputs, i, array):
    t = inputs[i]
    p = Tensor._make(t._device.backend.asarray(array, np.float64, t._device), t._device, t._keys)
    if t.requires_grad:
        # NOTE: as PyTorch perturbs the input in place: a view made of it under no_grad still requires grad
        p.requires_grad_(True)
    return [p if j == i else x for j, x in enumerate(inputs)]


def numerical_jacobian(fn, inputs, i, eps, columns: range | None = None) -> list[np.ndarray]:
    """One matrix per output: d output (flattened) / d inputs[i] (flattened), by central
    differences; `columns`: only those columns (the elements of inputs[i] perturbed), as
    `agrad check --workers` shares them out. Each column depends on nothing but its index."""
    base = _as_float64_cpu(inputs[i])
    columns_done = []
    with no_grad():
        for j in (range(base.size) if columns is None else columns):
            # NOTE: the input's memory layout is kept (PyTorch perturbs the input in place): what an op
            # reads through strides (as_strided) sees the same element at the same place
            at = np.unravel_index(j, base.shape)
            plus, minus = base.copy(order="K"), base.copy(order="K")
            plus[at] += eps
            minus[at] -= eps
            f_plus = _outputs(fn, _perturbed(inputs, i, plus))
            f_minus = _outputs(fn, _perturbed(inputs, i, minus))
            columns_done.append([(np.asarray(a._host(), np.float64) - np.asarray(b._host(), np.float64)).reshape(-1)
                                 / (2 * eps) for a, b in zip(f_plus, f_minus)])
    n_out = len(columns_done[0]) if columns_done else len(_outputs(fn, inputs))
    return [np.stack([c[o] for c in columns_done], axis=1) if columns_done else np.zeros((0, 0))
            for o in range(n_out)]


def analytical_jacobian(fn, inputs, diff_positions) -> list[list[np.ndarray]]:
    """[output][input] matrices from one backward per output element."""
    outs = _outputs(fn, inputs)
    diff_inputs = [inputs[i] for i in diff_positions]
    result = []
    for o in outs:
        n = o.numel()
        per_input = [np.zeros((n, diff_inputs[k].numel())) for k in range(len(diff_inputs))]
        if o.requires_grad:
            for row in range(n):
                seed = np.zeros(n)
                seed[row] = 1.0
                g_out = Tensor._make(o._device.backend.asarray(seed.reshape(o.shape), o._data.dtype, o._device),
                                     o._device, o._device.backend.key)
                grads = autograd_grad(o, diff_inputs, g_out, retain_graph=True, allow_unused=True)
                for k, g in enumerate(grads):
                    if g is not None:
                        if g.shape != diff_inputs[k].shape:
                            raise GradcheckError(f"grad is incorrect size: got {list(g.shape)} for an input of "
                                                 f"shape {list(diff_inputs[k].shape)}")
                        per_input[k][row] = np.asarray(g._host(), np.float64).reshape(-1)
        result.append(per_input)
    return result


def _compare(numerical, analytical, atol, rtol):
    diff = np.abs(analytical - numerical)
    scale = np.maximum(np.abs(numerical), np.abs(analytical))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1), 0.0)
    ok = bool(np.all(diff <= atol + rtol * np.abs(numerical)))
    return diff, rel, ok


def gradcheck_report(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=False, seed=0) -> list[JacobianReport]:
    inputs = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    diff_positions = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_positions:
        raise GradcheckError("gradcheck expects at least one input tensor to require gradient, "
                             "but none of the them have requires_grad=True.")
    for i in diff_positions:
        _as_float64_cpu(inputs[i])
    if fast_mode:
        return _fast_report(fn, inputs, diff_positions, eps, atol, rtol, seed)
    analytical = analytical_jacobian(fn, inputs, diff_positions)
    return [jacobian_report(i, tuple(inputs[i].shape), numerical_jacobian(fn, inputs, i, eps),
                            [a[k] for a in analytical], atol, rtol)
            for k, i in enumerate(diff_positions)]


def jacobian_report(i: int, shape: tuple, numerical: list, analytical: list, atol, rtol) -> JacobianReport:
    """The verdict for input `i` (of `shape`) from its numerical and analytical matrices, one
    of each per output."""
    worst_abs, worst_rel, worst_idx, ok = 0.0, 0.0, None, True
    num_all = np.concatenate(numerical, axis=0) if numerical else np.zeros((0, 0))
    ana_all = np.concatenate(analytical, axis=0) if analytical else np.zeros((0, 0))
    if num_all.size:
        diff, rel, ok = _compare(num_all, ana_all, atol, rtol)
        worst_abs, worst_rel = float(diff.max()), float(rel.max())
        flat = int(np.unravel_index(np.argmax(diff), diff.shape)[1])
        worst_idx = tuple(int(v) for v in np.unravel_index(flat, shape)) if shape else ()
    return JacobianReport(i, worst_abs, worst_rel, worst_idx, ok, num_all, ana_all)


def _fast_report(fn, inputs, diff_positions, eps, atol, rtol, seed):
    rng = np.random.default_rng(seed)
    outs = _outputs(fn, inputs)
    vs = [rng.standard_normal(o.shape) for o in outs]
    reports = []
    for i in diff_positions:
        base = _as_float64_cpu(inputs[i])
        u = rng.standard_normal(base.shape)
        u /= max(np.linalg.norm(u), 1e-12)
        with no_grad():
            plus = _outputs(fn, _perturbed(inputs, i, base + eps * u))
            minus = _outputs(fn, _perturbed(inputs, i, base - eps * u))
        numerical = sum(float(np.sum(v * (np.asarray(p._host()) - np.asarray(m._host())) / (2 * eps)))
                        for v, p, m in zip(vs, plus, minus))
        outs = _outputs(fn, inputs)
        analytical = 0.0
        roots = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        if roots:
            g_outs = [Tensor._make(o._device.backend.asarray(v, o._data.dtype, o._device), o._device,
                                   o._device.backend.key) for o, v in roots]
            (g,) = autograd_grad([o for o, _ in roots], [inputs[i]], g_outs, allow_unused=True)
            if g is not None:
                analytical = float(np.sum(np.asarray(g._host(), np.float64) * u))
        diff, rel, ok = _compare(np.array([numerical]), np.array([analytical]), atol, rtol)
        reports.append(JacobianReport(i, float(diff.max()), float(rel.max()), None, ok,
                                      np.array([numerical]), np.array([analytical])))
    return reports


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, fast_mode=False) -> bool:
    """True when every analytic gradient matches finite differences; else raises (or returns False)."""
    reports = gradcheck_report(fn, inputs, eps=eps, atol=atol, rtol=rtol, fast_mode=fast_mode)
    for r in reports:
        if not r.passed:
            if raise_exception:
                raise GradcheckError(
                    f"Jacobian mismatch for output 0 with respect to input {r.input_index},\n"
                    f"numerical:{r.numerical}\nanalytical:{r.analytical}\n"
                    f"(max abs err {r.max_abs_err:.3g}, max rel err {r.max_rel_err:.3g}, at {r.worst_index})")
            return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  fast_mode=False, seed=0) -> bool:
    """gradcheck of the gradient: second derivatives through create_graph=True."""
    inputs = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    outs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        from ..creation import tensor
        grad_outputs = [tensor(rng.standard_normal(o.shape), dtype="float64", requires_grad=True) for o in outs]
    n_in = len(inputs)
    diff_positions = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivatives(*args):
        xs, gos = list(args[:n_in]), list(args[n_in:])
        # NOTE: the first derivatives need a graph even where gradcheck evaluates this function for
        # its finite differences (under no_grad, on perturbed copies that require no grad): without
        # one the numerical side of the comparison was empty and any second derivative passed
        with enable_grad():
            for i in diff_positions:
                if not xs[i].requires_grad:
                    xs[i] = xs[i].detach().requires_grad_()
            ys = [(o, g) for o, g in zip(_outputs(fn, xs), gos) if o.requires_grad]
            if not ys:
                return ()
            grads = autograd_grad([o for o, _ in ys], [xs[i] for i in diff_positions], [g for _, g in ys],
                                  create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + list(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
