"""Both ways an op's backward Node is recorded: in C (engine/autograd/_native_recording.c), where
`pip install` built it, and by each op's generated Python Autograd kernel, which records every call
wherever it was not built (no compiler) or AGRAD_PURE_PYTHON=1 is set. A test module that imports
`recording` runs each of its tests under both."""
import pytest

from agrad.autograd import recording as _recording


@pytest.fixture(params=["native", "python"], autouse=True)
def recording(request, monkeypatch):
    if request.param == "native":
        if _recording.record is None:
            pytest.skip("the C recording is not here (no compiler at install, or AGRAD_PURE_PYTHON)")
    else:
        monkeypatch.setattr(_recording, "record", None)
    return request.param
