"""Complex numbers (complex64, complex128) against PyTorch 2.13.0, and what only agrad can say.

The scenarios (complex_scenarios.py) run here on agrad; their results on torch are in
tests/reference/engine/complex.json, written by tests/reference/make_complex_reference.py: dtypes and
promotion, creation and printing, the views (real, imag, view_as_real), the complex-specific ops and
the common ops with derivatives.yaml's conjugates (outputs and gradients for a fixed complex
grad_output), the engine (backward of complex outputs, forward-AD tangents), gradcheck's complex checks
and the refusals of ops without complex kernels. This file never imports torch.
"""
import io
import subprocess
import sys
import warnings

import numpy as np
import pytest

import agrad
import scenario_fixtures
from complex_scenarios import SCENARIOS
from agrad.autograd import Function, gradcheck, gradgradcheck
from agrad.ops import registered

EXPECTED = scenario_fixtures.expected("complex.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_complex_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    scenario_fixtures.compare(got, EXPECTED["scenarios"][name], [name], rtol=1e-9, atol=1e-12)


# ---- what agrad does its own way -------------------------------------------------------------------

def test_conj_has_the_conjugate_bit_but_memory_of_its_own():
    """PyTorch's conj() is a view with the conjugate bit; agrad's holds the conjugated values themselves
    (NumPy has no lazily conjugated view): the bits as PyTorch's, the memory not shared."""
    z = agrad.tensor([1 + 2j, 3 - 1j])
    c = z.conj()
    assert c.is_conj() and not c.is_neg() and c.tolist() == [1 - 2j, 3 + 1j]
    assert c.imag.is_neg() and c.imag.tolist() == [-2.0, 1.0]
    r = c.resolve_conj()
    assert r is not c and not r.is_conj() and r.tolist() == c.tolist()
    c[0] = 0
    assert z[0].item() == 1 + 2j          # not an alias: writing it leaves z alone (PyTorch's writes z)


def test_every_op_refuses_complex_unless_it_declares_support():
    z = agrad.tensor([0.5 + 1j, -1j], dtype=agrad.complex128)
    with pytest.raises(NotImplementedError, match="\"erfinv_cpu\" not implemented for 'ComplexDouble'"):
        agrad.erfinv(z)
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        agrad.ones(2) < 1j                   # a Python complex number makes the operands complex
    declared = {i.name for i in registered() if i.supports_complex and i.composite is None}
    assert {"mul", "add", "exp", "mm", "sum", "view_as_real", "_conj", "abs", "angle"} <= declared
    assert "erf" not in declared and "lt" not in declared
    # a non-promoting op's generated fast path checks the dtype only where the op refuses complex
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexDouble'"):
        agrad.argmax(z)


def test_random_complex_draws_have_the_moments_pytorchs_have():
    agrad.manual_seed(0)
    z = agrad.randn(200_000, dtype=agrad.complex128).numpy()
    assert abs(z.var() - 1) < 0.02 and abs(z.real.var() - 0.5) < 0.01 and abs(z.mean()) < 0.01
    u = agrad.rand(1000, 2, dtype=agrad.complex64).numpy()
    assert u.dtype == np.complex64 and (u.real >= 0).all() and (u.real < 1).all() and (u.imag < 1).all()
    n = agrad.zeros(100_000, dtype=agrad.complex128).normal_(2.0, 3.0).numpy()
    assert abs(n.real.mean() - 2) < 0.05 and abs(n.imag.mean() - 2) < 0.05 and abs(n.var() - 9) < 0.2
    assert agrad.randn_like(agrad.zeros(3, dtype=agrad.complex64)).dtype == agrad.complex64
    assert agrad.normal(0.0, 1.0, (4,), dtype=agrad.cdouble).dtype == agrad.complex128


@pytest.mark.parametrize("suffix", [".npz", ".safetensors"])
def test_save_and_load_keep_complex_tensors(tmp_path, suffix):
    z = agrad.tensor([[1 + 2j, -0.5j]], dtype=agrad.complex64)
    agrad.save({"z": z}, tmp_path / f"w{suffix}")
    back = agrad.load(tmp_path / f"w{suffix}")["z"]
    assert back.dtype == agrad.complex64 and back.tolist() == z.tolist()
    wide = agrad.tensor([1 + 1e-12j], dtype=agrad.complex128)
    buffer = io.BytesIO()
    agrad.save(wide, buffer)
    buffer.seek(0)
    assert agrad.load(buffer).tolist() == wide.tolist()
    if suffix == ".safetensors":        # the format has C64, no complex128
        with pytest.raises(TypeError, match="complex128, which safetensors cannot hold"):
            agrad.save(wide, tmp_path / "wide.safetensors")


def test_tensor_methods_and_type_info_of_complex_dtypes():
    x = agrad.ones(2)
    assert x.cfloat().dtype == agrad.complex64 and x.cdouble().dtype == agrad.complex128
    assert x.cfloat().type() == "agrad.ComplexFloatTensor" and x.type("torch.ComplexDoubleTensor").dtype == agrad.cdouble
    assert agrad.finfo(agrad.complex64) == agrad.finfo(agrad.float32)
    assert agrad.finfo(agrad.complex128).eps == agrad.finfo(agrad.float64).eps


def test_requires_grad_and_grad_accumulation_keep_the_dtype():
    z = agrad.zeros(2, dtype=agrad.complex64, requires_grad=True)
    (z * agrad.tensor([1j, 2.0])).sum().backward(agrad.tensor(1 + 0j, dtype=agrad.complex64))
    (z * 2).sum().backward(agrad.tensor(1j, dtype=agrad.complex64))
    # conj([1j, 2]) * 1, then conj(2) * 1j: [-1j + 2j, 2 + 2j]
    assert z.grad.dtype == agrad.complex64 and z.grad.tolist() == [1j, 2 + 2j]
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        agrad.ones(2, dtype=agrad.int64).requires_grad_()


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_checks_complex_ops_both_ways(fast_mode):
    z = agrad.tensor([1 + 2j, 3 - 1j, -0.5 + 0.25j], dtype=agrad.complex128, requires_grad=True)
    w = agrad.tensor([0.5 - 1j, 2 + 1j, 1.5], dtype=agrad.complex128, requires_grad=True)
    x = agrad.tensor([0.7, 1.2, 2.0], dtype=agrad.float64, requires_grad=True)
    for fn, inputs in [(lambda a, b: (a * b.conj()).exp() / b, (z, w)), (agrad.sgn, (z,)), (agrad.angle, (z,)),
                       (lambda a, b: agrad.polar(a, b.abs()), (x, x.detach().clone().requires_grad_())),
                       (lambda a, b: a.reshape(3, 1) @ b.reshape(1, 3), (z, x.to(agrad.complex128)))]:
        assert gradcheck(fn, inputs, fast_mode=fast_mode, check_forward_ad=True)
        assert gradgradcheck(fn, inputs, fast_mode=fast_mode)


@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "acosh", "atanh", "log2", "log10", "exp2",
                                  "sigmoid"])
