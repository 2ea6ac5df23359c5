"""Linear systems (ATen's BatchLinearAlgebra): linalg_solve_ex, the kernel (PyTorch's
_linalg_solve_ex, whose node is LinalgSolveExBackward0), and linalg_solve over it;
linalg_solve_triangular (A's triangle only); PyTorch's composites linalg_tensorinv and
linalg_tensorsolve (a tensor viewed as a matrix); the older triangular_solve (deprecated),
cholesky_solve and cholesky_inverse.

A is a batch of square matrices, B a batch of matrices or, where B has A's shape without its
last dimension (or is 1-D), of vectors (PyTorch's linalg_solve_is_vector_rhs); their batch
dimensions broadcast. The gradients are derivatives.yaml's linalg_solve_backward, written with
linalg_solve itself so every order follows: gB = A⁻ᴴ gX (X A⁻ᴴ on the right) and
gA = -gB Xᴴ (-Xᴴ gB on the right), conjugate transposes for complex matrices (derivatives.yaml's
complex formulas; triangular_solve's `transpose` is a plain transpose, as LAPACK's trtrs 'T').
"""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from ..errors import DtypeError, LinAlgError
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes
from ..warn_once import warn_once
from .determinants import _invertible, _mH, _mT, _square_check, linalg_inv, linalg_inv_ex, square_shape_check
from .linalg import matmul
from ._common import _named_results, conj_of, host
from ._lapack_failures import batch_element, lu_info
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.diagonal import tril, triu
from .shape.view import permute, reshape, squeeze, unsqueeze


def _is_vector_rhs(A, B) -> bool:
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_shape(A, B, left):
    """The result's shape, after PyTorch's checks (linalg_solve_ex's _linalg_solve_ex_out)."""
    _square_check("solve", A)
    if A.dtype != B.dtype:
        raise DtypeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                         f"{scalar_type_name(A.dtype)} and B of type {scalar_type_name(B.dtype)} instead")
    vector = _is_vector_rhs(A, B)
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    b = tuple(B.shape) + (1,) if vector else tuple(B.shape)
    if len(b) < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    n = A.shape[-1]
    if (b[-2] if left else b[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b[-2]}x{b[-1]})")
    batch = broadcast_shapes(tuple(A.shape[:-2]), b[:-2])
    return batch + (b[-2:-1] if vector else b[-2:]), batch


def _solve_ex_meta(A, B, left=True, check_errors=False):
    shape, _ = _solve_shape(A, B, left)
    # info is the LU factorization's: one per matrix of A, not of the broadcast batch
    return MetaArray(shape, A.dtype), MetaArray(tuple(A.shape[:-2]), np.dtype(np.int32))


def _solve_ex_kernel(xp, A, B, left, check_errors):
    shape, batch = _solve_shape(A, B, left)
    vector = _is_vector_rhs(A, B)
    b = B[..., None] if vector else B
    if not left:                     # X A = B is Aᵀ Xᵀ = Bᵀ
        A, b = xp.swapaxes(A, -1, -2), xp.swapaxes(b, -1, -2)
    info = xp.zeros(A.shape[:-2], dtype=np.int32)
    try:
        x = xp.linalg.solve(xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))
    except np.linalg.LinAlgError:
        # LAPACK's getrf reports a singular U (its info, the first zero on U's diagonal); PyTorch's solve_ex
        # returns it and linalg_solve raises for the first such matrix. NumPy stops at the first singular
        # matrix of a batch: find them all, and solve with the others (NaN where A is singular).
        for index in np.ndindex(*A.shape[:-2]):
            info[index] = lu_info(A[index])
        if check_errors:
            k = int(np.flatnonzero(host(info).ravel())[0])
            raise LinAlgError(f"torch.linalg.solve: {batch_element(A.shape, k)}The solver failed because the input "
                              "matrix is singular.") from None
        singular = (info != 0)[..., None, None]
        A = xp.where(singular, xp.eye(A.shape[-1], dtype=A.dtype), A)
        x = xp.linalg.solve(xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))
        x = xp.where(singular, np.nan, x)
    if not left:
        x = xp.swapaxes(x, -1, -2)
    if vector:
        x = x[..., 0]
    return xp.ascontiguousarray(x).astype(A.dtype, copy=False).reshape(shape), info


