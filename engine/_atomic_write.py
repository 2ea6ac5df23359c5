"""Files written atomically: agrad.save's checkpoints, and the CLI's `--save` and `--trace`.

A file is written beside its destination and moved into place with os.replace,
so a reader sees either the old file or the whole new one; a run interrupted
mid-write (an exception, Ctrl-C, SIGTERM, SIGHUP) removes its temporary file. A symlink
is written through to its target, and a new file's mode follows the umask, as
with any other tool's output.
"""
from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import BinaryIO, Callable


class _Interrupted(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


# The signals whose default action ends the process and which a run is sent in practice: a
# service manager's or `kill`'s SIGTERM, and SIGHUP when the terminal or ssh session goes away
# (Ctrl-C's SIGINT already raises KeyboardInterrupt). Windows has no SIGHUP.
_ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _ending_signals_raise():
    """SIGTERM and SIGHUP raise inside the block, so the cleanup runs; signal handlers belong
    to the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, _frame):
        raise _Interrupted(signum)

    previous = {s: signal.signal(s, interrupt) for s in _ENDING}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _new_file_mode(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)    # replacing a file keeps its mode
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def temporary_prefix(target: Path) -> str:
    """`.NAME.` of the temporary file beside `target`, NAME cut to its first 100 bytes: a name near
    the file system's 255-byte limit leaves room for the dots, mkstemp's 8 characters and `.tmp`."""
    return f".{os.fsdecode(os.fsencode(target.name)[:100])}."


def write_atomically(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> Path:
    """Call `write` on a temporary file beside `path`'s target, then rename it into place."""
    target = Path(os.path.realpath(path))
    mode = _new_file_mode(target)
    temporary = None
    try:
        with _ending_signals_raise():
            fd, temporary = tempfile.mkstemp(prefix=temporary_prefix(target), suffix=".tmp", dir=target.parent)
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), mode)
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, target)
            temporary = None
    except _Interrupted as stop:
        _remove_quietly(temporary)
        # end as the signal would have ended the run, had it not been caught
        os.kill(os.getpid(), stop.signum)
        raise SystemExit(128 + stop.signum) from None
    except BaseException:
        _remove_quietly(temporary)
        raise
    return Path(path)


def _remove_quietly(path: str | None) -> None:
    if path is None:
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
