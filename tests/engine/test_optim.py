"""agrad.optim's contract beyond the arithmetic (test_optim_reference.py): parameter groups,
zero_grad, state_dict round trips, PyTorch's errors, schedulers' state."""
from __future__ import annotations

import numpy as np
import pytest

import agrad
import agrad.nn.utils
import agrad.optim
from agrad.optim import lr_scheduler

import optim_scenarios as S


def _fresh():
    W, b, x, y = S._params(agrad)
    return W, b, lambda: S._loss(agrad, W, b, x, y)


def _train(opt, loss_fn, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()


@pytest.mark.parametrize("cls,kwargs", [(agrad.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
                                        (agrad.optim.Adam, {"lr": 0.01, "amsgrad": True}),
                                        (agrad.optim.AdamW, {"lr": 0.01}),
                                        (agrad.optim.RMSprop, {"lr": 0.01, "centered": True, "momentum": 0.5}),
                                        (agrad.optim.Adagrad, {"lr": 0.1, "lr_decay": 0.1})])
def test_state_dict_round_trip_resumes_bit_for_bit(cls, kwargs):
    W, b, loss_fn = _fresh()
    opt = cls([W, b], **kwargs)
    _train(opt, loss_fn, 5)
    straight = (W.detach().numpy().copy(), b.detach().numpy().copy())

    W2, b2, loss_fn2 = _fresh()
    opt2 = cls([W2, b2], **kwargs)
    _train(opt2, loss_fn2, 2)
    saved = opt2.state_dict()
    assert sorted(saved["state"]) == [0, 1] and saved["param_groups"][0]["params"] == [0, 1]
    W3, b3, loss_fn3 = _fresh()
    with agrad.no_grad():
        W3.copy_(W2), b3.copy_(b2)
    opt3 = cls([W3, b3], **kwargs)
    opt3.load_state_dict(saved)
    # the loaded buffers are copies: stepping opt3 must not move opt2's state
    before = {k: v.numpy().copy() for k, v in opt2.state[W2].items()}
    _train(opt3, loss_fn3, 3)
    for k, v in opt2.state[W2].items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    np.testing.assert_array_equal(W3.detach().numpy(), straight[0])
    np.testing.assert_array_equal(b3.detach().numpy(), straight[1])


def test_adam_state_holds_torch_buffers():
    W, b, loss_fn = _fresh()
    opt = agrad.optim.Adam([W, b], amsgrad=True)
    assert len(opt.state) == 0
    _train(opt, loss_fn, 2)
    st = opt.state[W]
    assert set(st) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert st["step"].item() == 2.0 and st["step"].dtype == agrad.float32 and st["step"].shape == ()
    assert st["exp_avg"].shape == W.shape and not st["exp_avg"].requires_grad


def test_adagrad_state_exists_from_construction():
    W, b, _ = _fresh()
    opt = agrad.optim.Adagrad([W], initial_accumulator_value=0.5)
    np.testing.assert_array_equal(opt.state[W]["sum"].numpy(), np.full((4, 3), 0.5, np.float32))


def test_zero_grad_set_to_none_and_zeroes():
    W, b, loss_fn = _fresh()
    opt = agrad.optim.SGD([W, b], lr=0.1)
    loss_fn().backward()
    opt.zero_grad(set_to_none=False)
    assert W.grad is not None and not W.grad.numpy().any()
    loss_fn().backward()
    opt.zero_grad()
    assert W.grad is None and b.grad is None


def test_step_skips_parameters_without_grad_and_updates_under_no_grad():
    W, b, loss_fn = _fresh()
    b0 = b.detach().numpy().copy()
    opt = agrad.optim.Adam([W, b], lr=0.1)
    (W * W).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), b0)
    assert W.grad_fn is None and W.is_leaf and W.requires_grad and len(opt.state) == 1


def test_step_closure_returns_loss_computed_with_grad():
    W, b, loss_fn = _fresh()
    opt = agrad.optim.SGD([W, b], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.requires_grad and W.grad is not None


def test_param_groups_defaults_and_add_param_group():
    W, b, _ = _fresh()
    opt = agrad.optim.SGD([{"params": [W], "lr": 0.5}], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b})
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [W]})


