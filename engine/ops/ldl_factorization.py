"""The LDLᵀ factorization of symmetric matrices (ATen's BatchLinearAlgebra): linalg_ldl_factor_ex,
linalg_ldl_factor and linalg_ldl_solve, over the leading (batch) dimensions, by LAPACK's
Bunch-Kaufman sytrf and sytrs (SciPy's bindings) as PyTorch's CPU kernels call them.

LD is LAPACK's compact form from A's lower triangle (L's unit diagonal implied, D's 1×1 and 2×2
blocks on and below the diagonal, the upper triangle zero) and pivots LAPACK's 1-based int32
interchanges, negative where a 2×2 block begins: the format linalg_ldl_solve reads. info is 0, or
the position of an exactly zero block of D (the factorization completed, D singular). A complex matrix
is factored as complex symmetric (A = L D Lᵀ, sytrf) or, with hermitian=True, as Hermitian (A = L D Lᴴ,
hetrf and hetrs), as PyTorch picks the routine; of a real one both are sytrf's. PyTorch has no derivatives for these:
their results record a NotImplemented node whose backward raises.
"""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from ..creation import tensor
from ..messages import scalar_type_name
from ._common import host
from ._common import _named_results
from .registry import defop
from .samples import SampleInput, make_arg

_INT32 = np.dtype(np.int32)


def _square(name, A):
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype.kind not in "fc" or A.dtype == np.float16:
        raise RuntimeError(f"torch.linalg.{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A.dtype)}")


def _not_implemented(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


def _lapack():
    from scipy.linalg import lapack      # SciPy is imported on first use, as the CPU backend imports it
    return lapack


def _routine(step, a, hermitian):
    """LAPACK's Bunch-Kaufman routine: he (Hermitian) for a complex matrix with hermitian=True, else sy."""
    return ("he" if hermitian and a.dtype.kind == "c" else "sy") + step


def _ldl_factor_ex_kernel(xp, self, hermitian, check_errors):
    _square("ldl_factor_ex", self)
    self = host(self)
    sytrf = _lapack().get_lapack_funcs(_routine("trf", self, hermitian), (self,))
    LD = np.zeros(self.shape, dtype=self.dtype)
    pivots = np.zeros(self.shape[:-1], dtype=_INT32)
    info = np.zeros(self.shape[:-2], dtype=_INT32)
    for index in np.ndindex(*self.shape[:-2]):
        ldu, ipiv, info[index] = sytrf(self[index], lower=1)
        LD[index], pivots[index] = np.tril(ldu), ipiv
        if check_errors and info[index] > 0:
            raise RuntimeError(_singular_message("torch.linalg.ldl_factor_ex", index, self.shape, info[index]))
    return xp.asarray(LD), xp.asarray(pivots), xp.asarray(info)


def _singular_message(name, index, shape, order):
    where = f"(Batch element {np.ravel_multi_index(index, shape[:-2])}): " if len(shape) > 2 else ""
    return (f"{name}: {where}The factorization could not be completed because the input is singular: the block "
            f"D({order},{order}) of its D is exactly zero.")


def _ldl_factor_ex_meta(self, hermitian, check_errors):
    _square("ldl_factor_ex", self)
    return (MetaArray(self.shape, self.dtype), MetaArray(self.shape[:-1], _INT32),
            MetaArray(self.shape[:-2], _INT32))


def _symmetric_samples(op):
    def symmetric(shape, k):
        m = make_arg(shape, key=(op, k), requires_grad=False).detach()
        return (m + m.mT).detach()
    indefinite = tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]])      # 2×2 pivots
    return [SampleInput("(3,3)", symmetric((3, 3), 0)), SampleInput("(2,4,4) batch", symmetric((2, 4, 4), 1)),
            SampleInput("zero diagonal: 2×2 blocks", indefinite.double()),
            SampleInput("hermitian", symmetric((3, 3), 2), hermitian=True)]


linalg_ldl_factor_ex = _named_results(defop(
    "linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) "
    "-> (Tensor LD, Tensor pivots, Tensor info)",
    kernel=_ldl_factor_ex_kernel, meta=_ldl_factor_ex_meta, supports_complex=True,
    grads={"self": _not_implemented("linalg_ldl_factor_ex")}, backward_name="NotImplemented",
    differentiable=False, gradgrad=False, samples=_symmetric_samples, torch="torch.linalg.ldl_factor_ex",
    doc="(LD, pivots, info): the Bunch-Kaufman LDLᵀ factorization of the symmetric matrix in A's lower triangle, "
        "LAPACK's compact LD, 1-based int32 pivots (negative for 2×2 blocks), info 0 or D's zero block."),
    "linalg_ldl_factor_ex")


