"""Bessel functions, scipy.special's (cupyx's on CUDA) kernels under PyTorch's names: i0,
special_i0e, special_i1, special_i1e (the modified Bessel functions of the first kind,
orders 0 and 1, and their exponentially scaled forms) and special_bessel_j0/j1; and, without
derivatives as in PyTorch, special_bessel_y0/y1, special_modified_bessel_i0/i1/k0/k1,
special_scaled_modified_bessel_k0/k1, special_spherical_bessel_j0 and special_airy_ai.

They are PyTorch's "unary float" ops (integer inputs compute in the default float). The
gradients are derivatives.yaml's, each written with these ops so that every order follows:
i0' = i1, i0e' = i1e - sgn(x) i0e, i1' = i0 - i1/x and i1e' = i0e - i1e (sgn(x) + 1/x), with
FunctionsManual's i1_backward/i1e_backward value 0.5 where |x| <= eps (0/0 there). The
Bessel functions J0 and J1 are non_differentiable in derivatives.yaml: their results never
require grad.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...creation import tensor
from ...shapes import pointwise_meta
from ..registry import defop
from ..samples import SampleInput, make_arg, unary_samples
from . import _cephes_ports
from .binary import where
from .unary import abs, reciprocal, sgn  # noqa: A004 — PyTorch's names

_same_meta = pointwise_meta()


def _samples(op):
    ints = make_arg((5,), key=(op, "int"), dtype=dtypes.int64, low=-3, high=4, integer=True)
    # small, not tiny: i1's and i1e's derivatives are differences of near-equal terms over x there,
    # whose last bits (SciPy's against PyTorch's kernels) 1/x² magnifies in the second order
    small = make_arg((4,), key=(op, "small"), low=0.03, high=0.1)
    return unary_samples(low=-3.0, high=3.0)(op) + [SampleInput("small", small), SampleInput("int64", ints)]


def _unary(name, scipy_name, grad, backward_name=None, torch_name=None, doc="", samples=_samples):
    """The op `name`: scipy.special's `scipy_name` (or a function `(special, x)` where it is not one of them)."""
    function = scipy_name if callable(scipy_name) else lambda special, x: getattr(special, scipy_name)(x)
    return defop(
        f"{name}(Tensor self) -> Tensor",
        kernel=lambda xp, special, self: function(special, self).astype(self.dtype, copy=False),
        meta=_same_meta, promote="float", special=True, grads=None if grad is None else {"self": grad},
        backward_name=backward_name, samples=samples, torch=torch_name or f"torch.special.{name[8:]}", doc=doc)


def _tiny_safe(self):
    """(|x| > eps, x with eps where it is not): FunctionsManual's guard against 0/0 at x = 0."""
    eps = float(np.finfo(self.dtype.np).eps)
    not_tiny = abs(self) > eps
    return not_tiny, where(not_tiny, self, eps)


def _i1_backward(grad, self, result):
    not_tiny, safe = _tiny_safe(self)
    return grad * where(not_tiny, i0(safe) - result * reciprocal(safe), 0.5)


def _i1e_backward(grad, self, result):
    not_tiny, safe = _tiny_safe(self)
    return grad * where(not_tiny, special_i0e(safe) - result * (sgn(safe) + reciprocal(safe)), 0.5)


i0 = _unary("i0", "i0", lambda grad, self: grad * special_i1(self), torch_name="torch.i0",
            doc="I₀(x), the modified Bessel function of the first kind of order 0.")
special_i0e = _unary("special_i0e", "i0e", lambda grad, self, result: grad * (special_i1e(self) - sgn(self) * result),
                     backward_name="SpecialI0EBackward0", doc="exp(-|x|) I₀(x).")
special_i1 = _unary("special_i1", "i1", _i1_backward,
                    doc="I₁(x), the modified Bessel function of the first kind of order 1.")
special_i1e = _unary("special_i1e", "i1e", _i1e_backward, backward_name="SpecialI1EBackward0",
                     doc="exp(-|x|) I₁(x).")
