"""InputBuffer: the gradients arriving at one Node, summed as they come."""
from __future__ import annotations

from .gradient_sum import sum_into


class InputBuffer:
    __slots__ = ("buffer",)

    def __init__(self, size: int):
        self.buffer = [None] * size

    def add(self, pos: int, grad) -> None:
        if grad is None:
            return
        buffer = self.buffer
        # NOTE: never `old += grad` on a sum someone else may hold: sum_into decides (PyTorch's use_count)
        buffer[pos] = grad if buffer[pos] is None else sum_into(buffer, pos, grad)

    def device(self):
        """The device whose ready queue runs this node: the first non-CPU gradient's, else CPU."""
        for g in self.buffer:
            if g is not None and g._device.type != "cpu":
                return g._device
        return None
