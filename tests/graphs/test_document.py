"""The format checks of SPEC §1: each kind of problem, with its exact line and column."""
import pytest

from graph_helpers import read_text, where


def test_the_seed_example_reads_cleanly():
    spec, problems = read_text("""\
        agrad: 1
        name: seed
        dtype: float32
        device: cpu
        inputs:
          a: {value: 1.0, requires_grad: true}
          b: {value: 2.0, requires_grad: true}
        nodes:
          c: add(a, b)
          d: a * c
        backward: d
        expect:
          outputs: {d: 3.0}
          grads: {a: 4.0, b: 1.0}
        """)
    assert problems == []
    assert [n.name for n in spec.nodes] == ["c", "d"]
    assert spec.nodes[1].op == "mul" and spec.nodes[1].pos.line == 10 and spec.nodes[1].pos.col == 8
    assert [r.name for r in spec.backward[0].roots] == ["d"]
    assert spec.inputs["a"].requires_grad and not spec.inputs.get("z")


@pytest.mark.parametrize("text,expected", [
    ("agrad: 2\nnodes: {}\n", [("AG007", 1, 8)]),
    ("nodez: {}\n", [("AG004", 1, 1), ("AG006", 1, 1)]),
    ("dtype: float33\nnodes: {}\n", [("AG008", 1, 8)]),
    ("device: gpu\nnodes: {}\n", [("AG009", 1, 9)]),
    ("inputs: {x: {value: 1, dtype: int4}}\nnodes: {}\n", [("AG008", 1, 31)]),
    ("inputs:\n  x: {value: 1, requires_grad: yes please}\nnodes: {}\n", [("AG005", 2, 32)]),
    ("inputs:\n  x: {value: 1, reqires_grad: true}\nnodes: {}\n", [("AG004", 2, 17)]),
    ("inputs:\n  x: [[1, 2], [3]]\nnodes: {}\n", [("AG012", 2, 6)]),
    ("inputs:\n  x: {shape: [2], init: gauss}\nnodes: {}\n", [("AG012", 2, 25)]),
    ("inputs:\n  x: {shape: [2]}\nnodes: {}\n", [("AG006", 2, 3)]),
    ("inputs:\n  x: {value: 1, shape: [2], init: ones}\nnodes: {}\n", [("AG012", 2, 17)]),
    ("inputs:\n  x: {shape: [2], init: ones, fill: 2}\nnodes: {}\n", [("AG012", 2, 31)]),
    ("inputs:\n  x: {shape: [2], init: full}\nnodes: {}\n", [("AG006", 2, 3)]),
    ("inputs:\n  x: {file: x.csv}\nnodes: {}\n", [("AG013", 2, 13)]),
    ("inputs:\n  x: {file: x.npz}\nnodes: {}\n", [("AG006", 2, 3)]),
    ("inputs:\n  2x: 1.0\nnodes: {}\n", [("AG010", 2, 3)]),
    ("inputs:\n  x: 1.0\nnodes:\n  x: neg(x)\n", [("AG011", 4, 3)]),
    ("nodes:\n  c: relu(a b)\n", [("AG014", 2, 11)]),
    ("nodes:\n  c: 'relu(a).sum()'\n", [("AG015", 2, 7)]),
    ("nodes:\n  c: \"a < b < c\"\n", [("AG015", 2, 7)]),
    ("nodes:\n  c: {args: [a]}\n", [("AG006", 2, 3)]),
    ("nodes:\n  c: 3\n", [("AG005", 2, 6)]),
    ("nodes: {}\nbackward: {of: d, create_grap: true}\n", [("AG004", 2, 19)]),
    ("nodes: {}\nbackward: {grad_tensors: [1]}\n", [("AG006", 2, 11)]),
    ("nodes: {}\nbackward: {of: [c, d], grad_tensors: [1]}\n", [("AG028", 2, 38)]),
    ("nodes: {}\nbackward: [c, {of: d}]\n", [("AG005", 2, 11)]),
    ("nodes: {}\nexpect: {outputs: {d: [[1], [2, 3]]}}\n", [("AG030", 2, 23)]),
    ("nodes: {}\nexpect: {output: {}}\n", [("AG004", 2, 10)]),
    ("- 1\n- 2\n", [("AG005", 1, 1)]),
])
def test_each_problem_has_its_code_line_and_column(text, expected):
    _, problems = read_text(text)
    assert where(problems) == expected, [str(p) for p in problems]


def test_did_you_mean_for_keys_and_dtypes():
    _, problems = read_text("inputs:\n  x: {value: 1, reqires_grad: true, dtype: flaot32}\nnodes: {}\n")
    assert [p.hint for p in problems] == ["'requires_grad'", "'float32'"]


def test_all_problems_are_reported_in_one_pass():
    _, problems = read_text("""\
        dtype: float33
        device: gpu
        inputs:
          x: {valu: 1}
        nodes:
          c: relu(x
          d: x.exp()
        """)
    assert [p.code for p in problems] == ["AG008", "AG009", "AG004", "AG012", "AG014", "AG015"]


def test_problems_stop_at_twenty():
    body = "".join(f"  n{i}: 'a.b'\n" for i in range(30))
    _, problems = read_text("nodes:\n" + body)
    assert len(problems) == 20


def test_structured_form_strings_naming_tensors_are_refs():
    spec, problems = read_text("""\
        inputs: {h: [[1.0, 2.0]]}
        nodes:
          s: {op: sum, args: [h], dim: 1, keepdim: true}
          t: {op: to, args: [s], dtype: float64}
        """)
    assert problems == []
    s, t = spec.nodes
    assert s.args[0].name == "h" and (s.args[0].pos.line, s.args[0].pos.col) == (3, 23)
    assert s.kwargs == {"dim": 1, "keepdim": True}
    assert t.kwargs == {"dtype": "float64"}          # not a name: a plain string


def test_backward_forms():
    spec, _ = read_text("nodes: {}\nbackward: [c, d]\n")
    assert [[r.name for r in p.roots] for p in spec.backward] == [["c", "d"]]
    spec, _ = read_text("""\
        inputs: {g: [1.0, 1.0]}
        nodes: {}
        backward:
          - {of: c, grad_tensors: [g], retain_graph: true}
          - {of: [c], grad_tensors: [[2.0, 2.0]], inputs: [x], create_graph: true}
        """)
    first, second = spec.backward
    assert first.grad_tensors[0].name == "g" and first.retain_graph is True
    assert second.grad_tensors == [[2.0, 2.0]] and [r.name for r in second.inputs] == ["x"]
    assert second.create_graph is True and second.retain_graph is None


def test_expect_grads_may_be_null():
    spec, problems = read_text("nodes: {}\nexpect: {grads: {a: null}, atol: 0.1}\n")
    assert problems == [] and spec.expect.grads[0].value is None and spec.expect.atol == 0.1
