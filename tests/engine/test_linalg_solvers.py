"""torch.lobpcg, torch.svd_lowrank and torch.pca_lowrank: the scenarios of linalg_solvers_scenarios.py compared
with what PyTorch 2.13.0 did in them (tests/reference/engine/linalg_solvers.json, written by
tests/reference/make_linalg_solvers_reference.py), and float64 gradchecks. This file never imports torch.

The solvers are iterative: converged eigenvectors agree with PyTorch's to about the residual tolerance
(sqrt of float64's epsilon) over the eigenvalue gap, so values are compared to 1e-6 relative and 1e-7
absolute; float32's run to 1e-3."""

import numpy as np
import pytest

import agrad
import scenario_fixtures
from linalg_solvers_scenarios import SCENARIOS, _signed, _spd
from agrad.autograd import gradcheck, gradgradcheck

EXPECTED = scenario_fixtures.expected("linalg_solvers.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_linalg_solvers_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name], seed=0)
    want = EXPECTED["scenarios"][name]
    if name == "lobpcg_generalized_batched_preconditioned":
        scenario_fixtures.compare(got.pop("float32"), want["float32"], [name, "float32"], rtol=1e-3, atol=1e-4)
        want = {k: v for k, v in want.items() if k != "float32"}
    scenario_fixtures.compare(got, want, [name], rtol=1e-6, atol=1e-7)


def _lobpcg_fn(k, largest):
    def fn(A):
        X = agrad.eye(A.size(-2), k, dtype=A.dtype).expand(*A.shape[:-1], k)
        E, U = agrad.lobpcg(A=A, k=k, X=X, largest=largest)
        return E, _signed(U)
    return fn


# NOTE: m = 3k, as in PyTorch's test_lobpcg: the search space then spans the whole space and the pairs are
# exact after a few steps; with m > 3k they converge to the residual tolerance only, and finite differences
# at eps=1e-6 see that noise (PyTorch fails this gradcheck at (2, 7, 7), k=2 too)
@pytest.mark.parametrize("k,shape,largest", [(1, (3, 3), True), (2, (6, 6), False), (2, (2, 6, 6), True)])
def test_lobpcg_gradcheck(k, shape, largest):
    A = agrad.tensor(_spd(shape[-1], k, batch=shape[:-2], spread=0.5)).requires_grad_(True)
    assert gradcheck(_lobpcg_fn(k, largest), (A,), check_batched_grad=False)
    E_grad = agrad.tensor(np.random.RandomState(0).uniform(size=shape[:-2] + (k,)) / 100)
    U_grad = agrad.tensor(np.random.RandomState(1).uniform(size=shape[:-1] + (k,)) / 100)
    # (the second derivatives along random directions, fast_mode: whole Hessians of the batched case took 8 s)
    assert gradgradcheck(_lobpcg_fn(k, largest), (A,), (E_grad, U_grad), atol=1e-4, check_batched_grad=False,
                         fast_mode=True)


def test_lobpcg_without_grad_records_nothing_and_symmetrizes_with_grad():
    A = agrad.tensor(_spd(9, 0))
    E, U = agrad.lobpcg(A, k=2, X=agrad.eye(9, 2, dtype=agrad.float64))
    assert E.grad_fn is None and U.grad_fn is None
    # a non-symmetric A that requires grad is solved as (A + A^T) / 2, whose gradient is symmetric
    B = (A + agrad.tensor(np.triu(np.ones((9, 9)), 1))).requires_grad_(True)
    E, U = agrad.lobpcg(B, k=2, X=agrad.eye(9, 2, dtype=agrad.float64))
    expected = agrad.linalg.eigvalsh((B + B.mT).detach() / 2)[-2:].flip(0)
    np.testing.assert_allclose(E.detach().numpy(), expected.numpy(), rtol=1e-10)
    (E.sum() + U.sum()).backward()
    np.testing.assert_allclose(B.grad.numpy(), B.grad.mT.numpy(), atol=1e-12)


def _svd_lowrank_fn(q, niter):
    def fn(A):
        agrad.manual_seed(0)            # the same sketch on every call: a smooth function of A
        U, S, V = agrad.svd_lowrank(A, q=q, niter=niter)
        return S, U @ agrad.diag_embed(S) @ V.mT
    return fn


@pytest.mark.parametrize("shape,q,niter", [((7, 5), 3, 1), ((4, 8), 2, 2), ((2, 6, 4), 2, 0)])
def test_svd_lowrank_gradcheck(shape, q, niter):
    A = agrad.tensor(np.random.RandomState(sum(shape)).standard_normal(shape)).requires_grad_(True)
    assert gradcheck(_svd_lowrank_fn(q, niter), (A,))
    assert gradgradcheck(_svd_lowrank_fn(q, niter), (A,), fast_mode=True)


def test_pca_lowrank_gradcheck():
    A = agrad.tensor(np.random.RandomState(3).standard_normal((8, 5))).requires_grad_(True)

    def fn(A):
        agrad.manual_seed(0)
        return agrad.pca_lowrank(A, q=3, niter=1)[1]
    assert gradcheck(fn, (A,))
