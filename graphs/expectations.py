"""`expect:` checking: values compared as torch.testing.assert_close does, with
tolerances that suit the tensor's dtype unless the file gives its own."""
from __future__ import annotations

import numpy as np

from .results import ExpectFailure, ExpectResult, SourceLocation
from .spec import Expectation, ExpectSpec

# torch.testing.assert_close's defaults: (rtol, atol) per dtype; integers and bools are exact.
TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _number(value: float) -> str:
    """One number as a person reads it in a one-line message: 9.0, 0.5, 1e-07."""
    return repr(float(value)) if float(value).is_integer() and abs(value) < 1e16 else f"{value:.6g}"


def _as_list(array: np.ndarray):
    """The array as nested lists for JSON and JUnit bodies (None beyond 10,000 elements)."""
    return array.tolist() if array.size <= 10_000 else None


def compare(expected, tensor, rtol: float | None, atol: float | None, what: str, location) -> ExpectFailure | None:
    """None when `tensor` matches `expected`, else a one-line failure at the worst element; the
    whole arrays ride along for the JSON and JUnit bodies, never for the terminal."""
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
    where = f" at {list(map(int, worst))}" if got.ndim else ""
    wrong = int((~close).sum())
    count = f"{wrong} of {close.size} elements differ; " if close.size > 1 else ""
    message = (f"expected {_number(want[worst])}{where}, got {_number(got[worst])} "
               f"({count}max abs err {_number(float(err.max()))}; rtol={rtol:g}, atol={atol:g})")
    return ExpectFailure(what, message, location, expected=_as_list(np.asarray(expected, dtype=np.float64)),
                         actual=_as_list(actual))


def check_expectations(spec: ExpectSpec | None, file: str, values: dict, grads: dict) -> ExpectResult:
    """`values`: every input's and node's tensor; `grads`: name -> gradient or None."""
    if spec is None:
        return ExpectResult(passed=True, checked=False)
    failures: list[ExpectFailure] = []

    def where(e: Expectation) -> SourceLocation:
        return SourceLocation(file, e.pos.line, e.pos.col)

    def fail(section: str, e: Expectation, message: str) -> None:
        failures.append(ExpectFailure(f"{section}.{e.name}", message, where(e)))

    for e in spec.outputs:
        problem = compare(e.value, values[e.name], spec.rtol, spec.atol, f"outputs.{e.name}", where(e))
        if problem:
            failures.append(problem)
    for e in spec.grads:
        grad = grads.get(e.name)
        if e.value is None:
            if grad is not None:
                fail("grads", e, "expected no gradient (null), got a tensor")
        elif grad is None:
            fail("grads", e, "expected a gradient, got None (nothing reached it)")
        else:
            problem = compare(e.value, grad, spec.rtol, spec.atol, f"grads.{e.name}", where(e))
            if problem:
                failures.append(problem)
    # `expect.train` needs a training run: `agrad train` and `agrad test` check it, `run` says it did not.
    return ExpectResult(passed=not failures, failures=failures, checked=bool(spec.outputs or spec.grads),
                        unchecked=["train"] if spec.train else [])
