"""torch.func (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize, vmap, functional_call,
stack_module_state) as scenarios that run on PyTorch and on agrad alike: `lib.func` is torch.func or
agrad.func.

Each scenario takes the library module `lib`, works in float64 and returns plain JSON values: a tensor
as its shape, values and requires_grad; a tuple or list as a list; a dict as a list of [key, value]
pairs (so that the order of the keys is compared too); an error as [built-in exception type, first
line of the message] with the library's name reading LIB (api_scenarios' `_error`).
`tests/reference/make_func_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/func.json`; `test_func.py` runs them on agrad and compares (never importing
torch).
"""
from __future__ import annotations

import functools

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _t(lib, values, requires_grad=False):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def _out(x):
    if isinstance(x, (tuple, list)):
        return [_out(e) for e in x]
    if isinstance(x, dict):
        return [[k, _out(v)] for k, v in x.items()]
    if x is None or isinstance(x, (int, float, str, bool)):
        return x
    return {"shape": list(x.shape), "values": x.detach().tolist(), "requires_grad": x.requires_grad}


def _x(lib, requires_grad=False):
    return _t(lib, [0.5, -1.25, 2.0], requires_grad)


def _y(lib, requires_grad=False):
    return _t(lib, [[0.3, -0.7], [1.1, 0.4]], requires_grad)


def _xs(lib):
    """A batch of 4 samples of 3 features."""
    return _t(lib, [[0.5, -1.25, 2.0], [0.1, 0.2, -0.3], [1.5, 0.0, -2.0], [-0.4, 0.9, 0.6]])


def _scalar(lib):
    """((3,), (2, 2)) -> (), with mixed second derivatives and nonzero third ones."""
    return lambda x, y: (x ** 3 * y[0, 1]).sum() + (lib.sin(y) * y).sum() + (x[0] * y[1, 0]) ** 2


def _f1(lib):
    """(3,) -> (3,), nonlinear."""
    return lambda x: lib.sin(x) * x ** 2


def _f2(lib):
    """((3,), (2, 2)) -> ((2, 2), ()), nonlinear in both."""
    return lambda x, y: (x[:2].unsqueeze(1) * lib.tanh(y), (x ** 3).sum() + (y * lib.exp(y)).sum())


def _ones(lib, n=3):
    return lib.ones(n, dtype=lib.float64)


# -- grad and grad_and_value ----------------------------------------------------------------------------
@scenario
def grad_argnums(lib):
    F, f, x, y = lib.func, _scalar(lib), _x(lib), _y(lib)
    return {"default": _out(F.grad(f)(x, y)), "one": _out(F.grad(f, argnums=1)(x, y)),
            "negative": _out(F.grad(f, argnums=-2)(x, y)), "tuple": _out(F.grad(f, argnums=(0, 1))(x, y)),
            "reversed": _out(F.grad(f, argnums=(1, 0))(x, y))}


@scenario
def grad_pytree_argument(lib):
    F = lib.func

    def f(params, x):
        return (lib.tanh(x @ params["w"]) * params["b"]).sum() + (params["pair"][0] * params["pair"][1]).sum()
    params = {"w": _y(lib), "b": _t(lib, [1.5, -0.5]), "pair": (_t(lib, [2.0]), _t(lib, [-3.0]))}
    return _out(F.grad(f)(params, _x(lib)[:2]))


@scenario
def grad_has_aux_and_kwargs(lib):
    F = lib.func

    def f(x, y, *, scale):
        return (x ** 2).sum() * scale, {"aux": x * 2, "y": [y]}
    g, aux = F.grad(f, has_aux=True)(_x(lib), _y(lib), scale=1.5)
    gv = F.grad_and_value(f, argnums=(0,), has_aux=True)(_x(lib), _y(lib), scale=2.0)
    non_tensor_aux = _error(lambda: F.grad(lambda x: ((x ** 2).sum(), 3), has_aux=True)(_x(lib)))
    return {"grad": _out(g), "aux": _out(aux), "grad_and_value": _out(gv), "non_tensor_aux": non_tensor_aux}


