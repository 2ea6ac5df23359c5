import pytest

from agrad.graphs.expressions import ExpressionError, Index, Ref, Slice, TensorIndex, parse_expression


def format_arg(value):
    if isinstance(value, Ref):
        return value.name
    if isinstance(value, list):
        return "[" + ", ".join(format_arg(v) for v in value) + "]"
    return str(value)


def shape_of(text, target="h"):
    return [(c.name, c.op, [format_arg(a) for a in c.args], c.kwargs) for c in parse_expression(target, text)]


def test_infix_is_sugar_for_ops():
    assert shape_of("a * c", "d") == [("d", "mul", ["a", "c"], {})]
    # Python's precedence: ** binds tighter than @ and /, which bind tighter than + and -.
    assert [op for _, op, _, _ in shape_of("a + b - c / d ** e @ f")] == ["add", "pow", "div", "matmul", "sub"]


@pytest.mark.parametrize("text,op", [("a + b", "add"), ("a - b", "sub"), ("a * b", "mul"), ("a / b", "div"),
                                     ("a ** b", "pow"), ("a @ b", "matmul"), ("-a", "neg"), ("a < b", "lt")])
def test_each_operator_maps_to_its_op(text, op):
    assert shape_of(text)[-1][1] == op


def test_nested_expressions_become_numbered_intermediates_in_evaluation_order():
    assert shape_of("relu(x @ W1 + b1)") == [
        ("h.1", "matmul", ["x", "W1"], {}), ("h.2", "add", ["h.1", "b1"], {}), ("h", "relu", ["h.2"], {})]


def test_keywords_literals_and_lists():
    calls = parse_expression("r", 'sum(reshape(x, [4, 6]), dim=-1, keepdim=True, reduction="sum")')
    assert calls[0].op == "reshape" and calls[0].args[1] == [4, 6]
    assert calls[1].kwargs == {"dim": -1, "keepdim": True, "reduction": "sum"}


def test_names_keep_their_offsets():
    call = parse_expression("d", "add(a,  bb)")[0]
    assert call.args == [Ref("a", 4), Ref("bb", 8)]
    assert call.offset == 0


def test_operator_offset_is_the_operator_itself():
    assert parse_expression("d", "(a)  *  c")[0].offset == 5


def test_subscripts_are_basic_indexing():
    call = parse_expression("y", "x[0:2, :, -1, None, ..., ::2]")[0]
    assert call.op == "getitem"
    assert call.args[1] == Index((Slice(0, 2, None), Slice(None, None, None), -1, None, Ellipsis,
                                  Slice(None, None, 2)))
    assert parse_expression("p0", "parts[0]")[0].args[1].is_single_int()


def test_subscripts_with_tensor_names_and_lists():
    call = parse_expression("y", "x[idx, :, [0, -2], [[True], [False]]]")[0]
    assert call.args[1] == Index((TensorIndex(2, "idx"), Slice(None, None, None), [0, -2], [[True], [False]]))
    assert call.args[2] == Ref("idx", 2)          # the index tensor is the getitem's third argument
    assert str(call.args[1]) == "[idx, :, [0, -2], [[True], [False]]]"
    two = parse_expression("y", "x[i, j]")[0]
    assert [a.name for a in two.args[2:]] == ["i", "j"] and two.args[1].items == (TensorIndex(2, "i"),
                                                                                  TensorIndex(3, "j"))


@pytest.mark.parametrize("text,offset,fragment", [
    ("x.sum()", 0, "methods are not supported"),
    ("relu(x).sum()", 0, "methods are not supported"),
    ("add(a, lambda q: q)", 7, "lambda"),
    ("stack([q for q in a])", 6, "comprehension"),
    ("a < b < c", 0, "chained"),
    ("a % b", 2, "'%'"),
    ("x[i + 1]", 2, "a tensor's name or a list of integers"),
    ("a if b else c", 0, "conditional"),
    ("f(**kw)", 2, "unpacking"),
    ("x", 0, "must apply an op"),
])
def test_unsupported_constructs_point_at_their_column(text, offset, fragment):
    with pytest.raises(ExpressionError) as info:
        parse_expression("h", text)
    assert info.value.code == "AG015"
    assert info.value.offset == offset
    assert fragment in info.value.message


@pytest.mark.parametrize("text,offset", [("relu(x", 4), ("a +* b", 3), ("  a b", 4), ("", 0)])
def test_syntax_errors_point_at_their_column(text, offset):
    with pytest.raises(ExpressionError) as info:
        parse_expression("h", text)
    assert info.value.code == "AG014"
    assert info.value.offset == offset


def test_leading_spaces_shift_offsets():
    call = parse_expression("h", "   neg(a)")[0]
    assert call.offset == 3 and call.args == [Ref("a", 7)]


def test_non_ascii_strings_count_characters_not_bytes():
    call = parse_expression("h", 'f("é", a)')[0]
    assert call.args[1] == Ref("a", 7)


def test_an_expression_too_deep_to_parse_is_a_diagnostic_not_a_crash():
    from agrad.graphs.expressions import ExpressionError, parse_expression
    with pytest.raises(ExpressionError) as info:
        parse_expression("y", " + ".join(["x"] * 5000))
    assert info.value.code == "AG014" and "nested too deeply" in info.value.message
    assert len(parse_expression("y", " + ".join(["x"] * 200))) == 199    # deep, but fine
