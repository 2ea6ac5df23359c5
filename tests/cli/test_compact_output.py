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
