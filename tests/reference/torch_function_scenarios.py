"""`__torch_function__` scenarios, each a function of the library (torch or agrad) returning plain data: which
calls reach a Tensor subclass's handler or a TorchFunctionMode (the function's name, the types, how many
positional arguments, the keyword names), the types of the results, the handlers' order, the errors when every
handler declines, the Disable guards, nn.Parameter, has_torch_function and is_tensor_like, subclasses through nn
layers and autograd. make_torch_function_reference.py records torch's answers in torch_function_scenarios.json;
tests/engine/test_torch_function.py runs them with agrad and compares.

What agrad does not hand to a handler is left out of the logs: property reads (torch hands the getter's
`__get__`: `x.grad`, `x.shape`). An op's arguments reach a handler in agrad as the op's schema has them (those
before `*` positional), not as the call wrote them, so the calls here write them so (`x.sum(0)`, not
`x.sum(dim=0)`; `x.unbind(1)`, not `(0)`: those left at their default are left out); agrad's message names
`agrad.mul` where torch's names `torch.Tensor.mul`; a mode that declines a call of plain tensors recurses
without end in torch 2.13 (Tensor.__torch_function__ runs the call again under the same mode) and is left out.
"""
from __future__ import annotations


def _overrides(lib):
    return lib.overrides


def _disable(lib, what):
    """torch._C.DisableTorchFunction(Subclass); agrad has no _C: agrad.overrides holds them."""
    return getattr(lib._C if lib.__name__ == "torch" else lib.overrides, what)


def _error(exc) -> list:
    return [next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"),
            str(exc).replace("'torch.", "'LIB.").replace("'agrad.", "'LIB.")]


def _logging_subclass(lib, log, name="Logged"):
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func.__name__ not in ("__get__", "__set__"):
                log.append([cls.__name__, func.__name__, [t.__name__ for t in types], len(args),
                            None if kwargs is None else sorted(kwargs)])
            return super().__torch_function__(func, types, args, kwargs)
    Logged.__name__ = Logged.__qualname__ = name
    return Logged


def _r(lib, *shape):
    n = 1
    for s in shape:
        n *= s
    return ((lib.arange(n, dtype=lib.float32) * 0.618034 + 0.1) % 1).reshape(shape)


def subclass_calls(lib):
    """Ops on a subclass's instance: what its handler is given, and the results' types."""
    log = []
    Logged = _logging_subclass(lib, log)
    x = _r(lib, 2, 3).as_subclass(Logged)
    w = _r(lib, 4, 3)
    F = lib.nn.functional
    calls = {
        "x + 1": lambda: x + 1, "x.add(1)": lambda: x.add(1),
        "add(x, 1, alpha=2)": lambda: lib.add(x, 1, alpha=2), "x * w[:2, :]": lambda: x * w[:2, :],
        "x.sum()": lambda: x.sum(), "x.sum(1)": lambda: x.sum(1), "cat([w, x])": lambda: lib.cat([w, x]),
        "F.linear(x, w)": lambda: F.linear(x, w), "matmul(x, w.t())": lambda: lib.matmul(x, w.t()),
        "x.exp()": lambda: x.exp(), "max(x, 1)": lambda: lib.max(x, 1), "x.unbind(1)": lambda: x.unbind(1),
        "where(x > 0.5, x, w[:2])": lambda: lib.where(x > 0.5, x, w[:2]),
    }
    out = {}
    for label, call in calls.items():
        log.clear()
        result = call()
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        out[label] = {"log": list(log), "types": [type(r).__name__ for r in results]}
    x3 = _r(lib, 1, 2, 4).as_subclass(Logged)
    for label, call in {"F.relu(x)": lambda: F.relu(x), "F.lp_pool1d(x3, 2, 2)": lambda: F.lp_pool1d(x3, 2, 2),
                        "F.dropout(x, 0.0)": lambda: F.dropout(x, 0.0)}.items():
        log.clear()
        r = call()
        out[label] = {"log": list(log), "types": [type(r).__name__]}
    out["values"] = (x * 2 + 1).sum().item()
    return out


def handler_order(lib):
    """Subclasses before their bases, otherwise left to right; the error when all decline."""
    order = []

    def declining(name, base):
        def handler(cls, func, types, args=(), kwargs=None):
            order.append([name, [t.__name__ for t in types]])
            return NotImplemented
        return type(name, (base,), {"__torch_function__": classmethod(handler), "__module__": "scenarios"})
    A = declining("A", lib.Tensor)
    B = declining("B", A)
    C = declining("C", lib.Tensor)
    a, b, c = (lib.ones(2).as_subclass(k) for k in (A, B, C))
    out = {}
    for label, call in {"add(a, b)": lambda: lib.add(a, b), "add(a, c)": lambda: lib.add(a, c),
                        "add(c, b, alpha=2)": lambda: lib.add(c, b, alpha=2),
                        "stack([a, c, b, a])": lambda: lib.stack([a, c, b, a]), "mul(a, 2)": lambda: lib.mul(a, 2)}.items():
        order.clear()
        try:
            call()
            out[label] = "ran"
        except TypeError as exc:
            out[label] = {"order": list(order), "error": _error(exc)}
    return out


