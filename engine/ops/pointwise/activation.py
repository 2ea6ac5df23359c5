"""Activations (ATen's Activation): relu (threshold_backward), tanh, sigmoid, leaky_relu,
gelu, silu, softplus, elu (and selu, celu through elu's backward), hardtanh (relu6),
hardsigmoid, hardswish, mish, logsigmoid, glu, prelu; and the ones PyTorch writes with
other ops (softsign, tanhshrink), and rrelu (leaky_relu in eval, random slopes in training).

As in PyTorch, a primitive activation's gradient is its own backward op (`tanh_backward`,
`gelu_backward`, `elu_backward`, …), itself differentiable with PyTorch's formulas from
derivatives.yaml, so double backward works. tanh and sigmoid compute integers in the
default float, as PyTorch's do; the kernels from leaky_relu on (all but hardtanh's) are
float-only, as PyTorch's: an integer input fails with PyTorch's message
(`"elu_cpu" not implemented for 'Long'`).
"""
from __future__ import annotations

import math

import numpy as np

from ... import creation
from ...backends.meta import MetaArray
from ...creation import zeros_like
from ...generator import check_seed, seeded_rng
from ...grad_mode import is_grad_enabled
from ...messages import scalar_type_name
from ...shapes import broadcast_shapes, normalize_dim, pointwise_meta
from .._common import _float_only, conj_of
from ..registry import defop, promote_same
from ..samples import SampleInput, make_arg, unary_samples
from ..shape.join import cat, chunk
from ..shape.view import reshape
from .binary import ge, gt, lt, where
from .unary import (
    abs,  # noqa: A004
    exp,
)

same_meta = pointwise_meta()


tanh_backward = defop(
    "tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
    # PyTorch's kernel for complex: grad_output * (1 - output * output).conj()
    kernel=lambda xp, grad_output, output: grad_output * (1 - output * output) if output.dtype.kind != "c" else
    grad_output * (1 - output * output).conj(),
    meta=same_meta, promote="same", supports_complex=True,
    grads={"grad_output": lambda grad, output: tanh_backward(grad, conj_of(output)),
           "output": lambda grad, grad_output, output: -2 * conj_of(output) * grad_output * conj_of(grad)},
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1), low=-0.9, high=0.9))],
    torch="torch.ops.aten.tanh_backward")

tanh = defop(
    "tanh(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.tanh(self), meta=same_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, result: tanh_backward(grad, result)},
    samples=unary_samples(), torch="torch.tanh")


def _sigmoid_kernel(xp, x):
    if x.dtype.kind == "c":     # PyTorch's complex kernel: 1 / (1 + exp(-z)) (no |z| split off the real line)
        return (1 / (1 + xp.exp(-x))).astype(x.dtype, copy=False)
    # NOTE: exp(-|x|) never overflows; 1/(1+exp(-x)) does for x << 0
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


sigmoid_backward = defop(
    "sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
    # PyTorch's kernel for complex: grad_output * ((1 - output) * output).conj()
    kernel=lambda xp, grad_output, output: grad_output * output * (1 - output) if output.dtype.kind != "c" else
    grad_output * (output * (1 - output)).conj(),
    meta=same_meta, promote="same", supports_complex=True,
    grads={"grad_output": lambda grad, output: sigmoid_backward(grad, conj_of(output)),
           "output": lambda grad, grad_output, output: conj_of(grad) * grad_output * (1 - 2 * conj_of(output))},
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1), low=0.1, high=0.9))],
    torch="torch.ops.aten.sigmoid_backward")

sigmoid = defop(
    "sigmoid(Tensor self) -> Tensor",
    kernel=_sigmoid_kernel, meta=same_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, result: sigmoid_backward(grad, result)},
    samples=unary_samples(low=-4.0, high=4.0), torch="torch.sigmoid")


def _threshold_backward_kernel(xp, grad_output, self, threshold):
    keep = ~(self <= threshold)            # NaN in self keeps its gradient, as where(self <= t, 0, g) does
    dt = grad_output.dtype
    if dt.kind == "f" and dt.itemsize in (2, 4, 8) and keep.shape == grad_output.shape \
            and hasattr(grad_output, "strides"):         # bits reinterpreted in memory (not dask's arrays)
        # where() branches per element (10x a multiply on a random mask); the same bits, +0.0 where
        # dropped and NaN and -0.0 kept, come from the gradient's bits AND a mask word
        bits = grad_output.view(f"u{dt.itemsize}")
        return (bits & -keep.astype(bits.dtype)).view(dt)
    return xp.where(~keep, 0, grad_output).astype(dt, copy=False)


threshold_backward = defop(
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    kernel=_threshold_backward_kernel,
    meta=lambda grad_output, self, threshold: MetaArray(broadcast_shapes(grad_output.shape, self.shape),
                                                        grad_output.dtype),
    promote=lambda arrays, positions: promote_same(arrays, positions),
    grads={"grad_output": lambda grad, self, threshold: threshold_backward(grad, self, threshold),
           "self": lambda grad: grad * 0},
    samples=lambda op: [SampleInput("(4,)", make_arg((4,), key=(op, 0)),
                                    make_arg((4,), key=(op, 1), away_from=0.0), 0.0)],
    torch="torch.ops.aten.threshold_backward")

