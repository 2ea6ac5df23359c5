"""Tensor subclasses with a `__torch_dispatch__` of their own (wrapper subclasses): scenarios run by PyTorch and
by agrad alike. Each is a function of `T` (the `torch` module or `agrad`) returning what it observed: the log
lines of torch.testing._internal.logging_tensor (which ops a handler sees, in which order, forward and
backward), the types a handler is handed, values, error messages.

make_subclass_dispatch_reference.py runs them with torch 2.13 and writes subclass_dispatch_scenarios.json;
tests/engine/test_subclass_dispatch.py runs them with agrad and compares (it never imports torch). The op
names in the logs are normalized: torch's `torch._ops.aten.mul.Tensor` and agrad's `agrad.ops.aten.mul.Tensor`
are both `aten.mul.Tensor`.

Left out, where agrad's op library is built otherwise than ATen and a handler sees other ops: `sum()` without a
dim (agrad dispatches every sum as sum.dim_IntList), in-place ops (agrad runs `add_` as `add` and writes the
result: the handler sees aten.add.Tensor), a Node with several inputs (torch's generated backward computes
the last input's gradient first, agrad's the first), and an output saved for backward while a dispatch mode
is pushed (torch detaches it through the mode, agrad keeps a plain tensor's array).
"""
from __future__ import annotations

import importlib
import re

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _internal(T, name):
    return importlib.import_module(f"{T.__name__}.testing._internal.{name}")


def _normalized(line: str) -> str:
    """The line without its library's names (`torch._ops.aten.mul.Tensor` and `agrad.ops.aten.mul.Tensor` are
    `aten.mul.Tensor`, `torch.preserve_format` `preserve_format`) and without the `pin_memory=False` that
    torch's Python binding of a factory passes (agrad's *_like schemas have no pin_memory)."""
    line = re.sub(r"\b(torch\._ops|agrad\.ops)\.", "", line)
    line = re.sub(r"\b(torch|agrad)\.(\w+_format)\b", r"\2", line)
    return line.replace(", pin_memory=False", "")


def _logs(logs) -> list:
    return [_normalized(line) for line in logs]


def value(t):
    return None if t is None else t.detach().tolist()


@scenario
def logging_tensor_forward_and_backward(T):
    """test_python_dispatch's test_basic, with two paths into x: the ops autograd records and its backward."""
    lt = _internal(T, "logging_tensor")
    with lt.capture_logs() as logs:
        x = lt.LoggingTensor(T.tensor([3.0, 1.0]), requires_grad=True)
        lt.log_input("x", x)
        y = x * 2 + x.sin()
        g = lt.LoggingTensor(T.tensor([1.0, 0.5]))
        lt.log_input("g", g)
        gx, = T.autograd.grad((y,), (x,), (g,))
    return {"logs": _logs(logs), "grad": value(gx.elem), "grad_type": type(gx).__name__,
            "y_grad_fn": type(y.grad_fn).__name__}


@scenario
def a_saved_output_is_detached_when_saved_and_when_unpacked(T):
    lt = _internal(T, "logging_tensor")
    with lt.capture_logs() as logs:
        x = lt.LoggingTensor(T.tensor([0.5, -1.0]), requires_grad=True)
        lt.log_input("x", x)
        y = x.exp()
        g = lt.LoggingTensor(T.tensor([1.0, 2.0]))
        lt.log_input("g", g)
        gx, = T.autograd.grad((y,), (x,), (g,))
    return {"logs": _logs(logs), "grad": value(gx.elem)}


@scenario
def a_leaf_gradient_is_stolen_through_detach_then_added_in_place(T):
    lt = _internal(T, "logging_tensor")
    with lt.capture_logs() as logs:
        x = lt.LoggingTensor(T.tensor([1.0, 2.0]), requires_grad=True)
        lt.log_input("x", x)
        g = lt.LoggingTensor(T.tensor([1.0, 1.0]))
        lt.log_input("g", g)
        x.cos().backward(g)
    first, grad = value(x.grad.elem), x.grad
    x.cos().backward(g)         # (torch's handler sees add_: agrad's add_ runs add and writes the result)
    return {"logs": _logs(logs), "grad": first, "accumulated": value(x.grad.elem), "same_grad": x.grad is grad,
            "grad_type": type(x.grad).__name__}


