"""agrad.linalg, torch.linalg's namespace: its names are the ops, results are named as PyTorch's,
and the semantics the generated op tests do not reach (errors, info, dtypes, decompositions'
identities, tolerances, argument forms). Values and gradients against PyTorch's are in the
fixtures (test_reference), gradients against finite differences in test_ops_generated."""
import agrad
import agrad.linalg as LA
import numpy as np
import pytest
from agrad.testing import gradcheck, gradgradcheck

F64 = agrad.float64


def _t(values, requires_grad=False):
    return agrad.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def _rand(*shape, seed=0, requires_grad=False):
    return _t(np.random.default_rng(seed).uniform(-1, 1, size=shape), requires_grad)


def _spd(n, seed=0):
    m = np.random.default_rng(seed).uniform(-1, 1, size=(n, n))
    return _t(m @ m.T + n * np.eye(n))


def test_namespace_names_are_the_ops():
    assert agrad.linalg is LA and LA.__name__ == "agrad.linalg"
    for name in LA.__all__:
        assert callable(getattr(LA, name)), name
    assert LA.solve is agrad.linalg_solve
    assert LA.eigh is agrad.linalg_eigh
    assert LA.inv is agrad.linalg_inv and LA.det is agrad.linalg_det
    assert LA.matrix_power is agrad.matrix_power and LA.cross is agrad.linalg_cross
    # the op library's module of products is still importable under its own name
    from agrad.ops import linalg as products
    assert products.matmul is agrad.matmul


def test_named_results():
    a = _spd(3)
    eig = LA.eigh(a)
    assert type(eig).__name__ == "linalg_eigh" and eig.eigenvalues is eig[0] and eig.eigenvectors is eig[1]
    assert LA.svd(a).Vh.shape == (3, 3)
    assert LA.qr(a).R.shape == (3, 3)
    assert LA.slogdet(a).logabsdet.ndim == 0
    assert LA.cholesky_ex(a).info.item() == 0
    assert LA.inv_ex(a).info.item() == 0
    assert LA.solve_ex(a, a).result.shape == (3, 3)
    assert LA.lstsq(a, a).solution.shape == (3, 3)


def test_decompositions_reconstruct():
    a = _rand(2, 4, 3, seed=1)
    q, r = LA.qr(a)
    np.testing.assert_allclose((q @ r).numpy(), a.numpy(), atol=1e-14)
    np.testing.assert_allclose((q.mT @ q).numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-14)
    assert np.allclose(np.tril(r.numpy(), -1), 0)
    u, s, vh = LA.svd(a, full_matrices=False)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), a.numpy(), atol=1e-14)
    assert LA.svd(a).U.shape == (2, 4, 4) and LA.svd(a).Vh.shape == (2, 3, 3)
    np.testing.assert_allclose(LA.svdvals(a).numpy(), s.numpy(), rtol=1e-14)
    spd = _spd(4, seed=2)
    w, v = LA.eigh(spd)
    assert np.all(np.diff(w.numpy()) > 0)                  # ascending
    np.testing.assert_allclose((v @ agrad.diag_embed(w) @ v.mT).numpy(), spd.numpy(), atol=1e-12)
    L = LA.cholesky(spd)
    np.testing.assert_allclose((L @ L.mT).numpy(), spd.numpy(), atol=1e-12)
    U = LA.cholesky(spd, upper=True)
    np.testing.assert_allclose(U.numpy(), L.mT.numpy(), atol=1e-14)


def test_qr_modes():
    a = _rand(4, 3, seed=3)
    assert [tuple(t.shape) for t in LA.qr(a, "complete")] == [(4, 4), (4, 3)]
    q, r = LA.qr(a, mode="r")
    assert q.shape == (0,) and r.shape == (3, 3)
    with pytest.raises(RuntimeError, match="unrecognized mode"):
        LA.qr(a, mode="full")