relu = defop(
    "relu(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.maximum(self, 0).astype(self.dtype, copy=False), meta=same_meta,
    grads={"self": lambda grad, result: threshold_backward(grad, result, 0)},
    # NOTE: written out: threshold_backward's promotion rule is its own, so it is not derived
    array_grads={"self": lambda grad, result: _threshold_backward_kernel(np, grad, result, 0)},
    samples=unary_samples(away_from=0.0), torch="torch.relu")

_SQRT1_2 = math.sqrt(0.5)               # PyTorch's M_SQRT1_2
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_BETA = math.sqrt(2.0 / math.pi)     # PyTorch's kBeta = M_SQRT2 * M_2_SQRTPI * 0.5
_TANH_KAPPA = 0.044715


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


# ---- rrelu ---------------------------------------------------------------------------------

def _rrelu_check(self, lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _float_only("rrelu_with_noise_out_cpu", self)


def _rrelu_noise_meta(self, lower, upper, seed):
    _rrelu_check(self, lower, upper)
    check_seed("rrelu", seed)
    return MetaArray(self.shape, self.dtype)


def _rrelu_noise_kernel(xp, self, lower, upper, seed):
    _rrelu_check(self, lower, upper)
    # NOTE: drawn on the host with NumPy's PCG64, as dropout's mask, so a seed gives the same slopes on every device
    rng = seeded_rng("rrelu", seed)
    slopes = rng.uniform(lower, upper, tuple(self.shape))
    host = self if xp is np else np.asarray(self.get() if hasattr(self, "get") else self)
    noise = np.where(host <= 0, slopes, 1.0).astype(self.dtype)
    return noise if xp is np else xp.asarray(noise)


_RRELU_NOISE = ("__import__('numpy').where(x.detach().numpy() <= 0, __import__('numpy').random.default_rng(seed)"
                ".uniform(lower, upper, tuple(x.shape)), 1.0)")

_rrelu_noise = defop(
    "_rrelu_noise(Tensor self, Scalar lower, Scalar upper, int? seed=None) -> Tensor",
    kernel=_rrelu_noise_kernel, meta=_rrelu_noise_meta,
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0), requires_grad=False), 0.1, 0.3, seed=0)],
    torch=f"lambda x, lower, upper, seed=None: torch.as_tensor({_RRELU_NOISE}, dtype=x.dtype)",
    doc="rrelu's slopes in training: uniform in [lower, upper) where self <= 0, 1 elsewhere; from `seed` "
        "(NumPy's default_rng), or agrad's global generator when seed is None.")


def _rrelu(self, lower, upper, training, seed):
    # ATen's rrelu_with_noise: in training each element <= 0 times its own random slope (the gradient is
    # the slope); in eval leaky_relu with the mean slope (lower + upper) / 2 (the kernels check the dtype)
    if training and lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(self, (lower + upper) / 2)
    return self * _rrelu_noise(self, lower, upper, seed=seed)


rrelu = defop(
    "rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, *, "
    "int? seed=None) -> Tensor",
    composite=_rrelu,
    samples=lambda op: [SampleInput("eval", make_arg((3, 4), key=(op, 0), away_from=0.0)),
                        SampleInput("training seed", make_arg((3, 4), key=(op, 1), away_from=0.0), 0.1, 0.4, True,
                                    seed=3),
                        SampleInput("eval bounds", make_arg((5,), key=(op, 2), away_from=0.0), 0.2, 0.6)],
    torch=f"lambda x, lower=0.125, upper=0.3333333333333333, training=False, seed=None: "
          f"torch.nn.functional.leaky_relu(x, (lower + upper) / 2) if not training else "
          f"x * torch.as_tensor({_RRELU_NOISE}, dtype=x.dtype)",
    doc="Randomized leaky ReLU: in training each negative element times a slope drawn uniformly from "
        "[lower, upper) (from `seed`, or agrad's global generator), in eval leaky_relu with slope "
        "(lower + upper) / 2.")


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

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH_F = float(np.float32(1.0 / 6.0))   # PyTorch's hardsigmoid_backward: 1.0f / 6.0f in every dtype


def _arg_away(shape, key, points, low, high, transposed=False):
    """A float64 sample kept at least 0.1 from each of `points`, where the op has a kink."""
    values = make_arg(shape, key=key, low=low, high=high, transposed=transposed, requires_grad=False)._data
    for p in points:
        close = np.abs(values - p) < 0.1
        values = np.where(close, values + np.where(values >= p, 0.2, -0.2), values)
    return creation.tensor(values, dtype="float64", requires_grad=True)


def _same_dtype(kernel):
    """Run `kernel` in the opmath type (float for half) and cast back to the input's dtype."""
    def run(xp, *args):
        out = kernel(xp, *[_opmath(a) if hasattr(a, "dtype") else a for a in args])
        return out.astype(args[0].dtype, copy=False)
    return run


