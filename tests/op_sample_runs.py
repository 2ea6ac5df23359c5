"""Every op's samples run on another device, for the tests that compare a backend with the CPU
(tests/engine/test_ops_on_cuda.py, test_ops_on_dask.py): the same inputs moved, the op called,
and the gradients of its outputs that require grad."""
import pytest

import agrad
from agrad.ops import registered


def cases(predicate=lambda info: True):
    """A pytest param per (op, sample) of every op that declares samples (and meets `predicate`)."""
    for info in registered():
        if info.samples is None or not predicate(info):
            continue
        for sample in info.samples(info.name):
            yield pytest.param(info, sample, id=f"{info.name}-{sample.name}")


def as_function(info, sample, takes=lambda t: t.requires_grad):
    """`fn(*inputs)` calling the op with the sample's arguments, the tensors that `takes` picks
    (those that require grad, by default, including those inside a Tensor[] argument: cat, stack)
    replaced by its arguments; and those tensors."""
    positions = [(i, j) for i, a in enumerate(sample.args)
                 for j, t in ([(None, a)] if not isinstance(a, (list, tuple)) else enumerate(a))
                 if isinstance(t, agrad.Tensor) and takes(t)]

    def fn(*tensors):
        args = [list(a) if isinstance(a, (list, tuple)) else a for a in sample.args]
        for (i, j), t in zip(positions, tensors):
            if j is None:
                args[i] = t
            else:
                args[i][j] = t
        # PyTorch OpInfo's hooks: the op on a transformed input (eigh of A + Aᵀ), its output reduced to
        # what is well defined (|U| of an svd)
        if sample.gradcheck_wrapper is not None:
            out = sample.gradcheck_wrapper(info.entry.function, *args, **sample.kwargs)
        else:
            out = info.entry.function(*args, **sample.kwargs)
        return out if sample.output_process_fn_grad is None else sample.output_process_fn_grad(out)
    return fn, [sample.args[i] if j is None else sample.args[i][j] for i, j in positions]


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
    # (differentiated through the sample's output_process_fn_grad, as PyTorch's OpInfo tests: a loss of
    # eigenvectors must not depend on their phases, which linalg_eig_backward checks)
    processed = sample.output_process_fn_grad(out) if sample.output_process_fn_grad is not None else out
    processed = list(processed) if isinstance(processed, tuple) else [processed]
    roots = [o for o in processed if isinstance(o, agrad.Tensor) and o.requires_grad]
    grads = []
    # (an op without a derivative may still record a Node whose backward refuses, as PyTorch's
    # NotImplemented: native_channel_shuffle)
    if roots and leaves and info.differentiable:
        seeds = [agrad.ones_like(o) for o in roots]
        grads = list(agrad.autograd.grad(roots, leaves, seeds, allow_unused=True))
    return outs, grads
