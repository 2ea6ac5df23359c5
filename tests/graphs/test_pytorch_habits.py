"""Diagnostics for what a PyTorch user writes by habit (issue 19 §14): each names the habit and
gives the expression as a graph file writes it; messages name the node, never an internal
sub-node (`loss.2`)."""
from __future__ import annotations

import pytest

import agrad.graphs as G
from agrad.graphs.results import GraphFileError

HEAD = "inputs:\n  x: {shape: [4, 3], init: normal, requires_grad: true}\n  W: {shape: [2, 3], init: normal}\nnodes:\n"


def _problems(graph_file, body: str):
    with pytest.raises(GraphFileError) as info:
        G.load(graph_file(HEAD + body))
    return info.value.diagnostics


@pytest.mark.parametrize("expression, code, words, instead", [
    ("x @ W.T", "AG015", "'.T' is not supported", "'t(W)'"),
    ("x @ W.mT", "AG015", "'.mT' is not supported", "'transpose(W, -2, -1)'"),
    ("x.sum(dim=1)", "AG015", "methods are not supported", "'sum(x, dim=1)'"),
    ("torch.relu(x)", "AG015", "drop the prefix 'torch.'", "'relu(x)'"),
    ("F.softmax(x, dim=1)", "AG015", "drop the prefix 'F.'", "'softmax(x, dim=1)'"),
    ("torch.nn.functional.gelu(x * 2)", "AG015", "drop the prefix 'torch.nn.functional.'", "'gelu(x * 2)'"),
    ("sum(x, axis=1)", "AG017", "unexpected keyword argument 'axis'", "'dim'"),
    ("mean(x, dim=1, keepdims=True)", "AG017", "unexpected keyword argument 'keepdims'", "'keepdim'"),
])
def test_a_habit_is_named_and_the_graph_spelling_given(graph_file, expression, code, words, instead):
    (problem,) = _problems(graph_file, f"  y: {expression}\n")
    assert problem.code == code and words in problem.message and problem.hint == instead
    assert problem.location.line == 5


def test_a_namespaced_op_without_its_plugin_says_so(graph_file):
    (problem,) = _problems(graph_file, '  y: {op: "noplugin19::scale", args: [x, 2.0]}\n')
    assert problem.code == "AG016" and "--plugin FILE.py" in problem.message


def test_float_class_labels_ask_for_int64(graph_file):
    body = "  logits: x * 2.0\n  loss: cross_entropy(logits, y)\n"
    with pytest.raises(GraphFileError) as info:
        G.load(graph_file(HEAD.replace("nodes:", "  y: {value: [0, 1, 2, 0]}\nnodes:") + body))
    (problem,) = info.value.diagnostics
    assert problem.code == "AG024" and problem.message.endswith("give input 'y' `dtype: int64`")


def test_a_device_named_gpu_suggests_cuda(graph_file):
    (problem,) = _problems(graph_file, "  y: neg(x)\ndevice: gpu\n")
    assert problem.code == "AG009" and problem.hint == "'cuda'"


def test_messages_name_the_node_not_an_internal_sub_node(graph_file):
    (problem,) = _problems(graph_file, "  loss: sum(relu(x @ x) * 2)\n")
    assert problem.code == "AG023" and "in 'loss'" in problem.message and "loss." not in problem.message