# ---- elu, selu, celu ---------------------------------------------------------------------------

def _elu_kernel(xp, self, alpha, scale, input_scale):
    _float_only("elu_cpu", self)
    neg = (alpha * scale) * xp.expm1(xp.minimum(self, 0) * input_scale)
    return xp.where(self > 0, self * scale, neg)


def _elu_backward_kernel(xp, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    _float_only("elu_backward_cpu", grad_output, self_or_result)
    x = self_or_result
    if is_result:
        neg = grad_output * input_scale * (x + alpha * scale)
    else:
        neg = grad_output * (input_scale * alpha * scale) * xp.exp(xp.minimum(x, 0) * input_scale)
    return xp.where(x <= 0, neg, grad_output * scale)


def _elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    # PyTorch's elu_double_backward
    negative = lt(self_or_result, 0)
    if is_result:
        return where(negative, grad * grad_output * input_scale, 0.0)
    return where(negative, elu_backward(grad * grad_output * input_scale, alpha, scale, input_scale, False,
                                        self_or_result), 0.0)


def _elu_backward_meta(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    return _backward_meta("elu_backward_cpu")(grad_output, self_or_result)


elu_backward = defop(
    "elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, "
    "Tensor self_or_result) -> Tensor",
    kernel=_same_dtype(_elu_backward_kernel), meta=_elu_backward_meta, promote="same",
    grads={"grad_output": lambda grad, alpha, scale, input_scale, is_result, self_or_result:
               elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result),
           "self_or_result": _elu_double_backward},
    samples=lambda op: [
        SampleInput(f"is_result={r}", make_arg((3, 4), key=(op, "g")), 1.3, 0.8, 1.5, r,
                    make_arg((3, 4), key=(op, "x", r), low=-3.0 if not r else -0.9, high=2.0, away_from=0.0))
        for r in (False, True)],
    torch="torch.ops.aten.elu_backward",
    doc="The gradient of elu: grad_output * scale where the input is positive, "
        "grad_output * input_scale * alpha * scale * exp(x * input_scale) elsewhere (from the result when "
        "is_result).")


def _elu_samples(op):
    x = make_arg((3, 4), key=(op, "a"), low=-3.0, high=2.0, away_from=0.0)
    return unary_samples(low=-3.0, high=2.0, away_from=0.0)(op) + [
        SampleInput("alpha=0.5", x, 0.5),
        SampleInput("alpha scale input_scale", x, 1.7, 1.2, 0.5),
        SampleInput("kw", make_arg((4,), key=(op, "k"), low=-3.0, high=2.0, away_from=0.0), alpha=2.0,
                    input_scale=2.0)]


elu = defop(
    "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
    kernel=_same_dtype(_elu_kernel), meta=_unary_meta("elu_cpu"),
    grads={"self": lambda grad, self, alpha, scale, input_scale:
               elu_backward(grad, alpha, scale, input_scale, False, self)},
    samples=_elu_samples, torch="torch._C._nn.elu",
    doc="scale * x for x > 0, scale * alpha * (exp(x * input_scale) - 1) elsewhere (ATen's elu; "
        "F.elu(x, alpha) is elu(x, alpha)).")


def _selu(self):
    return elu(self, _SELU_ALPHA, _SELU_SCALE)


selu = defop(
    "selu(Tensor self) -> Tensor",
    composite=_selu, samples=unary_samples(low=-3.0, high=2.0, away_from=0.0),
    torch="torch.nn.functional.selu",
    doc="elu with PyTorch's SELU alpha (1.6733) and scale (1.0507).")


def _celu_alpha(alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return 1.0 / alpha


def _celu_kernel(xp, self, alpha):
    return _elu_kernel(xp, self, alpha, 1.0, _celu_alpha(alpha))


def _celu_meta(self, alpha):
    _celu_alpha(alpha)
    return _unary_meta("elu_cpu")(self)


celu = defop(
    "celu(Tensor self, Scalar alpha=1.0) -> Tensor",
    kernel=_same_dtype(_celu_kernel), meta=_celu_meta,
    grads={"self": lambda grad, self, alpha: elu_backward(grad, alpha, 1.0, 1.0 / alpha, False, self)},
    samples=lambda op: unary_samples(low=-3.0, high=2.0, away_from=0.0)(op) + [
        SampleInput("alpha=0.5", make_arg((3, 4), key=(op, "a"), low=-3.0, high=2.0, away_from=0.0), 0.5),
        SampleInput("alpha=-2 kw", make_arg((4,), key=(op, "n"), low=-3.0, high=2.0, away_from=0.0), alpha=-2.0)],
    torch="torch.celu",
    doc="max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).")


# ---- hardtanh, relu6 ---------------------------------------------------------------------------

def _hardtanh_check(min_val, max_val):
    if min_val > max_val:       # F.hardtanh's check
        raise ValueError("min_val cannot be greater than max_val")


def _hardtanh_kernel(xp, self, min_val, max_val):
    _hardtanh_check(min_val, max_val)
    return xp.clip(self, min_val, max_val).astype(self.dtype, copy=False)


def _hardtanh_backward_kernel(xp, grad_output, self, min_val, max_val):
    _float_only("hardtanh_backward_cpu", grad_output, self)
    return xp.where((self <= min_val) | (self >= max_val), 0, grad_output).astype(grad_output.dtype, copy=False)


def _hardtanh_meta(self, min_val, max_val):
    _hardtanh_check(min_val, max_val)
    return MetaArray(self.shape, self.dtype)


def _hardtanh_backward_meta(grad_output, self, min_val, max_val):
    return _backward_meta("hardtanh_backward_cpu")(grad_output, self)


hardtanh_backward = defop(
    "hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
    kernel=_hardtanh_backward_kernel, meta=_hardtanh_backward_meta, promote="same",
    grads={"grad_output": lambda grad, self, min_val, max_val: hardtanh_backward(grad, self, min_val, max_val),
           "self": lambda grad: zeros_like(grad)},
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)),
                                    make_arg((3, 4), key=(op, 1), away_from=1.0), -1.0, 1.0)],
    torch="torch.ops.aten.hardtanh_backward",
    doc="grad_output where min_val < self < max_val, 0 elsewhere.")


