"""Computation graphs declared in YAML: load, check, run, inspect, gradcheck.

The CLI is one client of this package; everything it shows comes back as the
plain objects of `results.py`.
"""
from .diagnostics import CODES
from .graph import Graph, load, validate
from .plugins import load_plugin
from .results import (CheckResult, Diagnostic, GraphFileError, GraphRuntimeError, InspectResult, RunResult,
                      SourceLocation, TensorSummary, TestOutcome)
from .runner import GraphRun
from .saving import save_npz
from .schema import json_schema
from .testing import test_file

__all__ = ["load", "validate", "Graph", "GraphRun", "save_npz", "test_file", "load_plugin", "json_schema", "CODES",
           "Diagnostic", "SourceLocation", "GraphFileError", "GraphRuntimeError", "RunResult", "InspectResult",
           "CheckResult", "TensorSummary", "TestOutcome"]
