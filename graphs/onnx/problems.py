"""What goes wrong with an ONNX model, as types the CLI maps to exit statuses."""
from __future__ import annotations

INSTALL = "pip install 'agrad[onnx]'"


class MissingOnnx(ImportError):
    """The `onnx` package (the `agrad[onnx]` extra) is not installed."""

    def __init__(self, what: str = "onnx"):
        super().__init__(f"the {what} package is needed for this command; install it with: {INSTALL}")


class ModelError(Exception):
    """A model that cannot be read or translated: every problem found, each one line that
    names where (`MODEL.onnx: node 12 '/fc1/Gemm' (Gemm, opset 17): ...`). Nothing is written."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def require_onnx():
    """The `onnx` module, or MissingOnnx."""
    try:
        import onnx
    except ImportError:
        raise MissingOnnx() from None
    return onnx
