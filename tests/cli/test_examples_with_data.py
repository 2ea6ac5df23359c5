"""Examples a user can run (issue 19 §11): `agrad examples NAME --to DIR` writes the graph with the
data files it reads, and the printed form names where the data is installed, so a saved copy runs."""
from __future__ import annotations

import pytest

from agrad.cli.main import cli

WITH_DATA = ["train_digits", "gnn_layer", "train_gpt_chars"]


@pytest.mark.parametrize("name", WITH_DATA)
def test_to_dir_writes_the_graph_and_its_data(runner, tmp_path, name):
    out = tmp_path / "out"
    result = runner.invoke(cli, ["examples", name, "--to", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / f"{name}.yaml").is_file() and len(result.stdout.splitlines()) >= 2
    assert runner.invoke(cli, ["validate", str(out / f"{name}.yaml")]).exit_code == 0
    again = runner.invoke(cli, ["examples", name, "--to", str(out)])
    assert again.exit_code == 2 and "--force" in again.stderr
    assert runner.invoke(cli, ["examples", name, "--to", str(out), "--force"]).exit_code == 0


@pytest.mark.parametrize("name", WITH_DATA)
def test_the_printed_form_runs_wherever_it_is_saved(runner, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    printed = runner.invoke(cli, ["examples", name]).stdout
    assert "--to DIR" in printed.splitlines()[0]
    (tmp_path / "saved.yaml").write_text(printed)
    assert runner.invoke(cli, ["validate", "saved.yaml"]).exit_code == 0
    assert runner.invoke(cli, ["validate", "-"], input=printed).exit_code == 0


def test_to_needs_a_name(runner, tmp_path):
    assert runner.invoke(cli, ["examples", "--to", str(tmp_path)]).exit_code == 2


def test_to_a_folder_that_cannot_be_made_is_bad_usage(runner, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    result = runner.invoke(cli, ["examples", "train_digits", "--to", str(blocked / "sub")])
    assert result.exit_code == 2 and "cannot create" in result.stderr and "internal error" not in result.stderr
