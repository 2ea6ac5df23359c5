"""InputBuffer: the gradients arriving at one Node, summed as they come.

A buffer is a plain list with one slot per input of the Node (PyTorch's InputBuffer is a
vector of Variables): the engine makes one per Node it runs, so there is no wrapper object.
"""
from __future__ import annotations

from .gradient_sum import sum_into


def add(buffer: list, pos: int, grad) -> None:
    if grad is None:
        return
    # NOTE: never `old += grad` on a sum someone else may hold: sum_into decides (PyTorch's use_count)
    buffer[pos] = grad if buffer[pos] is None else sum_into(buffer, pos, grad)


def device(buffer: list):
    """The device whose ready queue runs this node: the first non-CPU gradient's, else None (CPU)."""
    for g in buffer:
        if g is not None and g._device.type != "cpu":
            return g._device
    return None