def default_handler_types(lib):
    """Tensor.__torch_function__: the most derived class wins; unrelated subclasses decline."""
    class A(lib.Tensor):
        pass

    class B(A):
        pass

    class C(lib.Tensor):
        pass
    for k in (A, B, C):
        k.__module__ = "scenarios"
    a, b, c = (lib.ones(2).as_subclass(k) for k in (A, B, C))
    out = {"a + b": type(a + b).__name__, "b + a": type(lib.add(b, a)).__name__,
           "a + plain": type(a + lib.ones(2)).__name__, "as_subclass(B) of plain": type(lib.ones(1).as_subclass(B)).__name__,
           "_make_subclass": [type(lib.Tensor._make_subclass(B, lib.ones(2), True)).__name__,
                              lib.Tensor._make_subclass(B, lib.ones(2), True).requires_grad]}
    try:
        lib.add(a, c)
        out["a + c"] = "ran"
    except TypeError as exc:
        out["a + c"] = _error(exc)
    out["direct"] = lib.Tensor.__torch_function__(lib.add, (lib.Tensor,), (lib.ones(1), 1), None).tolist()
    out["direct NotImplemented"] = A.__torch_function__(lib.add, (B,), (lib.ones(1), 1)) is NotImplemented
    return out


def modes(lib):
    """A TorchFunctionMode sees every call in its block, plain tensors' too, before any subclass; inner first."""
    log = []
    ov = _overrides(lib)

    class Recording(ov.TorchFunctionMode):
        def __init__(self, name, answer=None):
            super().__init__()
            self.name, self.answer = name, answer

        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append([self.name, func.__name__, [t.__name__ for t in types], len(args),
                        None if kwargs is None else sorted(kwargs)])
            if self.answer is not None:
                return self.answer
            return func(*args, **(kwargs or {}))

        def __repr__(self):
            return f"<Recording {self.name}>"
    x, w = _r(lib, 2, 3), _r(lib, 4, 3)
    Sub = _logging_subclass(lib, log, "Sub")
    s = _r(lib, 2, 3).as_subclass(Sub)
    out = {}
    with Recording("m"):
        y = x * 2
        z = lib.add(x, y, alpha=3)
        lib.nn.functional.linear(x, w)
        x.sum(0)
        lib.nn.functional.relu(x)
        out["in mode: depth"] = len(ov._get_current_function_mode_stack())
    out["plain calls"] = list(log)
    out["after: depth"] = len(ov._get_current_function_mode_stack())
    out["value"] = z.sum().item()
    log.clear()
    with Recording("outer"):
        with Recording("inner"):
            x.mul(3)
    out["nested"] = list(log)
    log.clear()
    with Recording("m"):
        r = s + 1
    out["mode then subclass"] = [list(log), type(r).__name__]
    log.clear()
    with Recording("m"):
        made = [type(x.as_subclass(Sub)).__name__, type(s.as_subclass(Sub)).__name__]
    out["as_subclass is no call"] = [list(log), made]
    log.clear()
    leaf = _r(lib, 3).requires_grad_()
    with Recording("m"):
        (leaf * 2).sum().backward()         # (the backward's formulas are no calls a mode sees)
    out["backward in a mode"] = [list(log), leaf.grad.tolist()]
    log.clear()
    with Recording("m", answer="marker"):
        out["mode answers"] = x.neg()
    log.clear()

    class Declining(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(["Declining", func.__name__])
            return NotImplemented
    Declining.__module__ = "scenarios"
    d = lib.ones(1).as_subclass(Declining)
    try:
        with Recording("declines", answer=NotImplemented):
            lib.neg(d)
        out["declines, subclass too"] = "ran"
    except TypeError as exc:
        out["declines, subclass too"] = [list(log), _error(exc)]
    return out


def disabling(lib):
    """DisableTorchFunctionSubclass: subclasses' handlers are not called, modes' are; DisableTorchFunction: neither."""
    log = []
    ov = _overrides(lib)
    Sub = _logging_subclass(lib, log, "Sub")
    s = lib.ones(2).as_subclass(Sub)

    class Mode(ov.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(["mode", func.__name__])
            return func(*args, **(kwargs or {}))
    out = {}
    with _disable(lib, "DisableTorchFunctionSubclass")():
        out["subclass disabled"] = [type(s + 1).__name__, ov.has_torch_function_unary(s), list(log)]
        with Mode():
            s.neg()
            out["subclass disabled, mode"] = [list(log), ov.has_torch_function_unary(lib.ones(1))]
    log.clear()
    with Mode():
        with _disable(lib, "DisableTorchFunction")():
            r = s.neg()
            out["all disabled"] = [type(r).__name__, list(log), ov.has_torch_function_unary(s),
                                   ov.has_torch_function_unary(lib.ones(1))]
        s.neg()
    out["after"] = list(log)
    return out


def parameter(lib):
    """nn.Parameter's handler is disabled: its results are plain Tensors and no handler is called."""
    ov = _overrides(lib)
    p = lib.nn.Parameter(lib.ones(2, 2))
    return {"p * 2": type(p * 2).__name__, "p.sum()": type(p.sum()).__name__, "matmul": type(p @ p).__name__,
            "has_torch_function": ov.has_torch_function_unary(p),
            "disabled": p.__torch_function__ is _disable(lib, "_disabled_torch_function_impl"),
            "linear layer": type(lib.nn.Linear(2, 2)(lib.ones(1, 2))).__name__}


def predicates(lib):
    """has_torch_function(_unary/_variadic), is_tensor_like, is_tensor_method_or_property."""
    ov = _overrides(lib)

    class Sub(lib.Tensor):
        pass

    class Obj:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "marker"

    class NoHandler:
        pass
    t, s, o = lib.ones(1), lib.ones(1).as_subclass(Sub), Obj()
    return {"has": [ov.has_torch_function((t,)), ov.has_torch_function((t, s)), ov.has_torch_function((o,)),
                    ov.has_torch_function(()), ov.has_torch_function((1, "a"))],
            "unary": [ov.has_torch_function_unary(t), ov.has_torch_function_unary(s), ov.has_torch_function_unary(o)],
            "variadic": [ov.has_torch_function_variadic(t, t), ov.has_torch_function_variadic(t, s, 1)],
            "is_tensor_like": [ov.is_tensor_like(x) for x in (t, s, o, NoHandler(), 1, [t])],
            "is_tensor_method_or_property": [ov.is_tensor_method_or_property(lib.Tensor.add),
                                             ov.is_tensor_method_or_property(lib.Tensor.sum),
                                             ov.is_tensor_method_or_property(len)]}


def non_tensor_objects(lib):
    """Any object with a handler takes the call: in a Tensor argument, in a list of them."""
    calls = []

    class Obj:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append([func.__name__, [t.__name__ for t in types], len(args)])
            return "marker"
    o = Obj()
    return {"add(o, 1)": lib.add(o, 1), "add(ones, o)": lib.add(lib.ones(1), o), "cat": lib.cat([lib.ones(1), o]),
            "exp(o)": lib.exp(o), "calls": calls}


def python_functions(lib):
    """handle_torch_function in a Python function that checks has_torch_function, and its error."""
    ov = _overrides(lib)
    seen = []

    def double(x, scale=2):
        if ov.has_torch_function_unary(x):
            return ov.handle_torch_function(double, (x,), x, scale=scale)
        return x * scale
    double.__module__ = "scenarios"

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append([func.__name__, len(args), sorted(kwargs or {})])
            return super().__torch_function__(func, types, args, kwargs)

    class Declining(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    Declining.__module__ = "scenarios"
    r = double(lib.ones(2).as_subclass(Sub))
    out = {"type": type(r).__name__, "seen": list(seen), "values": r.tolist()}
    try:
        double(lib.ones(2).as_subclass(Declining))
    except TypeError as exc:
        out["declined"] = _error(exc)
    return out


def autograd(lib):
    """A subclass's leaf requires grad; its results keep the class; backward goes through them and the gradients
    (computed below every handler) are plain Tensors."""
    log = []
    Sub = _logging_subclass(lib, log, "Sub")
    x = lib.Tensor._make_subclass(Sub, _r(lib, 3), True)
    y = x * x
    loss = (y * 3).sum()
    out = {"leaf": [type(x).__name__, x.is_leaf, x.requires_grad], "y": [type(y).__name__, y.requires_grad,
                                                                         type(y.grad_fn).__name__]}
    log.clear()
    loss.backward()
    out["backward log"] = list(log)
    out["grad"] = [type(x.grad).__name__, [round(v, 6) for v in x.grad.tolist()]]
    g, = lib.autograd.grad((x * 2).sum(), x)
    out["autograd.grad"] = [type(g).__name__, g.tolist()]
    plain = _r(lib, 3).requires_grad_()
    s = plain.as_subclass(Sub)      # a view of plain: backward reaches plain through it
    (s.exp() * 2).sum().backward()
    out["through as_subclass"] = [type(s.grad_fn).__name__, [round(v, 5) for v in plain.grad.tolist()]]
    return out


def nn_layers(lib):
    """A subclass through nn layers: what the handler sees, the output's class, the parameters' gradients."""
    log = []
    Sub = _logging_subclass(lib, log, "Sub")
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(_r(lib, *p.shape) - 0.3 * (i % 2))
    x = _r(lib, 5, 3).as_subclass(Sub)
    log.clear()
    out = model(x)
    forward_log = [entry[:3] for entry in log]
    loss = out.pow(2).mean()
    loss.backward()
    return {"forward": forward_log, "out": type(out).__name__, "loss": [type(loss).__name__, round(loss.item(), 6)],
            "grads": [[type(p.grad).__name__, [round(v, 5) for v in p.grad.flatten().tolist()]]
                      for p in model.parameters()]}


SCENARIOS = {f.__name__: f for f in (subclass_calls, handler_order, default_handler_types, modes, disabling, parameter,
                                     predicates, non_tensor_objects, python_functions, autograd, nn_layers)}
