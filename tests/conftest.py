import os

import pytest

os.environ.setdefault("NO_COLOR", "1")


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """A test that fails inside no_grad() must not leak grad mode into the next."""
    import agrad
    yield
    agrad.grad_mode.tls.__init__()


@pytest.fixture
def standin_cuda():
    """The stand-in GPU backend (tests/standin_cuda.py) in place of CuPy's, for one test."""
    from agrad.autograd import get_default_engine
    from agrad.backends import register_backend
    from standin_cuda import StandInCUDA

    previous = register_backend(StandInCUDA())
    yield
    get_default_engine().shutdown_workers()
    register_backend(previous)
