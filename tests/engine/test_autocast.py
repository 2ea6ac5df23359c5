"""agrad.autocast against torch 2.13's (tests/reference/amp_scenarios.json, made by make_amp_reference.py): the
dtypes of ops from each CPU list inside autocast("cpu", dtype=float16), nesting, the weight cast cache,
custom_fwd/custom_bwd, messages; agrad's op lists against the ops torch's AutocastCPU and AutocastCUDA keys serve;
CUDA's policies through the stand-in GPU backend; gradients through the casts."""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

import agrad
from agrad.amp import cast_policies
from agrad.dispatch_keys import AUTOCAST
from agrad.grad_mode import tls

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
sys.path.insert(0, str(REFERENCE))
import amp_scenarios  # noqa: E402

RECORDED = json.loads((REFERENCE / "amp_scenarios.json").read_text())
AUTOCAST_SCENARIOS = ["autocast_cpu_float16_dtypes", "outside_autocast_dtypes", "nesting_and_state",
                      "gradients_through_casts", "cache_cleared_on_outermost_exit", "custom_fwd_bwd",
                      "errors_and_warnings"]


@pytest.fixture(autouse=True)
def _autocast_state_restored():
    yield
    from agrad.amp.state import state
    state.__init__()
    agrad.clear_autocast_cache()


@pytest.mark.parametrize("name", AUTOCAST_SCENARIOS)
def test_scenario_matches_torch(name):
    got = json.loads(json.dumps(amp_scenarios.SCENARIOS[name](agrad)))
    assert got == RECORDED["scenarios"][name]


@pytest.mark.parametrize("device_type", ["cpu", "cuda"])
def test_op_lists_are_the_ops_torchs_autocast_keys_serve(device_type):
    assert sorted(cast_policies.ATEN_NAMES[device_type]) == RECORDED["autocast_ops"][device_type]


def test_every_listed_agrad_op_exists():
    from agrad.dispatcher import all_ops
    names = {e.name for e in all_ops()}
    for device_type, table in cast_policies.POLICIES.items():
        aten = {n.split(".")[0] for n in cast_policies.ATEN_NAMES[device_type]}
        for name in table:
            assert name in names or name in aten, (device_type, name)
    # the ops a training loop uses are among those agrad has
    assert {"mm", "matmul", "linear", "conv2d", "cross_entropy", "mse_loss", "cat"} <= names & set(
        cast_policies.POLICIES["cpu"])


def test_the_key_is_included_only_inside_an_enabled_region():
    assert not tls.included & AUTOCAST
    with agrad.autocast("cpu", dtype=agrad.float16):
        assert tls.included & AUTOCAST
        with agrad.autocast("cpu", enabled=False):
            assert not tls.included & AUTOCAST
        assert tls.included & AUTOCAST
    assert not tls.included & AUTOCAST


def test_cpu_default_dtype_bfloat16_is_refused_naming_float16():
    for make in (lambda: agrad.autocast("cpu"), lambda: agrad.get_autocast_dtype("cpu")):
        with pytest.raises(RuntimeError, match="bfloat16.*float16"):
            make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(RuntimeError, match="agrad.float16"):
            agrad.cpu.amp.autocast()
    with agrad.autocast("cpu", enabled=False):          # a disabled region needs no dtype
        assert not agrad.is_autocast_enabled("cpu")
    agrad.set_autocast_dtype("cpu", agrad.float16)
    with agrad.autocast("cpu"):
        assert agrad.mm(agrad.ones(2, 2), agrad.ones(2, 2)).dtype is agrad.float16


def test_float64_passes_through_and_gradcheck_holds_inside_autocast():
    """float64 tensors are not eligible: ops on every list run on them unchanged, with their gradients."""
    a = agrad.rand(3, 4, dtype=agrad.float64, requires_grad=True)
    b = agrad.rand(4, 2, dtype=agrad.float64, requires_grad=True)

    def f(a, b):
        with agrad.autocast("cpu", dtype=agrad.float16):
            y = agrad.mm(a, b)                                   # lower_precision_fp
            z = agrad.cat([y, y.exp()], 1)                       # promote
            return agrad.nn.functional.mse_loss(z, agrad.zeros_like(z))   # fp32

    assert f(a, b).dtype is agrad.float64
    assert agrad.autograd.gradcheck(f, (a, b))


def test_gradients_flow_back_through_the_casts_in_the_inputs_dtype():
    a = agrad.rand(3, 4, requires_grad=True)
    w = agrad.rand(4, 2, requires_grad=True)
    with agrad.autocast("cpu", dtype=agrad.float16):
        y = agrad.mm(a, w)
    assert y.dtype is agrad.float16
    assert sorted(type(f).__name__ for f, _ in y.grad_fn.next_functions) == ["ToCopyBackward0", "ToCopyBackward0"]
    g = agrad.ones(3, 2, dtype=agrad.float16)
    y.backward(g)
    assert a.grad.dtype is agrad.float32 and w.grad.dtype is agrad.float32
    # the gradients of the float16 product, cast back: a.grad = g @ w16.T
    expected = (g.float() @ w.detach().half().float().t())
    assert agrad.allclose(a.grad, expected, atol=1e-2)


