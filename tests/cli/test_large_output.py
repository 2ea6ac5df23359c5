"""Output in proportion to what a person reads: a large graph's run table is summarised."""
from __future__ import annotations

import json

from agrad.cli.main import cli
from agrad.cli.tables import MAX_ROWS


def _chain(nodes: int) -> str:
    lines = ["inputs:", "  x: {value: [0.5, -0.25], requires_grad: true}", "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) + x" for i in range(1, nodes)]
    return "\n".join(lines + [f"  loss: sum(n{nodes - 1})", "backward: loss", ""])


def test_the_run_table_counts_the_rows_beyond_its_limit(runner, write):
    path = write("chain.yaml", _chain(3 * MAX_ROWS))
    result = runner.invoke(cli, ["run", path])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "not retained" in line]
    assert len(rows) == MAX_ROWS - 2          # x's gradient, the not-retained rows, the count
    left = 1 + 3 * MAX_ROWS + 1 - (MAX_ROWS - 1)      # x, n0..n119 and loss, but the rows shown
    assert f"... {left} more left out (--format json, --save)" in " ".join(result.output.split())
    doc = json.loads(runner.invoke(cli, ["run", path, "--format", "json"]).output)
    assert list(doc["grads"]) == ["x"] and list(doc["outputs"]) == ["loss"]


def test_a_table_within_the_limit_is_printed_whole(runner, write):
    path = write("chain.yaml", _chain(MAX_ROWS - 2))
    result = runner.invoke(cli, ["run", path])
    assert result.exit_code == 0, result.output
    assert "left out" not in result.output
    assert sum("not retained" in line for line in result.output.splitlines()) == MAX_ROWS - 1
