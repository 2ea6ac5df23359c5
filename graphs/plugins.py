"""`--plugin FILE.py`: import a file that registers ops through `agrad.library`.

Only files named on the command line are imported; a graph file alone never
runs outside code.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from .results import Diagnostic, GraphFileError, SourceLocation

_loaded: dict[Path, ModuleType] = {}


def load_plugin(path) -> ModuleType:
    """Import the plugin at `path` once; its errors become an AG032 Diagnostic."""
    path = Path(path)
    resolved = path.resolve()
    if resolved in _loaded:
        return _loaded[resolved]
    import hashlib      # here: a run without --plugin does not import it

    # (os.fsencode: a file name need not be UTF-8 text; its undecodable bytes are surrogates in str)
    name = "agrad_plugin_" + hashlib.sha1(os.fsencode(resolved)).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None or not resolved.is_file():
        raise GraphFileError([Diagnostic("AG032", f"cannot import plugin {path}: no such Python file", None)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        # what it prints as it loads (`print("registered myops")`) is no result: stdout holds only the
        # command's own output (SPEC §2.1: a JSON document under --format json), everything else stderr
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except KeyboardInterrupt:       # Ctrl-C while it imports: an interrupt (exit 130), not its failure
        del sys.modules[name]
        raise
    except BaseException as exc:    # noqa: BLE001 - whatever it raised, reported at its line
        # NOTE: a plugin's sys.exit() is its failure, not the end of agrad (which would exit 0); so is
        # any other BaseException it raises (GeneratorExit, its own), which would end agrad in a traceback.
        # No signal handler of agrad's is installed while a plugin is imported: nothing else arrives here.
        del sys.modules[name]
        import traceback

        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == resolved]
        line = exc.lineno if isinstance(exc, SyntaxError) else (frames[-1].lineno if frames else 1)
        what = (f"tried to exit agrad (SystemExit({exc.code!r}))" if isinstance(exc, SystemExit) else
                f"raised {type(exc).__name__}: {exc}")
        raise GraphFileError([Diagnostic("AG032", f"plugin {what}",
                                         SourceLocation(str(path), line or 1, 1))]) from exc
    _loaded[resolved] = module
    return module
