"""`test --junit-xml FILE`: the outcomes as JUnit XML, the report GitLab, Jenkins and Azure read.

One `<testcase>` per graph file: a failed `expect:` is a `<failure>`, a file that
does not load or a run that fails an `<error>`, a graph without `expect:` is
`<skipped>` (a `<failure>` under `--strict`). XML 1.0 cannot hold most control
characters at all, so text goes through the same escaping as the terminal.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import PurePath

from agrad.cli.terminal import printable

# The status names of `agrad test` (cli/status.py decides them), and what JUnit calls them.
_ELEMENT = {"failed": "failure", "invalid": "error", "error": "error", "no expectations": "skipped",
            "not trained": "skipped"}
_SKIP_MESSAGE = {"no expectations": "no expectations", "not trained": "expect.train not checked (--no-train)"}


def _reasons(outcome) -> list[str]:
    lines = [str(d) for d in outcome.diagnostics]
    if outcome.error is not None:
        lines.append(outcome.error)
    for f in outcome.failures:
        lines.append(f"{f.location}: {f.what}: {f.message}" if f.location else f"{f.what}: {f.message}")
        if f.expected is not None or f.actual is not None:     # the whole values, in the body only
            lines += [f"  expected: {f.expected}", f"  actual:   {f.actual}"]
    return lines


def junit_xml(outcomes, statuses: list[str], *, strict: bool) -> str:
    """`statuses[i]` is the status name of `outcomes[i]`."""
    counts = {name: statuses.count(name) for name in ("failed", "invalid", "error", "no expectations", "not trained")}
    unchecked = counts["no expectations"] + counts["not trained"]
    failures = counts["failed"] + (unchecked if strict else 0)
    skipped = 0 if strict else unchecked
    seconds = sum(o.duration_ms for o in outcomes) / 1e3
    totals = {"tests": str(len(outcomes)), "failures": str(failures), "errors": str(counts["invalid"] + counts["error"]),
              "skipped": str(skipped), "time": f"{seconds:.3f}"}
    root = ET.Element("testsuites", {"name": "agrad test", **totals})
    suite = ET.SubElement(root, "testsuite", {"name": "agrad test", **totals})
    for outcome, name in zip(outcomes, statuses):
        path = PurePath(outcome.file)
        case = ET.SubElement(suite, "testcase", {
            "classname": printable(str(path.with_suffix("")).replace("/", ".").replace("\\", ".")),
            "name": printable(outcome.graph or path.stem), "file": printable(outcome.file),
            "time": f"{outcome.duration_ms / 1e3:.3f}"})
        element = _ELEMENT.get(name)
        if element == "skipped" and strict:
            element = "failure"
        if element is None:
            continue
        reasons = _reasons(outcome) or [_SKIP_MESSAGE.get(name, "the graph has no expect: section")]
        problem = ET.SubElement(case, element, {"message": printable(_SKIP_MESSAGE.get(name, reasons[0]))})
        if element != "skipped":
            problem.set("type", name)
            problem.text = printable("\n".join(reasons))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
