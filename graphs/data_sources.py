"""Where data for a graph's inputs comes from, written the same way everywhere: `FILE.npy`,
`FILE.csv` (NumPy's `loadtxt`, commas), or `FILE.npz:KEY` for one array of an archive (the
keys `agrad run --save` writes, `outputs/NAME` and `grads/NAME`, read back as they are).
"""
from __future__ import annotations

from pathlib import Path

ARCHIVE_SUFFIX = ".npz"


def split_file_key(text: str) -> tuple[str, str | None]:
    """`data.npz:x` -> ("data.npz", "x"); anything else is a file name alone. Only an .npz has keys,
    so a colon elsewhere (`C:\\data.npy`) is part of the name."""
    head, sep, key = text.rpartition(":")
    if sep and key and head.lower().endswith(ARCHIVE_SUFFIX):
        return head, key
    return text, None


def read_csv(path: Path):
    """A CSV of numbers as a float64 array (NumPy's loader); a first line that is not numbers is a
    header and is skipped. ValueError names the line when a value is not a number."""
    import numpy as np

    with open(path, encoding="utf-8") as f:
        first = f.readline()
    try:
        [float(cell) for cell in first.split(",") if cell.strip()]
        skip = 0
    except ValueError:
        skip = 1
    return np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=1, dtype=np.float64)
