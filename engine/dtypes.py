"""agrad's dtypes and PyTorch's type-promotion rules.

NumPy and PyTorch promote differently (NumPy 2 lets a 0-d float64 array win
over a float32 vector; PyTorch does not), so agrad computes every result dtype
itself, with PyTorch's three priority groups: dimensioned tensors, 0-d tensors,
Python numbers ("wrapped numbers"). uint32 and uint64 are PyTorch's "barebones" unsigned
types: they promote only with themselves and with floating dtypes; any other pair is
PyTorch's error ("Promotion for uint16, uint32, uint64 types is not supported").
complex64 and complex128 (ComplexFloat, ComplexDouble) are a fourth category above floating: a
complex dtype with a floating one gives the complex dtype of their promoted real parts (complex64 with
float64 is complex128), as c10's promoteTypes; there is no complex32 (ComplexHalf).
"""
from __future__ import annotations

import functools

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "complex64", "complex128",
           "int8", "uint8", "int16", "int32", "int64", "uint32", "uint64",
           "bool_",
           "from_name", "from_numpy", "get_default_dtype", "set_default_dtype", "result_type", "promote_types",
           "can_cast"]


class dtype:
    """torch.dtype: is_floating_point, is_complex, is_signed, itemsize, to_real(), to_complex();
    `np` is the NumPy dtype that holds the values."""
    __slots__ = ("name", "np", "is_floating_point", "is_complex", "category", "itemsize", "is_signed")

    def __init__(self, name: str, np_dtype, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category            # 0 bool, 1 integral, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.itemsize = self.np.itemsize
        self.is_signed = self.np.kind in "fic"

    def to_real(self) -> "dtype":
        """The real dtype of this one: a complex dtype's real part (complex64 -> float32), else itself."""
        return _TO_REAL.get(self, self)

    def to_complex(self) -> "dtype":
        """The complex dtype of this one (float32 -> complex64), itself if complex; c10's toComplexType
        refuses the others, as here (float16's complex32 is not one of agrad's dtypes)."""
        if self.is_complex:
            return self
        to = _TO_COMPLEX.get(self)
        if to is None:
            raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_TYPE_NAMES[self.name]}"
                               if self.category != 2 else "agrad has no complex32 (ComplexHalf), the complex "
                               "dtype of float16")
        return to

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
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float32: complex64, float64: complex128}

ALL = (float16, float32, float64, complex64, complex128, uint8, int8, int16, int32, int64, uint32, uint64, bool_)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}
# NumPy dtypes PyTorch would map onto one of ours when reading files.
_NP_ALIASES = {np.dtype(np.uint16): int32}
# PyTorch's barebones unsigned types: no promotion with other integral or bool dtypes
_BAREBONES = frozenset({np.dtype(np.uint32), np.dtype(np.uint64)})
# c10's ScalarType names (what PyTorch's messages call each dtype); messages.scalar_type_name reads them
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int", "int64": "Long",
                     "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "uint32": "UInt32",
                     "uint64": "UInt64", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


_default_float = float32


def get_default_dtype() -> dtype:
    """The dtype of a tensor made from Python floats, of the float factories (zeros, rand …) and of
    a Python float operand: float32 unless set_default_dtype said otherwise."""
    return _default_float


def default_complex_dtype() -> dtype:
    """The dtype of a tensor made from Python complex numbers and of a Python complex operand: the
    default dtype's complex type (complex64, or complex128 under set_default_dtype(float64))."""
    return _default_float.to_complex()


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
    """torch.can_cast: whether PyTorch's type promotion allows the cast (c10's canCast): not complex to
    a real dtype, not floating to integral, not anything but bool to bool."""
    for position, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {position}) must be torch.dtype, not "
                            f"{type(value).__name__}")
    if from_.category == 3 and to.category != 3:
        return False
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
        if max(ca, cb) == 3 and min(ca, cb) == 2:
            # c10: a complex and a floating dtype give the complex type of their real parts' promotion
            return np.promote_types(a, b)
        return a if ca > cb else b
    return np.promote_types(a, b)


def _combine_categories(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    # c10's combine_categories: a lower-priority group only matters when it is of a
    # higher category (bool < integral < floating < complex) than the higher-priority group;
    # a complex one over a floating one keeps the floating one's precision (float64 * 1j is complex128).
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = _BY_NP[higher].category, _BY_NP[lower].category
    if ch == 3:
        return higher
    if cl == 3:
        return _BY_NP[higher].to_complex().np if ch == 2 else lower
    if ch == 2:
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
    if t is complex:
        return default_complex_dtype().np
    if isinstance(value, np.generic):     # NumPy scalars behave as Python numbers here
        category = from_numpy(value.dtype).category
        if category == 3:
            return default_complex_dtype().np
        return {0: np.dtype(np.bool_), 1: np.dtype(np.int64), 2: _default_float.np}[category]
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
    """Integral and bool dtypes become the default float (torch.exp(int) is float32); floating and
    complex dtypes stay."""
    return np_dtype if _BY_NP[np_dtype].category >= 2 else _default_float.np
