"""Both builds of the backward engine's loops over Nodes: the C one (engine/autograd/_native_engine.c),
where `pip install` built it, and their Python originals in engine.py, which run wherever it was not
built (no compiler) or AGRAD_PURE_PYTHON=1 is set. A test module that imports `engine_loop` runs each
of its tests under both."""
import pytest

from agrad.autograd import engine


@pytest.fixture(params=["native", "python"], autouse=True)
def engine_loop(request, monkeypatch):
    if request.param == "native":
        if engine._native is None:
            pytest.skip("the C build of the engine's loops is not here (no compiler at install, or AGRAD_PURE_PYTHON)")
    else:
        monkeypatch.setattr(engine, "_native", None)
    return request.param
