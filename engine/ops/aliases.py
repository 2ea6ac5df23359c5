"""PyTorch's other spellings of existing ops: clip (clamp, NumPy's name) and floor_divide
(div with rounding_mode="floor", the `//` operator). Composites, so each has its target's
kernels and gradients, as PyTorch's aliases do."""
from __future__ import annotations

from .. import dtypes
from .binary_extra import clamp
from .pointwise import div
from .registry import defop
from .samples import SampleInput, make_arg

clip = defop(
    "clip(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    composite=lambda self, min=None, max=None: clamp(self, min, max),  # noqa: A002 — PyTorch's names
    wraps_numbers=True,
    samples=lambda op: [SampleInput("scalar min,max", make_arg((3, 4), key=(op, 0)), -0.5, 0.5),
                        SampleInput("max only", make_arg((3, 4), key=(op, 1)), None, 0.5),
                        SampleInput("tensor bounds", make_arg((3, 4), key=(op, 2)),
                                    make_arg((3, 1), key=(op, 3), low=-1.5, high=-0.1),
                                    make_arg((4,), key=(op, 4), low=0.1, high=1.5))],
    torch="torch.clip", doc="clamp, NumPy's name.")


def _floor_divide_samples(op):
    ints = make_arg((6,), key=(op, 0), low=-9, high=9, integer=True, dtype=dtypes.int64)
    return [SampleInput("float", make_arg((3, 4), key=(op, 1)), make_arg((4,), key=(op, 2), away_from=0.0)),
            SampleInput("int64", ints, make_arg((6,), key=(op, 3), low=1, high=4, integer=True, dtype=dtypes.int64)),
            SampleInput("int64 // number", ints, 2)]


floor_divide = defop(
    "floor_divide(Tensor self, Tensor other) -> Tensor",
    composite=lambda self, other: div(self, other, rounding_mode="floor"), wraps_numbers=True,
    samples=_floor_divide_samples, torch="torch.floor_divide",
    doc="self / other rounded down (div with rounding_mode='floor'); integers stay integers.")