def _hardtanh_samples(op):
    x = _arg_away((3, 4), (op, "r"), (-0.5, 0.5), -3.0, 3.0)
    return [SampleInput(n, _arg_away(s, (op, n), (-1.0, 1.0), -2.0, 2.0, transposed=t))
            for n, s, t in (("0-d", (), False), ("(5,)", (5,), False), ("(4,3)T", (4, 3), True))] + [
        SampleInput("min=-0.5 max=0.5", x, -0.5, 0.5),
        SampleInput("kw max=2", _arg_away((2, 3), (op, "k"), (-1.0, 2.0), -3.0, 3.0), max_val=2.0)]


hardtanh = defop(
    "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    kernel=_hardtanh_kernel, meta=_hardtanh_meta,
    grads={"self": lambda grad, self, min_val, max_val: hardtanh_backward(grad, self, min_val, max_val)},
    samples=_hardtanh_samples, torch="torch._C._nn.hardtanh",
    doc="x clamped to [min_val, max_val]; the gradient is 0 outside the open interval.")


# ---- threshold, hardshrink, softshrink ------------------------------------------------------------------

def _threshold_kernel(xp, self, threshold, value):
    # x <= threshold ? value : x (a NaN is kept, as PyTorch's)
    return xp.where(self <= threshold, value, self).astype(self.dtype, copy=False)


threshold = defop(
    "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
    kernel=_threshold_kernel, meta=same_meta, promote="same",
    grads={"self": lambda grad, self, threshold: threshold_backward(grad, self, threshold)},
    samples=lambda op: [SampleInput("(3,4) 0.5 -> 2", _arg_away((3, 4), (op, 0), (0.5,), -2.0, 2.0), 0.5, 2.0),
                        SampleInput("0-d", _arg_away((), (op, 1), (-0.3,), -2.0, 2.0), -0.3, 0.0)],
    torch="torch.threshold", doc="value where x <= threshold, else x.")


def _shrink_backward_kernel(xp, grad_output, self, lambd):
    # 0 where -lambd <= x <= lambd: hardshrink's and softshrink's backward alike (PyTorch's kernels)
    return xp.where((self >= -lambd) & (self <= lambd), 0, grad_output).astype(grad_output.dtype, copy=False)


def _shrink_backward_samples(op):
    return [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), _arg_away((3, 4), (op, 1), (-0.5, 0.5), -2.0, 2.0),
                        0.5)]


hardshrink_backward = defop(
    "hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor",
    kernel=_shrink_backward_kernel, meta=_backward_meta("hardshrink_backward_cpu"), promote="same",
    grads={"grad_out": lambda grad, self, lambd: hardshrink_backward(grad, self, lambd),
           "self": lambda grad: zeros_like(grad)},
    samples=_shrink_backward_samples, torch="torch.ops.aten.hardshrink_backward",
    doc="grad_out where |self| > lambd, 0 elsewhere.")

softshrink_backward = defop(
    "softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor",
    kernel=_shrink_backward_kernel, meta=_backward_meta("softshrink_backward_cpu"), promote="same",
    grads={"grad_output": lambda grad, self, lambd: softshrink_backward(grad, self, lambd),
           "self": lambda grad: zeros_like(grad)},
    samples=_shrink_backward_samples, torch="torch.ops.aten.softshrink_backward",
    doc="grad_output where |self| > lambd, 0 elsewhere.")


def _shrink_meta(kernel_name):
    def meta(self, lambd=0.5):
        _float_only(kernel_name, self)
        return MetaArray(self.shape, self.dtype)
    return meta


def _hardshrink_kernel(xp, self, lambd):
    _float_only("hardshrink_cpu", self)
    return xp.where((self >= -lambd) & (self <= lambd), 0, self).astype(self.dtype, copy=False)


