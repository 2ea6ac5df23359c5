"""Dispatch keys and key sets.

A key set is an int whose bits are keys; a higher bit is a higher priority, so
the key that serves a call is the highest set bit that has a kernel. Autograd
outranks every backend, as in PyTorch.
"""
from __future__ import annotations

import enum


class DispatchKey(enum.IntFlag):
    Meta = 1
    CPU = 2
    CUDA = 4
    Dask = 8
    # Included in every call while a dispatch mode is pushed, and carried by the instances of a Tensor subclass
    # with a __torch_dispatch__ of its own (utils/_python_dispatch.py): its fallback hands the call to the
    # innermost mode, then to the subclasses' handlers. Below Autograd, as PyTorch's Python key: a handler
    # sees the ops autograd has recorded, and what it returns is what autograd wraps.
    Python = 16
    Autograd = 32
    # Alias keys: registration targets that stand for several runtime keys.
    CompositeImplicitAutograd = 64
    # Inference tensors carry it, and inference mode adds it to every call: its fallback
    # (engine/autograd/inference_tensors.py) makes results inference tensors inside inference mode and
    # refuses to save inference tensors for backward outside it. (PyTorch marks inference tensors in
    # TensorImpl's constructor; a key keeps the cost off every call made without them.)
    InferenceMode = 128
    # Included in every call while a forward-AD dual level is open (autograd/forward_ad.py): its fallback
    # computes the tangents of an op's results. PyTorch does it in VariableType, on every call; a key
    # included only inside a level keeps the cost off every call made outside one.
    ForwardAD = 256
    # Included in every call while an autocast region is enabled for some device type (amp/autocast_mode.py):
    # its fallback (amp/autocast_kernel.py) casts an op's floating inputs as the op's cast policy says and
    # redispatches below itself, so that autograd records the casts. PyTorch's AutocastCPU and AutocastCUDA
    # outrank Autograd (and the forward-AD and inference layers, which sit in or below VariableType); one key
    # serves both here, the fallback reads the device type from the call's backend key.
    Autocast = 512
    # A call a __torch_function__ handler wants (overrides.py): in every call's key set while a
    # TorchFunctionMode is pushed, and added by an argument whose Tensor subclass overrides
    # __torch_function__ (the dispatcher's _unusual_tensor_argument). Its fallback hands the call to the
    # modes and the subclasses, as PyTorch's Python argument parser does before it dispatches (PyTorch
    # has no key for it: a key keeps the check off every call made without one, as ForwardAD's).
    TorchFunction = 1024
    # Alias key: a kernel written with other ops that serves the backends only (torch's CompositeExplicitAutograd,
    # the *_like factories'): an argument's Python key reaches the __torch_dispatch__ handler with the op itself,
    # not with the ops it is made of; autograd falls through it (such an op here is not differentiable).
    CompositeExplicitAutograd = 2048
    # PyTorch's conjugate and negative bits (TensorImpl's key set: is_conj, is_neg), carried by conj()'s and
    # _neg_view()'s results and their views (ops/pointwise/complex.py). Not runtime keys: no kernel and no
    # fallback serves them, as agrad's values are always resolved (NumPy has no lazily conjugated view)
    Conjugate = 4096
    Negative = 8192


RUNTIME_KEYS = (DispatchKey.TorchFunction, DispatchKey.Autocast, DispatchKey.ForwardAD,
                DispatchKey.InferenceMode, DispatchKey.Autograd,
                DispatchKey.Python, DispatchKey.Dask, DispatchKey.CUDA, DispatchKey.CPU,
                DispatchKey.Meta)  # priority order
BACKEND_KEYS = DispatchKey.Meta | DispatchKey.CPU | DispatchKey.CUDA | DispatchKey.Dask
AUTOGRAD = int(DispatchKey.Autograd)
INFERENCE = int(DispatchKey.InferenceMode)
FORWARD_AD = int(DispatchKey.ForwardAD)
PYTHON = int(DispatchKey.Python)
AUTOCAST = int(DispatchKey.Autocast)
TORCH_FUNCTION = int(DispatchKey.TorchFunction)
CONJUGATE = int(DispatchKey.Conjugate)
NEGATIVE = int(DispatchKey.Negative)

# What a CompositeImplicitAutograd kernel serves: autograd (its gradient comes from
# the ops it calls) and every backend (it runs on whatever its ops run on).
# Not Autocast, as in PyTorch: an op without an autocast kernel of its own falls through to the
# layers below, where its composite kernel runs (and the ops it calls are autocast in their turn).
# Not TorchFunction, which sits above dispatch in PyTorch.
_ALIAS_TARGETS = {DispatchKey.CompositeImplicitAutograd: tuple(
    k for k in RUNTIME_KEYS if k not in (DispatchKey.Autocast, DispatchKey.TorchFunction)),
    DispatchKey.CompositeExplicitAutograd: tuple(k for k in RUNTIME_KEYS if k & BACKEND_KEYS)}


def parse_key(name) -> DispatchKey:
    if isinstance(name, DispatchKey):
        return name
    try:
        return DispatchKey[name]
    except KeyError:
        names = ", ".join(k.name for k in DispatchKey)
        raise ValueError(f"unknown dispatch key {name!r}; expected one of {names}") from None


def keys_in(keyset: int) -> list[DispatchKey]:
    """The runtime keys of `keyset`, highest priority first."""
    return [k for k in RUNTIME_KEYS if keyset & k]


def format_keyset(keyset: int) -> str:
    return "DispatchKeySet(" + ", ".join(k.name for k in keys_in(keyset)) + ")"
