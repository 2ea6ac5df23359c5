"""`run --trace FILE.json`: the `--profile` records as Chrome trace events.

The Trace Event Format's "complete" events (`ph: "X"`, microseconds), loadable in
chrome://tracing and Perfetto. Forward and backward are separate tracks so the
two passes read as two rows.
"""
from __future__ import annotations

from agrad.cli.json_docs import SCHEMA_VERSION

_TRACKS = {"forward": 1, "backward": 2}


def trace_document(result) -> dict:
    events: list[dict] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": f"agrad {result.graph}"}},
    ]
    events += [{"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": phase}}
               for phase, tid in _TRACKS.items()]
    for record in result.profile or []:
        for start_ms, duration_ms in zip(record.start_ms, record.duration_ms):
            events.append({
                "name": record.node,
                "cat": record.phase,
                "ph": "X",
                "ts": round(start_ms * 1000.0, 3),
                "dur": round(duration_ms * 1000.0, 3),
                "pid": 1,
                "tid": _TRACKS.get(record.phase, 3),
                "args": {"op": record.op, "line": record.line},
            })
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"schema_version": SCHEMA_VERSION, "graph": result.graph, "file": result.file}}