def test_qr_backward_refusals():
    a = _rand(4, 3, seed=4, requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        LA.qr(a, mode="complete").Q.sum().backward()


def test_solve_batches_vectors_and_sides():
    A = _spd(3, seed=5)
    b = _rand(2, 3, seed=6)                           # a batch of vectors? no: (2, 3) is a matrix here
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        LA.solve(A, b)
    batchA = agrad.stack([A, 2 * A])
    x = LA.solve(batchA, b)                           # (2, 3) is batchA's shape minus one: vectors
    assert x.shape == (2, 3)
    np.testing.assert_allclose((batchA @ x.unsqueeze(-1)).squeeze(-1).numpy(), b.numpy(), atol=1e-13)
    X = LA.solve(A, b, left=False)                    # X A = B
    np.testing.assert_allclose((X @ A).numpy(), b.numpy(), atol=1e-13)
    with pytest.raises(RuntimeError, match="Vector broadcasting of the left hand side is not supported"):
        LA.solve(A, _rand(3, seed=7), left=False)


def test_singular_matrices():
    singular = agrad.stack([_spd(2), _t([[1.0, 2.0], [2.0, 4.0]])])
    result, info = LA.solve_ex(singular, _rand(2, 2, 1, seed=8))
    # info is getrf's: U's first zero pivot is its 2nd (PyTorch 2.13: [0, 2])
    assert info.tolist() == [0, 2] and info.dtype == agrad.int32
    assert np.isfinite(result[0].numpy()).all() and not np.isfinite(result[1].numpy()).any()
    with pytest.raises(RuntimeError, match="singular"):
        LA.solve(singular, _rand(2, 2, 1, seed=8))
    not_pd = _t([[1.0, 2.0], [2.0, 1.0]])
    assert LA.cholesky_ex(not_pd).info.item() == 2      # the leading minor of order 2
    with pytest.raises(RuntimeError, match="leading minor of order 2 is not positive-definite"):
        LA.cholesky(not_pd)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\)"):
        LA.cholesky(agrad.stack([_spd(2), not_pd]))


