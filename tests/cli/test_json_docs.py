"""JSON documents (SPEC §2.1): parsed back and compared, key by key."""
from __future__ import annotations

import json

from agrad.graphs.results import ExpectResult, TensorSummary
from cli_results import bad_name_diagnostic, failed_expect, outcome, seed_check, seed_inspect, seed_run

from agrad.cli import json_docs


def roundtrip(document: dict) -> dict:
    return json.loads(json.dumps(document, allow_nan=False))


def test_run_document_has_exactly_specs_keys():
    doc = roundtrip(json_docs.run_document(seed_run()))
    assert set(doc) == {"schema_version", "graph", "file", "device", "outputs", "grads", "timings_ms", "expect"}
    assert doc["schema_version"] == 1
    assert doc["outputs"]["d"] == {"shape": [], "dtype": "float32", "device": "cpu", "value": 3.0,
                                   "summary": {"min": 3.0, "max": 3.0, "mean": 3.0, "norm": 3.0}}
    assert doc["expect"] == {"checked": True, "passed": True, "unchecked": [], "failures": []}


def test_run_document_seed_grads_a_4_b_1_c_absent():
    grads = roundtrip(json_docs.run_document(seed_run()))["grads"]
    assert grads["a"]["value"] == 4.0 and grads["b"]["value"] == 1.0
    assert "c" not in grads


def test_unreached_grad_is_null_and_int_tensor_has_no_summary():
    ints = TensorSummary(shape=[2], dtype="int64", device="cpu", value=[1, 2], numel=2)
    doc = roundtrip(json_docs.run_document(seed_run(grads={"a": None}, outputs={"i": ints})))
    assert doc["grads"] == {"a": None}
    assert "summary" not in doc["outputs"]["i"] and doc["outputs"]["i"]["value"] == [1, 2]


def test_failed_expect_lists_failures_with_location():
    doc = roundtrip(json_docs.run_document(seed_run(expect=failed_expect())))
    assert doc["expect"]["passed"] is False
    assert doc["expect"]["failures"] == [{"what": "outputs.d", "message": "expected 4.0, got 3.0 (max abs err 1.0)",
                                          "file": "graphs/examples/seed.yaml", "line": 20, "col": 17}]


def test_non_finite_values_become_null_so_the_json_stays_standard():
    nan = TensorSummary(shape=[2], dtype="float32", device="cpu", value=[float("nan"), float("inf")],
                        summary={"min": float("nan"), "max": float("inf"), "mean": 1.0, "norm": 1.0}, numel=2)
    doc = roundtrip(json_docs.run_document(seed_run(outputs={"x": nan})))
    assert doc["outputs"]["x"]["value"] == [None, None]
    assert doc["outputs"]["x"]["summary"]["min"] is None


def test_optional_sections_appear_only_when_asked_for():
    repeat = {"forward": {"min": 1.0, "median": 2.0}}
    doc = roundtrip(json_docs.run_document(seed_run(repeat=repeat)))
    assert doc["repeat_ms"] == repeat
    assert "profile" not in doc and "anomalies" not in doc


def test_inspect_document_keys():
    doc = roundtrip(json_docs.inspect_document(seed_inspect()))
    assert set(doc) == {"schema_version", "graph", "file", "nodes", "backward", "order"}
    assert (doc["graph"], doc["file"]) == ("seed", "graphs/examples/seed.yaml")
    assert set(doc["nodes"][0]) == {"name", "op", "args", "shape", "dtype", "device", "kernel", "line", "view_of"}
    assert set(doc["backward"][0]) == {"id", "name", "node", "next_edges", "sequence_nr", "topological_nr",
                                       "dependencies", "saved"}
    assert doc["backward"][0]["next_edges"] == [[2, 0], [1, 0]]
    assert doc["order"] == [0, 1, 3, 2]


def test_check_document():
    doc = roundtrip(json_docs.check_document(seed_check(passed=False)))
    assert doc["passed"] is False
    assert set(doc["leaves"]) == {"a", "b"}
    assert doc["leaves"]["b"] == {"max_abs_err": 0.5, "max_rel_err": 0.5, "passed": False, "worst_index": [],
                                  "analytic": 1.5, "numeric": 1.0, "output_index": 0, "nondeterminism": None,
                                  "file": "graphs/examples/seed.yaml", "line": 11, "col": 3}


def test_test_document_counts_and_reasons():
    outcomes = [outcome("ok.yaml"), outcome("bad.yaml", passed=False, diagnostics=[bad_name_diagnostic("bad.yaml")])]
    doc = roundtrip(json_docs.test_document(outcomes))
    assert (doc["passed"], doc["failed"]) == (1, 1)
    assert doc["files"][1]["diagnostics"][0]["code"] == "AG020"
    assert doc["files"][1]["diagnostics"][0]["line"] == 15


def test_no_expect_is_reported_as_unchecked_never_passed():
    doc = roundtrip(json_docs.run_document(seed_run(expect=ExpectResult(passed=True, checked=False))))
    assert doc["expect"] == {"checked": False, "passed": False, "unchecked": [], "failures": []}
    trained = ExpectResult(passed=True, checked=True, unchecked=["train"])     # outputs passed; train not run
    doc = roundtrip(json_docs.run_document(seed_run(expect=trained)))
    assert (doc["expect"]["passed"], doc["expect"]["unchecked"]) == (False, ["train"])
