"""Weights as safetensors: `agrad import --weights safetensors` writes them, graph inputs read
them (`{file: W.safetensors, key: NAME}`), a malformed file is a located error."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from agrad import graphs
from agrad.cli.main import cli
from agrad import _safetensors as safetensors

FIXTURES = Path(__file__).parent / "fixtures"


def test_round_trip_of_every_dtype(tmp_path):
    arrays = {"f": np.arange(6, dtype=np.float32).reshape(2, 3), "d": np.array(2.5), "i": np.array([1, -2]),
              "b": np.array([True, False]), "h": np.ones((2, 0), np.float16)}
    with open(tmp_path / "w.safetensors", "wb") as f:
        safetensors.write(f, arrays)
    for name, array in arrays.items():
        loaded = safetensors.read_tensor(str(tmp_path / "w.safetensors"), name)
        assert loaded.dtype == array.dtype and loaded.shape == array.shape and np.array_equal(loaded, array)


def test_import_with_safetensors_weights_runs_as_with_npz(tmp_path):
    pytest.importorskip("onnx")
    from agrad.graphs.onnx.importing import ImportOptions, import_model

    import_model(FIXTURES / "convbn.unfolded.onnx", tmp_path / "a.yaml", ImportOptions(weights="safetensors"))
    import_model(FIXTURES / "convbn.unfolded.onnx", tmp_path / "b.yaml")
    assert (tmp_path / "a.safetensors").exists() and "file: a.safetensors" in (tmp_path / "a.yaml").read_text()
    a, b = graphs.load(tmp_path / "a.yaml").run(), graphs.load(tmp_path / "b.yaml").run()
    for name in a.outputs:
        assert np.array_equal(a.outputs[name].detach().numpy(), b.outputs[name].detach().numpy())
    for name in a.grads:
        assert np.array_equal(a.grads[name].detach().numpy(), b.grads[name].detach().numpy())


@pytest.mark.parametrize("data, message", [
    (struct.pack("<Q", 1 << 40) + b"{}", "does not fit in the file"),
    (struct.pack("<Q", 2) + b"{}", "no tensor 'w'"),
    (struct.pack("<Q", 8) + b"not json", "not JSON"),
    (lambda: (lambda h: struct.pack("<Q", len(h)) + h)(
        b'{"w":{"dtype":"F32","shape":[1000],"data_offsets":[0,4000]}}'), "does not hold"),
    (lambda: (lambda h: struct.pack("<Q", len(h)) + h)(b'{"w":{"dtype":[],"shape":[0],"data_offsets":[0,0]}}'),
     "not a dtype's name"),
    (lambda: (lambda h: struct.pack("<Q", len(h)) + h)(      # once an internal error (OverflowError)
        b'{"w":{"dtype":"F32","shape":[18446744073709551616,0],"data_offsets":[0,0]}}'), "a size past int64"),
])
def test_malformed_files_are_located_errors(tmp_path, data, message):
    (tmp_path / "w.safetensors").write_bytes(data() if callable(data) else data)
    (tmp_path / "g.yaml").write_text("inputs:\n  w: {file: w.safetensors, key: w}\nnodes:\n  y: sum(w)\n")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "g.yaml")])
    assert result.exit_code == 2
    assert "g.yaml:2:" in result.output and message in result.output
