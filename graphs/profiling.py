"""`--profile`: per YAML node forward time and per backward Node time, Caffe-style
(self time, calls), with each call's start for `--trace`, after `WARMUP_PASSES`
uncounted passes.

Forward times are taken around each node by the executor; backward times come
from the engine's profiler, whose Node events carry the YAML node in metadata.
"""
from __future__ import annotations

import contextlib
import time

import agrad

from .executor import node_name
from .results import ProfileRecord

# Passes run before a profile is taken and not counted (Caffe's `time` does one):
# the first call of each kernel pays for imports, caches and allocations.
WARMUP_PASSES = 1


class ProfileCollector:
    def __init__(self, runner):
        self.runner = runner
        self.origin = time.perf_counter()     # every start offset is measured from here
        self.rows: dict[tuple[str, str, str], ProfileRecord] = {}

    def row(self, node: str, op: str, phase: str, line: int | None) -> ProfileRecord:
        key = (node, op, phase)
        if key not in self.rows:
            self.rows[key] = ProfileRecord(node=node, op=op, phase=phase, calls=0, self_ms=0.0, line=line)
        return self.rows[key]

    def add(self, node: str, op: str, phase: str, line: int | None, start_s: float, seconds: float) -> None:
        record = self.row(node, op, phase, line)
        record.calls += 1
        record.self_ms += seconds * 1e3
        record.start_ms.append((start_s - self.origin) * 1e3)
        record.duration_ms.append(seconds * 1e3)

    def add_forward(self, events) -> None:
        for name, op, line, start, seconds in events:
            self.add(name, op, "forward", line, start, seconds)

    @contextlib.contextmanager
    def backward_events(self):
        entered = time.perf_counter()
        with agrad.autograd.profiler.profile() as prof:
            yield
        for event in prof.events:
            if event.phase != "backward" or event.node is None:
                continue
            node = event.node
            yaml_node = self.runner.yaml_node_of(node) or node_name(node)
            location = self.runner.location(yaml_node)
            self.add(yaml_node, node_name(node), "backward", location.line if location else None,
                     entered + event.start_s, event.duration_s)

    def records(self) -> list[ProfileRecord]:
        return sorted(self.rows.values(), key=lambda r: r.start_ms[0])
