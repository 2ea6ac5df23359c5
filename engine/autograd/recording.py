"""Recording an op's backward Node in C (_native_recording.c), where `pip install` built it.

Each op's Autograd kernel is generated in Python (ops/registry.py, _make_autograd_kernel), and
that Python is the reference: it runs wherever the extension was not built (no compiler at
install) or AGRAD_PURE_PYTHON=1 is set, and for every call the C leaves to it (anomaly mode,
saved-tensor hooks, views among the inputs, several outputs, ...). Where
the extension is here, the generated kernel first asks `record(plan, out, args)`, which records
the common case, statement for statement as the Python, and returns True; False leaves the call to
the Python lines that follow. The tests run the op library under both (tests/engine/recordings.py).
"""
from __future__ import annotations

import os

from .._tensor import AutogradMeta, Tensor, VariableVersion
from ..dispatch_keys import AUTOGRAD
from ..grad_mode import saved_hooks_in_use
from .anomaly_mode import _state as _anomaly
from .node import _METADATA, ZEROS, Node, _next_sequence_nr, grad_accumulator, metadata_of
from .saved_variable import save_input_value, save_output, save_value


def _load():
    if os.environ.get("AGRAD_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from . import _native_recording as native
        native.configure(Tensor, AutogradMeta, Node, VariableVersion, _anomaly, saved_hooks_in_use,
                         _next_sequence_nr, grad_accumulator, _METADATA, metadata_of, ZEROS, AUTOGRAD,
                         save_input_value, save_value, save_output)
    except (ImportError, TypeError):        # TypeError: a build older than this file (configure's arguments)
        return None
    return native


_native = _load()

# What each generated Autograd kernel calls, read at every call (the tests set it to None to run
# the Python kernels): the C recording, or None.
record = _native.record if _native is not None else None


def make_plan(node_class: type, positions: tuple, saves: tuple):
    """The C recording's plan of one op, or None where there is no C recording. `saves[mask - 1]`
    is the (name, kind, argument index) steps of what the op saves for that mask of inputs needing
    a gradient, or None where only the Python kernel saves it."""
    if _native is None:
        return None
    return _native.make_plan(node_class, positions, saves)
