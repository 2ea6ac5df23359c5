"""Exit statuses (SPEC §2.2), decided here and nowhere else.

0 success; 1 the graph ran but a check failed (`expect:`, `check`, `--anomaly`, a
`test` graph); 2 bad usage or an invalid graph file; 3 a runtime failure (a kernel
raised, a device or backend is unavailable, out of memory).
"""
from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    OK = 0
    CHECK_FAILED = 1
    INVALID = 2
    RUNTIME = 3


def for_run(result) -> ExitStatus:
    """`run`: an `expect:` mismatch or an anomaly found by `--anomaly` fails the run."""
    if not result.expect.passed or result.anomalies:
        return ExitStatus.CHECK_FAILED
    return ExitStatus.OK


def for_check(result) -> ExitStatus:
    return ExitStatus.OK if result.passed else ExitStatus.CHECK_FAILED


def for_test_outcome(outcome) -> ExitStatus:
    """One `test` file: a file that does not load is invalid, a failed kernel is a runtime failure."""
    if outcome.diagnostics:
        return ExitStatus.INVALID
    if outcome.error is not None:
        return ExitStatus.RUNTIME
    return ExitStatus.OK if outcome.passed else ExitStatus.CHECK_FAILED


def for_validation(diagnostics) -> ExitStatus:
    """One `validate` file: warnings alone leave it valid."""
    errors = [d for d in diagnostics if d.severity == "error"]
    return ExitStatus.INVALID if errors else ExitStatus.OK


# When several files disagree, the status names the most serious problem: a file
# that could not even be read outranks a crash, which outranks a failed expectation.
_SEVERITY = [ExitStatus.OK, ExitStatus.CHECK_FAILED, ExitStatus.RUNTIME, ExitStatus.INVALID]


def worst(statuses) -> ExitStatus:
    return max(statuses, key=_SEVERITY.index, default=ExitStatus.OK)


def for_exception(exc: BaseException) -> ExitStatus | None:
    """The status for an exception the library raised, or None when it is a bug in agrad.

    The library's error classes are imported here, not at the top, so that
    `agrad --help` does not pay for importing the engine.
    """
    from agrad.graphs.results import GraphFileError, GraphRuntimeError

    if isinstance(exc, GraphFileError):
        return ExitStatus.INVALID
    if isinstance(exc, (GraphRuntimeError, MemoryError)):
        return ExitStatus.RUNTIME
    try:
        from agrad import DeviceUnavailableError
    except ImportError:      # an engine without devices cannot have raised one
        return None
    if isinstance(exc, DeviceUnavailableError):
        return ExitStatus.RUNTIME
    return None
