"""A warning shown at the user's line: PyTorch's functional forms warn with stacklevel=2, the caller of
F.grid_sample or F.embedding_bag; in agrad the dispatcher's frames and generated code come between, so
the level is counted out to the first frame outside agrad."""
from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn_user"]

_ENGINE = os.path.dirname(os.path.abspath(__file__))


def warn_user(message, category=UserWarning) -> None:
    """`warnings.warn(message, category)` pointing at the first caller outside agrad."""
    frame, level = sys._getframe(1), 2
    while frame is not None and (frame.f_code.co_filename.startswith(_ENGINE) or
                                 frame.f_code.co_filename.startswith("<agrad")):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
