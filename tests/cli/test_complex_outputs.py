"""A graph whose values are complex on the way (fft_rfft, then abs): `run`'s JSON writes a complex
tensor as its real and imaginary parts (JSON has no complex numbers), the text shows it as NumPy and
Python print one, and `check` compares a complex output as its real and imaginary parts."""
from __future__ import annotations

import json

import numpy as np

from agrad.cli.main import cli

SPECTRAL = """\
name: spectral
dtype: float64
inputs:
  x: {shape: [8], init: normal, seed: 1, requires_grad: true}
nodes:
  X: fft_rfft(x)
  z: sum(X)
  loss: sum(abs(X))
outputs: [X, z, loss]
backward: loss
"""


def _graph(tmp_path, text=SPECTRAL):
    path = tmp_path / "spectral.yaml"
    path.write_text(text)
    return str(path)


def test_run_json_writes_complex_values_as_their_parts(runner, tmp_path):
    result = runner.invoke(cli, ["run", _graph(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    X = doc["outputs"]["X"]
    assert X["dtype"] == "complex128" and X["shape"] == [5]
    assert "summary" not in X                   # min/max/mean are a float tensor's
    values = np.array(X["value"]["real"]) + 1j * np.array(X["value"]["imag"])
    grads = doc["grads"]["x"]
    assert grads["dtype"] == "float64"
    # d/dx sum |rfft(x)|, from the values the run reported: Re(conj(sign(X)) e^{-2πikn/8}) summed over k
    n, k = np.arange(8), np.arange(5)
    phase = np.exp(-2j * np.pi * np.outer(k, n) / 8)
    expected = (np.conj(values / np.abs(values))[:, None] * phase).real.sum(0)
    np.testing.assert_allclose(grads["value"], expected, rtol=1e-12, atol=1e-12)
    z = doc["outputs"]["z"]["value"]
    assert set(z) == {"real", "imag"}
    np.testing.assert_allclose(z["real"] + 1j * z["imag"], values.sum(), rtol=1e-12)


def test_run_text_prints_a_complex_scalar_as_python_does(runner, tmp_path):
    result = runner.invoke(cli, ["run", _graph(tmp_path)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if line.startswith("z "))
    assert "complex128" in line and "j)" in line and ".0j" not in line


def test_check_compares_complex_outputs_by_their_parts(runner, tmp_path):
    result = runner.invoke(cli, ["check", _graph(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["passed"] and doc["skipped_outputs"] == []
