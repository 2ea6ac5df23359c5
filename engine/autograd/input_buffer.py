"""InputBuffer: the gradients arriving at one Node, summed as they come."""
from __future__ import annotations


class InputBuffer:
    __slots__ = ("buffer",)

    def __init__(self, size: int):
        self.buffer = [None] * size

    def add(self, pos: int, grad) -> None:
        if grad is None:
            return
        old = self.buffer[pos]
        # NOTE: never `old += grad`: the first gradient may still be held by whoever produced it
        self.buffer[pos] = grad if old is None else old + grad

    def device(self):
        """The device whose ready queue runs this node: the first non-CPU gradient's, else CPU."""
        for g in self.buffer:
            if g is not None and g._device.type != "cpu":
                return g._device
        return None
