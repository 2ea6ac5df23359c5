"""The lazy modules, AdaptiveLogSoftmaxWithLoss, FractionalMaxPool2d/3d and CrossMapLRN2d past the
forwards compared with torch in test_nn_reference.py (nn_lazy_scenarios.py): UninitializedParameter
and UninitializedBuffer (what they refuse and allow), each lazy module's materialization and class
change, state dicts loaded into and from lazy modules, an optimizer built before the first forward,
fractional max pooling against values printed from torch 2.13 with fixed samples, float64
gradchecks of the forms agrad composes from its ops, and PyTorch 2.13's messages (strings taken from
torch 2.13; torch.Size printed as agrad.Size)."""
from __future__ import annotations

import copy
import math
import pickle
import re
import warnings

import numpy as np
import pytest

import agrad
import agrad.nn as nn
import agrad.nn.functional as F
from agrad.autograd import gradcheck, gradgradcheck
from agrad.nn.modules.lazy import LazyModuleMixin
from agrad.nn.parameter import is_lazy


def _randn(*shape, seed=0, grad=True):
    rng = np.random.default_rng([seed, *shape])
    return agrad.tensor(rng.normal(size=shape).tolist(), dtype=agrad.float64, requires_grad=grad)


def _raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


def _refused(cls_name="UninitializedParameter"):
    """torch's ValueError for an op or method on an uninitialized tensor (the func it names aside)."""
    return pytest.raises(ValueError, match=re.escape("Attempted to use an uninitialized parameter in ")
                         + ".*" + re.escape(f". This error happens when you are using a `LazyModule` or explicitly "
                                            f"manipulating `torch.nn.parameter.{cls_name}` objects. When using "
                                            "LazyModules Call `forward` with a dummy batch to initialize the "
                                            "parameters before calling torch functions") + "$")


_SHAPE_MESSAGE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                  "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                  "`forward` to initialize the parameters before accessing their attributes.")


# ---- UninitializedParameter and UninitializedBuffer --------------------------------------------------------

