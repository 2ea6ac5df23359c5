"""Views and in-place ops with autograd: scenarios run by PyTorch and by agrad alike.

Each scenario is a function of `T` (the `torch` module or `agrad`) returning what it
observed: values (leaf gradients, results, second-order products), grad_fn names,
version counters, whether a tensor is a view of which, and error messages.
make_inplace_reference.py runs them with torch 2.13 and writes
inplace_scenarios.json; tests/engine/test_views_inplace.py runs them with
agrad and compares (it never imports torch). Only API both libraries share is used.
"""
from __future__ import annotations

import numpy as np

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def data(T, shape, seed, requires_grad=True):
    values = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(values, dtype=T.float64, requires_grad=requires_grad)


def value(t):
    return None if t is None else np.asarray(t.detach().cpu().numpy(), dtype=np.float64).tolist()


def name(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def error(T, fn):
    """The message of the RuntimeError `fn` raises (up to PyTorch's hint), the library's name removed."""
    try:
        fn()
    except RuntimeError as exc:
        msg = str(exc).split(" Hint:")[0].split("\n")[0]
        return msg.replace(T.__name__ + ".", "LIB.")
    return None


def grads(T, out, inputs, create_graph=False):
    return T.autograd.grad(out, inputs, retain_graph=True, create_graph=create_graph, allow_unused=True)


def second_order(T, out, inputs, seed):
    """Gradients of sum(v * d out/d inputs) (a Hessian-vector product through the graph)."""
    first = grads(T, out, inputs, create_graph=True)
    total = 0
    for k, g in enumerate(first):
        if g is not None and g.requires_grad:
            total = total + (g * data(T, tuple(g.shape), seed + k, False)).sum()
    if not isinstance(total, int):
        return [value(g) for g in grads(T, total, inputs)]
    return []


# ---- views -----------------------------------------------------------------------------------

@scenario
def views_share_memory_and_version(T):
    obs = {}
    for label, make in [("view", lambda x: x.view(3, 4)), ("reshape", lambda x: x.reshape(2, 6)),
                        ("slice", lambda x: x[1:3]), ("select", lambda x: x[1]),
                        ("narrow", lambda x: x.narrow(1, 1, 2)),
                        ("transpose", lambda x: x.transpose(0, 1)), ("t", lambda x: x.t()),
                        ("permute", lambda x: x.permute(1, 0)), ("unsqueeze", lambda x: x.unsqueeze(1)),
                        ("squeeze", lambda x: x.unsqueeze(0).squeeze(0)), ("flatten", lambda x: x.flatten()),
                        ("diagonal", lambda x: x.diagonal()), ("unbind", lambda x: x.unbind(0)[2]),
                        ("split", lambda x: x.split(2)[1]), ("chunk", lambda x: x.chunk(2, 1)[1]),
                        ("alias", lambda x: x[...]), ("view_of_view", lambda x: x[1:].t()[1]),
                        ("unfold", lambda x: x.unfold(0, 2, 2)), ("view_as", lambda x: x.view_as(x.t())),
                        ("expand_as", lambda x: x[0].expand_as(x)[0])]:
        x = T.tensor(np.arange(12.0).reshape(4, 3), dtype=T.float64)
        v = make(x)
        with T.no_grad():
            v.mul_(-1)
        obs[label] = {"base_is_x": v._base is x, "is_view": v._is_view(), "x": value(x),
                      "versions": [x._version, v._version]}
    x = T.tensor(np.arange(12.0).reshape(4, 3), dtype=T.float64)
    obs["copying reshape"] = {"base": x.t().reshape(12)._base is not None, "contiguous_of_t": x.t().contiguous()._base
                              is not None, "expand_is_view": x[0].expand(2, 3)._base is x}
    return obs


@scenario
def view_grad_fn_names(T):
    x = data(T, (2, 3), 0)
    return {label: name(make(x)) for label, make in [
        ("view", lambda x: x.view(6)), ("reshape contiguous", lambda x: x.reshape(3, 2)),
        ("reshape copy", lambda x: x.t().reshape(6)), ("reshape alias", lambda x: x.t().reshape(3, 1, 2)),
        ("t", lambda x: x.t()), ("transpose", lambda x: x.transpose(0, 1)), ("permute", lambda x: x.permute(1, 0)),
        ("expand", lambda x: x.expand(2, 2, 3)), ("narrow", lambda x: x.narrow(1, 0, 2)), ("select", lambda x: x[1]),
        ("slice", lambda x: x[:, 1:]), ("unsqueeze", lambda x: x[None]), ("diagonal", lambda x: x.diagonal()),
        ("flatten", lambda x: x.flatten()), ("contiguous of t", lambda x: x.t().contiguous()),
        ("clone", lambda x: x.clone()), ("unbind", lambda x: x.unbind(1)[0]), ("split", lambda x: x.split(1)[1]),
        ("unfold", lambda x: x.unfold(1, 2, 1)), ("chunk", lambda x: x.chunk(3, 1)[2])]}


# ---- in-place ops recorded --------------------------------------------------------------------

@scenario
def clone_slice_imul(T):
    x = data(T, (5,), 1)
    y = x.clone()
    y[1:3] *= 2
    out = (y * y).sum()
    return {"names": [name(y)], "version": y._version, "grads": [value(g) for g in grads(T, out, [x])],
            "second": second_order(T, (y * y * y).sum(), [x], 10)}


@scenario
def view_of_view_inplace(T):
    x, w = data(T, (3, 4), 2), data(T, (2,), 3)
    y = x * 1
    v = y[1:].t()[0:2, 1]
    v.mul_(w)
    out = (y ** 2).sum()
    return {"names": [name(y)], "y": value(y), "versions": [y._version, v._version],
            "grads": [value(g) for g in grads(T, out, [x, w])],
            "second": second_order(T, (y ** 3).sum(), [x, w], 20)}


@scenario
def view_inplace_then_base_and_view_used(T):
    x, w = data(T, (3, 2), 4), data(T, (2,), 5)
    y = x.clone()
    v = y[0]
    v.add_(w * w)
    out = (y.exp() * y).sum() + (v * 3).sum()
    return {"names": [name(y)], "grads": [value(g) for g in grads(T, out, [x, w])],
            "second": second_order(T, (y.exp() * y).sum() + (v * v).sum(), [x, w], 30)}


@scenario
def base_inplace_then_view_used(T):
    x = data(T, (3, 3), 6)
    y = x * 2
    v = y[:, 1]
    y.mul_(3)
    y.sin_()
    out = (v * v).sum()
    return {"names": [name(y)], "v": value(v), "grads": [value(g) for g in grads(T, out, [x])],
            "second": second_order(T, (v * v * v).sum(), [x], 40)}


@scenario
def setitem_basic_into_constant(T):
    w = data(T, (2,), 7)
    z = T.zeros(4, dtype=T.float64)
    z[1:3] = w * w
    z[0] = 5.0
    z[3] = w[0]
    out = (z * T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64)).sum()
    return {"names": [name(z)], "z": value(z), "grads": [value(g) for g in grads(T, out, [w])],
            "second": second_order(T, (z * z * z).sum(), [w], 50)}