@scenario
def an_implicit_root_gradient_and_the_like_factories_are_the_handlers(T):
    lt = _internal(T, "logging_tensor")
    tt = _internal(T, "two_tensor")
    with lt.capture_logs() as logs:
        x = lt.LoggingTensor(T.tensor(0.5), requires_grad=True)
        lt.log_input("x", x)
        x.exp().backward()
        z = T.zeros_like(x)
        f = T.full_like(x, 2.0)
    two = tt.TwoTensor(T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0]))
    ones = T.ones_like(two, dtype=T.float64)
    return {"logs": _logs(logs), "grad": value(x.grad.elem), "types": [type(t).__name__ for t in (z, f, ones)],
            "ones": [value(ones.a), value(ones.b), str(ones.dtype).split(".")[-1]]}


@scenario
def detach_and_clone_go_to_the_handler(T):
    lt = _internal(T, "logging_tensor")
    with lt.capture_logs() as logs:
        x = lt.LoggingTensor(T.tensor([1.0, 2.0]), requires_grad=True)
        lt.log_input("x", x)
        d = x.detach()
        c = x.clone()
        v = x.view(2, 1)
    return {"logs": _logs(logs), "types": [type(t).__name__ for t in (d, c, v)],
            "requires_grad": [d.requires_grad, c.requires_grad, v.requires_grad],
            "grad_fns": [None if t.grad_fn is None else type(t.grad_fn).__name__ for t in (d, c, v)]}


@scenario
def the_handler_runs_below_autograd_unless_reentrant(T):
    """The other way to use LoggingTensor: the wrapped tensor requires grad. Its ops run below autograd (no
    history on the wrapped result), unless LoggingTensorReentrant's enable_reentrant_dispatch turns it back on."""
    lt = _internal(T, "logging_tensor")
    inner = T.tensor([2.0, 3.0], requires_grad=True)
    with lt.capture_logs() as logs:
        x = lt.LoggingTensor(inner)
        lt.log_input("x", x)
        below = x.exp()
        r = lt.LoggingTensorReentrant(inner)
        lt.log_input("r", r)
        again = r.exp()
    again.elem.sum().backward()
    return {"logs": _logs(logs), "wrapper_requires_grad": [x.requires_grad, r.requires_grad],
            "below_grad_fn": below.elem.grad_fn is None, "again_grad_fn": type(again.elem.grad_fn).__name__,
            "inner_grad": value(inner.grad)}


@scenario
def a_mode_logs_every_op_on_plain_tensors_forward_and_backward(T):
    lt = _internal(T, "logging_tensor")
    x = T.tensor([0.5, 1.5], requires_grad=True)
    g = T.tensor([1.0, -1.0])
    with lt.capture_logs_with_logging_tensor_mode() as logs:
        y = x.sin() * 3
        gx, = T.autograd.grad((y,), (x,), (g,))
    return {"logs": _logs(logs), "grad": value(gx)}


@scenario
def two_tensor_runs_each_op_on_both_and_differentiates_through(T):
    tt = _internal(T, "two_tensor")
    a = tt.TwoTensor(T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0]))
    a.requires_grad_()
    y = a * a + a.sin()
    g = tt.TwoTensor(T.tensor([1.0, 1.0]), T.tensor([0.5, 2.0]))
    ga, = T.autograd.grad((y,), (a,), (g,))
    t = y.t() if y.dim() == 2 else y.unsqueeze(0)
    return {"y": [value(y.a), value(y.b)], "grad": [value(ga.a), value(ga.b)], "grad_type": type(ga).__name__,
            "view": [list(t.shape), type(t).__name__, value(t.a), t.stride()], "repr": repr(a.detach())}


