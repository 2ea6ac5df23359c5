"""agrad.save / agrad.load: a Tensor, a dict of name → Tensor (a module's state_dict), or
a nest of dicts, lists and tuples of tensors and plain values (a checkpoint with the
optimizer's state and the epoch), as `.npz` (NumPy's zip of arrays) or `.safetensors`;
never pickle.

A `.safetensors` suffix picks safetensors; any other path (`model.pt`, `ckpt.pth`, none) and a
file object (`io.BytesIO`) get `.npz`, a zip as PyTorch's own format is. Loading reads a
`.npz` or `.safetensors` suffix as it says, and anything else by its first bytes (a zip, or
safetensors' header length and `{`); a PyTorch checkpoint (a zip holding a pickle) is refused
by name. Writes to a path are atomic (agrad._atomic_write): a reader
sees the old file or the whole new one. Reading trusts nothing in the file: NumPy reads
with allow_pickle=False, each .npz member's header is checked before its data is inflated
(agrad._npy_headers: declared sizes, zip bombs), and a safetensors header is checked in full — its length
against the file, each entry's dtype, shape and byte range, the ranges tiling the data
exactly — before any array is made; anything wrong is a SerializationError naming the
file and the problem. Tensors load onto the CPU (or `map_location`).

Which of the three a file holds is recorded as agrad's metadata ({"agrad": "tensor"},
{"agrad": "dict"} or {"agrad": "structure", "structure": JSON}, see agrad._saved_structure:
safetensors' `__metadata__`, an npz's `__metadata__` text array); a file written by other
tools (np.savez, safetensors' save_file) loads as a dict.
"""
from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping

import numpy as np

from . import _npy_headers, _safetensors
from ._atomic_write import write_atomically
from ._saved_structure import StructureError, flatten, unflatten

__all__ = ["save", "load", "SerializationError"]


class SerializationError(RuntimeError):
    """A file agrad.load cannot read: not the format its suffix says, truncated, or
    inconsistent (PyTorch raises RuntimeError for a damaged checkpoint too)."""


_METADATA_KEY = "__metadata__"
_TENSOR_KEY = "tensor"          # the entry holding a file's single tensor


def _suffix_format(path: str) -> str | None:
    suffix = os.path.splitext(path)[1].lower()
    return suffix[1:] if suffix in (".npz", ".safetensors") else None


def _sniffed_format(name: str, head: bytes) -> str:
    """The format of a file without a telling suffix, from its first bytes."""
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "npz"
    if len(head) >= 9 and head[8:9] == b"{":
        return "safetensors"
    raise SerializationError(f"{name}: neither an .npz archive nor a .safetensors file (agrad reads no other "
                             f"format, and never unpickles)")


def _is_file_object(f) -> bool:
    return not isinstance(f, (str, bytes, os.PathLike)) and (hasattr(f, "write") or hasattr(f, "read"))


# -- save ----------------------------------------------------------------------------------
def save(obj, f) -> None:
    """Write `obj` to `f`, a path (`.safetensors`, else `.npz`) or a binary file object (`.npz`): a
    Tensor, a dict of str → Tensor (a state_dict), or dicts, lists and tuples of those and of None,
    bool, int, float and str (`{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}`)."""
    from ._tensor import Tensor
    to_object = _is_file_object(f)
    path = None if to_object else os.fspath(f)
    fmt = "npz" if to_object else _suffix_format(path) or "npz"
    if isinstance(obj, Tensor):
        tensors, metadata = {_TENSOR_KEY: obj}, {"agrad": "tensor"}
    elif isinstance(obj, Mapping) and all(isinstance(k, str) and k != _METADATA_KEY and isinstance(v, Tensor)
                                          for k, v in obj.items()):
        tensors, metadata = dict(obj), {"agrad": "dict"}
    else:
        tensors, structure = flatten(obj, Tensor, reserved=(_METADATA_KEY,))
        metadata = {"agrad": "structure", "structure": json.dumps(structure)}
    # NOTE: not np.ascontiguousarray, which makes a 0-d array 1-d
    arrays = {name: np.asarray(t.detach().cpu().numpy(), order="C") for name, t in tensors.items()}
    writer = _write_npz if fmt == "npz" else _write_safetensors
    if to_object:
        writer(f, arrays, metadata)
    else:
        write_atomically(path, lambda fh: writer(fh, arrays, metadata))


def _write_npz(fh, arrays: dict, metadata: dict) -> None:
    np.savez(fh, **{_METADATA_KEY: np.array(json.dumps(metadata))}, **arrays)


