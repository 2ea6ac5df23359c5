"""A graph's passes as a list of agrad op calls: what `agrad export` maps to ONNX.

Every op call goes through the dispatcher; while a `Trace` is active each call is recorded
with its arguments in schema order and its result, nested calls (the ops a composite op is
written with, the ops of a backward formula) included. A backward pass run with
`create_graph=True` computes its gradients with agrad ops too (the formulas are written
with them so that they can be differentiated again), so the same trace holds the backward
graph, op by op.

NOTE: the dispatcher tells its observers (profilers) only which op starts and ends; the
trace needs the arguments and the result, so for the duration of a `Trace` it stands in
for `dispatcher._observed_call`, the one function every observed call goes through. An
engine hook that passed (op, args, result) to observers would replace this.
"""
from __future__ import annotations

from dataclasses import dataclass


class TraceUnavailable(RuntimeError):
    """This build of the engine has no place to trace op calls from."""


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
        self._depth = 0
        self._module = None
        self._saved = None

    # the observer protocol (profilers'): nothing to do per call here
    def op_start(self, op) -> None:
        pass

    def op_end(self, op) -> None:
        pass

    def __enter__(self) -> "Trace":
        try:
            from agrad.dispatcher import dispatcher as module
            self._saved = module._observed_call
            observers = module._observers
        except (ImportError, AttributeError) as exc:
            raise TraceUnavailable(f"this agrad engine cannot trace op calls ({exc})") from None
        self._module = module
        observers.append(self)
        module._observed_call = self._call
        return self

    def __exit__(self, *exc) -> None:
        module = self._module
        module._observed_call = self._saved
        module._observers.remove(self)

    def _call(self, op, kernel, keyset, args):
        record = OpCall(op.name, list(args), tuple(a.name for a in op.schema.arguments), depth=self._depth)
        self.calls.append(record)
        self._depth += 1
        try:
            result = kernel(op, keyset, args)
        finally:
            self._depth -= 1
        record.result = result
        for t in result if isinstance(result, (tuple, list)) else (result,):
            if t is not None:
                self.producers.setdefault(id(t), []).append(record)
        return result
