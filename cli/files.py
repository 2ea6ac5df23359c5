"""Output files of the CLI: each checked before any work, written the way `--save`
promises (complete or absent; see `agrad.graphs.saving`)."""
from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from agrad.cli.app import abort
from agrad.cli.status import ExitStatus


def output_path_problem(path: str | os.PathLike) -> str | None:
    """Why `path` cannot be written (a phrase), or None; asked before the run, not after it."""
    if str(path).endswith(("/", os.sep)):
        # realpath() would drop the slash and write `out.npz/` as the file out.npz
        return "it names a folder (it ends with a slash), not a file"
    target = Path(os.path.realpath(path))        # through symlinks: the file that will be replaced
    try:
        info = target.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        return exc.strerror or str(exc)
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            return "it is a folder, not a file"
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file (a device or a pipe?); give a file path"
        if not os.access(target, os.W_OK):
            return "permission denied"
    folder = target.parent
    if not folder.is_dir():
        return f"no such folder {folder}"
    if not os.access(folder, os.W_OK | os.X_OK):
        # the file is replaced by a rename, which needs the folder writable
        return f"permission denied in {folder}"
    return _temporary_file_problem(target)


def _temporary_file_problem(target: Path) -> str | None:
    """Make and remove a temporary file where the output's will be, named as write_atomically
    names its own: os.access says yes to root everywhere, and /proc or a read-only mount refuse
    only when tried."""
    import tempfile     # a probe is rare: its import (shutil, bz2, lzma) is not paid by every command

    from agrad._atomic_write import temporary_prefix

    folder = target.parent
    try:
        fd, name = tempfile.mkstemp(prefix=temporary_prefix(target), suffix=".tmp", dir=folder)
    except OSError as exc:
        return f"cannot create a file in {folder}: {exc.strerror or exc}"
    os.close(fd)
    os.unlink(name)
    return None


def make_parent_folders(option: str, path: str) -> None:
    """Create the folders above a report path (`--junit-xml reports/junit.xml`), as pytest does."""
    folder = Path(path).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        abort(f"--{option} {path}: cannot create {folder}: {exc.strerror or exc}", ExitStatus.INVALID, exc)


def check_output_paths(reads: str | os.PathLike | None = None, **paths: str | None) -> None:
    """Exit 2 naming the option and path for the first output that cannot be written (a folder, a
    device such as /dev/null, a pipe: never replaced by a rename), or that is `reads`, the graph or
    model the command reads: `agrad export g.yaml -o g.yaml` would replace the source with its result,
    as `cc x.c -o x.c` would (which cc refuses too)."""
    for option, path in paths.items():
        if path is None:
            continue
        if reads is not None and str(reads) != "-" and _same_file(reads, path):
            abort(f"--{option} {path}: cannot write: it is {reads}, the file this command reads; give another "
                  "path", ExitStatus.INVALID)
        if (problem := output_path_problem(path)) is not None:
            abort(f"--{option} {path}: cannot write: {problem}", ExitStatus.INVALID)


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether `a` and `b` name one file (through links; a file that does not exist is no other's)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def writing(option: str, path: str | os.PathLike):
    """Around the write of an output the checks above passed: what can still fail then (a full
    disk, a quota, an I/O error) is a runtime failure (exit 3) naming the option and path, not an
    internal error; write_atomically has left the old file as it was and no temporary file."""
    try:
        yield
    except OSError as exc:
        abort(f"--{option} {path}: cannot write: {exc.strerror or exc}", ExitStatus.RUNTIME, exc)


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    """Write `text` as UTF-8, atomically: a reader (or a crash) never sees half a file."""
    from agrad.graphs.saving import write_atomically

    data = text.encode("utf-8")
    write_atomically(path, lambda f: f.write(data))
