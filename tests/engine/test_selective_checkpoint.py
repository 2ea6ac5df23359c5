"""Selective activation checkpointing (torch.utils.checkpoint.create_selective_checkpoint_contexts, torch
2.13's semantics and messages): the policy sees each op call of the forward as an OpOverload, the outputs
it saves are handed back in the recomputation instead of running their op again."""
import functools
import gc
import weakref

import numpy as np
import pytest

import agrad
from agrad.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode
from agrad.utils.checkpoint import (CheckpointPolicy, SelectiveCheckpointContext, _CachedTorchDispatchMode,
                                    _CachingTorchDispatchMode, checkpoint, create_selective_checkpoint_contexts)

aten = agrad.ops.aten


class _Count(TorchDispatchMode):
    def __init__(self):
        self.funcs = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.funcs.append(func)
        return func(*args, **(kwargs or {}))


def _fn(x, y):
    return agrad.mm(x.cos(), y).sin().sum()


def _inputs():
    rng = np.random.default_rng(0)
    x = agrad.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    y = agrad.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    return x, y


def _backward_mm_calls(run):
    """(x.grad, y.grad, how many mm the backward ran): its two formulas' mm, plus any recomputed one."""
    x, y = _inputs()
    out = run(x, y)
    with _Count() as count:
        out.backward()
    return x.grad.numpy(), y.grad.numpy(), count.funcs.count(aten.mm.default)


def _analytic_grads():
    x, y = (t.detach().numpy() for t in _inputs())
    g = np.cos(np.cos(x) @ y)                 # d sum(sin(m)) / dm
    return -np.sin(x) * (g @ y.T), np.cos(x).T @ g


def _policy(ctx, op, *args, **kwargs):
    return CheckpointPolicy.MUST_SAVE if op == aten.mm.default else CheckpointPolicy.PREFER_RECOMPUTE


@pytest.mark.parametrize("context_fn", [
    functools.partial(create_selective_checkpoint_contexts, [aten.mm.default]),
    functools.partial(create_selective_checkpoint_contexts, _policy),
    functools.partial(create_selective_checkpoint_contexts, lambda ctx, op, *a, **k: op == aten.mm.default),
], ids=["op list", "policy", "bool policy"])
def test_saved_op_is_not_recomputed(context_fn):
    gx, gy = _analytic_grads()
    # no checkpoint: the backward's two mm; checkpoint: one more, recomputed; SAC saves mm: two again
    plain = _backward_mm_calls(_fn)
    full = _backward_mm_calls(lambda x, y: checkpoint(_fn, x, y, use_reentrant=False))
    sac = _backward_mm_calls(lambda x, y: checkpoint(_fn, x, y, use_reentrant=False, context_fn=context_fn))
    assert (plain[2], full[2], sac[2]) == (2, 3, 2)
    for grads in (plain, full, sac):
        np.testing.assert_allclose(grads[0], gx, rtol=1e-12)
        np.testing.assert_allclose(grads[1], gy, rtol=1e-12)


def test_policy_sees_each_forward_op_once_with_its_output():
    seen = []

    def policy(ctx, op, *args, **kwargs):
        assert isinstance(ctx, SelectiveCheckpointContext) and ctx.is_recompute is False
        seen.append((op, tuple(ctx.op_output.shape)))
        return CheckpointPolicy.PREFER_SAVE

    x, y = _inputs()
    out = checkpoint(_fn, x, y, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts, policy))
    out.backward()
    # only in the forward: every output is saved, so the recomputation runs nothing and asks nothing
    assert seen == [(aten.cos.default, (4, 4)), (aten.mm.default, (4, 4)), (aten.sin.default, (4, 4)),
                    (aten.sum.dim_IntList, ())]
    np.testing.assert_allclose(x.grad.numpy(), _analytic_grads()[0], rtol=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload but got: 2 of type "
                                         "<class 'int'>. $"):
        create_selective_checkpoint_contexts([2])
    with pytest.raises(ValueError, match="update the OpOverloadPacket to a specific OpOverload.For example, if "
                                         "you have `torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."):
        create_selective_checkpoint_contexts([aten.sin])
    with pytest.raises(TypeError, match="^policy_fn_or_list must be either a function or a list of ops.$"):
        create_selective_checkpoint_contexts(2)


