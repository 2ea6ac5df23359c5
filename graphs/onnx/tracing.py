"""A graph's passes as a list of agrad op calls: what `agrad export` maps to ONNX.

Every op call goes through the dispatcher; while a `Trace` is active each call is recorded
with its arguments in schema order and its result, nested calls (the ops a composite op is
written with, the ops of a backward formula) included. A backward pass run with
`create_graph=True` computes its gradients with agrad ops too (the formulas are written
with them so that they can be differentiated again), so the same trace holds the backward
graph, op by op.

A `Trace` is one of the engine's op observers (agrad.watchers): told each call's arguments
before it runs and its result after.
"""
from __future__ import annotations

from dataclasses import dataclass

from agrad import watchers


@dataclass
class OpCall:
    op: str                     # the op's name (`mul`, `conv2d`, `convolution_backward_input`)
    args: list                  # in schema order: tensors, numbers, lists, None
    names: tuple                # the schema's argument names
    result: object = None       # a Tensor, a tuple of them, or a list
    depth: int = 0              # 0: called by the graph or the engine; >0: inside another op


class Trace:
    def __init__(self):
        self.calls: list[OpCall] = []
        self.producers: dict[int, list[OpCall]] = {}    # id(tensor) -> the calls that returned it, outermost last
        self._open: list[OpCall] = []                   # the calls running now, innermost last

    def __enter__(self) -> "Trace":
        watchers.op_observers.append(self)
        return self

    def __exit__(self, *exc) -> None:
        watchers.op_observers.remove(self)

    def op_start(self, op, args) -> None:
        record = OpCall(op.name, list(args), tuple(a.name for a in op.schema.arguments), depth=len(self._open))
        self.calls.append(record)
        self._open.append(record)

    def op_end(self, op, result) -> None:
        record = self._open.pop()
        record.result = result
        # an op that returns an argument itself (contiguous of a contiguous tensor, conj of a real one)
        # made nothing: the tensor stays its maker's (else its translation would read itself)
        read = {id(v) for arg in record.args for v in (arg if isinstance(arg, (list, tuple)) else (arg,))}
        for t in result if isinstance(result, (tuple, list)) else (result,):
            if t is not None and id(t) not in read:
                self.producers.setdefault(id(t), []).append(record)
