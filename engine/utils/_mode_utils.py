"""torch.utils._mode_utils: `no_dispatch()`, the block in which no dispatch mode or __torch_dispatch__ handler
sees a call (utils/_python_dispatch.py's _DisableTorchDispatch)."""
from ._python_dispatch import _DisableTorchDispatch as no_dispatch

__all__ = ["no_dispatch", "all_same_mode"]


def all_same_mode(modes) -> bool:
    return all(mode == modes[0] for mode in modes)
