"""More activations, spelled as PyTorch's: elu (and selu, celu through elu's backward),
hardtanh (relu6), hardsigmoid, hardswish, mish, logsigmoid, glu, prelu; and the ones
PyTorch writes with other ops (softsign, tanhshrink, softmin).

Each primitive's gradient is PyTorch's backward op (`elu_backward`, `glu_backward`, …),
itself differentiable with PyTorch's formulas from derivatives.yaml, so double backward
works. Every kernel but hardtanh's is float-only, as PyTorch's: an integer input fails
with PyTorch's message (`"elu_cpu" not implemented for 'Long'`).
"""
from __future__ import annotations

import numpy as np

from .. import creation, dtypes
from ..backends.meta import MetaArray
from ..creation import zeros_like
from ..grad_mode import is_grad_enabled
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes, normalize_dim
from .activations import (
    _backward_meta,
    _float_only,
    _opmath,
    _sigmoid_np,
    _unary_meta,
    softplus,
)
from .joining import cat, chunk
from .nn import softmax
from .pointwise import ge, gt, lt, sigmoid, tanh, where
from .registry import defop
from .samples import SampleInput, make_arg, unary_samples
from .shape import reshape
from .unary import abs  # noqa: A004

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


def _softmin(self, dim, dtype):
    if dim is None:
        # F.softmin's implicit dim (deprecated there): 0 for 0-, 1- and 3-d inputs, else 1
        dim = 0 if self.ndim in (0, 1, 3) else 1
    return softmax(-self, dim, dtype)


softmin = defop(
    "softmin(Tensor self, int? dim=None, *, ScalarType? dtype=None) -> Tensor",
    composite=_softmin,
    samples=lambda op: [SampleInput("(3,4) dim=1", make_arg((3, 4), key=(op, 0)), 1),
                        SampleInput("(2,3,2) dim=-1 T", make_arg((2, 3, 2), key=(op, 1), transposed=True), -1),
                        SampleInput("(5,) implicit", make_arg((5,), key=(op, 2))),
                        SampleInput("float32->float64", make_arg((3, 4), key=(op, 3), dtype=dtypes.float32,
                                                                 requires_grad=False), 0, dtype="float64")],
    torch="lambda self, dim=None, dtype=None: torch.nn.functional.softmin(self, dim, "
          "dtype=getattr(torch, dtype) if dtype else None)",
    doc="softmax(-x, dim).")