@scenario
def setitem_advanced(T):
    x, w = data(T, (5, 2), 8), data(T, (2, 2), 9)
    y = x.clone()
    y[T.tensor([0, 3])] = w
    z = y * 1
    z[[1, 4], 1] = 7.0
    z[:, 0][T.tensor([True, False, True, False, True])] = w[0, 0]
    out = (z * z).sum()
    return {"names": [name(y), name(z)], "z": value(z), "grads": [value(g) for g in grads(T, out, [x, w])],
            "second": second_order(T, (z * z * z).sum(), [x, w], 60)}


@scenario
def elementwise_inplace_chain(T):
    x, w = data(T, (4,), 10), data(T, (4,), 11)
    y = x * 1
    names = []
    # formulas that read the old self get a copy of it; exp_ (last) saves its result
    for step in [lambda: y.mul_(w), lambda: y.add_(w, alpha=2), lambda: y.sin_(), lambda: y.sub_(0.5),
                 lambda: y.div_(w), lambda: y.pow_(2), lambda: y.clamp_(0.0, 3.0), lambda: y.neg_(),
                 lambda: y.abs_(), lambda: y.cos_(), lambda: y.exp_()]:
        step()
        names.append(name(y))
    t, s = x * 1, x * 1
    t.tanh_()
    s.sigmoid_()
    names += [name(t), name(s)]
    out = y.sum() + (t * s).sum()
    return {"names": names, "y": value(y), "version": y._version, "grads": [value(g) for g in grads(T, out, [x, w])],
            "second": second_order(T, out, [x, w], 70)}


