"""A graph file that is not UTF-8 is AG031 at its first bad byte; a node whose result
would not fit in this machine's memory is AG036 before any kernel runs."""
from __future__ import annotations

import pytest

from agrad import graphs
from agrad.graphs import build


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


def test_a_node_larger_than_memory_is_refused_before_running(graph_file):
    path = graph_file("inputs:\n  x: {value: [1.0], requires_grad: true}\n"
                      "nodes:\n  s: sum(expand(x, [1000000, 1000000]))\nbackward: s\n")
    with pytest.raises(graphs.GraphFileError) as info:
        graphs.load(path)
    [d] = info.value.diagnostics
    assert (d.code, d.location.line, d.location.col) == ("AG036", 4, 10)
    assert d.message.startswith("s: expand(...) would make 1e+12 float32 elements (3,725.3 GiB), more than this "
                                "machine's memory")


def test_the_limit_is_this_machines_memory(graph_file, monkeypatch):
    path = graph_file("inputs:\n  x: {value: [1.0]}\nnodes:\n  s: sum(expand(x, [1000, 1000]))\n")
    assert graphs.validate(path) == []
    monkeypatch.setattr(build, "memory_bytes", lambda: 1000 * 1000 * 4 - 1)      # one element short
    assert [d.code for d in graphs.validate(path)] == ["AG036"]