@scenario
def grad_and_value_values(lib):
    g, v = lib.func.grad_and_value(_scalar(lib), argnums=(0, 1))(_x(lib), _y(lib))
    return {"grad": _out(g), "value": _out(v)}


@scenario
def grad_unused_input_is_zero(lib):
    return _out(lib.func.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(_x(lib), _y(lib)))


@scenario
def grad_errors(lib):
    F, x = lib.func, _x(lib)
    return {
        "not_scalar": _error(lambda: F.grad(lambda x: x * 2)(x)),
        "not_tensor": _error(lambda: F.grad(lambda x: 1.0)(x)),
        "argnum_out_of_range": _error(lambda: F.grad(lambda x: x.sum(), argnums=2)(x)),
        "argnum_negative_out_of_range": _error(lambda: F.grad(lambda x: x.sum(), argnums=-2)(x)),
        "argnums_empty": _error(lambda: F.grad(lambda x: x.sum(), argnums=())(x)),
        "argnums_repeated": _error(lambda: F.grad(lambda x, y: x.sum(), argnums=(0, 0))(x, x)),
        "argnums_float": _error(lambda: F.grad(lambda x: x.sum(), argnums=0.0)(x)),
        "argnums_list": _error(lambda: F.grad(lambda x: x.sum(), argnums=[0])(x)),
        "has_aux_not_tuple": _error(lambda: F.grad(lambda x: x.sum(), has_aux=True)(x)),
        "has_aux_three": _error(lambda: F.grad(lambda x: (x.sum(), 1, 2), has_aux=True)(x)),
        "non_tensor_input": _error(lambda: F.grad(lambda x: x, argnums=0)(2.0)),
    }


@scenario
def grad_of_grad(lib):
    F, x = lib.func, _x(lib)
    f = lambda x: (lib.sin(x) * x ** 2).sum()   # noqa: E731
    second = F.grad(lambda x: F.grad(f)(x).sum())(x)
    third = F.grad(lambda x: F.grad(lambda x: F.grad(f)(x).sum())(x).sum())(x)
    return {"second": _out(second), "third": _out(third)}


@scenario
def grad_perturbation_confusion(lib):
    """d/dx [x * d/dy (x + y)] = 1: the inner grad differentiates y only, not the outer x."""
    F = lib.func
    x = _t(lib, 1.5)
    return _out(F.grad(lambda x: x * F.grad(lambda y: x + y)(_t(lib, 0.5)))(x))


@scenario
def grad_composes_with_autograd(lib):
    """Results keep their history where it leads outside the transform (a requires-grad input, a
    captured parameter), and have none where it does not."""
    F = lib.func
    x, w = _x(lib, True), _t(lib, [1.0, 2.0, -1.0], True)
    g = F.grad(lambda x: (x ** 3).sum())(x)
    g.sum().backward()
    captured = F.grad(lambda z: (z ** 3 * w).sum())(_x(lib))
    plain = F.grad(lambda z: (z ** 3).sum())(_x(lib))
    with lib.no_grad():
        under_no_grad = F.grad(lambda x: (x ** 3).sum())(x)
    return {"grad": _out(g), "x.grad": _out(x.grad), "captured": _out(captured), "plain": _out(plain),
            "under_no_grad": _out(under_no_grad)}


@scenario
def per_sample_gradients(lib):
    """torch.func's classic: vmap(grad(loss), in_dims=(None, 0, 0)) over a linear model's parameters."""
    F = lib.func
    params = {"w": _t(lib, [[0.2, -0.5, 1.0], [0.7, 0.1, -0.3]]), "b": _t(lib, [0.1, -0.2])}
    targets = _t(lib, [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-1.0, 2.0]])

    def loss(params, x, target):
        pred = lib.tanh(x @ params["w"].T + params["b"])
        return ((pred - target) ** 2).mean()
    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, _xs(lib), targets)
    return _out(per_sample)