@scenario
def augmented_assignment(T):
    x, w = data(T, (3,), 12), data(T, (3,), 13)
    y = x * 1
    names = []
    y += w
    names.append(name(y))
    y *= w
    names.append(name(y))
    y -= 1
    names.append(name(y))
    y /= w
    names.append(name(y))
    return {"names": names, "y": value(y), "version": y._version,
            "grads": [value(g) for g in grads(T, (y * y).sum(), [x, w])],
            "second": second_order(T, (y * y).sum(), [x, w], 80)}


@scenario
def fill_zero_copy_masked_index_put(T):
    x, s, w, v = data(T, (2, 3), 14), data(T, (), 15), data(T, (3,), 16), data(T, (2,), 17)
    a = x.clone()
    a.fill_(s)
    b = x * 1
    b.zero_()
    c = x * 1
    c.copy_(w)
    d = x * 1
    d.masked_fill_(T.tensor([[True, False, True], [False, False, True]]), 2.5)
    e = x * 1
    e.index_put_((T.tensor([1, 0, 1]), T.tensor([2, 2, 2])), v[0] * v[1], accumulate=True)
    f = x.clone()
    f.fill_(1.5)
    out = (a * x).sum() + (b * x).sum() + (c * c).sum() + (d * d).sum() + (e * e).sum() + (f * x).sum()
    return {"names": [name(t) for t in (a, b, c, d, e, f)], "values": [value(t) for t in (a, b, c, d, e, f)],
            "grads": [value(g) for g in grads(T, out, [x, s, w, v])],
            "second": second_order(T, out, [x, s, w, v], 90)}


@scenario
def pure_ops(T):
    x, v = data(T, (4, 3), 18), data(T, (2, 3), 19)
    mask = T.tensor(np.random.default_rng(0).random((4, 3)) < 0.5)
    outs = [x.clone(), x.masked_fill(mask, -1.0), x.narrow(0, 1, 2), x.index_put((T.tensor([3, 0]),), v),
            x.index_put((T.tensor([1, 1]), T.tensor([0, 0])), v[0, 0], accumulate=True), x.t().contiguous()]
    out = sum((o * o).sum() for o in outs)
    return {"names": [name(o) for o in outs], "values": [value(o) for o in outs],
            "grads": [value(g) for g in grads(T, out, [x, v])]}


# ---- outside autograd, and .grad ---------------------------------------------------------------

@scenario
def optimizer_step_under_no_grad(T):
    w = data(T, (3,), 20)
    (w * w).sum().backward()
    before = w
    with T.no_grad():
        w -= 0.1 * w.grad
        w *= 2
        w.grad.zero_()
    (w * w * w).sum().backward()
    return {"same_object": w is before, "w": value(w), "grad": value(w.grad), "version": w._version,
            "requires_grad": w.requires_grad, "is_leaf": w.is_leaf}


