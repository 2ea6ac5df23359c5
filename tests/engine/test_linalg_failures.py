"""Linear algebra on hostile matrices: the scenarios of linalg_failures_scenarios.py (every linalg op × zero,
NaN, inf, negative-definite, singular, empty and half-bad batched matrices) compared with what PyTorch 2.13.0
did (tests/reference/engine/linalg_failures.json, written by tests/reference/make_linalg_failures_reference.py):
the same error class and message, or NaN/inf in the same entries. Before that, the sweep itself: only the
exception kinds torch raises (RuntimeError and its LinAlgError, IndexError) may escape, never NumPy's own
LinAlgError, an OverflowError or a ZeroDivisionError, on the CPU and through the stand-in CUDA backend.
This file never imports torch.

LAPACK's info of a convergence failure (syevd's, gesdd's, gelsd's "(error code: N)") depends on the LAPACK
build and NumPy does not give it: agrad's messages end before it, and PyTorch's are compared without it."""
import re

import numpy as np
import pytest

import agrad
import scenario_fixtures
from linalg_failures_scenarios import MATRICES, OPS, SCENARIOS, outcome

EXPECTED = scenario_fixtures.expected("linalg_failures.json")

# Where agrad does not do what PyTorch 2.13 did, and why (each is checked to still differ, so that a fix
# removes its line).
DEPARTURES = {
    **{f"linalg.ldl_factor/{m}": "PyTorch 2.13 fails an INTERNAL ASSERT (\"Unknown error code\"), a bug of its "
       "own; agrad names the zero block of D" for m in ("zero", "nan", "singular", "batch_nan", "batch_singular")},
    **{f"linalg.lstsq/{m}": "MKL's gelsy refuses a NaN input (info -4) and PyTorch fails an INTERNAL ASSERT; "
       "agrad gives gelsy's NaN solution, as for an inf" for m in ("nan", "batch_nan")},
    **{f"linalg.lstsq_gelsd/{m}": "MKL's gelsd refuses a NaN input (info -4) and PyTorch fails an INTERNAL "
       "ASSERT; agrad raises gelsd's rank error, as for an inf" for m in ("nan", "batch_nan")},
    **{f"linalg.inv_ex/{m}": "PyTorch returns getri's partial inverse (inf and NaN); agrad NaN throughout"
       for m in ("zero", "singular", "batch_singular")},
    "linalg.solve_ex/zero": "PyTorch returns getrs's inf and NaN; agrad NaN throughout",
    **{f"{op}/{m}": "the sign of LAPACK's Householder arithmetic on inf (-inf where MKL gets NaN)"
       for op in ("linalg.qr", "qr", "geqrf", "linalg.householder_product") for m in ("inf", "batch_inf")},
    **{f"cholesky_inverse/{m}": "potri's arithmetic on inf leaves one entry finite; agrad solves with the "
       "factor, NaN throughout" for m in ("inf", "batch_inf")},
    "linalg.matrix_norm_-2/empty": "amin's message numbers the reduced dim from 0, PyTorch's keeps -1",
}


def _without_error_code(recorded):
    if "raises" not in recorded:
        return recorded
    kind, message = recorded["raises"]
    return {"raises": [kind, re.sub(r" \(error code: -?\d+\)\.$", ".", message)]}


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_linalg_failures_reference.py")
    assert set(DEPARTURES) <= set(SCENARIOS)


def _sweep(op, device):
    for matrix in MATRICES:
        A = agrad.tensor(MATRICES[matrix], dtype=agrad.float64, device=device)
        try:
            OPS[op](agrad, A)
        except (np.linalg.LinAlgError, OverflowError, ZeroDivisionError, FloatingPointError, ValueError) as exc:
            pytest.fail(f"{op} on the {matrix} matrix ({device}): {type(exc).__module__}.{type(exc).__name__}: {exc}")
        except (RuntimeError, IndexError):      # torch's kinds (agrad's typed errors subclass them)
            pass


@pytest.mark.parametrize("op", sorted(OPS))
def test_no_numpy_or_arithmetic_exception_escapes(op):
    _sweep(op, "cpu")


@pytest.mark.usefixtures("standin_cuda")
@pytest.mark.parametrize("op", sorted(OPS))
def test_the_cuda_kernels_do_what_the_cpu_ones_do(op):
    """The kernels are shared: through the stand-in CUDA backend each op raises and returns as on the CPU."""
    _sweep(op, "cuda")
    for matrix in MATRICES:
        assert outcome(agrad, op, matrix, "cuda") == outcome(agrad, op, matrix), (op, matrix)


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - set(DEPARTURES)))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    scenario_fixtures.compare(got, _without_error_code(EXPECTED["scenarios"][name]), [name], rtol=0)


@pytest.mark.parametrize("name", sorted(DEPARTURES))
def test_known_departures_still_differ(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    assert got != _without_error_code(EXPECTED["scenarios"][name]), f"{name} now matches PyTorch: drop it from DEPARTURES"


def test_batched_errors_name_the_first_failing_matrix():
    bad = agrad.tensor(np.stack([np.eye(3), np.eye(3), np.full((3, 3), np.nan), np.ones((3, 3))]))
    with pytest.raises(agrad.linalg.LinAlgError, match=r"^linalg\.svd: \(Batch element 2\): .*non-finite values"):
        agrad.linalg.svd(bad)
    with pytest.raises(agrad.linalg.LinAlgError, match=r"^linalg\.inv: \(Batch element 3\): The diagonal element 2 "):
        agrad.linalg.inv(agrad.tensor(np.stack([np.eye(3)] * 3 + [np.ones((3, 3))])))
    # svdvals checks no convergence where the vectors are not wanted: an inf gives NaN, its batch-mates stay
    S = agrad.linalg.svdvals(agrad.tensor(np.stack([2 * np.eye(3), np.full((3, 3), np.inf)])))
    assert S[0].tolist() == [2.0, 2.0, 2.0] and np.isnan(S[1].numpy()).all()
