"""Output files (`--save`, `--trace`), written atomically (see agrad._atomic_write, which
agrad.save shares)."""
from __future__ import annotations

from pathlib import Path

from agrad._atomic_write import write_atomically

__all__ = ["write_atomically", "save_npz"]


def save_npz(run, path) -> Path:
    """Write `outputs/NAME` and `grads/NAME` arrays; a gradient that is None is left out."""
    import numpy as np

    arrays = {f"outputs/{name}": t.detach().cpu().numpy() for name, t in run.outputs.items()}
    arrays.update({f"grads/{name}": g.detach().cpu().numpy() for name, g in run.grads.items() if g is not None})
    return write_atomically(path, lambda f: np.savez(f, **arrays))
