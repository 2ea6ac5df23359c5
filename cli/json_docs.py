"""The JSON documents of SPEC §2.1, built as plain dicts from result objects.

Every document carries `"schema_version": 1`; later versions add keys, never
rename them. JSON has no NaN or Infinity, so non-finite floats become null.
"""
from __future__ import annotations

import itertools
import json
import math

from agrad.graphs.results import Rows

SCHEMA_VERSION = 1


def _finite(value):
    """`value` with every NaN and infinity replaced by None, so `json.dumps` stays standard JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, tuple):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def document(**fields) -> dict:
    return _finite({"schema_version": SCHEMA_VERSION, **fields})


LONG_LIST = 100        # a top-level list longer than this is written one compact item a line
_CHUNK = 1000          # items per write


def _long(value) -> bool:
    """Whether `value` is written one item a line; a Rows of unknown length may be (it is read
    when its turn comes, never to decide this)."""
    if isinstance(value, Rows):
        return value.count is None or value.count > LONG_LIST
    return isinstance(value, list) and len(value) > LONG_LIST


def _compact_encoder():
    """`JSONEncoder(allow_nan=False, separators=(", ", ": ")).encode` with json's C encoder made
    once: `encode` makes one a call, most of the time a long list of small items takes."""
    make = getattr(json.encoder, "c_make_encoder", None)
    encoder = json.JSONEncoder(allow_nan=False, separators=(", ", ": "))
    if make is None:                # a Python built without json's C accelerator
        return encoder.encode
    iterencode = make(None, encoder.default, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False,
                      False)

    def compact(value) -> str:
        if value.__class__ is str:  # (the C encoder writes only containers whole)
            return encoder.encode(value)
        return "".join(iterencode(value, 0))
    return compact


def json_chunks(document: dict):
    """`json.dumps(document, indent=2)` in pieces, except that a long top-level list has one
    item a line, each written by json's C encoder: the indenting encoder is pure Python, and
    the inspect document of a 100,000-node graph holds millions of values. A `Rows` value is
    written as the list it stands for, its items made and written a chunk at a time."""
    if not any(_long(v) for v in document.values()):
        yield json.dumps({k: list(v) if isinstance(v, Rows) else v for k, v in document.items()},
                         indent=2, allow_nan=False)
        return
    compact = _compact_encoder()
    yield "{"
    for i, (key, value) in enumerate(document.items()):
        yield ("," if i else "") + "\n  " + json.dumps(key) + ": "
        items = iter(value) if isinstance(value, (list, Rows)) else None
        # the first items tell how a list is written: one item a line (long), or as json.dumps would
        head = list(itertools.islice(items, LONG_LIST + 1)) if items is not None else []
        if len(head) <= LONG_LIST:
            value = head if items is not None else value
            yield json.dumps(value, indent=2, allow_nan=False).replace("\n", "\n  ")
            continue
        items = itertools.chain(head, items)
        if not isinstance(head[0], (dict, list)):      # numbers (an execution order) on one line
            chunk, sep = list(itertools.islice(items, _CHUNK)), "["
            while chunk:
                yield sep + compact(chunk)[1:-1]          # a chunk's items as its list writes them
                chunk, sep = list(itertools.islice(items, _CHUNK)), ", "
            yield "]"
            continue
        yield "["
        chunk = [compact(item) for item in itertools.islice(items, _CHUNK)]
        while chunk:
            following = [compact(item) for item in itertools.islice(items, _CHUNK)]
            yield "".join(["\n    " + text + "," for text in chunk[:-1]]) + "\n    " + chunk[-1] + \
                ("," if following else "")
            chunk = following
        yield "\n  ]"
    yield "\n}"


def location_fields(location) -> dict:
    if location is None:
        return {"file": None, "line": None, "col": None}
    return {"file": location.file, "line": location.line, "col": location.col}


def tensor_entry(tensor) -> dict | None:
    if tensor is None:
        return None
    value = tensor.value
    if tensor.dtype.startswith("complex") and value is not None:
        # JSON has no complex numbers: the real and imaginary parts, each the nested list of a float tensor
        value = {"real": _part(value, "real"), "imag": _part(value, "imag")}
    entry = {"shape": list(tensor.shape), "dtype": tensor.dtype, "device": tensor.device, "value": value}
    if tensor.summary is not None:
        entry["summary"] = dict(tensor.summary)
    return entry


def _part(value, name: str):
    """The `real` or `imag` part of a nested list of complex numbers, as a nested list of floats."""
    if isinstance(value, list):
        return [_part(v, name) for v in value]
    return getattr(complex(value), name)


def expect_failure_entry(failure) -> dict:
    entry = {"what": failure.what, "message": failure.message, **location_fields(failure.location)}
    if failure.expected is not None or failure.actual is not None:      # a value mismatch: both whole
        entry.update(expected=failure.expected, actual=failure.actual)
    return entry


def diagnostic_entry(diagnostic) -> dict:
    return {"code": diagnostic.code, "severity": diagnostic.severity, "message": diagnostic.message,
            "hint": diagnostic.hint, **location_fields(diagnostic.location)}


def failure_document(exc) -> dict:
    """What `--format json` prints when a graph file is invalid (exit 2) or a run failed (exit 3):
    the diagnostics, so a pipeline into `jq` still reads one document."""
    from agrad.graphs.results import GraphFileError

    invalid = isinstance(exc, GraphFileError)
    found = exc.diagnostics if invalid else [exc.diagnostic]
    file = next((d.location.file for d in found if d.location is not None), None)
    return document(file=file, status="invalid" if invalid else "error",
                    diagnostics=[diagnostic_entry(d) for d in found])


def run_document(result) -> dict:
    fields = {
        "graph": result.graph,
        "file": result.file,
        "device": result.device,
        "outputs": {name: tensor_entry(t) for name, t in result.outputs.items()},
        "grads": {name: tensor_entry(t) for name, t in result.grads.items()},
        "timings_ms": dict(result.timings_ms),
        # `passed` only when something was compared and nothing was left unchecked (`train:` needs `agrad
        # train` or `agrad test`); `checked` as `agrad train --format json` has it.
        "expect": {"checked": result.expect.checked, "passed": result.expect.verdict,
                   "unchecked": list(result.expect.unchecked),
                   "failures": [expect_failure_entry(f) for f in result.expect.failures]},
    }
    # Present only when asked for (--repeat, --profile, --anomaly), so a plain run has SPEC's exact keys.
    if result.repeat is not None:
        fields["repeat_ms"] = {phase: dict(stats) for phase, stats in result.repeat.items()}
    if result.profile is not None:
        fields["profile"] = [{"node": r.node, "op": r.op, "phase": r.phase, "calls": r.calls,
                              "self_ms": r.self_ms, "line": r.line} for r in result.profile]
    if result.anomalies:
        fields["anomalies"] = [{"phase": a.phase, "node": a.node, "message": a.message,
                                **location_fields(a.location)} for a in result.anomalies]
    return document(**fields)


def _inspect_node_entry(n) -> dict:
    return {"name": n.name, "op": n.op, "args": list(n.args), "shape": list(n.shape), "dtype": n.dtype,
            "device": n.device, "kernel": n.kernel, "line": n.line, "view_of": n.view_of}


def _inspect_backward_entry(b) -> dict:
    return {"id": b.id, "name": b.name, "node": b.node,
            "next_edges": [list(edge) if edge is not None else None for edge in b.next_edges],
            "sequence_nr": b.sequence_nr, "topological_nr": b.topological_nr,
            "dependencies": b.dependencies, "saved": [dict(s) for s in b.saved]}


def inspect_document(result, *, streamed: bool = False) -> dict:
    """`streamed`: the nodes and backward entries as `Rows`, each made as `json_chunks` writes it
    (what `agrad inspect --format json` prints); else plain lists."""
    # Names, shapes and counts only: no float to make finite, so no copy of a large document.
    def rows(items, entry):
        count = items.count if isinstance(items, Rows) else len(items)
        return Rows(count, map(entry, items)) if streamed else [entry(item) for item in items]

    return dict(
        schema_version=SCHEMA_VERSION,
        graph=result.graph,
        file=result.file,
        nodes=rows(result.nodes, _inspect_node_entry),
        backward=rows(result.backward, _inspect_backward_entry),
        order=result.order if streamed else list(result.order),
    )


def check_document(result) -> dict:
    return document(
        passed=result.passed,
        order=result.order,
        leaves={name: {"max_abs_err": leaf.max_abs_err, "max_rel_err": leaf.max_rel_err, "passed": leaf.passed,
                       "worst_index": leaf.worst_index, "analytic": leaf.analytic, "numeric": leaf.numeric,
                       "output_index": leaf.output_index, "nondeterminism": leaf.nondeterminism,
                       **location_fields(leaf.location)}
                for name, leaf in result.leaves.items()},
        skipped_outputs=result.skipped_outputs,     # outputs not compared: they do not require grad
    )


def test_document(outcomes, statuses: list[str] | None = None, *, strict: bool = False, not_run: int = 0) -> dict:
    """`statuses[i]`: the status name of `outcomes[i]` (passed, failed, no expectations, invalid, error)."""
    from agrad.cli.status import test_counts, test_outcome_name

    statuses = statuses if statuses is not None else [test_outcome_name(o) for o in outcomes]
    counts = test_counts(statuses, strict)
    return document(
        passed=counts["passed"],
        failed=counts["failed"],
        no_expectations=counts["no expectations"],
        not_trained=counts["not trained"],
        not_run=not_run,                 # -x stopped before these
        files=[{"file": o.file, "graph": o.graph, "passed": o.passed, "status": name,
                "failures": [expect_failure_entry(f) for f in o.failures],
                "diagnostics": [diagnostic_entry(d) for d in o.diagnostics],
                "error": o.error, "duration_ms": o.duration_ms} for o, name in zip(outcomes, statuses)],
    )


def validate_document(checked: list[tuple[str, list, bool]]) -> dict:
    """`checked`: (file, diagnostics, valid) per file, in the order validated."""
    valid_count = sum(1 for _, _, valid in checked if valid)
    return document(
        passed=valid_count,
        failed=len(checked) - valid_count,
        files=[{"file": file, "valid": valid, "diagnostics": [diagnostic_entry(d) for d in diagnostics]}
               for file, diagnostics, valid in checked],
    )


def ops_document(entries, derivatives=None) -> dict:
    """`agrad ops`; with `derivatives` (one per entry: `agrad ops OP`) each op also has them."""
    ops = [{"name": op.name, "schema": str(op.schema), "keys": list(op.keys()),
            "has_backward": bool(op.has_backward), "doc": op.doc or ""} for op in entries]
    for op, formulas in zip(ops, derivatives or ()):
        op["derivatives"] = _derivatives(formulas)
    return document(ops=ops)


def _derivatives(formulas) -> dict:
    return {"kind": formulas.kind, "inputs": dict(formulas.inputs), "summary": formulas.summary()}


def formulas_document(derivatives) -> dict:
    """`agrad ops --formulas`: each op's derivative formulas (README, "agrad ops --formulas")."""
    return document(formulas=[{"op": f.op, **_derivatives(f)} for f in derivatives])