# -- vjp -------------------------------------------------------------------------------------------------
@scenario
def vjp_values(lib):
    F = lib.func
    out, vjp_fn = F.vjp(_f2(lib), _x(lib), _y(lib))
    cot = (_t(lib, [[1.0, 0.5], [-1.0, 2.0]]), _t(lib, 1.5))
    return {"out": _out(out), "vjp": _out(vjp_fn(cot)), "again": _out(vjp_fn(cot))}


@scenario
def vjp_pytree_output_and_aux(lib):
    F = lib.func
    out, vjp_fn, aux = F.vjp(lambda x: ({"b": x.sin(), "a": [x ** 2]}, x.sum()), _x(lib), has_aux=True)
    cot = {"b": _t(lib, [1.0, 2.0, 3.0]), "a": [_t(lib, [0.5, 0.5, -1.0])]}
    return {"out": _out(out), "aux": _out(aux), "vjp": _out(vjp_fn(cot))}


@scenario
def vjp_errors(lib):
    F, x = lib.func, _x(lib)
    _, vjp_fn = F.vjp(lambda x: (x, x * 2), x)
    return {
        "cotangent_structure": _error(lambda: vjp_fn(x)),
        "has_aux_not_tuple": _error(lambda: F.vjp(lambda x: x, x, has_aux=True)),
        "integer_output": _error(lambda: F.vjp(lambda x: x.long(), x)),
        "non_tensor_output": _error(lambda: F.vjp(lambda x: 1.0, x)),
        "none_output": _error(lambda: F.vjp(lambda x: None, x)),
        "non_tensor_input": _error(lambda: F.vjp(lambda x: x, 1.0)),
    }


# -- jvp -------------------------------------------------------------------------------------------------
@scenario
def jvp_values(lib):
    F = lib.func
    p, t = F.jvp(_f2(lib), (_x(lib), _y(lib)), (_ones(lib), _t(lib, [[1.0, -1.0], [0.5, 2.0]])))
    p1, t1, aux = F.jvp(lambda x: (x.exp(), x.sum()), (_x(lib),), (_t(lib, [1.0, 0.0, -2.0]),), has_aux=True)
    const_p, const_t = F.jvp(lambda x: _t(lib, [1.0, 2.0]), (_x(lib),), (_ones(lib),))
    return {"out": _out(p), "tangent": _out(t), "aux_out": _out(p1), "aux_tangent": _out(t1), "aux": _out(aux),
            "independent": _out([const_p, const_t])}


@scenario
def jvp_pytree_primals(lib):
    F = lib.func
    f = lambda d: {"s": d["a"] * d["b"][0], "t": (d["a"] ** 2).sum()}   # noqa: E731
    primals = ({"a": _x(lib), "b": [_t(lib, [2.0, 3.0, 4.0])]},)
    tangents = ({"a": _ones(lib), "b": [_t(lib, [0.5, 0.0, -0.5])]},)
    return _out(F.jvp(f, primals, tangents))


@scenario
def jvp_errors(lib):
    F, x = lib.func, _x(lib)
    return {
        "primals_not_tuple": _error(lambda: F.jvp(lambda x: x, x, (x,))),
        "structure": _error(lambda: F.jvp(lambda x, y: x, (x, x), (x,))),
        "non_tensor_primal": _error(lambda: F.jvp(lambda x: x, (1.0,), (1.0,))),
        "non_tensor_output": _error(lambda: F.jvp(lambda x: 1.0, (x,), (x,))),
        "has_aux_not_tuple": _error(lambda: F.jvp(lambda x: x, (x,), (x,), has_aux=True)),
        "strict_independent": _error(lambda: F.jvp(lambda x: _t(lib, [1.0]), (x,), (x,), strict=True)),
        "empty_primals": _error(lambda: F.jvp(lambda: x, (), ())),
    }


