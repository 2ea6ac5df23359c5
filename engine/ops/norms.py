"""Norms (ATen's LinearAlgebra), PyTorch's composites over linalg_vector_norm (a reduction,
declared with the others in reduce.arithmetic) and the singular values: linalg_matrix_norm (1, inf: a vector norm then a max; 2, nuc: the singular values; fro: the
vector 2-norm), linalg_norm (vector or matrix by ord and dim), linalg_cond (the ratio of
extreme singular values, or ‖A‖‖A⁻¹‖), the deprecated nuclear_norm and frobenius_norm;
renorm (the slices along dim capped at a p-norm, a kernel with
derivatives.yaml's renorm_backward)."""
from __future__ import annotations

import math

from ..backends.meta import MetaArray
from ..creation import zeros
from ..errors import DtypeError
from ..messages import scalar_type_name
from ..shapes import normalize_dim
from ..warn_once import warn_once
from .decompositions import linalg_svdvals
from .determinants import linalg_inv_ex
from ._common import conj_of
from .pointwise.binary import where
from .pointwise.complex import real
from .pointwise.unary import nan_to_num, reciprocal
from .reduce.arithmetic import _norm_grad, _norm_kernel, check_norm_dtype, linalg_vector_norm, norm, sum
from .reduce.selection import amax, amin
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.view import permute, squeeze, unsqueeze

_INF = math.inf


# ---- matrix norms -----------------------------------------------------------------------------

def _matrix_dims(A, dim):
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {', '.join(map(str, dim))}")
    d0, d1 = normalize_dim(dim[0], A.ndim), normalize_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise DtypeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                         f"Got {scalar_type_name(A.dtype.np)}")
    return d0, d1


def _of_singular_values(A, d0, d1, keepdim, reduce):
    """reduce(svdvals) of the matrices in dims (d0, d1): PyTorch moves them to the end, and back with keepdim."""
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    out = reduce(linalg_svdvals(permute(A, rest + [d0, d1])))
    if keepdim:
        out = unsqueeze(unsqueeze(out, -1), -1)
        inverse = [0] * A.ndim
        for i, d in enumerate(rest + [d0, d1]):
            inverse[d] = i
        out = permute(out, inverse)
    return out


def _largest(x, dim, keepdim=False):
    """amax, with PyTorch's matrix_norm's value where there is nothing to take it over: 0, the least norm
    (the smallest of nothing, amin's, stays amin's error, as in PyTorch)."""
    if x.shape[dim] == 0:
        shape = list(x.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return zeros(tuple(shape), dtype=x.dtype, device=x.device)
    return amax(x, dim, keepdim)


def _matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    if isinstance(ord, str) and ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = list(dim)
    d0, d1 = _matrix_dims(A, dim)
    if dtype is not None:
        check_norm_dtype("linalg.matrix_norm", A.dtype.np, dtype.np)
        A = A.to(dtype)
    if isinstance(ord, str):
        if ord == "fro":
            return linalg_vector_norm(A, 2, [d0, d1], keepdim)
        if ord == "nuc":
            return _of_singular_values(A, d0, d1, keepdim, lambda s: sum(s, -1))
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    ord = float(ord)
    if abs(ord) not in (1.0, 2.0, _INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    extreme = _largest if ord > 0 else amin
    if abs(ord) == 2.0:
        return _of_singular_values(A, d0, d1, keepdim, lambda s: extreme(s, -1))
    if abs(ord) == _INF:        # the inf norm is the 1 norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return extreme(linalg_vector_norm(A, 1.0, [d0], keepdim), d1, keepdim)


def _matrix_norm_samples(op):
    x = make_arg((3, 4), key=(op, "x"), away_from=0.0)
    b = make_arg((2, 3, 3), key=(op, "b"), away_from=0.0)
    return [SampleInput("fro", x), SampleInput("nuc", x, "nuc"),
            SampleInput("2", x, 2), SampleInput("-2 batch", b, -2),
            SampleInput("1 batch", b, 1), SampleInput("-1", x, -1),
            SampleInput("inf", x, _INF), SampleInput("-inf batch", b, -_INF),
            SampleInput("nuc dim=(0,2) keepdim", b, "nuc", [0, 2], True),
            SampleInput("1 dim=(2,0)", b, 1, dim=[2, 0]),
            SampleInput("inf dim=(0,1) keepdim", b, _INF, [0, 1], True)]


linalg_matrix_norm = defop(
    "linalg_matrix_norm(Tensor A, Scalar ord='fro', int[] dim=[-2, -1], bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor",
    composite=_matrix_norm, samples=_matrix_norm_samples, torch="torch.linalg.matrix_norm",
    doc="The matrix norm of the matrices in dims `dim`: 'fro', 'nuc', ±1 (max/min column sum), ±2 (largest/"
        "smallest singular value), ±inf (max/min row sum).")


# ATen's deprecated nuclear_norm and frobenius_norm, kept for TorchScript: matrix_norm's 'nuc' and norm's 2
def _nuclear_norm(self, dim=(-2, -1), keepdim=False):
    warn_once("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
                              "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, "
                              "keepdim)` instead")
    return _matrix_norm(self, "nuc", dim, keepdim)


nuclear_norm = defop(
    "nuclear_norm(Tensor self, int[] dim=[-2, -1], bool keepdim=False) -> Tensor", composite=_nuclear_norm,
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0))),
                        SampleInput("(2,3,4) dim=(0,2) keepdim", make_arg((2, 3, 4), key=(op, 1)), [0, 2], True),
                        SampleInput("(3,2,2) keepdim kw", make_arg((3, 2, 2), key=(op, 2)), keepdim=True)],
    torch="lambda x, dim=None, keepdim=False: torch.nuclear_norm(x, keepdim) if dim is None else "
          "torch.nuclear_norm(x, dim, keepdim)",
    doc="The sum of the singular values of the matrices in dims `dim` (deprecated: linalg.matrix_norm(A, 'nuc')).")


