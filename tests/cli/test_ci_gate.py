"""A CI gate that can be trusted (issue 19 §1-3): `test` trains what `expect.train` bounds, nothing
unchecked is called passed, folder walks skip what is not a project's graphs, reports land where asked
and never on a device, and every `--format json` prints a document even for an invalid file."""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from small_classifier import SMALL_CLASSIFIER

from agrad.cli.main import cli

SEED = str(Path(__file__).parents[2] / "graphs" / "examples" / "seed.yaml")

TRAIN = SMALL_CLASSIFIER + """\
train:
  loss: loss
  optimizer: {type: adam, lr: 0.1}
  steps: 30
expect:
  train: {final_loss: {max: BOUND}}
"""
NO_EXPECT = "inputs:\n  a: {value: 1.0, requires_grad: true}\nnodes:\n  b: a * a\nbackward: b\n"


def test_test_trains_and_fails_an_impossible_train_bound(runner, write):
    text = TRAIN.replace("BOUND", "1e-9")
    path = write("t.yaml", text)
    result = runner.invoke(cli, ["test", path])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed"
    assert f"{path}:" in result.stderr and "train.final_loss" in result.stderr and "above the maximum" in result.stderr
    doc = json.loads(runner.invoke(cli, ["test", path, "--format", "json"]).stdout)
    assert doc["files"][0]["status"] == "failed" and doc["files"][0]["failures"][0]["line"] == \
        text.splitlines().index("  train: {final_loss: {max: 1e-9}}") + 1


def test_test_passes_a_reachable_bound_and_no_train_is_its_own_status(runner, write, tmp_path):
    path = write("t.yaml", TRAIN.replace("BOUND", "10.0"))
    assert runner.invoke(cli, ["test", path]).exit_code == 0
    skipped = runner.invoke(cli, ["test", path, "--no-train"])
    assert skipped.exit_code == 0
    assert skipped.stdout.splitlines()[0].startswith("SKIP")
    assert skipped.stdout.splitlines()[-1] == "0 passed, 0 failed, 1 not trained (--no-train)"
    doc = json.loads(runner.invoke(cli, ["test", path, "--no-train", "--format", "json"]).stdout)
    assert (doc["passed"], doc["not_trained"], doc["files"][0]["passed"]) == (0, 1, False)
    assert runner.invoke(cli, ["test", path, "--no-train", "--strict"]).exit_code == 1
    report = tmp_path / "r.xml"
    runner.invoke(cli, ["test", path, "--no-train", "--junit-xml", str(report)])
    assert ET.parse(report).getroot().find("testsuite").get("skipped") == "1"


def test_run_never_calls_an_unchecked_expectation_passed(runner, write):
    trained = write("t.yaml", TRAIN.replace("BOUND", "1e-9"))
    doc = json.loads(runner.invoke(cli, ["run", trained, "--format", "json"]).stdout)
    assert doc["expect"] == {"checked": False, "passed": False, "unchecked": ["train"], "failures": []}
    table = runner.invoke(cli, ["run", trained])
    assert "expect: train not checked" in table.stdout and "passed" not in table.stdout
    plain = json.loads(runner.invoke(cli, ["run", write("n.yaml", NO_EXPECT), "--format", "json"]).stdout)
    assert (plain["expect"]["checked"], plain["expect"]["passed"]) == (False, False)


@pytest.fixture
def project(tmp_path):
    """A repository as CI checks it out: graphs, and YAML and virtualenvs that are not graphs."""
    root = tmp_path / "repo"
    for folder in (".git", ".github/workflows", ".venv/lib", "venv2", "node_modules/pkg", "graphs/wip"):
        (root / folder).mkdir(parents=True)
    (root / "venv2" / "pyvenv.cfg").write_text("home = /usr\n")
    broken = "inputs: [\n"
    for where in (".venv/lib/g.yaml", "venv2/g.yaml", "node_modules/pkg/g.yaml", ".git/g.yaml", "graphs/wip/g.yaml"):
        (root / where).write_text(broken)
    (root / ".github/workflows/ci.yml").write_text("on: push\njobs: {}\n")
    (root / "docker-compose.yaml").write_text("services:\n  web: {image: x}\n")
    (root / "graphs" / "seed.yml").write_text(Path(SEED).read_text())
    return root


