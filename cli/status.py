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


def test_outcome_name(outcome) -> str:
    """What became of one `test` file: passed, failed, no expectations, not trained, invalid, error."""
    if outcome.diagnostics:
        return "invalid"
    if outcome.error is not None:
        return "error"
    if outcome.failures:
        return "failed"
    if outcome.unchecked:              # `--no-train`: `expect.train` was not checked, so not a pass
        return "not trained"
    if not outcome.checked:
        return "no expectations"
    return "passed" if outcome.passed else "failed"


# Checked nothing (or not everything): neither a pass nor, unless --strict, a failure.
UNCHECKED = ("no expectations", "not trained")


def test_counts(names: list[str], strict: bool = False) -> dict[str, int]:
    """passed, failed, and each unchecked status of `test`'s status names; under `--strict` a graph
    that was not wholly checked counts as failed."""
    counts = {"passed": names.count("passed")}
    unchecked = {name: 0 if strict else names.count(name) for name in UNCHECKED}
    counts["failed"] = len(names) - counts["passed"] - sum(unchecked.values())
    return {**counts, **unchecked}


def for_test_outcome(outcome, strict: bool = False) -> ExitStatus:
    """One `test` file: a file that does not load is invalid, a failed kernel is a runtime failure;
    a graph without `expect:` (or not trained) checked nothing, which fails the run only under `--strict`."""
    name = test_outcome_name(outcome)
    if name in UNCHECKED:
        return ExitStatus.CHECK_FAILED if strict else ExitStatus.OK
    return {"invalid": ExitStatus.INVALID, "error": ExitStatus.RUNTIME, "failed": ExitStatus.CHECK_FAILED,
            "passed": ExitStatus.OK}[name]


def for_validation(diagnostics) -> ExitStatus:
    """One `validate` file: warnings alone leave it valid."""
    errors = [d for d in diagnostics if d.severity == "error"]
    return ExitStatus.INVALID if errors else ExitStatus.OK


# stdout's reader went away (`agrad ... | head`): what a Unix tool killed by SIGPIPE
# reports to its shell (128 + 13), so `set -o pipefail` does not read it as a failed check.
STDOUT_CLOSED = 141


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