def _frobenius_norm(self, dim, keepdim=False):
    warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will "
                                "be removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, "
                                "keepdim)` instead")
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    return norm(self, 2, dim, keepdim)


frobenius_norm = defop(
    "frobenius_norm(Tensor self, int[] dim, bool keepdim=False) -> Tensor", composite=_frobenius_norm,
    samples=lambda op: [SampleInput("(3,4) dim=(0,1)", make_arg((3, 4), key=(op, 0), away_from=0.0), [0, 1]),
                        SampleInput("(2,3,4) dim=-1 keepdim", make_arg((2, 3, 4), key=(op, 1), away_from=0.0), [-1],
                                    True),
                        SampleInput("(2,3,4) dim=(2,0)", make_arg((2, 3, 4), key=(op, 2), away_from=0.0), [2, 0])],
    torch="torch.frobenius_norm",
    doc="The 2-norm over at most two dims (deprecated: linalg.vector_norm(A, 2, dim)).")


def _norm(A, ord=None, dim=None, keepdim=False, dtype=None):
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dim}")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.ndim}D.")
    if isinstance(ord, str) or (ord is not None and (len(dim) == 2 if dim is not None else A.ndim == 2)):
        return _matrix_norm(A, ord, dim if dim is not None else [0, 1], keepdim, dtype)
    return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def _norm_samples(op):
    v = make_arg((5,), key=(op, "v"), away_from=0.0)
    x = make_arg((3, 4), key=(op, "x"), away_from=0.0)
    b = make_arg((2, 3, 4), key=(op, "b"), away_from=0.0)
    return [SampleInput("None vector", v), SampleInput("None matrix (flattened 2-norm)", x),
            SampleInput("None 3-D", b), SampleInput("3 vector", v, 3),
            SampleInput("fro matrix", x, "fro"), SampleInput("nuc matrix", x, "nuc"),
            SampleInput("inf matrix", x, _INF), SampleInput("2 matrix", x, 2),
            SampleInput("1 dim=1", b, 1, 1), SampleInput("-1 dim=(2,1) keepdim", b, -1, [2, 1], True),
            SampleInput("None dim=(0,2)", b, None, [0, 2])]


linalg_norm = defop(
    "linalg_norm(Tensor A, Scalar? ord=None, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
    "-> Tensor",
    composite=_norm, samples=_norm_samples, torch="torch.linalg.norm",
    doc="A vector norm (a 1-element dim, or a 1-D input) or a matrix norm (a 2-element dim, a 2-D input with ord, "
        "or a str ord); without ord, the 2-norm of the flattened input (over dim).")


# ---- cond --------------------------------------------------------------------------------------

