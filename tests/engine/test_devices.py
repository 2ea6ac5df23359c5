"""Devices: CUDA without a GPU, and the GPU code paths through a stand-in backend."""
import importlib.util
import threading

import numpy as np
import pytest

import agrad
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops



def test_cuda_without_cupy_is_a_clear_error():
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    with pytest.raises(agrad.DeviceUnavailableError, match=r"CuPy is not installed.*agrad\[cuda\]"):
        agrad.ones(3, device="cuda")


def test_ops_dispatch_to_the_cuda_key_and_gradients_come_back(standin_cuda):
    x = agrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    xc = x.to("cuda")
    assert xc.device == agrad.device("cuda:0") and xc.grad_fn.name() == "ToCopyBackward0"
    y = (agrad.tanh(xc) * xc).sum()
    assert y.device.type == "cuda"
    y.backward()
    assert x.grad.device.type == "cpu"
    t = np.tanh([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), t + np.array([1.0, 2.0, 3.0]) * (1 - t ** 2), rtol=1e-6)


def test_cuda_backward_runs_on_the_device_worker_thread(standin_cuda):
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    xc = x.to("cuda:1")
    mid = xc * 3
    y = mid.sum().to("cpu")
    threads = {}
    for t in (mid, y):
        node = t.grad_fn
        node.register_prehook(lambda grads, n=node: threads.update({n.name(): threading.current_thread().name}))
    y.backward()
    assert threads["ToCopyBackward0"] == threading.current_thread().name     # CPU gradient: the caller's thread
    assert threads["MulBackward0"] == "agrad-cuda:1"                        # its own device's worker
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_error_on_a_worker_thread_reaches_the_caller(standin_cuda):
    class Fail(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("kernel failed on the device")

    x = agrad.tensor([1.0], requires_grad=True)
    y = Fail.apply(x.to("cuda")).sum()
    with pytest.raises(RuntimeError, match="kernel failed on the device"):
        y.backward()


def test_mixing_devices_is_an_error(standin_cuda):
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least "
                                           "two devices, cpu and cuda:0"):
        agrad.ones(2) + agrad.ones(2, device="cuda")
    with pytest.raises(agrad.DeviceUnavailableError, match="invalid device ordinal 5"):
        agrad.ones(2, device="cuda:5")
