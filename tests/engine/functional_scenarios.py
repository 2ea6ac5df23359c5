"""torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) as scenarios that run on PyTorch and
on agrad alike.

Each scenario takes the library module `lib` (torch, or agrad), writes its functions as lambdas over it,
works in float64 and returns plain JSON values: each result tensor as its shape, values and
requires_grad; each error as [built-in exception type, first line of the message], the library's name
reading LIB and the str() of a shape <shape [...]> (engine_contract_scenarios' `_error`).
`tests/reference/make_functional_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/functional_fixtures.json`; `test_autograd_functional.py` runs them on agrad and
compares (never importing torch).
"""
from __future__ import annotations

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _F(lib):
    return lib.autograd.functional


def _t(lib, values, requires_grad=False):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def _out(x):
    """A result as JSON: tensors as {shape, values, requires_grad}, tuples as lists."""
    if isinstance(x, (tuple, list)):
        return [_out(e) for e in x]
    if x is None:
        return None
    return {"shape": list(x.shape), "values": x.detach().tolist(), "requires_grad": x.requires_grad}


def _x(lib, requires_grad=False):
    return _t(lib, [0.5, -1.25, 2.0], requires_grad)


def _y(lib, requires_grad=False):
    return _t(lib, [[0.3, -0.7], [1.1, 0.4]], requires_grad)


def _f1(lib):
    """(3,) -> (3,), nonlinear."""
    return lambda x: lib.sin(x) * x ** 2


def _f2(lib):
    """((3,), (2, 2)) -> ((2, 2), ()), nonlinear in both."""
    return lambda x, y: (x[:2].unsqueeze(1) * lib.tanh(y), (x ** 3).sum() + (y * lib.exp(y)).sum())


def _scalar(lib):
    """((3,), (2, 2)) -> (), with mixed second derivatives and nonzero third ones."""
    return lambda x, y: (x ** 3 * y[0, 1]).sum() + (lib.sin(y) * y).sum() + (x[0] * y[1, 0]) ** 2


def _both(f, inputs, **kw):
    """f's result with vectorize=False and vectorize=True (jacobian or hessian)."""
    return {"rows": _out(f(inputs, **kw)), "vectorized": _out(f(inputs, vectorize=True, **kw))}


# -- vjp -----------------------------------------------------------------------------------------------
@scenario
def vjp_tensor_in_tensor_out(lib):
    out, g = _F(lib).vjp(_f1(lib), _x(lib), _t(lib, [1.0, -2.0, 0.5]))
    return {"out": _out(out), "vjp": _out(g)}


@scenario
def vjp_tuple_in_tuple_out(lib):
    v = (_t(lib, [[1.0, 0.5], [-1.0, 2.0]]), _t(lib, 1.5))
    out, g = _F(lib).vjp(_f2(lib), (_x(lib), _y(lib)), v)
    return {"out": _out(out), "vjp": _out(g)}


@scenario
def vjp_scalar_output_v_none(lib):
    out, g = _F(lib).vjp(lambda x: (x ** 2).sum(), _x(lib))
    one_elt, g1 = _F(lib).vjp(lambda x: x.sum().reshape(1, 1) * 3, (_x(lib),))
    return {"out": _out(out), "vjp": _out(g), "one_element": _out(one_elt), "vjp_one_element": _out(g1)}


@scenario
def vjp_identity_and_unused_input(lib):
    _, ident = _F(lib).vjp(lambda x: x, _x(lib), _t(lib, [1.0, 2.0, 3.0]))
    _, g = _F(lib).vjp(lambda x, y: x * 2, (_x(lib), _y(lib)), _t(lib, [1.0, 1.0, 1.0]))
    const, gc = _F(lib).vjp(lambda x: lib.ones(3, dtype=lib.float64), _x(lib), _t(lib, [1.0, 1.0, 1.0]))
    return {"identity": _out(ident), "unused": _out(g), "constant_out": _out(const), "constant_vjp": _out(gc)}


@scenario
def vjp_create_graph(lib):
    x, v = _x(lib, True), _t(lib, [1.0, -2.0, 0.5], True)
    out, g = _F(lib).vjp(_f1(lib), x, v, create_graph=True)
    again = lib.autograd.grad((g * g).sum() + out.sum(), (x, v))
    # inputs that do not require grad: the result still has a graph, to the function's own leaves
    _, g_detached = _F(lib).vjp(_f1(lib), _x(lib), _t(lib, [1.0, 1.0, 1.0]), create_graph=True)
    return {"out": _out(out), "vjp": _out(g), "again": _out(again), "leaf_inputs": _out(g_detached)}


