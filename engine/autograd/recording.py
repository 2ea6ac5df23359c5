"""Whether a pass is being recorded for replay: the one slot that the kernel paths below the
recorder (the generated backend kernels, AccumulateGrad and InputBuffer's in-place sums, an
in-place op's write) check, and how engine code says that what it computes cannot be replayed.
The recorder itself (engine/replay/) is built on the op library, above all of them; it puts
itself here while it records. `ACTIVE` is None in the normal path: one global load per check.
"""
from __future__ import annotations

__all__ = ["ACTIVE", "unreplayable"]

ACTIVE = None        # the Recorder of the pass being recorded, or None


def unreplayable(reason: str) -> None:
    """Called where the engine computes something the schedule cannot express."""
    rec = ACTIVE
    if rec is not None and rec.reason is None:
        rec.reason = reason
