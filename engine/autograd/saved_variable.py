"""SavedVariable: a tensor a backward formula needs, saved at forward time.

An output saved by its own grad_fn is stored without that grad_fn (a Tensor
holding the Node that holds the Tensor would be a reference cycle); unpacking
gives it back its history, exactly as PyTorch's SavedVariable does.
"""
from __future__ import annotations

import weakref

from ..dispatch_keys import AUTOGRAD
from ..grad_mode import tls
from .._tensor import AutogradMeta, Tensor

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


class SavedVariable:
    __slots__ = ("_tensor", "_data", "_device", "_keys", "_output_nr", "_output_ref", "_version", "_released")

    def __init__(self, tensor: Tensor, is_output: bool):
        self._version = tensor._version
        self._released = False
        if is_output:
            self._tensor = None
            self._data, self._device, self._keys = tensor._data, tensor._device, tensor._keys & ~AUTOGRAD
            self._output_nr = tensor._autograd_meta.output_nr if tensor._autograd_meta else 0
            self._output_ref = weakref.ref(tensor)
        else:
            self._tensor = tensor
            self._output_ref = None

    def unpack(self, saved_for=None) -> Tensor:
        if self._released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self._output_ref is None:
            t = self._tensor
            if t._version != self._version:
                _raise_modified(t, self._version)
            return t
        live = self._output_ref()
        if live is not None and live._version != self._version:
            _raise_modified(live, self._version)
        t = Tensor._make(self._data, self._device, self._keys)
        if saved_for is not None and tls.grad_enabled:
            # create_graph: the unpacked output is differentiable again, through its own node
            t._autograd_meta = AutogradMeta(grad_fn=saved_for, output_nr=self._output_nr)
            t._keys |= AUTOGRAD
        return t

    def reset_data(self) -> None:
        self._released = True
        self._tensor = self._data = None


def _raise_modified(t: Tensor, expected: int):
    fn = t.grad_fn
    which = f", which is output {t.output_nr} of {fn.name()}," if fn is not None else ""
    raise RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{t.dtype.name} {list(t.shape)}]{which} is at version {t._version}; expected version {expected} "
        f"instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        f"with agrad.autograd.set_detect_anomaly(True).")