@scenario
def vjp_grad_mode(lib):
    with lib.no_grad():
        out, g = _F(lib).vjp(_f1(lib), _x(lib, True), _t(lib, [1.0, 1.0, 1.0]))
        out_cg, g_cg = _F(lib).vjp(_f1(lib), _x(lib, True), _t(lib, [1.0, 1.0, 1.0]), create_graph=True)
        still_off = lib.is_grad_enabled()
    return {"plain": _out((out, g)), "create_graph": _out((out_cg, g_cg)), "grad_mode_after": still_off}


@scenario
def vjp_strict(lib):
    F, x, y, ones3 = _F(lib), _x(lib), _y(lib), _t(lib, [1.0, 1.0, 1.0])
    return {
        "unused_input": _error(lambda: F.vjp(lambda a, b: a * 2, (x, y), ones3, strict=True)),
        "constant_output": _error(lambda: F.vjp(lambda a: lib.ones(3, dtype=lib.float64), x, ones3, strict=True)),
        "linear_create_graph": _error(lambda: F.vjp(lambda a: a * 3, x, ones3, create_graph=True, strict=True)),
        "nonlinear_passes": _out(F.vjp(_f1(lib), x, ones3, strict=True)),
        "nonlinear_create_graph_passes": _out(F.vjp(lambda a: a * a, x, ones3, create_graph=True, strict=True)),
    }


@scenario
def vjp_bad_arguments(lib):
    F, x, y = _F(lib), _x(lib), _y(lib)
    v2 = _t(lib, [1.0, 1.0])
    v_pair = (_t(lib, [[1.0, 1.0], [1.0, 1.0]]), _t(lib, 1.0))
    shapes = [x.shape, v2.shape, y.shape, lib.zeros(()).shape]
    return {
        "v_none_not_scalar": _error(lambda: F.vjp(_f1(lib), x)),
        "v_wrong_size": _error(lambda: F.vjp(_f1(lib), x, v2), shapes),
        "v_tuple_for_one_output": _error(lambda: F.vjp(_f1(lib), x, (v2, v2))),
        "v_tuple_wrong_length": _error(lambda: F.vjp(_f2(lib), (x, y), v_pair[:1])),
        "v_entry_wrong_size": _error(lambda: F.vjp(_f2(lib), (x, y), (v_pair[0], v2)), shapes),
        "v_list": _error(lambda: F.vjp(_f1(lib), x, [1.0, 1.0, 1.0])),
        "input_not_tensor": _error(lambda: F.vjp(_f1(lib), 3.0, v2)),
        "input_tuple_entry_not_tensor": _error(lambda: F.vjp(lambda a, b: a * b, (x, 2), v2)),
        "output_not_tensor": _error(lambda: F.vjp(lambda a: (a, 1.0), x, v2)),
    }


# -- jvp -----------------------------------------------------------------------------------------------
@scenario
def jvp_tensor_in_tensor_out(lib):
    out, g = _F(lib).jvp(_f1(lib), _x(lib), _t(lib, [1.0, -2.0, 0.5]))
    return {"out": _out(out), "jvp": _out(g)}


@scenario
def jvp_tuple_in_tuple_out(lib):
    v = (_t(lib, [0.5, 1.0, -1.0]), _t(lib, [[1.0, 0.5], [-1.0, 2.0]]))
    out, g = _F(lib).jvp(_f2(lib), (_x(lib), _y(lib)), v)
    return {"out": _out(out), "jvp": _out(g)}


@scenario
def jvp_scalar_input_v_none(lib):
    out, g = _F(lib).jvp(lambda s: (lib.exp(s) * s, s ** 3), _t(lib, 0.75))
    return {"out": _out(out), "jvp": _out(g)}


@scenario
def jvp_unused_input_and_captured_output(lib):
    w = _t(lib, [2.0, 3.0], True)
    v = (_t(lib, [1.0, 1.0, 1.0]), _t(lib, [[1.0, 1.0], [1.0, 1.0]]))
    out, g = _F(lib).jvp(lambda a, b: (a ** 2, w * 2), (_x(lib), _y(lib)), v)
    _, ident = _F(lib).jvp(lambda a: a, _x(lib), _t(lib, [1.0, 2.0, 3.0]))
    return {"out": _out(out), "jvp": _out(g), "identity": _out(ident)}


