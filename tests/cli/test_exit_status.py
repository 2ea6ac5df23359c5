"""Exit statuses (SPEC §2.2) and where text goes, with the library replaced by stand-ins.

These pin the CLI's side of the contract whatever graph is behind it: which
exception or result gives 0/1/2/3, that JSON is still printed when `expect:`
fails, and that no traceback appears without --debug.
"""
from __future__ import annotations

import json

import pytest
from agrad import DeviceUnavailableError
from agrad.graphs.results import GraphFileError, GraphRuntimeError, SourceLocation
from cli_results import anomaly, bad_name_diagnostic, failed_expect, outcome, seed_check, seed_run

from agrad.cli import library
from agrad.cli.main import cli


class StandInRun:
    def __init__(self, result):
        self._result = result

    def result(self):
        return self._result


class StandInGraph:
    """Answers `run` and `check` with fixed results, or raises what the test asks for."""

    def __init__(self, run_result=None, check_result=None, raises=None):
        self.run_result, self.check_result, self.raises = run_result, check_result, raises

    def run(self, **options):
        if self.raises is not None:
            raise self.raises
        return StandInRun(self.run_result)

    def check(self, **options):
        return self.check_result


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "seed.yaml"
    path.write_text("nodes: {}\n")      # the stand-in library never reads it; click checks it exists
    return str(path)


@pytest.fixture
def stand_in(monkeypatch):
    def install(graph=None, load_error=None):
        def load_graph(path, **options):
            if load_error is not None:
                raise load_error
            return graph
        monkeypatch.setattr(library, "load_graph", load_graph)
        monkeypatch.setattr(library, "load_plugins", lambda paths: None)
    return install


