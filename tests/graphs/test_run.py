"""Running graphs: results as tensors and as plain data, passes, expectations, failures."""
import numpy as np
import pytest

from agrad import graphs
from graph_helpers import EXAMPLES


def test_seed_runs_to_the_spec_numbers():
    run = graphs.load(EXAMPLES / "seed.yaml").run()
    assert run.outputs["d"].item() == 3.0
    assert {k: g.item() for k, g in run.grads.items()} == {"a": 4.0, "b": 1.0}
    result = run.result()
    assert result.graph == "seed" and result.device == "cpu"
    d = result.outputs["d"]
    assert (d.shape, d.dtype, d.device, d.value) == ([], "float32", "cpu", 3.0)
    assert d.summary == {"min": 3.0, "max": 3.0, "mean": 3.0, "norm": 3.0}
    assert set(result.grads) == {"a", "b"} and "c" in result.not_retained
    assert set(result.timings_ms) >= {"parse", "build", "forward", "backward"}
    assert result.expect.passed and result.expect.checked


def test_expect_mismatch_is_reported_with_its_location(graph_file):
    path = graph_file("""\
        inputs: {a: {value: [1.0, 2.0], requires_grad: true}}
        nodes:
          d: sum(a * a)
        backward: d
        expect:
          outputs: {d: 5.5}
          grads: {a: [2.0, 4.5]}
        """)
    result = graphs.load(path).run().result()
    assert not result.expect.passed
    failures = {f.what: f for f in result.expect.failures}
    assert set(failures) == {"outputs.d", "grads.a"}
    assert "max abs err 0.5" in failures["outputs.d"].message
    assert failures["grads.a"].message.startswith("expected 4.5 at [1], got 4.0 (1 of 2 elements differ; ")
    assert "\n" not in failures["grads.a"].message          # one line; the arrays go to JSON and JUnit
    assert (failures["grads.a"].expected, failures["grads.a"].actual) == ([2.0, 4.5], [2.0, 4.0])
    assert (failures["grads.a"].location.line, failures["grads.a"].location.col) == (7, 11)


def test_expect_null_grad_and_integer_values(graph_file):
    path = graph_file("""\
        inputs:
          a: {value: 2.0, requires_grad: true}
          b: {value: 1.0, requires_grad: true}
          n: {value: [1, 2], dtype: int64}
        nodes:
          d: a * 3
          m: n * 2
        backward: d
        expect:
          outputs: {m: [2, 4]}
          grads: {a: 3.0, b: null}
        """)
    result = graphs.load(path).run().result()
    assert result.expect.passed, result.expect.failures
    assert result.grads["b"] is None
    assert result.outputs["d"].value == 6.0


def test_outputs_default_to_roots_then_last_node(graph_file):
    run = graphs.load(graph_file("inputs: {x: 2.0}\nnodes:\n  a: neg(x)\n  b: a * 3\n")).run()
    assert list(run.outputs) == ["b"]
    run = graphs.load(graph_file("inputs: {x: {value: 2.0, requires_grad: true}}\nnodes:\n"
                                 "  a: neg(x)\n  b: a * 3\nbackward: a\noutputs: [b, a]\n")).run()
    assert list(run.outputs) == ["b", "a"]


def test_grad_tensors_literal_or_input_name_and_inputs_filter(graph_file):
    path = graph_file("""\
        inputs:
          x: {value: [1.0, 2.0], requires_grad: true}
          w: {value: [3.0, 4.0], requires_grad: true}
          g: [1.0, 10.0]
        nodes:
          y: x * w
        backward:
          - {of: y, grad_tensors: [g], inputs: [x], retain_graph: true}
          - {of: [y], grad_tensors: [[2.0, 2.0]]}
        """)
    run = graphs.load(path).run()
    # pass 1 accumulates only into x: g*w = [3, 40]; pass 2 adds 2*w to x and 2*x to w.
    assert run.grads["x"].tolist() == [9.0, 48.0]
    assert run.grads["w"].tolist() == [2.0, 4.0]


def test_second_pass_through_freed_graph_fails_with_pytorchs_message_and_location(graph_file):
    path = graph_file("inputs: {x: {value: 3.0, requires_grad: true}}\nnodes:\n  h: x * x\n  y: h + 1\n"
                      "backward:\n  - {of: y}\n  - {of: y}\n")
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graphs.load(path).run()
    assert "Trying to backward through the graph a second time" in str(info.value)
    assert (info.value.location.line, info.value.location.col) == (3, 8) and info.value.node == "h"


