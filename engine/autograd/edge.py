"""Edge(function, input_nr): "this gradient goes to input `input_nr` of `function`"; and
GradientEdge(node, output_nr), torch.autograd.graph's public name of one, which backward and grad
accept in place of a tensor (the gradient flowing into that input of that Node)."""
from __future__ import annotations

from typing import NamedTuple


class Edge:
    __slots__ = ("function", "input_nr")

    def __init__(self, function=None, input_nr: int = 0):
        self.function = function
        self.input_nr = input_nr

    def is_valid(self) -> bool:
        return self.function is not None

    def __iter__(self):            # `fn, nr = edge`, as next_functions entries unpack
        yield self.function
        yield self.input_nr

    def __eq__(self, other):
        return isinstance(other, Edge) and self.function is other.function and self.input_nr == other.input_nr

    def __hash__(self):
        return hash((id(self.function), self.input_nr))

    def __repr__(self):
        name = self.function.name() if self.function is not None else None
        return f"Edge({name}, {self.input_nr})"


INVALID_EDGE = Edge()


class GradientEdge(NamedTuple):
    node: object
    output_nr: int