def test_uninitialized_parameter_answers_properties_and_refuses_ops():
    p = nn.UninitializedParameter()
    assert isinstance(p, nn.Parameter) and is_lazy(p) and not is_lazy(nn.Parameter(agrad.ones(1)))
    assert repr(p) == "<UninitializedParameter>"
    assert p.size() == (0,) and p.requires_grad and p.is_leaf and p.grad is None and p.grad_fn is None
    assert p.dtype == agrad.float32 and p.device == agrad.device("cpu") and p.get_device() == -1
    with _raises(RuntimeError, _SHAPE_MESSAGE):
        p.shape
    for use in (lambda: p + 1, lambda: agrad.add(p, 1), lambda: p.sum(), lambda: p.numel(), lambda: p.dim(),
                lambda: p.detach(), lambda: p.clone(), lambda: p == 1, lambda: p.requires_grad_(False),
                lambda: agrad.cat([p, p]), lambda: F.linear(agrad.ones(2, 3), p)):
        with _refused():
            use()
    with _raises(RuntimeError, "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                               "initialize the parameters before calling `module.share_memory()`."):
        p.share_memory_()


def test_uninitialized_parameter_converts_as_torch_allows():
    p = nn.UninitializedParameter(requires_grad=False, dtype=agrad.float64)
    assert not p.requires_grad and p.dtype == agrad.float64
    assert p.double() is p                      # no conversion: the tensor itself, still uninitialized
    q = p.float()
    assert type(q) is agrad.Tensor and q.dtype == agrad.float32 and q.shape == (0,)
    assert p.to(agrad.float16).dtype == agrad.float16 and p.int().dtype == agrad.int32 and p.cpu() is p
    assert p.is_floating_point() and not p.is_complex()
    p.copy_(agrad.ones(0))                      # (an empty tensor: the only one it can take)
    with _raises(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
        nn.UninitializedParameter(dtype=agrad.int64)


def test_materialize_makes_a_parameter_in_place():
    p = nn.UninitializedParameter(dtype=agrad.float64)
    same = p
    p.materialize((2, 3))
    assert p is same and type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == agrad.float64
    assert p.requires_grad and not is_lazy(p)
    p.data.fill_(1.5)
    assert (p * 2).sum().item() == 18.0
    q = nn.UninitializedParameter()
    q.materialize((4,), dtype=agrad.float64)
    assert q.dtype == agrad.float64 and q.shape == (4,)


def test_uninitialized_buffer():
    b = nn.UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad and b.persistent and b._is_buffer
    assert not isinstance(b, nn.Parameter) and is_lazy(b)
    assert not nn.UninitializedBuffer(persistent=False).persistent
    assert nn.UninitializedBuffer(dtype=agrad.int64).dtype == agrad.int64
    with _refused("UninitializedBuffer"):
        b.mean()
    with _refused("UninitializedBuffer"):
        copy.deepcopy(b)
    # a conversion of a buffer is a buffer still uninitialized (torch's Tensor.__torch_function__ keeps the
    # subclass); a parameter's is a plain tensor (Parameter's disables it)
    assert type(b.double()) is nn.UninitializedBuffer and b.double().dtype == agrad.float64 and b.float() is b
    b.materialize((2,), dtype=agrad.float64)
    assert type(b) is agrad.Tensor and b.shape == (2,) and b.dtype == agrad.float64


def test_uninitialized_parameter_copies_and_pickles_uninitialized():
    p = nn.UninitializedParameter(requires_grad=False, dtype=agrad.float64)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.UninitializedParameter and q is not p and not q.requires_grad
    assert copy.deepcopy(p).dtype == agrad.float64


# ---- lazy modules: materialization and the class change ---------------------------------------------------

def test_lazy_linear_before_and_after_its_first_forward():
    m = nn.LazyLinear(3)
    assert isinstance(m, LazyModuleMixin) and isinstance(m, nn.Linear)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert m.has_uninitialized_params() and type(m.weight) is nn.UninitializedParameter
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and sd["weight"] is m.weight and sd["bias"] is m.bias
    assert len(m._forward_pre_hooks) == 1 and len(m._load_state_dict_pre_hooks) == 1
    x = _randn(2, 5, grad=False).float()
    y = m(x)
    assert type(m) is nn.Linear and not isinstance(m, LazyModuleMixin)
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)" and m.in_features == 5
    assert type(m.weight) is nn.Parameter and m.weight.shape == (3, 5) and m.bias.shape == (3,)
    assert not m._forward_pre_hooks and not m._load_state_dict_pre_hooks
    assert not hasattr(m, "_initialize_hook") and not hasattr(m, "_load_hook")
    np.testing.assert_allclose(y.detach().numpy(), F.linear(x, m.weight, m.bias).detach().numpy())
    bound = 1 / math.sqrt(5)      # reset_parameters ran on the materialized tensors
    assert float(m.weight.abs().max()) <= bound and float(m.weight.abs().max()) > 0
    assert float(m.bias.abs().max()) <= bound


def test_calling_forward_directly_skips_the_hook_and_is_refused():
    with _refused():
        nn.LazyLinear(2).forward(agrad.ones(2, 3))


# (class, constructor arguments, input shape, its regular class, weight shape, bias shape, output shape):
# shapes printed from torch 2.13
_LAZY = [
    (nn.LazyConv1d, (4, 3), {"stride": 2, "padding": 1}, (2, 3, 9), nn.Conv1d, (4, 3, 3), (4,), (2, 4, 5)),
    (nn.LazyConv2d, (4, (3, 2)), {"groups": 2}, (1, 4, 5, 6), nn.Conv2d, (4, 2, 3, 2), (4,), (1, 4, 3, 5)),
    (nn.LazyConv3d, (2, 2), {"bias": False}, (3, 4, 4, 4), nn.Conv3d, (2, 3, 2, 2, 2), None, (2, 3, 3, 3)),
    (nn.LazyConvTranspose1d, (4, 3), {}, (2, 3, 5), nn.ConvTranspose1d, (3, 4, 3), (4,), (2, 4, 7)),
    (nn.LazyConvTranspose2d, (4, 3), {}, (3, 4, 4), nn.ConvTranspose2d, (3, 4, 3, 3), (4,), (4, 6, 6)),
    (nn.LazyConvTranspose3d, (4, 2), {"groups": 2, "stride": 2}, (1, 2, 2, 2, 2), nn.ConvTranspose3d,
     (2, 2, 2, 2, 2), (4,), (1, 4, 4, 4, 4)),
    (nn.LazyBatchNorm1d, (), {}, (4, 3), nn.BatchNorm1d, (3,), (3,), (4, 3)),
    (nn.LazyBatchNorm2d, (), {"bias": False}, (2, 3, 2, 2), nn.BatchNorm2d, (3,), None, (2, 3, 2, 2)),
    (nn.LazyBatchNorm3d, (), {}, (2, 3, 2, 2, 2), nn.BatchNorm3d, (3,), (3,), (2, 3, 2, 2, 2)),
    (nn.LazyInstanceNorm1d, (), {}, (2, 3, 4), nn.InstanceNorm1d, (3,), (3,), (2, 3, 4)),
    (nn.LazyInstanceNorm2d, (), {}, (2, 3, 2, 2), nn.InstanceNorm2d, (3,), (3,), (2, 3, 2, 2)),
    (nn.LazyInstanceNorm3d, (), {}, (2, 3, 2, 2, 2), nn.InstanceNorm3d, (3,), (3,), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("cls, args, kwargs, shape, regular, weight, bias, out", _LAZY,
                         ids=[case[0].__name__ for case in _LAZY])
def test_each_lazy_module_materializes_and_becomes_its_regular_class(cls, args, kwargs, shape, regular, weight,
                                                                     bias, out):
    m = cls(*args, **kwargs)
    assert m.cls_to_become is regular and m.has_uninitialized_params()
    assert type(m.weight) is nn.UninitializedParameter
    y = m(_randn(*shape, grad=False).float())
    assert type(m) is regular and not isinstance(m, LazyModuleMixin)
    assert m.weight.shape == weight and (m.bias is None if bias is None else m.bias.shape == bias)
    assert y.shape == out
    if "Norm" in cls.__name__:
        assert m.num_features == shape[1]
        assert m.running_mean.shape == (3,) and type(m.running_mean) is agrad.Tensor
        assert m.num_batches_tracked.item() == (1 if "Batch" in cls.__name__ else 0)    # (instance norms count none)
    else:
        assert m.in_channels == (shape[1] if len(shape) == len(weight) else shape[0])
    y.sum().backward()
    assert m.weight.grad is not None and m.weight.grad.shape == weight


def test_lazy_norms_without_affine_or_statistics():
    bn = nn.LazyBatchNorm1d(affine=False, track_running_stats=True)
    assert bn.weight is None and bn.bias is None and list(bn.state_dict()) == [
        "running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype == agrad.int64 and not is_lazy(bn.num_batches_tracked)
    bn(agrad.ones(4, 3))
    assert type(bn) is nn.BatchNorm1d and bn.running_var.shape == (3,)
    # no uninitialized tensor at all: it becomes its class at once, num_features left 0 (with torch's warning)
    inorm = nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
    assert not inorm.has_uninitialized_params() and list(inorm.state_dict()) == []
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        inorm(agrad.ones(2, 3, 4))
    assert type(inorm) is nn.InstanceNorm1d and inorm.num_features == 0
    # PyTorch takes num_features from dim 1 even for an unbatched input
    with _raises(ValueError, "expected input's size at dim=0 to match num_features (4), but got: 3."):
        nn.LazyInstanceNorm1d(affine=True)(agrad.ones(3, 4))


def test_lazy_modules_in_a_network_and_dtype_conversion_before_the_dry_run():
    net = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    net.double()
    assert net[0].weight.dtype == agrad.float64 and is_lazy(net[0].weight)
    out = net(_randn(2, 3, 5, 5, grad=False))
    assert out.shape == (2, 2) and out.dtype == agrad.float64
    assert [type(m).__name__ for m in net] == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten", "Linear"]
    assert net[0].weight.dtype == agrad.float64 and net[4].weight.shape == (2, 36)
    assert repr(net[4]) == "Linear(in_features=36, out_features=2, bias=True)"


def test_an_optimizer_built_before_the_first_forward_trains_the_materialized_parameters():
    m = nn.LazyLinear(2)
    opt = agrad.optim.SGD(m.parameters(), lr=0.5)
    opt.zero_grad()
    opt.step()                                  # no gradients yet: nothing to do, as in torch
    held = list(opt.param_groups[0]["params"])
    assert held[0] is m.weight and is_lazy(held[0])
    m(agrad.ones(3, 4)).sum().backward()        # materialized in place: the optimizer holds them
    assert held[0] is m.weight and type(held[0]) is nn.Parameter
    before = m.bias.detach().clone()
    opt.step()
    np.testing.assert_allclose(m.bias.detach().numpy(), (before - 0.5 * 3.0).numpy(), rtol=1e-6)
    adam = agrad.optim.Adam(nn.LazyLinear(2).parameters())
    adam.step()


def test_a_users_lazy_module():
    class LazyScale(LazyModuleMixin, nn.Module):
        def __init__(self, fill=True):
            super().__init__()
            self.fill = fill
            self.scale = nn.UninitializedParameter()

        def initialize_parameters(self, x):
            if self.fill and self.has_uninitialized_params():
                with agrad.no_grad():
                    self.scale.materialize(x.shape[-1:])
                    self.scale.fill_(2.0)

        def forward(self, x):
            return x * self.scale

    m = LazyScale()
    assert m(agrad.ones(2, 3)).tolist() == [[2.0] * 3] * 2
    assert type(m) is LazyScale and not m._forward_pre_hooks     # cls_to_become None: the class stays
    with _raises(RuntimeError, "module LazyScale has not been fully initialized"):
        LazyScale(fill=False)(agrad.ones(2, 3))
    with _raises(NotImplementedError, "initialize_parameters is not implemented for LazyLinear"):
        LazyModuleMixin.initialize_parameters(nn.LazyLinear(2))


# ---- lazy modules and state dicts -------------------------------------------------------------------------

def test_a_lazy_module_loads_an_initialized_state_and_stays_lazy_until_its_forward():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    assert repr(m.load_state_dict(src.state_dict())) == "<All keys matched successfully>"
    assert type(m) is nn.LazyLinear and not m.has_uninitialized_params() and m.weight.shape == (3, 5)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert m.weight.tolist() == src.weight.tolist() and m.bias.tolist() == src.bias.tolist()
    x = _randn(2, 5, grad=False).float()
    np.testing.assert_allclose(m(x).detach().numpy(), src(x).detach().numpy(), rtol=1e-6)
    assert type(m) is nn.Linear and m.in_features == 5 and m.weight.tolist() == src.weight.tolist()
    m2 = nn.LazyLinear(3)
    m2.load_state_dict(src.state_dict())
    with _raises(AssertionError, "The in_features inferred from input: 4 is not equal to in_features from "
                                 "self.weight: 5"):
        m2(agrad.ones(1, 4))


def test_lazy_batchnorm_loads_buffers_too():
    src = nn.BatchNorm1d(3)
    src(_randn(4, 3, grad=False).float())
    m = nn.LazyBatchNorm1d()
    m.load_state_dict(src.state_dict())
    assert type(m.running_mean) is agrad.Tensor and m.running_mean.tolist() == src.running_mean.tolist()
    assert m.num_batches_tracked.item() == 1 and m.num_features == 0      # (as torch leaves it)
    m.eval()
    x = _randn(2, 3, grad=False).float()
    np.testing.assert_allclose(m(x).detach().numpy(), src.eval()(x).detach().numpy(), rtol=1e-6)
    assert type(m) is nn.BatchNorm1d


def test_uninitialized_state_dicts():
    lazy = nn.LazyLinear(3)
    # lazy into lazy: taken as it is (nothing to copy), still uninitialized
    assert repr(lazy.load_state_dict(nn.LazyLinear(3).state_dict())) == "<All keys matched successfully>"
    assert lazy.has_uninitialized_params()
    # lazy into an initialized module: torch's error from `.shape`
    with _raises(RuntimeError, _SHAPE_MESSAGE):
        nn.Linear(5, 3).load_state_dict(nn.LazyLinear(3).state_dict())
    # a key missing: the others still materialize
    partial = nn.LazyLinear(2)
    with _raises(RuntimeError, 'Error(s) in loading state_dict for LazyLinear:\n\tMissing key(s) in state_dict: '
                               '"bias". '):
        partial.load_state_dict({"weight": agrad.ones(2, 3)})
    assert type(partial.weight) is nn.Parameter and type(partial.bias) is nn.UninitializedParameter


def test_lazy_modules_copy_and_pickle():
    m = nn.LazyLinear(2)
    for c in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(c) is nn.LazyLinear and c.has_uninitialized_params() and c.weight is not m.weight
        c(agrad.ones(1, 4))                     # its own hooks, bound to the copy, removed from the copy
        c(agrad.ones(1, 4))
        assert type(c) is nn.Linear and c.weight.shape == (2, 4) and not c._forward_pre_hooks
    assert type(m) is nn.LazyLinear and m.has_uninitialized_params()
    with _refused("UninitializedBuffer"):      # as torch: the buffers have no deepcopy
        copy.deepcopy(nn.LazyBatchNorm1d())


def test_module_methods_on_lazy_modules():
    m = nn.LazyLinear(2)
    m.zero_grad()
    with _refused():
        m.requires_grad_(False)                 # Tensor.requires_grad_, refused as in torch
    with _refused():
        sum(p.numel() for p in m.parameters())


# ---- lazy modules: messages --------------------------------------------------------------------------------

def test_lazy_messages():
    with _raises(RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to LazyConv2d, but got input of "
                               "size: agrad.Size([3, 4])"):
        nn.LazyConv2d(4, 3)(agrad.zeros(3, 4))
    with _raises(ValueError, "in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(agrad.zeros(1, 3, 5, 5))
    with _raises(ValueError, 'Only "zeros" padding mode is supported for LazyConvTranspose2d'):
        nn.LazyConvTranspose2d(4, 3, padding_mode="reflect")
    with _raises(ValueError, "expected 4D input (got 2D input)"):
        nn.LazyBatchNorm2d()(agrad.zeros(3, 4))
    with _raises(RuntimeError, "Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
                               "dummy forward pass to correctly initialize the modules"):
        nn.LazyLinear(2)._replicate_for_data_parallel()


# ---- AdaptiveLogSoftmaxWithLoss ----------------------------------------------------------------------------

def _asm(**kwargs):
    agrad.manual_seed(0)
    return nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, **kwargs).double()


def test_adaptive_log_softmax_distribution_and_prediction():
    asm = _asm(head_bias=True)
    x = _randn(7, 8, grad=False)
    log_prob = asm.log_prob(x)
    assert log_prob.shape == (7, 10)
    np.testing.assert_allclose(log_prob.exp().sum(1).detach().numpy(), np.ones(7), rtol=1e-12)
    target = agrad.tensor([0, 9, 4, 2, 7, 5, 3])
    out = asm(x, target)
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    np.testing.assert_allclose(out.output.detach().numpy(),
                               log_prob.gather(1, target.unsqueeze(1)).squeeze(1).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.loss.item(), -out.output.mean().item(), rtol=1e-12)
    for scale in (0.1, 1.0, 30.0):              # head argmax in the shortlist, in a cluster, or mixed
        np.testing.assert_array_equal(asm.predict(x * scale).numpy(), asm.log_prob(x * scale).argmax(1).numpy())
    single = asm(x[2], target[2])
    assert single.output.shape == () and single.output.item() == pytest.approx(out.output[2].item())


def test_adaptive_log_softmax_gradcheck():
    asm = _asm()
    target = agrad.tensor([1, 8, 4, 6, 0])
    assert gradcheck(lambda x: tuple(asm(x, target)), (_randn(5, 8),))
    assert gradcheck(lambda w: asm.log_prob(_randn(3, 8, grad=False) * w),
                     (_randn(8, seed=1),))


def test_adaptive_log_softmax_messages():
    with _raises(ValueError, "cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])
    for cutoffs in ([5, 3], [3, 10], [0, 3], [3, 3], [2.5]):
        with _raises(ValueError, "cutoffs should be a sequence of unique, positive integers sorted in an "
                                 "increasing order, where each value is between 1 and n_classes-1"):
            nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
    asm = _asm()
    x = _randn(6, 8, grad=False)
    with _raises(RuntimeError, "Target values should be in [0, 9], but values in range [0, 10] were found. "):
        asm(x, agrad.tensor([0, 10, 4, 2, 7, 5]))
    with _raises(RuntimeError, "Input and target should have the same size in the batch dimension."):
        asm(x, agrad.tensor([0, 1]))
    with _raises(RuntimeError, "0D or 1D target tensor expected, multi-target not supported"):
        asm(x, agrad.zeros(2, 3, dtype=agrad.int64))
    with _raises(RuntimeError, "1D target tensor expects 2D input tensors, but found inputs with size "
                               "agrad.Size([6, 2, 4])"):
        asm(x.reshape(6, 2, 4), agrad.zeros(6, dtype=agrad.int64))
    with _raises(RuntimeError, "0D target tensor expects 1D input tensors, but found inputs with size "
                               "agrad.Size([6, 8])"):
        asm(x, agrad.tensor(0))


# ---- fractional max pooling: values printed from torch 2.13 -------------------------------------------------

_X = agrad.tensor([0.0, 7.0, 14.0, 21.0, 3.0, 10.0, 17.0, 24.0, 6.0, 13.0, 20.0, 2.0, 9.0, 16.0, 23.0, 5.0, 12.0,
                   19.0, 1.0, 8.0, 15.0, 22.0, 4.0, 11.0, 18.0]).reshape(1, 1, 5, 5)
_X3 = (agrad.arange(48, dtype=agrad.float64) * 11 % 48).reshape(1, 1, 3, 4, 4)


@pytest.mark.parametrize("call, values, indices", [
    (lambda: F.fractional_max_pool2d(_X, 2, output_size=3, _random_samples=agrad.tensor([[[0.3, 0.7]]]),
                                     return_indices=True),
     [[[[17.0, 24.0, 21.0], [20.0, 24.0, 23.0], [22.0, 22.0, 18.0]]]], [[[[6, 7, 3], [10, 7, 14], [21, 21, 24]]]]),
    (lambda: F.fractional_max_pool2d_with_indices(_X, (2, 1), output_size=(4, 2),
                                                  _random_samples=agrad.tensor([[[0.99, 0.01]]])),
     [[[[10.0, 13.0], [20.0, 23.0], [20.0, 23.0], [15.0, 18.0]]]], [[[[5, 9], [10, 14], [10, 14], [20, 24]]]]),
    (lambda: F.fractional_max_pool2d(agrad.stack([_X[0, 0], -_X[0, 0]]), 2, output_ratio=(0.6, 0.5),
                                     _random_samples=agrad.tensor([[[0.5, 0.25], [0.8, 0.1]]]), return_indices=True),
     [[[17.0, 21.0], [20.0, 23.0], [22.0, 18.0]], [[-0.0, -3.0], [-2.0, -6.0], [-5.0, -1.0]]],
     [[[6, 3], [10, 14], [21, 24]], [[0, 4], [11, 8], [15, 18]]]),
    (lambda: F.fractional_max_pool3d(_X3, 2, output_size=(1, 2, 2), return_indices=True,
                                     _random_samples=agrad.tensor([[[0.2, 0.5, 0.9]]], dtype=agrad.float64)),
     [[[[[43.0, 45.0], [35.0, 46.0]]]]], [[[[[17, 39], [25, 26]]]]]),
    (lambda: F.fractional_max_pool3d_with_indices(_X3[0], (1, 2, 1), output_size=(2, 2, 3),
                                                  _random_samples=agrad.tensor([[[0.6, 0.1, 0.45]]],
                                                                               dtype=agrad.float64)),
     [[[[44.0, 22.0, 33.0], [40.0, 14.0, 25.0]], [[16.0, 38.0, 45.0], [8.0, 30.0, 41.0]]]],
     [[[[4, 2, 3], [8, 10, 11]], [[32, 34, 39], [40, 42, 43]]]]),
])
def test_fractional_max_pool_equals_torch(call, values, indices):
    v, i = call()
    assert v.tolist() == values and i.tolist() == indices and i.dtype == agrad.int64


def test_fractional_max_pool_nan_and_float32_intervals():
    x = _X.clone()
    x[0, 0, 0, 1] = float("nan")
    x[0, 0, 1, 0] = float("nan")
    v, i = F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=agrad.zeros(1, 1, 2), return_indices=True)
    assert math.isnan(v[0, 0, 0, 0].item()) and v[0, 0, 0, 1:].tolist() == [21.0]
    assert v[0, 0, 1].tolist() == [22.0, 18.0] and i.tolist() == [[[[5, 3], [21, 24]]]]     # the last NaN
    # the window starts as ATen computes them in float32
    row = agrad.arange(20, dtype=agrad.float32).reshape(1, 1, 1, 20)
    for u, starts in ((0.7310000062, [2, 4, 7, 10, 13, 16, 19]), (0.123, [2, 5, 8, 10, 13, 16, 19]),
                      (0.999999, [2, 5, 8, 11, 14, 16, 19])):
        _, i = F.fractional_max_pool2d(row, (1, 3), output_size=(1, 7), _random_samples=agrad.tensor([[[u, 0.0]]]),
                                       return_indices=True)
        assert i.flatten().tolist() == starts


def test_fractional_max_pool_draws_its_samples():
    x = _randn(2, 3, 7, 6, grad=False)
    agrad.manual_seed(3)
    v, i = F.fractional_max_pool2d(x, 2, output_size=(4, 3), return_indices=True)
    agrad.manual_seed(3)
    assert F.fractional_max_pool2d(x, 2, output_size=(4, 3)).tolist() == v.tolist()
    assert v.shape == (2, 3, 4, 3)
    np.testing.assert_array_equal(x.flatten(2).gather(2, i.flatten(2)).numpy(), v.flatten(2).numpy())
    pool = nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True)
    assert list(pool.state_dict()) == [] and repr(pool) == "FractionalMaxPool3d()"
    assert [t.shape for t in pool(_randn(3, 6, 5, 4, grad=False))] == [(3, 3, 2, 2)] * 2


@pytest.mark.parametrize("fn, shape", [
    (lambda x: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=_randn(2, 3, 2, seed=1, grad=False)
                                       .abs().clamp(max=0.99)), (2, 3, 5, 6)),
    (lambda x: F.fractional_max_pool2d(x, (3, 2), output_ratio=(0.5, 0.6),
                                       _random_samples=agrad.tensor([[[0.4, 0.8]]], dtype=agrad.float64)),
     (1, 7, 8)),
    (lambda x: F.fractional_max_pool3d(x, 2, output_size=(2, 2, 3),
                                       _random_samples=agrad.tensor([[[0.1, 0.5, 0.9]], [[0.7, 0.3, 0.2]]],
                                                                    dtype=agrad.float64)), (2, 1, 4, 4, 5)),
])
def test_fractional_max_pool_gradcheck(fn, shape):
    assert gradcheck(fn, (_randn(*shape),))
    assert gradgradcheck(fn, (_randn(*shape),))


def test_fractional_max_pool_messages():
    x, s = agrad.zeros(1, 2, 5, 5), agrad.full((1, 2, 2), 0.5)
    cases = [
        (ValueError, "fractional_max_pool2d requires specifying either an output_size or an output_ratio",
         lambda: F.fractional_max_pool2d(x, 2)),
        (ValueError, "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.",
         lambda: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5))),
        (TypeError, "object of type 'float' has no len()", lambda: F.fractional_max_pool2d(x, 2, output_ratio=0.5)),
        (RuntimeError, "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints",
         lambda: F.fractional_max_pool2d(x, (2, 2, 2), output_size=3, _random_samples=s)),
        (RuntimeError, "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints",
         lambda: F.fractional_max_pool2d(x, 2, output_size=(2,), _random_samples=s)),
        (RuntimeError, "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: [5, 5]",
         lambda: F.fractional_max_pool2d(x[0, 0], 2, output_size=3, _random_samples=s)),
        (RuntimeError, "fractional_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                       "but got[1, 0, 5, 5] with dimension 1 being empty.",
         lambda: F.fractional_max_pool2d(agrad.zeros(1, 0, 5, 5), 2, output_size=3)),
        (RuntimeError, "fractional_max_pool2d(): pool height 2 too large relative to input height 5",
         lambda: F.fractional_max_pool2d(x, 2, output_size=5, _random_samples=s)),
        (RuntimeError, "fractional_max_pool2d(): pool width 2 too large relative to input width 5",
         lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 6), _random_samples=s)),
        (RuntimeError, "Expect _random_samples to have the same dtype as input",
         lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s.double())),
        (RuntimeError, "Expect _random_samples to have 3 dimensions, got 2",
         lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s[0])),
        (RuntimeError, "Expect _random_samples.size(0) no less then input batch size.",
         lambda: F.fractional_max_pool2d(agrad.zeros(2, 2, 5, 5), 2, output_size=3, _random_samples=s)),
        (RuntimeError, "Expect _random_samples.size(1) equals to input channel size.",
         lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=agrad.zeros(1, 3, 2))),
        (RuntimeError, "Expect _random_samples.size(2) equals to 2; got 3.",
         lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=agrad.zeros(1, 2, 3))),
        (NotImplementedError, "\"fractional_max_pool2d_out_frame\" not implemented for 'Long'",
         lambda: F.fractional_max_pool2d(x.long(), 2, output_size=3, _random_samples=s.long())),
    ]
    x3, s3 = agrad.zeros(2, 2, 5, 5, 5), agrad.zeros(2, 2, 3)
    cases += [
        (ValueError, "fractional_max_pool3d requires specifying either an output_size or an output_ratio",
         lambda: F.fractional_max_pool3d(x3, 2)),
        (RuntimeError, "fractional_max_pool3d: kernel_size must either be a single Int or tuple of three Ints",
         lambda: F.fractional_max_pool3d(x3, (2, 2), output_size=3, _random_samples=s3)),
        (RuntimeError, "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints",
         lambda: F.fractional_max_pool3d(x3, 2, output_size=(3, 3), _random_samples=s3)),
        (RuntimeError, "fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: [5, 5]",
         lambda: F.fractional_max_pool3d(agrad.zeros(5, 5), 2, output_size=3, _random_samples=s3)),
        (RuntimeError, "fractional_max_pool3d_out(): Expected input to have non-zero size for non-batch "
                       "dimensions, but got[2, 0, 5, 5, 5] with dimension 1 being empty.",
         lambda: F.fractional_max_pool3d(agrad.zeros(2, 0, 5, 5, 5), 2, output_size=3, _random_samples=s3)),
        (RuntimeError, "fractional_max_pool3d_out(): pool time 2 too large relative to input time 5",
         lambda: F.fractional_max_pool3d(x3, 2, output_size=4, _random_samples=s3)),
        (RuntimeError, "fractional_max_pool3d_out(): pool width 2 too large relative to input width 5",
         lambda: F.fractional_max_pool3d(x3, 2, output_size=(3, 5, 5), _random_samples=s3)),
        (RuntimeError, "fractional_max_pool3d_out(): pool height 2 too large relative to input height 5",
         lambda: F.fractional_max_pool3d(x3, 2, output_size=(3, 4, 3), _random_samples=s3)),
        (RuntimeError, "Expect _random_samples.size(2) equals to 3; got 2.",
         lambda: F.fractional_max_pool3d(x3, 2, output_size=3, _random_samples=agrad.zeros(2, 2, 2))),
        (ValueError, "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio",
         lambda: nn.FractionalMaxPool2d(2)),
        (ValueError, "only one of output_size and output_ratio may be specified",
         lambda: nn.FractionalMaxPool2d(2, 3, 0.5)),
        (ValueError, "output_ratio must be between 0 and 1 (got 1.5)", lambda: nn.FractionalMaxPool2d(2, None, 1.5)),
        (ValueError, "kernel_size must be greater than 0, but got 0", lambda: nn.FractionalMaxPool3d(0, 2)),
        (ValueError, "FractionalMaxPool3d requires specifying either an output size, or a pooling ratio",
         lambda: nn.FractionalMaxPool3d(2)),
        (ValueError, "output_ratio must be between 0 and 1 (got (0.5, 1.0, 0.5))",
         lambda: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5))),
    ]
    for exc, message, call in cases:
        with _raises(exc, message):
            call()
    # what torch accepts: an empty batch, an output of size 0, more samples than the batch
    assert F.fractional_max_pool2d(agrad.zeros(0, 2, 5, 5), 2, output_size=3).shape == (0, 2, 3, 3)
    assert F.fractional_max_pool2d(x, 5, output_size=(0, 1), _random_samples=s).shape == (1, 2, 0, 1)
    assert F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=agrad.zeros(4, 2, 2)).shape == (1, 2, 3, 3)


