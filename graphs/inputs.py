"""Leaf tensors: host arrays from literals, inits and files, then tensors on a device.

Data is made on the host with NumPy (random inits with a seeded Generator), so
the same init, shape, dtype and seed give the same tensor on every device.
Files are read with `allow_pickle=False`: a graph file never unpickles anything.
"""
from __future__ import annotations

import contextlib
import math
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agrad import _npy_headers as npy_headers
from agrad._allocation import memory_bytes  # noqa: F401 - the runner's and the ONNX importer's limit too

from .diagnostics import Pos
from .document import literal_shape
from .spec import InputSpec
from .values import first_misfit, fits, misfit_message


class InputError(Exception):
    """An input's data cannot be made; becomes a Diagnostic at `pos`."""

    def __init__(self, code: str, message: str, pos: Pos):
        super().__init__(message)
        self.code = code
        self.message = message
        self.pos = pos


ARCHIVE_SUFFIX = ".npz"     # the one file kind with keys: `FILE.npz:KEY`


def split_file_key(text: str, base_dir: Path | None = None) -> tuple[str, str | None]:
    """`data.npz:x` -> ("data.npz", "x"); anything else is a file name alone. Only an .npz has keys,
    so a colon elsewhere (`C:\\data.npy`) is part of the name, as it is in a file that exists under
    the whole name."""
    head, sep, key = text.rpartition(":")
    whole = Path(text) if base_dir is None or Path(text).is_absolute() else base_dir / text
    if sep and key and head.lower().endswith(ARCHIVE_SUFFIX) and not whole.exists():
        return head, key
    return text, None



@dataclass
class LeafPlan:
    """What one leaf will be: enough to build it on Meta without touching data."""
    name: str
    shape: tuple[int, ...]
    dtype: str
    device: str
    requires_grad: bool
    spec: InputSpec
    array: np.ndarray | None = None          # .npy data, memory-mapped: read when used
    source: tuple[Path, str] | None = None   # an .npz and key, inflated only when the leaf is made


def _npy_checked(path: Path) -> np.dtype:
    """An .npy file's dtype, once its header parses (`npy_headers.npy_header`) and, unless it holds
    Python objects (the caller refuses those), declares no more data than the file holds: a header can declare any
    size, which NumPy would map or allocate before finding the data short. ValueError says what
    is wrong."""
    with open(path, "rb") as f:
        shape, dtype, header = npy_headers.npy_header(f)
        size = os.fstat(f.fileno()).st_size
    nbytes = math.prod(shape) * dtype.itemsize
    if not dtype.hasobject and header + nbytes > size:
        raise ValueError(f"{path.name} declares {nbytes:,} bytes of data but holds {size - header:,}")
    return dtype


def read_npy(path: Path) -> np.ndarray:
    """A whole .npy file, checked first (`_npy_checked`), never unpickled. ValueError or OSError
    say what is wrong."""
    if _npy_checked(path).hasobject:
        raise ValueError(f"{path.name} holds Python objects, which would need unpickling; agrad reads arrays "
                         "with allow_pickle=False")
    return np.load(path, allow_pickle=False)


def regular_file_size(path: Path, pos: Pos, code: str = "AG013", what: str = "input file") -> int:
    """The file's size, asked of the file system without opening it: a FIFO or a device
    (`/dev/stdin`, `/dev/zero`) would block or never end, so it is refused. Graph inputs,
    training data and checkpoints all go through here."""
    try:
        info = Path(path).stat()
    except FileNotFoundError:
        raise InputError(code, f"{what} not found: {path}", pos) from None
    except OSError as exc:
        raise InputError(code, f"cannot read {what} {path}: {exc.strerror or exc}", pos) from None
    except ValueError:              # a NUL in the name: no file system has such a file
        raise InputError(code, f"{what} name {str(path)!r} holds a NUL character", pos) from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a pipe or a device?)"
        raise InputError(code, f"{what} {path} is {kind}", pos)
    return info.st_size