special_bessel_j0 = _unary("special_bessel_j0", "j0", None,
                           doc="J₀(x), the Bessel function of the first kind of order 0 (no gradient, as PyTorch's).")
special_bessel_j1 = _unary("special_bessel_j1", "j1", None,
                           doc="J₁(x), the Bessel function of the first kind of order 1 (no gradient, as PyTorch's).")


# ---- torch.special's other Bessel functions, without derivatives ------------------------------------
# PyTorch defines no derivative for these (derivatives.yaml): their results never require grad. SciPy's
# kernels are Cephes', as ATen's (Math.h) are, except Y₀, Y₁ and Ai, where ATen's differ from Cephes' and
# are ported (_cephes_ports); where x is outside the domain (x < 0 for Y and K), NaN.

def _positive_samples(op):
    x = make_arg((3, 4), key=(op, "x"), low=0.05, high=12.0, requires_grad=False)
    edges = tensor([-1.0, 0.0, 0.5, 30.0], dtype=dtypes.float64)
    return [SampleInput("(3,4) in (0, 12)", x), SampleInput("-1, 0, 0.5, 30", edges),
            SampleInput("int64", make_arg((5,), key=(op, "int"), dtype=dtypes.int64, low=0, high=6, integer=True))]


def _spherical_j0(special, x):
    # ATen's spherical_bessel_j0_forward: 0 at ±inf, its Taylor series for |x| < 0.5, sin(x)/x elsewhere
    x2 = x * x
    with np.errstate(all="ignore"):
        series = 1 + x2 * (-1 / 6 + x2 * (1 / 120 + x2 * (-1 / 5040 + x2 * (1 / 362880 + x2 * (
            -1 / 39916800 + x2 * (1 / 6227020800))))))
        return np.where(np.isinf(x), 0.0, np.where(np.abs(x) < 0.5, series, np.sin(x) / x))


special_bessel_y0 = _unary(
    "special_bessel_y0", lambda special, x: _cephes_ports.bessel_y0(x), None, samples=_positive_samples,
    doc="Y₀(x), the Bessel function of the second kind of order 0 (no gradient, as PyTorch's).")
special_bessel_y1 = _unary(
    "special_bessel_y1", lambda special, x: _cephes_ports.bessel_y1(x), None, samples=_positive_samples,
    doc="Y₁(x), the Bessel function of the second kind of order 1 (no gradient, as PyTorch's).")
special_modified_bessel_i0 = _unary(
    "special_modified_bessel_i0", "i0", None,
    doc="I₀(x), the modified Bessel function of the first kind of order 0 (torch.special's, without gradient).")
special_modified_bessel_i1 = _unary(
    "special_modified_bessel_i1", "i1", None,
    doc="I₁(x), the modified Bessel function of the first kind of order 1 (torch.special's, without gradient).")
special_modified_bessel_k0 = _unary(
    "special_modified_bessel_k0", "k0", None, samples=_positive_samples,
    doc="K₀(x), the modified Bessel function of the second kind of order 0 (no gradient, as PyTorch's).")
special_modified_bessel_k1 = _unary(
    "special_modified_bessel_k1", "k1", None, samples=_positive_samples,
    doc="K₁(x), the modified Bessel function of the second kind of order 1 (no gradient, as PyTorch's).")
special_scaled_modified_bessel_k0 = _unary(
    "special_scaled_modified_bessel_k0", "k0e", None, samples=_positive_samples,
    doc="exp(x) K₀(x) (no gradient, as PyTorch's).")
special_scaled_modified_bessel_k1 = _unary(
    "special_scaled_modified_bessel_k1", "k1e", None, samples=_positive_samples,
    doc="exp(x) K₁(x) (no gradient, as PyTorch's).")
special_spherical_bessel_j0 = _unary(
    "special_spherical_bessel_j0", _spherical_j0, None,
    doc="j₀(x) = sin(x)/x, the spherical Bessel function of the first kind of order 0 (no gradient, as PyTorch's).")
special_airy_ai = _unary("special_airy_ai", lambda special, x: _cephes_ports.airy_ai(x), None,
                         doc="Ai(x), the Airy function of the first kind (no gradient, as PyTorch's).")
