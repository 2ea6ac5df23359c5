"""agrad's top-level basics against PyTorch's: the scenarios of namespace_scenarios.py compared with
what PyTorch 2.13.0 did in them (tests/reference/engine/namespace.json, written by
tests/reference/make_namespace_reference.py), and the distributions of the sampling functions,
which cannot be compared draw by draw (another bit generator), tested statistically with fixed
seeds: each bound is several standard errors wide. This file never imports torch."""
import math
import re
import warnings

import numpy as np
import pytest

import agrad
import scenario_fixtures
from namespace_scenarios import SCENARIOS
from test_engine_contract import _normalise

EXPECTED = scenario_fixtures.expected("namespace.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_namespace_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name], seed=0)
    assert _normalise(got) == _normalise(EXPECTED["scenarios"][name])


# -- distributions: mean and spread within a few standard errors of the law's ----------------

N = 200_000


def _within(sample, mean, sd, sigmas=5):
    """The sample mean is the law's to `sigmas` standard errors."""
    assert abs(float(np.mean(sample)) - mean) < sigmas * sd / math.sqrt(len(sample)), (np.mean(sample), mean)


def _gen(seed=0):
    return agrad.Generator().manual_seed(seed)


def test_normal_overloads_draw_the_normal_law():
    mean, std = agrad.full((N,), 2.0, dtype=agrad.float64), agrad.full((N,), 3.0, dtype=agrad.float64)
    for draws in (agrad.normal(mean, std, generator=_gen(1)), agrad.normal(mean, 3.0, generator=_gen(2)),
                  agrad.normal(2.0, std, generator=_gen(3)),
                  agrad.normal(2.0, 3.0, (N,), dtype=agrad.float64, generator=_gen(4))):
        x = draws.numpy()
        _within(x, 2.0, 3.0)
        assert abs(x.std() - 3.0) < 0.05
        assert abs(np.mean(np.abs(x - 2.0) < 3.0) - 0.6827) < 0.005     # the law's shape, not just two moments


def test_normal_broadcasts_per_element_parameters():
    x = agrad.normal(agrad.tensor([[-10.], [10.]]), agrad.tensor([0.1, 1.0, 5.0]).expand(2, 3).contiguous()
                     .repeat(1, 20000), generator=_gen()).numpy()
    assert x.shape == (2, 60000)
    assert abs(x[0].mean() + 10) < 0.1 and abs(x[1].mean() - 10) < 0.1


def test_multinomial_with_replacement_follows_the_weights():
    weights = agrad.tensor([1.0, 2.0, 3.0, 0.0, 4.0])
    counts = np.bincount(agrad.multinomial(weights, N, True, generator=_gen()).numpy(), minlength=5)
    p = np.array([1, 2, 3, 0, 4]) / 10
    assert counts[3] == 0                                       # a weight 0 is never drawn
    expected = N * p
    chi2 = float(((counts - expected)[p > 0] ** 2 / expected[p > 0]).sum())
    assert chi2 < 25        # 3 degrees of freedom: P(chi2 > 25) < 2e-5


def test_multinomial_without_replacement_draws_distinct_categories_by_weight():
    rows = agrad.tensor([[1.0, 1.0, 8.0, 0.0]]).expand(20000, 4).contiguous()
    picked = agrad.multinomial(rows, 2, generator=_gen()).numpy()
    assert (picked[:, 0] != picked[:, 1]).all() and (picked != 3).all()
    # the first pick is category 2 with probability 0.8, as sampling without replacement says
    assert abs(np.mean(picked[:, 0] == 2) - 0.8) < 5 * math.sqrt(0.16 / 20000)
    # the second is 2 with probability 8/9 where the first was not (P 0.2): 0.2 * 8/9 in all
    q = 0.2 * 8 / 9
    assert abs(np.mean(picked[:, 1] == 2) - q) < 5 * math.sqrt(q * (1 - q) / 20000)


def test_randperm_is_a_uniform_permutation():
    perms = np.stack([agrad.randperm(5, generator=_gen(s)).numpy() for s in range(4000)])
    assert (np.sort(perms, axis=1) == np.arange(5)).all()
    # each value lands in each position with probability 1/5
    freq = np.stack([(perms == v).mean(0) for v in range(5)])
    assert np.abs(freq - 0.2).max() < 5 * math.sqrt(0.16 / 4000)


def test_poisson_binomial_and_geometric_moments():
    lam = 3.5
    x = agrad.poisson(agrad.full((N,), lam, dtype=agrad.float64), generator=_gen()).numpy()
    _within(x, lam, math.sqrt(lam))
    assert abs(x.var() - lam) < 0.1 and (x == np.round(x)).all()
    b = agrad.binomial(agrad.full((N,), 20.0), agrad.full((N,), 0.3), generator=_gen()).numpy()
    _within(b, 6.0, math.sqrt(20 * 0.3 * 0.7))
    assert b.min() >= 0 and b.max() <= 20
    g = agrad.zeros(N, dtype=agrad.float64).geometric_(0.25, generator=_gen()).numpy()
    _within(g, 4.0, math.sqrt(0.75) / 0.25)     # trials to the first success: mean 1/p
    assert g.min() == 1


def test_log_normal_cauchy_and_exponential_laws():
    ln = agrad.zeros(N, dtype=agrad.float64).log_normal_(1.0, 0.5, generator=_gen()).numpy()
    _within(np.log(ln), 1.0, 0.5)
    c = agrad.zeros(N, dtype=agrad.float64).cauchy_(2.0, 3.0, generator=_gen()).numpy()
    # the Cauchy law has no mean: its quartiles are median -+ sigma
    q1, q2, q3 = np.quantile(c, [0.25, 0.5, 0.75])
    assert abs(q2 - 2.0) < 0.05 and abs(q1 + 1.0) < 0.06 and abs(q3 - 5.0) < 0.06


def test_randint_like_is_uniform_over_its_range():
    x = agrad.randint_like(agrad.zeros(N, dtype=agrad.int64), -3, 4, generator=_gen()).numpy()
    assert x.min() == -3 and x.max() == 3
    assert np.abs(np.bincount(x + 3) / N - 1 / 7).max() < 5 * math.sqrt((1 / 7) * (6 / 7) / N)


def test_seed_and_generator_each_repeat_and_the_default_generator_is_the_global_one():
    agrad.manual_seed(123)
    a = agrad.rand(4)
    b = agrad.rand(4, generator=agrad.default_generator)
    agrad.manual_seed(123)
    assert agrad.equal(agrad.rand(4), a) and agrad.equal(agrad.rand(4), b)
    # a generator's numbers follow from its seed whatever the global generator does
    g1 = agrad.normal(agrad.zeros(5), 1.0, generator=_gen(9))
    agrad.manual_seed(0)
    assert agrad.equal(agrad.normal(agrad.zeros(5), 1.0, generator=_gen(9)), g1)
    with pytest.raises(TypeError, match="takes a seed or a generator, not both"):
        agrad.bernoulli(agrad.zeros(2), seed=1, generator=_gen())


def test_sampling_in_a_graph_file_op_takes_a_seed():
    x = agrad.zeros(3, 4)
    assert agrad.equal(agrad.ops.normal(x, 1.0, seed=3), agrad.ops.normal(x, 1.0, seed=3))
    assert agrad.equal(agrad.multinomial(agrad.ones(2, 9), 5, seed=1), agrad.multinomial(agrad.ones(2, 9), 5, seed=1))


# what PyTorch 2.13 raised for each (its CPU allocator's words; the sizes make the same byte counts)
_TOO_LARGE = "DefaultCPUAllocator: can't allocate memory: you tried to allocate {} bytes. Error code 12"


@pytest.mark.parametrize("make, message", [
    (lambda: agrad.randperm(10 ** 13), _TOO_LARGE.format(80000000000000)),
    (lambda: agrad.randperm(2 ** 62), "Storage size calculation overflowed with sizes=[4611686018427387904]"),
    (lambda: agrad.multinomial(agrad.tensor([0.2, 0.8]), 10 ** 12, True), _TOO_LARGE.format(8000000000000)),
    (lambda: agrad.multinomial(agrad.ones(3, 2), 10 ** 12, True), _TOO_LARGE.format(24000000000000)),
    (lambda: agrad.normal(0., 1., size=(10 ** 9, 10 ** 9)), _TOO_LARGE.format(4000000000000000000)),
    (lambda: agrad.normal(0., 1., size=(-1,)), "Trying to create tensor with negative dimension -1: [-1]"),
    (lambda: agrad.poisson(agrad.zeros(1).expand(10 ** 12)), _TOO_LARGE.format(4000000000000)),
    (lambda: agrad.bernoulli(agrad.zeros(1).expand(10 ** 12)), _TOO_LARGE.format(4000000000000)),
    (lambda: agrad.randint(0, 5, (10 ** 13,)), _TOO_LARGE.format(80000000000000)),
    (lambda: agrad.zeros(10 ** 13), _TOO_LARGE.format(40000000000000)),
    (lambda: agrad.rand_like(agrad.zeros(1).expand(10 ** 12)), _TOO_LARGE.format(4000000000000))])
def test_an_absurd_size_is_pytorchs_runtime_error_before_numpy_allocates(make, message, monkeypatch):
    # (the limit is this machine's memory: 64 GiB here, whatever the machine running the test has)
    monkeypatch.setattr(agrad._allocation, "memory_bytes", lambda: 64 << 30)
    with pytest.raises(RuntimeError) as info:
        make()
    assert message in str(info.value) and not isinstance(info.value, MemoryError)


@pytest.mark.parametrize("make, message", [
    (lambda: agrad.normal(0., float("nan"), size=(2,)), "normal expects std >= 0.0, but found std nan"),
    (lambda: agrad.normal(agrad.zeros(2), float("nan")), "normal expects std >= 0.0, but found std nan"),
    (lambda: agrad.normal(agrad.zeros(2), agrad.tensor([float("nan"), 1.])),
     "normal expects all elements of std >= 0.0"),
    (lambda: agrad.bernoulli(agrad.zeros(2), seed=-1), "bernoulli seed must be a non-negative integer, but got -1"),
    (lambda: agrad.binomial(agrad.tensor([1e30]), agrad.tensor([0.5])), "invalid binomial count"),
    (lambda: agrad.randperm(float("nan")), "randperm(): argument 'n' (position 1) must be int, not float"),
    (lambda: agrad.randperm(True), "randperm(): argument 'n' (position 1) must be int, not bool")])
def test_nan_std_negative_seeds_and_uncountable_trials_are_refused(make, message):
    with pytest.raises((RuntimeError, ValueError, TypeError), match=re.escape(message)):
        make()
    # an infinite std is PyTorch's too: draws of infinite spread, not an error
    assert agrad.normal(0., float("inf"), size=(2,)).shape == (2,)


def test_default_dtype_reaches_the_optimizers_scalar_state():
    p = agrad.nn.Parameter(agrad.ones(2, dtype=agrad.float64))
    try:
        agrad.set_default_dtype(agrad.float64)
        opt = agrad.optim.Adam([p])
        p.sum().backward()
        opt.step()
        assert opt.state[p]["step"].dtype == agrad.float64       # torch.optim's _get_scalar_dtype
    finally:
        agrad.set_default_dtype(agrad.float32)
    opt = agrad.optim.NAdam([p])
    opt.step()
    assert opt.state[p]["step"].dtype == agrad.float32 and opt.state[p]["mu_product"].dtype == agrad.float32


def test_set_default_tensor_type_says_it_is_deprecated():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agrad.set_warn_always(True)
        try:
            agrad.set_default_tensor_type(agrad.FloatTensor)
        finally:
            agrad.set_warn_always(False)
    assert any("set_default_tensor_type() is deprecated as of PyTorch 2.1" in str(w.message) for w in caught)


def test_set_num_interop_threads_is_taken_once(monkeypatch):
    from agrad import runtime_settings
    monkeypatch.setitem(runtime_settings._state, "interop_set", False)
    monkeypatch.setitem(runtime_settings._state, "num_interop_threads", None)
    agrad.set_num_interop_threads(3)
    assert agrad.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads after parallel work has started"):
        agrad.set_num_interop_threads(4)


def test_default_device_is_per_thread_as_pytorchs():
    import threading
    seen = []
    try:
        agrad.set_default_device("meta")
        worker = threading.Thread(target=lambda: seen.append(agrad.ones(1).device.type))
        worker.start()
        worker.join()
        assert agrad.ones(1).device.type == "meta"
    finally:
        agrad.set_default_device(None)
    assert seen == ["cpu"]


def test_share_memory_is_seen_by_a_forked_process():
    import os
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    t = agrad.zeros(3).share_memory_()
    pid = os.fork()
    if pid == 0:                      # the child writes into the shared values and leaves at once
        t.add_(7)
        os._exit(0)
    os.waitpid(pid, 0)
    assert t.tolist() == [7.0, 7.0, 7.0]


def test_pin_memory_without_a_gpu_is_pytorchs_error_and_with_one_a_pinned_copy():
    x = agrad.arange(4.)
    if not agrad.cuda.is_available():
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            x.pin_memory()
        return
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned() and agrad.equal(pinned, x)
    assert pinned.pin_memory() is pinned
