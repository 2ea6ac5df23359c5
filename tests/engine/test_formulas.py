"""agrad.ops.formulas: each op's derivative formulas, read back as text from its declaration
(what `agrad ops NAME` and `agrad ops --formulas` print)."""
import ast
import sys

import agrad  # noqa: F401 — loads the op library
import pytest
from agrad.ops import get_info, registered
from agrad.ops.formulas import (
    COMPOSITE,
    NOT_DIFFERENTIABLE,
    all_formulas,
    formula_text,
    formulas,
)


def test_known_ops_read_as_declared():
    assert formulas("tanh").inputs == {"self": "tanh_backward(grad, result)"}
    # derivatives.yaml's `.conj()`s (written conj_of: a real operand is its own conjugate, without a call)
    assert formulas("mul").inputs == {"self": "grad * other.conj()", "other": "grad * self.conj()"}
    assert formulas("add").inputs == {"self": "grad", "other": "grad if alpha == 1 else grad * alpha.conj()"}
    # PyTorch's mm_mat1_backward / mm_mat2_backward: they look at the input's layout (a column-major weight)
    assert formulas("mm").inputs == {"self": "_mm_mat1_backward(grad, mat2, self_geometry)",
                                     "mat2": "_mm_mat2_backward(grad, self, mat2_geometry)"}
    assert formulas("sin").lines() == [("self", "grad * cos(self).conj()")]


def test_inputs_and_ops_without_formulas_say_why():
    assert formulas("where").inputs["condition"] == NOT_DIFFERENTIABLE
    assert formulas("matmul").kind == "composite" and formulas("matmul").lines() == [("", COMPOSITE)]
    assert formulas("eq").kind == "not differentiable" and formulas("eq").lines() == [("", NOT_DIFFERENTIABLE)]
    assert formulas("to").kind == "composite"         # over _to_copy, whose formula is declared
    assert formulas("_to_copy").inputs == {"self": "_to_copy_backward(grad, self_options)"}


def test_every_op_is_covered_and_every_formula_is_an_expression():
    survey = all_formulas()
    assert [f.op for f in survey] == [info.name for info in registered()]
    for f in survey:
        assert f.lines() and all(text for _, text in f.lines()), f.op
        if f.kind != "formulas":
            continue
        tensors = [a.name for a in get_info(f.op).entry.schema.arguments if a.is_tensor]
        assert list(f.inputs) == [t for t in tensors if t in get_info(f.op).grads], f.op
        for text in f.inputs.values():
            if text != NOT_DIFFERENTIABLE:
                ast.parse(text, mode="eval")


def test_a_function_reads_as_its_returned_expression_or_as_a_call():
    def one(grad, self):
        """A docstring is not the formula."""
        return grad * (1 - self)       # nor is a comment

    def several(grad, self, dim):
        total = grad.sum(dim)
        return total * self

    assert formula_text(one) == "grad * (1 - self)"
    assert formula_text(several) == "several(grad, self, dim)"


def test_a_lambda_over_several_lines_folds_to_one_without_its_comments():
    folded = (lambda grad, self: grad * (self      # NOTE: the comment goes
                                         + 1))
    assert formula_text(folded) == "grad * (self + 1)"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="instruction positions (co_positions) are Python 3.11's")
def test_lambdas_on_one_line_are_told_apart():
    first, second = (lambda grad: grad * 2), (lambda grad: grad * 3)
    assert (formula_text(first), formula_text(second)) == ("grad * 2", "grad * 3")
