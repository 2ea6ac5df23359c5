"""agrad.nn.Module's semantics that need no reference values: registration through
attributes, what Parameter shares, modes, gradients, conversion, containers, and a
training loop written with modules equal to the same loop written with functional ops."""
from __future__ import annotations

import numpy as np
import pytest

import agrad
import agrad.nn as nn
import agrad.nn.functional as F


def test_parameter_shares_memory_and_is_a_leaf_that_requires_grad():
    t = agrad.zeros(3)
    p = nn.Parameter(t)
    assert isinstance(p, agrad.Tensor) and p.is_leaf and p.requires_grad and not t.requires_grad
    with agrad.no_grad():
        p.add_(1.0)
    assert t.tolist() == [1.0, 1.0, 1.0] and t._version == p._version == 1
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert type(p * 2) is agrad.Tensor
    assert repr(p).startswith("Parameter containing:\ntensor(")


def test_setattr_registers_and_moves_between_tables():
    m = nn.Module()
    m.w = nn.Parameter(agrad.ones(2))
    m.child = nn.Linear(2, 2)
    m.register_buffer("stat", agrad.zeros(2))
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["child"] and list(m._buffers) == ["stat"]
    assert "w" not in m.__dict__ and m.plain == 3
    m.stat = agrad.ones(2)                 # a tensor assigned to a buffer's name replaces the buffer
    assert m._buffers["stat"].tolist() == [1.0, 1.0]
    m.child = nn.Parameter(agrad.zeros(1))  # a Parameter under a child's name replaces the child
    assert "child" not in m._modules and "child" in m._parameters
    del m.w
    assert "w" not in m._parameters
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'w'"):
        m.w  # noqa: B018


def test_setattr_refusals_have_torch_messages():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'agrad.Tensor' as parameter 'weight' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        m.weight = agrad.zeros(2, 2)
    m.weight = None
    assert "weight" not in dict(m.named_parameters())
    with pytest.raises(KeyError, match="attribute 'bias' already exists"):
        m.register_buffer("bias", agrad.zeros(2))
    with pytest.raises(KeyError, match=r'parameter name can.*t contain "\."'):
        m.register_parameter("a.b", None)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        m.register_parameter("w", _non_leaf_parameter())

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(agrad.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def _non_leaf_parameter():
    """A Parameter with history: PyTorch refuses it as a module parameter."""
    p = nn.Parameter(agrad.ones(1))
    q = p * 2
    q.__class__ = nn.Parameter
    return q


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(agrad.ones(1))


def test_train_eval_reach_every_submodule_and_dropout_follows():
    model = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Dropout(0.5)))
    assert all(m.training for m in model.modules())
    assert model.eval() is model and not any(m.training for m in model.modules())
    x = agrad.ones(4, 3)
    assert agrad.equal(model[1](x), x)                 # eval: the identity
    model.train()
    agrad.manual_seed(0)
    y = model[1](agrad.ones(1000))
    kept = y[y != 0]
    assert agrad.allclose(kept, agrad.full_like(kept, 2.0)) and 350 < kept.numel() < 650
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train("no")


def test_zero_grad_and_requires_grad_():
    model = nn.Linear(3, 2)
    model(agrad.ones(1, 3)).sum().backward()
    assert model.weight.grad is not None
    model.zero_grad(set_to_none=False)
    assert model.weight.grad.tolist() == [[0.0] * 3] * 2
    model.zero_grad()
    assert model.weight.grad is None
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())


def test_shared_parameters_are_listed_once_but_saved_under_each_name():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(list(model.modules())) == 3


