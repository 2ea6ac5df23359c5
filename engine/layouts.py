"""torch.layout: how a tensor's elements are laid out in memory. Every agrad tensor is dense, an
array with strides, so `strided` is the one layout (PyTorch's others are sparse and mkldnn's); it is
what `Tensor.layout` gives, and what code written for PyTorch compares against."""
from __future__ import annotations

__all__ = ["layout", "strided"]


class Named:
    """One of PyTorch's named constants of a kind (a layout, a memory format): printed as
    `agrad.<name>`, and one object per name, pickling included."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"agrad.{self.name}"

    def __reduce__(self):
        return self.name        # pickled as its module's global of that name: the same object back


class layout(Named):
    __slots__ = ()


strided = layout("strided")
