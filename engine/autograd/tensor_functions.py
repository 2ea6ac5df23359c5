"""torch/autograd/_functions/tensor.py's Resize: the Function behind the deprecated out-of-place
Tensor.resize and Tensor.resize_as, which may only reshape (the element count stays); the result is
a contiguous view of the input where it is contiguous, and its gradient is the incoming one viewed
back in the input's shape (ResizeBackward)."""
from __future__ import annotations

import math

from .function import Function

__all__ = ["Resize"]


class Resize(Function):
    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in total), but the given "
                f"tensor has a size of {'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                f"resize can only change the shape of a given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        assert grad_output.numel() == ctx.numel
        return grad_output.contiguous().view(ctx.input_sizes), None