@scenario
def accumulate_grad_in_place(T):
    p = data(T, (3,), 21)
    (p * 2).sum().backward()
    g = p.grad
    (p * p).sum().backward()
    q = data(T, (2, 2), 22)
    r = data(T, (2, 2), 23)
    (q.reshape(4) + r.reshape(4)).sum().backward()
    (q.reshape(4) + r.reshape(4)).sum().backward()
    root = T.ones(3, dtype=T.float64)
    s = data(T, (3,), 24)
    s.backward(root)
    s.backward(root)
    return {"same": p.grad is g, "g": value(g), "g_version": g._version, "q": value(q.grad), "r": value(r.grad),
            "root": value(root), "root_is_grad": s.grad is root}


# ---- PyTorch's errors --------------------------------------------------------------------------

@scenario
def errors(T):
    x = data(T, (4,), 25)

    def saved_output_modified():
        a = x.exp()
        a.mul_(2)
        a.sum().backward()

    def saved_input_modified():
        y = x * 2
        s = y.sin()
        y.add_(1)
        s.sum().backward()

    def detached_alias_modified():
        y = x.exp()
        y.detach().zero_()
        y.sum().backward()

    def multi_output_view():
        u = x * 1
        u.unbind(0)[0].mul_(2)

    def split_view():
        u = x * 1
        u.split(2)[0].add_(1)

    def no_grad_view():
        u = x * 1
        with T.no_grad():
            v = u[0:2]
        v.mul_(2)

    def expanded():
        T.zeros(3, dtype=T.float64).expand(2, 3).add_(1)

    return {"leaf": error(T, lambda: x.mul_(2)), "view of leaf": error(T, lambda: x[0:2].mul_(2)),
            "leaf iadd": error(T, lambda: x.__iadd__(1)),
            "saved output": error(T, saved_output_modified), "saved input": error(T, saved_input_modified),
            "detach alias": error(T, detached_alias_modified), "unbind": error(T, multi_output_view),
            "split": error(T, split_view), "no_grad view": error(T, no_grad_view),
            "int result": error(T, lambda: T.zeros(3, dtype=T.int64).add_(1.5)),
            "shape": error(T, lambda: T.zeros(3, dtype=T.float64).add_(T.ones(2, 3, dtype=T.float64))),
            "expanded": error(T, expanded),
            "view incompatible": error(T, lambda: T.zeros(2, 3).t().view(6))}


# ---- in-place comparisons and logical ops ------------------------------------------------------

def _cmp_state(t):
    return {"value": value(t), "dtype": str(t.dtype).split(".")[-1], "grad_fn": name(t),
            "requires_grad": t.requires_grad, "version": t._version}


@scenario
def comparisons_in_place(T):
    """eq_ … ge_ and their aliases: self's dtype, other broadcast to self, EqBackward0 (number) or
    EqBackward1 (tensor) recorded, zero gradients for self's history and other."""
    out = {}
    ops = ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "less_", "less_equal_", "greater_", "greater_equal_",
           "not_equal_")
    for k, op in enumerate(ops):
        x = data(T, (2, 3), 40 + k)
        o = data(T, (3,), 60 + k)
        y = x * 1
        getattr(y, op)(o)
        g = grads(T, y.sum(), [x, o])
        z = x * 1
        getattr(z, op)(0.25)
        w = T.tensor([1, 2, 3])
        getattr(w, op)(2.5)                      # compared as floats, written as int64
        h = T.tensor([1.0, 2.0, 3.0], dtype=T.float16)
        getattr(h, op)(T.tensor([1.0, 2.0 + 1e-7, 2.0], dtype=T.float64))
        b = T.tensor([True, False, True])
        getattr(b, op)(T.tensor([1, 0, 2]))
        out[op] = {"tensor": _cmp_state(y), "grads": [value(t) for t in g], "number": _cmp_state(z),
                   "int": _cmp_state(w), "half": _cmp_state(h), "bool": _cmp_state(b),
                   "same object": getattr(x * 1, op)(1.0) is not None}
    x = data(T, (3,), 70)
    plain = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    plain.lt_(x)                                 # only other requires grad: self gets the Node
    out["other requires grad"] = {"state": _cmp_state(plain),
                                  "next": [None if f is None else type(f).__name__
                                           for f, _ in plain.grad_fn.next_functions]}
    ints = T.tensor([1, 2, 3])
    ints.lt_(T.tensor(2.5, dtype=T.float64, requires_grad=True))
    out["int self, other requires grad"] = _cmp_state(ints)
    base = x * 1
    view = base[:2]
    view.ge_(0.0)
    out["view"] = {"base": _cmp_state(base), "grad": value(grads(T, base.sum(), [x])[0])}
    with T.no_grad():
        leaf = data(T, (3,), 71)
        leaf.eq_(leaf)
    out["leaf under no_grad"] = _cmp_state(leaf)
    out["errors"] = {
        "leaf": error(T, lambda: data(T, (3,), 72).lt_(0.0)),
        "view of leaf": error(T, lambda: data(T, (3,), 73)[:2].gt_(0.0)),
        "broadcast self": error(T, lambda: T.zeros(2).eq_(T.ones(2, 2))),
        "0-d self": error(T, lambda: T.tensor(1.0).le_(T.ones(3))),
        "expanded": error(T, lambda: T.ones(1).expand(3).ne_(1)),
    }
    return out


