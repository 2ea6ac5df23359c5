"""Every op's samples on a CUDA backend against the same samples on the CPU.

Two backends: the stand-in (NumPy behind the CUDA dispatch key: the CUDA kernels, device
checks and the engine's device worker thread, on any machine) and, where CuPy finds a
GPU, CuPy's. On a real GPU the libraries differ (cuBLAS sums in another order, CUDA's
libm rounds differently), so there the comparison allows a few ulps; the stand-in, which
runs NumPy's own kernels, must agree bit for bit up to 1e-12."""
import importlib.util

import numpy as np
import pytest

import op_sample_runs



def _gpu_available():
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:       # CuPy raises its own CUDARuntimeError without a driver
        return False


# (rtol, atol) by dtype on a real GPU; the stand-in runs NumPy's kernels and must match to 1e-12
GPU_TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-3),
                 "bfloat16": (2e-2, 1e-2), "complex128": (1e-10, 1e-12), "complex64": (2e-5, 1e-6)}


@pytest.fixture(params=["standin", "cupy"])
def cuda_backend(request):
    if request.param == "standin":
        request.getfixturevalue("standin_cuda")
        yield None
        return
    if not _gpu_available():
        pytest.skip("CuPy with a GPU is not available here")
    yield GPU_TOLERANCE
    from agrad.autograd import get_default_engine
    get_default_engine().shutdown_workers()


def _assert_close(actual, expected, tolerance):
    rtol, atol = (1e-12, 0) if tolerance is None else tolerance.get(str(expected.dtype), (0, 0))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("info,sample", list(op_sample_runs.cases()))
def test_cuda_matches_cpu(cuda_backend, info, sample):
    cpu_outs, cpu_grads = op_sample_runs.run(info, sample, "cpu")
    cuda_outs, cuda_grads = op_sample_runs.run(info, sample, "cuda")
    for c, g in zip(cpu_outs, cuda_outs):
        assert g.device.type == "cuda" and g.dtype == c.dtype and g.shape == c.shape
        _assert_close(np.asarray(g.detach().cpu().numpy()), c.detach().numpy(), cuda_backend)
    for c, g in zip(cpu_grads, cuda_grads):
        assert (c is None) == (g is None)
        if c is not None:
            assert g.device.type == "cuda"
            _assert_close(g.cpu().numpy(), c.numpy(), cuda_backend)
