"""How a tensor prints: PyTorch's torch/_tensor_str.py, ported for agrad's dtypes.

`repr(t)` is `_str(t)`: the values from the host copy (NumPy), formatted by `_Formatter` as PyTorch
formats them (one width for every element, 4 decimals, scientific notation when the magnitudes
span more than 1000x or leave [1e-4, 1e8], floats holding only integers as `1.`), summarized past
`threshold` elements to `edgeitems` at each end of every dimension, wrapped at `linewidth`, then
PyTorch's suffixes in PyTorch's order: device, size, dtype, grad_fn or requires_grad.

Values are formatted from a NumPy array, not through tensor ops as PyTorch does (its printing
slices, masks and stacks tensors): repr is called in error messages, and on a device the host
copy is all there is to read. A complex tensor prints as PyTorch's: one formatter for the real
parts, one for the imaginary parts (`1.0000+2.j`). Quantized, sparse, nested and named tensors are
PyTorch's branches agrad has no tensors for; the dtype's name prints as agrad's (`dtype=agrad.float64`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
from typing import Any

import numpy as np

from . import dtypes
from .backends.meta import StridedMetaArray

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class __PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = __PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: `profile` ('default', 'short', 'full') first, then each option given;
    `sci_mode` is always set (None lets the formatter choose), as in PyTorch."""
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments set_printoptions takes."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """set_printoptions(**kwargs) for the body of a `with`, the previous options restored after it."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