@scenario
def jvp_create_graph(lib):
    x, v = _x(lib, True), _t(lib, [1.0, -2.0, 0.5], True)
    out, g = _F(lib).jvp(_f1(lib), x, v, create_graph=True)
    again = lib.autograd.grad((g * g).sum() + out.sum(), (x, v))
    return {"out": _out(out), "jvp": _out(g), "again": _out(again)}


@scenario
def jvp_strict(lib):
    F, x, y, ones3 = _F(lib), _x(lib), _y(lib), _t(lib, [1.0, 1.0, 1.0])
    w = _t(lib, [2.0, 3.0], True)
    ones_xy = (ones3, _t(lib, [[1.0, 1.0], [1.0, 1.0]]))
    return {
        "unused_input": _error(lambda: F.jvp(lambda a, b: a * 2, (x, y), ones_xy, strict=True)),
        "constant_output": _error(lambda: F.jvp(lambda a: lib.ones(3, dtype=lib.float64), x, ones3, strict=True)),
        "captured_output": _error(lambda: F.jvp(lambda a: (a ** 2, w * 2), x, ones3, strict=True)),
        "linear_create_graph": _error(lambda: F.jvp(lambda a: a * 3, x, ones3, create_graph=True, strict=True)),
        "nonlinear_passes": _out(F.jvp(_f1(lib), x, ones3, strict=True)),
    }


@scenario
def jvp_bad_arguments(lib):
    F, x, y = _F(lib), _x(lib), _y(lib)
    v2 = _t(lib, [1.0, 1.0])
    shapes = [x.shape, v2.shape, y.shape]
    return {
        "v_none_not_one_element": _error(lambda: F.jvp(_f1(lib), x)),
        "v_none_two_inputs": _error(lambda: F.jvp(lambda a, b: a * b, (_t(lib, 1.0), _t(lib, 2.0)))),
        "v_wrong_size": _error(lambda: F.jvp(_f1(lib), x, v2), shapes),
        "v_tuple_wrong_length": _error(lambda: F.jvp(_f2(lib), (x, y), (x,))),
        "v_entry_wrong_size": _error(lambda: F.jvp(_f2(lib), (x, y), (x, v2)), shapes),
        "v_not_tensor": _error(lambda: F.jvp(_f1(lib), x, 1.0)),
        "output_not_tensor": _error(lambda: F.jvp(lambda a: [a], x, x)),
    }


# -- jacobian ------------------------------------------------------------------------------------------
@scenario
def jacobian_shapes(lib):
    J = _F(lib).jacobian
    x, y, s = _x(lib), _y(lib), _t(lib, 0.75)
    return {
        "tensor_tensor": _both(lambda i, **kw: J(_f1(lib), i, **kw), x),
        "tuple_tuple": _both(lambda i, **kw: J(_f2(lib), i, **kw), (x, y)),
        "tensor_in_tuple_out": _both(lambda i, **kw: J(lambda a: (a.sum(), a.reshape(3, 1) * a), i, **kw), x),
        "tuple_in_tensor_out": _both(lambda i, **kw: J(lambda a, b: a[1:] * b.sum(1), i, **kw), (x, y)),
        "scalar_scalar": _both(lambda i, **kw: J(lambda a: lib.exp(a) * a, i, **kw), s),
        "one_tuple": _both(lambda i, **kw: J(lambda a: (a * a,), i, **kw), (x,)),
        "identity": _both(lambda i, **kw: J(lambda a: a, i, **kw), y),
    }


@scenario
def jacobian_unused_and_constant(lib):
    J = _F(lib).jacobian
    x, y = _x(lib), _y(lib)
    w = _t(lib, [2.0, 3.0], True)
    return {
        "unused_input": _both(lambda i, **kw: J(lambda a, b: (a * 2, a.sum()), i, **kw), (x, y)),
        "constant_output": _both(lambda i, **kw: J(lambda a: lib.ones(2, dtype=lib.float64), i, **kw), x),
        "captured_output": _both(lambda i, **kw: J(lambda a: (a ** 2, w * 2), i, **kw), x),
    }


