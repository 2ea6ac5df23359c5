"""agrad.fft, stft and istft as PyTorch 2.13's (engine/ops/spectral.py, short_time_fourier.py, engine/fft.py).

The scenarios of tests/reference/fft_scenarios.py run here with agrad and are compared with what PyTorch
answered (fft_scenarios.json, written by make_fft_reference.py): every transform's values, dtypes,
grad_fn names and gradients, with n / s / dim / norm varied, integer promotion, float32, shifts and
frequencies, stft and istft with their options, forward-mode tangents, errors and warnings. The
gradients are also checked against finite differences here, complex inputs and outputs included
(the op samples' gradcheck and gradgradcheck run in tests/engine/test_ops_generated.py). This file
never imports torch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import agrad
import scenario_fixtures
from agrad.ops.samples import make_arg
from agrad.testing import gradcheck, gradgradcheck

SCENARIOS, RECORDED = scenario_fixtures.scenarios_beside("fft_scenarios")


def test_the_recording_covers_every_scenario():
    scenario_fixtures.check_fixture(RECORDED, SCENARIOS, "make_fft_reference.py")


@pytest.mark.parametrize("label", sorted(SCENARIOS))
def test_scenario_matches_pytorch(label):
    # (PyTorch's FFTs are MKL's or pocketfft's, NumPy's pocketfft: the same sums in another order)
    rtol, atol = (1e-5, 1e-5) if label.startswith("f32_") else (1e-10, 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = scenario_fixtures.run(SCENARIOS[label])
    scenario_fixtures.compare(got, RECORDED["scenarios"][label], [label], rtol=rtol, atol=atol)


def _leaf(*shape, dtype=agrad.float64, seed=0):
    # (reproducible without touching the global generator, as the op samples are)
    return make_arg(shape, key=("test_fft", seed), dtype=dtype)


_C = agrad.complex128
F = agrad.fft


@pytest.mark.parametrize("name,fn,x", [
    ("fft real, ortho", lambda x: F.fft(x, n=7, norm="ortho"), _leaf(5)),
    ("ifft complex, forward", lambda x: F.ifft(x, n=4, norm="forward"), _leaf(6, dtype=_C)),
    ("rfft dim 0", lambda x: F.rfft(x, dim=0), _leaf(5, 3)),
    ("irfft n odd", lambda x: F.irfft(x, n=7), _leaf(2, 4, dtype=_C)),
    ("hfft", lambda x: F.hfft(x, norm="ortho"), _leaf(5, dtype=_C)),
    ("ihfft", lambda x: F.ihfft(x, n=6), _leaf(3, 5)),
    ("fft2 real", lambda x: F.fft2(x), _leaf(3, 4)),
    ("ifftn complex, s", lambda x: F.ifftn(x, s=[2, 5]), _leaf(3, 4, dtype=_C)),
    ("rfftn 3-d", lambda x: F.rfftn(x, norm="forward"), _leaf(2, 3, 4)),
    ("irfft2", lambda x: F.irfft2(x, s=[3, 5]), _leaf(3, 3, dtype=_C)),
    ("hfftn", lambda x: F.hfftn(x, dim=[1, 0]), _leaf(3, 4, dtype=_C)),
    ("ihfft2", lambda x: F.ihfft2(x, norm="ortho"), _leaf(4, 5)),
    ("fftshift", lambda x: F.ifftshift(F.fftshift(x, dim=1) * 2, dim=0), _leaf(3, 5, dtype=_C)),
])
def test_gradients_match_finite_differences(name, fn, x):
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_stft_and_istft_gradients_reach_signal_and_window():
    x, w = _leaf(2, 13), agrad.hamming_window(6, dtype=agrad.float64).requires_grad_()
    assert gradcheck(lambda x, w: agrad.stft(x, 6, 2, window=w, return_complex=True), (x, w))
    s = _leaf(4, 7, dtype=_C, seed=1)
    assert gradcheck(lambda s, w: agrad.istft(s, 6, 2, window=w, length=14), (s, w))
    c = _leaf(11, dtype=_C, seed=2)
    assert gradcheck(lambda c, w: c.stft(6, 3, 5, w[:5], pad_mode="constant"), (c, w))


def test_forward_mode_gradcheck():
    x = _leaf(6)
    assert gradcheck(lambda x: F.rfft(x, norm="ortho"), (x,), check_forward_ad=True, check_backward_ad=False)
    c = _leaf(3, 4, dtype=_C)
    assert gradcheck(lambda c: F.irfftn(c), (c,), check_forward_ad=True, check_backward_ad=False)


def test_round_trips():
    x = _leaf(3, 8).detach()
    np.testing.assert_allclose(F.irfft(F.rfft(x), n=8).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(F.ifftn(F.fftn(x)).real.numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(F.hfft(F.ihfft(x), n=8).numpy(), x.numpy(), atol=1e-12)
    w = agrad.hann_window(4, dtype=agrad.float64)
    y = agrad.istft(agrad.stft(x, 4, 1, window=w, return_complex=True), 4, 1, window=w, length=8)
    np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-12)


def test_the_namespace_and_methods():
    assert F.fft is agrad.ops.fft_fft and F.ihfft2 is agrad.ops.fft_ihfft2
    assert all(callable(getattr(F, name)) for name in F.__all__) and len(F.__all__) == 22
    x, w = _leaf(12).detach(), agrad.ones(4, dtype=agrad.float64)
    np.testing.assert_array_equal(x.stft(4, window=w, return_complex=True).numpy(),
                                  agrad.stft(x, 4, window=w, return_complex=True).numpy())
    s = x.stft(4, window=w, return_complex=True)
    np.testing.assert_array_equal(s.istft(4, window=w).numpy(), agrad.istft(s, 4, window=w).numpy())


def _summed(t):
    return agrad.view_as_real(t).sum() if t.is_complex() else t.sum()


@pytest.mark.parametrize("name,fn", [
    ("rfft2", lambda x, w: F.rfft2(x, norm="ortho")), ("ifftn", lambda x, w: F.ifftn(x)),
    ("irfft of rfft", lambda x, w: F.irfft(F.rfft(x, n=14), n=12)),
    ("stft", lambda x, w: agrad.stft(x, 4, window=w, return_complex=True)),
    ("istft of stft", lambda x, w: agrad.istft(agrad.stft(x, 4, 2, window=w, return_complex=True), 4, 2, window=w))])
def test_dask_matches_the_cpu(name, fn):
    pytest.importorskip("dask")
    x, w = _leaf(2, 12), agrad.hann_window(4, dtype=agrad.float64) + 0.5
    cpu = fn(x, w)
    grad_cpu, = agrad.autograd.grad(_summed(cpu), x)
    xd = x.detach().to("dask").requires_grad_()
    lazy = fn(xd, w.to("dask"))
    grad_lazy, = agrad.autograd.grad(_summed(lazy), xd)
    assert lazy.device.type == "dask"
    np.testing.assert_allclose(lazy.detach().cpu().numpy(), cpu.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(grad_lazy.cpu().numpy(), grad_cpu.numpy(), atol=1e-12)
