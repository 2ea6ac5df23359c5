"""The headers of .npy files and .npz members, read and checked before any data is.

An .npy header is text NumPy parses and believes: it may declare any shape, and a
compressed .npz member may inflate to gigabytes from a few kilobytes (a "zip bomb").
Every reader of untrusted arrays goes through here first: graph inputs, training data
and checkpoints (agrad.graphs.inputs) and agrad.load. A header that does not parse is a
ValueError; one that parses but is refused (encrypted, Python objects, a size the archive does
not hold, a bomb) is a Refused. Messages name the array, not the file: the caller names it.
"""
from __future__ import annotations

import math

import numpy as np

from ._allocation import memory_bytes

# A compressed member that inflates past 1 GiB at more than 100:1 is refused unread.
BOMB_BYTES, BOMB_RATIO = 2**30, 100


class Refused(ValueError):
    """An array whose header reads, refused for what it declares."""


def npy_header(stream) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header length) of an .npy stream, reading only its header. ValueError for a
    header that is not one: NumPy parses the header's text with `tokenize`, `ast.literal_eval`
    and `descr_to_dtype`, which raise whatever a hostile text makes them (TokenError, SyntaxError,
    TypeError, RecursionError, ...)."""
    try:
        major, _ = np.lib.format.read_magic(stream)
        read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(stream)
    except (ValueError, EOFError, OSError):
        raise
    except Exception as exc:            # noqa: BLE001 - see above: the header's text is the file's
        raise ValueError(f"not an .npy array header ({type(exc).__name__}: {exc})") from None
    # NumPy accepts any int in the shape, `True` and negatives too; those would reach np.memmap and
    # np.fromfile as a TypeError or a size that the data check below cannot trust.
    if any(type(size) is not int or size < 0 for size in shape):
        raise ValueError(f"not an .npy array header (shape {shape!r} is not sizes >= 0)")
    return shape, dtype, stream.tell()


OBJECTS = "holds Python objects, which would need unpickling; agrad reads arrays with allow_pickle=False"


def member_header(archive, info, key: str) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, data bytes) of one .npz member (a zipfile.ZipInfo of `archive`), from its
    header and the zip directory: its declared size must be what the archive holds."""
    if info.flag_bits & 0x1:            # zipfile would raise RuntimeError asking for a password
        raise Refused(f"array '{key}' is encrypted (a password-protected archive)")
    with archive.open(info) as member:
        shape, dtype, header = npy_header(member)
    if dtype.hasobject:
        raise Refused(f"array '{key}' {OBJECTS}")
    nbytes = math.prod(shape) * dtype.itemsize
    if header + nbytes != info.file_size:
        raise Refused(f"array '{key}' declares {nbytes:,} bytes of data but the archive holds "
                         f"{info.file_size - header:,}")
    return tuple(shape), dtype, nbytes


def refuse_inflation(what: str, nbytes: int, compressed: int) -> None:
    """Refused when `what` would inflate `compressed` bytes to `nbytes`: a bomb, or past memory."""
    if nbytes > BOMB_BYTES and nbytes > BOMB_RATIO * compressed:
        raise Refused(f"{what} would inflate to {nbytes / 2**30:.1f} GiB from {compressed / 2**20:.1f} MiB "
                         "(a zip bomb?); save large arrays uncompressed (np.savez or np.save)")
    memory = memory_bytes()
    if memory is not None and nbytes > memory:
        raise Refused(f"{what} would inflate to {nbytes / 2**30:.1f} GiB, more than this machine's memory "
                         f"({memory / 2**30:.1f} GiB)")


def check_archive(archive) -> None:
    """Every .npy member of an open zipfile checked (`member_header`), each and all together
    (`refuse_inflation`), before anything is inflated. Members of other names are the caller's."""
    total = compressed = 0
    for info in archive.infolist():
        if info.filename.endswith(".npy"):
            _, _, nbytes = member_header(archive, info, info.filename[:-4])
            refuse_inflation(f"array '{info.filename[:-4]}'", nbytes, info.compress_size)
            total += nbytes
            compressed += info.compress_size
    refuse_inflation("the archive", total, compressed)
