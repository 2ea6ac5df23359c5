"""Complex linear algebra: the scenarios of linalg_complex_scenarios.py compared with what PyTorch 2.13.0 did in
them (tests/reference/engine/linalg_complex.json, written by tests/reference/make_linalg_complex_reference.py),
and complex128 gradchecks and gradgradchecks of each decomposition and solver on well-conditioned inputs, with
gauge-invariant losses where vectors are free up to a phase (|V|, |U|, U Vh), as PyTorch's OpInfo samples.
This file never imports torch.

LAPACK builds (PyTorch's MKL, NumPy's OpenBLAS) round differently: values and gradients to 1e-9 relative and
1e-10 absolute."""

import numpy as np
import pytest

import agrad
import scenario_fixtures
from agrad.autograd import gradcheck, gradgradcheck
from linalg_complex_scenarios import SCENARIOS, _complex, _factor, _invertible, _separated

EXPECTED = scenario_fixtures.expected("linalg_complex.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_linalg_complex_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name], seed=0)
    scenario_fixtures.compare(got, EXPECTED["scenarios"][name], [name], rtol=1e-9, atol=1e-10)


def _leaf(a):
    return agrad.tensor(a).requires_grad_(True)


def _hermitian(A):
    return A + A.mH


def _abs_vectors(*positions):
    def process(outs):
        return tuple(o.abs() if i in positions else o for i, o in enumerate(outs))
    return process


_eig = _abs_vectors(1)
_svd = _abs_vectors(0, 2)

CASES = {
    "eig of a real matrix": (lambda A: _eig(agrad.linalg.eig(A)), [_separated((4, 4), 0, dtype=float)]),
    "eig of a complex batch": (lambda A: _eig(agrad.linalg.eig(A)), [_separated((2, 3, 3), 1)]),
    "eigvals of a real matrix": (agrad.linalg.eigvals, [_separated((3, 3), 2, dtype=float)]),
    "eigvals of a complex matrix": (agrad.linalg.eigvals, [_separated((3, 3), 3)]),
    "eigh": (lambda A: _eig(agrad.linalg.eigh(_hermitian(A))), [_complex((2, 3, 3), 4)]),
    "eigvalsh UPLO=U": (lambda A: agrad.linalg.eigvalsh(_hermitian(A), "U"), [_complex((3, 3), 5)]),
    "svd tall": (lambda A: _svd(agrad.linalg.svd(A, full_matrices=False)), [_complex((4, 3), 6)]),
    "svd wide batch": (lambda A: _svd(agrad.linalg.svd(A, full_matrices=False)), [_complex((2, 3, 5), 7)]),
    "svd U Vh": (lambda A: (lambda U, S, Vh: U @ Vh)(*agrad.linalg.svd(A)), [_complex((3, 3), 8)]),
    "svdvals": (agrad.linalg.svdvals, [_complex((3, 4), 9)]),
    "torch.svd": (lambda A: _svd(agrad.svd(A)), [_complex((4, 3), 10)]),
    "qr tall": (agrad.linalg.qr, [_complex((4, 3), 11)]),
    "qr wide": (agrad.linalg.qr, [_complex((3, 5), 12)]),
    "cholesky": (lambda A: agrad.linalg.cholesky(A @ A.mH + agrad.eye(3)), [_complex((3, 3), 13)]),
    "cholesky upper": (lambda A: agrad.linalg.cholesky(A @ A.mH + agrad.eye(3), upper=True), [_complex((2, 3, 3), 14)]),
    "inv": (agrad.linalg.inv, [_invertible((2, 3, 3), 15)]),
    "det": (agrad.linalg.det, [_invertible((2, 3, 3), 16)]),
    "slogdet": (agrad.linalg.slogdet, [_invertible((3, 3), 17)]),
    "logdet": (agrad.logdet, [_invertible((3, 3), 18)]),
    "solve": (agrad.linalg.solve, [_invertible((2, 3, 3), 19), _complex((2, 3, 2), 20)]),
    "solve left=False": (lambda A, B: agrad.linalg.solve(A, B, left=False), [_invertible((3, 3), 21), _complex((2, 3), 22)]),
    "solve_triangular": (lambda A, B: agrad.linalg.solve_triangular(A, B, upper=False, left=False),
                         [_invertible((3, 3), 23), _complex((2, 3), 24)]),
    "lu_factor": (lambda A: agrad.linalg.lu_factor(A)[0], [_invertible((2, 3, 3), 25)]),
    "lu tall": (lambda A: agrad.linalg.lu(A)[1:], [_complex((5, 3), 26)]),
    "lu_solve adjoint": (lambda A, B: agrad.linalg.lu_solve(*agrad.linalg.lu_factor(A), B, adjoint=True),
                         [_invertible((3, 3), 27), _complex((3, 2), 28)]),
    "lu_solve left=False": (lambda A, B: agrad.linalg.lu_solve(*agrad.linalg.lu_factor(A), B, left=False),
                            [_invertible((3, 3), 29), _complex((2, 3), 30)]),
    "matrix_exp": (agrad.linalg.matrix_exp, [_complex((2, 3, 3), 31)]),
    "pinv": (agrad.linalg.pinv, [_complex((3, 4), 32)]),
    "pinv hermitian": (lambda A: agrad.linalg.pinv(_hermitian(A), hermitian=True), [_complex((3, 3), 33)]),
    "householder_product": (agrad.linalg.householder_product, [_complex((4, 3), 34), 0.5 * _complex((3,), 35)]),
    "vector_norm 1.5": (lambda A: agrad.linalg.vector_norm(A, 1.5, dim=1), [_complex((3, 4), 36)]),
    "vector_norm inf": (lambda A: agrad.linalg.vector_norm(A, float("inf")), [_complex((3, 4), 37)]),
    "matrix_norm nuc": (lambda A: agrad.linalg.matrix_norm(A, "nuc"), [_complex((3, 4), 38)]),
    "matrix_norm 1": (lambda A: agrad.linalg.matrix_norm(A, 1), [_complex((2, 3, 4), 39)]),
    "norm": (agrad.linalg.norm, [_complex((3, 4), 40)]),
    "cond": (agrad.linalg.cond, [_invertible((3, 3), 41)]),
    "triangular_solve transpose": (lambda b, A: agrad.triangular_solve(b, A.triu(), True, True),
                                   [_complex((3, 2), 42), _invertible((3, 3), 43)]),
    "cholesky_solve upper": (lambda b, U: agrad.cholesky_solve(b, U.triu(), True), [_complex((2, 3, 2), 44),
                                                                                     _factor((3, 3), 45)]),
    "cholesky_inverse": (lambda L: agrad.cholesky_inverse(L.tril()), [_factor((3, 3), 46)]),
    "lstsq": (lambda A, B: agrad.linalg.lstsq(A, B).solution, [_complex((4, 3), 47), _complex((4, 2), 48)]),
    "lstsq gelsd residuals": (lambda A, B: agrad.linalg.lstsq(A, B, driver="gelsd")[:2],
                              [_complex((5, 2), 49), _complex((5, 3), 50)]),
    "renorm": (lambda A: agrad.renorm(A, 3, 0, 1.0), [_complex((3, 4), 51)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_complex128(name):
    fn, arrays = CASES[name]
    inputs = tuple(_leaf(a) for a in arrays)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs, fast_mode=True)


def test_eig_gives_unit_norm_eigenvectors_of_the_matrix():
    A = agrad.tensor(_separated((2, 4, 4), 42))
    L, V = agrad.linalg.eig(A)
    np.testing.assert_allclose((A @ V).numpy(), (V * L.unsqueeze(-2)).numpy(), atol=1e-12)
    np.testing.assert_allclose(agrad.linalg.vector_norm(V, dim=-2).numpy(), 1.0, rtol=1e-12)
    assert L.dtype == V.dtype == agrad.complex128


def test_real_results_of_complex_input_are_real():
    A = agrad.tensor(_complex((3, 3), 43))
    H = A + A.mH
    assert agrad.linalg.eigvalsh(H).dtype == agrad.float64
    assert agrad.linalg.svdvals(A).dtype == agrad.float64
    assert agrad.linalg.slogdet(A).logabsdet.dtype == agrad.float64
    assert agrad.linalg.vector_norm(A.to(agrad.complex64)).dtype == agrad.float32
    assert agrad.linalg.matrix_norm(A, "nuc").dtype == agrad.float64


def test_meta_shapes_and_dtypes_match():
    A = agrad.tensor(_complex((2, 3, 3), 44), dtype=agrad.complex64)
    for fn in (agrad.linalg.eig, agrad.linalg.eigvals, agrad.linalg.eigh, agrad.linalg.svd, agrad.linalg.slogdet):
        real, meta = fn(A), fn(A.to("meta"))
        real, meta = (real, meta) if isinstance(real, tuple) else ((real,), (meta,))
        assert [(tuple(r.shape), r.dtype) for r in real] == [(tuple(m.shape), m.dtype) for m in meta]