def test_second_pass_that_needs_no_saved_tensor_succeeds(graph_file):
    path = graph_file("inputs: {x: {value: 3.0, requires_grad: true}}\nnodes:\n  y: x + 1\n"
                      "backward: [{of: y}, {of: y}]\n")
    assert graphs.load(path).run().grads["x"].item() == 2.0


def test_init_is_seeded_on_the_host_and_repeatable(graph_file):
    text = ("seed: 7\ninputs:\n  a: {shape: [3, 2], init: normal, mean: 1.0, std: 0.5}\n"
            "  b: {shape: [4], init: uniform, low: -1, high: 1, seed: 3}\n"
            "  c: {shape: [2, 3], init: arange}\n  e: {shape: [2, 2], init: eye, dtype: int64}\n"
            "  f: {shape: [2], init: full, fill: 2.5}\n"
            "nodes:\n  s: neg(a)\noutputs: [a, b, c, e, f]\n")
    run = graphs.load(graph_file(text)).run()
    expected_a = np.random.default_rng(7).normal(1.0, 0.5, size=(3, 2)).astype(np.float32)
    expected_b = np.random.default_rng(3).uniform(-1, 1, size=(4,)).astype(np.float32)
    np.testing.assert_array_equal(run.outputs["a"].numpy(), expected_a)
    np.testing.assert_array_equal(run.outputs["b"].numpy(), expected_b)
    assert run.outputs["c"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert run.outputs["e"].tolist() == [[1, 0], [0, 1]] and run.outputs["e"].dtype.name == "int64"
    assert run.outputs["f"].tolist() == [2.5, 2.5]
    reseeded = graphs.load(graph_file(text), seed=8).run()
    assert not np.array_equal(reseeded.outputs["a"].numpy(), expected_a)
    np.testing.assert_array_equal(reseeded.outputs["b"].numpy(), expected_b)   # its own seed wins


def test_file_inputs_and_overrides(graph_file, tmp_path):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.float64).reshape(2, 3))
    np.savez(tmp_path / "data.npz", w=np.ones(3, dtype=np.float32), x=np.zeros((4, 3)))
    path = graph_file("inputs:\n  x: {file: x.npy}\n  w: {file: data.npz, key: w}\nnodes:\n  y: x * w\n")
    run = graphs.load(path).run()
    assert run.outputs["y"].dtype.name == "float64" and run.outputs["y"].shape == (2, 3)
    run = graphs.load(path, inputs={"x": str(tmp_path / "data.npz")}).run()
    assert run.outputs["y"].shape == (4, 3)     # the override's shape; the graph re-checked against it


