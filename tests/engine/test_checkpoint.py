"""agrad.utils.checkpoint: gradients through a checkpointed function equal those without it (both
variants), the recomputations it runs, the generator state it restores, and PyTorch's warnings
and errors (torch/utils/checkpoint.py, test/test_autograd.py's checkpoint tests)."""
import re
import warnings

import numpy as np
import pytest

import agrad
import agrad.utils.checkpoint as cp
from agrad.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

BOTH = pytest.mark.parametrize("use_reentrant", [True, False])


def _leaves(*arrays):
    return [agrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]


def _f(x, y):
    return ((x.sin() * y).exp() + x * y).sum()


@BOTH
def test_gradients_equal_the_unchecked_ones(use_reentrant):
    xs = [[0.3, -1.2, 2.0], [1.5, 0.25, -0.5]]
    x, y = _leaves(*xs)
    out = checkpoint(_f, x, y, use_reentrant=use_reentrant)
    out.backward()
    x0, y0 = _leaves(*xs)
    ref = _f(x0, y0)
    ref.backward()
    assert out.item() == ref.item()
    np.testing.assert_array_equal(x.grad.numpy(), x0.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), y0.grad.numpy())
    assert out.grad_fn is not None
    if use_reentrant:
        assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"


@BOTH
def test_function_runs_once_more_in_backward(use_reentrant):
    calls = []

    def fn(x):
        calls.append(1)
        return x.sin().cos()

    x, = _leaves([1.0, 2.0])
    out = checkpoint(fn, x, use_reentrant=use_reentrant)
    assert len(calls) == 1
    out.sum().backward()
    assert len(calls) == 2


def test_non_reentrant_backward_twice_with_retain_graph_recomputes_each_time():
    calls = []

    def fn(x):
        calls.append(1)
        return x.exp().sin()

    x, = _leaves([0.5])
    out = checkpoint(fn, x, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    first = x.grad.numpy().copy()
    out.sum().backward()
    assert len(calls) == 3
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=0, atol=0)


@BOTH
def test_dropout_is_recomputed_with_the_forward_generator_state(use_reentrant):
    agrad.manual_seed(7)
    drop = agrad.nn.Dropout(0.5)
    x = agrad.ones(64, dtype=agrad.float64, requires_grad=True)
    out = checkpoint(lambda t: drop(t) * t, x, use_reentrant=use_reentrant)
    out.sum().backward()
    # d(drop(x) * x)/dx = 2 * drop(x) for x = 1: the mask drawn again is the forward's
    np.testing.assert_array_equal(x.grad.numpy(), 2 * out.detach().numpy())
    assert 0 < (out.detach().numpy() == 0).sum() < 64


def test_preserve_rng_state_false_draws_a_new_mask():
    agrad.manual_seed(3)
    drop = agrad.nn.Dropout(0.5)
    x = agrad.ones(256, dtype=agrad.float64, requires_grad=True)
    out = checkpoint(lambda t: drop(t) * t, x, use_reentrant=True, preserve_rng_state=False)
    out.sum().backward()
    assert not np.array_equal(x.grad.numpy(), 2 * out.detach().numpy())


def test_recomputation_leaves_the_callers_generator_state_alone():
    agrad.manual_seed(11)
    x, = _leaves(np.ones(8))
    out = checkpoint(lambda t: agrad.nn.functional.dropout(t, 0.5, True) * t, x, use_reentrant=False)
    expected_next = agrad.rand(4)
    agrad.manual_seed(11)
    out2 = checkpoint(lambda t: agrad.nn.functional.dropout(t, 0.5, True) * t, x, use_reentrant=False)
    out2.sum().backward()           # recomputes: draws again, under fork_rng
    np.testing.assert_array_equal(agrad.rand(4).numpy(), expected_next.numpy())
    del out


def test_rng_state_round_trip_and_fork_rng():
    agrad.manual_seed(5)
    state = agrad.get_rng_state()
    assert state.dtype == agrad.uint8
    a = agrad.rand(6).numpy()
    agrad.set_rng_state(state)
    np.testing.assert_array_equal(agrad.rand(6).numpy(), a)
    with agrad.random.fork_rng():
        agrad.rand(100)
    after = agrad.rand(3).numpy()
    agrad.set_rng_state(state)
    agrad.rand(6)
    np.testing.assert_array_equal(agrad.rand(3).numpy(), after)
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):     # PyTorch's messages
        agrad.set_rng_state(agrad.zeros(37))
    with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got int"):
        agrad.set_rng_state(5)


