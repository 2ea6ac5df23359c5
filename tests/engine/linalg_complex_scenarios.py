"""Complex linear algebra as scenarios that run on PyTorch and on agrad alike: linalg.eig and eigvals (of real
and complex matrices), eigh, svd, qr, cholesky, inv, det, slogdet, solve, lu_factor/lu_solve, matrix_exp, pinv,
the norms, triangular_solve, cholesky_solve/cholesky_inverse, lstsq, renorm, geqrf/orgqr/ormqr and the LDL
factorization of complex128 (and complex64) matrices, their values and the gradients of a real loss, and the
errors (a loss that depends on the eigenvectors' or singular vectors' phases, refused dtypes).

The matrices come from NumPy (the same numbers for both libraries). Where a decomposition leaves a phase
free (eig, eigh, svd: each vector up to e^{iφ}), a scenario records and differentiates only what does not
depend on it (|V|, |U|, U Vh), as PyTorch's OpInfo does; eig's eigenvalues are recorded sorted (LAPACK
builds may order them differently) and its losses are sums over the eigenpairs, so their gradients do not
depend on the order. A complex tensor is recorded as its view_as_real (pairs of floats).

`tests/reference/make_linalg_complex_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/linalg_complex.json`; `test_linalg_complex.py` runs them on agrad and compares.
"""
from __future__ import annotations

