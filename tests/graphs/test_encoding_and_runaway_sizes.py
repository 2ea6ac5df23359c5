"""A graph file that is not UTF-8 is AG031 at its first bad byte; a node whose result
would not fit in this machine's memory is refused (AG044 at the node) before any kernel
runs, while validate and inspect, which allocate nothing, accept it."""
from __future__ import annotations

import pytest

from agrad import graphs
from agrad.graphs import runner


@pytest.mark.parametrize("data, line, col", [
    (b"inputs:\n  x: {value: 1.0\xff}\n", 2, 17),
    (b"inputs:\n  x: {value: 1.0}\n# h\xc3\xa9llo \xe2\x82\nnodes: {y: neg(x)}\n", 3, 9),     # cut after 2 bytes
    (b"\x80", 1, 1),
])
def test_a_file_that_is_not_utf8_is_located_at_its_first_bad_byte(tmp_path, data, line, col):
    path = tmp_path / "g.yaml"
    path.write_bytes(data)
    [diagnostic] = graphs.validate(path)
    assert diagnostic.code == "AG031" and (diagnostic.location.line, diagnostic.location.col) == (line, col)
    assert "not UTF-8 text: byte 0x" in diagnostic.message


RUNAWAY = ("inputs:\n  x: {value: [1.0], requires_grad: true}\n"
           "nodes:\n  s: sum(expand(x, [1000000, 1000000]))\nbackward: s\n")


@pytest.mark.parametrize("how", ["run", "check"])
def test_a_node_larger_than_memory_is_refused_before_running(graph_file, how):
    graph = graphs.load(graph_file(RUNAWAY))             # valid: checking allocates nothing
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graph.run() if how == "run" else graph.check()
    d = info.value.diagnostic
    assert (d.code, d.location.line, d.location.col) == ("AG044", 4, 10)
    assert d.message.startswith("s: expand(...) would make 1e+12 float32 elements (3,725.3 GiB), more than this "
                                "machine's memory")
    assert graph.inspect() is not None


def test_a_node_larger_than_memory_is_refused_before_training(graph_file):
    graph = graphs.load(graph_file(RUNAWAY + "train: {loss: s, steps: 1}\n"))
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graph.train()
    assert info.value.diagnostic.code == "AG044"


def test_the_limit_is_this_machines_memory(graph_file, monkeypatch):
    graph = graphs.load(graph_file("inputs:\n  x: {value: [1.0]}\nnodes:\n  s: sum(expand(x, [1000, 1000]))\n"))
    assert graph.run().result().outputs["s"].value == 1e6
    monkeypatch.setattr(runner, "memory_bytes", lambda: 1000 * 1000 * 4 - 1)      # one element short
    with pytest.raises(graphs.GraphRuntimeError):
        graph.run()


TWO_PARAMETERS = ("inputs:\n  x: {shape: [1000, 1000], init: ones, requires_grad: true}\n"
                  "  w: {shape: [1000, 2000], init: ones, requires_grad: true}\n  c: {shape: [10], init: ones}\n"
                  "nodes:\n  y: x @ w\n  s: sum(relu(y))\n")


@pytest.mark.parametrize("how", ["run", "check"])
def test_inputs_with_their_gradients_larger_than_memory_are_refused_at_the_largest(graph_file, monkeypatch, how):
    # each result fits (8 MB), and so do the inputs (12 MB); with their gradients they need 24 MB
    leaves = 4_000_000 + 8_000_000 + 40
    monkeypatch.setattr(runner, "memory_bytes", lambda: 2 * leaves - 41)
    graph = graphs.load(graph_file(TWO_PARAMETERS + "backward: s\n"))
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graph.run() if how == "run" else graph.check(fast=True)
    d = info.value.diagnostic
    assert (d.code, d.location.line, d.location.col) == ("AG044", 3, 3)     # w, the largest input
    assert d.message == ("the inputs (the largest: 'w') with the gradients of those that require grad would hold "
                         "0.0 GiB, more than this machine's memory (0.0 GiB); nothing was run")
    monkeypatch.setattr(runner, "memory_bytes", lambda: 2 * leaves - 40)    # c requires no gradient
    assert graph.run().grads["w"].shape == (1000, 2000)


def test_inputs_larger_than_memory_are_refused_without_a_backward_pass(graph_file, monkeypatch):
    graph = graphs.load(graph_file(TWO_PARAMETERS))
    monkeypatch.setattr(runner, "memory_bytes", lambda: 12_000_039)
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graph.run()
    assert info.value.diagnostic.message.startswith("the inputs (the largest: 'w') would hold 0.0 GiB")
    monkeypatch.setattr(runner, "memory_bytes", lambda: 12_000_040)
    assert graph.run().outputs["s"].shape == ()
