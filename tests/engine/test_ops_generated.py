"""Tests generated from the op registry: every op, every sample it declares."""
import pytest

import agrad
from agrad.ops import registered
from agrad.testing import gradcheck, gradgradcheck


def _cases(predicate=lambda info: True):
    for info in registered():
        if info.samples is None or not predicate(info):
            continue
        for sample in info.samples(info.name):
            yield pytest.param(info, sample, id=f"{info.name}-{sample.name}")


def _differentiable_args(sample):
    return [a for a in sample.args if isinstance(a, agrad.Tensor) and a.requires_grad]


def _call(info, sample):
    """`fn(*leaves)` rebuilding the sample's arguments, and the leaves: tensors that
    require grad, including those inside a Tensor[] argument (cat, stack)."""
    positions = [(i, j) for i, a in enumerate(sample.args)
                 for j, t in ([(None, a)] if not isinstance(a, (list, tuple)) else enumerate(a))
                 if isinstance(t, agrad.Tensor) and t.requires_grad]

    def fn(*tensors):
        args = [list(a) if isinstance(a, (list, tuple)) else a for a in sample.args]
        for (i, j), t in zip(positions, tensors):
            if j is None:
                args[i] = t
            else:
                args[i][j] = t
        if sample.gradcheck_wrapper is not None:
            out = sample.gradcheck_wrapper(info.entry.function, *args, **sample.kwargs)
        else:
            out = info.entry.function(*args, **sample.kwargs)
        return out if sample.output_process_fn_grad is None else sample.output_process_fn_grad(out)
    return fn, [sample.args[i] if j is None else sample.args[i][j] for i, j in positions]


@pytest.mark.parametrize("info,sample", list(_cases(lambda i: i.differentiable)))
def test_gradcheck(info, sample):
    fn, inputs = _call(info, sample)
    if not inputs:
        pytest.skip("no differentiable input in this sample")
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("info,sample", list(_cases(lambda i: i.differentiable and i.gradgrad)))
def test_gradgradcheck(info, sample):
    fn, inputs = _call(info, sample)
    if not inputs:
        pytest.skip("no differentiable input in this sample")
    if "ties" in sample.name:
        pytest.skip("not twice differentiable where values tie (the first derivative jumps there)")
    assert gradgradcheck(fn, inputs)


def _to_meta(x):
    if isinstance(x, agrad.Tensor):
        return x.detach().to("meta").requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], agrad.Tensor):
        return type(x)(_to_meta(t) for t in x)
    return x


@pytest.mark.parametrize("info,sample", list(_cases()))
def test_meta_matches_cpu(info, sample):
    """The Meta rule infers exactly the shapes and dtypes the CPU kernel produces."""
    if "dynamic_output_shape" in info.tags:       # masked_select: the shape depends on the values
        pytest.skip("output shape depends on the data")
    real = info.entry.function(*sample.args, **sample.kwargs)
    meta = info.entry.function(*[_to_meta(a) for a in sample.args],
                               **{k: _to_meta(v) for k, v in sample.kwargs.items()})
    reals = real if isinstance(real, tuple) else (real,)
    metas = meta if isinstance(meta, tuple) else (meta,)
    assert len(reals) == len(metas)
    for r, m in zip(reals, metas):
        assert m.device.type == "meta"
        assert tuple(m.shape) == tuple(r.shape)
        assert m.dtype == r.dtype
        assert m.requires_grad == r.requires_grad


@pytest.mark.parametrize("info,sample", list(_cases(lambda i: i.differentiable)))
def test_backward_on_meta(info, sample):
    """Backward formulas run on Meta too: gradient shapes are inferred without data."""
    if "dynamic_output_shape" in info.tags:
        pytest.skip("output shape depends on the data")
    args = [_to_meta(a) for a in sample.args]
    kwargs = {k: _to_meta(v) for k, v in sample.kwargs.items()}
    out = info.entry.function(*args, **kwargs)
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.requires_grad]
    flat = [t for a in args + list(kwargs.values()) for t in (a if isinstance(a, (list, tuple)) else [a])]
    leaves = [a for a in flat if isinstance(a, agrad.Tensor) and a.requires_grad]
    if not outs or not leaves:
        pytest.skip("nothing differentiable")
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
        assert "CompositeImplicitAutograd" in keys or {"CPU", "CUDA", "Meta"} <= keys, info.name
        if not info.differentiable:
            continue
        assert entry.has_backward or "CompositeImplicitAutograd" in keys, info.name