@scenario
def jacobian_create_graph(lib):
    J = _F(lib).jacobian
    x, y = _x(lib, True), _y(lib, True)
    res = {}
    for name, vec in (("rows", False), ("vectorized", True)):
        jac = J(_f2(lib), (x, y), create_graph=True, vectorize=vec)
        total = sum(((j * j).sum() for row in jac for j in row), _t(lib, 0.0))
        res[name] = {"jacobian": _out(jac), "again": _out(lib.autograd.grad(total, (x, y)))}
    res["leaf_inputs"] = _out(J(_f1(lib), _x(lib), create_graph=True))
    return res


@scenario
def jacobian_strict(lib):
    J, x, y = _F(lib).jacobian, _x(lib), _y(lib)
    w = _t(lib, [2.0, 3.0], True)
    return {
        "unused_input": _error(lambda: J(lambda a, b: (a * 2, b.sum()), (x, y), strict=True)),
        "constant_output": _error(lambda: J(lambda a: lib.ones(2, dtype=lib.float64), x, strict=True)),
        "captured_output": _error(lambda: J(lambda a: (a ** 2, w * 2), x, strict=True)),
        # NOTE: PyTorch's message names the output (1), not the input (0), whose Jacobian is constant
        "linear_create_graph": _error(lambda: J(lambda a, b: (a * b[0, 0], b * 3 + a.sum()), (x, y),
                                                create_graph=True, strict=True)),
        "vectorize": _error(lambda: J(_f1(lib), x, strict=True, vectorize=True)),
        "nonlinear_passes": _out(J(_f2(lib), (x, y), strict=True)),
    }


@scenario
def jacobian_strategy_errors(lib):
    J, x = _F(lib).jacobian, _x(lib)
    return {
        "unknown_strategy": _error(lambda: J(_f1(lib), x, strategy="sideways")),
        "forward_create_graph": _error(lambda: J(_f1(lib), x, create_graph=True, strategy="forward-mode")),
        "forward_strict": _error(lambda: J(_f1(lib), x, strict=True, strategy="forward-mode")),
        "forward_not_vectorized": _error(lambda: J(_f1(lib), x, strategy="forward-mode")),
        "forward_input_not_tensor": _error(lambda: J(_f1(lib), (x, "a"), strategy="forward-mode")),
        "input_not_tensor": _error(lambda: J(_f1(lib), [x])),
        "output_not_tensor": _error(lambda: J(lambda a: 2.0, x)),
    }


def _forward_jacobian(lib, f, inputs):
    return _F(lib).jacobian(f, inputs, vectorize=True, strategy="forward-mode")


def _forward_jacobian_no_grad(lib, f, inputs):
    with lib.no_grad():
        return _forward_jacobian(lib, f, inputs)


@scenario
def jacobian_forward_mode(lib):
    """PyTorch runs forward AD under vmap here: each entry has the output's dtype, zeros where no tangent
    reaches an output, and a graph where the inputs require grad (grad mode on)."""
    x, y = _x(lib), _y(lib)
    mixed = _forward_jacobian(lib, lambda a: ((a * 2).float(), (a ** 2).sum(), (a * 3).long()), x)
    return {
        "tensor": _out(_forward_jacobian(lib, _f1(lib), x)),
        "tuple": _out(_forward_jacobian(lib, _f2(lib), (x, y))),
        "unrelated_outputs": _out(_forward_jacobian(
            lib, lambda a, b: (a, b, a.detach() * 2, lib.ones(2, dtype=lib.float64), b.sum()), (x, y))),
        "mixed_dtypes": _out(mixed),
        "mixed_dtypes_names": [str(t.dtype).split(".")[-1] for t in mixed],
        "input_requires_grad": _out(_forward_jacobian(lib, _f2(lib), (_x(lib, True), y))),
        "input_requires_grad_no_grad": _out(_forward_jacobian_no_grad(lib, _f2(lib), (_x(lib, True), y))),
        "output_not_tensor": _error(lambda: _forward_jacobian(lib, lambda a: (a, 3), x)),
    }


