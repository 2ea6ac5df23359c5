"""The Autocast dispatch key's fallback: autocast_mode.h's WrapFunction_, one kernel for every policy.

It runs for every call made while autocast is enabled for some device type (the key is included only then:
amp/state.py). The call's device type is its backend's (CUDA's over CPU's, as PyTorch picks AutocastCUDA for a
call that mixes CUDA tensors with CPU scalars); where autocast is off for it, or the op is on none of that device
type's lists (amp/cast_policies.py), the call goes on below unchanged. An op on no list of any device type never
reaches it: the key falls through for it in the dispatcher's lookup (register_fallback's `serves`), PyTorch's
fallthrough, so inside a region too such an op costs nothing more. Otherwise, with the
Autocast key excluded (so neither the casts nor the ops that the op is made of are autocast again), the eligible
inputs are cast as the op's policy says and the op is called again from the top: autograd, below, records the casts
(ToCopyBackward0), so gradients flow back through them in the inputs' own dtypes.

Eligible (autocast_mode.h's is_eligible): a floating tensor of the call's device type that is not float64. The weight
cast cache (cached_cast) keeps the lower-precision cast of a float32 leaf that requires grad and is not a view, once per
outermost region, while cache_enabled.
"""
from __future__ import annotations

from .. import dtypes
from .._tensor import Tensor
from ..dispatch_keys import AUTOCAST, DispatchKey
from ..dispatcher import call, ops, register_fallback
from ..grad_mode import ExcludeDispatchKeyGuard
from . import cast_policies as P
from .state import cache, cached, state

_CPU, _CUDA = int(DispatchKey.CPU), int(DispatchKey.CUDA)
_BACKEND_KEY = {"cpu": _CPU, "cuda": _CUDA}


def _eligible(arg, device_key: int) -> bool:
    return (arg.__class__ is Tensor or isinstance(arg, Tensor)) and bool(arg._keys & device_key) \
        and arg._data.dtype.kind == "f" and arg._data.dtype.itemsize != 8


def _cached_cast(to, arg, device_type: str, device_key: int):
    """autocast_mode.cpp's cached_cast: `arg` cast to `to` if eligible (each tensor of a list), else as it is."""
    if arg.__class__ is list or arg.__class__ is tuple:
        return [_cached_cast(to, a, device_type, device_key) for a in arg]
    if not _eligible(arg, device_key) or arg.dtype is to:
        return arg
    # Apex's heuristic, PyTorch's: cache the lower-precision casts of float32 model weights (leaves)
    if (to is state.dtype[device_type] and arg.dtype is dtypes.float32 and arg.requires_grad and arg.is_leaf
            and not arg._is_view() and state.cache_enabled):
        casted = cached(arg)
        if casted is None:
            casted = ops.to(arg, dtype=to)
            cache(arg, casted)
        return casted
    return ops.to(arg, dtype=to)


def _promote_type(current, args, device_key: int):
    """autocast_mode.h's promote_type: float32 if any eligible input is float32, else the autocast dtype."""
    for arg in args:
        for t in (arg if arg.__class__ is list or arg.__class__ is tuple else (arg,)):
            if not _eligible(t, device_key):
                continue
            if t.dtype is dtypes.float32 or current is dtypes.float32:
                current = dtypes.float32
            elif t.dtype is not current:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _cast_args(op, policy: str, args: list, device_type: str, device_key: int) -> list:
    if policy == P.LOWER_PRECISION_FP:
        to = state.dtype[device_type]
    elif policy == P.FP32:
        to = dtypes.float32
    elif policy == P.PROMOTE:
        to = _promote_type(state.dtype[device_type], args, device_key)
    elif policy == P.BANNED:
        raise RuntimeError(P.ERR_BINARY_CROSS_ENTROPY)
    else:
        # fp32_set_opt_dtype, and fp32_append_dtype (norm): the dtype argument, when not given, set to float32
        # (for append_dtype, the first input's own dtype where that input is not eligible); ineligible first inputs
        # leave set_opt_dtype's argument alone, as it may change the op's own promotion
        position = next(i for i, a in enumerate(op.schema.arguments) if a.name == "dtype")
        if args[position] is None:
            first = args[0]
            if _eligible(first, device_key):
                args[position] = dtypes.float32
            elif policy == P.FP32_APPEND_DTYPE:
                args[position] = first.dtype
        return args
    return [_cached_cast(to, a, device_type, device_key) for a in args]


def _autocast_fallback(op, keyset, args):
    below = keyset & ~AUTOCAST
    device_type = "cuda" if keyset & _CUDA else "cpu" if keyset & _CPU else None
    policy = None
    if device_type in state.enabled:
        table = P.POLICIES[device_type]
        policy = table.get(op.name)
        if policy is None and op.name in P.BY_ARGUMENTS:
            policy = table.get(P.BY_ARGUMENTS[op.name](args))
    if policy is None:
        return op.lookup(below)(op, below, args)
    with ExcludeDispatchKeyGuard(AUTOCAST):
        return call(op, _cast_args(op, policy, list(args), device_type, _BACKEND_KEY[device_type]))


def _on_a_list(op) -> bool:
    return op.name in P.LISTED


register_fallback(DispatchKey.Autocast, _autocast_fallback, serves=_on_a_list)