@scenario
def logical_in_place(T):
    """logical_and_ … logical_not_: self's dtype, and unseen by autograd (no Node, a leaf that requires
    grad is written, self keeps its grad_fn), only the version counter moves."""
    out = {}
    for op in ("logical_and_", "logical_or_", "logical_xor_"):
        a = T.tensor([1.0, 0.0, 3.0, 0.0], dtype=T.float64)
        getattr(a, op)(T.tensor([True, True, False, False]))
        i = T.tensor([[0, 2, -1, 0]])
        getattr(i, op)(T.tensor([1.5, 0.0, 0.0, 2.0]))
        leaf = data(T, (4,), 80)
        getattr(leaf, op)(data(T, (4,), 81))
        x = data(T, (4,), 82)
        y = x * 1
        getattr(y, op)(T.tensor([0.0, 1.0, 0.0, 1.0], dtype=T.float64))
        plain = T.tensor([1.0, 0.0, 2.0, 0.0], dtype=T.float64)
        getattr(plain, op)(x)
        try:
            getattr(T.ones(2), op)(2)
            number = None
        except TypeError as exc:
            number = str(exc)
        out[op] = {"float": _cmp_state(a), "int": _cmp_state(i), "leaf": _cmp_state(leaf),
                   "non-leaf": _cmp_state(y), "grad": value(grads(T, y.sum(), [x])[0]),
                   "other requires grad": _cmp_state(plain), "number": number,
                   "broadcast self": error(T, lambda: getattr(T.zeros(2), op)(T.ones(2, 2)))}
    leaf = data(T, (3,), 83)
    leaf.logical_not_()
    x = data(T, (3,), 84)
    base = x * 1
    base[:2].logical_not_()
    out["logical_not_"] = {"leaf": _cmp_state(leaf), "view": _cmp_state(base),
                           "int": _cmp_state(T.tensor([0, 3, -2]).logical_not_())}
    return out


