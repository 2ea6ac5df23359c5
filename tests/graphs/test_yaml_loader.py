from agrad.graphs.diagnostics import Collector
from agrad.graphs.yaml_loader import load_yaml, position_in_scalar


def load(text):
    collector = Collector("f.yaml")
    return load_yaml(text, collector), collector.diagnostics


def test_values_and_positions_are_kept():
    doc, problems = load("inputs:\n  x: [1, 2]\n  y: {value: 2.0}\n")
    assert problems == []
    assert doc.data == {"inputs": {"x": [1, 2], "y": {"value": 2.0}}}
    assert (doc.key_pos(("inputs", "y")).line, doc.key_pos(("inputs", "y")).col) == (3, 3)
    assert (doc.pos(("inputs", "x", 1)).line, doc.pos(("inputs", "x", 1)).col) == (2, 10)
    assert (doc.pos(("inputs", "y", "value")).line, doc.pos(("inputs", "y", "value")).col) == (3, 14)


def test_duplicate_keys_are_errors_at_the_second_key():
    doc, problems = load("nodes:\n  c: a + b\n  d: a\n  c: a * b\n")
    assert [(d.code, d.location.line, d.location.col) for d in problems] == [("AG002", 4, 3)]
    assert "line 2" in problems[0].message
    assert doc.data["nodes"]["c"] == "a + b"


def test_duplicate_keys_in_flow_mappings_too():
    _, problems = load("x: {value: 1, value: 2}\n")
    assert [(d.code, d.location.line, d.location.col) for d in problems] == [("AG002", 1, 15)]


def test_python_tags_are_rejected_and_nothing_is_constructed():
    doc, problems = load("a: !!python/object/apply:os.system ['echo hacked']\n"
                         "b: !!python/name:os.system x\n")
    assert [(d.code, d.location.line) for d in problems] == [("AG003", 1), ("AG003", 2)]
    assert "python/object/apply:os.system" in problems[0].message
    assert doc.data["b"] == "x"


def test_syntax_error_points_at_the_problem():
    doc, problems = load("a: [1, 2\nb: 3\n")
    assert doc is None
    assert [(d.code, d.location.line) for d in problems] == [("AG001", 2)]


def test_tab_indentation_is_a_syntax_error_with_position():
    _, problems = load("a:\n\tb: 1\n")
    assert problems[0].code == "AG001" and problems[0].location.line == 2


def test_keys_stay_text_not_yaml11_booleans():
    doc, _ = load("on: 1\nno: 2\n1: 3\n")
    assert list(doc.data) == ["on", "no", "1"]


def test_recursive_alias_is_an_error_not_a_hang():
    _, problems = load("a: &x [*x]\n")
    assert [d.code for d in problems] == ["AG005"]


def test_merge_keys_are_rejected():
    _, problems = load("base: &b {x: 1}\nc:\n  <<: *b\n")
    assert [(d.code, d.location.line, d.location.col) for d in problems] == [("AG003", 3, 3)]


def test_column_inside_plain_single_and_double_quoted_scalars():
    text = "a: relu(x @ W1)\nb: 'it''s @ x'\nc: \"q\\x41 @ y\"\n"
    doc, _ = load(text)
    at = lambda key, off: (position_in_scalar(doc, (key,), off).line, position_in_scalar(doc, (key,), off).col)
    assert at("a", 7) == (1, 11)          # the '@'
    assert at("b", 5) == (2, 11)          # '' counts as one character of the value
    assert at("c", 5) == (3, 13)          # \x41 is four source characters for one value character


def test_column_inside_multiline_and_block_scalars():
    doc, _ = load("d:   foo(a,\n      b)\ne: |\n  foo(\n    x)\n")
    pos = position_in_scalar(doc, ("d",), doc.data["d"].index("b"))
    assert (pos.line, pos.col) == (2, 7)
    pos = position_in_scalar(doc, ("e",), doc.data["e"].index("x"))
    assert (pos.line, pos.col) == (5, 5)
