"""What watches the engine while it works, registered in this one place:
- the profiler (agrad.autograd.profiler): each op call through the dispatcher (`op_observers`)
  and each backward Node the engine runs (`node_observers`);
- the recorder (engine/replay/): each backend kernel call, and each write into an array that
  happens outside a kernel (`add_in_place`, `write`: gradient accumulation, in-place ops);
  each read of a tensor's values (`read_value`: a decision a replay would freeze), and the
  numbers the engine computes on the host from live state (`host_numbers`: a replay
  computes them again).

The engine's hot paths read these once per call and take their general path when something
watches; in a normal run the lists are empty and `recorder` is None, so watching costs one
global load per op. (Anomaly mode is a mode, not a watcher: it changes what the engine does,
keeping each Node's traceback and checking each output; autograd/anomaly_mode.py holds it.)
"""
from __future__ import annotations

__all__ = ["op_observers", "node_observers", "mutation_observers", "before_mutation", "recorder", "add_in_place",
           "write", "unreplayable", "read_value", "host_numbers"]

op_observers: list = []      # op_start(op, args) / op_end(op, result) around each dispatched call
node_observers: list = []    # node_start(node, inputs) / node_end(node) around each backward Node; the last one is asked
mutation_observers: list = []   # before_mutation(tensor) before an in-place op changes a tensor
recorder = None              # the Recorder of the pass being recorded, or None


def before_mutation(tensor) -> None:
    """`tensor` is about to be changed in place (its values, shape or strides). The in-place paths
    call this only while `mutation_observers` is not empty: off, it costs them one global load."""
    for obs in mutation_observers:
        obs.before_mutation(tensor)


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


def read_value(what: str) -> None:
    """A tensor's values were read on the host (`item`, `bool`, `tolist`, ...): whatever the
    engine decides from them a replay would decide the same way every pass."""
    if recorder is not None:
        recorder.read(what)


def host_numbers(fn, *args) -> tuple:
    """`fn(*args)`: Python numbers the engine computes on the host from live state (an
    optimizer's step size from its lr and step count), used as kernel arguments. A pass
    being recorded calls `fn` again at this point of each replay, where any other number
    would be a constant of the replay."""
    if recorder is None:
        return fn(*args)
    return recorder.host(fn, args)