def _softshrink_kernel(xp, self, lambd):
    _float_only("softshrink_check", self)
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {np.finfo(self.dtype).max:.6g}] for input dtype "
                           f"{scalar_type_name(self.dtype)}, but found {lambd:g}")
    return xp.where(self > lambd, self - lambd, xp.where(self < -lambd, self + lambd, 0)).astype(self.dtype,
                                                                                                 copy=False)


def _shrink_samples(op):
    return [SampleInput("(3,4)", _arg_away((3, 4), (op, 0), (-0.5, 0.5), -2.0, 2.0)),
            SampleInput("(5,) lambd=1.2", _arg_away((5,), (op, 1), (-1.2, 1.2), -3.0, 3.0), 1.2),
            SampleInput("0-d", _arg_away((), (op, 2), (-0.5, 0.5), -2.0, 2.0))]


hardshrink = defop(
    "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    kernel=_hardshrink_kernel, meta=_shrink_meta("hardshrink_cpu"), promote="same",
    grads={"self": lambda grad, self, lambd: hardshrink_backward(grad, self, lambd)},
    samples=_shrink_samples, torch="torch.nn.functional.hardshrink",
    doc="0 where -lambd <= x <= lambd, else x.")

softshrink = defop(
    "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    kernel=_softshrink_kernel, meta=_shrink_meta("softshrink_check"), promote="same",
    grads={"self": lambda grad, self, lambd: softshrink_backward(grad, self, lambd)},
    samples=_shrink_samples, torch="torch.nn.functional.softshrink",
    doc="x - lambd above lambd, x + lambd below -lambd, 0 between (lambd >= 0).")


def _relu6(self):
    return hardtanh(self, 0, 6)


relu6 = defop(
    "relu6(Tensor self) -> Tensor",
    composite=_relu6,
    samples=lambda op: [SampleInput(n, _arg_away(s, (op, n), (0.0, 6.0), -3.0, 9.0))
                        for n, s in (("(3,4)", (3, 4)), ("0-d", ()), ("(2,3,2)", (2, 3, 2)))],
    torch="torch.nn.functional.relu6",
    doc="hardtanh(x, 0, 6).")


# ---- hardsigmoid, hardswish --------------------------------------------------------------------

def _hardsigmoid_kernel(xp, self):
    _float_only("hardsigmoid_cpu", self)
    return xp.clip(self + 3, 0, 6) / 6


def _hardsigmoid_backward_kernel(xp, grad_output, self):
    _float_only("hardsigmoid_backward_cpu", grad_output, self)
    return xp.where((self > -3) & (self < 3), grad_output * _ONE_SIXTH_F, 0)


def _hard_backward_samples(op):
    return [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), _arg_away((3, 4), (op, 1), (-3.0, 3.0), -5.0, 5.0))]


hardsigmoid_backward = defop(
    "hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
    kernel=_same_dtype(_hardsigmoid_backward_kernel), meta=_backward_meta("hardsigmoid_backward_cpu"),
    promote="same",
    grads={"grad_output": lambda grad, self: hardsigmoid_backward(grad, self),
           "self": lambda grad: zeros_like(grad)},
    samples=_hard_backward_samples,
    torch="torch.ops.aten.hardsigmoid_backward",
    doc="grad_output / 6 (1/6 rounded to float, as PyTorch) where -3 < self < 3, 0 elsewhere.")


def _hard_samples(op):
    """Inputs over [-5, 5], away from the kinks at -3 and 3."""
    return [SampleInput(n, _arg_away(s, (op, n), (-3.0, 3.0), -5.0, 5.0, transposed=t))
            for n, s, t in (("0-d", (), False), ("(5,)", (5,), False), ("(3,4)", (3, 4), False),
                            ("(4,3)T", (4, 3), True), ("(2,3,2)", (2, 3, 2), False))]


hardsigmoid = defop(
    "hardsigmoid(Tensor self) -> Tensor",
    kernel=_same_dtype(_hardsigmoid_kernel), meta=_unary_meta("hardsigmoid_cpu"),
    grads={"self": lambda grad, self: hardsigmoid_backward(grad, self)},
    samples=_hard_samples, torch="torch.nn.functional.hardsigmoid",
    doc="relu6(x + 3) / 6.")


def _hardswish_kernel(xp, self):
    _float_only("hardswish_cpu", self)
    return self * xp.clip(self + 3, 0, 6) / 6


def _hardswish_backward_kernel(xp, grad_output, self):
    _float_only("hardswish_backward_cpu", grad_output, self)
    mid = grad_output * (self / 3 + 0.5)
    return xp.where(self < -3, 0, xp.where(self <= 3, mid, grad_output))


def _hardswish_double_backward(grad, grad_output, self):
    # PyTorch: where(-3 < self < 3, grad * grad_output / 3, 0)
    return where(gt(self, -3.0) * lt(self, 3.0), grad * grad_output / 3.0, 0.0)


