"""Output in proportion to what a person reads: a large graph's run table is summarised."""
from __future__ import annotations

import json

import pytest

from agrad.cli.main import cli
from agrad.cli.tables import MAX_ROWS
from inspection_builds import renumbered


def _chain(nodes: int) -> str:
    lines = ["inputs:", "  x: {value: [0.5, -0.25], requires_grad: true}", "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) + x" for i in range(1, nodes)]
    return "\n".join(lines + [f"  loss: sum(n{nodes - 1})", "backward: loss", ""])


def test_the_run_table_counts_the_rows_beyond_its_limit(runner, write):
    path = write("chain.yaml", _chain(3 * MAX_ROWS))
    result = runner.invoke(cli, ["run", path])
    assert result.exit_code == 0, result.output
    # the non-retained nodes are one line, not a row each (issue 19 §7), and name the first few
    (folded,) = [line for line in result.output.splitlines() if "not retained" in line]
    assert folded.startswith("not retained: n0, n1, n2,") and f"and {3 * MAX_ROWS + 1 - 12} more" in folded
    assert len(result.output.splitlines()) < 30
    doc = json.loads(runner.invoke(cli, ["run", path, "--format", "json"]).output)
    assert list(doc["grads"]) == ["x"] and list(doc["outputs"]) == ["loss"]


def test_a_table_within_the_limit_is_printed_whole(runner, write):
    path = write("chain.yaml", _chain(MAX_ROWS - 2))
    result = runner.invoke(cli, ["run", path])
    assert result.exit_code == 0, result.output
    assert "left out" not in result.output
    assert sum("not retained" in line for line in result.output.splitlines()) == 1


def test_the_run_table_counts_the_tensors_beyond_its_limit(runner, write):
    lines = ["inputs:"] + [f"  x{i}: {{value: 1.0, requires_grad: true}}" for i in range(2 * MAX_ROWS)]
    path = write("many.yaml", "\n".join(lines + ["nodes:", "  s: " + " + ".join(f"x{i}" for i in range(2 * MAX_ROWS)),
                                                "backward: s", ""]))
    result = runner.invoke(cli, ["run", path])
    left = 2 * MAX_ROWS - (MAX_ROWS - 1)
    assert f"... {left} more left out (--format json, --save)" in " ".join(result.output.split())


def test_inspect_tables_count_the_rows_beyond_their_limit_and_json_keeps_them_all(runner, write):
    from agrad.cli.inspect_tables import MAX_ROWS as INSPECT_ROWS

    nodes = INSPECT_ROWS + 20
    path = write("chain.yaml", _chain(nodes))
    text = " ".join(runner.invoke(cli, ["inspect", path]).output.split())
    ops = 2 * nodes          # tanh and add a node (n0: one mul), and the loss's sum
    assert f"{ops - INSPECT_ROWS} more left out (--format json or dot)" in text          # nodes
    assert f"{ops + 1 - INSPECT_ROWS} more left out (--format json or dot)" in text      # + AccumulateGrad
    assert f"{ops + 1 - INSPECT_ROWS} more steps left out" in text
    result = runner.invoke(cli, ["inspect", path, "--format", "json"])
    doc = json.loads(result.output)
    assert len(doc["nodes"]) == ops and len(doc["order"]) == len(doc["backward"]) == ops + 1
    assert result.output.count("\n") < 3 * (len(doc["nodes"]) + len(doc["backward"]))    # an item a line


def test_json_documents_with_long_lists_read_back_the_same():
    from agrad.cli.json_docs import LONG_LIST, json_chunks

    small = {"schema_version": 1, "files": [{"file": "a", "diagnostics": []}]}
    assert "".join(json_chunks(small)) == json.dumps(small, indent=2)          # small ones as before
    long = {"schema_version": 1, "nodes": [{"name": f"n{i}", "shape": [i, 2]} for i in range(LONG_LIST + 1)],
            "order": list(range(3 * LONG_LIST)), "empty": [], "info": {"a": [1, 2]}}
    assert json.loads("".join(json_chunks(long))) == long


