"""`expect:` checking: values compared as torch.testing.assert_close does, with
tolerances that suit the tensor's dtype unless the file gives its own."""
from __future__ import annotations

import numpy as np

from .results import ExpectFailure, ExpectResult, SourceLocation
from .spec import Expectation, ExpectSpec

# torch.testing.assert_close's defaults: (rtol, atol) per dtype; integers and bools are exact.
TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _format(array: np.ndarray) -> str:
    if array.ndim == 0:
        return str(array.item())
    return np.array2string(array, threshold=20, precision=6, separator=", ", max_line_width=10_000)


def compare(expected, tensor, rtol: float | None, atol: float | None) -> str | None:
    """None when `tensor` matches `expected`, else why not."""
    actual = tensor.detach().cpu().numpy()
    default_rtol, default_atol = TOLERANCES.get(tensor.dtype.name, (0.0, 0.0))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    want = np.broadcast_to(np.asarray(expected, dtype=np.float64), actual.shape)
    got = actual.astype(np.float64)
    close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    err = np.abs(got - want)
    err = np.where(np.isnan(err), np.inf, err)
    worst = np.unravel_index(int(np.argmax(np.where(close, -1.0, err))), got.shape) if got.ndim else ()
    where = f" at index {list(map(int, worst))}" if got.ndim else ""
    return (f"expected {_format(np.asarray(expected))}, got {_format(actual)} "
            f"(max abs err {float(err.max()):.6g}{where}; rtol={rtol:g}, atol={atol:g})")


def check_expectations(spec: ExpectSpec | None, file: str, values: dict, grads: dict) -> ExpectResult:
    """`values`: every input's and node's tensor; `grads`: name -> gradient or None."""
    if spec is None:
        return ExpectResult(passed=True, checked=False)
    failures: list[ExpectFailure] = []

    def fail(section: str, e: Expectation, message: str) -> None:
        failures.append(ExpectFailure(f"{section}.{e.name}", message, SourceLocation(file, e.pos.line, e.pos.col)))

    for e in spec.outputs:
        problem = compare(e.value, values[e.name], spec.rtol, spec.atol)
        if problem:
            fail("outputs", e, problem)
    for e in spec.grads:
        grad = grads.get(e.name)
        if e.value is None:
            if grad is not None:
                fail("grads", e, "expected no gradient (null), got a tensor")
        elif grad is None:
            fail("grads", e, "expected a gradient, got None (nothing reached it)")
        else:
            problem = compare(e.value, grad, spec.rtol, spec.atol)
            if problem:
                fail("grads", e, problem)
    return ExpectResult(passed=not failures, failures=failures)
