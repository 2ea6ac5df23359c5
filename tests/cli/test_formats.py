"""`--format github`, `--format dot` and `--trace`: the text other tools read."""
from __future__ import annotations

from agrad.graphs.results import Diagnostic, ExpectFailure, SourceLocation
from cli_results import bad_name_diagnostic, outcome, seed_inspect, seed_profile, seed_run

from agrad.cli import github
from agrad.cli.dot import inspect_dot
from agrad.cli.trace import trace_document


def test_github_diagnostic_line():
    line = github.diagnostic_command(bad_name_diagnostic(), "graphs/examples/seed.yaml")
    assert line == ("::error file=graphs/examples/seed.yaml,line=15,col=10,title=AG020::"
                    "undefined name 'e' (did you mean 'd'?)")


def test_github_escapes_newlines_and_property_separators():
    diagnostic = Diagnostic("AG001", "bad YAML\n50% sure", SourceLocation("a,b:c.yaml", 1, 2))
    line = github.diagnostic_command(diagnostic, "a,b:c.yaml")
    assert line == "::error file=a%2Cb%3Ac.yaml,line=1,col=2,title=AG001::bad YAML%0A50%25 sure"


def test_github_lines_for_a_failed_test():
    failure = ExpectFailure("grads.a", "expected 5.0, got 4.0", SourceLocation("t.yaml", 22, 5))
    lines = github.test_outcome_commands(outcome("t.yaml", passed=False, failures=[failure]))
    assert lines == ["::error file=t.yaml,line=22,col=5,title=expect::grads.a: expected 5.0, got 4.0"]
    assert github.test_outcome_commands(outcome("t.yaml")) == []


def test_github_file_level_problem_without_location():
    diagnostic = Diagnostic("AG031", "cannot read file", None)
    assert github.diagnostic_command(diagnostic, "gone.yaml") == "::error file=gone.yaml,title=AG031::cannot read file"


def test_dot_has_forward_and_backward_clusters_with_labelled_edges():
    dot = inspect_dot(seed_inspect())
    assert dot.startswith('digraph "seed" {')
    assert "subgraph cluster_forward" in dot and "subgraph cluster_backward" in dot
    assert '"fwd:a" -> "fwd:c" [label="[]"];' in dot
    assert '"bwd:0" -> "bwd:1" [label="input_nr 0"];' in dot
    assert '"fwd:d" -> "bwd:0" [style=dotted' in dot
    assert dot.count("{") == dot.count("}")


def test_trace_events_are_complete_events_in_microseconds():
    trace = trace_document(seed_run(profile=seed_profile()))
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(events) == 4
    mul_backward = next(e for e in events if e["args"]["op"] == "MulBackward0")
    assert (mul_backward["ts"], mul_backward["dur"], mul_backward["cat"]) == (100.0, 40.0, "backward")
    assert trace["otherData"]["schema_version"] == 1


def test_dot_draws_the_forward_or_the_backward_graph_alone(runner):
    from pathlib import Path

    from agrad.cli.main import cli

    seed = str(Path(__file__).parents[2] / "graphs" / "examples" / "seed.yaml")
    forward = runner.invoke(cli, ["inspect", seed, "--format", "dot", "--graph", "forward"]).stdout
    backward = runner.invoke(cli, ["inspect", seed, "--format", "dot", "--graph", "backward"]).stdout
    both = runner.invoke(cli, ["inspect", seed, "--format", "dot"]).stdout
    assert "cluster_forward" in forward and "cluster_backward" not in forward and "bwd:" not in forward
    assert "cluster_backward" in backward and "fwd:" not in backward
    assert "style=dotted" in both and "style=dotted" not in forward + backward
    assert runner.invoke(cli, ["inspect", seed, "--graph", "forward"]).exit_code == 2     # only with dot