def test_a_streamed_inspect_document_is_the_same_bytes_as_the_whole_one(write):
    """`agrad inspect --format json` makes each node's entry as it writes it (Rows); the text is the
    document's, whole or long (each long list one item a line), and reads back as the plain one."""
    from agrad import graphs
    from agrad.cli.json_docs import LONG_LIST, Rows, inspect_document, json_chunks

    for nodes in (3, LONG_LIST + 7):
        result = graphs.load(write(f"chain{nodes}.yaml", _chain(nodes))).inspect()
        streamed = inspect_document(result, streamed=True)
        assert isinstance(streamed["nodes"], Rows) and isinstance(streamed["backward"], Rows)
        whole = inspect_document(result)
        text = "".join(json_chunks(streamed))
        assert text == "".join(json_chunks(whole))
        assert json.loads(text) == whole
        bare = graphs.load(write(f"chain{nodes}.yaml", _chain(nodes))).inspect(edges=False)   # as the CLI's JSON
        again = inspect_document(bare)      # (its Nodes numbered on from the first build's: sequence_nr differs)
        assert bare.edges == [] and result.edges
        assert (again["nodes"], again["order"], len(again["backward"])) == \
            (whole["nodes"], whole["order"], len(whole["backward"]))


@pytest.mark.parametrize("nodes", [3, 40])
def test_inspect_streamed_as_the_graph_is_built_reads_as_the_kept_build(write, nodes):
    """`agrad inspect --format json` (Graph.inspect(streamed=True)) builds the Meta graph as it writes
    the rows, letting each value go once nothing later reads it; a small file's check keeps its build,
    which is read instead. Let go of, the build made again as the rows are written says the same:
    views (view_of), a multi-output node and its selections, a `to`, two backward passes."""
    from agrad import graphs
    from agrad.cli.json_docs import Rows, inspect_document, json_chunks

    lines = ["inputs:", "  x: {value: [0.5, -0.25], requires_grad: true}", "nodes:", "  n0: x * 1.0",
             "  v: reshape(x, [2, 1])", "  w: v[0]", "  parts: split(x, 1)", "  p0: parts[0]",
             "  moved: to(p0, device='cpu')", "  side: sum(w) + sum(moved) + sum(v)"]
    lines += [f"  n{i}: tanh(n{i - 1}) + x" for i in range(1, nodes)]
    lines += [f"  loss: sum(n{nodes - 1})", "backward:", "  - {of: loss, retain_graph: true}", "  - {of: side}", ""]
    graph = graphs.load(write(f"views{nodes}.yaml", "\n".join(lines)))
    kept = "".join(json_chunks(inspect_document(graph.inspect(edges=False), streamed=True)))
    graph._checked.release_meta()
    result = graph.inspect(edges=False, streamed=True)
    assert all(isinstance(r, Rows) for r in (result.nodes, result.backward, result.order))
    streamed = "".join(json_chunks(inspect_document(result, streamed=True)))
    assert graph._checked._meta is None                 # nothing kept of the build made for the rows
    document, whole = json.loads(streamed), json.loads(kept)
    assert renumbered(document.pop("backward")) == renumbered(whole.pop("backward")) and document == whole
    document = json.loads(streamed)
    views = {n["name"]: n["view_of"] for n in document["nodes"]}
    assert views["v"] == "x" and views["w"] == "x"
    assert {"side", "loss"} <= {b["node"] for b in document["backward"]}


def test_rows_of_any_length_read_back_as_their_list():
    from agrad.cli.json_docs import LONG_LIST, Rows, json_chunks

    for count in (0, 1, LONG_LIST, LONG_LIST + 1, 2500, 3001):
        items = [{"id": i, "edges": [[i, 0], None]} for i in range(count)]
        document = {"schema_version": 1, "backward": Rows(count, iter(items)), "order": list(range(count))}
        assert json.loads("".join(json_chunks(document))) == {**document, "backward": items}