@scenario
def in_place_ops_on_a_two_tensor_write_both(T):
    tt = _internal(T, "two_tensor")
    a_in, b_in = T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])
    t = tt.TwoTensor(a_in, b_in)
    t.add_(1)
    t.mul_(t)
    return {"a": value(t.a), "b": value(t.b), "inner_a_changed": value(a_in), "version": t._version}


@scenario
def a_mode_sees_a_subclass_call_first_then_the_handler_runs(T):
    tt = _internal(T, "two_tensor")
    seen = []

    class Declining(T.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(("mode", _normalized(str(func)), [t.__name__ for t in types]))
            if any(t is not T.Tensor for t in types):
                return NotImplemented
            return func(*args, **(kwargs or {}))

    t = tt.TwoTensor(T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0]))
    with Declining():
        out = t * 2
    return {"seen": seen, "out": [value(out.a), value(out.b)], "type": type(out).__name__}


@scenario
def every_handler_declining_is_a_type_error(T):
    class Declines(T.Tensor):
        @staticmethod
        def __new__(cls, e):
            return T.Tensor._make_wrapper_subclass(cls, e.shape, dtype=e.dtype)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    x = Declines(T.ones(2))
    try:
        T.add(x, x)
    except TypeError as e:
        message = re.sub(r"<class '[^']*Declines'>", "<class 'Declines'>", _normalized(str(e)))
    return {"message": message, "stride": list(x.stride()), "dtype": str(x.dtype).split(".")[-1],
            "device": str(x.device), "requires_grad": x.requires_grad, "torch_function_disabled":
            x.__torch_function__ is T._C._disabled_torch_function_impl if T.__name__ == "torch" else
            x.__torch_function__ is T.overrides._disabled_torch_function_impl}


@scenario
def a_wrapper_needs_a_torch_dispatch_and_claims_the_layout_it_is_given(T):
    class Plain(T.Tensor):
        pass

    try:
        T.Tensor._make_wrapper_subclass(Plain, (2,))
        refused = None
    except TypeError as e:
        refused = str(e)

    class W(T.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    w = T.Tensor._make_wrapper_subclass(W, (2, 3), strides=(1, 2), storage_offset=4, dtype=T.float64,
                                        requires_grad=True)
    try:
        T.Tensor._make_wrapper_subclass(W, (2,), dtype=T.int64, requires_grad=True)
        integral = None
    except RuntimeError as e:
        integral = str(e)
    return {"refused": refused, "shape": list(w.shape), "stride": list(w.stride()), "offset": w.storage_offset(),
            "dtype": str(w.dtype).split(".")[-1], "requires_grad": w.requires_grad, "is_leaf": w.is_leaf,
            "integral": integral}


@scenario
def make_dual_hands_the_primal_alias_to_the_handler(T):
    """test_autograd's test_make_dual_torch_dispatch: only the primal has `alias` called on it, and the handler
    may run autograd again inside enable_reentrant_dispatch."""
    fwAD = T.autograd.forward_ad
    no_dispatch = importlib.import_module(f"{T.__name__}.utils._mode_utils").no_dispatch
    counter = [0]
    reentrant = []

    class MySubclass(T.Tensor):
        def __new__(cls, data=None):
            return T.Tensor._make_subclass(cls, data)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            if func.overloadpacket == T.ops.aten.alias:
                counter[0] += 1
                with T.overrides.enable_reentrant_dispatch():
                    foo = T.rand(1, requires_grad=True)
                    reentrant.append(foo.exp().grad_fn is not None)
            with no_dispatch():
                return func(*args, **(kwargs or {}))

    s = MySubclass(T.tensor(1.0))
    counts = []
    with fwAD.dual_level():
        dual = fwAD.make_dual(s, T.rand_like(s))
        counts.append(counter[0])
        fwAD.make_dual(T.rand_like(s), s)
        counts.append(counter[0])
    return {"counts": counts, "reentrant": reentrant, "rand_like_type": type(T.rand_like(s)).__name__,
            "dual_type": type(dual).__name__}