@scenario
def integer_detour_strict(lib):
    """a.long() leaves the graph (derivatives.yaml: _to_copy's output is differentiable only for a
    floating dtype), so a function that goes through it is independent of its input."""
    F, x, v = _F(lib), _x(lib), _t(lib, [1.0, 2.0, 3.0])
    detour = lambda a: a.long().float().requires_grad_().clone()
    return {
        "long_requires_grad": _x(lib, True).long().requires_grad,
        "vjp": _error(lambda: F.vjp(detour, x, v.float(), strict=True)),
        "jvp": _error(lambda: F.jvp(detour, x, v, strict=True)),
        "jacobian": _error(lambda: F.jacobian(detour, x, strict=True)),
        "vhp": _error(lambda: F.vhp(lambda a: detour(a).sum(), x, v, strict=True)),
        "hvp": _error(lambda: F.hvp(lambda a: detour(a).sum(), x, v, strict=True)),
        "not_strict": _out(F.jacobian(detour, x)),
    }


# -- hessian -------------------------------------------------------------------------------------------
@scenario
def hessian_values(lib):
    H = _F(lib).hessian
    x, y, s = _x(lib), _y(lib), _t(lib, 0.75)
    return {
        "tensor": _both(lambda i, **kw: H(lambda a: (lib.sin(a) * a ** 3).sum(), i, **kw), x),
        "tuple": _both(lambda i, **kw: H(_scalar(lib), i, **kw), (x, y)),
        "one_tuple": _both(lambda i, **kw: H(lambda a: (a ** 4).sum(), i, **kw), (y,)),
        "scalar_input": _both(lambda i, **kw: H(lambda a: lib.exp(a) * a ** 2, i, **kw), s),
        "one_element_output": _both(lambda i, **kw: H(lambda a: (a ** 3).sum().reshape(1, 1), i, **kw), x),
        "unused_input": _both(lambda i, **kw: H(lambda a, b: (a ** 3).sum(), i, **kw), (x, y)),
        "linear": _both(lambda i, **kw: H(lambda a: (a * 2).sum(), i, **kw), x),
    }


@scenario
def hessian_create_graph(lib):
    H = _F(lib).hessian
    x, y = _x(lib, True), _y(lib, True)
    res = {}
    for name, vec in (("rows", False), ("vectorized", True)):
        hes = H(_scalar(lib), (x, y), create_graph=True, vectorize=vec)
        total = sum((h.sum() for row in hes for h in row), _t(lib, 0.0))
        res[name] = {"hessian": _out(hes), "again": _out(lib.autograd.grad(total, (x, y)))}
    return res


@scenario
def hessian_errors(lib):
    H, x, y = _F(lib).hessian, _x(lib), _y(lib)
    cube = lambda a: (a ** 3).sum()
    return {
        "tuple_output": _error(lambda: H(lambda a: ((a ** 2).sum(), a.sum()), x)),
        "not_one_element": _error(lambda: H(lambda a: a ** 2, x)),
        "strict_linear": _error(lambda: H(lambda a: (a * 2).sum(), x, strict=True)),
        "strict_unused_input": _error(lambda: H(lambda a, b: (a ** 3).sum(), (x, y), strict=True)),
        "strict_constant": _error(lambda: H(lambda a: lib.ones((), dtype=lib.float64), x, strict=True)),
        "strict_quadratic_create_graph": _error(lambda: H(lambda a: (a * a).sum(), x, create_graph=True,
                                                          strict=True)),
        "strict_vectorize": _error(lambda: H(cube, x, strict=True, vectorize=True)),
        "strict_cubic_passes": _out(H(cube, x, strict=True)),
        "unknown_strategy": _error(lambda: H(cube, x, outer_jacobian_strategy="sideways")),
        "forward_not_vectorized": _error(lambda: H(cube, x, outer_jacobian_strategy="forward-mode")),
        "forward_create_graph": _error(lambda: H(cube, x, create_graph=True, outer_jacobian_strategy="forward-mode")),
        "input_not_tensor": _error(lambda: H(cube, (x, None))),
    }


@scenario
def hessian_forward_mode(lib):
    """Forward over reverse: PyTorch's jac_func makes the dual inputs require grad, so the Hessian keeps a
    graph even without create_graph; the caller's tensors are left as they were."""
    x, y = _x(lib), _y(lib)
    H = lambda f, i: _F(lib).hessian(f, i, vectorize=True, outer_jacobian_strategy="forward-mode")
    return {
        "tensor": _out(H(lambda a: (lib.sin(a) * a ** 3).sum(), x)),
        "tuple": _out(H(_scalar(lib), (x, y))),
        "unused_input": _out(H(lambda a, b: (a ** 3).sum(), (x, y))),
        "constant": _out(H(lambda a, b: lib.ones((), dtype=lib.float64), (x, y))),
        "inputs_after": [x.requires_grad, y.requires_grad, x.grad_fn is None],
    }


