"""Replay: a pass through the engine recorded as its backend kernel calls (`Recorder`) and
run again as straight-line code (`Schedule`), built on the op library like any client of it."""
from .recorder import Recorder, Schedule

__all__ = ["Recorder", "Schedule"]
