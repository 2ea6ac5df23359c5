"""Distances (ATen's Distance): cosine_similarity, pairwise_distance and pdist, composites
written as PyTorch writes them, so they record the same nodes (pdist's last node is the norm
of the pairs' differences, where PyTorch's is its kernel's, PdistBackward0).
"""
from __future__ import annotations

import numpy as np

from ... import creation, dtypes
from ...messages import scalar_type_name
from ...shapes import broadcast_shapes
from ..conversion import detach, to
from ..pointwise.binary import clamp_min
from ..reduce.arithmetic import (
    norm,
    sum,  # noqa: A004
)
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.advanced_indexing import index_select
from ..shape.view import expand

# ---- distances ------------------------------------------------------------------------------


def _cosine_similarity(x1, x2, dim, eps):
    common = dtypes.result_type([x1._data, x2._data])
    if common.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_type_name(common)}")
    common = dtypes.from_numpy(common)
    # as ATen: integer inputs are converted to the common dtype first
    x1 = x1 if x1.dtype == common else to(x1, dtype=common)
    x2 = x2 if x2.dtype == common else to(x2, dtype=common)
    shape = broadcast_shapes(x1.shape, x2.shape)
    if tuple(x1.shape) != tuple(shape):
        x1 = expand(x1, list(shape))
    if tuple(x2.shape) != tuple(shape):
        x2 = expand(x2, list(shape))
    # As ATen: each input divided by its own norm, the norms clamped at eps without recording the clamp
    # (PyTorch clamps a clone in place under no_grad): the gradient flows as through the unclamped norm
    n1 = norm(x1, 2, [dim], True)
    n2 = norm(x2, 2, [dim], True)
    n1 = n1 + detach(clamp_min(n1, eps) - n1)
    n2 = n2 + detach(clamp_min(n2, eps) - n2)
    return sum((x1 / n1) * (x2 / n2), [dim])


cosine_similarity = defop(
    "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor",
    composite=_cosine_similarity,
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1))),
        SampleInput("broadcast dim=-1", make_arg((2, 1, 4), key=(op, 2)), make_arg((3, 4), key=(op, 3)), -1),
        SampleInput("(5,) dim=0", make_arg((5,), key=(op, 4)), make_arg((5,), key=(op, 5)), 0)],
    torch="torch.nn.functional.cosine_similarity",
    doc="<x1, x2> / (max(|x1|, eps) max(|x2|, eps)) along dim, the inputs broadcast.")


def _pairwise_distance(x1, x2, p, eps, keepdim):
    innermost = max(x1.ndim, x2.ndim) - 1
    return norm(x1 - x2 + eps, p, [innermost], keepdim)


pairwise_distance = defop(
    "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor",
    composite=_pairwise_distance,
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), make_arg((3, 4), key=(op, 1))),
        SampleInput("p=1 keepdim broadcast", make_arg((3, 4), key=(op, 2)), make_arg((4,), key=(op, 3)), 1.0,
                    keepdim=True),
        SampleInput("(5,) p=3", make_arg((5,), key=(op, 4)), make_arg((5,), key=(op, 5)), 3.0),
        SampleInput("0-d", make_arg((), key=(op, 6)), make_arg((), key=(op, 7)))],
    torch="torch.nn.functional.pairwise_distance",
    doc="The p-norm of x1 - x2 + eps over the last dimension.")


# ---- pdist ----------------------------------------------------------------------------------

def _pdist(input, p):
    # ATen's pdist checks; its kernel (_pdist_forward) is the p-norm of each pair's difference
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    first, second = np.triu_indices(input.shape[0], 1)
    pairs = (index_select(input, 0, creation.tensor(first, dtype="int64", device=input.device))
             - index_select(input, 0, creation.tensor(second, dtype="int64", device=input.device)))
    return norm(pairs, p, [1])


pdist = defop(
    "pdist(Tensor input, float p=2) -> Tensor",
    composite=_pdist, gradgrad=False,
    samples=lambda op: [
        SampleInput("(4,3)", make_arg((4, 3), key=(op, 0))),
        SampleInput("(5,2) p=1", make_arg((5, 2), key=(op, 1)), 1.0),
        SampleInput("(3,4) p=3.5", make_arg((3, 4), key=(op, 2)), 3.5),
        SampleInput("(3,2) p=inf", make_arg((3, 2), key=(op, 3)), float("inf")),
        SampleInput("(1,3) no pairs", make_arg((1, 3), key=(op, 4)))],
    torch="torch.nn.functional.pdist",
    doc="The p-norm distance between each pair of rows i < j of an (N, M) input, as one (N (N - 1) / 2,) vector "
        "in row-major order of the pairs.")
