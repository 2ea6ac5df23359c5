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
import struct
import zipfile
from collections.abc import Mapping

import numpy as np

from ._atomic_write import write_atomically
from ._saved_structure import StructureError, flatten, unflatten

__all__ = ["save", "load", "SerializationError"]

_METADATA_KEY = "__metadata__"
_TENSOR_KEY = "tensor"          # the entry holding a file's single tensor
_MAX_HEADER = 100_000_000       # safetensors' own limit on the JSON header, in bytes

# safetensors' dtype names; BF16 is read as float32 (exactly: bfloat16 is float32's top half)
_SAFETENSORS_DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "I16": np.int16,
                       "I32": np.int32, "I64": np.int64, "U8": np.uint8, "BOOL": np.bool_}
_SAFETENSORS_NAMES = {np.dtype(v): k for k, v in _SAFETENSORS_DTYPES.items()}


class SerializationError(RuntimeError):
    """A file agrad.load cannot read: not the format its suffix says, truncated, or
    inconsistent (PyTorch raises RuntimeError for a damaged checkpoint too)."""


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


def _write_safetensors(fh, arrays: dict, metadata: dict) -> None:
    header: dict = {_METADATA_KEY: metadata}
    offset = 0
    for name, array in arrays.items():
        dtype_name = _SAFETENSORS_NAMES.get(array.dtype)
        if dtype_name is None:
            raise TypeError(f"agrad.save: {name!r} has dtype {array.dtype}, which safetensors cannot hold")
        header[name] = {"dtype": dtype_name, "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)            # the format pads the header to 8 bytes with spaces
    fh.write(struct.pack("<Q", len(text)))
    fh.write(text)
    for array in arrays.values():
        fh.write(array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())


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
    if array.dtype not in _SAFETENSORS_NAMES:
        raise SerializationError(f"{path}: {name!r} has dtype {array.dtype}, which agrad has no tensors of")
    return array.astype(array.dtype.newbyteorder("="), copy=False)


def _read_npz(path: str) -> tuple[dict, dict]:
    # NOTE: np.load raises ValueError for pickled data or an object array (allow_pickle=False),
    # zipfile's errors for a damaged archive, EOFError/OSError for a truncated member
    unreadable = (zipfile.BadZipFile, ValueError, EOFError, KeyError, OSError)
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


def _read_safetensors(path: str) -> tuple[dict, dict]:
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) < 8:
        raise SerializationError(f"{path}: truncated: {len(data)} bytes, shorter than the 8-byte header length")
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > _MAX_HEADER:
        raise SerializationError(f"{path}: the header length ({header_len} bytes) is over the format's limit of "
                                 f"{_MAX_HEADER}")
    if 8 + header_len > len(data):
        raise SerializationError(f"{path}: truncated: the header says {header_len} bytes, the file has "
                                 f"{len(data) - 8} after the length")
    header = _parse_header(path, data[8:8 + header_len])
    metadata = header.pop(_METADATA_KEY, {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise SerializationError(f"{path}: {_METADATA_KEY} must map strings to strings")
    buffer = memoryview(data)[8 + header_len:]
    entries = [_checked_entry(path, name, entry) for name, entry in header.items()]
    # NOTE: as the format requires (and safetensors checks): the byte ranges tile the data exactly
    end = 0
    for name, _dtype, _shape, (begin, stop) in sorted(entries, key=lambda e: e[3]):
        if begin != end:
            raise SerializationError(f"{path}: {name!r} starts at byte {begin} of the data, expected {end} "
                                     "(entries overlap or leave a gap)")
        end = stop
    if end != len(buffer):
        raise SerializationError(f"{path}: truncated or padded: the entries cover {end} bytes of data, the file "
                                 f"has {len(buffer)}")
    arrays = {}
    for name, dtype, shape, (begin, stop) in entries:
        array = np.frombuffer(buffer[begin:stop], dtype=dtype).reshape(shape)
        if header[name]["dtype"] == "BF16":     # the top 16 bits of a float32: widened exactly
            array = (array.astype(np.uint32) << 16).view(np.float32)
        arrays[name] = array.astype(array.dtype.newbyteorder("="), copy=True)
    return arrays, metadata


def _parse_header(path: str, raw: bytes) -> dict:
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise SerializationError(f"{path}: the header names an entry twice")
        return dict(pairs)

    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise SerializationError(f"{path}: not a safetensors file: its header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise SerializationError(f"{path}: not a safetensors file: its header is not a JSON object")
    return header


def _checked_entry(path: str, name: str, entry) -> tuple:
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise SerializationError(f"{path}: entry {name!r} must have exactly dtype, shape and data_offsets")
    dtype_name, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if dtype_name == "BF16":
        dtype = np.dtype("<u2")
    elif dtype_name in _SAFETENSORS_DTYPES:
        dtype = np.dtype(_SAFETENSORS_DTYPES[dtype_name]).newbyteorder("<")
    else:
        raise SerializationError(f"{path}: entry {name!r} has dtype {dtype_name!r}, which agrad cannot read "
                                 f"(it reads {', '.join(_SAFETENSORS_DTYPES)} and BF16)")

    def natural(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if not isinstance(shape, list) or not all(natural(s) for s in shape):
        raise SerializationError(f"{path}: entry {name!r} has shape {shape!r}, not a list of sizes")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(natural(o) for o in offsets)
            and offsets[0] <= offsets[1]):
        raise SerializationError(f"{path}: entry {name!r} has data_offsets {offsets!r}, not [begin, end]")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if offsets[1] - offsets[0] != nbytes:
        raise SerializationError(f"{path}: entry {name!r} of shape {shape} and dtype {dtype_name} needs {nbytes} "
                                 f"bytes; its data_offsets give {offsets[1] - offsets[0]}")
    return name, dtype, tuple(shape), (offsets[0], offsets[1])
