"""Where data for a graph's inputs comes from, written the same way everywhere: `FILE.npy`,
`FILE.csv` (NumPy's `loadtxt`, commas), or `FILE.npz:KEY` for one array of an archive (the
keys `agrad run --save` writes, `outputs/NAME` and `grads/NAME`, read back as they are).
"""
from __future__ import annotations

from pathlib import Path

from .inputs import (ARCHIVE_SUFFIX, InputError, read_npy, read_npz, regular_file_size, require_inside_folder,
                     split_file_key)


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


SOURCE_KEYS = ("file", "inputs")      # what a data source is: one archive, or one file per input


class SourceProblem(Exception):
    """A data source cannot be read; `where` is the key path below the source it concerns;
    `complete`: the message already names the section (a file refused as graph inputs are)."""

    def __init__(self, message: str, where: tuple = (), complete: bool = False):
        super().__init__(message)
        self.where = where
        self.complete = complete


def read_array(path: Path, key: str | None, what: str = "data file"):
    """One array from `FILE.npy`, `FILE.csv` or `FILE.npz` (with `key`), read as graph inputs
    are (graphs/inputs.py): a regular file only, an archive's inflated size checked first,
    never unpickled. InputError or OSError/ValueError say what is wrong."""
    suffix = path.suffix.lower()
    if suffix == ARCHIVE_SUFFIX:
        arrays = read_npz(path, None, "AG065", what)
        if key is None:
            raise ValueError(f"an .npz holds several arrays; name one: {path.name}:KEY "
                             f"(it has: {', '.join(arrays) or 'none'})")
        if key not in arrays:
            raise ValueError(f"{path.name} has no array '{key}' (it has: {', '.join(arrays) or 'none'})")
        return arrays[key]
    regular_file_size(path, None, "AG065", what)
    if suffix == ".csv":
        return read_csv(path)
    return read_npy(path)


def load_source(section: dict, base_dir: Path, sandbox: bool = False, what: str = "data") -> dict:
    """The arrays of a data source, by input name: `{file: D.npz}` (its keys name inputs) or
    `{inputs: {x: X.npy, y: Y.csv, z: D.npz:KEY}}`. SourceProblem says what is wrong, and where.
    `sandbox`: every file must lie in `base_dir` or below (--sandbox); `what` names the section
    (`train.data`) in the messages of a refused file."""
    file_what = f"{what}.source file"

    def refused(exc: InputError, where: tuple) -> SourceProblem:
        return SourceProblem(exc.message, where, complete=True)

    def full(name: str) -> Path:
        path = Path(name) if Path(name).is_absolute() else base_dir / name
        if sandbox:
            require_inside_folder(path, base_dir, None, "AG065")
        return path

    def reason(exc: Exception) -> str:
        return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)

    if ("file" in section) == ("inputs" in section):
        raise SourceProblem("a data source needs exactly one of `file: DATA.npz` (its keys name inputs) and "
                            "`inputs: {NAME: FILE}` (.npy, .csv or FILE.npz:KEY per input)")
    if "file" in section:
        file = section["file"]
        if not isinstance(file, str):
            raise SourceProblem("`file` must be a path: an .npz whose keys name inputs", ("file",))
        try:
            path = full(file)
            regular_file_size(path, None, "AG065", file_what)     # a pipe or device: refused before its name
            if Path(file).suffix.lower() != ARCHIVE_SUFFIX:
                raise SourceProblem(f"{file} holds one array; name its input: `inputs: {{NAME: {file}}}`", ("file",))
            return read_npz(path, None, "AG065", file_what)
        except InputError as exc:
            raise refused(exc, ("file",)) from None
        except (OSError, ValueError) as exc:
            raise SourceProblem(f"cannot read {file}: {reason(exc)}", ("file",)) from None
    inputs = section["inputs"]
    if not isinstance(inputs, dict) or not inputs:
        raise SourceProblem("`inputs` must map input names to files (`x: x.npy`, `y: labels.csv`, "
                            "`z: data.npz:KEY`)", ("inputs",))
    arrays = {}
    for name, given in inputs.items():
        if not isinstance(given, str):
            raise SourceProblem(f"`inputs.{name}` must be a file name, not {given!r}", ("inputs", name))
        file, key = split_file_key(given, base_dir)
        try:
            arrays[name] = read_array(full(file), key, file_what)
        except InputError as exc:
            raise refused(exc, ("inputs", name)) from None
        except (OSError, ValueError) as exc:
            raise SourceProblem(f"cannot read {given}: {reason(exc)}", ("inputs", name)) from None
    return arrays