def _solve_grads(grads, A, B, result, left):
    """(gA, gB) of linalg_solve_backward; the vector case as a one-column matrix."""
    vector = _is_vector_rhs(A, B)
    gX, X = grads[0], result[0]
    if vector:
        gX, X = unsqueeze(gX, -1), unsqueeze(X, -1)
    if left:
        gB = linalg_solve(_mH(A), gX)
        gA = -matmul(gB, _mH(X))
    else:
        gB = linalg_solve(_mH(A), gX, left=False)
        gA = -matmul(_mH(X), gB)
    return gA, (squeeze(gB, -1) if vector else gB)


def _solve_samples(op):
    A = _invertible(op, (3, 3))
    return [SampleInput("(3,3) (3,2)", A, make_arg((3, 2), key=(op, "B"))),
            SampleInput("vector (3,)", A, make_arg((3,), key=(op, "b"))),
            SampleInput("batch (2,3,3) vector (2,3)", _invertible(op, (2, 3, 3)), make_arg((2, 3), key=(op, "bb"))),
            SampleInput("broadcast (3,3) (2,3,1)", A, make_arg((2, 3, 1), key=(op, "B3"))),
            SampleInput("left=False (2,3)", A, make_arg((2, 3), key=(op, "Br")), left=False),
            SampleInput("(3,3)T", _mT(_invertible(op, (3, 3), 2)).detach().requires_grad_(),
                        make_arg((3, 4), key=(op, "B4"), transposed=True))]


linalg_solve_ex = _named_results(defop(
    "linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor info)",
    kernel=_solve_ex_kernel, meta=_solve_ex_meta,
    grads={"A": lambda grads, A, B, result, left: _solve_grads(grads, A, B, result, left)[0],
           "B": lambda grads, A, B, result, left: _solve_grads(grads, A, B, result, left)[1]},
    samples=_solve_samples, torch="torch.linalg.solve_ex", supports_complex=True,
    doc="(X, info): X solves A X = B (X A = B with left=False) for square A; LAPACK's info (0: A invertible)."),
    "linalg_solve_ex")


def _solve(A, B, left=True):
    # PyTorch's linalg_solve checks solve_ex's info; the kernel checks it here (check_errors), so that a
    # meta tensor, whose info has no values, passes
    return linalg_solve_ex(A, B, left=left, check_errors=True)[0]


linalg_solve = defop("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", composite=_solve,
                     samples=_solve_samples, torch="torch.linalg.solve",
                     doc="X with A X = B (X A = B with left=False); an error where A is singular.")


# ---- triangular systems ------------------------------------------------------------------------------

def _triangular_shape(A, B, upper, left, unitriangular):
    for name, t in (("A", A), ("B", B)):
        if t.ndim < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have at least 2 dimensions.")
    _square_check("solve_triangular", A)
    if A.dtype != B.dtype:
        raise DtypeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                         f"{scalar_type_name(A.dtype)} and B of type {scalar_type_name(B.dtype)} instead")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    return batch + tuple(B.shape[-2:]), batch


def _solve_triangular_meta(self, B, upper, left=True, unitriangular=False):
    shape, _ = _triangular_shape(self, B, upper, left, unitriangular)
    return MetaArray(shape, self.dtype)


