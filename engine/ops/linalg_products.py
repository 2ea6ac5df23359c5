"""torch.linalg's products and views, composites over other ops as in ATen's LinearAlgebra:
linalg_multi_dot (mm in the cheapest order, PyTorch's matrix_chain_order), linalg_vecdot (the
sum of x·y along dim; vdot, the op, for two vectors), linalg_diagonal (diagonal over the last
two dimensions by default), linalg_vander (the Vandermonde matrix, running products); tensordot (one mm of the
permuted, flattened operands, as ATen's), inner (tensordot over the last dims) and the deprecated
chain_matmul (multi_dot)."""
from __future__ import annotations

import math

from ..backends.meta import MetaArray
from ..errors import DtypeError
from ..memory_formats import contiguous_format
from ..warn_once import warn_once
from ._common import conj_of
from .conversion import clone
from ..messages import scalar_type_name
from ..shapes import normalize_dim
from .factories import ones_like
from .linalg import check_vectors, mm
from .reduce.arithmetic import sum
from .reduce.cumulative import cumprod
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.diagonal import diagonal
from .shape.join import cat
from .shape.rearrange import _varargs
from .shape.view import expand, permute, reshape, unsqueeze

# ---- multi_dot ----------------------------------------------------------------------------------

def _chain_order(shapes):
    """PyTorch's matrix_chain_order: the split of each sub-chain with the fewest multiplications
    (Cormen et al. 15.2; the first of equal costs)."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(tensors, split, i, j):
    # NOTE: a recursion over the chain's split tree (depth < number of operands), not over a graph
    if i == j:
        return tensors[i]
    k = split[i][j]
    return mm(_chain(tensors, split, i, k), _chain(tensors, split, k + 1, j))


def _multi_dot(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = tensors[0].ndim == 1, tensors[-1].ndim == 1
    for i, t in enumerate(tensors):
        if i in (0, n - 1) and t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {'first' if i == 0 else 'last'} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
        if 0 < i < n - 1 and t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise DtypeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                             f"{scalar_type_name(tensors[0].dtype.np)} and tensor {i} is {scalar_type_name(t.dtype.np)}")
    mats = list(tensors)
    if first_1d:
        mats[0] = unsqueeze(mats[0], 0)
    if last_1d:
        mats[-1] = unsqueeze(mats[-1], -1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    if n == 2:
        result = mm(mats[0], mats[1])
    elif n == 3:
        a, b = mats[0].shape
        c, d = mats[2].shape
        # PyTorch's: (AB)C costs a·c·(b + d), A(BC) costs b·d·(a + c)
        result = mm(mats[0], mm(mats[1], mats[2])) if a * c * (b + d) > b * d * (a + c) else \
            mm(mm(mats[0], mats[1]), mats[2])
    else:
        result = _chain(mats, _chain_order([tuple(m.shape) for m in mats]), 0, n - 1)
    # PyTorch views the product as the output's shape in every case (ViewBackward0), vectors' dimensions dropped
    shape = ([] if first_1d else [result.shape[0]]) + ([] if last_1d else [result.shape[1]])
    return reshape(result, shape)


def _multi_dot_samples(op):
    def args(*shapes, k):
        return [make_arg(s, key=(op, k, i)) for i, s in enumerate(shapes)]
    return [SampleInput("two", args((2, 3), (3, 4), k=0)),
            SampleInput("three, A(BC)", args((4, 2), (2, 5), (5, 1), k=1)),
            SampleInput("three, (AB)C", args((1, 5), (5, 2), (2, 4), k=2)),
            SampleInput("four, chain order", args((3, 4), (4, 2), (2, 5), (5, 2), k=3)),
            SampleInput("vector ends", args((3,), (3, 4), (4, 2), (2,), k=4)),
            SampleInput("first vector", args((3,), (3, 4), (4, 2), k=5)),
            SampleInput("last vector", args((2, 3), (3, 4), (4,), k=6))]


linalg_multi_dot = defop(
    "linalg_multi_dot(Tensor[] tensors) -> Tensor", composite=_multi_dot, samples=_multi_dot_samples,
    torch="torch.linalg.multi_dot",
    doc="The product of a chain of matrices in the order with the fewest multiplications; the first and last "
        "may be vectors (a row and a column).")


# ---- vecdot, diagonal ---------------------------------------------------------------------------

def _vdot_meta(self, other):
    check_vectors(self, other)
    if self.dtype != other.dtype:
        raise DtypeError(f"vdot: expected both vectors to have same dtype, but found {scalar_type_name(self.dtype)} "
                         f"and {scalar_type_name(other.dtype)}")
    return MetaArray((), self.dtype)


def _vdot_kernel(xp, self, other):
    _vdot_meta(self, other)
    return xp.asarray(xp.vdot(self, other))


vdot = defop(
    "vdot(Tensor self, Tensor other) -> Tensor",
    kernel=_vdot_kernel, meta=_vdot_meta, supports_complex=True,
    # derivatives.yaml: grad.conj() * other and grad * self
    grads={"self": lambda grad, other: conj_of(grad) * other, "other": lambda grad, self: grad * self},
    samples=lambda op: [SampleInput("(4,)", make_arg((4,), key=(op, 0)), make_arg((4,), key=(op, 1)))],
    torch="torch.vdot", doc="Σ conj(self)·other of two vectors.")


def _vecdot(x, y, dim=-1):
    if x.dtype != y.dtype:
        raise DtypeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                         f"{scalar_type_name(x.dtype.np)} and y of type {scalar_type_name(y.dtype.np)} instead")
    if x.ndim == 1 and y.ndim == 1:         # PyTorch's linalg_vecdot: two vectors are vdot
        return vdot(x, y)
    return sum(conj_of(x) * y, dim)


linalg_vecdot = defop(
    "linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor", composite=_vecdot,
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1))),
                        SampleInput("(2,4) broadcast (4,)", make_arg((2, 4), key=(op, 2)),
                                    make_arg((4,), key=(op, 3))),
                        SampleInput("dim=0", make_arg((3, 2), key=(op, 4)), make_arg((3, 2), key=(op, 5)), dim=0)],
    torch="torch.linalg.vecdot", doc="Σ x·y along dim, the other dimensions broadcast.")

linalg_diagonal = defop(
    "linalg_diagonal(Tensor A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
    composite=lambda A, offset=0, dim1=-2, dim2=-1: diagonal(A, offset, dim1, dim2),
    samples=lambda op: [SampleInput("(2,3,3)", make_arg((2, 3, 3), key=(op, 0))),
                        SampleInput("offset=1 (3,4)", make_arg((3, 4), key=(op, 1)), offset=1),
                        SampleInput("dim1=0 dim2=2", make_arg((3, 2, 3), key=(op, 2)), dim1=0, dim2=2)],
    torch="torch.linalg.diagonal", doc="diagonal over dims (-2, -1) by default: the diagonals of a batch of matrices.")


def _vander(x, N=None):
    """PyTorch's composite: a column of ones, then the running products of x (cumprod), so the gradient
    is cumprod's."""
    if x.dtype.category == 0:           # bool: floating, complex and integer tensors are taken
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{scalar_type_name(x.dtype.np)}")
    x = unsqueeze(x, -1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = cumprod(expand(unsqueeze(x, -1), list(x.shape) + [n - 1]), -1)
    return cat([ones_like(powers[..., :1]), powers], -1)


linalg_vander = defop(
    "linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor", composite=_vander,
    samples=lambda op: [SampleInput("(4,)", make_arg((4,), key=(op, 0))),
                        SampleInput("(2,3) N=5", make_arg((2, 3), key=(op, 1)), N=5)],
    torch="torch.linalg.vander", doc="The Vandermonde matrix: x's powers 0 … N-1 along a new last dimension.")


# ---- tensordot, inner, chain_matmul -------------------------------------------------------------

def _tensordot(self, other, dims_self, dims_other):
    # ATen's tensordot: a contracted dim of size 1 on one side summed away on the other, both operands
    # permuted (free dims, then contracted) and reshaped to matrices, one mm, reshaped to the free dims
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype != other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, contracted = self, other, 1
    for d1, d2 in zip(dims_self, dims_other):
        s1, s2 = self.shape[d1], other.shape[d2]
        if s2 == 1:
            t1 = sum(t1, [d1], True)
        elif s1 == 1:
            t2 = sum(t2, [d2], True)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {d1} and "
                               f"second has size {s2} in dim {d2}")
        else:
            contracted *= s1
    c1 = {normalize_dim(d, self.ndim) for d in dims_self}
    c2 = {normalize_dim(d, other.ndim) for d in dims_other}
    free1 = [i for i in range(self.ndim) if i not in c1]
    free2 = [i for i in range(other.ndim) if i not in c2]
    rsizes = [t1.shape[i] for i in free1] + [t2.shape[i] for i in free2]
    t1 = reshape(permute(t1, free1 + list(dims_self)), [math.prod(t1.shape[i] for i in free1), contracted])
    t2 = reshape(permute(t2, list(dims_other) + free2), [contracted, math.prod(t2.shape[i] for i in free2)])
    return reshape(mm(t1, t2), rsizes)