# -- load ----------------------------------------------------------------------------------
def load(f, map_location=None, *, weights_only: bool | None = None):
    """Read what agrad.save wrote (or any .npz / .safetensors of agrad's dtypes): a Tensor,
    a dict of name → Tensor in the file's order, or the nested object saved."""
    import agrad
    if weights_only is False:
        raise ValueError("agrad.load never unpickles: it reads tensors only (weights_only=False is not available)")
    if _is_file_object(f):
        data = f.read()
        name = getattr(f, "name", None) or type(f).__name__
        fmt, path = _sniffed_format(name, data[:9]), str(name)
        source = io.BytesIO(data) if fmt == "npz" else data
    else:
        path = os.fspath(f)
        fmt = _suffix_format(path)
        if fmt is None:
            with open(path, "rb") as fh:
                fmt = _sniffed_format(path, fh.read(9))
        source = path if fmt == "npz" else None
    arrays, metadata = _read_npz(path, source) if fmt == "npz" else _read_safetensors(path, source)
    tensors = {name: agrad.from_numpy(array) for name, array in arrays.items()}
    if map_location is not None:
        tensors = {name: t.to(device=map_location) for name, t in tensors.items()}
    if metadata.get("agrad") == "tensor":
        if set(tensors) != {_TENSOR_KEY}:
            raise SerializationError(f"{path}: its metadata says one tensor, but it holds {sorted(tensors)}")
        return tensors[_TENSOR_KEY]
    if metadata.get("agrad") == "structure":
        try:
            return unflatten(json.loads(metadata["structure"]), tensors)
        except (KeyError, TypeError, json.JSONDecodeError, RecursionError, StructureError) as exc:
            raise SerializationError(f"{path}: its structure metadata is damaged: {exc}") from None
    return tensors


def _checked_array(path: str, name: str, array) -> np.ndarray:
    if not isinstance(array, np.ndarray):
        raise SerializationError(f"{path}: {name!r} is not an .npy array")
    if array.dtype not in _safetensors.NAMES and array.dtype != np.complex128:     # (.npz holds complex128)
        raise SerializationError(f"{path}: {name!r} has dtype {array.dtype}, which agrad has no tensors of")
    return array.astype(array.dtype.newbyteorder("="), copy=False)


def _read_npz(path: str, source) -> tuple[dict, dict]:
    """`source`: the path, or a file object of the archive's bytes (`path` names it in messages)."""
    # NOTE: np.load raises ValueError for pickled data or an object array (allow_pickle=False),
    # zipfile's errors for a damaged archive (NotImplementedError for a compression it does not know),
    # EOFError/OSError for a truncated member; and a member's header is text NumPy parses with
    # tokenize, literal_eval and descr_to_dtype, which raise whatever the file's bytes make them
    # (TokenError, SyntaxError, IndexError, TypeError, OverflowError): all of it is a damaged file
    unreadable = Exception
    try:
        archive = np.load(source, allow_pickle=False)
    except FileNotFoundError:
        raise
    except unreadable as exc:
        raise SerializationError(f"{path}: not a readable .npz archive ({type(exc).__name__}: {exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise SerializationError(f"{path}: not an .npz archive but a single .npy array")
    if any(name.endswith(".pkl") for name in archive.zip.namelist()):
        archive.close()
        raise SerializationError(f"{path}: a PyTorch checkpoint (a zip holding a pickle): agrad never unpickles; "
                                 f"save its tensors with safetensors (safetensors.torch.save_file) to load them")
    try:
        with archive:
            # each member's header first: one can declare any size, and a compressed one inflate a
            # few kilobytes to gigabytes (a zip bomb), which NumPy would allocate before reading
            _npy_headers.check_archive(archive.zip)
            arrays = {name: archive[name] for name in archive.files}
    except _npy_headers.Refused as exc:
        raise SerializationError(f"{path}: {exc}") from None
    except unreadable as exc:
        raise SerializationError(f"{path}: not a readable .npz archive ({type(exc).__name__}: {exc})") from None
    metadata = {}
    if _METADATA_KEY in arrays:
        text = arrays.pop(_METADATA_KEY)
        is_text = isinstance(text, np.ndarray) and text.dtype.kind == "U" and text.ndim == 0
        metadata = _parse_metadata(path, str(text[()]) if is_text else None)
    return {name: _checked_array(path, name, a) for name, a in arrays.items()}, metadata


def _parse_metadata(path: str, text: str | None) -> dict:
    try:
        metadata = json.loads(text) if text is not None else None
    except (json.JSONDecodeError, RecursionError):
        metadata = None
    if not isinstance(metadata, dict):
        raise SerializationError(f"{path}: its {_METADATA_KEY} entry is not a JSON object of strings")
    return metadata


def _write_safetensors(fh, arrays: dict, metadata: dict) -> None:
    try:
        _safetensors.write(fh, arrays, metadata)
    except _safetensors.FormatError as exc:
        raise TypeError(f"agrad.save: {exc}") from None


def _read_safetensors(path: str, data: bytes | None) -> tuple[dict, dict]:
    try:
        return _safetensors.read(path, data)
    except _safetensors.FormatError as exc:
        raise SerializationError(str(exc)) from None