def _substitute(xp, A, B, upper):
    """X with A X = B for a triangular A, by substitution as BLAS's trsm (which ATen calls for every
    triangular solve): no check of A's diagonal, so a zero on it gives the inf and NaN the divisions give,
    where NumPy's LU solve would raise "Singular matrix". One row of X per step, the batch and the columns of
    B at once; the rows solved so far are concatenated, not assigned in place (dask's arrays take no
    item assignment), so one kernel serves every backend."""
    # NOTE: where no pivot is zero and A is finite, LAPACK's LU solve (gesv) finds the same X in a fraction of
    # the time the row loop takes on small or wide systems; it can refuse only where substitution divides by 0
    if bool(xp.all(xp.diagonal(A, axis1=-2, axis2=-1) != 0)) and bool(xp.isfinite(A).all()):
        try:
            return xp.linalg.solve(A, B)
        except np.linalg.LinAlgError:
            pass
    n = A.shape[-1]
    solved = B[..., :0, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in (range(n - 1, -1, -1) if upper else range(n)):
            row = B[..., k:k + 1, :]
            if k != (n - 1 if upper else 0):
                row = row - xp.matmul(A[..., k:k + 1, k + 1:] if upper else A[..., k:k + 1, :k], solved)
            x = row / A[..., k:k + 1, k:k + 1]
            solved = xp.concatenate([x, solved] if upper else [solved, x], axis=-2)
    return solved


def _solve_triangular_kernel(xp, self, B, upper, left, unitriangular):
    shape, batch = _triangular_shape(self, B, upper, left, unitriangular)
    # only A's triangle is read (and not its diagonal where unitriangular), as LAPACK's trtrs
    A = xp.triu(self) if upper else xp.tril(self)
    if unitriangular:
        n = A.shape[-1]
        A = A * (1 - xp.eye(n, dtype=A.dtype)) + xp.eye(n, dtype=A.dtype)
    if not left:                     # X A = B is Aᵀ Xᵀ = Bᵀ, Aᵀ the other triangle
        A, B, upper = xp.swapaxes(A, -1, -2), xp.swapaxes(B, -1, -2), not upper
    x = _substitute(xp, xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(B, batch + B.shape[-2:]), upper)
    if not left:
        x = xp.swapaxes(x, -1, -2)
    return xp.ascontiguousarray(x).astype(self.dtype, copy=False).reshape(shape)


def _solve_triangular_grads(grad, self, result, upper, left, unitriangular):
    """linalg_solve_triangular_backward: gB solves Aᴴ's triangular system; gA = -gB Xᴴ (-Xᴴ gB on the right)
    kept to the triangle the forward read."""
    gB = linalg_solve_triangular(_mH(self), grad, upper=not upper, left=left, unitriangular=unitriangular)
    gA = -matmul(gB, _mH(result)) if left else -matmul(_mH(result), gB)
    gA = triu(gA, int(unitriangular)) if upper else tril(gA, -int(unitriangular))
    return gA, gB


def _solve_triangular_samples(op):
    A = _invertible(op, (3, 3))
    return [SampleInput("upper (3,3) (3,2)", A, make_arg((3, 2), key=(op, "B")), upper=True),
            SampleInput("lower batch (2,3,3)", _invertible(op, (2, 3, 3)), make_arg((2, 3, 1), key=(op, "b")),
                        upper=False),
            SampleInput("broadcast (3,3) (2,3,2)", A, make_arg((2, 3, 2), key=(op, "B3")), upper=False),
            SampleInput("left=False", A, make_arg((2, 3), key=(op, "Br")), upper=True, left=False),
            SampleInput("unitriangular", A, make_arg((3, 2), key=(op, "Bu")), upper=False, unitriangular=True),
            SampleInput("(3,3)T upper", _mT(_invertible(op, (3, 3), 2)).detach().requires_grad_(),
                        make_arg((3, 4), key=(op, "B4"), transposed=True), upper=True)]


linalg_solve_triangular = defop(
    "linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) "
    "-> Tensor",
    kernel=_solve_triangular_kernel, meta=_solve_triangular_meta,
    grads={"self": lambda grad, self, result, upper, left, unitriangular:
           _solve_triangular_grads(grad, self, result, upper, left, unitriangular)[0],
           "B": lambda grad, self, result, upper, left, unitriangular:
           _solve_triangular_grads(grad, self, result, upper, left, unitriangular)[1]},
    samples=_solve_triangular_samples, torch="torch.linalg.solve_triangular", supports_complex=True,
    doc="X with A X = B (X A = B with left=False) for A triangular: only its upper (or lower) triangle is read, "
        "its diagonal taken as ones with unitriangular.")


# ---- tensor systems -------------------------------------------------------------------------------

def _tensorinv(A, ind=2):
    """PyTorch's composite: the inverse of A viewed as a (∏ shape[:ind]) × (∏ shape[ind:]) matrix, shaped
    shape[ind:] + shape[:ind], so that tensordot(tensorinv(A), A, ind) is the identity."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = list(A.shape)
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    # ATen's: linalg_inv_ex, its info checked under the name "inv" (a meta tensor's info has no values)
    inverse, info = linalg_inv_ex(reshape(A, [rows, cols]))
    if not info.is_meta and int(info.item()):
        raise LinAlgError(f"inv: The diagonal element {int(info.item())} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    return reshape(inverse, shape[ind:] + shape[:ind])


linalg_tensorinv = defop(
    "linalg_tensorinv(Tensor self, int ind=2) -> Tensor", composite=_tensorinv,
    samples=lambda op: [SampleInput("(2,3,6) ind=2", _tensor_of(_invertible(op, (6, 6)), [2, 3, 6])),
                        SampleInput("(6,2,3) ind=1", _tensor_of(_invertible(op, (6, 6), 1), [6, 2, 3]), ind=1)],
    torch="torch.linalg.tensorinv", doc="The inverse of A as a linear map from its last dims to its first ind dims.")


def _tensor_of(matrix, shape):
    return reshape(matrix, shape).detach().requires_grad_()


def _tensorsolve(A, B, dims=None):
    """PyTorch's composite: the dims of A named by `dims` moved to the end, then A viewed as a
    (B.numel()) × (the rest) matrix solved against B flattened, shaped as A's trailing dims."""
    if dims is not None:
        order = [d for d in range(A.ndim) if d not in [d % A.ndim for d in dims]] + [d % A.ndim for d in dims]
        A = permute(A, order)
    result_shape = list(A.shape[B.ndim:])
    n = int(np.prod(result_shape))
    if int(np.prod(list(B.shape))) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n} != {int(np.prod(list(A.shape[:B.ndim])))}")
    return reshape(linalg_solve(reshape(A, [n, n]), reshape(B, [n])), result_shape)