def require_inside_folder(path: Path, folder: Path, pos: Pos, code: str) -> None:
    """`--sandbox` (or AGRAD_SANDBOX=1): a data file a graph names must lie in the graph's
    folder or below it, after `..` and symlinks are resolved. A graph from an untrusted
    pull request cannot then read `../secret.npy`, `/etc/...` or a link pointing out."""
    target, root = os.path.realpath(path), os.path.realpath(folder)
    if os.path.commonpath([target, root]) != root:
        raise InputError(code, f"{path} is outside the graph's folder {root} (--sandbox reads files in the graph's "
                         "folder and below only)", pos)


def _zip_errors() -> tuple:
    """zipfile's error, looked up while an error is handled: zipfile (with bz2, lzma, shutil) is
    imported by the graphs that read an .npz, not by every run."""
    import zipfile

    return (zipfile.BadZipFile,)


def _npz_header(path: Path, key: str | None, pos: Pos) -> tuple[tuple[int, ...], np.dtype]:
    """An .npz member's shape and dtype from its header, without inflating the data."""
    import zipfile      # only .npz inputs need it (see _zip_errors)

    with zipfile.ZipFile(path) as archive:
        names = {n[:-4] if n.endswith(".npy") else n: n for n in archive.namelist()}
        if key not in names:
            raise InputError("AG013", f"{path.name} has no array '{key}' (it has: "
                             f"{', '.join(names) or 'none'})", pos)
        with _refusals(path, pos, "AG013"):
            info = archive.getinfo(names[key])
            shape, dtype, nbytes = npy_headers.member_header(archive, info, key)
            npy_headers.refuse_inflation(f"array '{key}'", nbytes, info.compress_size)
    return shape, dtype


@contextlib.contextmanager
def _refusals(path: Path, pos: Pos, code: str):
    """An array refused for what its header declares (agrad._npy_headers) as a located error."""
    try:
        yield
    except npy_headers.Refused as exc:
        raise InputError(code, f"{path.name}: {exc}", pos) from None


def read_npz(path: Path, pos: Pos, code: str = "AG013", what: str = "input file") -> dict[str, np.ndarray]:
    """Every array of an .npz (training data, a checkpoint), read as graph inputs are: a
    regular file only, each member's header and the whole archive's inflated size
    checked before anything is inflated (1 GiB at 100:1 at most), never unpickled."""
    import zipfile

    path = Path(path)
    regular_file_size(path, pos, code, what)
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    raise InputError(code, f"{path.name}: member '{info.filename}' is not an .npy array", pos)
            with _refusals(path, pos, code):
                npy_headers.check_archive(archive)
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except InputError:
        raise
    except (OSError, ValueError, zlib.error, EOFError, KeyError, NotImplementedError, *_zip_errors()) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(code, f"cannot read {path.name}: {reason}", pos) from None


def _object_array(path: Path, pos: Pos, code: str = "AG013") -> InputError:
    return InputError(code, f"{path.name} holds Python objects, which would need unpickling; "
                      "agrad reads arrays with allow_pickle=False", pos)


def read_array_file(path: Path, key: str | None, pos: Pos) -> tuple[tuple[int, ...], np.dtype, np.ndarray | None]:
    """(shape, dtype, memory-mapped data or None for an .npz), reading headers only."""
    try:
        regular_file_size(path, pos)
        if path.suffix.lower() == ".npz":
            shape, dtype = _npz_header(path, key, pos)
            return tuple(shape), dtype, None
        if path.suffix.lower() == ".safetensors":
            from agrad import _safetensors
            array = _safetensors.read_tensor(str(path), key or "")
            return tuple(array.shape), array.dtype, array
        if _npy_checked(path).hasobject:
            raise _object_array(path, pos)
        # A memory map reads only the header now; Meta inference needs only shape and dtype.
        array = np.load(path, mmap_mode="r", allow_pickle=False)
        return tuple(array.shape), array.dtype, array
    except InputError:
        raise
    except KeyError as exc:
        raise InputError("AG013", f"cannot read {path.name}: {exc.args[0] if exc.args else exc}", pos) from None
    # (NotImplementedError: zipfile's, for a compression method or zip version it does not know)
    except (OSError, ValueError, EOFError, NotImplementedError, *_zip_errors()) as exc:
        raise InputError("AG013", f"cannot read {path.name}: {exc}", pos) from None


