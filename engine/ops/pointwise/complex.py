"""The complex-number ops: view_as_real and view_as_complex (ATen's ComplexHelper.h: views over
the same memory), real and imag (PyTorch's composites over view_as_real, so their grad_fn is
SelectBackward0 over ViewAsRealBackward0), conj, conj_physical, resolve_conj, resolve_neg,
complex(real, imag) and polar(abs, angle) (TensorFactories), and angle. (abs and sgn of complex
tensors are unary's ops, which take complex inputs.)

PyTorch's `conj` of a complex tensor is a view with the conjugate bit set (`_conj`, ConjBackward0),
`_neg_view` one with the negative bit (NegViewBackward0), and the imaginary parts of a conjugate carry
the negative bit. NumPy has no view that negates: agrad's results hold the conjugated (negated) values
in memory of their own, with the bits set (the Conjugate and Negative keys of their key set, as
PyTorch's; kept by views of them, see make_view) so that is_conj, is_neg and the checks that read
them (forward AD's tangent layout) answer as PyTorch's; resolve_conj / resolve_neg copy without the
bit (CloneBackward0). What differs: such a
tensor does not alias its input (an in-place op on one is not seen in the other), and view_as_real of
a conjugate is not refused. Of a real tensor, conj, conj_physical and resolve_conj are self itself.

The derivatives are derivatives.yaml's, with PyTorch's convention for complex gradients: the
gradient of a real loss L is dL/d(re) + i dL/d(im), the conjugate Wirtinger derivative times 2.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ..._tensor import _address
from ...dispatch_keys import CONJUGATE, NEGATIVE
from ...backends.meta import MetaArray
from ...creation import zeros_like
from ...messages import scalar_type_name
from ...shapes import broadcast_shapes, pointwise_meta
from ...storage import storage_root
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.indexing import select
from .binary import where
from .unary import _real_meta, abs, sgn, square  # noqa: A004 — PyTorch's names

_C = dtypes.complex128


def _complex_samples(*shapes, transposed_too=True):
    def samples(op):
        out = [SampleInput(f"{shape}", make_arg(shape, key=(op, i), dtype=_C)) for i, shape in enumerate(shapes)]
        if transposed_too:
            out.append(SampleInput("T (4,3)", make_arg((4, 3), key=(op, len(shapes)), dtype=_C, transposed=True)))
        return out
    return samples


# ---- view_as_real, view_as_complex ----------------------------------------------------------

def _view_as_real_check(self):
    if self.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")


def _view_as_real_kernel(xp, self):
    _view_as_real_check(self)
    if not hasattr(self, "strides"):    # a dask array, never written through: the parts stacked
        return xp.stack([xp.real(self), xp.imag(self)], axis=-1)
    # a size-1 last dim read as two floats: any strides of self allow it (NumPy's view of a new dtype
    # needs only the last dim contiguous)
    return self[..., None].view(self.real.dtype)


def _view_as_real_meta(self):
    _view_as_real_check(self)
    return MetaArray(tuple(self.shape) + (2,), np.dtype(self.dtype).type(0).real.dtype)


view_as_real = defop(
    "view_as_real(Tensor self) -> Tensor",
    kernel=_view_as_real_kernel, meta=_view_as_real_meta, view=True, supports_complex=True,
    grads={"self": lambda grad: view_as_complex(grad.contiguous())},      # gx0 + 1j * gx1
    samples=_complex_samples((), (3,), (2, 3)),
    doc="A float view (..., 2) of a complex tensor's memory: its real and imaginary parts.")


def _view_as_complex_check(self):
    if self.dtype.kind != "f" or self.dtype == np.float16:
        # NOTE: PyTorch takes half too (into complex32, a dtype agrad does not have)
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {scalar_type_name(self.dtype)}")
    if not self.ndim or self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = getattr(self, "strides", None)            # (Meta arrays are contiguous)
    # NOTE: NumPy gives an array without elements all-zero strides, whatever its layout (PyTorch's empty
    # contiguous (0, 2) has (2, 1)): there is no memory to misread, and NumPy views it as complex
    if strides is not None and self.size:
        size = self.itemsize
        if strides[-1] != size:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(s % (2 * size) for s in strides[:-1]):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")


def _view_as_complex_kernel(xp, self):
    _view_as_complex_check(self)
    if not hasattr(self, "strides"):    # a dask array: each pair in one chunk, read chunk by chunk
        return self.rechunk({self.ndim - 1: -1}).view(np.result_type(self.dtype, np.complex64))[..., 0]
    if self.__class__ is np.ndarray and (_address(self) - _address(storage_root(self))) % (2 * self.itemsize):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return self.view(np.result_type(self.dtype, np.complex64))[..., 0]


def _view_as_complex_meta(self):
    _view_as_complex_check(self)
    return MetaArray(tuple(self.shape[:-1]), np.result_type(self.dtype, np.complex64))


view_as_complex = defop(
    "view_as_complex(Tensor self) -> Tensor",
    kernel=_view_as_complex_kernel, meta=_view_as_complex_meta, view=True, supports_complex=True,
    grads={"self": lambda grad: view_as_real(grad.contiguous())},           # [gx, gy]
    samples=lambda op: [SampleInput("(2,)", make_arg((2,), key=(op, 0))),
                        SampleInput("(3,2)", make_arg((3, 2), key=(op, 1))),
                        SampleInput("(2,3,2)", make_arg((2, 3, 2), key=(op, 2)))],
    doc="A complex view of a float tensor whose last dimension (size 2, stride 1) holds real and "
        "imaginary parts.")


# ---- real, imag ---------------------------------------------------------------------------------

def _real(self):
    return select(view_as_real(self), -1, 0) if self.is_complex() else self


def _imag(self):
    if not self.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    out = select(view_as_real(self), -1, 1)
    if self.is_conj():      # PyTorch's imag of a conjugate: the negative-bit view of the parts (values -y)
        out._keys ^= NEGATIVE
    return out


real = defop("real(Tensor self) -> Tensor", composite=_real, samples=_complex_samples((), (3,), (2, 3)),
             doc="The real parts of a complex tensor (a view: writing it writes self); self for a real one.")
imag = defop("imag(Tensor self) -> Tensor", composite=_imag, samples=_complex_samples((), (3,), (2, 3)),
             doc="The imaginary parts of a complex tensor (a view: writing it writes self).")


# ---- conj, conj_physical, resolve_conj, resolve_neg, _neg_view ------------------------------

def _real_samples(op):
    # (the samples these ops had as identities of real tensors: PyTorch's values are recorded for them)
    return [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)))]


def _with_bits(out, conj_bit, neg_bit):
    """`out` marked as what PyTorch's lazy view would be (its Conjugate and Negative keys): its values are
    already the conjugated (negated) ones."""
    out._keys = (out._keys & ~(CONJUGATE | NEGATIVE)) | (CONJUGATE if conj_bit else 0) | (NEGATIVE if neg_bit else 0)
    return out


_conj = defop(
    "_conj(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.conj(self), meta=pointwise_meta(), supports_complex=True,
    grads={"self": lambda grad: conj(grad)}, backward_name="ConjBackward0",
    samples=_complex_samples((), (3,), (2, 3)),
    doc="The complex conjugate, a copy (what PyTorch's lazily conjugated `_conj` view holds).")
_conj_physical = defop(
    "_conj_physical(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.conj(self), meta=pointwise_meta(), supports_complex=True,
    grads={"self": lambda grad: conj_physical(grad)}, backward_name="ConjPhysicalBackward0",
    samples=_complex_samples((), (3,), (2, 3)),
    doc="The complex conjugate, computed (a copy).")
_neg_view_copy = defop(
    "_neg_view_copy(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.negative(self), meta=pointwise_meta(), supports_complex=True,
    grads={"self": lambda grad: grad.neg()}, backward_name="NegViewBackward0",
    samples=_complex_samples((), (3,)),
    doc="The negation, a copy (what PyTorch's lazily negated `_neg_view` holds).")


def _conj_composite(self):
    if not self.is_complex():
        return self
    return _with_bits(_conj(self), not self.is_conj(), self.is_neg())


def _resolve(bit):
    def resolve(self):
        # PyTorch's resolve_conj / resolve_neg: a copy without the bit (CloneBackward0), self without one
        if not self._keys & bit:
            return self
        return _with_bits(self.clone(), self._keys & ~bit & CONJUGATE, self._keys & ~bit & NEGATIVE)
    return resolve


conj = defop("conj(Tensor self) -> Tensor", composite=_conj_composite, samples=_real_samples, torch="torch.conj",
             doc="The complex conjugate, with the conjugate bit (is_conj) flipped; a real tensor itself.")
conj_physical = defop(
    "conj_physical(Tensor self) -> Tensor",
    composite=lambda self: _conj_physical(self) if self.is_complex() else self,
    samples=_real_samples, torch="torch.conj_physical",
    doc="The complex conjugate, computed (a copy without the conjugate bit); a real tensor itself.")
resolve_conj = defop("resolve_conj(Tensor self) -> Tensor", composite=_resolve(CONJUGATE),
                     samples=_real_samples, torch="torch.resolve_conj",
                     doc="A copy without the conjugate bit (the same values); self where it has none.")
resolve_neg = defop("resolve_neg(Tensor self) -> Tensor", composite=_resolve(NEGATIVE),
                    samples=_real_samples, torch="torch.resolve_neg",
                    doc="A copy without the negative bit (the same values); self where it has none.")
_neg_view = defop("_neg_view(Tensor self) -> Tensor",
                  composite=lambda self: _with_bits(_neg_view_copy(self), self.is_conj(), not self.is_neg()),
                  samples=_real_samples, torch="torch._neg_view",
                  doc="The negation, with the negative bit (is_neg) flipped (PyTorch's lazily negated view).")


# ---- angle, complex, polar ------------------------------------------------------------------------

def _angle_kernel(xp, self):
    if self.dtype.kind == "c":
        return xp.angle(self)
    # PyTorch's real angle: pi where negative (not -0.), 0 elsewhere, NaN kept
    return xp.where(xp.isnan(self), self, xp.where(self < 0, np.pi, 0)).astype(self.dtype, copy=False)


def _angle_grad(grad, self):
    """FunctionsManual's angle_backward: grad * z / |z|² * i, 0 at z = 0; zero for a real input."""
    if not self.is_complex():
        return zeros_like(self)
    return where(self == 0, 0.0, grad * self / square(abs(self)) * 1j)


