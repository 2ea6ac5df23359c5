"""Products beyond linalg's primitives: outer, baddbmm, and einsum.

einsum is a composite: it resolves `...`, the implicit output and size-1 broadcasting,
then calls `_einsum`, one kernel on an explicit equation whose backward is einsum
again — the gradient of operand k contracts grad with the other operands back to k's
subscripts (a repeated subscript through an identity matrix, a subscript only k has
through an expand) — so every order of derivative is an einsum.
"""
from __future__ import annotations

import string

import numpy as np

from ..backends.meta import MetaArray
from ..shapes import broadcast_shapes
from .linalg import bmm
from .nn import checked
from .registry import defop, get_info
from .samples import SampleInput, make_arg
from .shape import expand, reshape, transpose

# ---- outer, baddbmm ------------------------------------------------------------------------------

def _outer(self, vec2):
    for name, t in (("self", self), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return reshape(self, [-1, 1]) * vec2


outer = defop(
    "outer(Tensor self, Tensor vec2) -> Tensor",
    composite=_outer,
    samples=lambda op: [SampleInput("(3)x(4)", make_arg((3,), key=(op, 0)), make_arg((4,), key=(op, 1))),
                        SampleInput("(1)x(2)", make_arg((1,), key=(op, 2)), make_arg((2,), key=(op, 3)))],
    torch="torch.outer", doc="self[i] * vec2[j]: the outer product of two vectors.")


def _baddbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor")
    b, n, k = batch1.shape
    if batch2.shape[0] != b or batch2.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    if not (self.dtype == batch1.dtype == batch2.dtype):
        raise RuntimeError(f"expected scalar type {batch1.dtype} but found "
                           f"{self.dtype if self.dtype != batch1.dtype else batch2.dtype}")
    out = (b, n, batch2.shape[2])
    if broadcast_shapes(self.shape, out) != out:
        raise RuntimeError(f"The expanded size of the tensor ({out[-1]}) must match the existing size "
                           f"({self.shape[-1]}) at non-singleton dimension 2.  Target sizes: {list(out)}.  "
                           f"Tensor sizes: {list(self.shape)}")
    return MetaArray(out, batch1.dtype)


def _baddbmm_kernel(xp, self, batch1, batch2, beta, alpha):
    prod = xp.matmul(batch1, batch2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:       # NOTE: as addmm, PyTorch ignores self when beta == 0 (nan in it does not propagate)
        return prod.astype(batch1.dtype, copy=False)
    return (prod + (self if beta == 1 else self * beta)).astype(batch1.dtype, copy=False)


def _scaled(t, factor):
    return t if factor == 1 else t * factor


baddbmm = defop(
    "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    kernel=checked(_baddbmm_meta, _baddbmm_kernel), meta=_baddbmm_meta,
    grads={"self": lambda grad, beta: _scaled(grad, beta),
           "batch1": lambda grad, batch2, alpha: _scaled(bmm(grad, transpose(batch2, 1, 2)), alpha),
           "batch2": lambda grad, batch1, alpha: _scaled(bmm(transpose(batch1, 1, 2), grad), alpha)},
    samples=lambda op: [
        SampleInput("(2,3,4)+(2,3,2)@(2,2,4)", make_arg((2, 3, 4), key=(op, 0)), make_arg((2, 3, 2), key=(op, 1)),
                    make_arg((2, 2, 4), key=(op, 2))),
        SampleInput("broadcast self, beta, alpha", make_arg((4,), key=(op, 3)), make_arg((2, 3, 2), key=(op, 4)),
                    make_arg((2, 2, 4), key=(op, 5)), beta=0.5, alpha=-2.0)],
    torch="torch.baddbmm", doc="beta * self + alpha * (batch1 @ batch2) for 3-D batches; self broadcasts.")


# ---- einsum ----------------------------------------------------------------------------------------

_LETTERS = string.ascii_letters


def _parse(equation: str):
    """(input subscripts, output subscripts or None) with spaces removed; '...' kept."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    for ch in eq:
        if ch not in _LETTERS and ch not in ".,->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(ch)} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
    return lhs.split(","), (rhs if arrow else None)


def _normalize(equation: str, shapes):
    """An explicit equation (no '...', explicit output) for operands of `shapes`,
    and each subscript's size (size-1 operands are broadcast to it)."""
    terms, out = _parse(equation)
    if len(terms) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(shapes) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    used = set(equation) & set(_LETTERS)
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for term, shape in zip(terms, shapes):
        letters = len(term.replace("...", ""))
        if "..." in term:
            n_ell = max(n_ell, len(shape) - letters)
        elif letters != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {terms.index(term)} and no "
                               f"ellipsis was given")
    ell = "".join(spare[:n_ell])
    explicit = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            k = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ell[n_ell - k:] if k else "")
        explicit.append(term)
    if out is None:
        counts = {c: sum(t.count(c) for t in explicit) for c in set("".join(explicit))}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    seen = {}
    for term, shape in zip(explicit, shapes):
        for c, n in zip(term, shape):
            seen.setdefault(c, set()).add(n)
    size = {}
    for c, ns in seen.items():
        big = ns - {1}
        if len(big) > 1:
            raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes: subscript '{c}' has "
                               f"sizes {sorted(big)}")
        size[c] = big.pop() if big else 1
    for c in out:
        if c not in size:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                               f"operand")
        if out.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    return ",".join(explicit) + "->" + out, explicit, size


