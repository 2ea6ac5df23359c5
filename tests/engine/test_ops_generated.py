"""Tests generated from the op registry: every op, every sample it declares."""
import os

import pytest

import agrad
import op_sample_runs
from agrad.ops import registered
from agrad.testing import gradcheck, gradgradcheck

# Second derivatives are checked as PyTorch's own op tests check them by default (common_utils' gradcheck
# wrappers: fast_mode unless PYTORCH_TEST_WITH_SLOW_GRADCHECK): one projection v^T H u against finite
# differences of the first derivative, with random dense u and v, instead of every column (25 times the
# time on conv3d, grid_sampler_2d, max_pool3d ...). AGRAD_SLOW_GRADCHECK=1 checks every column. First
# derivatives are always checked column by column.
SLOW_GRADGRADCHECK = os.environ.get("AGRAD_SLOW_GRADCHECK", "") not in ("", "0")


@pytest.mark.parametrize("info,sample", list(op_sample_runs.cases(lambda i: i.differentiable)))
def test_gradcheck(info, sample):
    fn, inputs = op_sample_runs.as_function(info, sample)
    if not inputs:
        pytest.skip("no differentiable input in this sample")
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("info,sample", list(op_sample_runs.cases(lambda i: i.differentiable and i.gradgrad)))
def test_gradgradcheck(info, sample):
    fn, inputs = op_sample_runs.as_function(info, sample)
    if not inputs:
        pytest.skip("no differentiable input in this sample")
    if "ties" in sample.name:
        pytest.skip("not twice differentiable where values tie (the first derivative jumps there)")
    assert gradgradcheck(fn, inputs, fast_mode=not SLOW_GRADGRADCHECK)


def _to_meta(x):
    if isinstance(x, agrad.Tensor):
        return x.detach().to("meta").requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], agrad.Tensor):
        return type(x)(_to_meta(t) for t in x)
    return x


@pytest.mark.parametrize("info,sample", list(op_sample_runs.cases()))
def test_meta_matches_cpu_and_backward_runs_on_meta(info, sample):
    """The Meta rule infers exactly the shapes and dtypes the CPU kernel produces; and a differentiable op's
    backward formulas run on Meta too: gradient shapes are inferred without data. (One test for both: two
    per sample were 5,300 tests of about a millisecond each, most of it pytest's own.)"""
    if "dynamic_output_shape" in info.tags:       # masked_select: the shape depends on the values
        pytest.skip("output shape depends on the data")
    real = info.entry.function(*sample.args, **sample.kwargs)
    args = [_to_meta(a) for a in sample.args]
    kwargs = {k: _to_meta(v) for k, v in sample.kwargs.items()}
    meta = info.entry.function(*args, **kwargs)
    reals = real if isinstance(real, tuple) else (real,)
    metas = meta if isinstance(meta, tuple) else (meta,)
    assert len(reals) == len(metas)
    for r, m in zip(reals, metas):
        assert m.device.type == "meta"
        assert tuple(m.shape) == tuple(r.shape)
        assert m.dtype == r.dtype
        assert m.requires_grad == r.requires_grad
    if not info.differentiable:
        return
    outs = [m for m in metas if m.requires_grad]
    flat = [t for a in args + list(kwargs.values()) for t in (a if isinstance(a, (list, tuple)) else [a])]
    leaves = [a for a in flat if isinstance(a, agrad.Tensor) and a.requires_grad]
    if not outs or not leaves:
        return                                    # nothing differentiable in this sample
    grads = agrad.autograd.grad(outs, leaves, [agrad.ones_like(o) for o in outs], allow_unused=True)
    for leaf, g in zip(leaves, grads):
        if g is not None:
            assert g.shape == leaf.shape and g.device.type == "meta"


def test_every_op_is_declared_completely():
    for info in registered():
        entry = info.entry
        # `grad` differentiates a graph its caller builds: no fixed sample can express that;
        # tests/engine/test_grad_op.py covers it
        assert info.samples is not None or "autograd" in info.tags, f"{info.name} declares no samples"
        keys = set(entry.keys())
        assert keys & {"CompositeImplicitAutograd", "CompositeExplicitAutograd"} or {"CPU", "CUDA", "Meta"} <= keys, \
            info.name
        if not info.differentiable:
            continue
        assert entry.has_backward or "CompositeImplicitAutograd" in keys, info.name