def test_non_reentrant_works_with_autograd_grad_and_kwargs():
    def fn(a, blah=None):
        out = a.sin().exp()
        if blah is not None:
            out = out * blah
        return out.sin().exp()

    a, b = _leaves(2.0, 3.0)
    got = agrad.autograd.grad(checkpoint(fn, a, blah=b, use_reentrant=False), (a, b))
    want = agrad.autograd.grad(fn(a, blah=b), (a, b))
    for g, w in zip(got, want):
        assert g.item() == w.item()


def test_non_tensor_inputs_and_outputs_pass_through():
    def fn(k, a, b, f):
        return f(k * a * b.exp()), 1, "abcd"

    a, b = _leaves(2.0, 3.0)
    for use_reentrant in (True, False):
        out, one, s = checkpoint(fn, 3, a, b, agrad.sin, use_reentrant=use_reentrant)
        assert (one, s) == (1, "abcd")
        a.grad = b.grad = None
        out.backward()
        ga, gb = agrad.autograd.grad(fn(3, a, b, agrad.sin)[0], (a, b))
        assert a.grad.item() == ga.item() and b.grad.item() == gb.item()


def test_nested_checkpoints_give_the_plain_second_derivative():
    def c(fn):
        return lambda *args: checkpoint(fn, *args, use_reentrant=False)

    def grad(fn):
        def wrapper(x):
            with agrad.enable_grad():
                (g,) = agrad.autograd.grad(fn(x), (x,), create_graph=True)
            return g
        return wrapper

    def f(x):
        return x.sin().exp().sin()

    x, = _leaves(0.7)
    want = grad(grad(f))(x).item()
    for fn in (grad(c(grad(f))), c(grad(grad(c(f)))), grad(c(grad(c(f))))):
        assert fn(x).item() == pytest.approx(want, rel=1e-14)


def test_early_stop_and_set_checkpoint_early_stop():
    counter = [0]

    def clone(x):
        counter[0] += 1
        return x.clone()

    def fn(x):
        return clone(x.sin().cos())     # clone saves nothing: not reached when stopping early

    def run(**kwargs):
        counter[0] = 0
        a, = _leaves(1.0)
        checkpoint(fn, a, use_reentrant=False, **kwargs).backward()
        return counter[0]

    assert run() == 1
    assert run(early_stop=False) == 2
    with cp.set_checkpoint_early_stop(False):       # read when the forward runs, overrides early_stop
        a, = _leaves(1.0)
        counter[0] = 0
        out = checkpoint(fn, a, use_reentrant=False, early_stop=True)
    out.backward()
    assert counter[0] == 2


def test_determinism_check_reports_different_metadata():
    state = [False]

    def fn(x):
        state[0] = not state[0]         # the recomputation takes the other branch
        return x.sin() if state[0] else x.reshape(1, 2).sin()

    x, = _leaves([1.0, 2.0])
    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match=re.escape(
            "Recomputed values for the following tensors have different metadata")):
        out.sum().backward()
    # with determinism_check="none" nothing is compared
    state[0] = False
    x, = _leaves([1.0, 2.0])
    out = checkpoint(fn, x, use_reentrant=False, determinism_check="none")
    out.sum().backward()


def test_determinism_check_reports_a_different_number_of_saved_tensors():
    state = [0]

    def fn(x):
        state[0] += 1
        return x.sin().cos() if state[0] == 1 else x.clone()

    x, = _leaves([1.0])
    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        out.sum().backward()


def test_debug_error_shows_the_ops_of_both_runs():
    state = [0]

    def fn(x):
        state[0] += 1
        return x.sin().cos() if state[0] == 1 else x.exp()

    x, = _leaves([1.0])
    out = checkpoint(fn, x, use_reentrant=False, debug=True)
    with pytest.raises(CheckpointError) as info:
        out.sum().backward()
    text = str(info.value)
    assert "You are seeing this error because you passed `debug=True` to checkpoint" in text
    forward_ops, recompute_ops = text.split("Operations executed during recomputation:")
    assert "aten.cos" in forward_ops.split("Operations executed during the original forward:")[1]
    assert "aten.exp" in recompute_ops.split("+---")[0]
    # each op with the user's frames that called it, agrad's own left out
    traces = text.split("|        2. Stack traces of the operators that ran during recomputation")[0]
    assert f"{__file__}:" in traces and ":fn\n" in traces
    assert "/dispatcher/" not in traces


def test_determinism_check_value_is_checked():
    x, = _leaves([1.0])
    with pytest.raises(ValueError, match=r"determinism_check should be one of \['default', 'none'\], but got x"):
        checkpoint(agrad.sin, x, use_reentrant=False, determinism_check="x")


