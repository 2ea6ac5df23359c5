"""Every op's samples on a CUDA backend against the same samples on the CPU.

Two backends: the stand-in (NumPy behind the CUDA dispatch key: the CUDA kernels, device
checks and the engine's device worker thread, on any machine) and, where CuPy finds a
GPU, CuPy's. On a real GPU the libraries differ (cuBLAS sums in another order, CUDA's
libm rounds differently), so there the comparison allows a few ulps; the stand-in, which
runs NumPy's own kernels, must agree bit for bit up to 1e-12."""
import numpy as np
import pytest

import op_sample_runs
from gpu import gpu_available


# (rtol, atol) by dtype on a real GPU; the stand-in runs NumPy's kernels and must match to 1e-12
GPU_TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-3),
                 "bfloat16": (2e-2, 1e-2), "complex128": (1e-10, 1e-12), "complex64": (2e-5, 1e-6)}


@pytest.fixture(params=["standin", "cupy"])
def cuda_backend(request):
    if request.param == "standin":
        request.getfixturevalue("standin_cuda")
        yield None
        return
    if not gpu_available():
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


# ---- sums of many values into one place: the same bits as NumPy's, on every run -----------------------
# CuPy's bincount and add.at add with atomics, in whatever order the GPU's threads run; agrad sums each
# place's values in the order given (ops/_common.weighted_bincount), as NumPy does, so a gradient on a
# GPU equals the CPU's bit for bit and `agrad check`'s two backward passes agree.

def _scatter_sums(device):
    import agrad

    r = np.random.default_rng(7)
    idx = r.integers(0, 50, 3000)
    vals = r.standard_normal(3000) * 10.0 ** r.integers(-6, 6, 3000)

    def t(a, grad=False):
        return agrad.tensor(a, dtype=agrad.float64, device=device, requires_grad=grad)

    def grad_of(make, x0, weights):
        x = t(x0, True)
        (make(x) * t(weights)).sum().backward()
        return x.grad

    i = agrad.tensor(idx, device=device)
    table = r.standard_normal((50, 8))
    image = r.standard_normal((2, 3, 12, 12)).round(1)          # ties in the windows
    series = r.standard_normal((40,))
    yield "embedding backward", grad_of(lambda w: agrad.embedding(i, w), table, r.standard_normal((3000, 8)))
    yield "index_add", agrad.index_add(t(np.zeros(50)), 0, i, t(vals))
    yield "scatter_add", agrad.scatter_add(t(np.zeros(50)), 0, i, t(vals))
    yield "index_put accumulate", agrad.index_put(t(np.zeros(50)), [i], t(vals), True)
    yield "bincount weights", agrad.bincount(i, t(vals))
    yield "max_pool2d backward", grad_of(lambda x: agrad.max_pool2d(x, 3, 1), image, r.standard_normal((2, 3, 10, 10)))
    yield "reflect pad backward", grad_of(lambda x: agrad.pad(x, [15, 15], mode="reflect"), series.reshape(2, 20)[:, :18],
                                          r.standard_normal((2, 48)))
    yield "unfold backward", grad_of(lambda x: x.unfold(0, 7, 1), series, r.standard_normal((34, 7)))


def test_sums_into_one_place_are_numpys_bit_for_bit_every_run(cuda_backend):
    cpu = {name: value.numpy() for name, value in _scatter_sums("cpu")}
    first = {name: value.cpu().numpy() for name, value in _scatter_sums("cuda")}
    second = {name: value.cpu().numpy() for name, value in _scatter_sums("cuda")}
    for name, want in cpu.items():
        assert np.array_equal(first[name], want), name
        assert np.array_equal(second[name], want), name


def test_cupys_in_order_bincount_sums_each_run_of_positions_in_order():
    """backends/cuda.bincount_in_order's bookkeeping (sort, runs, scatter of the runs' sums) against
    NumPy's bincount, here with NumPy standing in for CuPy: its stable argsort, and the kernel's
    loop (one run, summed from 0.0 in order) written in Python. The kernel itself runs on a GPU only
    (the test above)."""
    import types

    from agrad.backends import cuda

    def kernel(*_source):
        def sums(starts, ends, values):
            out = np.empty(starts.size)
            for j, (a, b) in enumerate(zip(starts, ends)):
                s = 0.0
                for v in values[a:b]:
                    s += v
                out[j] = s
            return out
        return sums

    fake = types.SimpleNamespace(**{k: getattr(np, k) for k in ("zeros", "ones", "empty_like", "flatnonzero")},
                                 argsort=lambda a: np.argsort(a, kind="stable"), ElementwiseKernel=kernel)
    r = np.random.default_rng(3)
    saved = cuda._segment_sums
    try:
        for _ in range(200):
            n, minlength = int(r.integers(0, 60)), int(r.integers(0, 20))
            positions = r.integers(0, 15, n).astype(r.choice([np.int64, np.int32]))
            weights = (r.standard_normal(n) * 10.0 ** r.integers(-8, 8, n)).astype(r.choice([np.float32, np.float64]))
            cuda._segment_sums = None
            got = cuda.bincount_in_order(fake, positions, weights, minlength)
            assert got.dtype == np.float64
            assert np.array_equal(got, np.bincount(positions, weights=weights, minlength=minlength))
    finally:
        cuda._segment_sums = saved
