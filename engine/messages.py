"""PyTorch's spelling of sizes and types in error messages (c10's ScalarType names,
caffe2's TypeMeta names, IntArrayRef's `[2, 3]`), shared by every layer that raises
PyTorch's messages: the tensor, autograd and the op library."""
from __future__ import annotations

import numpy as np

from . import dtypes
from .errors import DtypeNotImplementedError

_C_TYPE = {"float16": "c10::Half", "float32": "float", "float64": "double", "int32": "int", "int64": "long int",
           "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
           "uint32": "unsigned int", "uint64": "unsigned long", "complex64": "c10::complex<float>",
           "complex128": "c10::complex<double>"}


# bool < integer < floating < complex: a result may be written into a tensor of its kind or a higher one
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def check_result_cast(result_np, out_np) -> None:
    """PyTorch's rule for writing a result into an existing tensor (an in-place op, `out=`): the result
    may be cast to the tensor's dtype only within its kind or to a higher one."""
    if result_np != out_np and _KIND_ORDER[result_np.kind] > _KIND_ORDER[out_np.kind]:
        raise RuntimeError(f"result type {scalar_type_name(result_np)} can't be cast to the desired output type "
                           f"{scalar_type_name(out_np)}")


def sizes(shape) -> str:
    """A shape as PyTorch prints IntArrayRef: [2, 3]."""
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def size_repr(shape) -> str:
    """A shape as PyTorch prints its torch.Size in messages, with agrad's name: agrad.Size([2, 3])."""
    return f"agrad.Size({list(shape)})"


def scalar_type_name(np_dtype) -> str:
    """c10's ScalarType name: Float, Double, Long …"""
    return dtypes.SCALAR_TYPE_NAMES[dtypes.from_numpy(np_dtype).name]


def c_type_name(np_dtype) -> str:
    """caffe2::TypeMeta name, as in "Input type (double) and bias type (float) should be the same"."""
    return _C_TYPE[dtypes.from_numpy(np_dtype).name]


def tensor_type_name(np_dtype) -> str:
    """The legacy type string: agrad.DoubleTensor (PyTorch's torch.DoubleTensor)."""
    return f"agrad.{scalar_type_name(np_dtype)}Tensor"


def require_floating(op_name: str, np_dtype) -> None:
    if np.dtype(np_dtype).kind != "f":
        raise DtypeNotImplementedError(f'"{op_name}" not implemented for \'{scalar_type_name(np_dtype)}\'')


# the C++ type names c10's checked_convert gives in its message (AT_FORALL_SCALAR_TYPES' spelling)
CONVERT_NAME = {"float16": "c10::Half", "float32": "float", "float64": "double", "bool": "bool", "uint8": "uint8_t",
                "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t", "uint32": "uint32_t",
                "uint64": "uint64_t", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def checked_convert(value, np_dtype):
    """c10's checked_convert of a Python (or NumPy) complex number going into a real dtype (fill_, full,
    masked_fill, float(t)): its real part where the imaginary part is 0, else PyTorch's RuntimeError."""
    if isinstance(value, (complex, np.complexfloating)) and np.dtype(np_dtype).kind != "c":
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {CONVERT_NAME[np.dtype(np_dtype).name]} without "
                               f"overflow")
        return value.real
    return value