def test_unpacking_twice_is_refused():
    class Twice(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x.sin())
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            ctx.saved_tensors
            return g

    x, = _leaves([1.0])
    out = checkpoint(Twice.apply, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="Unpack is being triggered for a tensor that was already unpacked once"):
        out.sum().backward()


def test_missing_use_reentrant_warns_and_runs_reentrant():
    x, = _leaves([1.0])
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly") as record:
        out = checkpoint(agrad.sin, x)
    assert len(record) == 1
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(agrad.sin, x, use_reentrant=False)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential([agrad.sin, agrad.cos], 2, x)


def test_reentrant_refuses_autograd_grad_and_backward_inputs():
    x, = _leaves([1.0, 2.0])
    message = "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad()"
    with pytest.raises(RuntimeError, match=re.escape(message)):
        agrad.autograd.grad(checkpoint(agrad.exp, x, use_reentrant=True).sum(), x)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        checkpoint(agrad.exp, x, use_reentrant=True).sum().backward(inputs=[x])
    # the failed pass leaves nothing behind: a plain backward works
    checkpoint(agrad.exp, x, use_reentrant=True).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.exp([1.0, 2.0]))


def test_reentrant_argument_errors_and_warnings():
    x, = _leaves([1.0])
    with pytest.raises(ValueError, match="Unexpected keyword arguments: blah"):
        checkpoint(lambda a, blah=None: a, x, blah=1, use_reentrant=True)
    with pytest.raises(ValueError, match="Passing `context_fn` or `debug` is only supported when use_reentrant=False."):
        checkpoint(agrad.sin, x, use_reentrant=True, debug=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"):
        out = checkpoint(agrad.sin, agrad.ones(2), use_reentrant=True)
    assert not out.requires_grad


def test_reentrant_without_any_output_requiring_grad_raises_in_backward():
    x, = _leaves([1.0])
    out = checkpoint(lambda t: t.detach() * 2, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="none of output has requires_grad=True, this checkpoint\\(\\) is not necessary"):
        out.sum().backward()


def test_context_fn_runs_forward_and_recomputation_under_its_contexts():
    entered = []

    class Mark:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False

    x, = _leaves([1.0])
    out = checkpoint(agrad.sin, x, use_reentrant=False, context_fn=lambda: (Mark("forward"), Mark("recompute")))
    out.sum().backward()
    assert entered == ["forward", "recompute"]


@BOTH
def test_checkpoint_sequential_matches_the_plain_run(use_reentrant):
    agrad.manual_seed(0)
    model = agrad.nn.Sequential(agrad.nn.Linear(4, 4), agrad.nn.Tanh(), agrad.nn.Linear(4, 4),
                                agrad.nn.Tanh(), agrad.nn.Linear(4, 2))
    data = agrad.randn(3, 4)
    x = data.clone().requires_grad_()
    out = checkpoint_sequential(model, 2, x, use_reentrant=use_reentrant)
    out.sum().backward()
    got = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    model.zero_grad()
    x0 = data.clone().requires_grad_()
    ref = model(x0)
    ref.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    for g, w in zip(got, [p.grad.numpy() for p in model.parameters()] + [x0.grad.numpy()]):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(model, 2, x, use_reentrant=use_reentrant, foo=1)


def test_graph_exec_group_recomputes_once_for_several_backwards():
    counter = [0]

    def fn(x):
        counter[0] += 1
        y = x.sin().cos()
        z = y.sin().cos()
        return y, z

    x, = _leaves([1.0, 2.0])
    y, z = checkpoint(fn, x, use_reentrant=False)
    with cp.GraphExecGroup():
        agrad.autograd.grad(z.sum(), y, retain_graph=True)
        agrad.autograd.grad(y.sum(), x)
    assert counter[0] == 2
    with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
        with cp.GraphExecGroup(), cp.GraphExecGroup():
            pass


def test_checkpoint_valid_and_graph_task_id_outside_backward():
    assert agrad.autograd._is_checkpoint_valid() is True
    assert agrad.autograd._current_graph_task_id() == -1
    ids = []

    class Probe(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            ids.append((agrad.autograd._current_graph_task_id(), agrad.autograd._is_checkpoint_valid()))
            return g

    x, = _leaves([1.0])
    Probe.apply(x).sum().backward()
    Probe.apply(x).sum().backward()
    agrad.autograd.grad(Probe.apply(x).sum(), x)
    assert ids[0][0] != ids[1][0] and ids[0][0] >= 0
    assert [valid for _, valid in ids] == [True, True, False]
