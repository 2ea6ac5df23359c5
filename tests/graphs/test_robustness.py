"""Bad input never gives a traceback: every file yields Diagnostics, or runs, or fails as GraphRuntimeError."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrad import graphs
from graph_helpers import EXAMPLES

NASTY = [
    "", "# only a comment\n", "---\na: 1\n---\nb: 2\n", "\x00\x01", "inputs: [1, 2]\nnodes: {}\n",
    "inputs: {x: {value: null}}\nnodes: {}\n", "inputs: {x: 1.0}\nnodes: {a: {op: add, args: {x: 1}}}\n",
    "nodes: {}\nbackward: 3\n", "nodes: {}\nbackward: [[a]]\n", "nodes: {}\nexpect: {outputs: []}\n",
    "inputs: {x: {shape: abc, init: ones}}\nnodes: {}\n", "inputs: {x: 1.0}\nnodes: {a: {op: 3}}\n",
    "inputs: {x: 1.0}\nnodes: {a: 'add(x, 10**100)'}\n", "inputs: {x: {file: 3}}\nnodes: {a: neg(x)}\n",
    "inputs: {x: {shape: [-1], init: ones}}\nnodes: {}\n", "inputs: {x: 'hello'}\nnodes: {}\n",
    "inputs: {x: 1.0}\nnodes: {a: 'to(x, device=\"tpu\")'}\n", "inputs: {x: 1.0}\nnodes: {a: 'grad(x, x)'}\n",
    "inputs: {x: {value: 1.0, requires_grad: true}}\nnodes: {a: 'grad(x * 2, x)', b: 'a[3]', c: 'a[0:1]'}\n",
    "inputs: {x: 1.0}\nnodes: {a: 'neg(x)'}\nbackward: {of: [], grad_tensors: []}\n",
    "seed: -1\ninputs: {x: {shape: [2], init: normal}}\nnodes: {a: neg(x)}\n",
    "inputs: {x: {shape: [2], init: uniform, low: 1, high: 0}}\nnodes: {a: neg(x)}\n",
    "inputs: {x: 1.0}\nnodes: {a: 'neg(*x)'}\n", "inputs: {x: 1.0}\nnodes: {a: 'x[1.5]'}\n",
    "inputs: {x: 1.0}\nnodes: {a: !!binary aGVsbG8=}\n", "inputs: {x: 1.0}\nnodes: {a: 2020-01-01}\n",
    "inputs: {&a x: 1.0}\nnodes: {*a : neg(x)}\n", "? [a, b]\n: 1\nnodes: {}\n",
    "a: &x [*x]\n", "inputs: {x: 1.0}\nnodes:\n  a: >\n    neg(\n      y)\n",
    "agrad: true\nnodes: {}\n", "inputs: {x: {file: '../../nowhere.npz', key: a}}\nnodes: {a: neg(x)}\n",
]


def outcome(path, check: bool = True):
    """What happens to a file: invalid, a runtime error, or it ran; a file that runs
    also goes through `check` (if asked), which checks it or refuses it with a located reason."""
    diagnostics = graphs.validate(path)
    assert all(isinstance(d, graphs.Diagnostic) for d in diagnostics)
    if diagnostics:
        return "invalid"
    graph = graphs.load(path)
    try:
        graph.run().result()
    except graphs.GraphRuntimeError:
        return "runtime error"
    if not check:
        return "ran"
    try:
        graph.check(fast=True)
    except graphs.GraphFileError as exc:
        assert [d.code for d in exc.diagnostics] == ["AG035"] and exc.diagnostics[0].location is not None
    except graphs.GraphRuntimeError as exc:
        assert exc.location is not None
    return "ran"


@pytest.mark.parametrize("text", NASTY)
def test_nasty_files_give_diagnostics_not_tracebacks(graph_file, text):
    path = graph_file("")
    path.write_text(text)
    assert outcome(path) in ("invalid", "runtime error", "ran")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mangled_examples_never_raise(tmp_path, data):
    source = data.draw(st.sampled_from(sorted(EXAMPLES.glob("*.yaml")))).read_text()
    start = data.draw(st.integers(0, len(source)))
    end = data.draw(st.integers(start, min(len(source), start + 12)))
    insert = data.draw(st.text(alphabet="[]{}():,-*'\"@.0123456789abxy_ \n\t!&", max_size=6))
    path = tmp_path / "mangled.yaml"
    path.write_text(source[:start] + insert + source[end:])
    # a transformer block's check alone takes a second: the small examples go through check
    assert outcome(path, check=len(source) < 1500) in ("invalid", "runtime error", "ran")
