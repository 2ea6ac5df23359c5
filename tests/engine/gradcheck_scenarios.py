"""`autograd.gradcheck` as PyTorch's, as scenarios that run on PyTorch and on agrad alike.

Each scenario takes the library module `T` (torch, or agrad) and returns what can be
observed: gradcheck's verdict, the exception it raised (type and message) and the
warnings it gave (category and text). `tests/reference/make_gradcheck_reference.py` runs
them on torch 2.13.0 and writes `tests/reference/engine/gradcheck.json`;
`test_gradcheck_reference.py` runs them on agrad and compares (never importing torch).
Messages are compared whole where they hold no tensor; where they print the Jacobians,
up to the first line. The library's name reads LIB, and the str() of a shape <shape [...]>.
"""
from __future__ import annotations

import warnings

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _observe(call, *, first_line=False, shapes=()) -> dict:
    """What `call()` returned or raised, and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = {"returned": call()}
        except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
            msg = str(exc)
            if first_line:
                msg = msg.split("\n")[0]
            for shape in shapes:
                msg = msg.replace(str(shape), f"<shape {list(shape)}>")
            result = {"raised": [type(exc).__name__, msg.replace("torch", "LIB").replace("agrad", "LIB")]}
    result["warnings"] = [[w.category.__name__, str(w.message)] for w in caught]
    return result


def _x(T, dtype=None, values=(0.5, -1.25, 2.0)):
    return T.tensor(list(values), dtype=dtype or T.float64, requires_grad=True)


def _scaled_backward(T, factor):
    """An identity whose backward multiplies by `factor()`, asked again at each backward."""
    class Scaled(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad * factor()
    return Scaled


# -- inputs --------------------------------------------------------------------------
@scenario
def float32_input_warns_and_is_checked(T):
    """Not refused: the float32 input is warned about and checked, in float32."""
    x = _x(T, T.float32, (1.0, 2.0))
    return _observe(lambda: T.autograd.gradcheck(lambda x: x * 3, (x,), eps=1e-2, atol=1e-2, rtol=1e-2))


@scenario
def float32_second_input_warns_with_its_index(T):
    a = T.tensor([1.0, 2.0], dtype=T.float64)
    b = _x(T, T.float32, (1.0, 2.0))
    return _observe(lambda: T.autograd.gradcheck(lambda a, b: a * b, (a, b), eps=1e-2, atol=1e-2, rtol=1e-2))


@scenario
def float32_input_fails_at_the_default_step(T):
    """eps=1e-6 is below float32's resolution at 1000: the differences are all rounding."""
    x = _x(T, T.float32, (1000.0, 3000.0))
    return _observe(lambda: T.autograd.gradcheck(lambda x: x * x, (x,), raise_exception=False))


@scenario
def no_input_requires_grad(T):
    x = T.tensor([1.0, 2.0], dtype=T.float64)
    return _observe(lambda: T.autograd.gradcheck(lambda x: x * 2, (x,)))


# -- reentrancy ----------------------------------------------------------------------
def _non_reentrant(T):
    calls = []

    def factor():
        calls.append(1)
        return 1.0 + 1e-7 * len(calls)          # each backward a little different; all match numerically
    return _scaled_backward(T, factor)


@scenario
def non_reentrant_backward_is_detected(T):
    f = _non_reentrant(T)
    return _observe(lambda: T.autograd.gradcheck(f.apply, (_x(T),)))


@scenario
def non_reentrant_backward_fast_mode(T):
    f = _non_reentrant(T)
    return _observe(lambda: T.autograd.gradcheck(f.apply, (_x(T),), fast_mode=True))


@scenario
def non_reentrant_backward_returns_false(T):
    f = _non_reentrant(T)
    return _observe(lambda: T.autograd.gradcheck(f.apply, (_x(T),), raise_exception=False))


@scenario
def non_reentrant_backward_within_nondet_tol(T):
    f = _non_reentrant(T)
    return _observe(lambda: T.autograd.gradcheck(f.apply, (_x(T),), nondet_tol=1e-5))


# -- outputs that change under perturbation ----------------------------------------
@scenario
def output_shape_changes_under_perturbation(T):
    def fn(x):
        return x * 2 if float(x.detach().sum()) >= 1.25 else (x * 2)[:2]
    return _observe(lambda: T.autograd.gradcheck(fn, (_x(T),), raise_exception=False),
                    shapes=(T.zeros(2).shape, T.zeros(3).shape))