def test_pickled_and_missing_files_are_diagnostics(graph_file, tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    path = graph_file("inputs:\n  x: {file: obj.npy}\n  y: {file: nope.npy}\n  z: {file: obj.npz, key: q}\n"
                      "nodes:\n  s: neg(x)\n")
    found = graphs.validate(path)
    assert [(d.code, d.location.line, d.location.col) for d in found] == [
        ("AG013", 2, 13), ("AG013", 3, 13), ("AG013", 4, 13)]
    assert "allow_pickle=False" in found[0].message


def test_override_of_an_unknown_input(graph_file, tmp_path):
    found = graphs.validate(graph_file("inputs: {x: 1.0}\nnodes:\n  y: neg(x)\n"), inputs={"xx": "a.npy"})
    assert [(d.code, d.hint) for d in found] == [("AG033", "'x'")]


def test_repeat_zeroes_grads_and_reports_min_and_median(graph_file):
    run = graphs.load(EXAMPLES / "seed.yaml").run(repeat=3)
    assert run.grads["a"].item() == 4.0
    assert set(run.repeat) == {"forward", "backward"}
    assert run.repeat["forward"]["min"] <= run.repeat["forward"]["median"]


def test_profile_has_forward_and_backward_rows_with_lines():
    run = graphs.load(EXAMPLES / "seed.yaml").run(profile=True, repeat=2)
    rows = {(r.node, r.op, r.phase): r for r in run.profile}
    assert rows[("d", "mul", "forward")].calls == 2 and rows[("d", "mul", "forward")].line == 13
    assert rows[("d", "MulBackward0", "backward")].line == 13
    assert rows[("a", "AccumulateGrad", "backward")].calls == 2
    assert all(len(r.start_ms) == r.calls == len(r.duration_ms) for r in run.profile)


def test_anomaly_names_the_first_node_with_nan(graph_file):
    path = graph_file("inputs: {x: {value: [-1.0, 4.0], requires_grad: true}}\nnodes:\n"
                      "  l: log(x)\n  s: sum(l)\nbackward: s\n")
    run = graphs.load(path).run(anomaly=True)
    assert [(a.phase, a.node, a.location.line) for a in run.anomalies] == [("forward", "l", 3)]
    assert graphs.load(path).run().anomalies == []


def test_kernel_failure_is_a_runtime_error_at_the_node(graph_file):
    path = graph_file("inputs: {x: [1.0]}\nnodes:\n  y: neg(x)\n  z: to(y, device='cuda:7')\n")
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graphs.load(path).run()
    assert info.value.node == "z" and info.value.location.line == 4


def test_save_npz_is_complete(tmp_path):
    run = graphs.load(EXAMPLES / "seed.yaml").run()
    target = tmp_path / "out.npz"
    graphs.save_npz(run, target)
    with np.load(target) as saved:
        assert sorted(saved.files) == ["grads/a", "grads/b", "outputs/d"]
        assert saved["grads/a"] == 4.0
    assert [p.name for p in tmp_path.iterdir()] == ["out.npz"]


def test_save_npz_leaves_nothing_when_writing_fails(tmp_path, monkeypatch):
    run = graphs.load(EXAMPLES / "seed.yaml").run()
    target = tmp_path / "out.npz"
    target.write_bytes(b"old")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", fail)
    with pytest.raises(OSError):
        graphs.save_npz(run, target)
    assert [p.name for p in tmp_path.iterdir()] == ["out.npz"] and target.read_bytes() == b"old"


def test_test_file_outcomes(graph_file):
    assert graphs.test_file(EXAMPLES / "seed.yaml").passed
    bad = graphs.test_file(graph_file("nodes:\n  a: summ(x)\n"))
    assert not bad.passed and [d.code for d in bad.diagnostics] == ["AG016", "AG020"]
    wrong = graphs.test_file(graph_file("inputs: {x: 1.0}\nnodes:\n  y: neg(x)\nexpect: {outputs: {y: 1.0}}\n"))
    assert not wrong.passed and [f.what for f in wrong.failures] == ["outputs.y"]


def test_multi_output_nodes_select_outputs_and_pass_as_lists(graph_file):
    path = graph_file("""\
        inputs:
          x: {shape: [2, 4], init: arange, dtype: float64, requires_grad: true}
        nodes:
          parts: split(x, 2, dim=1)
          left: parts[0]
          right: parts[-1]
          whole: cat(parts, 1)
          s: sum(left * 2) + sum(right * 3) + sum(whole)
        backward: s
        """)
    run = graphs.load(path).run()
    assert run.values["left"].tolist() == [[0.0, 1.0], [4.0, 5.0]]
    assert run.values["whole"].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert run.grads["x"].tolist() == [[3.0, 3.0, 4.0, 4.0], [3.0, 3.0, 4.0, 4.0]]


def test_basic_slicing(graph_file):
    path = graph_file("""\
        inputs:
          x: {shape: [3, 4], init: arange, dtype: float64, requires_grad: true}
        nodes:
          corner: x[0:2, ::2]
          row: x[-1]
          s: sum(corner) + sum(row * 10)
        backward: s
        """)
    graph = graphs.load(path)
    assert [(n.name, n.shape) for n in graph.inspect().nodes][:2] == [("corner", [2, 2]), ("row", [4])]
    run = graph.run()
    assert run.values["corner"].tolist() == [[0.0, 2.0], [4.0, 6.0]]
    assert run.grads["x"].tolist() == [[1, 0, 1, 0], [1, 0, 1, 0], [10, 10, 10, 10]]


def test_anomaly_in_backward_names_the_node_whose_gradient_is_not_finite(graph_file):
    path = graph_file("inputs: {x: {value: [0.0, 4.0], requires_grad: true}}\nnodes:\n"
                      "  r: sqrt(x)\n  s: sum(r)\nbackward: s\n")
    run = graphs.load(path).run(anomaly=True)
    assert [(a.phase, a.node, a.location.line) for a in run.anomalies] == [("backward", "r", 3)]
    assert "SqrtBackward0" in run.anomalies[0].message and "inf" in run.anomalies[0].message


def test_a_run_and_a_check_show_none_of_numpys_floating_point_warnings(graph_file):
    """log(0) is -inf and its gradient inf, as PyTorch computes them without a warning: a library
    run, replayed run and check of a graph file raise none even with warnings made errors."""
    import warnings

    graph = graphs.load(graph_file("inputs:\n  x: {value: [0.0, 1.0], requires_grad: true}\n"
                                   "nodes:\n  y: log(x)\n  loss: sum(y)\nbackward: loss\n"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):          # the engine's pass, the recorded one, a replayed one
            run = graph.run()
            assert run.values["loss"].item() == float("-inf") and run.grads["x"].tolist() == [float("inf"), 1.0]
        graph.check()
