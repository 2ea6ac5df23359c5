import os

import pytest

os.environ.setdefault("NO_COLOR", "1")


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """A test that fails inside no_grad() must not leak grad mode into the next."""
    import agrad
    yield
    agrad.grad_mode.tls.__init__()