linalg_tensorsolve = defop(
    "linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor", composite=_tensorsolve,
    samples=lambda op: [SampleInput("(2,3,6)", _tensor_of(_invertible(op, (6, 6)), [2, 3, 6]),
                                    make_arg((2, 3), key=(op, "b"))),
                        SampleInput("dims=(0,)", _tensor_of(_invertible(op, (6, 6), 1), [6, 2, 3]),
                                    make_arg((2, 3), key=(op, "b1")), dims=[0])],
    torch="torch.linalg.tensorsolve", doc="X with tensordot(A, X, X.ndim) = B.")


# ---- the older solvers: triangular_solve, cholesky_solve, cholesky_inverse ----------------------------
# Each its own Node with derivatives.yaml's formula (triangular_solve_backward, cholesky_solve_backward,
# cholesky_inverse_backward). cholesky_solve and cholesky_inverse read one triangle of their factor, as
# LAPACK's potrs/potri, but PyTorch's formulas give a gradient for the whole matrix: their samples are
# gradchecked through a triangular input (PyTorch's gradcheck_wrapper_triangular_input)

def _b_and_A(name, b, A, b_message):
    if b.ndim < 2:
        raise RuntimeError(b_message.format(b.ndim))
    if A.ndim < 2:
        raise RuntimeError(f"A should have at least 2 dimensions, but has {A.ndim} dimensions instead")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           f"matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by {A.shape[-1]} "
                           f"but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    if b.dtype != A.dtype:
        raise DtypeError(f"Expected b and A to have the same dtype, but found b of type {scalar_type_name(b.dtype)} "
                         f"and A of type {scalar_type_name(A.dtype)} instead.")
    batch = broadcast_shapes(tuple(b.shape[:-2]), tuple(A.shape[:-2]))
    return batch + tuple(b.shape[-2:]), batch + tuple(A.shape[-2:])


