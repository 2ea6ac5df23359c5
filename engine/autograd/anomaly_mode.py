"""Anomaly detection: NaN/Inf checks on every backward output, naming the Node."""
from __future__ import annotations

import threading

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "AnomalyError"]


class AnomalyError(RuntimeError):
    """A NaN or Inf was found; `.node` is the backward Node (or None in forward) that produced it."""

    def __init__(self, message, node=None, phase="backward"):
        super().__init__(message)
        self.node = node
        self.phase = phase


class _State(threading.local):
    enabled = False
    check_nan = True        # anomaly mode without it keeps the forward tracebacks and skips the NaN checks


_state = _State()


def is_anomaly_enabled() -> bool:
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.check_nan


class set_detect_anomaly:
    """Anomaly mode on or off (and whether backward outputs are checked for NaN), from construction
    until the end of the `with` block, as torch.autograd.set_detect_anomaly."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (_state.enabled, _state.check_nan)
        _state.enabled = bool(mode)
        _state.check_nan = bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self._prev
        return False


class detect_anomaly(set_detect_anomaly):
    """torch.autograd.detect_anomaly(check_nan=True): `check_nan=False` keeps the forward tracebacks
    of the Nodes but does not check their outputs for NaN."""

    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)


def check_outputs(node, grads) -> None:
    """PyTorch's message: 'Function XBackward0 returned nan values in its 0th output.',
    with the traceback of the forward call that created the Node when it was recorded. Nothing is
    checked when anomaly mode was entered with check_nan=False."""
    if not _state.check_nan:
        return
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
