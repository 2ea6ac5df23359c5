"""Activations with PyTorch's dedicated backward ops: leaky_relu, gelu, silu, softplus.

As in PyTorch, each activation's gradient is its own op (`gelu_backward`, …) whose
gradient formulas are written with agrad ops, so double backward works. These ops
are defined for floating dtypes only: PyTorch's kernels are dispatched over float
types and an integer input fails ("GeluKernelImpl" not implemented for 'Long').
"""
from __future__ import annotations

import math

import numpy as np

from ..backends.meta import MetaArray
from ..creation import zeros_like
from ..errors import DtypeNotImplementedError
from ..grad_mode import is_grad_enabled
from ..shapes import broadcast_shapes
from .pointwise import exp, sigmoid, tanh, where
from .registry import defop
from .samples import SampleInput, make_arg, unary_samples
from .unary import _torch_dtype_name

_SQRT1_2 = math.sqrt(0.5)               # PyTorch's M_SQRT1_2
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_BETA = math.sqrt(2.0 / math.pi)     # PyTorch's kBeta = M_SQRT2 * M_2_SQRTPI * 0.5
_TANH_KAPPA = 0.044715


def _float_only(kernel_name, *arrays):
    for a in arrays:
        if a.dtype.kind != "f":
            raise DtypeNotImplementedError(f"\"{kernel_name}\" not implemented for '{_torch_dtype_name(a.dtype)}'")


def _unary_meta(kernel_name):
    def rule(self, *scalars):
        _float_only(kernel_name, self)
        return MetaArray(self.shape, self.dtype)
    return rule


def _backward_meta(kernel_name):
    def rule(grad_output, self, *scalars):
        _float_only(kernel_name, grad_output, self)
        return MetaArray(broadcast_shapes(grad_output.shape, self.shape), grad_output.dtype)
    return rule