@pytest.mark.parametrize("make,error,message", [
    (lambda W: agrad.optim.SGD(W, lr=0.1), TypeError,
     "params argument given to the optimizer should be an iterable of Tensors or dicts, but got agrad.Tensor"),
    (lambda W: agrad.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda W: agrad.optim.SGD([{"params": {W}}], lr=0.1), TypeError, "optimizer parameters need to be organized in ordered"),
    (lambda W: agrad.optim.SGD([W, 1.0], lr=0.1), TypeError,
     "optimizer can only optimize Tensors, but one of the params is float"),
    (lambda W: agrad.optim.SGD([W * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda W: agrad.optim.SGD([W], lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda W: agrad.optim.SGD([W], momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda W: agrad.optim.SGD([W], nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda W: agrad.optim.Adam([W], betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (lambda W: agrad.optim.Adam([W], betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
    (lambda W: agrad.optim.AdamW([W], eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda W: agrad.optim.RMSprop([W], alpha=-0.1), ValueError, "Invalid alpha value: -0.1"),
    (lambda W: agrad.optim.Adagrad([W], lr_decay=-0.1), ValueError, "Invalid lr_decay value: -0.1"),
    (lambda W: agrad.optim.Adagrad([W], weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
])
def test_pytorch_errors(make, error, message):
    W, _, _ = _fresh()
    with pytest.raises(error) as info:
        make(W)
    assert str(info.value).startswith(message)


def test_load_state_dict_checks_groups():
    W, b, _ = _fresh()
    saved = agrad.optim.SGD([W, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        agrad.optim.SGD([{"params": [W]}, {"params": [b]}], lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        agrad.optim.SGD([W], lr=0.1).load_state_dict(saved)


def test_adamw_keeps_decoupled_weight_decay_after_load():
    W, b, _ = _fresh()
    saved = agrad.optim.Adam([W], weight_decay=0.1).state_dict()
    opt = agrad.optim.AdamW([W])
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True and opt.param_groups[0]["weight_decay"] == 0.1


def test_scheduler_state_dict_and_closed_form():
    W, _, _ = _fresh()
    opt = agrad.optim.SGD([W], lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert state["last_epoch"] == 3 and "optimizer" not in state
    opt2 = agrad.optim.SGD([W], lr=1.0)
    sched2 = lr_scheduler.StepLR(opt2, step_size=10)
    sched2.load_state_dict(state)
    assert sched2.step_size == 2 and sched2.get_last_lr() == [0.5]
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched2.step(5)
    assert opt2.param_groups[0]["lr"] == 0.25 and opt.param_groups[0]["initial_lr"] == 1.0


def test_scheduler_errors():
    W, _, _ = _fresh()
    with pytest.raises(TypeError, match="int is not an Optimizer"):
        lr_scheduler.ExponentialLR(3, gamma=0.5)
    opt = agrad.optim.SGD([W], lr=1.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        lr_scheduler.LinearLR(opt, start_factor=0)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        lr_scheduler.LambdaLR(opt, [lambda e: 1.0, lambda e: 1.0])


def test_clip_grad_norm_edge_cases():
    W, b, _ = _fresh()
    assert agrad.nn.utils.clip_grad_norm_([W, b], 1.0).item() == 0.0      # no gradients: 0, nothing clipped
    W.grad = agrad.tensor(np.full((4, 3), float("nan"), np.float32))
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        agrad.nn.utils.clip_grad_norm_(W, 1.0, error_if_nonfinite=True)
    W.grad = agrad.full((4, 3), 0.01)
    total = agrad.nn.utils.clip_grad_norm_(W, 10.0)                      # below max_norm: unchanged
    assert abs(total.item() - 0.01 * 12 ** 0.5) < 1e-6
    np.testing.assert_allclose(W.grad.numpy(), 0.01, rtol=1e-6)
    agrad.nn.utils.clip_grad_value_(W, 0.004)
    np.testing.assert_array_equal(W.grad.numpy(), np.full((4, 3), 0.004, np.float32))


def test_torchs_implementation_switches_foreach_taken_the_others_refused():
    W, b, loss_fn = _fresh()
    W2, b2, loss_fn2 = _fresh()
    plain, foreach = agrad.optim.Adamax([W, b]), agrad.optim.Adamax([W2, b2], 2e-3, (0.9, 0.999), 1e-8, 0, True)
    _train(plain, loss_fn, 3)
    _train(foreach, loss_fn2, 3)
    np.testing.assert_array_equal(W.detach().numpy(), W2.detach().numpy())
    for make in (lambda: agrad.optim.NAdam([W], capturable=True), lambda: agrad.optim.ASGD([W], differentiable=True)):
        with pytest.raises(ValueError, match="=True is not supported; agrad runs torch's single-tensor step"):
            make()
    with pytest.raises(AttributeError, match="no SparseAdam: .* agrad has no sparse tensors"):
        agrad.optim.SparseAdam


def test_lbfgs_keeps_its_history_under_the_first_parameter_and_resumes():
    W, b, loss_fn = _fresh()

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    opt = agrad.optim.LBFGS([W, b], max_iter=4, history_size=3)
    first = opt.step(closure)
    state = opt.state_dict()["state"]
    assert list(state) == [0] and state[0]["func_evals"] == 4 and state[0]["n_iter"] == 4
    assert len(state[0]["old_dirs"]) == 3 and state[0]["al"][0] is not None
    assert opt.step(closure).item() < first.item()
