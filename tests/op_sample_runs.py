"""Every op's samples run on another device, for the tests that compare a backend with the CPU
(tests/engine/test_ops_on_cuda.py, test_ops_on_dask.py): the same inputs moved, the op called,
and the gradients of its outputs that require grad."""
import pytest

import agrad
from agrad.ops import registered


def cases():
    """A pytest param per (op, sample) of every op that declares samples."""
    for info in registered():
        if info.samples is None:
            continue
        for sample in info.samples(info.name):
            yield pytest.param(info, sample, id=f"{info.name}-{sample.name}")


def moved(x, device):
    if isinstance(x, agrad.Tensor):
        return x.detach().to(device).requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], agrad.Tensor):
        return type(x)(moved(t, device) for t in x)
    if isinstance(x, str) and x == "cpu":      # a sample that names the device it moves to
        return device
    return x


def run(info, sample, device):
    """(outputs, gradients of the outputs that require grad, seeded with ones, w.r.t. the inputs that do)."""
    args = [moved(a, device) for a in sample.args]
    kwargs = {k: moved(v, device) for k, v in sample.kwargs.items()}
    out = info.entry.function(*args, **kwargs)
    outs = list(out) if isinstance(out, tuple) else [out]
    leaves = [t for a in args + list(kwargs.values())
              for t in (a if isinstance(a, (list, tuple)) else [a])
              if isinstance(t, agrad.Tensor) and t.requires_grad]
    roots = [o for o in outs if o.requires_grad]
    grads = []
    if roots and leaves:
        seeds = [agrad.ones_like(o) for o in roots]
        grads = list(agrad.autograd.grad(roots, leaves, seeds, allow_unused=True))
    return outs, grads