@scenario
def bitwise_and_polygamma_in_place(T):
    """bitwise_and_ … bitwise_right_shift_ on integer and bool tensors (a number or a broadcast tensor),
    their refusal of a float self; polygamma_ (n after self, unlike polygamma) recorded as
    PolygammaBackward1, with its gradient."""
    out = {}
    for op, other in (("bitwise_and_", 6), ("bitwise_or_", [1, 2, 4]), ("bitwise_xor_", 3),
                      ("bitwise_left_shift_", 2), ("bitwise_right_shift_", [1, 0, 2])):
        a = T.tensor([5, -3, 8])
        version = a._version
        getattr(a, op)(T.tensor(other) if isinstance(other, list) else other)
        out[op] = {"int": [a.tolist(), str(a.dtype).split(".")[-1], a._version - version],
                   "float": error(T, lambda: getattr(T.tensor([1.0]), op)(1))}
    b = T.tensor([True, False, True])
    b.bitwise_and_(T.tensor([True, True, False]))
    b.bitwise_not_()
    out["bool"] = b.tolist()
    out["bitwise_not_"] = T.tensor([5, -3, 0]).bitwise_not_().tolist()
    x = data(T, (3,), 90)
    y = x.abs() + 1
    y.polygamma_(1)
    # (to 8 digits: PyTorch's trigamma is a series accurate to about 1e-10, agrad's SciPy's polygamma to 1e-16)
    out["polygamma_"] = {"value": np.round(value(y), 8).tolist(), "name": name(y),
                         "grad": np.round(value(grads(T, y.sum(), [x])[0]), 8).tolist()}
    return out


@scenario
def apply_map_and_resize(T):
    """apply_/map_/map2_ (a Python callable per element, in place, the version unmoved, a tensor that
    requires grad refused) and the deprecated out-of-place resize/resize_as (ResizeBackward)."""
    import warnings

    def outcome(call):
        try:
            return call().tolist()
        except (RuntimeError, TypeError, ZeroDivisionError) as exc:
            return [type(exc).__name__ if not isinstance(exc, RuntimeError) else "RuntimeError",
                    str(exc).replace(T.__name__ + ".", "LIB.")]
    x = T.tensor([[1.0, 2], [3, 4]])
    y = T.tensor([1.0, 2])
    y.apply_(lambda v: v * 3)
    v = T.tensor([1.0, 2, 3])
    v[1:].apply_(lambda a: 0)
    out = {"apply_": x.clone().apply_(lambda e: e * 10).tolist(), "version": y._version, "values": y.tolist(),
           "view": v.tolist(), "int": outcome(lambda: T.tensor([1, 2]).apply_(lambda e: e + 0.5)),
           "bool": outcome(lambda: T.tensor([True, False]).apply_(lambda e: not e)),
           "not a number": outcome(lambda: T.tensor([1.0, 2]).apply_(lambda e: "a")),
           "raises": outcome(lambda: T.tensor([1.0, 2]).apply_(lambda e: 1 / 0)),
           "requires grad": outcome(lambda: T.tensor([1.0, 2], requires_grad=True).apply_(lambda e: e)),
           "map_": outcome(lambda: x.clone().map_(T.tensor([10.0, 20]), lambda a, b: a + b)),
           "map_ dtype": outcome(lambda: x.clone().map_(T.tensor([10, 20]), lambda a, b: a + b)),
           "map_ shape": outcome(lambda: x.clone().map_(T.tensor([10.0, 20, 30]), lambda a, b: a + b)),
           "map_ requires grad": outcome(lambda: T.tensor([1.0, 2], requires_grad=True).map_(T.tensor([1.0, 2]),
                                                                                            lambda a, b: a)),
           "map2_": outcome(lambda: x.clone().map2_(T.tensor([1.0, 1]), T.tensor([[2.0], [3.0]]),
                                                    lambda a, b, c: a * b + c)),
           "map2_ dtype y": outcome(lambda: x.clone().map2_(T.tensor([1.0, 1]), T.tensor([1, 1]), lambda a, b, c: a)),
           "map2_ dtype x": outcome(lambda: x.clone().map2_(T.tensor([1, 1]), T.tensor([1.0, 1]), lambda a, b, c: a))}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = data(T, (6,), 95)
        r = w.resize(2, 3)
        s = w.resize_as(T.ones(3, 2))
        (r * T.arange(6.0, dtype=T.float64).reshape(2, 3)).sum().backward()
        (s ** 2).sum().backward()
        out["resize"] = {"shapes": [list(r.shape), list(s.shape)], "name": name(r), "is_view": r._base is w,
                         "grad": value(w.grad), "too many": outcome(lambda: w.resize(4)),
                         "warnings": sorted({str(c.message) for c in caught})}
    return out