def _einsum(equation, tensors):
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    eq, terms, size = _normalize(equation, [tuple(t.shape) for t in tensors])
    operands = []
    for term, t in zip(terms, tensors):
        want = [size[c] for c in term]
        operands.append(t if list(t.shape) == want else expand(t, want))
    return _einsum_op(eq, operands)


def _einsum_meta(equation, tensors):
    terms, out = _parse(equation)
    dt = tensors[0].dtype
    for t in tensors:
        if t.dtype != dt:
            raise RuntimeError(f"expected scalar type {dt} but found {t.dtype}")
    size = {}
    for term, t in zip(terms, tensors):
        size.update(zip(term, t.shape))
    return MetaArray(tuple(size[c] for c in out), dt)


def _einsum_kernel(xp, equation, tensors):
    _einsum_meta(equation, tensors)
    return xp.asarray(xp.einsum(equation, *tensors, optimize=len(tensors) > 2))


def _einsum_grads(grad, equation, tensors):
    terms, out = _parse(equation)
    size = {}
    for term, t in zip(terms, tensors):
        size.update(zip(term, t.shape))
    spare = iter(c for c in _LETTERS if c not in equation)
    grads = []
    for k, (term, t) in enumerate(zip(terms, tensors)):
        target, eyes, eye_terms = "", [], []
        for c in term:
            if c in target:                 # a repeated subscript: its diagonal, through an identity matrix
                fresh = next(spare)
                eyes.append(_identity(size[c], grad))
                eye_terms.append(c + fresh)
                c = fresh
            target += c
        others = [s for j, s in enumerate(terms) if j != k]
        present = set(out).union(*others, *eye_terms)
        available = "".join(c for c in target if c in present)
        g = _einsum_op(",".join([out] + others + eye_terms) + "->" + available,
                       [grad] + [x for j, x in enumerate(tensors) if j != k] + eyes)
        if available != target:            # subscripts only operand k has: summed, so the gradient is constant
            g = expand(reshape(g, [size[c] if c in present else 1 for c in target]), [size[c] for c in target])
        grads.append(g)
    return grads


def _identity(n, like):
    from ..creation import tensor
    return tensor(np.eye(n), dtype=like.dtype, device=like.device)


_einsum_op = defop(
    "_einsum(str equation, Tensor[] tensors) -> Tensor",
    kernel=_einsum_kernel, meta=_einsum_meta,
    grads={"tensors": _einsum_grads}, backward_name="EinsumBackward0",
    samples=lambda op: [SampleInput("ij,jk->ik", "ij,jk->ik", [make_arg((2, 3), key=(op, 0)),
                                                              make_arg((3, 2), key=(op, 1))])],
    torch="torch.einsum",
    doc="einsum on an explicit equation (no '...', explicit output, no broadcasting); einsum's kernel.")


def _einsum_samples(op):
    def args(*shapes, k=0):
        return [make_arg(s, key=(op, k, i)) for i, s in enumerate(shapes)]
    return [SampleInput("matmul", "ij,jk->ik", args((2, 3), (3, 4), k=0)),
            SampleInput("batched bmm", "bij,bjk->bik", args((2, 2, 3), (2, 3, 2), k=1)),
            SampleInput("trace", "ii", args((3, 3), k=2)),
            SampleInput("diagonal", "ii->i", args((3, 3), k=3)),
            SampleInput("sum over a subscript only one operand has", "ij,j->", args((2, 3), (3,), k=4)),
            SampleInput("implicit output", "ij,jk", args((2, 3), (3, 2), k=5)),
            SampleInput("ellipsis broadcast", "...ij,...jk->...ik", args((2, 1, 2, 3), (3, 3, 2), k=6)),
            SampleInput("outer, spaces", "i, j -> ij", args((2,), (3,), k=7)),
            SampleInput("three operands", "ab,bc,cd->ad", args((2, 3), (3, 2), (2, 2), k=8)),
            SampleInput("transpose", "ij->ji", args((2, 3), k=9)),
            SampleInput("size-1 broadcast", "ij,ij->i", args((2, 1), (2, 3), k=10))]


einsum = defop(
    "einsum(str equation, Tensor[] tensors) -> Tensor",
    composite=_einsum, samples=_einsum_samples,
    torch="torch.einsum",
    doc="Einstein summation: einsum('ij,jk->ik', a, b) or einsum('ij,jk->ik', [a, b]). Subscripts a-z/A-Z, "
        "'...' for broadcast dimensions, an implicit output (subscripts used once, in order) without '->'.")


def _operands_as_arguments(generated):
    """torch.einsum's calling forms: the operands one by one, or one list of them."""
    def einsum(equation, *tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return generated(equation, list(tensors))
    einsum.__name__ = einsum.__qualname__ = generated.__name__
    einsum.__doc__ = generated.__doc__
    return einsum


einsum = get_info("einsum").entry.function = _operands_as_arguments(einsum)
