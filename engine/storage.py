"""torch.UntypedStorage and torch.TypedStorage as a tensor shows them (`t.untyped_storage()`,
`t.storage()`): the memory the tensor's array lives in. agrad's tensors hold NumPy (or CuPy) arrays,
and the memory a view shares with its base is owned by the array at the root of the `.base` chain, so
that root is the storage: every view of one allocation reports the same storage, its size counts the
whole allocation (`len(torch.randn(5)[:4].storage()) == 5`, as in PyTorch) and its data_ptr is where
the allocation starts. A backend with no memory of its own (meta, dask) has a storage of the tensor's
size at address 0. Storages are read, not resized or written, here."""
from __future__ import annotations

from . import dtypes

__all__ = ["UntypedStorage", "TypedStorage", "storage_root"]


def storage_root(array):
    """The array that owns `array`'s memory (the end of its .base chain of the same array type)."""
    root = array
    while getattr(root, "base", None) is not None and root.base.__class__ is array.__class__:
        root = root.base
    return root


class UntypedStorage:
    """The bytes of an allocation (PyTorch's UntypedStorage: uint8 elements). `array`: the owning array,
    or None on a backend with no memory of its own."""

    dtype = dtypes.uint8

    def __init__(self, array, nbytes: int, data_ptr: int, device):
        self._array, self._nbytes, self._data_ptr = array, nbytes, data_ptr
        self.device = device

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    __len__ = size

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._data_ptr

    def tolist(self) -> list:
        return self._array.reshape(-1).view("uint8").tolist()

    def __repr__(self):
        return f"[agrad.storage.UntypedStorage(device={self.device}) of size {self.size()}]"


class TypedStorage:
    """An allocation seen as elements of one dtype (PyTorch's deprecated TypedStorage, what
    `t.storage()` returns): its length counts elements, not bytes."""

    def __init__(self, untyped: UntypedStorage, dtype):
        self._untyped = untyped
        self.dtype = dtype
        self.device = untyped.device

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def size(self) -> int:
        return self._untyped.nbytes() // self.element_size()

    __len__ = size

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def tolist(self) -> list:
        return self._untyped._array.reshape(-1).view(self.dtype.np).tolist()

    def __repr__(self):
        return f"[agrad.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]"
