"""Where data for a graph's inputs comes from, written the same way everywhere: `FILE.npy`,
`FILE.csv` (NumPy's `loadtxt`, commas), or `FILE.npz:KEY` for one array of an archive (the
keys `agrad run --save` writes, `outputs/NAME` and `grads/NAME`, read back as they are).
"""
from __future__ import annotations

from pathlib import Path

ARCHIVE_SUFFIX = ".npz"


def split_file_key(text: str, base_dir: Path | None = None) -> tuple[str, str | None]:
    """`data.npz:x` -> ("data.npz", "x"); anything else is a file name alone. Only an .npz has keys,
    so a colon elsewhere (`C:\\data.npy`) is part of the name, as it is in a file that exists under
    the whole name."""
    head, sep, key = text.rpartition(":")
    whole = Path(text) if base_dir is None or Path(text).is_absolute() else base_dir / text
    if sep and key and head.lower().endswith(ARCHIVE_SUFFIX) and not whole.exists():
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


SOURCE_KEYS = ("file", "inputs")      # what a data source is: one archive, or one file per input


class SourceProblem(Exception):
    """A data source cannot be read; `where` is the key path below the source it concerns."""

    def __init__(self, message: str, where: tuple = ()):
        super().__init__(message)
        self.where = where


def read_array(path: Path, key: str | None):
    """One array from `FILE.npy`, `FILE.csv` or `FILE.npz` (with `key`), never unpickling."""
    import numpy as np

    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_csv(path)
    loaded = np.load(path, allow_pickle=False)
    if not hasattr(loaded, "files"):        # an .npy: the array itself
        return loaded
    with loaded:
        if key is None:
            raise ValueError(f"an .npz holds several arrays; name one: {path.name}:KEY "
                             f"(it has: {', '.join(loaded.files) or 'none'})")
        if key not in loaded.files:
            raise ValueError(f"{path.name} has no array '{key}' (it has: {', '.join(loaded.files) or 'none'})")
        return loaded[key]


def load_source(section: dict, base_dir: Path) -> dict:
    """The arrays of a data source, by input name: `{file: D.npz}` (its keys name inputs) or
    `{inputs: {x: X.npy, y: Y.csv, z: D.npz:KEY}}`. SourceProblem says what is wrong, and where."""
    import numpy as np

    def full(name: str) -> Path:
        return Path(name) if Path(name).is_absolute() else base_dir / name

    def reason(exc: Exception) -> str:
        return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)

    if ("file" in section) == ("inputs" in section):
        raise SourceProblem("a data source needs exactly one of `file: DATA.npz` (its keys name inputs) and "
                            "`inputs: {NAME: FILE}` (.npy, .csv or FILE.npz:KEY per input)")
    if "file" in section:
        file = section["file"]
        if not isinstance(file, str):
            raise SourceProblem("`file` must be a path: an .npz whose keys name inputs", ("file",))
        if Path(file).suffix.lower() != ARCHIVE_SUFFIX:
            raise SourceProblem(f"{file} holds one array; name its input: `inputs: {{NAME: {file}}}`", ("file",))
        try:
            with np.load(full(file), allow_pickle=False) as npz:
                return {k: npz[k] for k in npz.files}
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
            arrays[name] = read_array(full(file), key)
        except (OSError, ValueError) as exc:
            raise SourceProblem(f"cannot read {given}: {reason(exc)}", ("inputs", name)) from None
    return arrays