class _Formatter:
    """One width and one notation for every element printed, decided from the values that will
    show (the summarized ones): PyTorch decides from nonzero finite values only, so 0, nan and inf
    never switch a tensor to scientific notation."""

    def __init__(self, arr: np.ndarray):
        self.floating_dtype = arr.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating_dtype:
            # str() of Python's int and bool, as PyTorch's f"{value}" of a 0-d tensor is its item's
            self.max_width = max(1, max((len(str(v)) for v in flat.tolist()), default=1))
            return
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return
        # in float64 (PyTorch's tensor_totype): float16 overflows at 1e8
        finite_abs = np.abs(nonzero_finite).astype(np.float64)
        lo, hi = finite_abs.min(), finite_abs.max()
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        values = nonzero_finite.tolist()
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            spec = f"{{:.{precision}e}}"
            self.max_width = max(self.max_width, max(len(spec.format(v)) for v in values))
        elif self.int_mode:
            # one more for the '.' that marks the floating dtype ("1."), which nan and inf go without
            self.max_width = max(self.max_width, max(len(f"{v:.0f}") for v in values) + 1)
        else:
            spec = f"{{:.{precision}f}}"
            self.max_width = max(self.max_width, max(len(spec.format(v)) for v in values))

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _scalar_str(value, formatter: _Formatter, imag_formatter: _Formatter | None) -> str:
    """One element: a complex one as its real part, then its imaginary part's sign, digits and `j`."""
    if imag_formatter is None:
        return formatter.format(value)
    real_str = formatter.format(value.real)
    imag_str = (imag_formatter.format(value.imag) + "j").lstrip()
    # a negative imaginary part (or -0.) brings its own sign
    return real_str + imag_str if imag_str[0] in "+-" else real_str + "+" + imag_str


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, formatter: _Formatter,
                imag_formatter: _Formatter | None = None) -> str:
    # an element's length includes the ", " after it (and a complex one its imaginary part and `j`)
    element_length = formatter.width() + 2
    if imag_formatter is not None:
        element_length += imag_formatter.width() + 1
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems

    def fmt(values):
        return [_scalar_str(v, formatter, imag_formatter) for v in values.tolist()]
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = fmt(arr[:edge]) + [" ..."] + fmt(arr[-edge:])
    else:
        data = fmt(arr)
    lines = [", ".join(data[i:i + elements_per_line]) for i in range(0, len(data), elements_per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr: np.ndarray, indent: int, summarize: bool, formatter: _Formatter,
                               imag_formatter: _Formatter | None = None) -> str:
    # NOTE: recursion over the dimensions (a handful), as PyTorch's: each level adds a bracket
    dim = arr.ndim
    if dim == 0:
        return _scalar_str(arr.item(), formatter, imag_formatter)
    if dim == 1:
        return _vector_str(arr, indent, summarize, formatter, imag_formatter)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        rows = [*range(edge), None, *range(n - edge, n)]
    else:
        rows = range(n)
    slices = ["..." if i is None else _tensor_str_with_formatter(arr[i], indent + 1, summarize, formatter,
                                                                 imag_formatter) for i in rows]
    # blank lines between blocks: one fewer than the dimensions below this one
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(arr: np.ndarray, indent: int) -> str:
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    if arr.dtype.kind == "c":
        real, imag = arr.real, arr.imag
        return _tensor_str_with_formatter(arr, indent, summarize,
                                          _Formatter(get_summarized_data(real) if summarize else real),
                                          _Formatter(get_summarized_data(imag) if summarize else imag))
    formatter = _Formatter(get_summarized_data(arr) if summarize else arr)
    return _tensor_str_with_formatter(arr, indent, summarize, formatter)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int, force_newline: bool) -> str:
    """Each suffix after ', ', or on a line of its own (indented under the first value) where
    it would pass the line width; PyTorch's arithmetic, its `+ 1` included."""
    tensor_strs = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def get_summarized_data(arr: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (edgeitems at each end of every dimension), which
    alone decide the formatter. As PyTorch's, `arr[-0:]` is all of a 1-D `arr` with edgeitems=0."""
    dim = arr.ndim
    edge = PRINT_OPTS.edgeitems
    if dim == 0:
        return arr
    if dim == 1:
        if arr.shape[0] > 2 * edge:
            return np.concatenate((arr[:edge], arr[-edge:]))
        return arr
    if not edge:
        return np.empty([0] * dim, dtype=arr.dtype)
    n = arr.shape[0]
    rows = [*range(edge), *range(n - edge, n)] if n > 2 * edge else range(n)
    return np.stack([get_summarized_data(arr[i]) for i in rows])


def _is_plain(tensor) -> bool:
    """PyTorch prints Tensor and Parameter as `tensor(`, a subclass as `ClassName(`. Parameter lives
    in agrad.nn, above this module: it exists only once agrad.nn is imported."""
    cls = type(tensor)
    if cls is sys.modules["agrad._tensor"].Tensor:      # (imported: `tensor` is one)
        return True
    return cls is _parameter_class()


def _parameter_class():
    parameter = sys.modules.get("agrad.nn.parameter")
    return parameter.Parameter if parameter is not None else None


def _str(tensor, *, tensor_contents=None) -> str:
    """torch._tensor_str._str_intern for agrad's strided tensors; `tensor_contents` printed in place of the
    values (the suffixes as for the values)."""
    prefix = "tensor(" if _is_plain(tensor) else f"{type(tensor).__name__}("
    indent = len(prefix)
    suffixes = []
    device = tensor._device
    # NOTE: agrad's default device is always the CPU; PyTorch's rule prints any other (cuda:0 too)
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    dtype = tensor.dtype
    default_dtype = dtypes.get_default_dtype()
    if device.type == "meta" or (tensor_contents is None and tensor._data.__class__ is StridedMetaArray):
        # (a wrapper subclass's instance, printed without its handler's contents, has no values either)
        # no values to read: the size, and the dtype unless the default one (int64 too: nothing shows it)
        suffixes.append("size=" + str(tuple(tensor._data.shape)))
        if dtype is not default_dtype:
            suffixes.append(f"dtype={dtype!r}")
        tensor_str = "..."
    else:
        # (a wrapper subclass's array has no values: its shape is all there is to read without them)
        arr = tensor._host() if tensor_contents is None else tensor._data
        if arr.size == 0:
            # NumPy's habit: the shape printed unless (0,); the dtype, as no element shows it
            if arr.ndim != 1:
                suffixes.append("size=" + str(tuple(arr.shape)))
            if dtype is not default_dtype:
                suffixes.append(f"dtype={dtype!r}")
            tensor_str = "[]"
        else:
            if not PRINT_OPTS.edgeitems:
                suffixes.append("size=" + str(tuple(arr.shape)))
            # the dtypes a literal of these values would get: the default float and complex, int64, bool
            if dtype is not default_dtype and dtype is not dtypes.int64 and dtype is not dtypes.bool_ \
                    and dtype is not (dtypes.complex128 if default_dtype is dtypes.float64 else dtypes.complex64):
                suffixes.append(f"dtype={dtype!r}")
            tensor_str = _tensor_str(arr, indent) if tensor_contents is None else None
    if tensor_contents is not None:
        tensor_str = tensor_contents
    m = tensor._autograd_meta
    tangent = getattr(m, "fw_grad", None) if m is not None else None
    if tangent is not None and tangent is not False:       # a dual tensor (autograd/forward_ad.py)
        suffixes.append(f"tangent={tangent}")
    if m is not None:
        # the grad_fn a view rebuilds, "Invalid" where rebuilding it is refused (a view made under
        # no_grad and changed in place: PyTorch's issue 99968)
        try:
            fn = tensor.grad_fn
            # its class's name, as PyTorch's: CopySlices, not name()'s torch::autograd::CopySlices
            name = type(fn).__name__ if fn is not None else None
        except RuntimeError:
            name = "Invalid"
        if name is not None:
            suffixes.append(f"grad_fn=<{name}>")
        elif m.requires_grad:
            suffixes.append("requires_grad=True")
    string_repr = _add_suffixes(prefix + tensor_str, suffixes, indent, force_newline=False)
    # a subclass of Parameter says it is one (PyTorch's rule; Parameter's own repr adds "Parameter containing:")
    parameter = _parameter_class()
    if parameter is not None and isinstance(tensor, parameter) and prefix != "tensor(":
        string_repr = f"Parameter({string_repr})"
    return string_repr