@scenario
def jvp_composes(lib):
    """jvp(grad(f)) is the Hessian-vector product; grad of a jvp; jvp of a jvp (second directional
    derivative)."""
    F, x = lib.func, _x(lib)
    f = lambda x: (lib.sin(x) * x ** 2).sum()   # noqa: E731
    v = _t(lib, [1.0, -0.5, 2.0])
    hvp = F.jvp(F.grad(f), (x,), (v,))
    grad_of_jvp = F.grad(lambda x: F.jvp(f, (x,), (v,))[1])(x)
    second = F.jvp(lambda x: F.jvp(f, (x,), (v,))[1], (x,), (v,))
    return {"hvp": _out(hvp), "grad_of_jvp": _out(grad_of_jvp), "jvp_of_jvp": _out(second)}


# -- jacrev, jacfwd, hessian ----------------------------------------------------------------------------------
def _jacobians(lib, jac):
    F = lib.func
    x, y = _x(lib), _y(lib)
    return {
        "one": _out(jac(_f1(lib))(x)),
        "argnums_1": _out(jac(_f2(lib), argnums=1)(x, y)),
        "argnums_tuple": _out(jac(_f2(lib), argnums=(0, 1))(x, y)),
        "dict_in_out": _out(jac(lambda d: {"p": d["u"] * d["v"].sum(), "q": d["u"].exp()})(
            {"u": x, "v": y})),
        "has_aux": _out(jac(lambda x: (x.sin(), x.cos()), has_aux=True)(x)),
        "scalar": _out(jac(lambda x: (x ** 2).sum())(x)),
        "scalar_input": _out(jac(lambda s: s * x)(_t(lib, 2.0))),
    }


@scenario
def jacrev_values(lib):
    F = lib.func
    r = _jacobians(lib, F.jacrev)
    x, y = _x(lib), _y(lib)
    r["chunk_1"] = _out(F.jacrev(_f2(lib), argnums=(0, 1), chunk_size=1)(x, y))
    r["chunk_2"] = _out(F.jacrev(_f2(lib), argnums=(0, 1), chunk_size=2)(x, y))
    r["chunk_0"] = _error(lambda: F.jacrev(_f1(lib), chunk_size=0))
    return r


@scenario
def jacfwd_values(lib):
    return _jacobians(lib, lib.func.jacfwd)


@scenario
def hessian_values(lib):
    F, x, y = lib.func, _x(lib), _y(lib)
    return {"x": _out(F.hessian(_scalar(lib))(x, y)), "both": _out(F.hessian(_scalar(lib), argnums=(0, 1))(x, y)),
            "jacrev_jacrev": _out(F.jacrev(F.jacrev(_scalar(lib), argnums=1), argnums=1)(x, y)),
            "jacfwd_jacfwd": _out(F.jacfwd(F.jacfwd(_scalar(lib)))(x, y)),
            "jacrev_jacfwd": _out(F.jacrev(F.jacfwd(_scalar(lib)))(x, y))}


@scenario
def jacobian_errors(lib):
    F, x = lib.func, _x(lib)
    return {
        "jacrev_non_tensor": _error(lambda: F.jacrev(lambda x: 1.0)(x)),
        "jacfwd_non_tensor": _error(lambda: F.jacfwd(lambda x: 1.0)(x)),
        "jacrev_argnum": _error(lambda: F.jacrev(_f1(lib), argnums=1)(x)),
        "jacfwd_argnum": _error(lambda: F.jacfwd(_f1(lib), argnums=(0, 0))(x)),
        "jacfwd_random": _error(lambda: F.jacfwd(lambda x: x * lib.rand(3, dtype=lib.float64))(x)),
    }


@scenario
def jacrev_of_vmap_and_vmap_of_jacrev(lib):
    F, xs = lib.func, _xs(lib)
    f = lambda x: lib.sin(x) * x.sum()   # noqa: E731
    return {"jacrev_of_vmap": _out(F.jacrev(F.vmap(f))(xs[:2])), "vmap_of_jacrev": _out(F.vmap(F.jacrev(f))(xs)),
            "vmap_of_hessian": _out(F.vmap(F.hessian(lambda x: (x ** 3).prod()))(xs[:2]))}


