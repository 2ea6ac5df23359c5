"""Training in CI (issue 19 §9): with stderr not a terminal, one plain line per evaluation, so a CI
log shows progress; the sparkline fits 80 columns."""
from __future__ import annotations

import re

from small_classifier import SMALL_CLASSIFIER

from agrad.cli.main import cli
from agrad.cli.train_plot import loss_line

TRAIN = SMALL_CLASSIFIER + """\
train:
  loss: loss
  optimizer: {type: sgd, lr: 0.1}
  steps: 400
  eval: {every: 100, metrics: [loss, "accuracy(logits, y)"]}
"""


def test_one_plain_line_per_evaluation_on_stderr(runner, write):
    result = runner.invoke(cli, ["train", write("t.yaml", TRAIN)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("step ")]
    assert [line.split()[1] for line in lines] == ["100/400", "200/400", "300/400", "400/400"]
    assert re.fullmatch(r"step 100/400  loss \S+  eval loss \S+  eval accuracy \d\.\d{4}  lr 0\.1  [\d.]+ steps/s",
                        lines[0])
    assert "\r" not in result.stderr and "\x1b" not in result.stderr
    json_run = runner.invoke(cli, ["train", write("t.yaml", TRAIN), "--format", "json"])
    assert json_run.stdout.lstrip().startswith("{") and "step 400/400" in json_run.stderr   # stdout stays JSON


def test_the_sparkline_fits_80_columns(runner, write):
    assert len(loss_line([3.0 - i / 1000 for i in range(5000)])) <= 80
    result = runner.invoke(cli, ["train", write("t.yaml", TRAIN)])
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("loss ")]
    assert len(line) <= 80