def _triangular_solve_shapes(self, A):
    return _b_and_A("triangular_solve", self, A, "torch.triangular_solve: Expected b to have at least 2 dimensions, "
                                                 "but it has {} dimensions instead")


def _triangular_solve_meta(self, A, upper, transpose, unitriangular):
    x_shape, a_shape = _triangular_solve_shapes(self, A)
    return MetaArray(x_shape, self.dtype), MetaArray(a_shape, A.dtype)


def _triangular_solve_kernel(xp, self, A, upper, transpose, unitriangular):
    warn_once("triangular_solve", _TRIANGULAR_SOLVE_DEPRECATED)
    x_shape, a_shape = _triangular_solve_shapes(self, A)
    # A's triangle solved as Aᵀ's other triangle when transposed
    coefficient = xp.swapaxes(A, -1, -2) if transpose else A
    x = _solve_triangular_kernel(xp, coefficient, self, upper != transpose, True, unitriangular)
    return x, xp.array(xp.broadcast_to(A, a_shape))


def _triangular_solve_grads(grads, self, A, result, upper, transpose, unitriangular):
    """triangular_solve_backward: gb = the solve with Aᴴ (conj(A), the other transpose); gA = -gb Xᴴ
    (-conj(X) gbᵀ transposed), kept to the triangle read, plus the cloned coefficient's gradient."""
    grad_x, grad_m = grads
    x = result[0]
    gb = triangular_solve(grad_x, conj_of(A), upper, not transpose, unitriangular)[0]
    gA = -matmul(conj_of(x), _mT(gb)) if transpose else -matmul(gb, _mH(x))
    gA = triu(gA, int(unitriangular)) if upper else tril(gA, -int(unitriangular))
    return gb, gA + grad_m


_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a future "
    "PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a copy of one "
    "of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B).")

triangular_solve = _named_results(defop(
    "triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False) "
    "-> (Tensor solution, Tensor cloned_coefficient)",
    kernel=_triangular_solve_kernel, meta=_triangular_solve_meta,
    grads={"self": lambda grads, self, A, result, upper, transpose, unitriangular:
           _triangular_solve_grads(grads, self, A, result, upper, transpose, unitriangular)[0],
           "A": lambda grads, self, A, result, upper, transpose, unitriangular:
           _triangular_solve_grads(grads, self, A, result, upper, transpose, unitriangular)[1]},
    samples=lambda op: [
        SampleInput("upper", make_arg((3, 2), key=(op, "b")), _invertible(op, (3, 3))),
        SampleInput("lower transpose", make_arg((3, 2), key=(op, "b2")), _invertible(op, (3, 3), 1), False, True),
        SampleInput("unitriangular batch broadcast", make_arg((2, 3, 1), key=(op, "b3")), _invertible(op, (3, 3), 2),
                    True, False, True)],
    torch="torch.triangular_solve", supports_complex=True,
    doc="The deprecated torch.triangular_solve(b, A): (X with A X = b, A's upper or lower triangle read, Aᵀ with "
        "transpose, a unit diagonal with unitriangular; a copy of A)."),
    "triangular_solve")


def _cholesky_solve_kernel(xp, self, input2, upper):
    x_shape, _ = _b_and_A("cholesky_solve", self, input2, "b should have at least 2 dimensions, but has {} "
                                                          "dimensions instead")
    # (L Lᴴ) X = b: L y = b, then Lᴴ X = y (U as Uᴴ U)
    L = xp.conj(xp.swapaxes(input2, -1, -2)) if upper else input2
    y = _solve_triangular_kernel(xp, L, self, False, True, False)
    return _solve_triangular_kernel(xp, xp.conj(xp.swapaxes(L, -1, -2)), y, True, True, False).reshape(x_shape)


def _cholesky_solve_meta(self, input2, upper):
    x_shape, _ = _b_and_A("cholesky_solve", self, input2, "b should have at least 2 dimensions, but has {} "
                                                          "dimensions instead")
    return MetaArray(x_shape, self.dtype)


