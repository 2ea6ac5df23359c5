"""_foreach_* scenarios, each a function of the library (torch or agrad) returning plain data: values,
gradients and errors. make_foreach_reference.py records PyTorch's answers in foreach_scenarios.json;
tests/engine/test_foreach.py runs the same functions with agrad and compares."""
from __future__ import annotations

import math


def _leaves(lib, *values):
    return [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]


def _plain(lib, *values):
    return [lib.tensor(v, dtype=lib.float64) for v in values]


def _out(ts):
    return [t.detach().tolist() for t in ts]


def _grads(ts):
    return [None if t.grad is None else t.grad.tolist() for t in ts]


def unary_out_of_place(lib):
    xs = _plain(lib, [0.25, 0.5], [0.75])
    return {name: _out(getattr(lib, f"_foreach_{name}")(xs)) for name in (
        "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
        "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
        "sinh", "sqrt", "tan", "tanh", "trunc")}


def unary_in_place(lib):
    out = {}
    for name in ("exp", "sqrt", "neg", "reciprocal", "zero"):
        xs = _plain(lib, [0.25, 0.5], [2.0])
        returned = getattr(lib, f"_foreach_{name}_")(xs)
        out[name] = {"values": _out(xs), "returns_the_list": returned is xs}
    return out


def binary_overloads(lib):
    xs = _plain(lib, [1.0, -2.0], [3.0])
    ys = _plain(lib, [0.5, 4.0], [-1.5])
    one = lib.tensor(2.0, dtype=lib.float64)
    out = {}
    for name in ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max"):
        f = getattr(lib, f"_foreach_{name}")
        out[name] = {"scalar": _out(f(xs, 1.5)), "scalars": _out(f(xs, [0.5, -2.0])), "list": _out(f(xs, ys))}
        if name in ("add", "sub", "mul", "div"):
            out[name]["tensor"] = _out(f(xs, one))
    out["add_alpha"] = _out(lib._foreach_add(xs, ys, alpha=-2))
    out["sub_alpha"] = _out(lib._foreach_sub(xs, ys, alpha=3))
    out["pow"] = {"scalar": _out(lib._foreach_pow(_plain(lib, [1.5, 2.0], [3.0]), 2.0)),
                  "list": _out(lib._foreach_pow(_plain(lib, [1.5, 2.0], [3.0]), _plain(lib, [2.0, 0.5], [-1.0]))),
                  "scalar_base": _out(lib._foreach_pow(2.0, _plain(lib, [1.5, 2.0], [3.0])))}
    zs = _plain(lib, [1.0, -2.0], [3.0])
    returned = lib._foreach_mul_(zs, [2.0, 3.0])
    lib._foreach_add_(zs, ys, alpha=2)
    lib._foreach_maximum_(zs, 0.0)
    out["in_place"] = {"values": _out(zs), "returns_the_list": returned is zs}
    return out


def pointwise_and_lerp(lib):
    xs, t1, t2 = _plain(lib, [1.0, 2.0], [3.0]), _plain(lib, [0.5, -1.0], [2.0]), _plain(lib, [4.0, 2.0], [-0.5])
    out = {}
    for name in ("addcmul", "addcdiv"):
        f = getattr(lib, f"_foreach_{name}")
        out[name] = {"default": _out(f(xs, t1, t2)), "scalar": _out(f(xs, t1, t2, 0.5)),
                     "scalars": _out(f(xs, t1, t2, [2.0, -1.0])),
                     "tensor": _out(f(xs, t1, t2, lib.tensor([3.0, 0.25], dtype=lib.float64)))}
        ys = [x.clone() for x in xs]
        getattr(lib, f"_foreach_{name}_")(ys, t1, t2, [2.0, -1.0])
        out[name]["in_place"] = _out(ys)
    out["lerp"] = {"scalar": _out(lib._foreach_lerp(xs, t1, 0.25)), "list": _out(lib._foreach_lerp(xs, t1, t2))}
    ys = [x.clone() for x in xs]
    lib._foreach_lerp_(ys, t2, 0.75)
    out["lerp"]["in_place"] = _out(ys)
    return out


def norms_copy_max(lib):
    xs = _plain(lib, [3.0, -4.0], [1.0, 2.0, -2.0])
    dst = _plain(lib, [0.0, 0.0], [0.0, 0.0, 0.0])
    returned = lib._foreach_copy_(dst, xs)
    return {"norm": _out(lib._foreach_norm(xs)), "norm1": _out(lib._foreach_norm(xs, 1)),
            "norm_inf": _out(lib._foreach_norm(xs, math.inf)), "max": _out(lib._foreach_max(xs)),
            "copy": _out(dst), "copy_returns_the_list": returned is dst, "clone": _out(lib._foreach_clone(xs)),
            "kind": type(lib._foreach_exp(xs)).__name__}


def gradients(lib):
    out = {}
    a, b = _leaves(lib, [0.5, -1.0], [2.0, 0.75]), _leaves(lib, [1.5, 0.25], [-3.0, 1.25])
    ys = lib._foreach_mul(a, b)
    zs = lib._foreach_addcdiv(ys, a, b, 0.5)
    ws = lib._foreach_lerp(zs, b, 0.3)
    ns = lib._foreach_norm(ws)
    sum(n for n in ns).backward()
    out["chain"] = {"a": _grads(a), "b": _grads(b)}
    a = _leaves(lib, [0.5, -1.0], [2.0])
    (sum(t.sum() for t in lib._foreach_sqrt(lib._foreach_exp(a)))).backward()
    out["exp_sqrt"] = _grads(a)
    return out


def inplace_foreach_allow_mutation_on_saved(lib):
    """PyTorch's TestAllowMutationOnSaved.test_inplace_foreach."""
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        a = [lib.tensor(1.0, requires_grad=True), lib.tensor(1.0, requires_grad=True)]
        b = lib._foreach_exp(a)
        lib._foreach_add_(b, 1)
        (b[0] + b[1]).backward()
    return {"grads": _grads(a), "want": _out(lib._foreach_exp(a))}


def errors(lib):
    out = {}
    xs = _plain(lib, [1.0, 2.0], [3.0])
    leaf = _leaves(lib, [1.0])
    for name, f in [("empty", lambda: lib._foreach_add([], 1)),
                    ("lengths", lambda: lib._foreach_add(xs, xs[:1])),
                    ("scalar_list", lambda: lib._foreach_mul(xs, [1.0, 2.0, 3.0])),
                    ("addcmul_lengths", lambda: lib._foreach_addcmul(xs, xs, xs[:1])),
                    ("addcdiv_values", lambda: lib._foreach_addcdiv(xs, xs, xs, [1.0])),
                    ("lerp_lengths", lambda: lib._foreach_lerp(xs, xs[:1], 0.5)),
                    ("copy_lengths", lambda: lib._foreach_copy_(xs, xs[:1])),
                    ("leaf_in_place", lambda: lib._foreach_add_(leaf, 1))]:
        try:
            f()
            out[name] = None
        except RuntimeError as exc:
            out[name] = str(exc).split("\n")[0]
    return out


SCENARIOS = {f.__name__: f for f in (unary_out_of_place, unary_in_place, binary_overloads, pointwise_and_lerp,
                                      norms_copy_max, gradients, inplace_foreach_allow_mutation_on_saved, errors)}