def _load_npz(path: Path, key: str) -> np.ndarray:
    try:
        with np.load(path, allow_pickle=False) as archive:
            return archive[key]
    except (OSError, zlib.error, EOFError, KeyError, NotImplementedError, *_zip_errors()) as exc:
        raise ValueError(f"cannot read {path.name}: {exc}") from None


def plan_leaf(spec: InputSpec, *, base_dir: Path, default_dtype: str, default_device: str,
              override: Path | None = None, doc=None, sandbox: bool = False) -> LeafPlan:
    """The leaf's shape, dtype and device; reads file headers (and `--input` overrides).
    `sandbox`: a `file:` outside the graph's folder is refused (an --input override is the
    command line's own choice, not the file's)."""
    device = spec.device or default_device
    if override is not None or spec.kind == "file":
        override, named_key = _override_parts(override)
        path = Path(override if override is not None else base_dir / spec.file)
        pos = spec.pos if override is not None or doc is None else doc.pos(spec.path + ("file",))
        if sandbox and override is None:
            require_inside_folder(path, base_dir, pos, "AG013")
        key = spec.key if override is None else (named_key or _override_key(path, spec))
        shape, np_dtype, array = read_array_file(path, key, pos)
        try:
            from agrad import dtypes
            # A big-endian or non-native-order file holds the same values; it is converted when read.
            array_dtype = dtypes.from_numpy(np_dtype.newbyteorder("=")).name
        except (TypeError, ImportError, ValueError):
            raise InputError("AG013", f"{path.name}: agrad has no dtype for NumPy's {np_dtype}", pos) from None
        return LeafPlan(spec.name, shape, spec.dtype or array_dtype, device, spec.requires_grad, spec, array,
                        None if array is not None else (path, key))
    dtype = spec.dtype or default_dtype
    if doc is not None:
        _check_values(spec, dtype, doc)
    if spec.kind == "init":
        return LeafPlan(spec.name, spec.shape, dtype, device, spec.requires_grad, spec)
    return LeafPlan(spec.name, literal_shape(spec.value), dtype, device, spec.requires_grad, spec)


def _check_values(spec: InputSpec, dtype: str, doc) -> None:
    """Each written number must fit the leaf's dtype (`2**32` is no int32)."""
    if spec.kind == "value":
        path = spec.path + ("value",) if spec.path + ("value",) in doc.values else spec.path
        misfit = first_misfit(spec.value, dtype)
        if misfit is not None:
            index, number = misfit
            raise InputError("AG012", misfit_message(number, dtype, f"input '{spec.name}': value"),
                             doc.pos(path + index))
    elif "fill" in spec.params and not fits(spec.params["fill"], dtype):
        raise InputError("AG012", misfit_message(spec.params["fill"], dtype, f"input '{spec.name}': `fill`"),
                         doc.pos(spec.path + ("fill",)))


def _override_parts(override) -> tuple[Path | None, str | None]:
    """`--input x=data.npz:images` names the array in the archive: (data.npz, images). A file
    whose own name holds the colon is taken as it is."""
    if override is None:
        return None, None
    file, key = split_file_key(str(override))
    return Path(file), key


def _override_key(path: Path, spec: InputSpec) -> str | None:
    # `--input x=data.npz` reads the array named like the input unless the graph names a key.
    return (spec.key or spec.name) if Path(path).suffix.lower() in (".npz", ".safetensors") else None


