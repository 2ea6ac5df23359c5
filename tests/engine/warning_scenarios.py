"""The warnings PyTorch's autograd gives, as scenarios that run on PyTorch and on agrad alike.

Each scenario takes the library module `T` (torch, or agrad) and returns the warnings it
gave (category and text) and what it raised. `tests/reference/make_warning_reference.py`
runs each on torch 2.13.0 in a fresh process (a TORCH_WARN_ONCE warning is given once per
process) and writes `tests/reference/engine/warnings.json`; `test_warning_reference.py` runs
them on agrad and compares (never importing torch).

PyTorch appends " (Triggered internally at <its C++ source>:<line>.)" to a warning raised in
C++; that suffix names PyTorch's build, not the event, and is removed before comparing.
The traceback an anomaly warning carries is PyTorch's or agrad's own stack: it is compared
as "names the scenario's forward line". Only UserWarnings are recorded: NumPy's
floating-point RuntimeWarnings are agrad's, not the autograd's.
"""
from __future__ import annotations

import re
import warnings

SCENARIOS = {}
TRACEBACK = "Traceback of forward call that caused the error:\n"


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _message(text: str, forward_line: str | None) -> str:
    text = re.sub(r" \(Triggered internally at [^)]*\.\)$", "", text)
    if TRACEBACK in text:
        head, trace = text.split(TRACEBACK, 1)
        shown = forward_line is not None and forward_line in trace
        return head + TRACEBACK + ("<a stack naming the forward line>" if shown else "<a stack>")
    return text


def _observe(call, forward_line: str | None = None) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = {"returned": call()}
        except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
            builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
            result = {"raised": [builtin.__name__, str(exc)]}
    result["warnings"] = [[w.category.__name__, _message(str(w.message), forward_line)]
                          for w in caught if issubclass(w.category, UserWarning)]
    return result


def _x(T):
    return T.tensor([0.5, -1.25, 2.0], dtype=T.float64, requires_grad=True)


# -- .grad of a non-leaf ------------------------------------------------------------------
@scenario
def grad_of_a_non_leaf(T):
    x = _x(T)
    y = x * 2
    return _observe(lambda: y.grad)


@scenario
def grad_of_a_non_leaf_after_backward(T):
    x = _x(T)
    y = x * 2
    y.sum().backward()
    return _observe(lambda: [y.grad, x.grad.tolist()])


@scenario
def grad_of_a_view_of_a_leaf(T):
    x = _x(T)
    return _observe(lambda: x[1:].grad)


@scenario
def grad_of_a_retained_non_leaf(T):
    x = _x(T)
    y = x * 2
    y.retain_grad()
    before = _observe(lambda: y.grad)
    y.sum().backward()
    return {"before": before, "after": _observe(lambda: y.grad.tolist())}


@scenario
def grad_of_leaves_and_constants(T):
    return _observe(lambda: [_x(T).grad, T.ones(2).grad, (T.ones(2) * 2).grad])


# -- backward(create_graph=True) ------------------------------------------------------------
@scenario
def backward_create_graph_warns_once(T):
    x = _x(T)

    def twice():
        (x * x).sum().backward(create_graph=True)
        x.grad = None
        T.autograd.backward((x * x * x).sum(), create_graph=True)
        x.grad = None
    return _observe(twice)


@scenario
def backward_create_graph_with_inputs(T):
    x = _x(T)
    return _observe(lambda: (x * x).sum().backward(inputs=[x], create_graph=True))


@scenario
def grad_create_graph_does_not_warn(T):
    x = _x(T)
    return _observe(lambda: T.autograd.grad((x * x).sum(), x, create_graph=True)[0].tolist())


# -- anomaly mode ---------------------------------------------------------------------------
@scenario
def detect_anomaly_warns_each_time_it_is_made(T):
    def twice():
        with T.autograd.detect_anomaly():
            pass
        with T.autograd.detect_anomaly():
            pass
        with T.autograd.set_detect_anomaly(True):
            pass
    return _observe(twice)


@scenario
def anomaly_names_the_node_and_where_its_forward_ran(T):
    x = _x(T)
    nan = T.tensor([float("nan"), 1.0, 1.0], dtype=T.float64)

    def run():
        with T.autograd.detect_anomaly():
            z = x * nan  # the forward line
            z.sum().backward()
    return _observe(run, forward_line="z = x * nan  # the forward line")


@scenario
def anomaly_when_a_custom_backward_raises(T):
    class Boom(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("boom in backward")

    def run():
        with T.autograd.detect_anomaly():
            y = Boom.apply(_x(T))  # the forward line
            y.sum().backward()
    return _observe(run, forward_line="y = Boom.apply(_x(T))  # the forward line")


@scenario
def anomaly_for_a_graph_made_outside_the_mode(T):
    x = _x(T)
    z = x * T.tensor([float("nan"), 1.0, 1.0], dtype=T.float64)

    def run():
        with T.autograd.detect_anomaly():
            z.sum().backward()
    return _observe(run)


@scenario
def no_anomaly_warning_without_the_mode(T):
    x = _x(T)
    z = x * T.tensor([float("nan"), 1.0, 1.0], dtype=T.float64)
    return _observe(lambda: z.sum().backward())