angle = defop(
    "angle(Tensor self) -> Tensor",
    kernel=_angle_kernel, meta=_real_meta, promote="float", supports_complex=True,
    grads={"self": _angle_grad},
    samples=lambda op: _complex_samples((), (3,), (2, 3))(op) + [
        SampleInput("real (5,)", make_arg((5,), key=(op, "real"), away_from=0.0))],
    doc="The argument of each element (atan2(imag, real)); of a real tensor pi where negative, else 0.")


def _parts_check(real, imag):
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(real.dtype)} but got scalar type "
                           f"{scalar_type_name(imag.dtype)} for second argument")
    if real.dtype.kind != "f" or real.dtype == np.float16:
        # NOTE: PyTorch takes half too (into complex32, a dtype agrad does not have)
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(real.dtype)} and {scalar_type_name(imag.dtype)}")
    return np.result_type(real.dtype, np.complex64)


def _complex_kernel(xp, real, imag):
    out = xp.empty(broadcast_shapes(real.shape, imag.shape), _parts_check(real, imag))
    out.real, out.imag = real, imag
    return out


def _polar_kernel(xp, abs, angle):
    out = xp.empty(broadcast_shapes(abs.shape, angle.shape), _parts_check(abs, angle))
    out.real, out.imag = abs * xp.cos(angle), abs * xp.sin(angle)
    return out


