"""Problems found against the op registry and by Meta inference, before any kernel runs."""
import pytest

from agrad import graphs
from graph_helpers import where


def problems(graph_file, text):
    return graphs.validate(graph_file(text))


@pytest.mark.parametrize("text,expected", [
    # unknown op, with a near name
    ("inputs: {x: [1.0]}\nnodes:\n  s: summ(x)\n", [("AG016", 3, 6)]),
    # unknown keyword argument, positioned at the keyword
    ("inputs: {x: [1.0]}\nnodes:\n  s: sum(x, dims=0)\n", [("AG017", 3, 13)]),
    ("inputs: {x: [1.0]}\nnodes:\n  s: {op: sum, args: [x], dims: 0}\n", [("AG017", 3, 27)]),
    # arity: too many positional, missing required
    ("inputs: {x: [1.0]}\nnodes:\n  s: neg(x, x)\n", [("AG018", 3, 13)]),
    ("inputs: {x: [1.0]}\nnodes:\n  s: add(x)\n", [("AG018", 3, 6)]),
    ("inputs: {x: [1.0]}\nnodes:\n  s: add(x, x, other=x)\n", [("AG018", 3, 16)]),
    # argument kind against the schema
    ('inputs: {x: [1.0]}\nnodes:\n  s: sum(x, dim="a")\n', [("AG019", 3, 13)]),
    # undefined names in nodes, backward and expect
    ("inputs: {x: [1.0]}\nnodes:\n  s: add(x, xx)\n", [("AG020", 3, 13)]),
    ("inputs: {x: {value: 1.0, requires_grad: true}}\nnodes:\n  s: neg(x)\nbackward: t\n", [("AG020", 4, 11)]),
    ("inputs: {x: 1.0}\nnodes:\n  s: neg(x)\nexpect: {outputs: {q: 1}}\n", [("AG020", 4, 20)]),
    # shapes and dtypes by Meta inference, at the operator's own column
    ("inputs:\n  x: {shape: [2, 3], init: ones}\n  W: {shape: [4, 5], init: ones}\nnodes:\n  h: relu(x @ W)\n",
     [("AG023", 5, 13)]),
    ("inputs:\n  x: {shape: [2, 3], init: ones}\n  y: {shape: [4], init: ones}\nnodes:\n  h: x + y\n",
     [("AG023", 5, 8)]),
    # dtypes by Meta inference
    ("inputs:\n  x: {shape: [2, 2], init: ones}\n  n: {shape: [2, 2], init: ones, dtype: int64}\n"
     "nodes:\n  y: x @ n\n", [("AG024", 5, 8)]),
    ("inputs:\n  x: {shape: [2, 2], init: ones}\nnodes:\n  y: where(x, x, x)\n", [("AG024", 4, 6)]),
    # multi-output nodes are used through one output
    ("inputs: {x: [[1.0, 2.0]]}\nnodes:\n  p: split(x, 1, dim=1)\n  y: relu(p)\n", [("AG022", 4, 11)]),
    ("inputs: {x: [[1.0, 2.0]]}\nnodes:\n  p: split(x, 1, dim=1)\n  y: p[0:1]\n", [("AG022", 4, 7)]),
    ("inputs: {x: [[1.0, 2.0]]}\nnodes:\n  p: split(x, 1, dim=1)\n  y: p[2]\n", [("AG022", 4, 7)]),
    ("inputs: {x: {value: [[1.0, 2.0]], requires_grad: true}}\nnodes:\n  p: split(x, 1, dim=1)\n"
     "backward: p\n", [("AG022", 4, 11)]),
    # an op that rejects its arguments for another reason
    ("inputs: {x: [[1.0]]}\nnodes:\n  y: permute(x, [0, 0])\n", [("AG025", 3, 6)]),
    # a dim out of range is a shape problem; a dtype no kernel takes a dtype problem
    ("inputs: {x: [[1.0]]}\nnodes:\n  y: sum(x, 2)\n", [("AG023", 3, 6)]),
    ("inputs: {n: {value: [1, 2], dtype: int64}}\nnodes:\n  y: gelu(n)\n", [("AG024", 3, 6)]),
    # a non-scalar root without grad_tensors; a root that reaches no leaf requiring grad
    ("inputs: {x: {value: [1.0, 2.0], requires_grad: true}}\nnodes:\n  y: x * 2\nbackward: y\n",
     [("AG026", 4, 11)]),
    ("inputs: {x: [1.0, 2.0]}\nnodes:\n  y: sum(x)\nbackward: y\n", [("AG027", 4, 11)]),
    # grad_tensors of the wrong shape
    ("inputs: {x: {value: [1.0, 2.0], requires_grad: true}}\nnodes:\n  y: x * 2\n"
     "backward: {of: y, grad_tensors: [[1.0, 1.0, 1.0]]}\n", [("AG028", 4, 34)]),
    # backward inputs and retain_grad that cannot hold a gradient
    ("inputs:\n  x: {value: 1.0, requires_grad: true}\n  c: 2.0\nnodes:\n  y: x * c\n"
     "backward: {of: y, inputs: [c]}\n", [("AG029", 6, 28)]),
    ("inputs: {x: 1.0}\nnodes:\n  y: neg(x)\nretain_grad: [y]\n", [("AG034", 4, 15)]),
    # expect on a gradient nobody keeps
    ("inputs: {x: {value: 1.0, requires_grad: true}}\nnodes:\n  y: neg(x)\nbackward: y\n"
     "expect: {grads: {y: 1.0}}\n", [("AG030", 5, 18)]),
    # integer dtypes cannot require grad
    ("inputs: {n: {value: [1, 2], dtype: int64, requires_grad: true}}\nnodes:\n  y: neg(n)\n", [("AG012", 1, 10)]),
])
def test_each_problem_has_its_code_line_and_column(graph_file, text, expected):
    found = problems(graph_file, text)
    assert where(found) == expected, [str(p) for p in found]