_tensordot_op = defop(
    "tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor", composite=_tensordot,
    samples=lambda op: [
        SampleInput("dims=2", make_arg((2, 3, 4), key=(op, 0)), make_arg((3, 4, 5), key=(op, 1)), dims=2),
        SampleInput("dims lists", make_arg((3, 4, 2), key=(op, 2)), make_arg((4, 3), key=(op, 3)),
                    dims=([1, 0], [0, 1])),
        SampleInput("dims=0 (outer)", make_arg((2,), key=(op, 4)), make_arg((3,), key=(op, 5)), dims=0),
        SampleInput("size-1 contracted dim", make_arg((2, 1), key=(op, 6)), make_arg((4, 3), key=(op, 7)),
                    dims=([1], [0]))],
    torch="torch.tensordot",
    doc="The sum of products of self and other over the dims paired in dims_self and dims_other, the free dims "
        "of self then other as the result's.")


def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: dims an int n (self's last n against other's first n) or two lists of dims."""
    if out is not None:
        raise TypeError("tensordot(): out= is not supported")
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    for position, (name, d) in enumerate((("dims_self", dims_a), ("dims_other", dims_b)), 3):
        if not isinstance(d, (tuple, list)):       # (the binding's message: a lone int is no int[] here)
            raise TypeError(f"tensordot(): argument '{name}' (position {position}) must be tuple of ints, not "
                            f"{type(d).__name__}")
    return _tensordot_op(a, b, list(dims_a), list(dims_b))


tensordot.op = _tensordot_op.op
_tensordot_op.op.function = tensordot


def _inner(self, other):
    # ATen's inner: a product where either is 0-d, else tensordot over the last dims
    if self.ndim == 0 or other.ndim == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(self.shape)} and {list(other.shape)}")
    return _tensordot(self, other, [-1], [-1])


inner = defop(
    "inner(Tensor self, Tensor other) -> Tensor", composite=_inner,
    samples=lambda op: [
        SampleInput("vectors", make_arg((4,), key=(op, 0)), make_arg((4,), key=(op, 1))),
        SampleInput("(2,3)x(4,3)", make_arg((2, 3), key=(op, 2)), make_arg((4, 3), key=(op, 3))),
        SampleInput("(2,2,3)x(3,)", make_arg((2, 2, 3), key=(op, 4)), make_arg((3,), key=(op, 5))),
        SampleInput("0-d", make_arg((), key=(op, 6)), make_arg((2, 3), key=(op, 7)))],
    torch="torch.inner", doc="The sum of products over the last dimensions of self and other "
                             "(shape self.shape[:-1] + other.shape[:-1]); a product where either is 0-d.")


def _chain_matmul(matrices):
    warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
                              "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
                              "rather than multiple parameters.")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return clone(matrices[0], memory_format=contiguous_format)
    return _multi_dot(matrices)


def _one_or_more(fn):
    """torch.chain_matmul(*matrices): none is PyTorch's error, not the dispatcher's (an empty Tensor[])."""
    def chain_matmul(*matrices):
        if not matrices or (len(matrices) == 1 and isinstance(matrices[0], (list, tuple)) and not matrices[0]):
            raise RuntimeError("chain_matmul(): Expected one or more matrices")
        return fn(*matrices)
    chain_matmul.__doc__, chain_matmul.__module__, chain_matmul.op = fn.__doc__, "agrad", fn.op
    fn.op.function = chain_matmul
    return chain_matmul


chain_matmul = _one_or_more(_varargs(defop(
    "chain_matmul(Tensor[] matrices) -> Tensor", composite=_chain_matmul,
    samples=lambda op: [SampleInput(s.name, s.args[0]) for s in _multi_dot_samples(op)
                        if "vector" not in s.name] + [SampleInput("one", [make_arg((2, 3), key=(op, 9))])],
    torch="lambda matrices: torch.chain_matmul(*matrices)",
    doc="The deprecated torch.chain_matmul(*matrices): linalg.multi_dot of 2-D matrices (one: a contiguous "
        "copy)."), "chain_matmul"))
