"""Every op's samples on the stand-in CUDA backend: its CUDA kernels, device checks and
the engine's device worker thread, against the same samples on the CPU."""
import numpy as np
import pytest

import agrad
from agrad.ops import registered



def _cases():
    for info in registered():
        if info.samples is None:
            continue
        for sample in info.samples(info.name):
            yield pytest.param(info, sample, id=f"{info.name}-{sample.name}")


def _moved(x, device):
    if isinstance(x, agrad.Tensor):
        return x.detach().to(device).requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], agrad.Tensor):
        return type(x)(_moved(t, device) for t in x)
    if isinstance(x, str) and x == "cpu":      # a sample that names the device it moves to
        return device
    return x


def _run(info, sample, device):
    args = [_moved(a, device) for a in sample.args]
    kwargs = {k: _moved(v, device) for k, v in sample.kwargs.items()}
    out = info.entry.function(*args, **kwargs)
    outs = list(out) if isinstance(out, tuple) else [out]
    leaves = [t for a in args + list(kwargs.values())
              for t in (a if isinstance(a, (list, tuple)) else [a])
              if isinstance(t, agrad.Tensor) and t.requires_grad]
    roots = [o for o in outs if o.requires_grad]
    grads = []
    if roots and leaves:
        seeds = [agrad.ones_like(o) for o in roots]
        grads = agrad.autograd.grad(roots, leaves, seeds, allow_unused=True)
    return outs, grads


@pytest.mark.parametrize("info,sample", list(_cases()))
def test_cuda_matches_cpu(standin_cuda, info, sample):
    cpu_outs, cpu_grads = _run(info, sample, "cpu")
    cuda_outs, cuda_grads = _run(info, sample, "cuda")
    for c, g in zip(cpu_outs, cuda_outs):
        assert g.device.type == "cuda" and g.dtype == c.dtype and g.shape == c.shape
        np.testing.assert_allclose(np.asarray(g.detach().cpu().numpy()), c.detach().numpy(), rtol=1e-12, atol=0)
    for c, g in zip(cpu_grads, cuda_grads):
        assert (c is None) == (g is None)
        if c is not None:
            assert g.device.type == "cuda"
            np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=1e-12, atol=0)
