"""agrad.amp.GradScaler and its two ops against torch 2.13's (tests/reference/amp_scenarios.json): a training
trajectory with overflowing steps (scale, growth tracker, skipped steps, parameters), the API and its errors, and
_amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_ with their checks; CUDA through the stand-in."""
from __future__ import annotations

import json
import math
import pickle
import sys
import warnings
from pathlib import Path

import pytest

import agrad

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
sys.path.insert(0, str(REFERENCE))
import amp_scenarios  # noqa: E402

RECORDED = json.loads((REFERENCE / "amp_scenarios.json").read_text())


@pytest.mark.parametrize("name", ["grad_scaler_trajectory", "grad_scaler_api", "amp_kernels"])
def test_scenario_matches_torch(name):
    got = json.loads(json.dumps(amp_scenarios.SCENARIOS[name](agrad)))
    assert got == RECORDED["scenarios"][name]


def test_trajectory_skips_exactly_the_overflowing_steps():
    steps = RECORDED["scenarios"]["grad_scaler_trajectory"]["steps"]
    assert [s["skipped"] for s in steps] == [False, False, True, False, False, True, False]
    assert steps[2]["w"] == steps[1]["w"] and steps[5]["w"] == steps[4]["w"]      # parameters left alone


def test_cuda_scaler_without_a_gpu_warns_and_disables():
    if agrad.cuda.is_available():
        pytest.skip("a GPU is here")
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."):
        scaler = agrad.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0


@pytest.mark.usefixtures("standin_cuda")
def test_cuda_scaler_with_autocast_trains_in_float16_and_unscales():
    w = agrad.tensor([[0.5, -1.0], [2.0, 0.25]], device="cuda", requires_grad=True)
    opt = agrad.optim.SGD([w], lr=0.1)
    scaler = agrad.amp.GradScaler("cuda", init_scale=256.0)
    x = agrad.tensor([[1.0, 2.0], [3.0, -1.0]], device="cuda")
    with agrad.autocast("cuda"):
        y = x @ w
        loss = agrad.nn.functional.mse_loss(y, agrad.zeros_like(y))
    assert y.dtype is agrad.float16 and loss.dtype is agrad.float32
    scaler.scale(loss).backward()
    assert scaler._scale.device.type == "cuda"
    scaler.unscale_(opt)
    expected = (x.t() @ (2 * y.float() / 4)).cpu()
    assert agrad.allclose(w.grad.cpu(), expected, atol=1e-2)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 256.0 and scaler._get_growth_tracker() == 1


def test_pickled_between_iterations_only():
    w = agrad.ones(2, requires_grad=True)
    opt = agrad.optim.SGD([w], lr=0.1)
    scaler = agrad.amp.GradScaler("cpu", init_scale=16.0)
    scaler.scale(w.sum()).backward()
    scaler.step(opt)
    with pytest.raises(AssertionError, match="may only be pickled"):
        pickle.dumps(scaler)
    scaler.update()
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.get_scale() == 16.0 and clone._scale is None


def test_cpu_amp_grad_scaler_is_deprecated():
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.GradScaler\(args...\)` is deprecated"):
        assert agrad.cpu.amp.GradScaler().is_enabled()


def test_update_scale_keeps_a_scale_whose_growth_overflows():
    s, t = agrad.full((), 2e38), agrad.ones((), dtype=agrad.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no overflow warning escapes
        agrad._amp_update_scale_(s, t, agrad.zeros(()), 2.0, 0.5, 2)
    assert s.item() == pytest.approx(2e38, rel=1e-6) and t.item() == 0 and math.isfinite(s.item())
