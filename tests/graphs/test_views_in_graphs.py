"""Views and the pure ops of in-place updates in graph files: `inspect` names what each
view shares memory with and lists each Node's saved tensors with their versions; the
ops (clone, narrow, masked_fill, index_put, advanced subscripts) build, run and check."""
import json

import numpy as np
from click.testing import CliRunner

from agrad import graphs
from agrad.cli.main import cli

GRAPH = """\
name: views
dtype: float64
inputs:
  x: {shape: [3, 4], init: arange, requires_grad: true}
  m: {value: [[true, false, false, true], [false, false, false, false], [true, true, false, false]], dtype: bool}
  idx: {value: [2, 0], dtype: int64}
  v: {shape: [2, 4], init: ones, requires_grad: true}
nodes:
  y: x * 2
  t: transpose(y, 0, 1)
  n: narrow(x, 1, 1, 2)
  c: clone(t)
  f: masked_fill(y, m, 0.5)
  p: index_put(x, [idx], v)
  r: x[idx]
  s: sum(exp(t / 10) * sum(n)) + sum(f) + sum(r * transpose(c[:, 0:2], 0, 1)) + sum(p * p)
backward: s
outputs: [s, p, f]
"""


def test_inspect_shows_views_and_saved_tensors(graph_file):
    result = graphs.load(graph_file(GRAPH)).inspect()
    views = {n.name: n.view_of for n in result.nodes if n.view_of}
    assert views == {"t": "y", "n": "x", "s.8": "c", "s.9": "c"}     # s.9 views s.8, a view of c: its base is c
    by_name = {}
    for b in result.backward:
        by_name.setdefault(b.name, []).append(b)
    (mul,) = [b for b in by_name["MulBackward0"] if b.node == "y"]
    assert mul.saved == []                    # x * 2: the number is saved, no tensor
    (exp,) = by_name["ExpBackward0"]
    assert exp.saved == [{"name": "result", "shape": [4, 3], "dtype": "float64", "version": 0,
                          "current_version": 0, "is_output": True}]
    (index_put,) = by_name["IndexPutBackward0"]
    assert [s["name"] for s in index_put.saved] == ["indices[0]"]


def test_inspect_json_adds_the_keys(graph_file):
    result = CliRunner().invoke(cli, ["inspect", str(graph_file(GRAPH)), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {n["name"]: n["view_of"] for n in doc["nodes"]}["t"] == "y"
    assert all("saved" in b for b in doc["backward"])
    text = CliRunner().invoke(cli, ["inspect", str(graph_file(GRAPH))]).stdout
    assert "Saved tensors" in text and "view of" in text


def test_the_pure_ops_run_and_check(graph_file):
    graph = graphs.load(graph_file(GRAPH))
    assert graph.check().passed
    run = graph.run()
    x = np.arange(12.0).reshape(3, 4)
    p = x.copy()
    p[[2, 0]] = 1.0
    np.testing.assert_allclose(run.outputs["p"], p)
    f = x * 2
    f[np.array([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 0, 0]], bool)] = 0.5
    np.testing.assert_allclose(run.outputs["f"], f)


MEMORY_FORMATS = """\
name: memory_formats
dtype: float64
inputs:
  x: {shape: [2, 3, 2, 2], init: arange, requires_grad: true}
nodes:
  y: contiguous(x, memory_format="channels_last")
  z: clone(y, memory_format="preserve_format")
  w: zeros_like(z, memory_format="contiguous_format")
  loss: sum(z * 2 + w)
backward: loss
outputs: [loss]
"""


def test_a_graph_names_memory_formats(graph_file):
    run = graphs.load(graph_file(MEMORY_FORMATS)).run()
    assert float(run.outputs["loss"]) == 2 * sum(range(24))
    np.testing.assert_allclose(run.grads["x"], np.full((2, 3, 2, 2), 2.0))
    wrong = graph_file(MEMORY_FORMATS.replace('"channels_last"', '"channel_last"'))
    text = CliRunner().invoke(cli, ["check", str(wrong)]).output
    assert "must be MemoryFormat (channels_last, channels_last_3d, contiguous_format, preserve_format)" in text
    assert "did you mean 'channels_last'?" in text
