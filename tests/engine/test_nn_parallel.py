"""agrad.nn.DataParallel and nn.parallel.data_parallel, as torch 2.13 behaves on a machine without an
accelerator (its values: a DataParallel holds the module and calls it as it is, device_ids [], state_dict
keys under `module.`; data_parallel raises "device type could not be determined"), and with CUDA (the
stand-in backend): the module and each call's tensors on device_ids[0], differentiably; several device
ids are refused in words."""
import numpy as np
import pytest

import agrad
import agrad.nn as nn


def _linear():
    agrad.manual_seed(0)
    return nn.Linear(3, 2)


def test_without_an_accelerator_the_module_is_called_as_it_is():
    inner = _linear()
    model = nn.DataParallel(inner)
    assert model.module is inner and model.device_ids == []
    assert not hasattr(model, "dim") and not hasattr(model, "output_device")    # as torch's early return
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    assert repr(model) == "DataParallel(\n  (module): Linear(in_features=3, out_features=2, bias=True)\n)"
    x = agrad.ones(2, 3, requires_grad=True)
    y = model(x)
    assert y.grad_fn.name() == "AddmmBackward0"
    np.testing.assert_array_equal(y.detach().numpy(), inner(x).detach().numpy())
    y.sum().backward()
    np.testing.assert_array_equal(inner.weight.grad.numpy(), np.full((2, 3), 2.0, np.float32))
    assert nn.parallel.DataParallel is nn.DataParallel


def test_data_parallel_without_an_accelerator_refuses_as_torch():
    with pytest.raises(RuntimeError, match="^device type could not be determined$"):
        nn.parallel.data_parallel(_linear(), agrad.ones(2, 3))


def test_with_cuda_the_module_and_the_inputs_go_to_device_ids_0(standin_cuda):
    inner = _linear()
    model = nn.DataParallel(inner)
    assert model.device_ids == [0] and model.output_device == 0 and model.dim == 0
    assert inner.weight.device == agrad.device("cuda", 0)
    x = agrad.ones(2, 3, requires_grad=True)                   # on the CPU: moved for the call
    y = model(x, )
    assert y.device == agrad.device("cuda", 0)
    y.sum().backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), np.tile(inner.weight.detach().cpu().numpy().sum(0), (2, 1)))
    out = nn.parallel.data_parallel(inner, (agrad.ones(2, 3),), device_ids=[0])
    assert out.device == agrad.device("cuda", 0)


def test_with_cuda_several_devices_or_a_module_elsewhere_are_refused(standin_cuda):
    with pytest.raises(NotImplementedError, match=r"device_ids \[0, 1\]: agrad runs a module on one device"):
        nn.DataParallel(_linear(), device_ids=[0, 1])
    with pytest.raises(RuntimeError, match=r"^module must have its parameters and buffers on device cuda:0 "
                                           r"\(device_ids\[0\]\) but found one of them on device: cpu$"):
        nn.parallel.data_parallel(_linear(), agrad.ones(2, 3), device_ids=[0])