def test_gradcheck_the_inverse_trig_log_and_sigmoid_ops_on_complex(name):
    # Re(z) > 0 throughout: acosh's formula (z^2 - 1)^-1/2, as derivatives.yaml has it, takes the other
    # branch of the square root where Re(z) < 0
    z = agrad.tensor([0.3 + 0.2j, 0.5 - 0.4j, 1.25 + 0.35j], dtype=agrad.complex128, requires_grad=True)
    assert gradcheck(getattr(agrad, name), (z,), check_forward_ad=True)
    assert gradgradcheck(getattr(agrad, name), (z,))


def test_gradcheck_more_ops_on_complex():
    z = agrad.tensor([0.3 + 0.2j, 0.5 - 0.4j, 1.25 + 0.35j], dtype=agrad.complex128, requires_grad=True)
    w = agrad.tensor([1.3 - 0.2j, -0.5 + 0.4j, 0.25 + 1.35j], dtype=agrad.complex128, requires_grad=True)
    weight = agrad.tensor([0.2 + 0.1j, 0.7 - 0.3j, 0.1j], dtype=agrad.complex128, requires_grad=True)
    for fn, inputs in [(agrad.lerp, (z, w, weight)), (lambda a, b: agrad.lerp(a, b, 0.3 - 0.6j), (z, w)),
                       (agrad.sinc, (z,)), (lambda a: agrad.logsumexp(a.reshape(1, 3), 1), (z,)),
                       (lambda a: agrad.diag(a.reshape(3, 1) * a, 1), (z,)), (lambda a: agrad.cumprod(a, 0), (z,)),
                       (lambda a: agrad.cumprod(a * agrad.tensor([1.0, 0.0, 1.0], dtype=agrad.float64), 0), (z,)),
                       (lambda a, b: agrad.addmv(a, a.reshape(3, 1) * b, b, beta=0.5 - 1j, alpha=2j), (z, w)),
                       (lambda a, b: agrad.baddbmm(b.reshape(1, 3, 1), a.reshape(1, 3, 1), b.reshape(1, 1, 3),
                                                   beta=2 + 1j, alpha=1 - 1j), (z, w)),
                       (agrad.linalg.cross, (z, w)), (lambda a: agrad.linalg.vander(a, N=4), (z,)),
                       (agrad.dist, (z, w)), (lambda a, b: agrad.dist(a, b, 3.5), (z, w))]:
        assert gradcheck(fn, inputs, check_forward_ad=True)
        assert gradgradcheck(fn, inputs)


def test_complex_to_real_cast_warns_once_at_the_callers_line():
    z = agrad.tensor([1 + 2j])
    agrad.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            z.to(agrad.float32)
    finally:
        agrad.set_warn_always(False)
    assert [str(w.message) for w in caught] == ["Casting complex values to real discards the imaginary part"]
    assert caught[0].filename == __file__


@pytest.mark.parametrize("graph, code", [
    ("inputs:\n  a: {shape: [2], init: ones, dtype: complex64}\nnodes:\n  b: mul(a, a)\noutputs: [b]\n", "AG008"),
    ("inputs:\n  a: {shape: [2], init: ones}\nnodes:\n  b: to(a, dtype=\"complex64\")\noutputs: [b]\n", "AG019")])
def test_graph_files_stay_real(tmp_path, graph, code):
    """SPEC's dtypes are real: a complex dtype named in a graph file is a clear error, exit status 2."""
    path = tmp_path / "g.yaml"
    path.write_text(graph)
    done = subprocess.run([sys.executable, "-m", "agrad.cli", "run", str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and code in done.stderr and "complex64" in done.stderr


def test_a_custom_functions_complex_gradient_of_a_real_input_is_refused_as_pytorchs_engine_refuses_it():
    """An op's formula takes the real part itself (handle_r_to_c, done once in agrad's engine); PyTorch's
    engine refuses a custom Function's complex gradient for a real input (message from torch 2.13)."""
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * (1 + 2j)

    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Expected isFloatingType\(grad.scalar_type\(\)\) \|\| "
                                           r"\(input_is_complex == grad_is_complex\) to be true"):
        Twice.apply(x).sum().backward()
    z = agrad.tensor([1.0, 2.0], requires_grad=True)
    (z * agrad.tensor([1 + 2j, 3j])).real.sum().backward()     # an op's formula: the real part, as torch's
    assert z.grad.tolist() == [1.0, 0.0]