# -- linearize -----------------------------------------------------------------------------------------------
@scenario
def linearize_values(lib):
    F = lib.func
    out, jvp_fn = F.linearize(_f2(lib), _x(lib), _y(lib))
    t1 = jvp_fn(_ones(lib), _t(lib, [[1.0, -1.0], [0.5, 2.0]]))
    t2 = jvp_fn(_t(lib, [0.0, 2.0, 1.0]), _t(lib, [[0.0, 0.0], [0.0, 1.0]]))
    return {"out": _out(out), "t1": _out(t1), "t2": _out(t2),
            "shape_error": _error(lambda: jvp_fn(_ones(lib, 2), _y(lib))),
            "dtype_error": _error(lambda: jvp_fn(_ones(lib).float(), _y(lib))),
            "structure_error": _error(lambda: jvp_fn(_ones(lib)))}


# -- vmap ------------------------------------------------------------------------------------------------------
@scenario
def vmap_in_dims(lib):
    F, xs = lib.func, _xs(lib)
    w = _t(lib, [1.0, -2.0, 0.5])
    return {
        "default": _out(F.vmap(lambda x: (x * w).sum())(xs)),
        "dim_1": _out(F.vmap(lambda x: x * 2, in_dims=1)(xs)),
        "negative": _out(F.vmap(lambda x: x.sum(), in_dims=-1)(xs)),
        "none": _out(F.vmap(lambda x, w: x * w, in_dims=(0, None))(xs, w)),
        "nested_tuple": _out(F.vmap(lambda p, s: p[0] * p[1] + s, in_dims=((0, 1), None))(
            (xs, xs.T), _t(lib, 1.0))),
        "dict": _out(F.vmap(lambda d: d["a"] - d["b"], in_dims=({"a": 0, "b": None},))(
            {"a": xs, "b": w})),
        "kwargs_unmapped": _out(F.vmap(lambda x, *, k: x * k)(xs, k=_t(lib, 3.0))),
        "non_tensor_unmapped": _out(F.vmap(lambda x, n: x * n, in_dims=(0, None))(xs, 2)),
    }


@scenario
def vmap_out_dims(lib):
    F, xs = lib.func, _xs(lib)
    w = _t(lib, [1.0, -2.0, 0.5])
    return {
        "dim_1": _out(F.vmap(lambda x: x * w, out_dims=1)(xs)),
        "tuple": _out(F.vmap(lambda x: (x * 2, x.sum()), out_dims=(1, 0))(xs)),
        "one_tuple": _out(F.vmap(lambda x: x * 2, out_dims=(1,))(xs)),
        "none_unbatched": _out(F.vmap(lambda x: (x * 2, w), out_dims=(0, None))(xs)),
        "none_non_tensor": _out(F.vmap(lambda x: (x * 2, 7), out_dims=(0, None))(xs)),
        "unbatched_output": _out(F.vmap(lambda x: w * 2)(xs)),
        "dict_out": _out(F.vmap(lambda x: {"s": x.sum(), "m": x.max()})(xs)),
        "chunked": _out(F.vmap(lambda x: x.sin(), chunk_size=3)(xs)),
    }