def _cholesky_solve_grads(grad, input2, result, upper):
    g_self = cholesky_solve(grad, input2, upper)
    common = matmul(g_self, _mH(result))
    common = common + _mH(common)
    return g_self, (-matmul(input2, common) if upper else -matmul(common, input2))


def _triangular_input(index, upper):
    """PyTorch's gradcheck_wrapper_triangular_input: the op on argument `index`'s triangle (the one it reads)."""
    def wrapper(op, *args, **kwargs):
        args = list(args)
        args[index] = triu(args[index]) if upper else tril(args[index])
        return op(*args, **kwargs)
    return wrapper


def _factor(op, shape, upper, tweak=0):
    """A Cholesky factor: a triangle with a diagonal well away from 0, as a leaf that requires grad."""
    m = _invertible(op, shape, tweak).detach()
    return (triu(m) if upper else tril(m)).detach().requires_grad_()


cholesky_solve = defop(
    "cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
    kernel=_cholesky_solve_kernel, meta=_cholesky_solve_meta,
    grads={"self": lambda grad, input2, result, upper: _cholesky_solve_grads(grad, input2, result, upper)[0],
           "input2": lambda grad, input2, result, upper: _cholesky_solve_grads(grad, input2, result, upper)[1]},
    samples=lambda op: [
        SampleInput("lower", make_arg((3, 2), key=(op, "b")), _factor(op, (3, 3), False)).wrapped(
            _triangular_input(1, False)),
        SampleInput("upper batch broadcast", make_arg((2, 3, 1), key=(op, "b2")), _factor(op, (3, 3), True, 1),
                    True).wrapped(_triangular_input(1, True))],
    torch="torch.cholesky_solve", supports_complex=True,
    doc="X with (L Lᴴ) X = b for a Cholesky factor L (lower, or U with Uᴴ U and upper=True).")


def _cholesky_inverse_check(self):
    # (linalg's square-matrix checks, without the "linalg." of their messages, as ATen's squareCheckInputs)
    square_shape_check("cholesky_inverse", self)
    _square_check("cholesky_inverse", self)


def _cholesky_inverse_kernel(xp, self, upper):
    _cholesky_inverse_check(self)
    n = self.shape[-1]
    # LAPACK's potri reports the first zero on the factor's diagonal (info > 0), which ATen raises
    zero = host(xp.diagonal(self, axis1=-2, axis2=-1) == 0).reshape(int(np.prod(self.shape[:-2])), n)
    failed = np.flatnonzero(zero.any(axis=1))
    if failed.size:
        where = f"(Batch element {failed[0]}): " if self.ndim > 2 else ""
        raise LinAlgError(f"cholesky_inverse: {where}The diagonal element {int(zero[failed[0]].argmax()) + 1} is "
                          f"zero, the inversion could not be completed because the input matrix is singular.")
    eye = xp.broadcast_to(xp.eye(n, dtype=self.dtype), self.shape)
    return _cholesky_solve_kernel(xp, eye, self, upper)


def _cholesky_inverse_grad(grad, self, upper, result):
    common = matmul(result, matmul(grad + _mH(grad), result))
    return -matmul(self, common) if upper else -matmul(common, self)


cholesky_inverse = defop(
    "cholesky_inverse(Tensor self, bool upper=False) -> Tensor",
    kernel=_cholesky_inverse_kernel,
    meta=lambda self, upper: (_cholesky_inverse_check(self), MetaArray(self.shape, self.dtype))[1],
    grads={"self": _cholesky_inverse_grad},
    samples=lambda op: [
        SampleInput("lower", _factor(op, (3, 3), False)).wrapped(_triangular_input(0, False)),
        SampleInput("upper batch", _factor(op, (2, 3, 3), True, 1), True).wrapped(_triangular_input(0, True))],
    torch="torch.cholesky_inverse", supports_complex=True,
    doc="(L Lᴴ)⁻¹ for a Cholesky factor L (lower, or U with Uᴴ U and upper=True).")
