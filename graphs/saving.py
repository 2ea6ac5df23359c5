"""`--save`: outputs and gradients to an .npz, atomically (complete or absent)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np


def save_npz(run, path) -> Path:
    """Write `outputs/NAME` and `grads/NAME` arrays; a gradient that is None is left out.

    The file is written beside its destination and moved into place with
    os.replace, so a reader sees either the old file, or the whole new one.
    """
    path = Path(path)
    arrays = {f"outputs/{name}": t.detach().cpu().numpy() for name, t in run.outputs.items()}
    arrays.update({f"grads/{name}": g.detach().cpu().numpy() for name, g in run.grads.items() if g is not None})
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(tmp)
        raise
    return path


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
