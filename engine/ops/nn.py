"""nn ops: linear (over addmm), softmax and log_softmax with their
`_*_backward_data` ops, layer_norm, dropout.

Backward formulas are agrad ops, so every gradient here is differentiable again;
where PyTorch has a dedicated backward op (`_softmax_backward_data`) it is an op
here too, with its own derivative, so double backward is named as PyTorch names it.
"""
from __future__ import annotations

import numpy as np

from .. import creation, dtypes
from ..backends.meta import MetaArray
from ..errors import DtypeError, DtypeNotImplementedError, ShapeError
from ..messages import require_floating, scalar_type_name, sizes
from ..shapes import normalize_dim
from .linalg import matmul, mm
from .pointwise import exp
from .reduction import mean, sum  # noqa: A004
from .registry import defop
from .samples import SampleInput, make_arg
from .shape import _expand_shape, reshape, transpose


def checked(meta_rule, kernel):
    """A kernel that runs the Meta rule first: the same checks and messages on every backend."""
    def run(xp, *arrays):
        meta_rule(*arrays)
        return kernel(xp, *arrays)
    return run


def _scalar_type(dtype):
    if dtype is None:
        return None
    return dtypes.from_name(dtype).np if isinstance(dtype, str) else dtype.np


# ---- linear -----------------------------------------------------------------------------------

def _addmm_meta(self, mat1, mat2, beta, alpha):
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise ShapeError(f"{'mat1' if mat1.ndim != 2 else 'mat2'} must be a matrix, got "
                         f"{mat1.ndim if mat1.ndim != 2 else mat2.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                         f"{mat2.shape[0]}x{mat2.shape[1]})")
    if not (mat1.dtype == mat2.dtype == self.dtype):
        raise DtypeError(f"self and mat2 must have the same dtype, but got {scalar_type_name(self.dtype)} and "
                         f"{scalar_type_name(mat2.dtype)}" if self.dtype != mat2.dtype else
                         f"expected m1 and m2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}")
    out = (mat1.shape[0], mat2.shape[1])
    _expand_shape(self.shape, out)      # PyTorch's "The expanded size of the tensor …" for a bad bias
    return MetaArray(out, mat1.dtype)