@scenario
def output_dtype_changes_under_perturbation(T):
    def fn(x):
        return x * 2 if float(x.detach().sum()) >= 1.25 else (x * 2).to(T.float32)
    return _observe(lambda: T.autograd.gradcheck(fn, (_x(T),)))


@scenario
def output_shape_changes_fast_mode(T):
    def fn(x):
        return x * 2 if float(x.detach().sum()) >= 1.25 else (x * 2)[:2]
    return _observe(lambda: T.autograd.gradcheck(fn, (_x(T),), fast_mode=True),
                    shapes=(T.zeros(2).shape, T.zeros(3).shape))


# -- grad mode and differentiable outputs -----------------------------------------
@scenario
def function_runs_in_the_callers_grad_mode(T):
    modes = []

    def fn(x):
        modes.append(T.is_grad_enabled())
        return x * x
    seen = _observe(lambda: T.autograd.gradcheck(fn, (_x(T),)))
    return {**seen, "grad_modes": sorted(set(modes))}


@scenario
def under_no_grad_nothing_is_differentiable(T):
    modes = []

    def fn(x):
        modes.append(T.is_grad_enabled())
        return x * x
    with T.no_grad():
        seen = _observe(lambda: T.autograd.gradcheck(fn, (_x(T),)))
    return {**seen, "grad_modes": sorted(set(modes))}


@scenario
def no_differentiable_output_varying(T):
    return _observe(lambda: T.autograd.gradcheck(lambda x: x.detach() * 2, (_x(T),)))


@scenario
def no_differentiable_output_varying_returns_false(T):
    return _observe(lambda: T.autograd.gradcheck(lambda x: x.detach() * 2, (_x(T),), raise_exception=False))


@scenario
def no_differentiable_output_constant(T):
    return _observe(lambda: T.autograd.gradcheck(lambda x: T.ones(2, dtype=T.float64), (_x(T),)))


@scenario
def no_differentiable_output_fast_mode(T):
    return _observe(lambda: T.autograd.gradcheck(lambda x: x.detach() * 2, (_x(T),), fast_mode=True))


@scenario
def output_that_does_not_require_grad_is_skipped(T):
    """A detached output (kept for logging) is not compared: its numerical gradient is not 0."""
    return _observe(lambda: T.autograd.gradcheck(lambda x: (x * x, (x * 3).detach()), (_x(T),)))


@scenario
def mismatch_names_the_differentiable_output_and_input(T):
    """Indices count the outputs that require grad and the inputs that do."""
    wrong = _scaled_backward(T, lambda: 2.0)
    a = T.tensor([1.0, 2.0], dtype=T.float64)
    return _observe(lambda: T.autograd.gradcheck(lambda a, x: ((a * 3).detach(), x * a, wrong.apply(x)),
                                                 (a, _x(T, values=(1.0, 2.0)))), first_line=True)


@scenario
def mismatch_returns_false(T):
    wrong = _scaled_backward(T, lambda: 2.0)
    return _observe(lambda: T.autograd.gradcheck(wrong.apply, (_x(T),), raise_exception=False))


@scenario
def mismatch_fast_mode(T):
    wrong = _scaled_backward(T, lambda: 2.0)
    return _observe(lambda: T.autograd.gradcheck(wrong.apply, (_x(T),), fast_mode=True), first_line=True)


@scenario
def backward_not_multiplied_by_grad_output(T):
    class Offset(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad + 1e-9              # within gradcheck's tolerances, but not 0 for a 0 grad_output
    return _observe(lambda: T.autograd.gradcheck(Offset.apply, (_x(T),)))


@scenario
def graph_with_a_logged_output(T):
    """tests/cli/test_check_skipped_outputs.py's graph: `loss: sum(h)`, `shown: detach(h)`, both outputs."""
    def graph(x):
        h = T.tanh(x) * x
        return h.sum(), h.detach()
    return _observe(lambda: T.autograd.gradcheck(graph, (_x(T),)))


@scenario
def function_reading_its_input_through_a_closure(T):
    """PyTorch perturbs the input in place (input.data.copy_), so a function that reads the input it
    captured, not the argument, is differentiated numerically as analytically (test_functional.py's
    test_vjp_create_graph relies on it)."""
    x = _x(T)
    fast = _observe(lambda: T.autograd.gradcheck(lambda a: (x * x).sum() + a.sum(), (x,), fast_mode=True))
    slow = _observe(lambda: T.autograd.gradcheck(lambda a: x * x * a, (x,)))
    aliased = _observe(lambda: T.autograd.gradcheck(lambda a: (a, a * 2), (x,)))
    return {"fast": fast, "slow": slow, "aliased": aliased, "x_after": x.tolist()}
