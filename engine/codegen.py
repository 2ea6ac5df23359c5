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

`deferred` hands out a function before its code exists (an op's function): its code is
generated on its first call, so a program pays for the ops it calls, not for every op
declared (start-up grows with what a graph uses, not with the library).
"""
from __future__ import annotations

import itertools
import linecache
import types

__all__ = ["define", "deferred", "resolve", "sources"]

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


# the code of a deferred function until its first call: it generates the real code, then calls it
_STUB = next(c for c in compile("def stub(*args, **kwargs):\n    return _agrad_first_call(args, kwargs)\n",
                               "<agrad deferred>", "exec").co_consts if isinstance(c, types.CodeType))


def deferred(name: str, generate, *, owner: str | None = None):
    """A function `name` whose code is generated on its first call: `generate()` returns
    (source, namespace, filename) for `define`. The function object is the one returned
    here, before and after (the real code replaces the stub's in place), so it can be
    imported, stored and bound as a method before it exists; the call that generates it
    costs one `define`, every later call nothing more."""
    namespace: dict = {}
    fn = types.FunctionType(_STUB, namespace, name)

    def first_call(args, kwargs):
        resolve(fn)
        return fn(*args, **kwargs)
    namespace["_agrad_first_call"] = first_call
    namespace["_agrad_pending"] = (generate, owner)
    return fn


def resolve(fn) -> None:
    """Generate a `deferred` function's code now, if its first call has not (`agrad ops NAME
    --source` shows it; `inspect.signature` reads it)."""
    namespace = getattr(fn, "__globals__", None)
    pending = namespace.get("_agrad_pending") if namespace is not None else None
    if pending is None or fn.__code__ is not _STUB:
        return
    generate, owner = pending
    source, values, filename = generate()
    namespace.update(values)
    real = define(source, namespace, filename, fn.__name__, owner=owner)
    fn.__defaults__, fn.__kwdefaults__ = real.__defaults__, real.__kwdefaults__
    fn.__code__ = real.__code__
    namespace.pop("_agrad_first_call", None)
    namespace.pop("_agrad_pending", None)


def sources(owner: str) -> dict:
    """{filename: source} of every function generated for `owner` (an op's name), in the
    order they were made."""
    return dict(_by_owner.get(owner, {}))