hardswish_backward = defop(
    "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
    kernel=_same_dtype(_hardswish_backward_kernel), meta=_backward_meta("hardswish_backward_cpu"),
    promote="same",
    grads={"grad_output": lambda grad, self: hardswish_backward(grad, self),
           "self": _hardswish_double_backward},
    samples=_hard_backward_samples,
    torch="torch.ops.aten.hardswish_backward",
    doc="0 below -3, grad_output * (self / 3 + 1/2) up to 3, grad_output above.")

hardswish = defop(
    "hardswish(Tensor self) -> Tensor",
    kernel=_same_dtype(_hardswish_kernel), meta=_unary_meta("hardswish_cpu"),
    grads={"self": lambda grad, self: hardswish_backward(grad, self)},
    samples=_hard_samples, torch="torch.nn.functional.hardswish",
    doc="x * relu6(x + 3) / 6.")


# ---- mish ---------------------------------------------------------------------------------

def _softplus_np(xp, x):
    # NOTE: log1p(exp(x)) overflows for large x; max(x, 0) + log1p(exp(-|x|)) is the same number
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


def _mish_kernel(xp, self):
    _float_only("mish_cpu", self)
    return self * xp.tanh(_softplus_np(xp, self))


def _mish_backward_kernel(xp, grad_output, self):
    _float_only("mish_backward_cpu", grad_output, self)
    t = xp.tanh(_softplus_np(xp, self))
    return grad_output * (t + self * _sigmoid_np(xp, self) * (1 - t * t))


def _mish_derivative(self):
    """d mish / dx = tanh(softplus(x)) + x sigmoid(x) (1 - tanh(softplus(x))^2), in agrad ops."""
    t = tanh(softplus(self))
    return t + self * sigmoid(self) * (1 - t * t)


def _mish_grad(grad, self):
    # As PyTorch: mish_backward, except when the backward itself is recorded (create_graph), where
    # PyTorch writes the derivative with differentiable ops (infinitely_differentiable_mish_backward)
    if is_grad_enabled():
        return grad * _mish_derivative(self)
    return mish_backward(grad, self)


mish_backward = defop(
    "mish_backward(Tensor grad_output, Tensor self) -> Tensor",
    kernel=_same_dtype(_mish_backward_kernel), meta=_backward_meta("mish_backward_cpu"), promote="same",
    grads={"grad_output": lambda grad, self: mish_backward(grad, self),
           "self": lambda grad, grad_output, self: grad * grad_output * _mish_second(self)},
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)),
                                    make_arg((3, 4), key=(op, 1), low=-4.0, high=4.0))],
    torch="torch.ops.aten.mish_backward",
    doc="grad_output * (tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2)).")


def _mish_second(self):
    """mish''(x), from t = tanh(softplus(x)), s = sigmoid(x): t' = s (1 - t^2)."""
    t = tanh(softplus(self))
    s = sigmoid(self)
    dt = s * (1 - t * t)
    return 2 * dt + self * (s * (1 - s) * (1 - t * t) - 2 * t * s * dt)


mish = defop(
    "mish(Tensor self) -> Tensor",
    kernel=_same_dtype(_mish_kernel), meta=_unary_meta("mish_cpu"),
    grads={"self": _mish_grad},
    samples=lambda op: unary_samples(low=-4.0, high=4.0)(op) + [
        SampleInput("wide", make_arg((6,), key=(op, "w"), low=-30.0, high=30.0))],
    torch="torch.nn.functional.mish",
    doc="x * tanh(softplus(x)).")


# ---- logsigmoid ---------------------------------------------------------------------------

def _logsigmoid_kernel(xp, self):
    _float_only("log_sigmoid_cpu", self)
    # NOTE: -softplus(-x) = min(x, 0) - log1p(exp(-|x|)): no overflow, no log(0)
    return xp.minimum(self, 0) - xp.log1p(xp.exp(-xp.abs(self)))


def _log_sigmoid_backward_kernel(xp, grad_output, self, buffer):
    _float_only("log_sigmoid_backward_cpu", grad_output, self)
    # PyTorch's CPU forward saves buffer = exp(-|x|); its CUDA path passes an empty one and recomputes
    z = buffer if buffer.size else xp.exp(-xp.abs(self))
    return grad_output * xp.where(self < 0, 1 / (1 + z), z / (1 + z))


def _log_sigmoid_backward_meta(grad_output, self, buffer):
    return _backward_meta("log_sigmoid_backward_cpu")(grad_output, self)


def _log_sigmoid_double_backward(grad, grad_output, self):
    s = sigmoid(self)
    return grad * grad_output * (s - 1) * s


log_sigmoid_backward = defop(
    "log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor",
    kernel=_same_dtype(_log_sigmoid_backward_kernel), meta=_log_sigmoid_backward_meta,
    promote="same",
    grads={"grad_output": lambda grad, self, buffer: log_sigmoid_backward(grad, self, buffer),
           "self": _log_sigmoid_double_backward, "buffer": None},
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)),
                                    make_arg((3, 4), key=(op, 1), low=-5.0, high=5.0),
                                    make_arg((0,), key=(op, 2), requires_grad=False))],
    # PyTorch's CPU kernel needs the forward's buffer: the reference computes it, as its forward does
    torch="lambda g, x, buffer: torch.ops.aten.log_sigmoid_backward(g, x, torch.exp(-x.detach().abs()))",
    doc="grad_output * (1 - sigmoid(self)), from buffer = exp(-|self|) (PyTorch's CPU forward saves it; "
        "empty, as on its CUDA path, it is recomputed).")

