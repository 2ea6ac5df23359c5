"""The import staircase: `cli -> graphs -> engine`, and inside the engine bottom to top,
with no cycle and no upward edge, lazily or not.

Every import is counted: module-level, inside functions, and `importlib.import_module` of a
literal name. A module that imports `pkg.mod` also imports `pkg` (Python runs the package's
`__init__` first), so package `__init__` files are part of the graph too.

The engine's floors, bottom to top (a module may import its own floor and the floors below):
the leaves (`dispatch_keys`, `_device`, `dtypes`, `errors`), `backends`, `grad_mode` and the
message helpers, the shape helpers, `_tensor`, `creation`, the dispatcher, autograd, the op
library, `library`/`optim`/`testing`/`replay`, the public API, `nn`.

Edges go up only where named in ALLOWED_UPWARD: `_tensor.load_op_library` (see its docstring): a
Tensor used before the op library has loaded loads it, so that any public part of agrad can be a
program's first import; and `agrad.cuda.amp` / `agrad.cpu.amp`, which their packages load when first
asked for, as torch.cuda.amp is an attribute of torch.cuda.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"engine": "agrad", "graphs": "agrad.graphs", "cli": "agrad.cli"}

# (module prefix, floor); the longest matching prefix decides a module's floor
FLOORS = [
    ("agrad.dispatch_keys", 0), ("agrad._device", 0), ("agrad.dtypes", 0), ("agrad.layouts", 0), ("agrad.memory_formats", 0), ("agrad.errors", 0),
    ("agrad._allocation", 0), ("agrad.return_types", 0),
    ("agrad.runtime_settings", 0),                  # ATen Context's settings, the SDP flags the attention op reads
    ("agrad.warn_once", 0), ("agrad.user_warnings", 0), ("agrad.fp_warnings", 0), ("agrad._atomic_write", 0),
    ("agrad.backends", 1), ("agrad.grad_mode", 1), ("agrad.messages", 1), ("agrad.codegen", 1),
    ("agrad.watchers", 1), ("agrad.cuda", 1),
    ("agrad.shapes", 2), ("agrad._tensor_str", 2), ("agrad.storage", 2),
    ("agrad._tensor", 3),
    ("agrad.generator", 4), ("agrad.creation", 4), ("agrad.random", 4),
    ("agrad.overrides", 4),                         # __torch_function__'s protocol, below the dispatcher that runs it
    ("agrad.dispatcher", 5), ("agrad._linalg_utils", 5),    # reaches the ops by name; Tensor's methods call it
    ("agrad.autograd", 6),
    ("agrad.ops", 7),
    ("agrad.library", 8), ("agrad.legacy_tensor_types", 8), ("agrad.optim", 8), ("agrad.testing", 8), ("agrad.replay", 8),
    ("agrad.special", 8), ("agrad.linalg", 8), ("agrad.foreach", 8),
    ("agrad.profiler", 8),                          # torch.profiler: a schedule over autograd's profiler
    ("agrad.amp", 8),                               # autocast's dispatch-key fallback and GradScaler, on the ops
    ("agrad.cpu", 1), ("agrad.cuda.amp", 8), ("agrad.cpu.amp", 8),   # torch.cpu/cuda.amp: agrad.amp's old names
    ("agrad._lowrank", 8), ("agrad._lobpcg", 8),   # solvers written in the ops
    ("agrad._api", 9), ("agrad", 9),
    ("agrad.nn", 10),
    # agrad.utils: the dispatch modes and the subclasses' __torch_dispatch__ (the Python key's fallback) sit on
    # the dispatcher; checkpoint_sequential takes an nn.Sequential; _pytree is agrad.func's
    ("agrad.utils", 6), ("agrad.utils.checkpoint", 10), ("agrad.utils._pytree", 10),
    ("agrad.testing._internal", 10),                 # torch.testing._internal's tensor subclasses, on utils
    ("agrad.optim.swa_utils", 10),                   # AveragedModel is a Module
    ("agrad.func", 10),                              # functional_call is nn.utils.stateless's
    ("agrad.distributions", 10),                     # relaxed and one-hot distributions call nn.functional
    ("agrad.control_flow", 10),                      # cond and while_loop flatten with func's pytrees
    ("agrad.compiler", 10),                          # torch.compile: a compiled Module is an OptimizedModule
    ("agrad.graphs", 11),
    ("agrad.cli", 12), ("agrad.__main__", 12),       # `python -m agrad` runs the CLI
]
ALLOWED_UPWARD = {("agrad._tensor", "agrad.ops"),
                  # torch.cuda.amp / torch.cpu.amp: attributes of their packages, loaded on first use, and the
                  # old spellings of agrad.amp, which is built on the ops
                  ("agrad.cuda", "agrad.cuda.amp"), ("agrad.cpu", "agrad.cpu.amp")}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            if "examples" in path.parts:
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _imports(name: str, path: Path, modules: dict) -> set[str]:
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            for a in node.names:
                full = f"{base}.{a.name}"
                targets.add(full if full in modules else base)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            targets.add(node.args[0].value)
    edges = set()
    for target in targets:
        parts = target.split(".")
        for i in range(2, len(parts) + 1):          # the module and the packages Python imports on the way
            prefix = ".".join(parts[:i])
            if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                edges.add(prefix)
    return edges


@functools.cache
def _scan() -> dict[str, frozenset[str]]:
    modules = _modules()
    return {name: frozenset(_imports(name, path, modules)) for name, path in modules.items()}


def _graph() -> dict[str, set[str]]:
    """Each module's imports of agrad modules (parsed once for all the tests here; a copy each)."""
    return {name: set(targets) for name, targets in _scan().items()}


def _floor(name: str) -> int:
    return max(((len(prefix), floor) for prefix, floor in FLOORS
                if name == prefix or name.startswith(prefix + ".")), default=(0, None))[1]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, without recursion)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(sorted(graph[start])))]
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_every_module_has_a_floor():
    assert [name for name in _graph() if _floor(name) is None] == []


def test_no_import_goes_up_a_floor():
    graph = _graph()
    upward = sorted(f"{name} (floor {_floor(name)}) imports {target} (floor {_floor(target)})"
                    for name, targets in graph.items() for target in targets
                    if _floor(target) > _floor(name) and (name, target) not in ALLOWED_UPWARD)
    assert upward == []


def test_no_import_cycle():
    graph = _graph()
    for name, target in ALLOWED_UPWARD:
        graph[name].discard(target)
    assert _cycles(graph) == []


def test_the_scan_sees_the_known_upward_edge():
    """The scan itself works: it finds the one allowed edge, made with import_module."""
    assert "agrad.ops" in _graph()["agrad._tensor"]