def test_weight_cache_keeps_one_cast_per_leaf_and_none_for_non_leaves():
    w = agrad.rand(2, 2, requires_grad=True)
    x = agrad.rand(2, 2)
    with agrad.autocast("cpu", dtype=agrad.float16):
        first = agrad.mm(x, w).grad_fn.next_functions[1][0]
        assert agrad.mm(x, w).grad_fn.next_functions[1][0] is first
        v = w * 1                                                 # not a leaf: cast each time
        assert agrad.mm(x, v).grad_fn.next_functions[1][0] is not agrad.mm(x, v).grad_fn.next_functions[1][0]
        view = w[0:2]                                             # a view: not cached
        assert agrad.mm(x, view).grad_fn.next_functions[1][0] is not agrad.mm(x, view).grad_fn.next_functions[1][0]


# ---- CUDA's lists, through the stand-in GPU backend -------------------------------------------------------------

def _cuda(*shape, dtype=None):
    return agrad.rand(*shape, dtype=dtype).to("cuda")


@pytest.mark.usefixtures("standin_cuda")
def test_cuda_policies():
    a, b, v = _cuda(3, 4), _cuda(4, 5), _cuda(4)
    h = a.half()
    F = agrad.nn.functional
    with agrad.autocast("cuda"):
        assert agrad.get_autocast_dtype("cuda") is agrad.float16
        assert agrad.mm(a, b).dtype is agrad.float16                       # lower_precision_fp
        assert agrad.mv(a, v).dtype is agrad.float16                       # (CUDA's list, not CPU's)
        assert F.linear(a, b.t()).dtype is agrad.float16
        assert agrad.exp(h).dtype is agrad.float32                         # fp32
        assert agrad.pow(h, 2).dtype is agrad.float32
        assert F.layer_norm(h, (4,)).dtype is agrad.float32
        assert agrad.softmax(h, -1).dtype is agrad.float32                 # fp32_set_opt_dtype
        assert agrad.sum(h).dtype is agrad.float32
        assert agrad.sum(h, dtype=agrad.float16).dtype is agrad.float16    # a dtype given is kept
        assert agrad.softmax(h.double(), -1).dtype is agrad.float64        # an ineligible first input: untouched
        assert agrad.norm(h).dtype is agrad.float32                        # fp32_append_dtype
        assert agrad.addcmul(h, a, a).dtype is agrad.float32               # promote: the widest
        assert agrad.addcmul(h, h, h).dtype is agrad.float16
        assert agrad.dot(h[0], v).dtype is agrad.float32
        assert (h + a).dtype is agrad.float32                              # on no list: the op's own promotion
        assert agrad.relu(h).dtype is agrad.float16
        assert F.interpolate(_cuda(1, 1, 4).half(), scale_factor=2, mode="linear").dtype is agrad.float32
        p = _cuda(3, 4).sigmoid()
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, p)
        # CPU tensors are not cuda's to cast, and CPU autocast is off
        assert agrad.mm(agrad.ones(2, 2), agrad.ones(2, 2)).dtype is agrad.float32
        assert not agrad.is_autocast_enabled("cpu")


@pytest.mark.usefixtures("standin_cuda")
def test_cuda_amp_spellings_warn_and_work():
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
        region = agrad.cuda.amp.autocast()
    with region:
        assert agrad.mm(_cuda(2, 2), _cuda(2, 2)).dtype is agrad.float16
    with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"):
        assert agrad.cuda.amp.GradScaler().is_enabled()


def test_cuda_autocast_without_a_gpu_warns_and_disables():
    if agrad.cuda.is_available():
        pytest.skip("a GPU is here")
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        region = agrad.autocast("cuda")
    assert region._enabled is False


def test_deprecated_state_functions_warn():
    with pytest.warns(DeprecationWarning, match=r"torch.get_autocast_gpu_dtype\(\) is deprecated"):
        assert agrad.get_autocast_gpu_dtype() is agrad.float16
    with pytest.warns(DeprecationWarning, match=r"torch.set_autocast_cpu_enabled\(enabled\) is deprecated"):
        agrad.set_autocast_cpu_enabled(False)


def test_an_op_on_no_list_falls_through_in_the_lookup():
    """The Autocast key's fallback serves only listed ops: for the others a call inside a region finds the very
    kernel it finds outside (the lookup cache holds it), so they cost nothing more there either."""
    from agrad.amp.autocast_kernel import _autocast_fallback
    from agrad.dispatch_keys import DispatchKey
    from agrad.dispatcher import get_op
    cpu = int(DispatchKey.CPU)
    agrad.mul(agrad.ones(1), agrad.ones(1))             # the op library loaded
    mul, mm = get_op("mul"), get_op("mm")
    assert mul.lookup(cpu | AUTOCAST) is mul.lookup(cpu)
    assert mm.lookup(cpu | AUTOCAST) is _autocast_fallback
