"""Output a person can read at 80 columns (issue 19 §7): tensors are compact by default (`--values
full` prints every value) and non-retained nodes are one line."""
from __future__ import annotations

from pathlib import Path

from agrad.cli.main import cli

RESNET = str(Path(__file__).parents[2] / "graphs" / "examples" / "resnet_block.yaml")


def test_a_conv_block_takes_a_line_or_two_per_tensor(runner):
    compact = runner.invoke(cli, ["run", RESNET])
    full = runner.invoke(cli, ["run", RESNET, "--values", "full"])
    assert compact.exit_code == full.exit_code == 0
    assert all(len(line) <= 80 for line in compact.stdout.splitlines())
    assert len(compact.stdout.splitlines()) < 50 < 4 * len(compact.stdout.splitlines()) < len(full.stdout.splitlines())
    assert sum("not retained" in line for line in compact.stdout.splitlines()) == 1
    assert "..." not in full.stdout              # full: every value, no abbreviation


def test_inspect_of_a_wide_graph_stays_a_table_at_120_columns():
    import agrad.graphs as G
    from cli_results import render_text

    from agrad.cli.inspect_tables import inspect_view

    result = G.load(Path(RESNET).with_name("gpt_block.yaml")).inspect()
    text = render_text(inspect_view(result), width=120)
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 120
    assert "\n  op " not in text                       # no record blocks: one row a node
    assert len(lines) < 2 * (len(result.nodes) + len(result.backward) + 20)
    assert any(line.split()[:2] == ["x0.1", "embedding"] for line in lines if line.strip())
