"""Runtime failures (exit status 3): an engine exception becomes a GraphRuntimeError
with a code chosen by the exception's type (AG040–AG046, see diagnostics.CODES), the
engine's message (PyTorch's, where PyTorch has one) and the place in the file it
belongs to. `run`, `check` and `test` all report through here, so one failure reads
the same from every command: `FILE:LINE:COL: error[AGnnn]: MESSAGE`.
"""
from __future__ import annotations

from agrad.errors import AllocationError, FreedGraphError

from .results import GraphRuntimeError, SourceLocation

FREED_GRAPH = "AG040"
FORWARD_KERNEL = "AG041"
BACKWARD_NODE = "AG042"
DEVICE_UNAVAILABLE = "AG043"
OUT_OF_MEMORY = "AG044"
PLUGIN_KERNEL = "AG045"
INPUT_TENSOR = "AG046"


def _code(exc: BaseException, default: str) -> str:
    """What kind of runtime failure `exc` is; the engine's types decide, not its words."""
    from agrad import DeviceUnavailableError

    if isinstance(exc, FreedGraphError):
        return FREED_GRAPH
    if isinstance(exc, DeviceUnavailableError):
        return DEVICE_UNAVAILABLE
    # NumPy's and CuPy's out-of-memory errors are MemoryErrors; agrad's own refusal ahead of one is an AllocationError
    if isinstance(exc, (MemoryError, AllocationError)):
        return OUT_OF_MEMORY
    return default


def _text(exc: BaseException) -> str:
    """The engine's message; a RuntimeError's is PyTorch's and stands alone, any other
    exception (a plugin's ZeroDivisionError) keeps its type's name."""
    if isinstance(exc, MemoryError):
        return f"out of memory{': ' + str(exc) if str(exc) else ''}"
    if isinstance(exc, RuntimeError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class Failures:
    """Locates failures in one graph file and gives them their codes."""

    def __init__(self, spec, file: str):
        self.file = file
        self.node_pos = {n.name: n.pos for n in spec.nodes}
        self.input_pos = {name: i.pos for name, i in spec.inputs.items()}
        self.ops = {n.name: n.op for n in spec.nodes}
        self.owners = {n.name: n.owner for n in spec.nodes}     # `loss.2` -> `loss`: messages name nodes

    def _what(self, name: str) -> str:
        owner = self.owners.get(name, name)
        op = self.ops.get(name, "?")
        return f"{name} = {op}(...)" if owner == name else f"{op}(...) in '{owner}'"

    def location(self, name: str | None) -> SourceLocation | None:
        pos = self.node_pos.get(name) or self.input_pos.get(name)
        return SourceLocation(self.file, pos.line, pos.col) if pos is not None else None

    def _is_plugin(self, name: str | None) -> bool:
        # a namespaced op (`myops::scale`) can only come from a --plugin file
        return "::" in self.ops.get(name, "")

    def forward(self, name: str, exc: BaseException) -> GraphRuntimeError:
        """Node `name`'s op raised while computing its value."""
        default = PLUGIN_KERNEL if self._is_plugin(name) else FORWARD_KERNEL
        message = f"{self._what(name)}: {_text(exc)}"
        return GraphRuntimeError(message, self.location(name), name, code=_code(exc, default))

    def backward(self, exc: BaseException, yaml_node: str | None, node_name: str | None,
                 fallback: SourceLocation | None) -> GraphRuntimeError:
        """A backward pass failed in the Node `node_name`, made by YAML node `yaml_node`
        (None when the engine failed before reaching one: then at the pass itself)."""
        default = PLUGIN_KERNEL if self._is_plugin(yaml_node) else BACKWARD_NODE
        if yaml_node is not None:
            what = f"backward of {self.owners.get(yaml_node, yaml_node)}" + (f" ({node_name})" if node_name else "")
        else:
            what = "backward" + (f" ({node_name})" if node_name else "")
        location = self.location(yaml_node) or fallback
        return GraphRuntimeError(f"{what}: {_text(exc)}", location, yaml_node, code=_code(exc, default))

    def leaf(self, name: str, exc: BaseException) -> GraphRuntimeError:
        """Input `name`'s tensor could not be made (on its device)."""
        return GraphRuntimeError(f"input '{name}': {_text(exc)}", self.location(name), name,
                                 code=_code(exc, INPUT_TENSOR))