def test_messages_are_pytorchs_where_pytorch_has_one(graph_file):
    found = problems(graph_file, "inputs:\n  x: {shape: [2, 3], init: ones}\n  W: {shape: [4, 5], init: ones}\n"
                                 "nodes:\n  h: x @ W\n")
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)" in found[0].message
    found = problems(graph_file, "inputs: {x: {value: [1.0], requires_grad: true}}\nnodes:\n  y: x * 2\n"
                                 "backward: {of: y, grad_tensors: [[1.0, 2.0]]}\n")
    assert found[0].message.startswith("Mismatch in shape: grad_output[0] has a shape of [2]")


def test_did_you_mean_for_ops_and_names(graph_file):
    found = problems(graph_file, "inputs: {weight: [1.0]}\nnodes:\n  s: summ(wieght)\n  t: neg(wieght)\n")
    assert [(p.code, p.hint) for p in found] == [("AG016", "'sum'"), ("AG020", "'weight'"), ("AG020", "'weight'")]


def test_cycle_prints_the_path_with_lines(graph_file):
    found = problems(graph_file, "inputs: {x: 1.0}\nnodes:\n  a: neg(c)\n  b: neg(a)\n  c: add(b, x)\n  d: neg(a)\n")
    assert where(found) == [("AG021", 3, 3)]
    assert "a (line 3) -> c (line 5) -> b (line 4) -> a (line 3)" in found[0].message


def test_a_node_using_itself_is_a_cycle(graph_file):
    found = problems(graph_file, "inputs: {x: 1.0}\nnodes:\n  a: add(a, x)\n")
    assert where(found) == [("AG021", 3, 3)]


def test_codes_come_from_the_engines_error_types_not_their_words():
    from agrad.errors import DimensionError, DtypeError, DtypeNotImplementedError, ShapeError
    from agrad.graphs.build import classify

    assert classify(ShapeError("x")) == classify(DimensionError("x")) == "AG023"
    assert classify(DtypeError("x")) == classify(DtypeNotImplementedError("x")) == "AG024"
    # a plugin kernel's message may say anything: without a type it is the op's own complaint
    assert classify(RuntimeError("shape of the dtype mismatch")) == "AG025"
    # the typed errors are what PyTorch raises, so PyTorch-style handlers still catch them
    assert issubclass(ShapeError, RuntimeError) and issubclass(DimensionError, IndexError)
    assert issubclass(DtypeNotImplementedError, NotImplementedError) and issubclass(DtypeError, RuntimeError)


def test_one_failed_node_does_not_cascade(graph_file):
    found = problems(graph_file, "inputs:\n  x: {shape: [2, 3], init: ones}\nnodes:\n"
                                 "  h: x @ x\n  g: relu(h)\n  k: sum(g)\n")
    assert [p.code for p in found] == ["AG023"]


def test_all_kinds_in_one_pass(graph_file):
    found = problems(graph_file, """\
        dtype: float33
        inputs:
          x: {value: [1.0, 2.0], requires_grad: true}
        nodes:
          a: summ(x)
          b: neg(y)
          c: relu(x
          d: x * 2
        backward: d
        """)
    assert [p.code for p in found] == ["AG008", "AG016", "AG020", "AG014", "AG026"]


def test_nodes_in_any_order_run_topologically_keeping_file_order(graph_file):
    graph = graphs.load(graph_file("inputs: {x: 2.0}\nnodes:\n  d: c * 2\n  b: neg(x)\n  c: b + 1\n  e: neg(x)\n"))
    assert [n.name for n in graph.inspect().nodes] == ["b", "c", "d", "e"]


def test_load_raises_with_every_problem(graph_file):
    with pytest.raises(graphs.GraphFileError) as info:
        graphs.load(graph_file("nodes:\n  a: summ(x)\n"))
    assert [d.code for d in info.value.diagnostics] == ["AG016", "AG020"]
    assert "g.yaml:2:6: error[AG016]" in str(info.value)


def test_unreadable_file_is_a_diagnostic(tmp_path):
    found = graphs.validate(tmp_path / "missing.yaml")
    assert [(d.code, d.location) for d in found] == [("AG031", None)]


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_a_diagnostic_not_read_until_memory_runs_out(device):
    [found] = graphs.validate(device)
    assert (found.code, found.location) == ("AG031", None) and "a device, not a graph file" in found.message


def test_bad_command_line_options_are_diagnostics(graph_file):
    path = graph_file("inputs: {x: 1.0}\nnodes:\n  y: neg(x)\n")
    assert [d.code for d in graphs.validate(path, dtype="float8", device="tpu")] == ["AG008", "AG009"]


def test_validate_runs_no_kernel(graph_file, monkeypatch):
    import agrad.backends.cpu as cpu
    path = graph_file("inputs: {x: {shape: [3], init: normal, requires_grad: true}}\nnodes:\n  y: sum(exp(x))\n"
                      "backward: y\n")
    calls = []
    monkeypatch.setattr(cpu.CPUBackend, "asarray", lambda *a, **k: calls.append(a))
    assert graphs.validate(path) == []
    assert calls == []


def test_a_broken_node_is_reported_once_not_again_at_each_use(graph_file):
    path = graph_file("inputs:\n  x: {value: 1.0, requires_grad: true}\nnodes:\n  y: x +\n  z: y * 2\n"
                      "backward: z\nretain_grad: [y]\n")
    found = graphs.validate(path)
    assert [(d.code, d.location.line) for d in found] == [("AG014", 4)]