def test_success_is_0_and_json_goes_to_stdout_only(runner, stand_in, graph_file):
    stand_in(StandInGraph(seed_run()))
    result = runner.invoke(cli, ["run", graph_file, "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["grads"]["a"]["value"] == 4.0
    assert result.stderr == ""


def test_table_output_through_the_command_matches_the_golden_table(runner, stand_in, graph_file, golden):
    stand_in(StandInGraph(seed_run()))
    result = runner.invoke(cli, ["run", graph_file])
    assert result.exit_code == 0
    golden("run_seed", result.stdout)


def test_failed_expect_is_1_and_the_json_is_still_printed(runner, stand_in, graph_file):
    stand_in(StandInGraph(seed_run(expect=failed_expect())))
    result = runner.invoke(cli, ["run", graph_file, "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["expect"]["passed"] is False
    assert "graphs/examples/seed.yaml:20:17: expect failed: outputs.d: expected 4.0" in result.stderr


def test_anomaly_found_is_1(runner, stand_in, graph_file):
    stand_in(StandInGraph(seed_run(anomalies=[anomaly()])))
    result = runner.invoke(cli, ["run", graph_file, "--anomaly"])
    assert result.exit_code == 1
    assert "seed.yaml:15:3: anomaly in backward of 'MulBackward0': MulBackward0 returned nan" in result.stderr


def test_invalid_graph_file_is_2_with_diagnostics_and_no_traceback(runner, stand_in, graph_file):
    stand_in(load_error=GraphFileError([bad_name_diagnostic()]))
    result = runner.invoke(cli, ["run", graph_file])
    assert result.exit_code == 2
    first, *excerpt = result.stderr.strip().splitlines()
    assert first == "graphs/examples/seed.yaml:15:10: error[AG020]: undefined name 'e' (did you mean 'd'?)"
    assert len(excerpt) in (0, 3)          # the source line and its caret, when the file is there to read
    assert result.stdout == ""


def test_runtime_failure_is_3(runner, stand_in, graph_file):
    error = GraphRuntimeError("backward of d (MulBackward0): Trying to backward through the graph a second time",
                              SourceLocation("g.yaml", 9, 3), node="d", code="AG040")
    stand_in(StandInGraph(raises=error))
    result = runner.invoke(cli, ["run", graph_file])
    assert result.exit_code == 3
    assert result.stderr.startswith("g.yaml:9:3: error[AG040]: backward of d (MulBackward0): Trying to backward "
                                    "through the graph")
    assert "Traceback" not in result.stderr


def test_unavailable_device_is_3_and_says_how_to_install(runner, stand_in, graph_file):
    stand_in(load_error=DeviceUnavailableError("CUDA is not available: CuPy is not installed"))
    result = runner.invoke(cli, ["run", graph_file, "--device", "cuda"])
    assert result.exit_code == 3
    assert "CuPy is not installed" in result.stderr and "pip install 'agrad[cuda]'" in result.stderr


def test_bug_in_agrad_is_3_without_traceback_unless_debug(runner, stand_in, graph_file):
    stand_in(StandInGraph(raises=ZeroDivisionError("oops")))
    quiet = runner.invoke(cli, ["run", graph_file])
    assert quiet.exit_code == 3
    assert "internal error in agrad: ZeroDivisionError: oops" in quiet.stderr
    assert "Traceback" not in quiet.stderr
    loud = runner.invoke(cli, ["run", graph_file, "--debug"])
    assert loud.exit_code == 3
    assert "Traceback" in loud.stderr


@pytest.mark.parametrize("arguments", [["--device", "tpu"], ["--input", "x"], ["--dtype", "float8"],
                                       ["--repeat", "0"], ["--input", "x=a.npy", "--input", "x=b.npy"]])
def test_bad_usage_is_2(runner, stand_in, graph_file, arguments):
    stand_in(StandInGraph(seed_run()))
    result = runner.invoke(cli, ["run", graph_file, *arguments])
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_missing_graph_file_is_2(runner):
    result = runner.invoke(cli, ["run", "no/such/graph.yaml"])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_check_failure_is_1_with_json(runner, stand_in, graph_file):
    stand_in(StandInGraph(check_result=seed_check(passed=False)))
    result = runner.invoke(cli, ["check", graph_file, "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["leaves"]["b"]["passed"] is False


def test_check_pass_is_0(runner, stand_in, graph_file):
    stand_in(StandInGraph(check_result=seed_check(passed=True)))
    result = runner.invoke(cli, ["check", graph_file])
    assert result.exit_code == 0
    assert "check: passed" in result.stdout


@pytest.fixture
def test_files(tmp_path):
    folder = tmp_path / "graphs"
    folder.mkdir()
    for name in ("a.yaml", "b.yaml", "notes.txt"):
        (folder / name).write_text("nodes: {}\n")
    return folder


def test_test_command_closing_line_and_status(runner, monkeypatch, test_files):
    failing = outcome("b", passed=False, failures=failed_expect().failures)
    monkeypatch.setattr(library, "test_file",
                        lambda path, **_: failing if path.endswith("b.yaml") else outcome(path))
    result = runner.invoke(cli, ["test", str(test_files)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    assert len(lines) == 3                        # a.yaml, b.yaml, the closing line; notes.txt is not a graph
    assert "expect failed: outputs.d" in result.stderr


def test_test_command_status_names_the_worst_problem(runner, monkeypatch, test_files):
    invalid = outcome("b", passed=False, diagnostics=[bad_name_diagnostic()])
    crashed = outcome("a", passed=False, error="kernel raised")
    monkeypatch.setattr(library, "test_file", lambda path, **_: invalid if path.endswith("b.yaml") else crashed)
    result = runner.invoke(cli, ["test", str(test_files)])
    assert result.exit_code == 2
    assert result.stdout.splitlines()[-1] == "0 passed, 2 failed"


def test_test_command_github_format(runner, monkeypatch, test_files):
    failing = outcome("b.yaml", passed=False, failures=failed_expect().failures)
    monkeypatch.setattr(library, "test_file", lambda path, **_: failing if path.endswith("b.yaml") else outcome(path))
    result = runner.invoke(cli, ["test", str(test_files), "--format", "github"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "::error file=graphs/examples/seed.yaml,line=20,col=17,title=expect::outputs.d: "
        "expected 4.0, got 3.0 (max abs err 1.0)",
        "1 passed, 1 failed",
    ]


def test_validate_reports_each_file_and_exits_2_on_an_invalid_one(runner, monkeypatch, test_files):
    monkeypatch.setattr(library, "validate_file",
                        lambda path, **_: [bad_name_diagnostic(path)] if path.endswith("b.yaml") else [])
    result = runner.invoke(cli, ["validate", str(test_files), "--format", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert (doc["passed"], doc["failed"]) == (1, 1)
    assert "1 passed, 1 failed" in result.stderr
    github = runner.invoke(cli, ["validate", str(test_files), "--format", "github"])
    assert github.stdout.splitlines()[0].startswith(f"::error file={test_files}/b.yaml,line=15,col=10,title=AG020::")


def test_folder_without_graphs_is_2(runner, tmp_path):
    result = runner.invoke(cli, ["test", str(tmp_path)])
    assert result.exit_code == 2
    assert "no graph files" in result.stderr


def test_unknown_op_is_2_with_a_suggestion(runner):
    result = runner.invoke(cli, ["ops", "no_such_op"])
    assert result.exit_code == 2
    assert "unknown operator 'no_such_op'" in result.stderr
