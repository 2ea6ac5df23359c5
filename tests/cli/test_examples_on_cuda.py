"""Every example graph run on a real GPU (CuPy) gives the CPU's outputs and gradients.

Skipped where CuPy finds no GPU (CI has none); the stand-in backend covers the CUDA
code paths everywhere (tests/engine/test_ops_on_cuda.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agrad.cli.main import cli
from gpu import requires_gpu

EXAMPLES = sorted((Path(__file__).parents[2] / "graphs" / "examples").glob("*.yaml"))
# float32 graphs reduce in another order on a GPU (cuBLAS, CuPy's reductions)
TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (1e-4, 1e-5)}


pytestmark = requires_gpu


def _run(runner, path, *extra):
    result = runner.invoke(cli, ["run", str(path), "--format", "json", *extra])
    assert result.exit_code in (0, 1), result.output + result.stderr     # 1: a failed `expect`
    return json.loads(result.stdout)


def _values(section):
    return {name: (np.asarray(entry["value"], dtype=float), entry["dtype"]) for name, entry in section.items()
            if entry.get("value") is not None}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_on_gpu_equals_cpu(runner, path):
    cpu = _run(runner, path)
    gpu = _run(runner, path, "--device", "cuda")
    assert gpu["device"].startswith("cuda")
    assert gpu["expect"]["passed"] == cpu["expect"]["passed"]
    for section in ("outputs", "grads"):
        want, got = _values(cpu[section]), _values(gpu[section])
        assert want.keys() == got.keys()
        for name, (value, dtype) in want.items():
            rtol, atol = TOLERANCE.get(dtype, (1e-4, 1e-5))
            np.testing.assert_allclose(got[name][0], value, rtol=rtol, atol=atol, err_msg=f"{section} {name}")
