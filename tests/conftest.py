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


# The suite's longest tests (each 10-40 s, the ONNX conformance cases' shared fixture the longest),
# run first: pytest-xdist hands tests to its workers in collection order, and one of these among the
# last tests keeps one worker busy while the other has nothing left (tests/onnx is collected late).
_LONG_FIRST = ("onnx/test_conformance.py::",
               "engine/test_engine.py::test_million_node_chain_has_no_recursion",
               "graphs/test_schema_and_examples.py::test_example_gradients_check",
               "graphs/test_check_replay.py::",
               "onnx/test_export.py::test_a_chain_of_thousands_of_ops_exports_with_its_gradient")


def pytest_collection_modifyitems(items):
    def rank(item):
        return next((i for i, long in enumerate(_LONG_FIRST) if long in item.nodeid), len(_LONG_FIRST))
    items.sort(key=rank)    # stable: in the order above, the rest as collected
