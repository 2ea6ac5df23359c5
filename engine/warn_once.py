"""PyTorch's TORCH_WARN_ONCE: a warning the engine gives once per process, or every time after
`agrad.set_warn_always(True)` (torch.set_warn_always), as tests that count warnings ask."""
from __future__ import annotations

import warnings

__all__ = ["set_warn_always", "is_warn_always_enabled", "warn_once"]

_always = False
_given: set[str] = set()


def set_warn_always(b: bool) -> None:
    """Give each once-per-process warning every time (True), or once (False, the default)."""
    global _always
    _always = bool(b)


def is_warn_always_enabled() -> bool:
    return _always


def warn_once(key: str, message: str, category=UserWarning, stacklevel: int = 2, *, at_user: bool = False) -> None:
    """`message` the first time `key` is warned about in this process (every time under warn-always);
    `at_user`: shown at the first caller outside agrad (user_warnings), for a warning a kernel gives."""
    if key in _given and not _always:
        return
    _given.add(key)
    if at_user:
        from .user_warnings import warn_user
        warn_user(message, category)
        return
    warnings.warn(message, category, stacklevel=stacklevel + 1)