def test_folder_walks_skip_dot_folders_virtualenvs_and_yaml_that_is_not_a_graph(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    result = runner.invoke(cli, ["validate", ".", "--exclude", "wip"])
    assert result.exit_code == 0, result.output
    assert [line.split()[1] for line in result.stdout.splitlines()[:-1]] == ["graphs/seed.yml"]
    assert result.stderr.count("not a graph") == 1 and "docker-compose.yaml" in result.stderr
    assert runner.invoke(cli, ["validate", "."]).exit_code == 2                  # graphs/wip is walked
    assert runner.invoke(cli, ["test", ".", "--exclude", "graphs/wip/*"]).exit_code == 0
    named = runner.invoke(cli, ["validate", "docker-compose.yaml"])              # named, not walked: read
    assert named.exit_code == 2


def test_junit_xml_makes_folders_and_never_replaces_a_device(runner, tmp_path):
    report = tmp_path / "reports" / "ci" / "junit.xml"
    assert runner.invoke(cli, ["test", SEED, "--junit-xml", str(report)]).exit_code == 0
    assert report.exists()
    before = os.stat("/dev/null")
    refused = runner.invoke(cli, ["test", SEED, "--junit-xml", "/dev/null"])
    assert refused.exit_code == 2 and "not a regular file" in refused.stderr
    after = os.stat("/dev/null")
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    assert runner.invoke(cli, ["test", SEED, "--junit-xml", str(fifo)]).exit_code == 2


def test_exitfirst_says_how_many_graphs_were_not_run(runner, write):
    bad = write("a.yaml", NO_EXPECT + "expect: {outputs: {b: 5.0}}\n")
    write("b.yaml", NO_EXPECT)
    write("c.yaml", NO_EXPECT)
    result = runner.invoke(cli, ["test", str(Path(bad).parent), "-x"])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed, 2 not run (-x)"


def test_validate_quiet_prints_only_problems(runner, write):
    good = runner.invoke(cli, ["validate", "-q", SEED])
    assert (good.exit_code, good.stdout, good.stderr) == (0, "", "")
    bad = write("bad.yaml", NO_EXPECT.replace("a * a", "a * nope"))
    result = runner.invoke(cli, ["validate", "-q", SEED, bad])
    assert result.exit_code == 2 and "AG020" in result.stderr
    assert result.stdout.splitlines() == ["1 passed, 1 failed"]


@pytest.mark.parametrize("command", ["validate", "test"])
def test_stdin_for_validate_and_test(runner, command):
    result = runner.invoke(cli, [command, "-"], input=Path(SEED).read_text())
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "1 passed, 0 failed"


def test_stdin_for_train(runner):
    result = runner.invoke(cli, ["train", "-", "--format", "json"], input=TRAIN.replace("BOUND", "10.0"))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["file"] == "<stdin>"


@pytest.mark.parametrize("command", ["run", "check", "inspect", "train", "test", "validate"])
def test_an_invalid_graph_still_prints_a_json_document(runner, write, command):
    bad = write("bad.yaml", NO_EXPECT.replace("a * a", "summ(a)"))
    result = runner.invoke(cli, [command, bad, "--format", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1
    found = doc["diagnostics"] if "diagnostics" in doc else doc["files"][0]["diagnostics"]
    assert found[0]["code"] == "AG016" and found[0]["line"] == 4
    assert "AG016" in result.stderr


def test_an_expect_mismatch_is_one_line_and_the_arrays_go_to_json_and_junit(runner, write, tmp_path):
    path = write("m.yaml", "inputs:\n  a: {value: [[1.0, 2.0], [3.0, 4.0]]}\nnodes:\n  b: a * a\n"
                           "expect:\n  outputs: {b: [[1.0, 4.0], [9.0, 17.0]]}\n")
    result = runner.invoke(cli, ["run", path])
    assert result.exit_code == 1
    [line] = [line for line in result.stderr.splitlines() if "expect failed" in line]
    assert line.endswith("outputs.b: expected 17.0 at [1, 1], got 16.0 (1 of 4 elements differ; max abs err 1.0; "
                         "rtol=1.3e-06, atol=1e-05)")
    failure = json.loads(runner.invoke(cli, ["run", path, "--format", "json"]).stdout)["expect"]["failures"][0]
    assert (failure["expected"], failure["actual"]) == ([[1.0, 4.0], [9.0, 17.0]], [[1.0, 4.0], [9.0, 16.0]])
    report = tmp_path / "r.xml"
    runner.invoke(cli, ["test", path, "--junit-xml", str(report)])
    body = ET.parse(report).getroot().find("testsuite/testcase/failure").text
    assert "actual:   [[1.0, 4.0], [9.0, 16.0]]" in body