def _parts_meta(a, b):
    return MetaArray(broadcast_shapes(a.shape, b.shape), _parts_check(a, b))


def _parts_samples(low):
    def samples(op):
        return [SampleInput("(3,)", make_arg((3,), key=(op, 0), low=low), make_arg((3,), key=(op, 1))),
                SampleInput("(2,3) with (3,)", make_arg((2, 3), key=(op, 2), low=low), make_arg((3,), key=(op, 3))),
                SampleInput("0-d", make_arg((), key=(op, 4), low=low), make_arg((), key=(op, 5)))]
    return samples


def _polar_abs_grad(grad, result):
    # FunctionsManual's polar_backward: real(conj(grad) * sgn(result)), real(conj(grad) * result * i)
    return real(grad.conj() * sgn(result))


complex = defop(  # noqa: A001 — PyTorch's name
    "complex(Tensor real, Tensor imag) -> Tensor",
    kernel=_complex_kernel, meta=_parts_meta, supports_complex=True,
    grads={"real": lambda grad: real(grad), "imag": lambda grad: imag(grad)},
    samples=_parts_samples(-2.0),
    doc="The complex tensor real + i imag (both float or both double; broadcast).")
polar = defop(
    "polar(Tensor abs, Tensor angle) -> Tensor",
    kernel=_polar_kernel, meta=_parts_meta, supports_complex=True,
    grads={"abs": _polar_abs_grad, "angle": lambda grad, result: real(grad.conj() * result * 1j)},
    samples=_parts_samples(0.5),
    doc="The complex tensor abs * (cos(angle) + i sin(angle)) (both float or both double; broadcast).")
