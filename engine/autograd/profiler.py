"""A profiler: times every op call (forward, through the dispatcher) and every
backward Node apply (through the engine). Off, it costs one empty-list check."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .. import watchers


@dataclass
class Event:
    name: str                  # op name ("mul") or Node name ("MulBackward0")
    phase: str                 # "forward": an op call outside backward; "backward": a Node apply
    start_s: float             # seconds since the profile started
    duration_s: float
    depth: int = 0             # nesting: ops called by other ops (composites, backward formulas)
    node: object = None        # the backward Node, for phase "backward"
    self_s: float = 0.0        # duration minus that of nested events


@dataclass
class profile:
    events: list = field(default_factory=list)

    def __enter__(self):
        self._t0 = time.perf_counter()
        self._stack = []
        watchers.op_observers.append(self)
        watchers.node_observers.append(self)
        return self

    def __exit__(self, *exc):
        watchers.op_observers.remove(self)
        watchers.node_observers.remove(self)
        return False

    # dispatcher side
    def op_start(self, op, args):
        self._stack.append([op.name, time.perf_counter(), 0.0])

    def op_end(self, op, result):
        name, start, child = self._stack.pop()
        duration = time.perf_counter() - start
        in_backward = any(frame[0] is None for frame in self._stack)
        self.events.append(Event(name, "backward" if in_backward else "forward", start - self._t0, duration,
                                 depth=len(self._stack), self_s=duration - child))
        if self._stack:
            self._stack[-1][2] += duration

    # engine side: the ops a Node's formula calls nest inside it
    def node_start(self, node):
        self._stack.append([None, time.perf_counter(), 0.0])

    def node_end(self, node):
        _, start, child = self._stack.pop()
        duration = time.perf_counter() - start
        self.events.append(Event(node.name(), "backward", start - self._t0, duration,
                                 depth=len(self._stack), node=node, self_s=duration - child))
        if self._stack:
            self._stack[-1][2] += duration