def _addmm_kernel(xp, self, mat1, mat2, beta, alpha):
    prod = xp.matmul(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:       # NOTE: PyTorch ignores self when beta == 0: nan/inf in it do not propagate
        return prod
    return (prod + (self if beta == 1 else self * beta)).astype(mat1.dtype, copy=False)


addmm = defop(
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    kernel=checked(_addmm_meta, _addmm_kernel), meta=_addmm_meta,
    grads={"self": lambda grad, beta: grad if beta == 1 else grad * beta,
           "mat1": lambda grad, mat2, alpha: mm(grad, transpose(mat2, 0, 1)) * alpha if alpha != 1 else
           mm(grad, transpose(mat2, 0, 1)),
           "mat2": lambda grad, mat1, alpha: mm(transpose(mat1, 0, 1), grad) * alpha if alpha != 1 else
           mm(transpose(mat1, 0, 1), grad)},
    array_grads={"self": lambda grad, beta: grad if beta == 1 else grad * beta,
                 "mat1": lambda grad, mat2, alpha: np.matmul(grad, np.swapaxes(mat2, 0, 1)) * alpha if alpha != 1
                 else np.matmul(grad, np.swapaxes(mat2, 0, 1)),
                 "mat2": lambda grad, mat1, alpha: np.matmul(np.swapaxes(mat1, 0, 1), grad) * alpha if alpha != 1
                 else np.matmul(np.swapaxes(mat1, 0, 1), grad)},
    samples=lambda op: [
        SampleInput("(4,)+(2,3)@(3,4)", make_arg((4,), key=(op, 0)), make_arg((2, 3), key=(op, 1)),
                    make_arg((3, 4), key=(op, 2), transposed=True)),
        SampleInput("(2,1)+..., beta, alpha", make_arg((2, 1), key=(op, 3)), make_arg((2, 3), key=(op, 4)),
                    make_arg((3, 2), key=(op, 5)), beta=0.5, alpha=2.0)],
    torch="torch.addmm", doc="beta * self + alpha * (mat1 @ mat2); the 2-D linear with a bias.")


def _linear(input, weight, bias):
    wt = transpose(weight, 0, 1) if weight.ndim == 2 else weight
    if bias is not None and input.ndim == 2:
        return addmm(bias, input, wt)
    if bias is not None and input.ndim >= 3 and bias.ndim == 1 and weight.ndim == 2:
        # PyTorch's _flatten_nd_linear: one addmm over the folded batch, then a view back
        out = addmm(bias, reshape(input, [-1, input.shape[-1]]), wt)
        return reshape(out, list(input.shape[:-1]) + [out.shape[-1]])
    out = matmul(input, wt)
    return out if bias is None else out + bias


def _linear_samples(op):
    return [SampleInput("(2,3),(4,3),(4,)", make_arg((2, 3), key=(op, 0)), make_arg((4, 3), key=(op, 1)),
                        make_arg((4,), key=(op, 2))),
            SampleInput("no bias", make_arg((2, 3), key=(op, 3)), make_arg((4, 3), key=(op, 4))),
            SampleInput("batched (2,2,3)", make_arg((2, 2, 3), key=(op, 5)), make_arg((4, 3), key=(op, 6)),
                        make_arg((4,), key=(op, 7))),
            SampleInput("1-D input", make_arg((3,), key=(op, 8)), make_arg((2, 3), key=(op, 9), transposed=True),
                        make_arg((2,), key=(op, 10)))]


linear = defop(
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    composite=_linear, samples=_linear_samples, torch="torch.nn.functional.linear",
    doc="input @ weight.T + bias; a 2-D input with a bias is one addmm (AddmmBackward0), as in PyTorch.")


# ---- softmax, log_softmax ------------------------------------------------------------------------

def _softmax_input(self, dim, dtype, name):
    out_dtype = _scalar_type(dtype) or self.dtype
    d = normalize_dim(dim, self.ndim)
    if np.dtype(out_dtype).kind != "f":
        last = self.ndim == 0 or d == self.ndim - 1
        raise DtypeNotImplementedError(f'"{name}_{"lastdim_" if last else ""}kernel_impl" not implemented for '
                                       f"'{scalar_type_name(out_dtype)}'")
    return out_dtype, d


def _softmax_meta(self, dim, dtype=None):
    out_dtype, _ = _softmax_input(self, dim, dtype, "softmax")
    return MetaArray(self.shape, out_dtype)


def _log_softmax_meta(self, dim, dtype=None):
    out_dtype, _ = _softmax_input(self, dim, dtype, "log_softmax")
    return MetaArray(self.shape, out_dtype)


def _shifted(xp, self, dim, dtype, name):
    out_dtype, d = _softmax_input(self, dim, dtype, name)
    x = self.astype(out_dtype, copy=False)
    if x.ndim == 0:
        x = x.reshape(1)
    # NOTE: subtracting the max keeps exp() from overflowing (PyTorch's stable softmax)
    m = xp.max(x, axis=d, keepdims=True) if x.size else x
    shifted = x - m
    return shifted, d


def _softmax_kernel(xp, self, dim, dtype=None):
    shifted, d = _shifted(xp, self, dim, dtype, "softmax")
    e = xp.exp(shifted)
    return (e / xp.sum(e, axis=d, keepdims=True)).reshape(self.shape)


def _log_softmax_kernel(xp, self, dim, dtype=None):
    shifted, d = _shifted(xp, self, dim, dtype, "log_softmax")
    return (shifted - xp.log(xp.sum(xp.exp(shifted), axis=d, keepdims=True))).reshape(self.shape)


def _keep_sum(x, dim):
    return sum(x, [dim], True)


def _softmax_double_backward(grad, grad_output, output, dim):
    return grad * (grad_output - _keep_sum(grad_output * output, dim)) - grad_output * _keep_sum(grad * output, dim)


def _same_shape_meta(grad_output, output, dim):
    if tuple(grad_output.shape) != tuple(output.shape):
        raise ShapeError(f"grad_output of size {sizes(grad_output.shape)} does not match output of size "
                         f"{sizes(output.shape)}")
    normalize_dim(dim, output.ndim)
    return MetaArray(output.shape, output.dtype)


def _softmax_bwd_kernel(xp, grad_output, output, dim):
    d = normalize_dim(dim, output.ndim)
    if output.ndim == 0:
        return grad_output * output - grad_output * output * output
    return output * (grad_output - xp.sum(grad_output * output, axis=d, keepdims=True))


def _log_softmax_bwd_kernel(xp, grad_output, output, dim):
    d = normalize_dim(dim, output.ndim)
    if output.ndim == 0:
        return grad_output - xp.exp(output) * grad_output
    return grad_output - xp.exp(output) * xp.sum(grad_output, axis=d, keepdims=True)


def _backward_data_samples(low, high):
    def samples(op):
        out = make_arg((3, 4), key=(op, "y"), low=low, high=high)
        return [SampleInput("(3,4) dim=1", make_arg((3, 4), key=(op, "g")), out, 1),
                SampleInput("(3,4) dim=0", make_arg((3, 4), key=(op, "g0")), out, 0)]
    return samples


_softmax_backward_data = defop(
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
    kernel=checked(_same_shape_meta, _softmax_bwd_kernel), meta=_same_shape_meta, promote="same",
    grads={"grad_output": lambda grad, output, dim: _softmax_backward_data(grad, output, dim),
           "output": _softmax_double_backward},
    samples=_backward_data_samples(0.05, 0.5),
    torch="lambda g, y, dim: torch.ops.aten._softmax_backward_data(g, y, dim, y.dtype)",
    doc="The gradient of softmax from its output: output * (grad_output - sum(grad_output * output, dim)).")

_log_softmax_backward_data = defop(
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
    kernel=checked(_same_shape_meta, _log_softmax_bwd_kernel), meta=_same_shape_meta, promote="same",
    grads={"grad_output": lambda grad, output, dim: grad - _keep_sum(grad * exp(output), dim),
           "output": lambda grad, grad_output, output, dim: -(grad * exp(output)) * _keep_sum(grad_output, dim)},
    samples=_backward_data_samples(-3.0, -0.5),
    torch="lambda g, y, dim: torch.ops.aten._log_softmax_backward_data(g, y, dim, y.dtype)",
    doc="The gradient of log_softmax from its output: grad_output - exp(output) * sum(grad_output, dim).")


def _softmax_samples(op):
    x = make_arg((3, 4), key=(op, 0))
    return [SampleInput("(3,4) dim=1", x, 1),
            SampleInput("(3,4) dim=0", x, 0),
            SampleInput("0-d", make_arg((), key=(op, 1)), 0),
            SampleInput("(2,3,2)T dim=-1", make_arg((2, 3, 2), key=(op, 2), transposed=True), -1),
            SampleInput("float32->float64", make_arg((2, 3), key=(op, 3), dtype=dtypes.float32,
                                                                  requires_grad=False), 1,
                        dtype="float64"),
            SampleInput("large values", make_arg((2, 3), key=(op, 4), low=50.0, high=60.0), 1)]


softmax = defop(
    "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    kernel=_softmax_kernel, meta=_softmax_meta,
    grads={"self": lambda grad, result, dim: _softmax_backward_data(grad, result, dim)},
    samples=_softmax_samples,
    torch="lambda x, dim, dtype=None: torch.softmax(x, dim, dtype=getattr(torch, dtype) if dtype else None)",
    doc="exp(x) / sum(exp(x), dim), computed after subtracting the max (stable).")

log_softmax = defop(
    "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    kernel=_log_softmax_kernel, meta=_log_softmax_meta,
    grads={"self": lambda grad, result, dim: _log_softmax_backward_data(grad, result, dim)},
    samples=_softmax_samples,
    torch="lambda x, dim, dtype=None: torch.log_softmax(x, dim, dtype=getattr(torch, dtype) if dtype else None)",
    doc="x - logsumexp(x, dim), computed stably.")


# ---- layer_norm ---------------------------------------------------------------------------------

def _layer_norm_meta(input, normalized_shape, weight, bias, eps):
    shape = tuple(normalized_shape)
    if len(shape) < 1:
        raise ShapeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                         f"element, but got normalized_shape = {sizes(shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ShapeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                             f"{sizes(t.shape)} and normalized_shape = {sizes(shape)}")
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"Given normalized_shape={sizes(shape)}, expected input with shape "
                         f"[*{''.join(', ' + str(s) for s in shape)}], but got input of size{sizes(input.shape)}")
    require_floating("LayerNormKernelImpl", input.dtype)
    return MetaArray(input.shape, input.dtype)


