"""The one code generator: every Python function agrad writes at run time is defined here.

agrad generates code where PyTorch does (its VariableType kernels, its Python bindings):
an op's function (dispatcher), its backend and Autograd kernels, savers and Node.apply
(ops/registry.py), a replayed pass (replay/), and the front end's per-shape builders
(graphs/). Each is source text defined by `define`, which:
- compiles a source once however many ops generate it (ops of one signature generate the
  same text; their own values are in the namespace), and gives each op's copy a filename of
  its own, `<agrad KIND NAME>`;
- registers the text with `linecache` under that filename, so a traceback through generated
  code shows its real lines, as through any file;
- keeps it by owner, so `agrad ops NAME --source` prints what was generated for an op.
"""
from __future__ import annotations

import itertools
import linecache
import types

__all__ = ["define", "sources"]

_compiled: dict = {}        # source -> its module code
_by_owner: dict = {}        # owner -> {filename: source}
_serial = itertools.count(1)


def _renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """`code` and the code of every function it defines, as if read from `filename`."""
    consts = tuple(_renamed(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def define(source, namespace: dict, filename: str, name: str, *, owner: str | None = None):
    """Run the generated `source` (a string, or a list of lines) with `namespace` as its
    globals and return the function `name` it defines. `filename` is what tracebacks show."""
    if not isinstance(source, str):
        source = "\n".join(source) + "\n"
    shown = linecache.cache.get(filename)
    if shown is not None and shown[2] is not _lines(source):     # another text under this name:
        filename = f"{filename[:-1]} #{next(_serial)}>"          # each keeps its own lines
    code = _compiled.get(source)
    if code is None:
        code = _compiled[source] = compile(source, "<agrad generated>", "exec")
    exec(_renamed(code, filename), namespace)      # noqa: S102 — text agrad wrote itself, never user input
    linecache.cache[filename] = (len(source), None, _lines(source), filename)
    if owner is not None:
        _by_owner.setdefault(owner, {})[filename] = source
    return namespace[name]


_split: dict = {}           # source -> its lines, one list however many filenames show it


def _lines(source: str) -> list:
    lines = _split.get(source)
    if lines is None:
        lines = _split[source] = source.splitlines(True)
    return lines


def sources(owner: str) -> dict:
    """{filename: source} of every function generated for `owner` (an op's name), in the
    order they were made."""
    return dict(_by_owner.get(owner, {}))
