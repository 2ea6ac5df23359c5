"""The safetensors format, read and written with NumPy alone: a little-endian u64 header
length, a JSON header naming each tensor's dtype, shape and byte range (and string metadata),
then the raw bytes. Nothing in it is executable. `agrad.save`/`agrad.load` use it, as do graph
inputs (`{file: W.safetensors, key: NAME}`, memory-mapped) and `agrad import --weights
safetensors`. Every malformed file is a FormatError naming the file and what is wrong."""
from __future__ import annotations

import json
import math
import os
import struct

import numpy as np

__all__ = ["write", "read", "read_tensor", "FormatError", "NAMES"]


class FormatError(ValueError):
    """A file that is not well-formed safetensors, or an array it cannot hold."""


MAX_HEADER = 100_000_000       # safetensors' own limit on the JSON header, in bytes
MAX_DIMS, MAX_SIZE = 64, 2**63 - 1     # NumPy's most dimensions, and its largest size (an int64)

# safetensors' dtype names; BF16 is read as float32 (exactly: bfloat16 is float32's top half). The
# format has C64 (complex64) but no complex128, which is refused on writing, as safetensors does.
DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "I16": np.int16,
          "I32": np.int32, "I64": np.int64, "U8": np.uint8, "BOOL": np.bool_, "C64": np.complex64}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}
_METADATA_KEY = "__metadata__"


def write(fh, arrays: dict, metadata: dict | None = None) -> None:
    """Arrays (C order) and string metadata into the open binary file `fh`."""
    header: dict = {_METADATA_KEY: metadata} if metadata else {}
    offset = 0
    for name, array in arrays.items():
        dtype_name = NAMES.get(array.dtype)
        if dtype_name is None:
            raise FormatError(f"{name!r} has dtype {array.dtype}, which safetensors cannot hold")
        header[name] = {"dtype": dtype_name, "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)            # the format pads the header to 8 bytes with spaces
    fh.write(struct.pack("<Q", len(text)))
    fh.write(text)
    for array in arrays.values():
        fh.write(array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())


def read(path: str, data: bytes | None = None) -> tuple[dict, dict]:
    """(arrays by name in the file's order, metadata): every entry checked, BF16 widened to float32.
    `data`: the file's bytes where they are at hand already (a file object's), `path` naming them."""
    if data is None:
        with open(path, "rb") as fh:
            data = fh.read()
    if len(data) < 8:
        raise FormatError(f"{path}: truncated: {len(data)} bytes, shorter than the 8-byte header length")
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > MAX_HEADER:
        raise FormatError(f"{path}: the header length ({header_len} bytes) is over the format's limit of "
                                 f"{MAX_HEADER}")
    if 8 + header_len > len(data):
        raise FormatError(f"{path}: truncated: the header says {header_len} bytes, the file has "
                                 f"{len(data) - 8} after the length")
    header = _parse_header(path, data[8:8 + header_len])
    metadata = header.pop(_METADATA_KEY, {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise FormatError(f"{path}: {_METADATA_KEY} must map strings to strings")
    buffer = memoryview(data)[8 + header_len:]
    entries = [_checked_entry(path, name, entry) for name, entry in header.items()]
    # NOTE: as the format requires (and safetensors checks): the byte ranges tile the data exactly
    end = 0
    for name, _dtype, _shape, (begin, stop) in sorted(entries, key=lambda e: e[3]):
        if begin != end:
            raise FormatError(f"{path}: {name!r} starts at byte {begin} of the data, expected {end} "
                                     "(entries overlap or leave a gap)")
        end = stop
    if end != len(buffer):
        raise FormatError(f"{path}: truncated or padded: the entries cover {end} bytes of data, the file "
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
            raise FormatError(f"{path}: the header names an entry twice")
        return dict(pairs)

    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise FormatError(f"{path}: not a safetensors file: its header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise FormatError(f"{path}: not a safetensors file: its header is not a JSON object")
    return header


def _checked_entry(path: str, name: str, entry) -> tuple:
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise FormatError(f"{path}: entry {name!r} must have exactly dtype, shape and data_offsets")
    dtype_name, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype_name, str):         # a JSON list or object cannot be looked up
        raise FormatError(f"{path}: entry {name!r} has dtype {dtype_name!r}, not a dtype's name")
    if dtype_name == "BF16":
        dtype = np.dtype("<u2")
    elif dtype_name in DTYPES:
        dtype = np.dtype(DTYPES[dtype_name]).newbyteorder("<")
    else:
        raise FormatError(f"{path}: entry {name!r} has dtype {dtype_name!r}, which agrad cannot read "
                                 f"(it reads {', '.join(DTYPES)} and BF16)")

    def natural(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if not isinstance(shape, list) or not all(natural(s) for s in shape):
        raise FormatError(f"{path}: entry {name!r} has shape {shape!r}, not a list of sizes")
    # NOTE: NumPy's limits, past which np.zeros and reshape raise (OverflowError, ValueError): a shape
    # with a zero in it holds no bytes, so the data_offsets check below does not bound its other sizes
    if len(shape) > MAX_DIMS or any(s > MAX_SIZE for s in shape):
        raise FormatError(f"{path}: entry {name!r} has shape {_shown(shape)}: more than NumPy's {MAX_DIMS} "
                          f"dimensions or a size past int64")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(natural(o) for o in offsets)
            and offsets[0] <= offsets[1]):
        raise FormatError(f"{path}: entry {name!r} has data_offsets {offsets!r}, not [begin, end]")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if offsets[1] - offsets[0] != nbytes:
        raise FormatError(f"{path}: entry {name!r} of shape {shape} and dtype {dtype_name} needs {nbytes} "
                                 f"bytes; its data_offsets give {offsets[1] - offsets[0]}")
    return name, dtype, tuple(shape), (offsets[0], offsets[1])


def _shown(shape: list) -> str:
    text = str(shape)
    return text if len(text) <= 80 else text[:77] + "..."


def read_tensor(path: str, key: str) -> np.ndarray:
    """Tensor `key` alone, memory-mapped (read when used): only its header entry is checked."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise FormatError(f"{path}: truncated: {len(head)} bytes, shorter than the 8-byte header length")
        (header_len,) = struct.unpack("<Q", head)
        if header_len > min(MAX_HEADER, size - 8):
            raise FormatError(f"{path}: the header length ({header_len:,} bytes) does not fit in the file")
        header = _parse_header(path, fh.read(header_len))
    header.pop(_METADATA_KEY, None)
    if key not in header:
        raise KeyError(f"no tensor '{key}' (it has: {', '.join(header) or 'none'})")
    name, dtype, shape, (begin, end) = _checked_entry(path, key, header[key])
    start = 8 + header_len + begin
    if 8 + header_len + end > size:
        raise FormatError(f"{path}: tensor '{key}' declares bytes {begin}..{end} of the data, which the file "
                          f"({size:,} bytes) does not hold")
    count = math.prod(shape)
    if count == 0:
        return np.zeros(shape, np.float32 if header[key]["dtype"] == "BF16" else dtype.newbyteorder("="))
    array = np.memmap(path, dtype=dtype, mode="r", offset=start, shape=(count,)).reshape(shape)
    if header[key]["dtype"] == "BF16":      # the top 16 bits of a float32: widened exactly
        return (array.astype(np.uint32) << 16).view(np.float32)
    return np.asarray(array)