def _layer_norm_kernel(xp, input, normalized_shape, weight, bias, eps):
    _layer_norm_meta(input, normalized_shape, weight, bias, eps)
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    centered = input - xp.mean(input, axis=axes, keepdims=True)
    var = xp.mean(centered * centered, axis=axes, keepdims=True)
    out = centered / xp.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(input.dtype, copy=False)


def _normalized(input, normalized_shape, eps):
    """x_hat and 1/std, recomputed with agrad ops so the gradient can be differentiated again."""
    dims = list(range(input.ndim - len(normalized_shape), input.ndim))
    centered = input - mean(input, dims, True)
    rstd = (mean(centered * centered, dims, True) + eps) ** -0.5
    return centered * rstd, rstd, dims


def _layer_norm_grad_input(grad, input, normalized_shape, weight, eps):
    x_hat, rstd, dims = _normalized(input, normalized_shape, eps)
    g = grad if weight is None else grad * weight
    return rstd * (g - mean(g, dims, True) - x_hat * mean(g * x_hat, dims, True))


def _batch_sum(t, normalized_shape):
    lead = t.ndim - len(normalized_shape)
    return sum(t, list(range(lead))) if lead else t


def _layer_norm_samples(op):
    return [SampleInput("(2,3,4) [4] w b", make_arg((2, 3, 4), key=(op, 0)), [4], make_arg((4,), key=(op, 1)),
                        make_arg((4,), key=(op, 2))),
            SampleInput("(3,4)T [3,4] w", make_arg((3, 4), key=(op, 3), transposed=True), [3, 4],
                        make_arg((3, 4), key=(op, 4))),
            SampleInput("(2,5) [5] no affine", make_arg((2, 5), key=(op, 5)), [5]),
            SampleInput("(4,) eps", make_arg((4,), key=(op, 6)), [4], make_arg((4,), key=(op, 7)),
                        make_arg((4,), key=(op, 8)), eps=1e-3)]