import numpy as np

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _complex(shape, seed):
    rng = np.random.RandomState(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _invertible(shape, seed):
    return _complex(shape, seed) + 3.0 * np.eye(shape[-1])


def _factor(shape, seed):
    """A Cholesky factor's values: a real positive diagonal (LAPACK's potri reads only its real part)."""
    m = _invertible(shape, seed)
    i = np.arange(shape[-1])
    m[..., i, i] = np.abs(m[..., i, i])
    return m


def _hpd(shape, seed):
    m = _complex(shape, seed)
    return m @ np.conj(np.swapaxes(m, -1, -2)) + np.eye(shape[-1])


def _hermitian(shape, seed):
    m = _complex(shape, seed)
    return m + np.conj(np.swapaxes(m, -1, -2))


def _separated(shape, seed, dtype=complex):
    """Well separated eigenvalues 1, 3, 5, ... with small entries off the diagonal (a complex pair for a
    real matrix, from the rotation block)."""
    rng = np.random.RandomState(seed)
    n = shape[-1]
    m = 0.3 * rng.standard_normal(shape) + np.diag(np.arange(1.0, 2 * n, 2.0))
    if dtype is complex:
        return m + 0.3j * rng.standard_normal(shape)
    m[..., 0, 1] += 1.5
    m[..., 1, 0] -= 1.5
    return m


def _leaf(T, a, dtype=None):
    t = T.tensor(a)
    return (t if dtype is None else t.to(getattr(T, dtype))).requires_grad_(True)


def _v(T, t):
    t = t.detach()
    return T.view_as_real(t.resolve_conj()).tolist() if t.is_complex() else t.tolist()


def _weights(T, shape, seed, complex_=True):
    w = _complex(shape, seed) if complex_ else np.random.RandomState(seed).standard_normal(shape)
    return T.tensor(w)


def _loss(T, outs, seed):
    """A real loss of the outputs: Σ Re(out · w) with fixed weights, one per output."""
    total = 0
    for i, out in enumerate(outs):
        w = _weights(T, tuple(out.shape), seed + i, out.is_complex())
        total = total + (out * w).real.sum() if out.is_complex() else total + (out * w).sum()
    return total


def _with_grads(T, fn, inputs, seed=100):
    outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    _loss(T, outs, seed).backward()
    return {"values": [_v(T, o) for o in outs], "dtypes": [str(o.dtype).split(".")[-1] for o in outs],
            "grads": [_v(T, x.grad) for x in inputs]}


def _eig_record(T, A):
    """eig's eigenvalues sorted, |V|'s columns in the same order, and the gradient of an order-free loss."""
    L, V = T.linalg.eig(A)
    loss = (L * L).real.sum() + 0.5 * (L * L).imag.sum() + (V.abs() ** 4).sum()
    loss.backward()
    values = np.asarray(_v(T, L))
    flat_values = values.reshape(-1, values.shape[-2], 2)
    absV = np.asarray(V.detach().abs().tolist()).reshape(-1, *V.shape[-2:])
    pairs, columns = [], []
    for b in range(flat_values.shape[0]):
        order = sorted(range(flat_values.shape[1]), key=lambda i: (round(flat_values[b, i, 0], 6),
                                                                   round(flat_values[b, i, 1], 6)))
        pairs.append(flat_values[b, order].tolist())
        columns.append(absV[b][:, order].tolist())
    return {"L sorted": pairs, "|V| by L": columns, "dtypes": [str(L.dtype).split(".")[-1], str(V.dtype).split(".")[-1]],
            "grad": _v(T, A.grad)}


@scenario
def eig_of_real_matrix(T):
    return _eig_record(T, _leaf(T, _separated((4, 4), 0, dtype=float)))


@scenario
def eig_of_complex_batch(T):
    return _eig_record(T, _leaf(T, _separated((2, 3, 3), 1)))


@scenario
def eig_float32_and_complex64(T):
    out = {}
    for dtype, kind in (("float32", float), ("complex64", complex)):
        L, V = T.linalg.eig(_leaf(T, _separated((3, 3), 2, dtype=kind), dtype).detach())
        out[dtype] = [str(L.dtype).split(".")[-1], str(V.dtype).split(".")[-1]]
    return out


@scenario
def eigvals_of_real_and_complex(T):
    out = {}
    for name, a in (("real", _separated((3, 3), 3, dtype=float)), ("complex", _separated((3, 3), 4))):
        A = _leaf(T, a)
        L = T.linalg.eigvals(A)
        ((L * L * L).real.sum() + (L * L).imag.sum()).backward()
        out[name] = {"L sorted": sorted(_v(T, L)), "grad": _v(T, A.grad), "grad_fn": type(L.grad_fn).__name__}
    return out


@scenario
def eig_and_eigh_and_svd_phase_dependent_losses(T):
    A = _leaf(T, _separated((3, 3), 5))
    H = _leaf(T, _hermitian((3, 3), 6))
    return {"eig": _error(lambda: T.linalg.eig(A)[1].sum().abs().backward()),
            "eigh": _error(lambda: T.linalg.eigh(H)[1].sum().abs().backward()),
            "svd U": _error(lambda: T.linalg.svd(A)[0].sum().abs().backward()),
            "svd Vh": _error(lambda: T.linalg.svd(A, full_matrices=False)[2].sum().abs().backward())}


@scenario
def eig_refused(T):
    return {"int64": _error(lambda: T.linalg.eig(T.ones(2, 2, dtype=T.int64))),
            "float16": _error(lambda: T.linalg.eig(T.ones(2, 2, dtype=T.float16))),
            "not square": _error(lambda: T.linalg.eig(T.ones(2, 3))),
            "1-D": _error(lambda: T.linalg.eig(T.ones(3))),
            "removed torch.eig": _error(lambda: T.eig(T.ones(2, 2)))}


@scenario
def eigh_hermitian(T):
    return _with_grads(T, lambda A: (lambda L, V: (L, V.abs()))(*T.linalg.eigh(A + A.mH)),
                       [_leaf(T, _complex((2, 3, 3), 7))])


@scenario
def eigvalsh_upper(T):
    return _with_grads(T, lambda A: T.linalg.eigvalsh(A + A.mH, UPLO="U"), [_leaf(T, _complex((3, 3), 8))])


@scenario
def svd_reduced_tall_and_wide(T):
    fn = (lambda A: (lambda U, S, Vh: (U.abs(), S, Vh.abs(), U @ Vh if A.shape[-1] == A.shape[-2] else S))(
        *T.linalg.svd(A, full_matrices=False)))
    return {"tall": _with_grads(T, fn, [_leaf(T, _complex((4, 3), 9))]),
            "wide batch": _with_grads(T, fn, [_leaf(T, _complex((2, 3, 5), 10))]),
            "square U Vh": _with_grads(T, fn, [_leaf(T, _complex((3, 3), 11))])}


@scenario
def svdvals_and_legacy_svd(T):
    return {"svdvals": _with_grads(T, T.linalg.svdvals, [_leaf(T, _complex((3, 4), 12))]),
            "torch.svd": _with_grads(T, lambda A: (lambda U, S, V: (U.abs(), S, V.abs()))(*T.svd(A)),
                                     [_leaf(T, _complex((4, 3), 13))])}


@scenario
def qr_modes(T):
    return {"reduced tall": _with_grads(T, lambda A: tuple(T.linalg.qr(A)), [_leaf(T, _complex((4, 3), 14))]),
            "wide": _with_grads(T, lambda A: tuple(T.linalg.qr(A)), [_leaf(T, _complex((3, 5), 15))]),
            "complete square batch": _with_grads(T, lambda A: tuple(T.linalg.qr(A, mode="complete")),
                                                 [_leaf(T, _complex((2, 3, 3), 16))])}


@scenario
def cholesky_lower_and_upper(T):
    fn = (lambda upper: lambda A: T.linalg.cholesky(A @ A.mH + T.eye(3, dtype=A.dtype), upper=upper))
    return {"lower": _with_grads(T, fn(False), [_leaf(T, _complex((3, 3), 17))]),
            "upper": _with_grads(T, fn(True), [_leaf(T, _complex((2, 3, 3), 18))]),
            "not positive-definite": _error(lambda: T.linalg.cholesky(T.tensor(-np.eye(2) + 0j)))}


@scenario
def inverse_and_determinants(T):
    return {"inv": _with_grads(T, T.linalg.inv, [_leaf(T, _invertible((2, 3, 3), 19))]),
            "det": _with_grads(T, T.linalg.det, [_leaf(T, _invertible((2, 3, 3), 20))]),
            "slogdet": _with_grads(T, lambda A: tuple(T.linalg.slogdet(A)), [_leaf(T, _invertible((3, 3), 21))]),
            "logdet": _with_grads(T, T.logdet, [_leaf(T, _invertible((3, 3), 22))])}


@scenario
def solves(T):
    return {"solve": _with_grads(T, T.linalg.solve, [_leaf(T, _invertible((2, 3, 3), 23)),
                                                     _leaf(T, _complex((2, 3, 2), 24))]),
            "solve vector": _with_grads(T, T.linalg.solve, [_leaf(T, _invertible((3, 3), 25)),
                                                            _leaf(T, _complex((3,), 26))]),
            "solve left=False": _with_grads(T, lambda A, B: T.linalg.solve(A, B, left=False),
                                            [_leaf(T, _invertible((3, 3), 27)), _leaf(T, _complex((2, 3), 28))]),
            "solve_triangular": _with_grads(T, lambda A, B: T.linalg.solve_triangular(A, B, upper=True),
                                            [_leaf(T, _invertible((3, 3), 29)), _leaf(T, _complex((3, 2), 30))]),
            "dtype mismatch": _error(lambda: T.linalg.solve(T.tensor(_invertible((2, 2), 31)), T.ones(2, 1)))}


@scenario
def lu_factor_and_lu_solve(T):
    # (pivoting on |Re| + |Im|, LAPACK's izamax: a matrix without a dominant diagonal)
    A = T.tensor(_complex((3, 5, 5), 32))
    LU, pivots = T.linalg.lu_factor(A)
    out = {"LU": _v(T, LU), "pivots": pivots.tolist()}
    for name, kwargs in (("left", {}), ("adjoint", {"adjoint": True}), ("left=False", {"left": False}),
                         ("left=False adjoint", {"left": False, "adjoint": True})):
        out[name] = _with_grads(T, lambda A, B: T.linalg.lu_solve(*T.linalg.lu_factor(A), B, **kwargs),
                                [_leaf(T, _invertible((3, 3), 33)), _leaf(T, _complex((3, 3), 34))])
    out["lu wide"] = _with_grads(T, lambda A: tuple(T.linalg.lu(A))[1:], [_leaf(T, _complex((3, 5), 35))])
    return out


@scenario
def matrix_exp_and_pinv(T):
    return {"matrix_exp": _with_grads(T, T.linalg.matrix_exp, [_leaf(T, _complex((2, 3, 3), 36))]),
            "pinv": _with_grads(T, T.linalg.pinv, [_leaf(T, _complex((3, 4), 37))]),
            "pinv hermitian": _with_grads(T, lambda A: T.linalg.pinv(A + A.mH, hermitian=True),
                                          [_leaf(T, _complex((3, 3), 38))]),
            "householder_product": _with_grads(T, T.linalg.householder_product,
                                               [_leaf(T, _complex((4, 3), 39)), _leaf(T, 0.5 * _complex((3,), 40))])}


@scenario
def norms(T):
    out = {}
    for name, fn in (("vector 2", lambda A: T.linalg.vector_norm(A)),
                     ("vector 1 dim", lambda A: T.linalg.vector_norm(A, 1, dim=1)),
                     ("vector inf", lambda A: T.linalg.vector_norm(A, float("inf"), dim=0)),
                     ("vector 3", lambda A: T.linalg.vector_norm(A, 3)),
                     ("vector 0.5", lambda A: T.linalg.vector_norm(A, 0.5)),
                     ("matrix fro", lambda A: T.linalg.matrix_norm(A)),
                     ("matrix nuc", lambda A: T.linalg.matrix_norm(A, "nuc")),
                     ("matrix 2", lambda A: T.linalg.matrix_norm(A, 2)),
                     ("matrix -1", lambda A: T.linalg.matrix_norm(A, -1)),
                     ("matrix inf", lambda A: T.linalg.matrix_norm(A, float("inf"))),
                     ("norm", lambda A: T.linalg.norm(A)),
                     ("cond", lambda A: T.linalg.cond(A[..., :3, :]))):
        out[name] = _with_grads(T, fn, [_leaf(T, _complex((3, 4), 41))])
    return out


@scenario
def older_solvers(T):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # (triangular_solve's deprecation)
        return {"triangular_solve": _with_grads(T, lambda b, A: tuple(T.triangular_solve(b, A.triu())),
                                                [_leaf(T, _complex((3, 2), 42)), _leaf(T, _invertible((3, 3), 43))]),
                "triangular_solve transpose unitriangular": _with_grads(
                    T, lambda b, A: tuple(T.triangular_solve(b, A.tril(), False, True, True)),
                    [_leaf(T, _complex((2, 3, 2), 44)), _leaf(T, _invertible((3, 3), 45))]),
                "cholesky_solve": _with_grads(T, lambda b, L: T.cholesky_solve(b, L.tril()),
                                              [_leaf(T, _complex((3, 2), 46)), _leaf(T, _factor((3, 3), 47))]),
                "cholesky_solve upper": _with_grads(T, lambda b, U: T.cholesky_solve(b, U.triu(), True),
                                                    [_leaf(T, _complex((2, 3, 2), 48)), _leaf(T, _factor((3, 3), 49))]),
                "cholesky_inverse": _with_grads(T, lambda L: T.cholesky_inverse(L.tril()),
                                                [_leaf(T, _factor((3, 3), 50))]),
                "cholesky_inverse upper": _with_grads(T, lambda U: T.cholesky_inverse(U.triu(), True),
                                                      [_leaf(T, _factor((2, 3, 3), 51))])}


@scenario
def lstsq_and_renorm(T):
    return {"lstsq": _with_grads(T, lambda A, B: T.linalg.lstsq(A, B).solution,
                                 [_leaf(T, _complex((4, 3), 52)), _leaf(T, _complex((4, 2), 53))]),
            "lstsq gelsd residuals": _with_grads(T, lambda A, B: tuple(T.linalg.lstsq(A, B, driver="gelsd"))[:2],
                                                 [_leaf(T, _complex((5, 2), 54)), _leaf(T, _complex((5, 3), 55))]),
            "lstsq gelsd dtypes": [str(t.dtype).split(".")[-1] for t in T.linalg.lstsq(
                T.tensor(_complex((5, 2), 56)), T.tensor(_complex((5, 3), 57)), driver="gelsd")],
            "renorm": _with_grads(T, lambda A: T.renorm(A, 2, 0, 1.5), [_leaf(T, _complex((3, 4), 58))]),
            "renorm p=1": _with_grads(T, lambda A: T.renorm(A, 1, 1, 2.0), [_leaf(T, _complex((2, 3, 2), 59))])}


@scenario
def norm_dtypes(T):
    A = T.tensor(_complex((3, 3), 60))
    return {"vector_norm real dtype": _error(lambda: T.linalg.vector_norm(A, dtype=T.float64)),
            "vector_norm narrowing": _error(lambda: T.linalg.vector_norm(A, dtype=T.complex64)),
            "vector_norm complex of real": _error(lambda: T.linalg.vector_norm(A.real, dtype=T.complex128)),
            "vector_norm float64 to float32": _error(lambda: T.linalg.vector_norm(A.real, dtype=T.float32)),
            "matrix_norm real dtype": _error(lambda: T.linalg.matrix_norm(A, "nuc", dtype=T.float64)),
            "matrix_norm narrowing": _error(lambda: T.linalg.matrix_norm(A, 1, dtype=T.complex64)),
            "vector_norm complex64 to complex128": _v(T, T.linalg.vector_norm(A.to(T.complex64), dtype=T.complex128)),
            "norm real dtype": _error(lambda: T.linalg.norm(A, dtype=T.float64))}


@scenario
def householder_reflectors_and_ldl(T):
    A = T.tensor(_complex((2, 4, 3), 61))
    a, tau = T.geqrf(A)
    C = T.tensor(_complex((2, 4, 2), 62))
    out = {"geqrf": [_v(T, a), _v(T, tau)], "orgqr": _v(T, T.orgqr(a, tau)),
           "ormqr": _v(T, T.ormqr(a, tau, C)), "ormqr transpose": _v(T, T.ormqr(a, tau, C, True, True))}
    S = _complex((2, 4, 4), 63)
    B = T.tensor(_complex((2, 4, 2), 64))
    for name, hermitian in (("symmetric", False), ("hermitian", True)):
        M = T.tensor(S + (np.conj(np.swapaxes(S, -1, -2)) if hermitian else np.swapaxes(S, -1, -2)))
        LD, pivots = T.linalg.ldl_factor(M, hermitian=hermitian)
        out[name] = {"LD": _v(T, LD), "pivots": pivots.tolist(),
                     "solve": _v(T, T.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian))}
    return out
