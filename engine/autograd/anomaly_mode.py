"""Anomaly detection: NaN/Inf checks on every backward output, naming the Node."""
from __future__ import annotations

import threading

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "AnomalyError"]


class AnomalyError(RuntimeError):
    """A NaN or Inf was found; `.node` is the backward Node (or None in forward) that produced it."""

    def __init__(self, message, node=None, phase="backward"):
        super().__init__(message)
        self.node = node
        self.phase = phase


class _State(threading.local):
    enabled = False


_state = _State()


def is_anomaly_enabled() -> bool:
    return _state.enabled


class set_detect_anomaly:
    def __init__(self, mode: bool):
        self._prev = _state.enabled
        _state.enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False


class detect_anomaly(set_detect_anomaly):
    def __init__(self):
        super().__init__(True)


def check_outputs(node, grads) -> None:
    """PyTorch's message: 'Function XBackward0 returned nan values in its 0th output.',
    with the traceback of the forward call that created the Node when it was recorded."""
    for i, g in enumerate(grads):
        if g is None or g._device.type == "meta" or g._data.dtype.kind != "f":
            continue
        xp = g._device.backend.xp
        data = g._data
        for bad, what in ((xp.isnan, "nan"), (xp.isinf, "inf")):
            if bool(bad(data).any()):
                error = AnomalyError(f"Function '{node.name()}' returned {what} values in its {i}th output.", node)
                trace = node._metadata.get("traceback_") if node._metadata else None
                if trace:
                    error.add_note(f"Traceback of forward call that caused the error:\n{trace}")
                raise error