layer_norm = defop(
    "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05) -> Tensor",
    kernel=_layer_norm_kernel, meta=_layer_norm_meta, promote="same",
    grads={"input": _layer_norm_grad_input,
           "weight": lambda grad, input, normalized_shape, eps:
               _batch_sum(grad * _normalized(input, normalized_shape, eps)[0], normalized_shape),
           "bias": lambda grad, normalized_shape: _batch_sum(grad, normalized_shape)},
    backward_name="NativeLayerNormBackward0", samples=_layer_norm_samples,
    torch="torch.nn.functional.layer_norm",
    doc="(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dimensions.")


# ---- dropout ------------------------------------------------------------------------------------

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _mask_dtype(input):
    return input.dtype if input.dtype.kind == "f" else dtypes.get_default_dtype().np


def _check_seed(seed):
    # NumPy's default_rng takes non-negative seeds only; said on Meta too, before any run.
    if seed is not None and seed < 0:
        raise ValueError(f"dropout seed must be a non-negative integer, but got {seed}")


def _dropout_mask_meta(input, p, seed):
    _check_p(p)
    _check_seed(seed)
    return MetaArray(input.shape, _mask_dtype(input))


def _dropout_mask_kernel(xp, input, p, seed):
    _check_p(p)
    _check_seed(seed)
    # NOTE: drawn on the host with NumPy's PCG64 so a seed gives the same mask on every device
    rng = np.random.default_rng(seed) if seed is not None else creation._generator
    keep = rng.random(input.shape) < 1.0 - p
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    mask = (keep * scale).astype(_mask_dtype(input))
    if xp is np:
        return mask
    with input.device:          # a CuPy array's device: the mask goes where the input lives
        return xp.asarray(mask)


_TORCH_MASK = ("(__import__('numpy').random.default_rng(seed).random(tuple(input.shape)) < 1 - p) "
               "* (1.0 / (1 - p) if p < 1 else 0.0)")

_dropout_mask = defop(
    "_dropout_mask(Tensor input, float p, int? seed=None) -> Tensor",
    kernel=_dropout_mask_kernel, meta=_dropout_mask_meta,
    samples=lambda op: [SampleInput("(3,4) p=0.5", make_arg((3, 4), key=(op, 0)), 0.5, seed=0)],
    torch=f"lambda input, p, seed=None: torch.as_tensor({_TORCH_MASK}, dtype=input.dtype)",
    doc="Dropout's scaled keep-mask: 1/(1-p) where kept (probability 1-p), 0 elsewhere; from `seed` "
        "(NumPy's default_rng), or agrad's global generator when seed is None.")


def _dropout(input, p, training, seed):
    _check_p(p)
    _check_seed(seed)
    if not training or p == 0 or input.numel() == 0:
        return input
    return input * _dropout_mask(input, p, seed=seed)


dropout = defop(
    "dropout(Tensor input, float p=0.5, bool training=True, *, int? seed=None) -> Tensor",
    composite=_dropout,
    samples=lambda op: [SampleInput("(4,5) p=0.5", make_arg((4, 5), key=(op, 0)), 0.5, seed=1),
                        SampleInput("(3,) p=0.2", make_arg((3,), key=(op, 1)), p=0.2, seed=7),
                        SampleInput("p=1", make_arg((2, 2), key=(op, 2)), 1.0, seed=0),
                        SampleInput("eval", make_arg((2, 2), key=(op, 3)), 0.5, False, seed=0)],
    torch=f"lambda input, p=0.5, training=True, seed=None: input if not training or p == 0 else "
          f"input * torch.as_tensor({_TORCH_MASK}, dtype=input.dtype)",
    doc="Zeroes each element with probability p and scales the rest by 1/(1-p); the mask comes from `seed` "
        "and is the same on every device. An identity when not training.")
