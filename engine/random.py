"""agrad.random, as torch.random: the global generator's seed and state, and fork_rng.

agrad has one generator for every device: random numbers are drawn on the host (NumPy's PCG64)
and moved to the tensor's device, so that a seed gives the same numbers everywhere. Its state is
therefore all there is to save and restore; PyTorch's per-device generators have no counterpart,
and fork_rng's `devices` and `device_type` only keep PyTorch's signature.
"""
from __future__ import annotations

import contextlib

from .creation import get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .generator import default_generator

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng", "default_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Within the block the global generator may be reseeded or drawn from freely: on exit it is
    put back to the state it had on entry (torch.random.fork_rng). With enabled=False, a no-op."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
