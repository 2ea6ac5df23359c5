"""agrad.save / agrad.load: a Tensor, a dict of name → Tensor (a module's state_dict), or
a nest of dicts, lists and tuples of tensors and plain values (a checkpoint with the
optimizer's state and the epoch), as `.npz` (NumPy's zip of arrays) or `.safetensors`;
never pickle.

The file's suffix picks the format. Writes are atomic (agrad._atomic_write): a reader
sees the old file or the whole new one. Reading trusts nothing in the file: NumPy reads
with allow_pickle=False, and a safetensors header is checked in full — its length
against the file, each entry's dtype, shape and byte range, the ranges tiling the data
exactly — before any array is made; anything wrong is a SerializationError naming the
file and the problem. Tensors load onto the CPU (or `map_location`).

Which of the three a file holds is recorded as agrad's metadata ({"agrad": "tensor"},
{"agrad": "dict"} or {"agrad": "structure", "structure": JSON}, see agrad._saved_structure:
safetensors' `__metadata__`, an npz's `__metadata__` text array); a file written by other
tools (np.savez, safetensors' save_file) loads as a dict.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping

import numpy as np

from . import _safetensors
from ._atomic_write import write_atomically
from ._saved_structure import StructureError, flatten, unflatten

__all__ = ["save", "load", "SerializationError"]


class SerializationError(RuntimeError):
    """A file agrad.load cannot read: not the format its suffix says, truncated, or
    inconsistent (PyTorch raises RuntimeError for a damaged checkpoint too)."""


_METADATA_KEY = "__metadata__"
_TENSOR_KEY = "tensor"          # the entry holding a file's single tensor


def _format(path: str) -> str:
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".npz", ".safetensors"):
        return suffix[1:]
    raise ValueError(f"agrad saves and loads .npz and .safetensors files (never pickle), not {suffix or 'a file'} "
                     f"without one of those suffixes: {path}")


# -- save ----------------------------------------------------------------------------------
def save(obj, f) -> None:
    """Write `obj` to the path `f` (`.npz` or `.safetensors`): a Tensor, a dict of str →
    Tensor (a state_dict), or dicts, lists and tuples of those and of None, bool, int,
    float and str (`{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}`)."""
    from ._tensor import Tensor
    path = os.fspath(f)
    fmt = _format(path)
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
    path = os.fspath(f)
    fmt = _format(path)
    arrays, metadata = _read_npz(path) if fmt == "npz" else _read_safetensors(path)
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
    if array.dtype not in _safetensors.NAMES:
        raise SerializationError(f"{path}: {name!r} has dtype {array.dtype}, which agrad has no tensors of")
    return array.astype(array.dtype.newbyteorder("="), copy=False)


def _read_npz(path: str) -> tuple[dict, dict]:
    # NOTE: np.load raises ValueError for pickled data or an object array (allow_pickle=False),
    # zipfile's errors for a damaged archive (NotImplementedError for a compression it does not know),
    # EOFError/OSError for a truncated member; and a member's header is text NumPy parses with
    # tokenize, literal_eval and descr_to_dtype, which raise whatever the file's bytes make them
    # (TokenError, SyntaxError, IndexError, TypeError, OverflowError): all of it is a damaged file
    unreadable = Exception
    try:
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except unreadable as exc:
        raise SerializationError(f"{path}: not a readable .npz archive ({type(exc).__name__}: {exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise SerializationError(f"{path}: not an .npz archive but a single .npy array")
    try:
        with archive:
            arrays = {name: archive[name] for name in archive.files}
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


def _read_safetensors(path: str) -> tuple[dict, dict]:
    try:
        return _safetensors.read(path)
    except _safetensors.FormatError as exc:
        raise SerializationError(str(exc)) from None
