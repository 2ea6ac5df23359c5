"""What a PyTorch user writes by habit in a graph expression, and what to write instead.

Expressions call ops by name (`relu(x)`, `sum(h, dim=1)`, `t(W)`); PyTorch code reaches
them through modules and methods (`torch.relu(x)`, `F.softmax(h)`, `h.sum(dim=1)`,
`W.T`). Each habit gets its own message and the expression as it should be written,
shown as the "did you mean" of the diagnostic.
"""
from __future__ import annotations

import ast

# Module names PyTorch (and NumPy) code calls functions through: `torch.relu`, `F.softmax`,
# `torch.nn.functional.gelu`, `np.exp`.
MODULE_PREFIXES = frozenset({"torch", "F", "nn", "functional", "np", "numpy", "agrad", "math", "special"})
# Keyword arguments spelled the NumPy way, and agrad's (PyTorch's) names for them; and PyTorch's
# `generator=` (a Generator object, which a file cannot hold), for which the random ops take `seed`.
KEYWORD_ALIASES = {"axis": "dim", "axes": "dims", "keepdims": "keepdim", "dims": "dim", "generator": "seed"}


def _dotted(node: ast.AST) -> tuple[list[str], ast.AST]:
    """`torch.nn.functional.gelu` -> (["torch", "nn", "functional", "gelu"], the Name `torch`)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return parts[::-1], node


def call_habit(call: ast.Call, segment) -> tuple[str, str] | None:
    """(message, what to write) for `torch.relu(x)` or `h.sum(dim=1)`; `segment(node)` is the source
    text of a node. None for a callee that is no habit we know."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    parts, root = _dotted(func)
    arguments = [segment(a) for a in call.args] + [segment(k) for k in call.keywords]
    if isinstance(root, ast.Name) and parts[0] in MODULE_PREFIXES and len(parts) > 1:
        written = ".".join(parts)
        return (f"'{written}(...)' is PyTorch's spelling; graph files call ops by name: drop the prefix "
                f"'{'.'.join(parts[:-1])}.'", f"{func.attr}({', '.join(arguments)})")
    # a method call: `h.sum(dim=1)`, `x.view(2, 3)` -- the op with the tensor as its first argument
    receiver = segment(func.value)
    return (f"methods are not supported: '.{func.attr}(...)' is written as the op {func.attr}() with the "
            "tensor first", f"{func.attr}({', '.join([receiver] + arguments)})")


def attribute_habit(node: ast.Attribute, segment) -> tuple[str, str | None]:
    """(message, what to write) for a tensor attribute in an expression (`W.T`, `x.shape`)."""
    receiver = segment(node.value)
    if node.attr == "T":
        return "'.T' is not supported; transpose with the op t()", f"t({receiver})"
    if node.attr == "mT":
        return "'.mT' is not supported; transpose the last two dims with transpose()", \
            f"transpose({receiver}, -2, -1)"
    parts, root = _dotted(node)
    if isinstance(root, ast.Name) and parts[0] in MODULE_PREFIXES:
        return (f"'{'.'.join(parts)}' is a module attribute; graph files have only ops, inputs and nodes", None)
    return f"attribute access ('.{node.attr}') is not supported; call an op by its name, e.g. relu(x)", None


def device_hint(value: str) -> str | None:
    """`gpu` -> `cuda`, `gpu:1` or `cuda1` -> `cuda:1`: the device names other frameworks use."""
    import re

    match = re.fullmatch(r"(?:gpu|cuda|nvidia)\s*:?\s*(\d*)", value.strip().lower())
    if match is None or value == "cuda":
        return None
    return f"cuda:{match.group(1)}" if match.group(1) else "cuda"