# ---- CrossMapLRN2d -------------------------------------------------------------------------------------------

def test_cross_map_lrn2d_equals_torch():
    x = agrad.linspace(-2, 2, 16, dtype=agrad.float64).reshape(1, 8, 1, 2)
    np.testing.assert_allclose(nn.CrossMapLRN2d(5, 0.5, 0.75, 1.0)(x).flatten().tolist(), [
        -1.3420472416179492, -1.2859834285672014, -0.9772865529000279, -0.8894997716490886, -0.6214274617748554,
        -0.4902254522849162, -0.2612786959609794, -0.09399784807745361, 0.08982182885159398, 0.27291100588035716,
        0.41086832388889316, 0.5507463044260442, 0.7442520172617839, 0.8660300525188475, 1.0757894475535117,
        1.1880192936024145], rtol=1e-13)
    np.testing.assert_allclose(nn.CrossMapLRN2d(2, 1e-1, 0.5, 2.0)(x.reshape(1, 4, 2, 2)).flatten().tolist(), [
        -1.348399724926484, -1.1820624348293294, -1.0102803499481487, -0.8336550215650925, -0.6231152246585441,
        -0.45230813765746253, -0.2750095491084634, -0.09260847332207953, 0.08987516023070195, 0.27227759843504423,
        0.4568163035897204, 0.641688947919748, 0.7961173386514129, 0.9760921603577253, 1.1535634622409479,
        1.3268622310856881], rtol=1e-13)
    assert repr(nn.CrossMapLRN2d(3)) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"
    with _raises(ValueError, "CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        nn.CrossMapLRN2d(3)(agrad.zeros(2, 3, 4))


@pytest.mark.parametrize("size, shape", [(3, (2, 6, 2, 2)), (5, (1, 8, 2, 1)), (4, (2, 3, 1, 2)), (1, (1, 3, 2, 2))])
def test_cross_map_lrn2d_gradcheck(size, shape):
    # NOTE: the gradient of the forward; PyTorch's own backward is not (it fails torch's gradcheck for these)
    lrn = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.0)
    assert gradcheck(lrn, (_randn(*shape),))
    assert gradgradcheck(lrn, (_randn(*shape),))


def test_new_names_are_exported():
    for name in ("LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
                 "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
                 "LazyInstanceNorm2d", "LazyInstanceNorm3d", "AdaptiveLogSoftmaxWithLoss", "FractionalMaxPool2d",
                 "FractionalMaxPool3d", "CrossMapLRN2d", "UninitializedParameter", "UninitializedBuffer"):
        assert name in nn.__all__ and hasattr(nn, name)
    for name in ("fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
                 "fractional_max_pool3d_with_indices"):
        assert name in F.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LazyLinear(2)                        # (no zero-element init warning from the placeholder)
