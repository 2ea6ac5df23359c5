"""Golden tables: the renderers at a fixed width (100 columns, no colour)."""
from __future__ import annotations

from agrad.graphs.results import ExpectResult, TensorSummary
from cli_results import failed_expect, render_text, seed_check, seed_inspect, seed_profile, seed_run

from agrad.cli.inspect_tables import inspect_view
from agrad.cli.profile_table import profile_view
from agrad.cli.tables import check_view, closing_line, ops_view, run_view
from agrad.cli.tensor_text import value_text


def test_run_table_seed(golden):
    golden("run_seed", render_text(run_view(seed_run())))


def test_run_table_marks_failed_expect_and_unreached_grad(golden):
    result = seed_run(expect=failed_expect(), grads={"a": seed_run().grads["a"], "b": None})
    golden("run_failed_expect", render_text(run_view(result)))


def test_run_table_with_repeat_shows_min_and_median(golden):
    repeat = {phase: {"min": ms, "median": ms * 2} for phase, ms in seed_run().timings_ms.items()}
    golden("run_repeat", render_text(run_view(seed_run(repeat=repeat), passes=5)))


def test_profile_table_pairs_forward_and_backward_per_node(golden):
    golden("profile_seed", render_text(profile_view(seed_profile())))


def test_inspect_tables_seed(golden):
    golden("inspect_seed", render_text(inspect_view(seed_inspect())))


def test_check_table_failed_leaf(golden):
    golden("check_failed", render_text(check_view(seed_check(passed=False), eps=1e-6, atol=1e-5, rtol=1e-3)))


def test_large_tensor_prints_summary_line_not_values():
    big = TensorSummary(shape=[10, 10], dtype="float32", device="cpu", value=[[0.5] * 10] * 10,
                        summary={"min": -1.25, "max": 3.5, "mean": 0.125, "norm": 12.0}, numel=100)
    assert value_text(big) == "shape [10, 10]  min -1.25  max 3.5  mean 0.125  norm 12.0"


def test_small_tensor_prints_values_keeping_floats_and_ints_apart():
    floats = TensorSummary(shape=[2, 2], dtype="float64", device="cpu", value=[[1.0, 2.5], [3.0, 1e-9]], numel=4)
    ints = TensorSummary(shape=[3], dtype="int64", device="cpu", value=[1, 2, 3], numel=3)
    flags = TensorSummary(shape=[2], dtype="bool", device="cpu", value=[True, False], numel=2)
    assert value_text(floats) == "[[1.0, 2.5], [3.0, 1e-09]]"
    assert value_text(ints) == "[1, 2, 3]"
    assert value_text(flags) == "[True, False]"


def test_sixty_four_elements_still_print_in_full():
    t = TensorSummary(shape=[64], dtype="int32", device="cpu", value=list(range(64)), numel=64)
    assert value_text(t).startswith("[0, 1, 2") and value_text(t).endswith("63]")


def test_closing_line_is_exact():
    assert closing_line(3, 0) == "3 passed, 0 failed"
    assert closing_line(1, 1) == "1 passed, 1 failed"


def test_no_expect_means_no_expect_line():
    text = render_text(run_view(seed_run(expect=ExpectResult(passed=True, checked=False))))
    assert "expect" not in text


class StandInOp:
    """The registry entry's fields `agrad ops` reads (agrad.dispatcher.OperatorEntry)."""

    def __init__(self, name, schema, keys, has_backward, doc=""):
        self.name, self.schema, self._keys, self.has_backward, self.doc = name, schema, keys, has_backward, doc

    def keys(self):
        return self._keys


def test_ops_table(golden):
    entries = [StandInOp("add", "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                         ["CPU", "CUDA", "Meta", "Autograd"], True),
               StandInOp("eq", "eq(Tensor self, Tensor other) -> Tensor", ["CPU", "CUDA", "Meta"], False)]
    golden("ops", render_text(ops_view(entries)))