@scenario
def vmap_nested(lib):
    F, xs, y = lib.func, _xs(lib), _y(lib)
    outer = F.vmap(F.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(xs[0], y)
    dot = F.vmap(F.vmap(lambda a, b: (a * b).sum(), in_dims=(None, 0)), in_dims=(0, None))(xs, xs)
    return {"outer": _out(outer), "gram": _out(dot)}


@scenario
def vmap_randomness(lib):
    F = lib.func
    xs = lib.zeros(4, 3, dtype=lib.float64)
    same = F.vmap(lambda x: x + lib.rand(3, dtype=lib.float64), randomness="same")(xs)
    different = F.vmap(lambda x: x + lib.rand(3, dtype=lib.float64), randomness="different")(xs)
    same_chunked = F.vmap(lambda x: x + lib.rand(3, dtype=lib.float64), randomness="same", chunk_size=2)(xs)
    return {
        "same_rows_equal": all(bool((same[i] == same[0]).all()) for i in range(4)),
        "same_chunked_rows_equal": all(bool((same_chunked[i] == same_chunked[0]).all()) for i in range(4)),
        "different_rows_differ": not bool((different[1] == different[0]).all()),
        "error": _error(lambda: F.vmap(lambda x: x + lib.rand(3, dtype=lib.float64))(xs)),
        "error_randn_like": _error(lambda: F.vmap(lambda x: lib.randn_like(x))(xs)),
        "error_in_dropout": _error(lambda: F.vmap(lambda x: lib.nn.functional.dropout(x, 0.5))(xs)),
        "error_nested": _error(lambda: F.vmap(F.vmap(lambda x: x + lib.rand(()), randomness="different"))(xs)),
        "bad_value": _error(lambda: F.vmap(lambda x: x, randomness="sometimes")),
        "no_randomness_is_fine": _out(F.vmap(lambda x: lib.nn.functional.dropout(x, 0.5, training=False))(xs)),
    }


@scenario
def vmap_errors(lib):
    F, xs = lib.func, _xs(lib)

    def named(x, y):
        return x + y
    return {
        "batch_sizes": _error(lambda: F.vmap(named)(xs, xs.T)),
        "in_dims_structure": _error(lambda: F.vmap(named, in_dims=(0,))(xs, xs)),
        "in_dims_type": _error(lambda: F.vmap(named, in_dims=[0, 0])(xs, xs)),
        "in_dim_float": _error(lambda: F.vmap(named, in_dims=(0, 1.0))(xs, xs)),
        "in_dim_non_tensor": _error(lambda: F.vmap(named, in_dims=(0, 0))(xs, 2.0)),
        "in_dim_out_of_range": _error(lambda: F.vmap(named, in_dims=(0, 2))(xs, xs)),
        "no_inputs": _error(lambda: F.vmap(lambda: xs)()),
        "nothing_mapped": _error(lambda: F.vmap(named, in_dims=None)(xs, xs)),
        "nothing_mapped_tuple": _error(lambda: F.vmap(named, in_dims=(None, None))(xs, xs)),
        "out_dims_type": _error(lambda: F.vmap(named, out_dims="0")(xs, xs)),
        "out_dims_structure": _error(lambda: F.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(xs)),
        "out_dim_out_of_range": _error(lambda: F.vmap(lambda x: x, out_dims=3)(xs)),
        "non_tensor_output": _error(lambda: F.vmap(lambda x: 1.0)(xs)),
        "batched_output_with_none": _error(lambda: F.vmap(lambda x: x * 2, out_dims=None)(xs)),
        "chunk_size_0": _error(lambda: F.vmap(named, chunk_size=0)),
        "partial_name": _error(lambda: F.vmap(functools.partial(named, y=xs[0]), in_dims=(0, 0))(xs)),
    }


# -- functional_call and stack_module_state ------------------------------------------------------------------
def _linear(lib):
    lin = lib.nn.Linear(3, 2).double()
    return lin, {"weight": _t(lib, [[0.2, -0.5, 1.0], [0.7, 0.1, -0.3]]), "bias": _t(lib, [0.1, -0.2])}


@scenario
def functional_call_values(lib):
    F = lib.func
    lin, params = _linear(lib)
    out = F.functional_call(lin, params, (_xs(lib),))
    split = F.functional_call(lin, ({"weight": params["weight"]}, {"bias": params["bias"]}), _xs(lib))
    kwargs = F.functional_call(lin, params, (), {"input": _xs(lib)})

    def loss(p, x):
        return (F.functional_call(lin, p, (x,)) ** 2).sum()
    return {"out": _out(out), "split": _out(split), "kwargs": _out(kwargs),
            "grad": _out(F.grad(loss)(params, _xs(lib))),
            "per_sample": _out(F.vmap(F.grad(loss), in_dims=(None, 0))(params, _xs(lib))),
            "jacrev": _out(F.jacrev(lambda p: F.functional_call(lin, p, (_xs(lib)[0],)))(params))}


@scenario
def functional_call_errors(lib):
    F = lib.func
    lin, params = _linear(lib)
    return {
        "repeated_key": _error(lambda: F.functional_call(lin, (params, {"bias": params["bias"]}), (_xs(lib),))),
        "not_dicts": _error(lambda: F.functional_call(lin, (params, 1), (_xs(lib),))),
        "not_a_dict": _error(lambda: F.functional_call(lin, 3, (_xs(lib),))),
        "strict_missing": _error(lambda: F.functional_call(lin, {"weight": params["weight"]}, (_xs(lib),),
                                                           strict=True)),
    }


@scenario
def ensemble_with_stack_module_state(lib):
    F = lib.func
    models = []
    for k in range(3):
        lin = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            lin.weight.copy_(_t(lib, [[0.2, -0.5, 1.0], [0.7, 0.1, -0.3]]) * (k + 1))
            lin.bias.copy_(_t(lib, [0.1, -0.2]) - k)
        models.append(lin)
    params, buffers = F.stack_module_state(models)

    def call(p, b, x):
        return F.functional_call(models[0], (p, b), (x,))
    out = F.vmap(call, in_dims=(0, 0, None))(params, buffers, _xs(lib))
    return {"params": _out(params), "buffers": _out(buffers), "out": _out(out),
            "empty": _error(lambda: F.stack_module_state([]))}


@scenario
def more_compositions(lib):
    """A gradient through per-sample gradients (meta-learning's shape), the vjp of a vjp_fn, and vmap of
    jvp. (Not grad through linearize's jvp_fn: PyTorch's traced jvp_fn is not differentiable with
    respect to the primals and gives uninitialized memory; test_func.py checks agrad's alone.)"""
    F, xs = lib.func, _xs(lib)
    w = _t(lib, [0.3, -0.2, 0.8])

    def loss(w, x):
        return lib.tanh((w * x).sum()) ** 2
    through_per_sample = F.grad(lambda w: F.vmap(F.grad(loss), in_dims=(None, 0))(w, xs).pow(2).sum())(w)

    def vjp_of(x):
        _, vjp_fn = F.vjp(_f1(lib), x)
        return vjp_fn(lib.sin(x))[0]
    vjp_of_vjp_fn = F.vjp(vjp_of, _x(lib))[1](_t(lib, [1.0, 2.0, -1.0]))
    vmap_of_jvp = F.vmap(lambda x, v: F.jvp(_f1(lib), (x,), (v,))[1])(xs, xs.cos())
    return {"through_per_sample": _out(through_per_sample), "vjp_of_vjp_fn": _out(vjp_of_vjp_fn),
            "vmap_of_jvp": _out(vmap_of_jvp)}


@scenario
def batch_norm_ensemble(lib):
    """replace_all_batch_norm_modules_, then vmap over an ensemble of BatchNorm models (each normalizes
    the whole batch with its own statistics); debug_unwrap of a plain tensor is the tensor."""
    F, nn = lib.func, lib.nn
    models = []
    for k in range(2):
        m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).double()
        with lib.no_grad():
            m[0].weight.copy_(_t(lib, [[0.2, -0.5, 1.0], [0.7, 0.1, -0.3]]) * (k + 1))
            m[0].bias.copy_(_t(lib, [0.1, -0.2]))
        F.replace_all_batch_norm_modules_(m)
        models.append(m)
    bn = models[0][1]
    params, buffers = F.stack_module_state(models)
    out = F.vmap(lambda p, b, x: F.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, _xs(lib))
    return {"state": [bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.track_running_stats],
            "buffers": _out(buffers), "out": _out(out), "debug_unwrap": _out(F.debug_unwrap(_x(lib)))}
