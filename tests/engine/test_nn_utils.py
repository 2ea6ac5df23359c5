"""agrad.nn.utils and agrad.nn.init against torch 2.13 (tests/reference/nn_utils_fixtures.json,
written by make_nn_utils_reference.py from nn_utils_scenarios.py): every scenario runs from
torch's recorded state (weights, spectral_norm's u and v) and its values, gradients, state dict
keys, messages and warnings are compared; then what needs no fixture: orthogonality of
parametrized weights after training steps, nn.init's distributions and structure, and the errors
torch gives (strings from torch 2.13)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import agrad
import agrad.nn as nn
from agrad.nn.utils import parametrizations, parametrize

import nn_utils_scenarios as S

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "reference" / "nn_utils_fixtures.json").read_text())


def _is_values(x) -> bool:
    """A float or a rectangular nested list of floats."""
    if isinstance(x, float):
        return True
    try:
        return isinstance(x, list) and bool(x) and np.asarray(x).dtype == np.float64
    except ValueError:      # ragged: compared item by item
        return False


def _compare(got, want, path=""):
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), path
        for key in want:
            _compare(got[key], want[key], f"{path}.{key}")
    elif _is_values(want):
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                                   rtol=1e-4, atol=1e-5, err_msg=path)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{path}[{i}]")
    else:
        assert got == want, path


def test_fixtures_cover_every_scenario():
    assert set(FIXTURES["scenarios"]) == set(S.SCENARIOS)


@pytest.mark.parametrize("name", sorted(S.SCENARIOS))
def test_scenario_matches_torch(name):
    want = FIXTURES["scenarios"][name]
    got = S.SCENARIOS[name](agrad, want["initial"])
    if name.startswith("orthogonal_"):
        # the registration from torch's weight; a wide or tall weight's base is completed with random
        # columns, of which only the first k (those of the weight) are determined
        reg_got, reg_want = got.pop("registered"), want["registered"]
        assert sorted(reg_got) == sorted(reg_want)
        k = min(np.asarray(reg_want["parametrizations.weight.original"]).shape[-2:])
        for key, value in reg_want.items():
            value, mine = np.asarray(value), np.asarray(reg_got[key])
            if key.endswith("base"):
                value, mine = value[..., :k], mine[..., :k]
            np.testing.assert_allclose(mine, value, rtol=1e-4, atol=1e-5, err_msg=key)
        want = {k: v for k, v in want.items() if k != "registered"}
    _compare(got, want)


# ---- parametrizations: what the fixtures cannot show --------------------------------------------------

@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_stays_orthogonal_while_training(orthogonal_map, shape):
    agrad.manual_seed(0)
    m = nn.Linear(shape[1], shape[0], dtype=agrad.float64)
    parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
    opt = agrad.optim.SGD(m.parameters(), lr=0.1)
    for step in range(3):
        opt.zero_grad()
        m(agrad.randn(4, shape[1], dtype=agrad.float64)).pow(2).sum().backward()
        opt.step()
    w = m.weight.detach().numpy()
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)
    assert not np.allclose(m.parametrizations.weight.original.detach().numpy(), 0)


def test_orthogonal_assignment_sets_base():
    agrad.manual_seed(0)
    m = nn.Linear(4, 4, dtype=agrad.float64)
    parametrizations.orthogonal(m)
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)))
    m.weight = agrad.tensor(q)
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-12)
    np.testing.assert_array_equal(m.parametrizations.weight.original.detach().numpy(), -np.eye(4))


def test_parametrized_gradcheck():
    """Gradients through each parametrization, float64 central differences (not the Householder map's:
    it reads the signs on original's diagonal through int(), a step)."""
    agrad.manual_seed(0)
    for register in (lambda m: parametrizations.orthogonal(m, "weight", "cayley"),
                     lambda m: parametrizations.orthogonal(m, "weight", "matrix_exp"),
                     lambda m: parametrizations.weight_norm(m, dim=None)):
        m = nn.Linear(3, 3, dtype=agrad.float64)
        register(m)
        plist = m.parametrizations.weight
        originals = [getattr(plist, n) for n in ("original", "original0", "original1") if hasattr(plist, n)]

        def fn(*tensors):
            saved = [(n, plist._parameters[n]) for n in plist._parameters]
            plist._parameters.update(zip([n for n, _ in saved], tensors))
            try:
                return m.weight
            finally:
                plist._parameters.update(saved)

        assert agrad.autograd.gradcheck(fn, [o.detach().clone().requires_grad_() for o in originals])


def test_spectral_norm_eval_keeps_u_v_and_sigma_is_one():
    agrad.manual_seed(0)
    m = parametrizations.spectral_norm(nn.Linear(6, 4, dtype=agrad.float64), n_power_iterations=20)
    m(agrad.randn(1, 6, dtype=agrad.float64))
    u = m.parametrizations.weight[0]._u
    before = u.clone()
    m.eval()
    m(agrad.randn(1, 6, dtype=agrad.float64))
    assert m.parametrizations.weight[0]._u is u and agrad.equal(u, before)
    assert np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0] == pytest.approx(1.0, abs=1e-8)