# -- vhp and hvp ---------------------------------------------------------------------------------------
def _products(lib, name):
    prod = getattr(_F(lib), name)
    x, y = _x(lib), _y(lib)
    vx, vy = _t(lib, [1.0, -0.5, 2.0]), _t(lib, [[0.25, 1.0], [-1.0, 0.5]])
    out, r = prod(lambda a: (lib.sin(a) * a ** 3).sum(), x, vx)
    out2, r2 = prod(_scalar(lib), (x, y), (vx, vy))
    out3, r3 = prod(lambda s: lib.exp(s) * s ** 3, _t(lib, 0.75))
    _, unused = prod(lambda a, b: (a ** 3).sum(), (x, y), (vx, vy))
    _, linear = prod(lambda a: (a * 2).sum(), x, vx)
    return {"tensor": _out((out, r)), "tuple": _out((out2, r2)), "scalar_v_none": _out((out3, r3)),
            "unused_input": _out(unused), "linear": _out(linear)}


def _products_create_graph(lib, name):
    prod = getattr(_F(lib), name)
    x, y = _x(lib, True), _y(lib, True)
    vx, vy = _t(lib, [1.0, -0.5, 2.0], True), _t(lib, [[0.25, 1.0], [-1.0, 0.5]], True)
    out, (rx, ry) = prod(_scalar(lib), (x, y), (vx, vy), create_graph=True)
    again = lib.autograd.grad((rx * rx).sum() + (ry * ry).sum() + out, (x, y, vx, vy))
    _, leaf = prod(_scalar(lib), (_x(lib), _y(lib)), (_t(lib, [1.0, 1.0, 1.0]), _y(lib)), create_graph=True)
    return {"out": _out(out), "product": _out((rx, ry)), "again": _out(again), "leaf_inputs": _out(leaf)}


def _products_errors(lib, name):
    prod = getattr(_F(lib), name)
    x, y = _x(lib), _y(lib)
    vx, v2 = _t(lib, [1.0, 1.0, 1.0]), _t(lib, [1.0, 1.0])
    w = _t(lib, [2.0, 3.0], True)
    cube = lambda a: (a ** 3).sum()
    shapes = [x.shape, v2.shape, y.shape]
    return {
        "tuple_output": _error(lambda: prod(lambda a: ((a ** 2).sum(), a.sum()), x, vx)),
        "not_one_element": _error(lambda: prod(lambda a: a ** 2, x, vx)),
        "v_none": _error(lambda: prod(cube, x)),
        "v_wrong_size": _error(lambda: prod(cube, x, v2), shapes),
        "v_tuple_for_one_input": _error(lambda: prod(cube, x, (vx, vx))),
        "v_tuple_wrong_length": _error(lambda: prod(_scalar(lib), (x, y), (vx,))),
        "v_entry_wrong_size": _error(lambda: prod(_scalar(lib), (x, y), (vx, v2)), shapes),
        "strict_linear": _error(lambda: prod(lambda a: (a * 2).sum(), x, vx, strict=True)),
        "strict_unused_input": _error(lambda: prod(lambda a, b: (a ** 3).sum(), (x, y), (vx, y), strict=True)),
        "strict_captured_gradient": _error(lambda: prod(lambda a, b: (a ** 3).sum() + (b[0] * w).sum(), (x, y),
                                                        (vx, y), strict=True)),
        "strict_quadratic_create_graph": _error(lambda: prod(lambda a: (a * a).sum(), x, vx, create_graph=True,
                                                             strict=True)),
        "strict_constant": _error(lambda: prod(lambda a: lib.ones((), dtype=lib.float64), x, vx, strict=True)),
        "strict_cubic_passes": _out(prod(cube, x, vx, strict=True)),
        "output_not_tensor": _error(lambda: prod(lambda a: None, x, vx)),
    }


@scenario
def vhp_values(lib):
    return _products(lib, "vhp")


@scenario
def hvp_values(lib):
    return _products(lib, "hvp")


@scenario
def vhp_create_graph(lib):
    return _products_create_graph(lib, "vhp")


@scenario
def hvp_create_graph(lib):
    return _products_create_graph(lib, "hvp")


@scenario
def vhp_errors(lib):
    return _products_errors(lib, "vhp")


@scenario
def hvp_errors(lib):
    return _products_errors(lib, "hvp")
