"""Writing output files the way `--save` promises: complete or absent."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    """Write to a temporary file beside `path`, then rename it over `path`.

    A rename within one folder is atomic, so a reader (or a crash) never sees half
    a file; the temporary file is removed if anything fails before the rename.
    """
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
