"""Inference tensors (PyTorch's, torch.inference_mode): the InferenceMode dispatch key's fallback.

A tensor made in inference mode is an inference tensor: it carries the InferenceMode key, as
do the views of it. The key is in every call's key set while inference mode is on (grad_mode's
inference_mode adds it to the included keys) and in any call that takes an inference tensor,
so this fallback runs exactly then, and never otherwise:
- in inference mode, it makes the op's results inference tensors, except views of normal
  tensors (which stay normal, as in PyTorch) and inputs returned as they are;
- a view of an inference tensor, in either mode, is an inference tensor with no view or autograd
  metadata (a leaf that requires no grad: inference tensors keep neither);
- outside it, the other results are normal tensors, and a
  graph recorded by the op must not have saved an inference tensor for backward (PyTorch's
  SavedVariable check; the error names the workaround, a clone).
In-place updates and requires_grad=True on an inference tensor outside inference mode are
refused where they happen (autograd/inplace.py, Tensor.requires_grad), with PyTorch's texts.
"""
from __future__ import annotations

from .._tensor import DifferentiableViewMeta, Tensor
from ..dispatch_keys import AUTOGRAD, INFERENCE, DispatchKey
from ..dispatcher import register_fallback
from ..grad_mode import tls
from .saved_variable import SavedVariable

__all__ = ["is_inference", "ERR_INPLACE", "ERR_SAVED"]

ERR_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get "
               "a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
               "details.")
ERR_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
             "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and "
             "use it in autograd, or use `agrad.no_grad()` instead of `agrad.inference_mode()`.")


def is_inference(input) -> bool:  # noqa: A002 — PyTorch's parameter name
    """torch.is_inference: whether `input` is an inference tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_inference()


def _outputs(out):
    if out.__class__ is tuple or out.__class__ is list:
        return [o for o in out if isinstance(o, Tensor)]
    return [out] if isinstance(out, Tensor) else []


def _mark(o: Tensor, inputs) -> None:
    if any(o is a for a in inputs):
        return                  # an input handed back (an alias op, `to` without a change): it stays as it was
    m = o._autograd_meta
    if m.__class__ is DifferentiableViewMeta:
        if m.base._keys & INFERENCE:
            # a view of an inference tensor is one too, and no view at all: inference tensors keep neither
            # views nor history, so it is a leaf that requires no grad (PyTorch's, in either mode)
            o._autograd_meta = None
            o._keys = (o._keys & ~AUTOGRAD) | INFERENCE
            return
        inference = False                               # a view is what its base is
    else:
        inference = tls.inference_mode
    o._keys = (o._keys | INFERENCE) if inference else (o._keys & ~INFERENCE)


def _check_saved(out, inputs) -> None:
    for o in _outputs(out):
        m = o._autograd_meta
        node = m.grad_fn if m is not None else None
        saved = getattr(node, "saved", None)
        if not saved:
            continue
        for value in saved.values():
            for v in (value if value.__class__ is list else (value,)):
                # an input is saved as a SavedVariable, or as the Tensor itself (save_input_value)
                t = v._tensor if v.__class__ is SavedVariable else v if v.__class__ is Tensor else None
                if t is not None and t._keys & INFERENCE:
                    raise RuntimeError(ERR_SAVED)


def _inference_fallback(op, keyset, args):
    below = keyset & ~INFERENCE
    out = op.lookup(below)(op, below, args)
    inputs = [a for a in args if isinstance(a, Tensor)] + [t for a in args if a.__class__ is list for t in a]
    if not tls.inference_mode:
        _check_saved(out, inputs)
    for o in _outputs(out):
        _mark(o, inputs)
    return out


register_fallback(DispatchKey.InferenceMode, _inference_fallback)
