"""agrad.autograd.functional against torch 2.13.0: every scenario of functional_scenarios.py compared with
what PyTorch did (tests/reference/functional_fixtures.json, written by
tests/reference/make_functional_reference.py): values to 1e-12 relative, requires_grad, and error types
and messages exactly. Then checks of agrad alone: central finite differences, the relations between the
six functions, vectorize=True against row by row, forward-mode against reverse-mode.
This file never imports torch."""
import json
from pathlib import Path

import numpy as np
import pytest

import agrad
import scenario_fixtures
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from functional_scenarios import SCENARIOS

F = agrad.autograd.functional
EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "reference" / "functional_fixtures.json").read_text())


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_functional_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    scenario_fixtures.compare(got, EXPECTED["scenarios"][name], [name], rtol=1e-12)


# -- agrad alone: finite differences and the relations between the functions ---------------------------
def _f(x, y):
    return (agrad.sin(x[:2]).unsqueeze(1) * y ** 2, (x[:2] * agrad.exp(y[0])).sum() * x)


def _scalar(x, y):
    return (agrad.cos(x) * x ** 3).sum() * y[1, 0] + (agrad.tanh(y) * x[:2]).sum()


def _inputs():
    rng = np.random.default_rng(7)
    return agrad.tensor(rng.normal(size=3)), agrad.tensor(rng.normal(size=(2, 3))[:, :2].copy())


def _numeric_jacobian(fn, inputs, eps=1e-6):
    """d fn(inputs)[i] / d inputs[j] by central differences, as numpy arrays of shape out_i + in_j."""
    arrays = [t.numpy().copy() for t in inputs]

    def call(arrs):
        outs = fn(*(agrad.tensor(a) for a in arrs))
        return [o.numpy() for o in (outs if isinstance(outs, tuple) else (outs,))]
    base = call(arrays)
    jac = [[np.zeros(o.shape + a.shape) for a in arrays] for o in base]
    for j, a in enumerate(arrays):
        for idx in np.ndindex(a.shape):
            hi, lo = [b.copy() for b in arrays], [b.copy() for b in arrays]
            hi[j][idx] += eps
            lo[j][idx] -= eps
            for i, (up, down) in enumerate(zip(call(hi), call(lo))):
                jac[i][j][(...,) + idx] = (up - down) / (2 * eps)
    return jac


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_matches_finite_differences(vectorize):
    inputs = _inputs()
    jac = F.jacobian(_f, inputs, vectorize=vectorize)
    for got_row, want_row in zip(jac, _numeric_jacobian(_f, inputs)):
        for got, want in zip(got_row, want_row):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_is_the_jacobian_of_the_gradient_by_finite_differences(vectorize):
    inputs = _inputs()
    hes = F.hessian(_scalar, inputs, vectorize=vectorize)
    gradient = lambda x, y: agrad.autograd.grad(_scalar(x.requires_grad_(), y.requires_grad_()), (x, y))
    for got_row, want_row in zip(hes, _numeric_jacobian(gradient, inputs)):
        for got, want in zip(got_row, want_row):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)
    # symmetric: H[i][j] is H[j][i] transposed
    np.testing.assert_allclose(hes[0][1].numpy(), hes[1][0].numpy().transpose(2, 0, 1), rtol=1e-12)


def test_products_are_the_jacobian_and_hessian_applied_to_v():
    (x, y), rng = _inputs(), np.random.default_rng(3)
    jac = F.jacobian(_f, (x, y))
    u = (agrad.tensor(rng.normal(size=(2, 2))), agrad.tensor(rng.normal(size=3)))
    v = (agrad.tensor(rng.normal(size=3)), agrad.tensor(rng.normal(size=(2, 2))))
    _, vj = F.vjp(_f, (x, y), u)
    _, jv = F.jvp(_f, (x, y), v)
    for j in range(2):          # v^T J, summed over the outputs
        want = sum(np.tensordot(u[i].numpy(), jac[i][j].numpy(), axes=u[i].ndim) for i in range(2))
        np.testing.assert_allclose(vj[j].numpy(), want, rtol=1e-12, atol=1e-14)
    for i in range(2):          # J v, summed over the inputs
        want = sum(np.tensordot(jac[i][j].numpy(), v[j].numpy(), axes=v[j].ndim) for j in range(2))
        np.testing.assert_allclose(jv[i].numpy(), want, rtol=1e-12, atol=1e-14)
    hes = F.hessian(_scalar, (x, y))
    _, vh = F.vhp(_scalar, (x, y), v)
    _, hv = F.hvp(_scalar, (x, y), v)
    for i in range(2):
        want = sum(np.tensordot(hes[i][j].numpy(), v[j].numpy(), axes=v[j].ndim) for j in range(2))
        np.testing.assert_allclose(hv[i].numpy(), want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(vh[i].numpy(), hv[i].numpy(), rtol=1e-12, atol=1e-14)


def test_vectorize_gives_what_row_by_row_gives_with_create_graph():
    x, y = (t.requires_grad_() for t in _inputs())
    rows = F.jacobian(_f, (x, y), create_graph=True)
    vec = F.jacobian(_f, (x, y), create_graph=True, vectorize=True)
    for r_row, v_row in zip(rows, vec):
        for r, v in zip(r_row, v_row):
            np.testing.assert_allclose(r.detach().numpy(), v.detach().numpy(), rtol=1e-15)
            # NOTE: the entries share the function's graph: each grad keeps it for the next
            again = [agrad.autograd.grad(t.sum(), (x, y), retain_graph=True, materialize_grads=True) for t in (r, v)]
            for a, b in zip(*again):
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-15)


def test_the_callers_tensors_are_left_alone():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    F.vjp(lambda a: a * a, x, agrad.ones(2, dtype=agrad.float64))
    F.hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
    assert x.grad is None and x.requires_grad and x.grad_fn is None


@pytest.mark.parametrize("create_graph_inputs", [False, True])
def test_forward_mode_gives_what_reverse_mode_gives(create_graph_inputs):
    # agrad has no dual tensors: forward-mode is the double-backward trick batched over the input basis
    x, y = (t.requires_grad_(create_graph_inputs) for t in _inputs())
    fwd = F.jacobian(_f, (x, y), vectorize=True, strategy="forward-mode")
    rev = F.jacobian(_f, (x, y))
    for f_row, r_row in zip(fwd, rev):
        for f, r in zip(f_row, r_row):
            np.testing.assert_allclose(f.detach().numpy(), r.numpy(), rtol=1e-13, atol=1e-15)
    hes_f = F.hessian(_scalar, (x, y), vectorize=True, outer_jacobian_strategy="forward-mode")
    hes_r = F.hessian(_scalar, (x, y))
    for f_row, r_row in zip(hes_f, hes_r):
        for f, r in zip(f_row, r_row):
            np.testing.assert_allclose(f.detach().numpy(), r.numpy(), rtol=1e-13, atol=1e-15)
    assert x.grad is None and y.grad is None and x.requires_grad is create_graph_inputs


def test_forward_mode_without_vectorize_is_pytorchs_not_implemented():
    x = agrad.tensor([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda a: a * a, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.hessian(lambda a: (a ** 3).sum(), x, outer_jacobian_strategy="forward-mode")