logsigmoid = defop(
    "logsigmoid(Tensor self) -> Tensor",
    kernel=_same_dtype(_logsigmoid_kernel), meta=_unary_meta("log_sigmoid_cpu"),
    grads={"self": lambda grad, self: log_sigmoid_backward(grad, self, _empty_buffer(self))},
    backward_name="LogSigmoidBackward0",
    samples=lambda op: unary_samples(low=-5.0, high=5.0)(op) + [
        SampleInput("wide", make_arg((6,), key=(op, "w"), low=-800.0, high=800.0))],
    torch="torch.nn.functional.logsigmoid",
    doc="log(sigmoid(x)) = -softplus(-x), computed without overflow.")


def _empty_buffer(self):
    return creation.empty(0, dtype=self.dtype, device=self.device)


# ---- glu ----------------------------------------------------------------------------------

def _glu_check(shape, dim):
    if len(shape) == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, len(shape))
    if shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {shape[d]}")
    return d


def _halves(xp, self, dim):
    d = _glu_check(self.shape, dim)
    a, b = xp.split(self, 2, axis=d)
    return d, a, b


def _glu_kernel(xp, self, dim):
    _float_only("glu_cpu", self)
    _, a, b = _halves(xp, self, dim)
    return a * _sigmoid_np(xp, b)


def _glu_meta(self, dim):
    _float_only("glu_cpu", self)
    d = _glu_check(self.shape, dim)
    shape = list(self.shape)
    shape[d] //= 2
    return MetaArray(tuple(shape), self.dtype)


def _glu_backward_kernel(xp, grad_output, self, dim):
    _float_only("glu_backward_cpu", grad_output, self)
    d, a, b = _halves(xp, self, dim)
    s = _sigmoid_np(xp, b)
    return xp.concatenate([grad_output * s, grad_output * a * s * (1 - s)], axis=d)


def _glu_backward_meta(grad_output, self, dim):
    _float_only("glu_backward_cpu", grad_output, self)
    _glu_check(self.shape, dim)
    return MetaArray(self.shape, grad_output.dtype)


def _glu_double_backward_grad_output(grad, self, dim):
    # PyTorch's glu_double_backward_grad_output: the two halves of grad * glu_backward(1, self)
    d = _glu_check(self.shape, dim)
    first, second = chunk(self, 2, d)
    g1, g2 = chunk(grad, 2, d)
    s = sigmoid(second)
    return g1 * s + g2 * first * s * (1 - s)


def _glu_double_backward(grad, grad_output, self, dim):
    # PyTorch's glu_double_backward
    d = _glu_check(self.shape, dim)
    first, second = chunk(self, 2, d)
    gg_first, gg_second = chunk(grad, 2, d)
    s = sigmoid(second)
    one_sub = 1 - s
    s_one_sub = s * one_sub
    second_order = s_one_sub * one_sub - s * s_one_sub
    g_first = gg_second * grad_output * s_one_sub
    g_second = gg_second * first * grad_output * second_order + gg_first * grad_output * s_one_sub
    return cat([g_first, g_second], d)


glu_backward = defop(
    "glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor",
    kernel=_same_dtype(_glu_backward_kernel), meta=_glu_backward_meta, promote="same",
    grads={"grad_output": _glu_double_backward_grad_output, "self": _glu_double_backward},
    samples=lambda op: [SampleInput("(3,4) dim=1", make_arg((3, 2), key=(op, 0)), make_arg((3, 4), key=(op, 1)), 1),
                        SampleInput("(2,4,3) dim=-2", make_arg((2, 2, 3), key=(op, 2)),
                                    make_arg((2, 4, 3), key=(op, 3)), -2)],
    torch="torch.ops.aten.glu_backward",
    doc="The gradient of glu: [grad * sigmoid(b), grad * a * sigmoid(b) * (1 - sigmoid(b))] along dim.")

glu = defop(
    "glu(Tensor self, int dim=-1) -> Tensor",
    kernel=_same_dtype(_glu_kernel), meta=_glu_meta,
    grads={"self": lambda grad, self, dim: glu_backward(grad, self, dim)},
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0))),
                        SampleInput("(4,) ", make_arg((4,), key=(op, 1))),
                        SampleInput("(6,3) dim=0", make_arg((6, 3), key=(op, 2)), 0),
                        SampleInput("(2,4,2)T kw", make_arg((2, 4, 2), key=(op, 3), transposed=True), dim=1)],
    torch="torch.nn.functional.glu",
    doc="a * sigmoid(b), where a and b are the two halves of the input along dim.")


# ---- prelu --------------------------------------------------------------------------------

def _prelu_kernel_kernel(xp, self, weight):
    _float_only("prelu_cpu", self, weight)
    return xp.where(self > 0, self, weight * self)