def test_parametrized_module_refuses_pickling_but_deepcopies():
    import copy
    import pickle
    m = parametrizations.weight_norm(nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only supported through"):
        pickle.dumps(m)
    c = copy.deepcopy(m)
    assert type(c).__name__ == "ParametrizedLinear" and agrad.equal(c.weight, m.weight)
    assert parametrize.type_before_parametrizations(m) is nn.Linear


def test_weight_norm_loads_the_hook_apis_state_dict():
    agrad.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = nn.utils.weight_norm(nn.Linear(4, 3))
    new = parametrizations.weight_norm(nn.Linear(4, 3))
    new.load_state_dict(old.state_dict())
    x = agrad.randn(2, 4)
    np.testing.assert_allclose(new(x).detach().numpy(), old(x).detach().numpy(), rtol=1e-6)


def test_transfer_parametrizations_and_params():
    agrad.manual_seed(0)
    src = parametrizations.weight_norm(nn.Linear(3, 2))
    dst = parametrize.transfer_parametrizations_and_params(src, nn.Linear(3, 2))
    assert parametrize.is_parametrized(dst, "weight")
    assert dst.parametrizations.weight.original1 is src.parametrizations.weight.original1
    np.testing.assert_array_equal(dst.weight.detach().numpy(), src.weight.detach().numpy())


PARAMETRIZE_ERRORS = [
    # (call, exception, torch 2.13's message)
    (lambda: parametrize.register_parametrization(nn.Linear(3, 3), "nope", nn.Identity()), ValueError,
     "Module 'Linear(in_features=3, out_features=3, bias=True)' does not have a parameter, a buffer, or a "
     "parametrized element with name 'nope'"),
    (lambda: parametrize.register_parametrization(nn.Linear(3, 2), "weight", nn.Flatten(0)), ValueError,
     "Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag is enabled.\n"
     "unparametrized shape: agrad.Size([2, 3])\nparametrized shape: agrad.Size([6])"),
    (lambda: parametrize.remove_parametrizations(nn.Linear(3, 2), "weight"), ValueError,
     "Module Linear(in_features=3, out_features=2, bias=True) does not have a parametrization on weight"),
    (lambda: parametrize.remove_parametrizations(parametrizations.weight_norm(nn.Linear(3, 2)), "weight", False),
     ValueError, "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms "
                 "of a sequence of tensors."),
    (lambda: parametrizations.orthogonal(nn.Linear(3, 2), orthogonal_map="qr"), ValueError,
     'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: qr'),
    (lambda: parametrizations.orthogonal(nn.Conv1d(1, 1, 1), "bias"), ValueError,
     "Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."),
    (lambda: parametrizations.spectral_norm(nn.Linear(3, 2), dim=2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1] but got 2)"),
    (lambda: parametrizations.spectral_norm(nn.Linear(3, 2), n_power_iterations=0), ValueError,
     "Expected n_power_iterations to be positive, but got n_power_iterations=0"),
    (lambda: nn.utils.remove_weight_norm(nn.Linear(3, 2)), ValueError,
     "weight_norm of 'weight' not found in Linear(in_features=3, out_features=2, bias=True)"),
    (lambda: nn.utils.remove_spectral_norm(nn.Linear(3, 2)), ValueError,
     "spectral_norm of 'weight' not found in Linear(in_features=3, out_features=2, bias=True)"),
    (lambda: nn.utils.spectral_norm(nn.utils.spectral_norm(nn.Linear(3, 2))), RuntimeError,
     "Cannot register two spectral_norm hooks on the same parameter weight"),
]


@pytest.mark.parametrize("index", range(len(PARAMETRIZE_ERRORS)))
def test_messages_equal_torch(index):
    call, error, message = PARAMETRIZE_ERRORS[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(error) as info:
            call()
    assert str(info.value) == message


def test_orthogonal_assignment_without_trivialization_raises_for_matrix_exp():
    m = parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix exponential or the "
                                                  "Cayley parametrizations when use_trivialization=False."):
        m.weight = agrad.eye(3)


# ---- nn.init ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(40, 40), (30, 70), (70, 3, 2, 2)])
def test_orthogonal_init_is_orthogonal_times_gain(shape):
    agrad.manual_seed(3)
    w = nn.init.orthogonal_(agrad.empty(shape, dtype=agrad.float64), gain=1.5).numpy().reshape(shape[0], -1)
    gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(gram, 2.25 * np.eye(min(w.shape)), atol=1e-10)


def test_orthogonal_init_is_haar_distributed():
    """Sign correction makes Q uniform: each entry of a 4x4 Q has mean 0 and variance 1/4 (without it
    the diagonal of Q would lean to one sign)."""
    agrad.manual_seed(0)
    samples = np.stack([nn.init.orthogonal_(agrad.empty(4, 4, dtype=agrad.float64)).numpy() for _ in range(2000)])
    assert np.abs(samples.mean(0)).max() < 0.05
    np.testing.assert_allclose(samples.var(0), 0.25, atol=0.03)


def test_orthogonal_init_uses_the_generator():
    a = nn.init.orthogonal_(agrad.empty(5, 5), generator=agrad.Generator().manual_seed(7))
    b = nn.init.orthogonal_(agrad.empty(5, 5), generator=agrad.Generator().manual_seed(7))
    assert agrad.equal(a, b)


def test_sparse_init_zeros_a_fraction_of_each_column():
    agrad.manual_seed(0)
    w = nn.init.sparse_(agrad.empty(200, 50), sparsity=0.3, std=0.5).numpy()
    assert ((w == 0).sum(0) == 60).all()
    nonzero = w[w != 0]
    assert nonzero.std() == pytest.approx(0.5, rel=0.05) and abs(nonzero.mean()) < 0.03
    # the zeroed rows differ between columns
    assert len({tuple(np.flatnonzero(w[:, j] == 0)) for j in range(50)}) > 40
