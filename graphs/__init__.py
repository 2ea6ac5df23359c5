"""Computation graphs declared in YAML: load, check, run, inspect, gradcheck.

The CLI is one client of this package; everything it shows comes back as the
plain objects of `results.py`. Each name below is imported from its module on first use,
so a command imports what it runs (`run` neither gradcheck, nor training, nor the schema).
"""
import importlib

# name -> the module of this package that holds it
_EXPORTS = {"load": "graph", "validate": "graph", "Graph": "graph", "GraphRun": "runner", "save_npz": "saving",
            "test_file": "testing", "load_plugin": "plugins", "json_schema": "schema", "CODES": "diagnostics",
            **dict.fromkeys(("Diagnostic", "SourceLocation", "GraphFileError", "GraphRuntimeError", "RunResult",
                             "InspectResult", "CheckResult", "TensorSummary", "TestOutcome"), "results")}

__all__ = list(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
