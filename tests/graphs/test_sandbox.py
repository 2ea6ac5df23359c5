"""`--sandbox` (or AGRAD_SANDBOX=1): data files a graph names must lie in its folder --
no `..`, no absolute path elsewhere, no symlink pointing out. Off by default."""
from __future__ import annotations

import os

import numpy as np
import pytest
from click.testing import CliRunner

from agrad import graphs
from agrad.cli.main import cli


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "g" / "sub").mkdir(parents=True)
    np.save(tmp_path / "secret.npy", np.ones(3, np.float32))
    np.save(tmp_path / "g" / "ok.npy", np.ones(3, np.float32))
    os.symlink(tmp_path / "secret.npy", tmp_path / "g" / "link.npy")
    return tmp_path


def _graph(folder, name: str):
    path = folder / "g" / "g.yaml"
    path.write_text(f"inputs:\n  x: {{file: {name}}}\nnodes: {{y: neg(x)}}\n")
    return path


@pytest.mark.parametrize("name", ["../secret.npy", "SECRET", "link.npy", "sub/../../secret.npy"])
def test_files_outside_the_graphs_folder_are_refused(folder, name):
    name = str(folder / "secret.npy") if name == "SECRET" else name
    path = _graph(folder, name)
    assert graphs.validate(path) == []                                   # the default: read as written
    [d] = graphs.validate(path, sandbox=True)
    assert (d.code, d.location.line, d.location.col) == ("AG013", 2, 13)
    assert f"is outside the graph's folder {os.path.realpath(folder / 'g')}" in d.message


def test_files_in_the_graphs_folder_are_read(folder):
    assert graphs.load(_graph(folder, "ok.npy"), sandbox=True).run().result().outputs["y"].value == [-1.0] * 3


def test_train_data_outside_the_folder_is_refused(folder):
    np.savez(folder / "d.npz", x=np.ones((4, 3), np.float32))
    path = folder / "g" / "g.yaml"
    path.write_text("inputs:\n  x: {shape: [4, 3], init: zeros}\n  w: {shape: [3], init: ones, requires_grad: true}\n"
                    "nodes: {loss: sum(x * w)}\ntrain:\n  loss: loss\n  steps: 1\n  data: {source: {file: ../d.npz}}\n")
    assert graphs.validate(path) == []
    [d] = graphs.validate(path, sandbox=True)
    assert d.code == "AG065" and "../d.npz is outside the graph's folder" in d.message


@pytest.mark.parametrize("how", [["--sandbox"], "AGRAD_SANDBOX"])
def test_the_cli_option_and_its_environment_default(folder, how):
    path = str(_graph(folder, "../secret.npy"))
    runner = CliRunner(env={"NO_COLOR": "1", "AGRAD_SANDBOX": "1" if how == "AGRAD_SANDBOX" else None})
    args = how if isinstance(how, list) else []
    for command in (["run", path], ["validate", path], ["test", path]):
        result = runner.invoke(cli, [*command, *args])
        assert result.exit_code == 2, (command, result.output)
        assert "error[AG013]" in result.output and "outside the graph's folder" in result.output
    assert CliRunner(env={"AGRAD_SANDBOX": None}).invoke(cli, ["run", path]).exit_code == 0