def _ldl_factor(self, hermitian=False):
    LD, pivots, info = linalg_ldl_factor_ex(self, hermitian=hermitian)
    if info.device.type != "meta":
        codes = info.cpu().numpy().reshape(-1)
        failed = np.flatnonzero(codes)
        if failed.size:
            index = np.unravel_index(failed[0], tuple(self.shape[:-2]))
            raise RuntimeError(_singular_message("torch.linalg.ldl_factor", index, tuple(self.shape),
                                                 int(codes[failed[0]])))
    return LD, pivots


linalg_ldl_factor = _named_results(defop(
    "linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
    composite=_ldl_factor, samples=lambda op: [s for s in _symmetric_samples(op)], torch="torch.linalg.ldl_factor",
    doc="linalg_ldl_factor_ex's (LD, pivots), an error where D is singular."),
    "linalg_ldl_factor")


def _ldl_solve_shapes(LD, pivots, B):
    _square("ldl_solve", LD)
    if B.ndim < 2:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, but it has {B.ndim} "
                           f"dimensions instead")
    if pivots.dtype != _INT32:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{scalar_type_name(pivots.dtype)}")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.ldl_solve: LD dtype {scalar_type_name(LD.dtype)} does not match b dtype "
                           f"{scalar_type_name(B.dtype)}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(pivots.shape)} instead")
    if LD.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({LD.shape[-2]}x{LD.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    return tuple(np.broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]))) + tuple(B.shape[-2:])


def _ldl_solve_kernel(xp, LD, pivots, B, hermitian):
    shape = _ldl_solve_shapes(LD, pivots, B)
    LD, pivots, B = host(LD), host(pivots), host(B)
    batch = shape[:-2]
    LD_, pivots_ = np.broadcast_to(LD, batch + LD.shape[-2:]), np.broadcast_to(pivots, batch + pivots.shape[-1:])
    B_ = np.broadcast_to(B, shape)
    sytrs = _lapack().get_lapack_funcs(_routine("trs", LD_, hermitian), (LD_,))
    X = np.zeros(shape, dtype=B.dtype)
    if LD.shape[-1] == 0:                   # (nothing to solve: SciPy's sytrs refuses a 0 × 0 factor)
        return xp.asarray(X)
    for index in np.ndindex(*batch):
        X[index] = sytrs(LD_[index], pivots_[index], B_[index], lower=1)[0]
    return xp.asarray(X)


def _ldl_solve_samples(op):
    # LAPACK's factors written out (the reference script has no SciPy to factor with): A = [[4, 1, 2],
    # [1, -3, 0.5], [2, 0.5, 3]] without interchanges, and [[0, 1], [1, 0]], one 2×2 block
    LD = tensor([[4.0, 0.0, 0.0], [0.25, -3.25, 0.0], [0.5, 0.0, 2.0]]).double()
    pivots = tensor([1, 2, 3], dtype=_INT32.name)
    block = tensor([[0.0, 0.0], [1.0, 0.0]]).double()
    return [SampleInput("(3,3), B (3,2)", LD, pivots, make_arg((3, 2), key=(op, 0), requires_grad=False)),
            SampleInput("(3,3), B batch (2,3,1)", LD, pivots, make_arg((2, 3, 1), key=(op, 1), requires_grad=False)),
            SampleInput("2×2 block, hermitian", block, tensor([-2, -2], dtype=_INT32.name),
                        make_arg((2, 3), key=(op, 2), requires_grad=False), hermitian=True)]


linalg_ldl_solve = defop(
    "linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
    kernel=_ldl_solve_kernel, meta=lambda LD, pivots, B, hermitian: MetaArray(_ldl_solve_shapes(LD, pivots, B),
                                                                              B.dtype),
    grads={"LD": _not_implemented("linalg_ldl_solve"), "pivots": None, "B": _not_implemented("linalg_ldl_solve")},
    backward_name="NotImplemented", differentiable=False, gradgrad=False, supports_complex=True,
    samples=_ldl_solve_samples,
    torch="torch.linalg.ldl_solve",
    doc="X with A X = B, from ldl_factor's (LD, pivots) of A (batches broadcast).")