def _prelu_kernel_meta(self, weight):
    _float_only("prelu_cpu", self, weight)
    return MetaArray(self.shape, self.dtype)


def _prelu_kernel_backward_kernel(xp, grad_output, self, weight):
    _float_only("prelu_backward_cpu", grad_output, self, weight)
    positive = self > 0
    grad_self = xp.where(positive, grad_output, weight * grad_output)
    grad_weight = xp.where(positive, 0, self * grad_output).astype(weight.dtype, copy=False)
    # NOTE: the weight's gradient keeps the broadcast shape, as PyTorch's; the engine sums it to the weight's
    return grad_self.astype(self.dtype, copy=False), grad_weight


def _prelu_kernel_backward_meta(grad_output, self, weight):
    _float_only("prelu_backward_cpu", grad_output, self, weight)
    shape = broadcast_shapes(grad_output.shape, self.shape, weight.shape)
    return MetaArray(shape, self.dtype), MetaArray(shape, weight.dtype)


def _prelu_backward_grad_output(grads, self, weight):
    return where(ge(self, 0), grads[0], grads[0] * weight + grads[1] * self)


_prelu_kernel_backward = defop(
    "_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)",
    kernel=_prelu_kernel_backward_kernel, meta=_prelu_kernel_backward_meta,
    grads={"grad_output": _prelu_backward_grad_output,
           "self": lambda grads, grad_output, self: where(ge(self, 0), 0.0, grad_output * grads[1]),
           "weight": lambda grads, grad_output, self: where(ge(self, 0), 0.0, grad_output * grads[0])},
    samples=lambda op: [SampleInput("(2,3,4)", make_arg((2, 3, 4), key=(op, 0)),
                                    make_arg((2, 3, 4), key=(op, 1), away_from=0.0),
                                    make_arg((1, 3, 1), key=(op, 2), low=0.1, high=0.5))],
    torch="torch.ops.aten._prelu_kernel_backward",
    doc="The gradients of _prelu_kernel for self and weight (both of the broadcast shape).")

_prelu_kernel = defop(
    "_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
    kernel=_prelu_kernel_kernel, meta=_prelu_kernel_meta,
    grads={"self": lambda grad, self, weight: _prelu_kernel_backward(grad, self, weight)[0],
           "weight": lambda grad, self, weight: _prelu_kernel_backward(grad, self, weight)[1]},
    backward_name="PreluKernelBackward0",
    samples=lambda op: [SampleInput("(2,3) weight (1,3)", make_arg((2, 3), key=(op, 0), away_from=0.0),
                                    make_arg((1, 3), key=(op, 1), low=0.1, high=0.5))],
    torch="torch.ops.aten._prelu_kernel",
    doc="where(self > 0, self, weight * self), the weight broadcast to the input's rank.")


def _prelu(self, weight):
    if self.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_type_name(self.dtype.np)} and "
                           f"{scalar_type_name(weight.dtype.np)}")
    n = weight.numel()
    if n != 1:
        if self.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.shape[1] if self.ndim > 1 else 1
        if channels != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if self.ndim != weight.ndim:
        shape = [1] * self.ndim
        if self.ndim > 1:
            shape[1] = n
        weight = reshape(weight, shape)
    return _prelu_kernel(self, weight)


def _prelu_samples(op):
    return [SampleInput("(2,3,4) per channel", make_arg((2, 3, 4), key=(op, 0), away_from=0.0),
                        make_arg((3,), key=(op, 1), low=0.1, high=0.5)),
            SampleInput("(3,4) one weight", make_arg((3, 4), key=(op, 2), away_from=0.0),
                        make_arg((1,), key=(op, 3), low=0.1, high=0.5)),
            SampleInput("(5,) 0-d weight", make_arg((5,), key=(op, 4), away_from=0.0),
                        make_arg((), key=(op, 5), low=0.1, high=0.5)),
            SampleInput("(2,4)T negative weight", make_arg((2, 4), key=(op, 6), away_from=0.0, transposed=True),
                        make_arg((4,), key=(op, 7), low=-1.5, high=-0.5))]


prelu = defop(
    "prelu(Tensor self, Tensor weight) -> Tensor",
    composite=_prelu, samples=_prelu_samples, torch="torch.nn.functional.prelu",
    doc="max(0, x) + weight * min(0, x), with one weight or one per channel (dim 1).")


# ---- composites: softsign, tanhshrink, softmin ------------------------------------------------

softsign = defop(
    "softsign(Tensor self) -> Tensor",
    composite=lambda self: self / (1 + abs(self)),
    samples=unary_samples(low=-4.0, high=4.0, away_from=0.0), torch="torch.nn.functional.softsign",
    doc="x / (1 + |x|).")

tanhshrink = defop(
    "tanhshrink(Tensor self) -> Tensor",
    composite=lambda self: self - tanh(self),
    samples=unary_samples(low=-3.0, high=3.0), torch="torch.nn.functional.tanhshrink",
    doc="x - tanh(x).")
