"""Leaf tensors: host arrays from literals, inits and files, then tensors on a device.

Data is made on the host with NumPy (random inits with a seeded Generator), so
the same init, shape, dtype and seed give the same tensor on every device.
Files are read with `allow_pickle=False`: a graph file never unpickles anything.
"""
from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .diagnostics import Pos
from .document import literal_shape
from .spec import InputSpec


class InputError(Exception):
    """An input's data cannot be made; becomes a Diagnostic at `pos`."""

    def __init__(self, code: str, message: str, pos: Pos):
        super().__init__(message)
        self.code = code
        self.message = message
        self.pos = pos


@dataclass
class LeafPlan:
    """What one leaf will be: enough to build it on Meta without touching data."""
    name: str
    shape: tuple[int, ...]
    dtype: str
    device: str
    requires_grad: bool
    spec: InputSpec
    array: np.ndarray | None = None          # file data (may be memory-mapped), read once


def read_array_file(path: Path, key: str | None, pos: Pos) -> np.ndarray:
    try:
        if path.suffix.lower() == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                if key not in archive.files:
                    raise InputError("AG013", f"{path.name} has no array '{key}' (it has: "
                                     f"{', '.join(archive.files) or 'none'})", pos)
                return archive[key]
        _refuse_object_arrays(path, pos)
        # A memory map reads only the header now; Meta inference needs only shape and dtype.
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError("AG013", f"input file not found: {path}", pos) from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        # NumPy says "Object arrays cannot be loaded when allow_pickle=False" for pickles.
        raise InputError("AG013", f"cannot read {path.name}: {exc}", pos) from None


def _refuse_object_arrays(path: Path, pos: Pos) -> None:
    with open(path, "rb") as f:
        major, _ = np.lib.format.read_magic(f)
        read_header = (np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0)
        _, _, dtype = read_header(f)
    if dtype.hasobject:
        raise InputError("AG013", f"{path.name} holds Python objects, which would need unpickling; "
                         "agrad reads arrays with allow_pickle=False", pos)


def plan_leaf(spec: InputSpec, *, base_dir: Path, default_dtype: str, default_device: str,
              override: Path | None = None, doc_pos=None) -> LeafPlan:
    """The leaf's shape, dtype and device; reads file inputs (and `--input` overrides)."""
    device = spec.device or default_device
    if override is not None or spec.kind == "file":
        path = override if override is not None else base_dir / spec.file
        pos = spec.pos if override is not None else (doc_pos or spec.pos)
        array = read_array_file(Path(path), spec.key if override is None else _override_key(path, spec), pos)
        try:
            from agrad import dtypes
            array_dtype = dtypes.from_numpy(array.dtype).name
        except (TypeError, ImportError):
            raise InputError("AG013", f"{Path(path).name}: agrad has no dtype for NumPy's {array.dtype}",
                             pos) from None
        return LeafPlan(spec.name, tuple(array.shape), spec.dtype or array_dtype, device, spec.requires_grad,
                        spec, array)
    if spec.kind == "init":
        return LeafPlan(spec.name, spec.shape, spec.dtype or default_dtype, device, spec.requires_grad, spec)
    return LeafPlan(spec.name, literal_shape(spec.value), spec.dtype or default_dtype, device,
                    spec.requires_grad, spec)


def _override_key(path: Path, spec: InputSpec) -> str | None:
    # `--input x=data.npz` reads the array named like the input unless the graph names a key.
    return (spec.key or spec.name) if Path(path).suffix.lower() == ".npz" else None


def host_array(plan: LeafPlan, graph_seed: int) -> np.ndarray:
    """The leaf's data as a NumPy array in its final dtype."""
    spec = plan.spec
    np_dtype = np.dtype(plan.dtype if plan.dtype != "bool" else np.bool_)
    if plan.array is not None:
        return np.array(plan.array, dtype=np_dtype)
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