def _opmath(x):
    # PyTorch computes half-precision activations in float (its opmath type)
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _normal_cdf(special, x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, written with erfc: no cancellation for x << 0."""
    return 0.5 * special.erfc(-x * _SQRT1_2)


# ---- leaky_relu ---------------------------------------------------------------------------

def _leaky_relu_kernel(xp, self, negative_slope):
    _float_only("leaky_relu_cpu", self)
    return xp.where(self > 0, self, self * negative_slope).astype(self.dtype, copy=False)


def _leaky_relu_backward_kernel(xp, grad_output, self, negative_slope, self_is_result):
    _float_only("leaky_relu_backward_cpu", grad_output, self)
    return xp.where(self > 0, grad_output, grad_output * negative_slope).astype(grad_output.dtype, copy=False)


leaky_relu_backward = defop(
    "leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor",
    kernel=_leaky_relu_backward_kernel, meta=_backward_meta("leaky_relu_backward_cpu"), promote="same",
    grads={"grad_output": lambda grad, self, negative_slope: leaky_relu_backward(grad, self, negative_slope, False),
           "self": lambda grad: zeros_like(grad)},
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)),
                                    make_arg((3, 4), key=(op, 1), away_from=0.0), 0.2, False)],
    torch="torch.ops.aten.leaky_relu_backward")


def _leaky_relu_samples(op):
    base = unary_samples(away_from=0.0)(op)
    x = make_arg((3, 4), key=(op, "slope"), away_from=0.0)
    return base + [SampleInput("negative_slope=0.2", x, 0.2), SampleInput("negative_slope=-1.5 kw", x, negative_slope=-1.5)]


leaky_relu = defop(
    "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    kernel=_leaky_relu_kernel, meta=_unary_meta("leaky_relu_cpu"),
    grads={"self": lambda grad, self, negative_slope: leaky_relu_backward(grad, self, negative_slope, False)},
    samples=_leaky_relu_samples, torch="torch.nn.functional.leaky_relu")


# ---- gelu ---------------------------------------------------------------------------------

def _check_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def _gelu_kernel(xp, special, self, approximate):
    _check_approximate(approximate)
    _float_only("GeluKernelImpl", self)
    x = _opmath(self)
    if approximate == "tanh":
        out = 0.5 * x * (1 + xp.tanh(_TANH_BETA * (x + _TANH_KAPPA * x * x * x)))
    else:
        out = x * _normal_cdf(special, x)
    return out.astype(self.dtype, copy=False)


def _gelu_backward_kernel(xp, special, grad_output, self, approximate):
    _check_approximate(approximate)
    _float_only("GeluBackwardKernelImpl", grad_output, self)
    x = _opmath(self)
    if approximate == "tanh":
        t = xp.tanh(_TANH_BETA * (x + _TANH_KAPPA * x * x * x))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_TANH_BETA * (1 + 3 * _TANH_KAPPA * x * x))
    else:
        d = _normal_cdf(special, x) + x * (_INV_SQRT_2PI * xp.exp(-0.5 * x * x))
    return (_opmath(grad_output) * d).astype(grad_output.dtype, copy=False)


def _gelu_double_backward(grad, grad_output, self, approximate):
    """d/dself of gelu_backward: grad * grad_output * gelu''(self), with agrad ops."""
    x = self
    if approximate == "tanh":
        u1 = _TANH_BETA * (1 + 3 * _TANH_KAPPA * x * x)
        t = tanh(_TANH_BETA * (x + _TANH_KAPPA * x * x * x))
        s = 1 - t * t
        second = s * u1 + 0.5 * x * s * ((6 * _TANH_BETA * _TANH_KAPPA) * x - 2 * t * u1 * u1)
    else:
        second = (_INV_SQRT_2PI * exp(-0.5 * x * x)) * (2 - x * x)
    return grad * grad_output * second


def _gelu_meta(self, approximate):
    _check_approximate(approximate)
    return _unary_meta("GeluKernelImpl")(self)


def _gelu_backward_meta(grad_output, self, approximate):
    _check_approximate(approximate)
    return _backward_meta("GeluBackwardKernelImpl")(grad_output, self)


gelu_backward = defop(
    "gelu_backward(Tensor grad_output, Tensor self, *, str approximate=\"none\") -> Tensor",
    kernel=_gelu_backward_kernel, meta=_gelu_backward_meta, promote="same", special=True,
    grads={"grad_output": lambda grad, self, approximate: gelu_backward(grad, self, approximate=approximate),
           "self": _gelu_double_backward},
    samples=lambda op: [SampleInput(f"approximate={a}", make_arg((3, 4), key=(op, 0)),
                                    make_arg((3, 4), key=(op, 1), low=-3.0, high=3.0), approximate=a)
                        for a in ("none", "tanh")],
    torch="torch.ops.aten.gelu_backward")


def _gelu_samples(op):
    wide = make_arg((4, 5), key=(op, "wide"), low=-6.0, high=6.0)
    return (unary_samples(low=-3.0, high=3.0)(op)
            + [SampleInput("tanh", make_arg((3, 4), key=(op, "t")), approximate="tanh"),
               SampleInput("tanh 0-d", make_arg((), key=(op, "t0")), approximate="tanh"),
               SampleInput("wide", wide), SampleInput("wide tanh", wide, approximate="tanh")])


gelu = defop(
    "gelu(Tensor self, *, str approximate=\"none\") -> Tensor",
    kernel=_gelu_kernel, meta=_gelu_meta, special=True,
    grads={"self": lambda grad, self, approximate: gelu_backward(grad, self, approximate=approximate)},
    samples=_gelu_samples, torch="torch.nn.functional.gelu")


# ---- silu ---------------------------------------------------------------------------------

def _sigmoid_np(xp, x):
    # NOTE: exp(-|x|) never overflows; 1/(1+exp(-x)) does for x << 0
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _silu_kernel(xp, self):
    _float_only("silu_cpu", self)
    x = _opmath(self)
    return (x * _sigmoid_np(xp, x)).astype(self.dtype, copy=False)


def _silu_backward_kernel(xp, grad_output, self):
    _float_only("silu_backward_cpu", grad_output, self)
    x = _opmath(self)
    s = _sigmoid_np(xp, x)
    return (_opmath(grad_output) * s * (1 + x * (1 - s))).astype(grad_output.dtype, copy=False)


def _silu_double_backward(grad, grad_output, self):
    s = sigmoid(self)
    return grad * grad_output * (s * (1 - s) * (2 + self * (1 - 2 * s)))


silu_backward = defop(
    "silu_backward(Tensor grad_output, Tensor self) -> Tensor",
    kernel=_silu_backward_kernel, meta=_backward_meta("silu_backward_cpu"), promote="same",
    grads={"grad_output": lambda grad, self: silu_backward(grad, self),
           "self": _silu_double_backward},
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)),
                                    make_arg((3, 4), key=(op, 1), low=-4.0, high=4.0))],
    torch="torch.ops.aten.silu_backward")

def _silu_grad(grad, self):
    # As PyTorch: silu_backward, except when the backward itself is recorded (create_graph),
    # where PyTorch writes the derivative with differentiable ops (its silu_backward has no derivative)
    if is_grad_enabled():
        s = sigmoid(self)
        return grad * s * (1 + self * (1 - s))
    return silu_backward(grad, self)


silu = defop(
    "silu(Tensor self) -> Tensor",
    kernel=_silu_kernel, meta=_unary_meta("silu_cpu"),
    grads={"self": _silu_grad},
    samples=unary_samples(low=-4.0, high=4.0), torch="torch.nn.functional.silu")


# ---- softplus -----------------------------------------------------------------------------

def _softplus_kernel(xp, self, beta, threshold):
    _float_only("softplus_cpu", self)
    x = _opmath(self)
    bx = x * beta
    # NOTE: log1p(exp(bx)) overflows for large bx; max(bx, 0) + log1p(exp(-|bx|)) is the same number
    soft = (xp.maximum(bx, 0) + xp.log1p(xp.exp(-xp.abs(bx)))) / beta
    return xp.where(bx > threshold, x, soft).astype(self.dtype, copy=False)


def _softplus_backward_kernel(xp, grad_output, self, beta, threshold):
    _float_only("softplus_backward_cpu", grad_output, self)
    x = _opmath(self)
    bx = x * beta
    g = _opmath(grad_output)
    return xp.where(bx > threshold, g, g * _sigmoid_np(xp, bx)).astype(grad_output.dtype, copy=False)


def _softplus_double_backward(grad, grad_output, self, beta, threshold):
    # PyTorch's softplus_double_backward: sigmoid'(beta x) * beta where beta x < threshold
    bx = self * beta
    s = sigmoid(bx)
    return where(bx < threshold, grad * grad_output * (s * (1 - s) * beta), 0.0)


softplus_backward = defop(
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
    kernel=_softplus_backward_kernel, meta=_backward_meta("softplus_backward_cpu"), promote="same",
    grads={"grad_output": lambda grad, self, beta, threshold: softplus_backward(grad, self, beta, threshold),
           "self": _softplus_double_backward},
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)),
                                    make_arg((3, 4), key=(op, 1), low=-4.0, high=4.0), 1.5, 20.0)],
    torch="torch.ops.aten.softplus_backward")


def _softplus_samples(op):
    x = make_arg((3, 4), key=(op, "b"), low=-3.0, high=3.0)
    # threshold=1 with beta=2: values on both sides of the linear region, kept away from bx == threshold
    t = make_arg((4, 5), key=(op, "t"), low=-2.0, high=2.0, away_from=0.5)
    return unary_samples(low=-4.0, high=4.0)(op) + [
        SampleInput("beta=2", x, 2.0), SampleInput("beta=2,threshold=1 kw", t, beta=2.0, threshold=1.0),
        SampleInput("beta=-1", x, beta=-1.0)]


softplus = defop(
    "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
    kernel=_softplus_kernel, meta=_unary_meta("softplus_cpu"),
    grads={"self": lambda grad, self, beta, threshold: softplus_backward(grad, self, beta, threshold)},
    samples=_softplus_samples, torch="torch.nn.functional.softplus")
