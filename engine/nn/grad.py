"""torch.nn.grad (torch/nn/grad.py): the gradients of conv1d/2d/3d with respect to their input and
their weight, given the other operand and grad_output — what a custom autograd.Function around a
convolution calls in its backward. They are agrad's convolution backward ops themselves
(convolution_backward_input / _weight, the adjoints conv's own backward runs), so they are
differentiable again; `input_size` / `weight_size` name the shape of the gradient asked for."""
from __future__ import annotations

from .. import _api as _agrad

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _ints(value) -> list:
    # NOTE: one number stands for every spatial dimension: the backward ops expand a 1-element list, as
    # ATen's convolution_backward expands torch's _single/_pair/_triple of it
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _grads(n: int):
    def conv_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _agrad.convolution_backward_input(grad_output, weight, list(input_size), _ints(stride), _ints(padding),
                                                 _ints(dilation), groups)

    def conv_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _agrad.convolution_backward_weight(grad_output, input, list(weight_size), _ints(stride),
                                                  _ints(padding), _ints(dilation), groups)

    conv_input.__name__ = conv_input.__qualname__ = f"conv{n}d_input"
    conv_input.__doc__ = (f"The gradient of conv{n}d with respect to its input, of shape input_size (conv_transpose"
                          f"{n}d of grad_output by weight, with the output size given).")
    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{n}d_weight"
    conv_weight.__doc__ = f"The gradient of conv{n}d with respect to its weight, of shape weight_size."
    return conv_input, conv_weight


conv1d_input, conv1d_weight = _grads(1)
conv2d_input, conv2d_weight = _grads(2)
conv3d_input, conv3d_weight = _grads(3)