def _cond(A, p=None):
    if p is not None and not (isinstance(p, str) and p in ("fro", "nuc")) and \
            (isinstance(p, str) or float(p) not in (1.0, -1.0, 2.0, -2.0, _INF, -_INF)):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    svd_based = p is None or (not isinstance(p, str) and abs(float(p)) == 2.0)
    if not svd_based and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.numel() == 0:      # PyTorch's _linalg_cond_empty_matrix: NumPy defines none, PyTorch gives 0
        return zeros(tuple(A.shape[:-2]), dtype=A.dtype.to_real(), device=A.device)
    if svd_based:
        s = linalg_svdvals(A)
        largest, smallest = s[..., :1], s[..., -1:]
        ratio = smallest / largest if p is not None and float(p) == -2.0 else largest / smallest
        return squeeze(ratio, -1)
    if p == "nuc":
        # PyTorch's: the nuclear norm's definition on the singular values, as matrix_norm of the inverse
        # would raise where A has an inf
        s = linalg_svdvals(A)
        return sum(s, -1) * sum(reciprocal(s), -1)
    # PyTorch's _linalg_cond_helper: a singular matrix's inverse is inf, so its condition number is inf
    inverse, info = linalg_inv_ex(A)
    inverse = where(unsqueeze(unsqueeze(info > 0, -1), -1), _INF, inverse)
    # (and 0 · inf, NaN, is inf too: PyTorch's nan_to_num_(INFINITY, INFINITY, -INFINITY), "for NumPy compatibility")
    return nan_to_num(_matrix_norm(A, p) * _matrix_norm(inverse, p), _INF, _INF, -_INF)


def _cond_samples(op):
    from .determinants import _invertible
    x = make_arg((3, 4), key=(op, "x"))
    # NOTE: PyTorch 2.13 cannot differentiate the orders that invert A (its _linalg_cond_helper fills the
    # inverse in place, which linalg_inv_ex's backward saved), so those samples compare values only
    a = _invertible(op, (3, 3)).detach()
    return [SampleInput("None", x), SampleInput("2 batch", make_arg((2, 3, 3), key=(op, "b")), 2),
            SampleInput("-2", x, -2), SampleInput("fro", a, "fro"), SampleInput("nuc", a, "nuc"),
            SampleInput("1", a, 1), SampleInput("-inf", a, -_INF)]


linalg_cond = defop(
    "linalg_cond(Tensor A, Scalar? p=None) -> Tensor", composite=_cond, samples=_cond_samples,
    torch="torch.linalg.cond",
    doc="The condition number ‖A‖ ‖A⁻¹‖ in the norm p (None or ±2: the ratio of extreme singular values, any shape).")


# ---- renorm ------------------------------------------------------------------------------------
# ATen's renorm: each slice along dim whose p-norm exceeds maxnorm scaled down to maxnorm / (norm + 1e-7);
# its own Node (RenormBackward0) with derivatives.yaml's renorm_backward

def _renorm_checks(self, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        # (C++ prints the double as %g does)
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if self.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
    d = normalize_dim(dim, self.ndim)
    return [i for i in range(self.ndim) if i != d]


def _renorm_kernel(xp, self, p, dim, maxnorm):
    reduce_dims = _renorm_checks(self, p, dim, maxnorm)
    norm = _norm_kernel(xp, self, p, reduce_dims, True, None)
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(self.dtype, copy=False)
    return self * factor


def _renorm_meta(self, p, dim, maxnorm):
    _renorm_checks(self, p, dim, maxnorm)
    return MetaArray(self.shape, self.dtype)


def _renorm_backward(grad, self, p, dim, maxnorm):
    reduce_dims = _renorm_checks(self, p, dim, maxnorm)
    norm = linalg_vector_norm(self, p, reduce_dims, True)
    # (the norm is real: a complex self's grad_output is Re(conj(self) grad))
    projected = conj_of(self) * grad
    if projected.dtype.is_complex:
        projected = real(projected)
    nb = _norm_grad(sum(projected, reduce_dims, True), self, norm, p, reduce_dims, True, None)
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * maxnorm
    return where(norm > maxnorm, factor * grad - (maxnorm * invnorm * invnorm) * nb, grad)


renorm = defop(
    "renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor",
    kernel=_renorm_kernel, meta=_renorm_meta, grads={"self": _renorm_backward}, supports_complex=True,
    samples=lambda op: [
        SampleInput("(3,4) p=2 dim=0", make_arg((3, 4), key=(op, 0)), 2, 0, 1.5),
        SampleInput("(2,3,2) p=1 dim=1", make_arg((2, 3, 2), key=(op, 1)), 1, 1, 2.0),
        SampleInput("p=3 dim=-1 none scaled", make_arg((3, 2), key=(op, 2), low=-0.3, high=0.3), 3, -1, 5.0)],
    torch="torch.renorm",
    doc="self with each slice along dim whose p-norm exceeds maxnorm scaled to norm maxnorm.")
