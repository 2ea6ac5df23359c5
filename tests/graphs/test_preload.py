"""Timings tell the truth (issue 19 §6): what a graph's kernels import on first use (SciPy's special
functions) is imported when the graph is loaded, outside the clocks, and only when the graph needs it."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""\
    import sys
    import agrad.graphs as G
    graph = G.load(sys.argv[1])
    print("scipy.special" in sys.modules)
    """)


def _imports_scipy_on_load(path) -> bool:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() == "True"


def test_a_graph_that_needs_special_functions_loads_them_before_the_forward_clock(graph_file):
    assert _imports_scipy_on_load(graph_file("inputs: {x: {value: [0.5, 1.0]}}\nnodes:\n  y: gelu(x)\n"))


def test_a_graph_that_does_not_never_pays_for_scipy(graph_file):
    assert not _imports_scipy_on_load(graph_file("inputs: {x: {value: [0.5, 1.0]}}\nnodes:\n  y: relu(x * x)\n"))
