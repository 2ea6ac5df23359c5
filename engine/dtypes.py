"""agrad's dtypes and PyTorch's type-promotion rules.

NumPy and PyTorch promote differently (NumPy 2 lets a 0-d float64 array win
over a float32 vector; PyTorch does not), so agrad computes every result dtype
itself, with PyTorch's three priority groups: dimensioned tensors, 0-d tensors,
Python numbers ("wrapped numbers"). uint32 and uint64 are PyTorch's "barebones" unsigned
types: they promote only with themselves and with floating dtypes; any other pair is
PyTorch's error ("Promotion for uint16, uint32, uint64 types is not supported").
"""
from __future__ import annotations

import functools

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "uint32", "uint64",
           "bool_",
           "from_name", "from_numpy", "get_default_dtype", "set_default_dtype", "result_type", "promote_types",
           "can_cast"]


class dtype:
    """torch.dtype: is_floating_point, is_signed, is_complex (always False: agrad has no complex
    dtypes), itemsize, to_real(); `np` is the NumPy dtype that holds the values."""
    __slots__ = ("name", "np", "is_floating_point", "category", "itemsize", "is_signed")
    is_complex = False

    def __init__(self, name: str, np_dtype, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category            # 0 bool, 1 integral, 2 floating
        self.is_floating_point = category == 2
        self.itemsize = self.np.itemsize
        self.is_signed = self.np.kind in "fi"

    def to_real(self) -> "dtype":
        """The real dtype of this one: itself (agrad's dtypes are all real)."""
        return self

    def __repr__(self):
        return f"agrad.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
uint32 = dtype("uint32", np.uint32, 1)
uint64 = dtype("uint64", np.uint64, 1)
float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)

ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, uint32, uint64, bool_)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}
# NumPy dtypes PyTorch would map onto one of ours when reading files.
_NP_ALIASES = {np.dtype(np.uint16): int32}
# PyTorch's barebones unsigned types: no promotion with other integral or bool dtypes
_BAREBONES = frozenset({np.dtype(np.uint32), np.dtype(np.uint64)})
# c10's ScalarType names (what PyTorch's messages call each dtype); messages.scalar_type_name reads them
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int", "int64": "Long",
                     "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "uint32": "UInt32",
                     "uint64": "UInt64"}


_default_float = float32


def get_default_dtype() -> dtype:
    """The dtype of a tensor made from Python floats, of the float factories (zeros, rand …) and of
    a Python float operand: float32 unless set_default_dtype said otherwise."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """torch.set_default_dtype: float16, float32 or float64 (PyTorch's floating dtypes; it refuses the
    others with these messages)."""
    global _default_float
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both promote to (PyTorch's table; see _promote_pair)."""
    for position, (name, value) in enumerate((("type1", type1), ("type2", type2)), 1):
        if not isinstance(value, dtype):
            raise TypeError(f"promote_types(): argument '{name}' (position {position}) must be torch.dtype, not "
                            f"{type(value).__name__}")
    return _BY_NP[_promote(type1.np, type2.np)]


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch.can_cast: whether PyTorch's type promotion allows the cast (c10's canCast): not floating to
    integral, not anything but bool to bool."""
    for position, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {position}) must be torch.dtype, not "
                            f"{type(value).__name__}")
    if from_.category == 2 and to.category == 1:
        return False
    return not (from_.category != 0 and to.category == 0)


def from_name(name: str) -> dtype:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; expected one of {', '.join(_BY_NAME)}") from None


def from_numpy(np_dtype) -> dtype:
    d = _BY_NP.get(np_dtype) or _NP_ALIASES.get(np.dtype(np_dtype))
    if d is None:
        raise TypeError(f"agrad has no dtype for NumPy's {np.dtype(np_dtype)}")
    return d


def names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


# ---- promotion ----------------------------------------------------------------

def _promote(a: np.dtype | None, b: np.dtype | None) -> np.dtype | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    return _promote_pair(a, b)


@functools.lru_cache(maxsize=None)
def _promote_pair(a: np.dtype, b: np.dtype) -> np.dtype:
    # NOTE: np.promote_types agrees with torch.promote_types on the dtypes agrad has (uint8 with
    # int8 is int16 in both), except that NumPy promotes integers with float16 to float64 (or
    # float32); PyTorch keeps float16, so a category difference is decided here first.
    ca, cb = _BY_NP[a].category, _BY_NP[b].category
    if (a in _BAREBONES or b in _BAREBONES) and ca != 2 and cb != 2:
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{SCALAR_TYPE_NAMES[_BY_NP[a].name]} and {SCALAR_TYPE_NAMES[_BY_NP[b].name]}")
    if ca != cb:
        return a if ca > cb else b
    return np.promote_types(a, b)


def _combine_categories(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    # c10's combine_categories: a lower-priority group only matters when it is of a
    # higher category (bool < integral < floating) than the higher-priority group.
    if higher is None:
        return lower
    if lower is None or _BY_NP[higher].category == 2:
        return higher
    if higher == np.bool_ or _BY_NP[lower].category == 2:
        return _promote(higher, lower)
    return higher


_PY_SCALAR = {bool: np.dtype(np.bool_), int: np.dtype(np.int64)}


def scalar_dtype(value) -> np.dtype:
    """The dtype PyTorch gives a Python number used as a tensor operand."""
    t = type(value)
    if t is float:
        return _default_float.np
    d = _PY_SCALAR.get(t)
    if d is not None:
        return d
    if isinstance(value, np.generic):     # NumPy scalars behave as Python numbers here
        return {0: np.dtype(np.bool_), 1: np.dtype(np.int64), 2: _default_float.np}[from_numpy(value.dtype).category]
    raise TypeError(f"expected a tensor or a number, got {t.__name__}")


def result_type(operands) -> np.dtype:
    """PyTorch's result_type over a mix of arrays (anything with .dtype and .ndim) and numbers."""
    dim = zero = wrapped = None
    for x in operands:
        if x is None:
            continue
        nd = getattr(x, "ndim", None)
        if nd is None:
            wrapped = _promote(wrapped, scalar_dtype(x))
        elif nd:
            dim = _promote(dim, x.dtype)
        else:
            zero = _promote(zero, x.dtype)
    return _combine_categories(dim, _combine_categories(zero, wrapped))


def to_float(np_dtype: np.dtype) -> np.dtype:
    """Integral and bool dtypes become the default float (torch.exp(int) is float32)."""
    return np_dtype if _BY_NP[np_dtype].category == 2 else _default_float.np
