"""The safetensors format (a little-endian u64 header length, a JSON header naming each
tensor's dtype, shape and byte range, then the raw bytes), read and written without the
`safetensors` package: a graph input may read `{file: weights.safetensors, key: NAME}`, and
`agrad import --weights safetensors` writes one. Nothing in the format is executable."""
from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

_DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "U8": np.uint8, "I8": np.int8,
           "I16": np.int16, "I32": np.int32, "I64": np.int64, "BOOL": np.bool_}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}
_MAX_HEADER = 100 * 2**20          # the format's own limit for the JSON header


def write(f, arrays: dict[str, np.ndarray]) -> None:
    header, offset, blobs = {}, 0, []
    for name, array in arrays.items():
        array = np.asarray(array)
        array = array if array.flags.c_contiguous else array.copy(order="C")     # (ascontiguousarray makes 0-d 1-d)
        kind = _NAMES.get(array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype)
        if kind is None:
            raise ValueError(f"safetensors has no dtype for {array.dtype} ({name})")
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": kind, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for blob in blobs:
        f.write(blob)


def read_entry(path: Path, key: str) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, absolute byte offset) of tensor `key`; ValueError for a file that is not
    safetensors or whose entry does not fit in it."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError("too short for a safetensors file")
        (length,) = struct.unpack("<Q", head)
        if length > min(_MAX_HEADER, size - 8):
            raise ValueError(f"header length {length:,} does not fit in the file")
        try:
            header = json.loads(f.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"header is not JSON ({exc})") from None
    if not isinstance(header, dict) or key not in header or key == "__metadata__":
        names = [k for k in header if k != "__metadata__"] if isinstance(header, dict) else []
        raise KeyError(f"no tensor '{key}' (it has: {', '.join(names) or 'none'})")
    entry = header[key]
    try:
        dtype = np.dtype(_DTYPES[entry["dtype"]]).newbyteorder("<")
        shape = tuple(int(d) for d in entry["shape"])
        start, end = (int(v) for v in entry["data_offsets"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"tensor '{key}' has a malformed entry {entry!r}"[:300]) from None
    if any(d < 0 for d in shape) or end - start != math.prod(shape) * dtype.itemsize or start < 0 or \
            8 + length + end > size:
        raise ValueError(f"tensor '{key}' declares {list(shape)} {entry['dtype']} at bytes {start}..{end}, "
                         f"which the file ({size:,} bytes) does not hold")
    return shape, dtype, 8 + length + start


def load(path: Path, key: str) -> np.ndarray:
    """Tensor `key`, memory-mapped (read when used)."""
    shape, dtype, offset = read_entry(path, key)
    if math.prod(shape) == 0:
        return np.zeros(shape, dtype)
    mapped = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(math.prod(shape),))
    return np.asarray(mapped).reshape(shape)        # a view of the map, 0-d included