def _sin_saved(ctx, op, *args, **kwargs):
    return CheckpointPolicy.MUST_SAVE if op == aten.sin.default else CheckpointPolicy.PREFER_RECOMPUTE


def test_saved_output_mutated_in_place_is_an_error_unless_allowed():
    def fn(x):
        return x.sin().mul_(2).cos().exp()

    x = agrad.randn(3, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts, _sin_saved))
    with pytest.raises(RuntimeError, match="^Tensor cached during selective activation checkpoint has been mutated"):
        out.sum().backward()

    x = agrad.tensor([0.1, 0.2, 0.3], dtype=agrad.float64, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False, context_fn=functools.partial(
        create_selective_checkpoint_contexts, _sin_saved, allow_cache_entry_mutation=True))
    out.sum().backward()
    assert x.grad is not None


def test_recompute_can_only_be_triggered_once():
    def fn(x):
        return x.sin().cos().exp()

    x = agrad.tensor([0.1, 0.2, 0.3], dtype=agrad.float64, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts, _sin_saved))
    out.sum().backward(retain_graph=True)
    xv = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), -np.exp(np.cos(np.sin(xv))) * np.sin(np.sin(xv)) * np.cos(xv),
                               rtol=1e-12)
    with pytest.raises(RuntimeError, match="^Trying to backward an extra time. You are only allowed to backward "
                                           "once on any region computed under selective activation checkpoint."):
        out.sum().backward(retain_graph=True)


def test_a_changed_recomputation_is_named():
    calls = [0]

    def fn(x):
        calls[0] += 1
        y = x.sin() if calls[0] == 1 else x.tan()       # not what the forward ran
        return y.cos()

    x = agrad.randn(3, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts, _sin_saved))
    with pytest.raises(RuntimeError, match="^aten.tan.default encountered during backward but not found in "
                                           "storage. This can happen if the operations"):
        out.sum().backward()


def test_storage_holds_no_graph_and_is_dropped_once_consumed():
    ref = None

    def fn(x):
        nonlocal ref
        mode = _get_current_dispatch_mode()
        assert isinstance(mode, (_CachingTorchDispatchMode, _CachedTorchDispatchMode))
        out = x.cos().exp()
        if isinstance(mode, _CachingTorchDispatchMode):
            raw = mode.storage[aten.exp.default][0].val
            assert not raw.requires_grad           # detached: no graph -> hooks -> storage -> graph cycle
            ref = weakref.ref(raw)
        return out.sin()

    everything = functools.partial(create_selective_checkpoint_contexts, lambda ctx, op, *a, **k: True)
    gc.disable()
    try:
        out = checkpoint(fn, agrad.randn(3, requires_grad=True), use_reentrant=False, context_fn=everything)
        assert ref() is not None
        del out
        assert ref() is None
        out = checkpoint(fn, agrad.randn(3, requires_grad=True), use_reentrant=False, context_fn=everything)
        out.sum().backward(retain_graph=True)
        assert ref() is None
    finally:
        gc.enable()


def test_integer_view_saved_by_policy():
    # torch's test_output_already_has_autograd_meta: a view of an integer tensor saved, handed back once
    def fn(x, y):
        return x.view(-1), y.sin().cos()

    x = agrad.tensor([1, 2, 3])
    y = agrad.tensor([0.1, 0.2, 0.3], dtype=agrad.float64, requires_grad=True)
    out = checkpoint(fn, x, y, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts, [aten.view.default]))
    out[1].sum().backward()
    np.testing.assert_array_equal(out[0].numpy(), [1, 2, 3])
    yv = y.detach().numpy()
    np.testing.assert_allclose(y.grad.numpy(), -np.sin(np.sin(yv)) * np.cos(yv), rtol=1e-12)
