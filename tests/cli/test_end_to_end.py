"""The commands against the real library and engine, on small graph files."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from agrad.cli.main import cli

SEED = str(Path(__file__).parents[2] / "graphs" / "examples" / "seed.yaml")

WRONG_EXPECT = """\
inputs:
  a: {value: 1.0, requires_grad: true}
  b: {value: 2.0, requires_grad: true}
nodes:
  c: add(a, b)
  d: a * c
backward: d
expect:
  outputs: {d: 4.0}
"""

# A second backward pass through a freed graph: PyTorch's runtime error, exit 3.
FREED_GRAPH = """\
inputs:
  a: {value: 2.0, requires_grad: true}
nodes:
  b: exp(a)
  c: b * b
backward: [{of: c}, {of: c}]
"""

UNDEFINED_NAME = """\
inputs:
  a: {value: 1.0, requires_grad: true}
nodes:
  d: a * e
backward: d
"""

LOG_OF_NEGATIVE = """\
inputs:
  a: {value: -1.0, requires_grad: true}
nodes:
  b: log(a)
  c: sum(b)
backward: c
"""



def test_seed_json_grads(runner):
    result = runner.invoke(cli, ["run", SEED, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1 and doc["graph"] == "seed" and doc["device"] == "cpu"
    assert doc["outputs"]["d"]["value"] == 3.0
    assert doc["grads"]["a"]["value"] == 4.0 and doc["grads"]["b"]["value"] == 1.0
    assert "c" not in doc["grads"]
    assert set(doc["timings_ms"]) == {"parse", "build", "forward", "backward"}
    assert doc["expect"] == {"checked": True, "passed": True, "unchecked": [], "failures": []}


def test_seed_table(runner):
    result = runner.invoke(cli, ["run", SEED])
    assert result.exit_code == 0
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["d", "[]", "float32", "3.0"] in rows            # the heading says `on cpu`, once
    assert ["a", "[]", "float32", "4.0"] in rows
    assert "not retained: c, d (non-leaf; `retain_grad:` keeps one)" in result.stdout
    assert result.stdout.rstrip().endswith("expect: passed")


def test_expect_mismatch_is_1_with_json(runner, write):
    result = runner.invoke(cli, ["run", write("wrong.yaml", WRONG_EXPECT), "--format", "json"])
    assert result.exit_code == 1
    failures = json.loads(result.stdout)["expect"]["failures"]
    assert [f["what"] for f in failures] == ["outputs.d"] and failures[0]["line"] == 9
    assert "wrong.yaml:9:" in result.stderr


def test_invalid_file_is_2_in_compiler_style(runner, write):
    path = write("bad.yaml", UNDEFINED_NAME)
    result = runner.invoke(cli, ["run", path])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{path}:4:10: error[AG020]: undefined name 'e'")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_runtime_failure_is_3_and_save_leaves_no_file(runner, write, tmp_path):
    target = tmp_path / "out.npz"
    result = runner.invoke(cli, ["run", write("freed.yaml", FREED_GRAPH), "--save", str(target)])
    assert result.exit_code == 3
    assert "freed.yaml:5:8: error[AG040]: backward of c (MulBackward0): Trying to backward through the graph a " \
           "second time" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["freed.yaml"]


def test_save_writes_outputs_and_grads(runner, tmp_path):
    target = tmp_path / "seed.npz"
    result = runner.invoke(cli, ["run", SEED, "--save", str(target)])
    assert result.exit_code == 0
    with np.load(target) as saved:
        assert float(saved["grads/a"]) == 4.0 and float(saved["outputs/d"]) == 3.0


def test_anomaly_is_1_and_names_the_node_and_line(runner, write):
    path = write("nan.yaml", LOG_OF_NEGATIVE)
    result = runner.invoke(cli, ["run", path, "--anomaly"])
    assert result.exit_code == 1
    assert f"{path}:4:" in result.stderr and "'b'" in result.stderr


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed here")
def test_cuda_without_cupy_is_3_and_says_how_to_install(runner):
    result = runner.invoke(cli, ["run", SEED, "--device", "cuda"])
    assert result.exit_code == 3
    assert "CuPy is not installed" in result.stderr and "agrad[cuda]" in result.stderr


def test_profile_and_trace(runner, tmp_path):
    trace = tmp_path / "trace.json"
    result = runner.invoke(cli, ["run", SEED, "--profile", "--trace", str(trace), "--repeat", "3"])
    assert result.exit_code == 0
    assert "Time per node (average of 3 passes, after 1 warm-up pass not counted)" in result.stdout
    assert "Average Forward-Backward:" in result.stdout
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    assert {e["args"]["op"] for e in events} >= {"add", "mul", "MulBackward0", "AddBackward0"}
    assert len([e for e in events if e["args"]["op"] == "mul"]) == 3


def test_inspect_json_and_dot(runner):
    doc = json.loads(runner.invoke(cli, ["inspect", SEED, "--format", "json"]).stdout)
    assert [n["name"] for n in doc["nodes"]] == ["c", "d"]
    names = {b["id"]: b["name"] for b in doc["backward"]}
    assert names[doc["order"][0]] == "MulBackward0"
    dot = runner.invoke(cli, ["inspect", SEED, "--format", "dot"]).stdout
    assert "cluster_forward" in dot and "cluster_backward" in dot
    assert '"fwd:a" [label="a\\n[] float32", shape=ellipse, style=filled, fillcolor=lightblue]' in dot


def test_check_json(runner):
    result = runner.invoke(cli, ["check", SEED, "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["passed"] is True and set(doc["leaves"]) == {"a", "b"}


def test_test_and_validate_folders(runner, write, tmp_path):
    write("seed_copy.yaml", Path(SEED).read_text())
    bad = write("zz_bad.yaml", UNDEFINED_NAME)
    result = runner.invoke(cli, ["test", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed"
    github = runner.invoke(cli, ["validate", str(tmp_path), "--format", "github"])
    assert github.exit_code == 2
    assert github.stdout.splitlines() == [f"::error file={bad},line=4,col=10,title=AG020::undefined name 'e'",
                                          "1 passed, 1 failed"]


def test_broken_plugin_is_2(runner, write):
    plugin = write("broken_plugin.py", "raise RuntimeError('boom')\n")
    result = runner.invoke(cli, ["run", SEED, "--plugin", plugin])
    assert result.exit_code == 2
    assert "error[AG032]" in result.stderr and "boom" in result.stderr and "Traceback" not in result.stderr


def test_ops_and_schema(runner):
    ops = json.loads(runner.invoke(cli, ["ops", "--format", "json"]).stdout)["ops"]
    add = next(op for op in ops if op["name"] == "add")
    assert add["has_backward"] is True and "CPU" in add["keys"]
    schema = json.loads(runner.invoke(cli, ["schema"]).stdout)
    assert schema["$schema"].startswith("http://json-schema.org/")
