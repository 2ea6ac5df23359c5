"""Ctrl-C and SIGTERM during a long command (`agrad train`): the first asks the command
to stop at its next safe point (a step boundary, where a checkpoint is whole); the
second stops it at once, as an uncaught signal would.

The exit status of a command stopped by a signal is 128 + the signal's number (130 for
Ctrl-C, 143 for SIGTERM), as shells report a process the signal ended.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from dataclasses import dataclass

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """A second signal: stop now, unwinding (a file being written is removed, the old one kept).
    A BaseException, as KeyboardInterrupt is, so that no `except Exception` swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def exit_status(signum: int) -> int:
    return 128 + signum


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


@dataclass
class StopRequest:
    signum: int | None = None

    def __bool__(self) -> bool:
        return self.signum is not None


@contextlib.contextmanager
def stop_requests():
    """Within the block, the first SIGINT/SIGTERM sets the yielded request (the command
    polls it) and the next raises Interrupted. Handlers belong to the main thread only."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum, _frame):
        if request.signum is not None:
            raise Interrupted(signum)
        request.signum = signum

    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield request
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
