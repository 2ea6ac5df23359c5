"""What watches the engine while it works, registered in this one place:
- the profiler (agrad.autograd.profiler): each op call through the dispatcher (`op_observers`)
  and each backward Node the engine runs (`node_observers`);
- the recorder (engine/replay/): each backend kernel call, and each write into an array that
  happens outside a kernel (`add_in_place`, `write`: gradient accumulation, in-place ops).

The engine's hot paths read these once per call and take their general path when something
watches; in a normal run the lists are empty and `recorder` is None, so watching costs one
global load per op. (Anomaly mode is a mode, not a watcher: it changes what the engine does,
keeping each Node's traceback and checking each output; autograd/anomaly_mode.py holds it.)
"""
from __future__ import annotations

__all__ = ["op_observers", "node_observers", "recorder", "add_in_place", "write", "unreplayable"]

op_observers: list = []      # op_start(op, args) / op_end(op, result) around each dispatched call
node_observers: list = []    # node_start(node) / node_end(node) around each backward Node; the last one is asked
recorder = None              # the Recorder of the pass being recorded, or None


def add_in_place(target, value) -> None:
    """`target += value` on arrays, outside any kernel (a gradient summed into a buffer or a .grad)."""
    target += value
    if recorder is not None:
        recorder.iadd(target, value)


def write(target, value) -> None:
    """`target[...] = value` on arrays, outside any kernel (an in-place op storing its result)."""
    target[...] = value
    if recorder is not None:
        recorder.write(target, value)


def unreplayable(reason: str) -> None:
    """Called where the engine computes something a recorded schedule cannot express."""
    if recorder is not None and recorder.reason is None:
        recorder.reason = reason
