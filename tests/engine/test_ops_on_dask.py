"""Every op's samples on dask arrays against the same samples on the CPU, values and
gradients: each op gives the CPU's result on dask or is refused (agrad.backends.dask.REFUSED),
and a refused op raises its refusal instead of computing something else. Nothing silent.

dask's synchronous scheduler keeps this fast and in one thread; every tensor a sample gives
is computed in one `compute` call, as `agrad run --device dask` computes a run's results."""
import numpy as np
import pytest

import agrad
import op_sample_runs
from agrad.backends import dask as dask_backend
from agrad.errors import UnsupportedOnDeviceError

dask = pytest.importorskip("dask")


def _tolerance(dtype):
    # dask sums a chunked dimension chunk by chunk: the same terms in another order
    return {"rtol": 1e-5, "atol": 1e-6} if dtype in (np.float32, np.float16) else {"rtol": 1e-10, "atol": 1e-12}


def _compare(cpu, lazy, what):
    assert lazy.dtype == cpu.dtype, f"{what}: dtype {lazy.dtype} on dask, {cpu.dtype} on the CPU"
    assert lazy.shape == cpu.shape, f"{what}: shape {lazy.shape} on dask, {cpu.shape} on the CPU"
    if cpu.dtype.kind in "fc":
        np.testing.assert_allclose(lazy, cpu, equal_nan=True, err_msg=what, **_tolerance(cpu.dtype))
    else:
        np.testing.assert_array_equal(lazy, cpu, err_msg=what)


def _dask_cases():
    """Every op's samples, but for two kinds whose kernels the other ops' samples run on dask already:
    - the backward ops' own samples (grid_sampler_2d_backward, interpolate_backward, ...): their kernels
      run in the gradients of their forward ops' samples, which this test computes on dask and compares
      (on dask they cost a quarter of the suite's time);
    - a composite op (lstm, grid_sample, quantile, ...) has no kernel of its own: its first sample shows
      that its composition runs on dask (or meets the refusal of an op it calls), and its other samples'
      branches are those of the ops it calls, each compared here with its own samples (a third of this
      test's time went to composites' samples);
    and an op's samples past its sixth: its dask kernel is its CPU kernel's code on dask's array API, whose
    calls the first samples run; the rest (interpolate's 19 modes and sizes, the grid samplers' grid of
    paddings and alignments) vary the arguments of branches that make the same array calls (19 s of CPU)."""
    seen: dict = {}
    for param in op_sample_runs.cases(lambda info: not info.name.endswith("_backward")):
        info = param.values[0]
        count = seen[info.name] = seen.get(info.name, 0) + 1
        if count > (1 if info.composite is not None else MAX_SAMPLES):
            continue
        yield param


MAX_SAMPLES = 6


@pytest.mark.parametrize("info,sample", list(_dask_cases()))
def test_dask_matches_cpu_or_refuses(info, sample):
    with dask.config.set(scheduler="synchronous"):
        why = agrad.backends.get_backend("dask").refusal(info.name)
        if why is not None:
            # a composite op that autograd runs op by op meets the refusal of the op it calls
            with pytest.raises(UnsupportedOnDeviceError, match="is not supported on device dask: "):
                op_sample_runs.run(info, sample, "dask")
            return
        cpu_outs, cpu_grads = op_sample_runs.run(info, sample, "cpu")
        lazy_outs, lazy_grads = op_sample_runs.run(info, sample, "dask")
        assert all(o.device.type == "dask" for o in lazy_outs)
        assert [g is None for g in lazy_grads] == [g is None for g in cpu_grads]
        tensors = [t for t in lazy_outs + lazy_grads if t is not None]
        computed = iter(dask_backend.compute([t.detach()._data for t in tensors]))
        for i, (c, g) in enumerate(zip(cpu_outs, lazy_outs)):
            _compare(c.detach().numpy(), next(computed), f"{info.name} output {i}")
        for i, (c, g) in enumerate(zip(cpu_grads, lazy_grads)):
            if c is not None:
                assert g.device.type == "dask"
                _compare(c.numpy(), next(computed), f"{info.name} gradient {i}")