@pytest.mark.parametrize("fn", [LA.inv, LA.det, LA.cholesky, LA.eigh, LA.eigvalsh, LA.matrix_exp, LA.slogdet])
def test_square_and_dtype_checks(fn):
    with pytest.raises(RuntimeError, match="square matri"):
        fn(_rand(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fn(_rand(3))
    with pytest.raises(RuntimeError, match="floating point"):
        fn(agrad.ones(2, 2, dtype=agrad.int64))


def test_norms():
    x = _rand(3, 4, seed=9)
    n = x.numpy()
    np.testing.assert_allclose(LA.norm(x).item(), np.linalg.norm(n), rtol=1e-14)
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_allclose(LA.norm(x, ord).item(), np.linalg.norm(n, ord), rtol=1e-13)
        np.testing.assert_allclose(LA.matrix_norm(x, ord).item(), np.linalg.norm(n, ord), rtol=1e-13)
    np.testing.assert_allclose(LA.vector_norm(x, 3, dim=1).numpy(), np.linalg.norm(n, 3, axis=1), rtol=1e-14)
    np.testing.assert_allclose(LA.norm(x, dim=(0, 1)).item(), np.linalg.norm(n), rtol=1e-14)
    with pytest.raises(RuntimeError, match="must be 1D or 2D"):
        LA.norm(_rand(2, 2, 2), 2)
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        LA.matrix_norm(x, 3)
    with pytest.raises(TypeError):
        LA.vector_norm(x, "fro")
    y = LA.vector_norm(x.to(agrad.float32), dtype=F64)
    assert y.dtype == F64


def test_vector_norm_dtype_gradient():
    x = _rand(4, seed=10).to(agrad.float32).requires_grad_()
    LA.vector_norm(x, dtype=F64).backward()
    assert x.grad.dtype == agrad.float32
    np.testing.assert_allclose(x.grad.numpy(), (x / x.norm()).detach().numpy(), rtol=1e-6)


def test_cond_and_rank():
    a = _rand(3, 3, seed=11)
    n = a.numpy()
    for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
        np.testing.assert_allclose(LA.cond(a, p).item(), np.linalg.cond(n, p), rtol=1e-12)
    assert LA.cond(_t([[1.0, 2.0], [2.0, 4.0]]), 1).item() == np.inf
    low = _rand(4, 2, seed=12) @ _rand(2, 3, seed=13)
    rank = LA.matrix_rank(low)
    assert rank.item() == 2 and rank.dtype == agrad.int64
    assert LA.matrix_rank(_rand(2, 3, 4, seed=14)).tolist() == [3, 3]
    assert LA.matrix_rank(low, atol=100.0).item() == 0
    sym = low[:3] + low[:3].mT
    assert LA.matrix_rank(sym, hermitian=True).item() == np.linalg.matrix_rank(sym.numpy(), hermitian=True)


def test_cond_gradient_in_the_inverting_norms():
    # PyTorch 2.13 cannot differentiate these (it fills linalg_inv_ex's saved result in place); the composite can
    a = _spd(3, seed=15).requires_grad_()
    assert gradcheck(lambda t: LA.cond(t, "fro"), [a])
    assert gradgradcheck(lambda t: LA.cond(t, 1), [a])


def test_pinv_and_lstsq():
    a = _rand(4, 3, seed=16)
    np.testing.assert_allclose(LA.pinv(a).numpy(), np.linalg.pinv(a.numpy()), rtol=1e-12, atol=1e-14)
    cut = LA.pinv(a, 0.9)                                     # rcond, positional: rtol's older name
    np.testing.assert_allclose(cut.numpy(), np.linalg.pinv(a.numpy(), rcond=0.9), atol=1e-14)
    b = _rand(4, 2, seed=17)
    out = LA.lstsq(a, b, driver="gelsd")
    np.testing.assert_allclose(out.solution.numpy(), np.linalg.lstsq(a.numpy(), b.numpy(), rcond=None)[0],
                               rtol=1e-12)
    np.testing.assert_allclose(out.residuals.numpy(), np.linalg.lstsq(a.numpy(), b.numpy(), rcond=None)[1],
                               rtol=1e-12)
    assert out.rank.item() == 3 and out.singular_values.shape == (3,)
    gelsy = LA.lstsq(a, b)
    assert gelsy.residuals.shape == (0,) and gelsy.singular_values.shape == (0,)


def test_lstsq_residuals_gradient():
    a, b = _rand(5, 2, seed=18, requires_grad=True), _rand(5, 3, seed=19, requires_grad=True)
    assert gradcheck(lambda a, b: LA.lstsq(a, b, driver="gelsd").residuals, [a, b])


def test_multi_dot_vecdot_diagonal():
    ms = [_rand(3, seed=20), _rand(3, 4, seed=21), _rand(4, 5, seed=22), _rand(5, seed=23)]
    expected = np.linalg.multi_dot([m.numpy() for m in ms])
    np.testing.assert_allclose(LA.multi_dot(ms).numpy(), expected, rtol=1e-13)
    np.testing.assert_allclose(LA.multi_dot(tuple(ms)).numpy(), expected, rtol=1e-13)
    with pytest.raises(RuntimeError, match="at least 2 tensors"):
        LA.multi_dot([ms[1]])
    with pytest.raises(RuntimeError, match="tensor 1 must be 2D"):
        LA.multi_dot([ms[1], ms[0], ms[2]])
    x, y = _rand(2, 3, seed=24), _rand(3, seed=25)
    np.testing.assert_allclose(LA.vecdot(x, y).numpy(), x.numpy() @ y.numpy(), rtol=1e-14)
    assert LA.diagonal(_rand(2, 3, 3, seed=26)).shape == (2, 3)


def test_matrix_exp_values():
    import scipy.linalg
    a = _rand(2, 3, 3, seed=27)
    np.testing.assert_allclose(LA.matrix_exp(a).numpy(), scipy.linalg.expm(a.numpy()), rtol=1e-13)
    np.testing.assert_allclose(agrad.matrix_exp(agrad.zeros(2, 2, dtype=F64)).numpy(), np.eye(2))


def test_eigh_third_order():
    # the gradient is written with ops, so a Hessian-vector product differentiates again (as PINN losses do)
    a = _spd(3, seed=28).requires_grad_()

    def f(t):
        return LA.eigvalsh(t + t.mT)[-1]
    g, = agrad.autograd.grad(f(a), a, create_graph=True)
    h, = agrad.autograd.grad((g * g).sum(), a, create_graph=True)
    assert h.requires_grad and h.shape == (3, 3)
    assert gradgradcheck(f, [a])


def test_triangular_and_tensor_systems():
    a = _rand(3, 3, seed=29) + 3 * agrad.eye(3, dtype=F64)
    b = _rand(3, 2, seed=30)
    x = LA.solve_triangular(a, b, upper=True)
    np.testing.assert_allclose((agrad.triu(a) @ x).numpy(), b.numpy(), atol=1e-14)     # only the triangle is read
    y = LA.solve_triangular(a, b, upper=False, unitriangular=True)
    unit = agrad.tril(a, -1) + agrad.eye(3, dtype=F64)
    np.testing.assert_allclose((unit @ y).numpy(), b.numpy(), atol=1e-14)
    with pytest.raises(TypeError):
        LA.solve_triangular(a, b)                                                      # upper is required
    t = (_rand(6, 6, seed=31) + 3 * agrad.eye(6, dtype=F64)).reshape(2, 3, 6)
    inv = LA.tensorinv(t, ind=2)
    assert inv.shape == (6, 2, 3)
    np.testing.assert_allclose(np.tensordot(inv.numpy(), t.numpy(), 2), np.eye(6), atol=1e-13)
    rhs = _rand(2, 3, seed=32)
    sol = LA.tensorsolve(t, rhs)
    np.testing.assert_allclose(np.tensordot(t.numpy(), sol.numpy(), 1), rhs.numpy(), atol=1e-13)
    np.testing.assert_allclose(LA.vander(_t([1.0, 2.0, 3.0])).numpy(), np.vander([1.0, 2.0, 3.0], increasing=True))
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        LA.vander(_t([1.0, 2.0]), N=1)


def test_householder_product_is_geqrf_q():
    import scipy.linalg
    a = np.random.default_rng(33).standard_normal((5, 3))
    reflectors, tau = scipy.linalg.lapack.dgeqrf(a)[:2]
    q = LA.householder_product(_t(reflectors), _t(tau))
    np.testing.assert_allclose(q.numpy(), np.linalg.qr(a)[0], atol=1e-14)
    with pytest.raises(RuntimeError, match="must be greater than or equal to tau.shape"):
        LA.householder_product(_t(reflectors), _rand(4, seed=34))


def test_eigenvalue_and_singular_value_gradients_where_they_repeat():
    # without the vectors' gradients, PyTorch's V diag(gL) Vᴴ and U diag(gS) Vh: finite where values repeat
    a = (2.0 * agrad.eye(3, dtype=F64)).requires_grad_()
    LA.eigvalsh(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3), atol=1e-14)        # d trace / dA
    b = (2.0 * agrad.eye(3, dtype=F64)).requires_grad_()
    LA.matrix_norm(b, "nuc").backward()
    np.testing.assert_allclose(b.grad.numpy(), np.eye(3), atol=1e-14)
    assert LA.svdvals(b).grad_fn.name() == "LinalgSvdBackward0"
    assert LA.eigvalsh(a).grad_fn.name() == "LinalgEighBackward0"


# ---- the deprecated torch.svd, qr, cholesky, nuclear_norm, frobenius_norm; adjoint, H, mH --------------
# (messages and warnings as torch 2.13 gives them)

def test_legacy_svd_returns_v_and_zeros_without_compute_uv():
    A = _rand(4, 3, requires_grad=True)
    U, S, V = agrad.svd(A)
    assert type(agrad.svd(A)).__name__ == "svd" and V.grad_fn.name() == "TransposeBackward0"
    np.testing.assert_allclose((U * S.unsqueeze(-2)) @ V.mT.detach(), A.detach(), atol=1e-12)
    U, S, V = A.svd(some=False)
    assert U.shape == (4, 4) and V.shape == (3, 3)
    U, S, V = agrad.svd(A, compute_uv=False)
    assert U.shape == (4, 4) and V.shape == (3, 3) and not U.any() and not V.any() and not U.requires_grad
    np.testing.assert_allclose(S.detach(), LA.svdvals(A).detach(), atol=1e-12)
    with pytest.raises(RuntimeError, match="linalg.svd: input should have at least 2 dimensions, but has 1 "
                                           "dimensions instead"):
        agrad.svd(_rand(3))


def test_legacy_qr_and_cholesky_warn_once_and_name_their_results():
    A = _rand(3, 4)
    agrad.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="torch.qr is deprecated in favor of torch.linalg.qr"):
            Q, R = agrad.qr(A, some=False)
        with pytest.warns(UserWarning, match="torch.cholesky is deprecated in favor of torch.linalg.cholesky"):
            L = _spd(3).cholesky()
    finally:
        agrad.set_warn_always(False)
    assert type(agrad.qr(A)).__name__ == "qr" and Q.shape == (3, 3) and R.shape == (3, 4)
    np.testing.assert_allclose(L @ L.mT, _spd(3), atol=1e-12)
    np.testing.assert_allclose(agrad.cholesky(_spd(3), True), LA.cholesky(_spd(3), upper=True), atol=1e-12)
    with pytest.raises(RuntimeError, match=r"cholesky: \(Batch element 0\): The factorization could not be "
                                           r"completed because the input is not positive-definite \(the leading "
                                           r"minor of order 2 is not positive-definite\)."):
        agrad.cholesky(_t([[[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]))
    with pytest.raises(RuntimeError, match="^cholesky: A must be batches of square matrices, but they are 2 by 3"):
        agrad.cholesky(_rand(2, 3))


def test_nuclear_and_frobenius_norms():
    A = _rand(2, 3, 4)
    np.testing.assert_allclose(agrad.nuclear_norm(A[0]), LA.matrix_norm(A[0], "nuc"), atol=1e-12)
    np.testing.assert_allclose(agrad.nuclear_norm(A, [0, 2], keepdim=True), LA.matrix_norm(A, "nuc", [0, 2], True),
                               atol=1e-12)
    np.testing.assert_allclose(agrad.frobenius_norm(A, [2, 0]), LA.vector_norm(A, 2, [2, 0]), atol=1e-12)
    with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3 dimensions instead."):
        agrad.frobenius_norm(A, [0, 1, 2])


def test_adjoint_H_mH_are_transposing_views():
    A = _rand(2, 3, 4, requires_grad=True)
    for view in (A.mH, A.adjoint(), agrad.adjoint(A), A[0].H):
        assert view._base is A and view.grad_fn.name() == "TransposeBackward0"
    assert A.mH.shape == (2, 4, 3) and A[0].H.shape == (4, 3)
    for call, message in [(lambda: _rand(3).H, "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor."),
                          (lambda: A.H, "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For "
                                        "batches of matrices, consider using tensor.mH"),
                          (lambda: _rand(3).mH, "tensor.mH is only supported on matrices or batches of matrices. "
                                                "Got 1-D tensor."),
                          (lambda: _rand(3).adjoint(), "tensor.adjoint() is only supported on matrices or batches of "
                                                       "matrices. Got 1-D tensor.")]:
        with pytest.raises(RuntimeError) as raised:
            call()
        assert str(raised.value) == message
    scalar = _t(2.0)
    with pytest.warns(UserWarning, match="Tensor.H is deprecated on 0-D tensors"):
        agrad.set_warn_always(True)
        try:
            assert scalar.H is scalar
        finally:
            agrad.set_warn_always(False)


def test_ldl_factor_and_solve():
    A = _t([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]], requires_grad=True)      # needs 2×2 pivots
    LD, pivots = LA.ldl_factor(A)
    assert pivots.dtype == agrad.int32 and LD.grad_fn.name() == "NotImplemented"
    B = _rand(2, 3, 2)
    X = LA.ldl_solve(LD.detach(), pivots, B)
    np.testing.assert_allclose(A.detach() @ X, B, atol=1e-12)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
        LD.sum().backward()
    _, _, info = LA.ldl_factor_ex(agrad.zeros(2, 2))
    assert int(info) == 1
    with pytest.raises(RuntimeError, match="torch.linalg.ldl_factor: The factorization could not be completed"):
        LA.ldl_factor(agrad.zeros(2, 2))
    with pytest.raises(RuntimeError, match="Incompatible shapes of A and B for the equation AX = B"):
        LA.ldl_solve(LD.detach(), pivots, _rand(2, 2))


@pytest.mark.parametrize("call, kind", [
    (lambda: agrad.linalg.solve(agrad.zeros(2, 2), agrad.ones(2)), "torch.linalg.solve: The solver failed"),
    (lambda: agrad.linalg.cholesky(-agrad.eye(2)), "linalg.cholesky: The factorization could not be completed"),
    (lambda: agrad.linalg.inv(agrad.zeros(2, 2)), "linalg.inv: The diagonal element 1 is zero"),
    (lambda: agrad.cholesky_inverse(agrad.eye(3).index_fill(0, agrad.tensor([2]), 0.0).expand(2, 3, 3)),
     r"cholesky_inverse: \(Batch element 0\): The diagonal element 3 is zero, the inversion could not be "
     r"completed because the input matrix is singular.")])
def test_lapacks_reported_failures_are_linalg_errors(call, kind):
    """torch.linalg.LinAlgError (a RuntimeError) where LAPACK's info says the matrix cannot be factored or
    inverted; messages from torch 2.13."""
    with pytest.raises(agrad.linalg.LinAlgError, match=kind):
        call()
    assert issubclass(agrad.linalg.LinAlgError, RuntimeError)
