"""Running out of memory after the kernels ran -- in `--anomaly`'s NaN check, or while
summarizing an output -- is AG044 at the node, as a kernel's own MemoryError is; and a
large output is summarized without a float64 copy of it."""
from __future__ import annotations

import numpy as np
import pytest

from agrad import graphs
from agrad.graphs import runner, summaries

GRAPH = ("inputs:\n  x: {shape: [3, 4], init: normal, requires_grad: true}\n"
         "nodes:\n  y: x * 2.0\n  s: sum(y)\nbackward: s\n")


def test_out_of_memory_in_the_anomaly_check_is_ag044_at_the_node(graph_file, monkeypatch):
    g = graphs.load(graph_file(GRAPH))

    def no_memory(_array):
        raise MemoryError("Unable to allocate 137. MiB for an array")
    monkeypatch.setattr(runner.np, "isfinite", no_memory)
    with pytest.raises(graphs.GraphRuntimeError) as info:
        g.run(anomaly=True)
    d = info.value.diagnostic
    assert (d.code, d.location.line) == ("AG044", 4)          # y, the first node checked
    assert "out of memory: Unable to allocate 137. MiB" in d.message


def test_out_of_memory_while_summarizing_is_ag044_at_the_node(graph_file, monkeypatch):
    run = graphs.load(graph_file(GRAPH)).run()

    def no_memory(_tensor):
        raise MemoryError("Unable to allocate 1.07 GiB")
    monkeypatch.setattr(runner, "summarize", no_memory)
    with pytest.raises(graphs.GraphRuntimeError) as info:
        run.result()
    d = info.value.diagnostic
    assert d.code == "AG044" and d.location.line in (2, 4, 5)
    assert "out of memory while summarizing it: Unable to allocate 1.07 GiB" in d.message


def test_a_large_tensor_is_summarized_in_pieces(monkeypatch):
    array = np.random.default_rng(0).normal(size=(300, 70)).astype(np.float32)
    whole = summaries._float_summary(array)
    monkeypatch.setattr(summaries, "_WHOLE_COPY_ELEMENTS", 1000)
    monkeypatch.setattr(summaries, "_PIECE", 512)
    pieces = summaries._float_summary(array)
    assert pieces["min"] == whole["min"] and pieces["max"] == whole["max"]
    assert pieces["mean"] == pytest.approx(whole["mean"], rel=1e-12, abs=1e-15)
    assert pieces["norm"] == pytest.approx(whole["norm"], rel=1e-12)
