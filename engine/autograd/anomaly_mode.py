"""Anomaly detection: NaN/Inf checks on every backward output, naming the Node, and PyTorch's
warnings (torch/autograd/anomaly_mode.py, torch/csrc/autograd/python_anomaly_mode.cpp): that the
mode was enabled, and, when a Node's backward fails, where its forward op ran."""
from __future__ import annotations

import sys
import threading
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled", "AnomalyError"]


class AnomalyError(RuntimeError):
    """A NaN or Inf was found; `.node` is the backward Node (or None in forward) that produced it."""

    def __init__(self, message, node=None, phase="backward"):
        super().__init__(message)
        self.node = node
        self.phase = phase


class _State(threading.local):
    enabled = False
    check_nan = True        # anomaly mode without it keeps the forward tracebacks and skips the NaN checks
    # the Node whose backward this thread runs in anomaly mode (PyTorch's current_evaluating_node): a
    # Node made meanwhile (a double backward's) keeps it as metadata["parent_"], for print_stack
    evaluating = None


_state = _State()


def is_anomaly_enabled() -> bool:
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """torch.set_anomaly_enabled: anomaly mode on or off for this thread from now on (what
    set_detect_anomaly sets and restores), without detect_anomaly's warning."""
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if not isinstance(value, bool):
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, not "
                            f"{type(value).__name__}")
    _state.enabled, _state.check_nan = enabled, check_nan


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
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)
        super().__init__(True, check_nan)


def print_stack(node) -> None:
    """AnomalyMetadata::print_stack, called by the engine for the Node whose backward raised first:
    the traceback recorded when the Node was made in anomaly mode, as a warning; then, for a Node made
    during another's backward, that one's ("Previous calculation was induced by ..."), up the chain."""
    trace = node._metadata.get("traceback_") if node._metadata else None
    if trace is None:
        _warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
              "anomaly during forward pass for more information.")
    else:
        _warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}")
    parent = node._metadata.get("parent_") if node._metadata else None
    while parent is not None:
        trace = parent._metadata.get("traceback_") if parent._metadata else None
        if trace is None:
            _warn(f"Error detected in {parent.name()}. No forward pass information available. Enable detect "
                  "anomaly during forward pass for more information.")
        else:
            _warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call that "
                  f"induced the previous calculation:\n{trace}")
        parent = parent._metadata.get("parent_") if parent._metadata else None


def _warn(message: str) -> None:
    try:
        warnings.warn(message, stacklevel=3)
    except Warning:
        # warnings made errors: the backward's own error is the one raised; the trace goes to stderr instead,
        # as PyTorch's handler prints a warning it cannot raise while an error is pending
        print(f"UserWarning: {message}", file=sys.stderr)


def check_outputs(node, grads) -> None:
    """PyTorch's message: 'Function XBackward0 returned nan values in its 0th output.' (where the
    forward op ran is `print_stack`'s warning, as for any error in backward). Nothing is checked
    when anomaly mode was entered with check_nan=False."""
    if not _state.check_nan:
        return
    for i, g in enumerate(grads):
        if g is None or g._device.type == "meta" or g._data.dtype.kind not in "fc":
            continue
        xp = g._device.backend.xp
        data = g._data
        for bad, what in ((xp.isnan, "nan"), (xp.isinf, "inf")):
            if bool(bad(data).any()):
                raise AnomalyError(f"Function '{node.name()}' returned {what} values in its {i}th output.", node)