def _file_bytes(array: np.ndarray) -> tuple | None:
    """(file, offset, dtype, shape, order) of the file region `array` views through a
    memory map, or None where it is no contiguous view of one mapped file."""
    root = array
    while root is not None and not isinstance(root, np.memmap):
        root = root.base if isinstance(root.base, np.ndarray) else None
    if root is None or root.filename is None or not (array.flags.c_contiguous or array.flags.f_contiguous):
        return None
    offset = root.offset + (array.__array_interface__["data"][0] - root.__array_interface__["data"][0])
    return root.filename, offset, array.dtype, array.shape, "C" if array.flags.c_contiguous else "F"


def equals_its_file(source: np.ndarray, data: np.ndarray, chunk: int = 1 << 20) -> bool | None:
    """Whether `data`, a private map of the file region `source` maps, still holds the file's
    bytes (a kernel may have written into it); None where `data` is no such map. The file is
    read in chunks rather than through `source`'s map: comparing two maps would bring the
    parameters' pages in twice. Small chunks: this runs when a pass has made every gradient,
    and each chunk is held twice (read, and `data`'s bytes) on top of them."""
    where = _file_bytes(source)
    if where is None or where != _file_bytes(data):
        return None
    filename, offset, _, _, order = where
    flat = data.reshape(-1, order=order).view(np.uint8)      # a view: `data` is contiguous in `order`
    try:
        with open(filename, "rb", buffering=0) as f:
            for start in range(0, flat.size, chunk):
                want = flat[start:start + chunk]
                if os.pread(f.fileno(), want.size, offset + start) != want.tobytes():
                    return False
    except OSError:
        return False
    return True


def _copy_on_write(array: np.ndarray) -> np.ndarray | None:
    """The same file bytes as `array` (a read-only map of a file, as `read_array_file`
    makes) mapped again privately: nothing is read until used, the page cache is shared
    rather than copied, and a write changes neither the file nor the plan's own map (the
    next pass's data). None where `array` is no contiguous view of one mapped file."""
    where = _file_bytes(array)
    if where is None:
        return None
    filename, offset, dtype, shape, order = where
    try:
        mapped = np.memmap(filename, dtype=dtype, mode="c", offset=offset, shape=shape, order=order)
    except (OSError, ValueError):       # the file went away or shrank since it was planned
        return None
    return mapped.view(np.ndarray)      # a plain array: results of ops on it are not memmaps


def pass_array(plan: LeafPlan, graph_seed: int) -> np.ndarray:
    """The leaf's data for one pass, its own to change: a file read in its final dtype is
    mapped copy-on-write (no copy of the parameters, no second copy of their file pages);
    anything else is `host_array`'s fresh array."""
    if plan.array is not None and plan.array.dtype == np.dtype(plan.dtype if plan.dtype != "bool" else np.bool_):
        mapped = _copy_on_write(plan.array)
        if mapped is not None:
            return mapped
    return host_array(plan, graph_seed)


def host_array(plan: LeafPlan, graph_seed: int) -> np.ndarray:
    """The leaf's data as a NumPy array in its final dtype."""
    spec = plan.spec
    np_dtype = np.dtype(plan.dtype if plan.dtype != "bool" else np.bool_)
    if plan.array is not None:
        return np.array(plan.array, dtype=np_dtype)
    if plan.source is not None:
        return np.array(_load_npz(*plan.source), dtype=np_dtype)
    if spec.kind == "value":
        return np.array(spec.value, dtype=np_dtype)
    shape, p = plan.shape, spec.params
    init = spec.init
    if init == "zeros":
        data = np.zeros(shape)
    elif init == "ones":
        data = np.ones(shape)
    elif init == "full":
        data = np.full(shape, p["fill"])
    elif init == "arange":
        data = np.arange(math.prod(shape)).reshape(shape)
    elif init == "eye":
        data = np.eye(*shape)
    else:
        rng = np.random.default_rng(spec.seed if spec.seed is not None else graph_seed)
        if init == "normal":
            data = rng.normal(p["mean"], p["std"], size=shape)
        else:
            data = rng.uniform(p["low"], p["high"], size=shape)
    return data.astype(np_dtype)
