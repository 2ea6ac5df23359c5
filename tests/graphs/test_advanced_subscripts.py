"""Subscripts with index tensors, integer lists and bool masks in graph files (`x[idx]`,
`x[:, [0, 2]]`): the index tensor is a use of its name, like any argument."""
import numpy as np
import pytest

from agrad import graphs


def test_index_tensors_and_lists_run_and_check(graph_file, tmp_path):
    np.save(tmp_path / "idx.npy", np.array([2, 0, 2], dtype=np.int64))
    path = graph_file("""\
        dtype: float64
        inputs:
          x: {value: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad: true}
          idx: {file: idx.npy}
        nodes:
          a: x[idx]
          b: x[:, [0, 2]]
          c: x[idx, 1:]
          d: x[[True, False, True]]
          loss: sum(a) + sum(b * b) + sum(c) + sum(d)
        backward: loss
        """)
    graph = graphs.load(path)
    run = graph.run()
    x = np.arange(1.0, 10.0).reshape(3, 3)
    expected = x[[2, 0, 2]].sum() + (x[:, [0, 2]] ** 2).sum() + x[[2, 0, 2], 1:].sum() + x[[0, 2]].sum()
    assert run.outputs["loss"].item() == pytest.approx(expected)
    grad = np.zeros((3, 3))
    np.add.at(grad, [2, 0, 2], 1.0)
    grad[:, [0, 2]] += 2 * x[:, [0, 2]]
    np.add.at(grad, ([2, 0, 2], slice(1, None)), 1.0)
    grad[[0, 2]] += 1
    np.testing.assert_allclose(run.grads["x"].numpy(), grad)
    assert graph.check().passed


def test_index_tensor_names_are_checked_as_uses(graph_file):
    path = graph_file("""\
        inputs:
          x: {shape: [3, 4], init: zeros}
        nodes:
          a: x[missing]
          b: x[1.5]
        """)
    diagnostics = graphs.validate(path)
    messages = {d.code: d.message for d in diagnostics}
    assert "undefined name 'missing'" in messages["AG020"]
    assert "a tensor's name or a list of integers" in messages["AG015"]


def test_index_tensor_orders_the_nodes(graph_file):
    path = graph_file("""\
        inputs:
          x: {shape: [4], init: arange}
          i: {value: [3, 1], dtype: int64}
        nodes:
          picked: x[j]
          j: i * 1
        outputs: [picked]
        """)
    run = graphs.load(path).run()
    assert run.outputs["picked"].numpy().tolist() == [3.0, 1.0]