def test_state_dict_aliases_and_load_copies_in_place():
    model = nn.Linear(3, 2)
    sd = model.state_dict()
    assert not sd["weight"].requires_grad and sd["weight"]._data is model.weight._data
    assert model.state_dict(keep_vars=True)["weight"] is model.weight
    other = nn.Linear(3, 2)
    weight_before = other.weight
    assert repr(other.load_state_dict(sd)) == "<All keys matched successfully>"
    assert other.weight is weight_before and agrad.equal(other.weight, model.weight)
    assert other.weight._data is not model.weight._data          # copied, not shared
    result = other.load_state_dict({"weight": agrad.zeros(2, 3), "extra": agrad.zeros(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert other.weight.abs().sum().item() == 0
    assign = nn.Linear(3, 2)
    new_weight = agrad.ones(2, 3)
    assign.load_state_dict({"weight": new_weight, "bias": agrad.zeros(2)}, assign=True)
    assert isinstance(assign.weight, nn.Parameter) and assign.weight._data is new_weight._data
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        other.load_state_dict([1, 2])


def test_to_converts_floating_state_and_keeps_parameter_identity():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    weight = model[0].weight
    model(agrad.ones(3, 2)).sum().backward()
    model.to(agrad.float64)
    assert model[0].weight is weight and weight.dtype == agrad.float64 and weight.grad.dtype == agrad.float64
    assert model[1].running_mean.dtype == agrad.float64 and model[1].num_batches_tracked.dtype == agrad.int64
    model.float()
    assert weight.dtype == agrad.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        model.to(agrad.int64)


def test_sequential_and_module_list_indexing():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    # NOTE: a slice keeps the keys, as PyTorch's
    assert isinstance(seq[-1], nn.Linear) and len(seq[1:]) == 2 and list(seq[1:]._modules) == ["1", "2"]
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and isinstance(seq[0], nn.ReLU)
    seq.append(nn.Tanh())
    assert len(seq) == 3
    with pytest.raises(IndexError, match="index 5 is out of range"):
        seq[5]  # noqa: B018
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.insert(1, nn.Tanh())
    assert [type(m).__name__ for m in layers] == ["Linear", "Tanh", "Linear", "Linear"]
    assert [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]


def test_get_submodule():
    model = nn.Sequential(nn.Sequential(nn.Linear(1, 1)))
    assert isinstance(model.get_submodule("0.0"), nn.Linear) and model.get_submodule("") is model
    with pytest.raises(AttributeError, match="Sequential has no attribute `3`"):
        model.get_submodule("0.3")


def test_batchnorm_eval_uses_running_statistics():
    bn = nn.BatchNorm1d(2)
    bn.running_mean.copy_(agrad.tensor([1.0, -1.0]))
    bn.running_var.copy_(agrad.tensor([4.0, 1.0]))
    bn.eval()
    y = bn(agrad.tensor([[3.0, 0.0]]))
    np.testing.assert_allclose(y.tolist(), [[2.0 / np.sqrt(4 + 1e-5), 1.0 / np.sqrt(1 + 1e-5)]], rtol=1e-6)
    assert bn.num_batches_tracked.item() == 0
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        bn(agrad.ones(1, 2, 1, 1))


def test_module_training_loop_equals_the_functional_loop():
    """The same model as modules and as functional ops on plain tensors, from the same
    initial values, with the same optimizer: identical losses and parameters."""
    agrad.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
    W1, b1, W2, b2 = (p.detach().clone().requires_grad_() for p in model.parameters())
    rng = np.random.default_rng(0)
    x = agrad.tensor(rng.normal(size=(8, 4)).astype(np.float32))
    y = agrad.tensor(rng.integers(0, 3, size=8))
    opt_m = agrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_f = agrad.optim.SGD([W1, b1, W2, b2], lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(4):
        opt_m.zero_grad()
        opt_f.zero_grad()
        loss_m = loss_fn(model(x), y)
        loss_f = F.cross_entropy(F.linear(F.tanh(F.linear(x, W1, b1)), W2, b2), y)
        loss_m.backward()
        loss_f.backward()
        opt_m.step()
        opt_f.step()
        assert loss_m.item() == loss_f.item()
    for p, q in zip(model.parameters(), (W1, b1, W2, b2)):
        assert agrad.equal(p, q)


def test_init_functions_refuse_what_torch_refuses():
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
        nn.init.xavier_uniform_(agrad.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_normal_(agrad.empty(3, 3), mode="fan_avg")
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        nn.init.calculate_gain("gelu")
    w = nn.Linear(2, 2).weight
    assert nn.init.zeros_(w) is w and w.abs().sum().item() == 0 and w.is_leaf and w.requires_grad
    nn.init.eye_(w)
    assert w.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_deepcopy_gives_independent_parameters_and_buffers():
    import copy
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    twin = copy.deepcopy(model)
    assert isinstance(twin[0].weight, nn.Parameter) and twin[0].weight.requires_grad
    assert agrad.equal(twin[0].weight, model[0].weight) and twin[0].weight._data is not model[0].weight._data
    with agrad.no_grad():
        twin[0].weight.add_(1.0)
        twin[1].running_mean.add_(1.0)
    assert not agrad.equal(twin[0].weight, model[0].weight)
    assert model[1].running_mean.tolist() == [0.0, 0.0]


def test_forward_hooks_see_and_replace_inputs_and_outputs():
    layer = nn.Linear(2, 2)
    seen = []
    first = layer.register_forward_pre_hook(lambda m, args: seen.append(("pre", m, args[0].shape)))
    layer.register_forward_pre_hook(lambda m, args: args[0] * 0, prepend=False)
    layer.register_forward_hook(lambda m, args, out: seen.append(("post", args[0].abs().sum().item())))
    layer.register_forward_hook(lambda m, args, kwargs, out: out + 1, with_kwargs=True)
    out = layer(agrad.ones(3, 2))
    assert seen == [("pre", layer, (3, 2)), ("post", 0.0)]                 # the second pre-hook zeroed x
    assert agrad.allclose(out, layer.bias.detach().expand(3, 2) + 1)
    first.remove()
    layer.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True,
                                    prepend=True)
    seen.clear()
    layer(agrad.ones(1, 2))
    assert seen == [("post", 0.0)]
    layer.register_forward_pre_hook(lambda m, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple of \\(new_args, "
                                           "new_kwargs\\), but got 3."):
        layer(agrad.ones(1, 2))


def test_the_readme_model_example_runs(tmp_path, monkeypatch):
    """README, "Models as a PyTorch user writes them": the example as printed, with two batches."""
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("### Models as a PyTorch user writes them"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    batches = [(agrad.randn(4, 1, 8, 8), agrad.randint(0, 10, (4,))) for _ in range(2)]
    exec(compile(code, "README.md", "exec"), {"batches": batches})
    assert sorted(agrad.load("ckpt.npz")) == ["epoch", "model", "optimizer"]
    assert "head.weight" in agrad.load("model.safetensors")


def test_activation_layers_refuse_what_pytorchs_refuse():
    with pytest.raises(ValueError, match="min_val"):
        agrad.nn.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match="3D or 4D"):
        agrad.nn.Softmax2d()(agrad.ones(2, 3))
    prelu = agrad.nn.PReLU(3, init=0.5)
    assert [n for n, _ in prelu.named_parameters()] == ["weight"] and prelu.weight.tolist() == [0.5] * 3
    y = prelu(agrad.tensor([[-2.0, 1.0, -4.0]]))
    y.sum().backward()
    assert y.tolist() == [[-1.0, 1.0, -2.0]] and prelu.weight.grad.tolist() == [-2.0, 0.0, -4.0]
