"""torch/testing/_internal/two_tensor.py for agrad: TwoTensor, a wrapper subclass that holds two tensors of one
shape, stride, offset, dtype and device and runs every op on both (a result's tensors are the two results);
TwoTensorMode wraps what a factory op makes into a TwoTensor of it and its copy."""
from __future__ import annotations

from ..._tensor import Tensor
from ...utils import _pytree as pytree
from ...utils._python_dispatch import TorchDispatchMode, return_and_correct_aliasing

__all__ = ["TwoTensor", "TwoTensorMode"]


class TwoTensor(Tensor):
    @staticmethod
    def __new__(cls, a, b, outer_size=None, outer_stride=None, *, requires_grad=None):
        if outer_size is None:
            outer_size = a.size()
        if outer_stride is None:
            outer_stride = a.stride()
        if not (a.device == b.device and a.layout == b.layout and a.requires_grad == b.requires_grad
                and a.dtype == b.dtype):
            raise AssertionError(
                f"Tensors a and b must have matching device, layout, requires_grad, and dtype. Got a: "
                f"device={a.device}, layout={a.layout}, requires_grad={a.requires_grad}, dtype={a.dtype}; b: "
                f"device={b.device}, layout={b.layout}, requires_grad={b.requires_grad}, dtype={b.dtype}")
        # (the shape could as well be cat(a, b)'s: the outer tensor claims a's)
        out = Tensor._make_wrapper_subclass(
            cls, outer_size, strides=outer_stride, storage_offset=a.storage_offset(), device=a.device,
            layout=a.layout, requires_grad=requires_grad or a.requires_grad, dtype=a.dtype)
        if a.shape != b.shape:
            raise AssertionError(f"Tensors a and b must have the same shape. Got a.shape={a.shape}, "
                                 f"b.shape={b.shape}")
        if a.stride() != b.stride():
            raise AssertionError(f"Tensors a and b must have the same stride. Got a.stride()={a.stride()}, "
                                 f"b.stride()={b.stride()}")
        if a.storage_offset() != b.storage_offset():
            raise AssertionError(f"Tensors a and b must have the same storage_offset. Got "
                                 f"a.storage_offset()={a.storage_offset()}, b.storage_offset()={b.storage_offset()}")
        return out

    def __init__(self, a, b, outer_size=None, outer_stride=None, *, requires_grad=None):
        self.a = a
        self.b = b

    def __repr__(self):
        return f"TwoTensor({self.a!r}, {self.b!r})"

    def __tensor_flatten__(self):
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(inner_tensors, meta, outer_size, outer_stride):
        if meta is not None:
            raise AssertionError(f"Expected meta to be None, got {meta}")
        a, b = inner_tensors["a"], inner_tensors["b"]
        if type(a) is Tensor:
            if outer_size is None:
                raise AssertionError("outer_size must not be None when inner tensor is a torch.Tensor")
            if outer_stride is None:
                raise AssertionError("outer_stride must not be None when inner tensor is a torch.Tensor")
        return TwoTensor(a, b, outer_size, outer_stride)

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        if kwargs is None:
            kwargs = {}
        args_a = pytree.tree_map_only(TwoTensor, lambda x: x.a, args)
        args_b = pytree.tree_map_only(TwoTensor, lambda x: x.b, args)
        kwargs_a = pytree.tree_map_only(TwoTensor, lambda x: x.a, kwargs)
        kwargs_b = pytree.tree_map_only(TwoTensor, lambda x: x.b, kwargs)
        out_a = func(*args_a, **kwargs_a)
        out_b = func(*args_b, **kwargs_b)
        out_a_flat, spec = pytree.tree_flatten(out_a)
        out_b_flat = pytree.tree_leaves(out_b)
        # an op that returns something other than tensors: the two give the same value
        out_flat = [cls(o_a, o_b) if isinstance(o_a, Tensor) else o_a for o_a, o_b in zip(out_a_flat, out_b_flat)]
        out = pytree.tree_unflatten(out_flat, spec)
        return return_and_correct_aliasing(func, args, kwargs, out)

    def get_elem_a(self):
        return self.a


def _is_tensor_constructor(func) -> bool:
    """A factory op: no Tensor argument, a Tensor result (torch._subclasses.fake_tensor._is_tensor_constructor)."""
    schema = func._schema
    return not any(a.is_tensor for a in schema.arguments) and len(schema.returns) == 1 and \
        schema.returns[0].split()[0] == "Tensor"


class TwoTensorMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if _is_tensor_constructor(func):
            out = TwoTensor(out, out.clone())
        return out
