"""Example graphs with --device cuda, on the stand-in GPU backend: the whole run path
(leaves on the device, CUDA kernels, the device worker thread, results copied back)."""
from pathlib import Path

import numpy as np
import pytest

from agrad import graphs


EXAMPLES = Path(__file__).resolve().parents[2] / "graphs" / "examples"


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_example_on_cuda_matches_cpu(standin_cuda, example):
    cpu = graphs.load(EXAMPLES / example).run()
    cuda = graphs.load(EXAMPLES / example, device="cuda").run()
    assert cuda.device == "cuda:0"
    result = cuda.result()
    assert result.expect.passed, result.expect.failures
    for name, t in cpu.grads.items():
        if t is not None:
            assert cuda.grads[name].device.type == "cuda"
            np.testing.assert_allclose(cuda.grads[name].cpu().numpy(), t.numpy(), rtol=1e-6)


def test_anomaly_and_save_on_cuda(standin_cuda, tmp_path):
    run = graphs.load(EXAMPLES / "seed.yaml", device="cuda").run(anomaly=True)
    assert not run.anomalies
    graphs.save_npz(run, tmp_path / "out.npz")
    saved = np.load(tmp_path / "out.npz")
    assert float(saved["grads/a"]) == 4.0
