"""`agrad train`'s progress where no one watches a bar: one plain line per evaluation.

A CI log is not a terminal, so the progress bar is not drawn there; without these
lines a long job prints nothing until the end, and CI systems kill jobs that stay
silent. Each line stands alone (no carriage returns, no colour), so a log viewer
shows it as written:

    step 110/660  loss 0.2154  eval loss 0.2411  eval accuracy 0.9380  lr 0.00982  412.3 steps/s
"""
from __future__ import annotations

import time
from typing import Callable


def eval_line(step: int, total: int, loss: float | None, evaluation: dict, lr: float | None,
              rate: float | None) -> str:
    parts = [f"step {step}/{total}"]
    if loss is not None:
        parts.append(f"loss {loss:.4g}")
    parts += [f"eval {name} {value:.4g}" if name != "accuracy" else f"eval accuracy {value:.4f}"
              for name, value in evaluation.items() if name != "step" and isinstance(value, (int, float))]
    if lr is not None:
        parts.append(f"lr {lr:.3g}")
    if rate is not None:
        parts.append(f"{rate:.1f} steps/s")
    return "  ".join(parts)


class EvalLines:
    """The per-step callback of `run_trainer`: prints a line when a step has just been evaluated;
    `flush()` afterwards prints the final evaluation, which comes after the last step's callback."""

    def __init__(self, print_line: Callable[[str], None], total: int):
        self.print_line = print_line
        self.total = total
        self.trainer = None
        self.printed_step: int | None = None
        self.start = time.perf_counter()
        self.first_step: int | None = None

    def __call__(self, trainer) -> None:
        self.trainer = trainer
        run = trainer.run
        if self.first_step is None:
            self.first_step = run.steps - 1
        if run.evals and run.evals[-1]["step"] == run.steps and self.printed_step != run.steps:
            self._print(run)

    def flush(self) -> None:
        if self.trainer is not None:
            run = self.trainer.run
            if run.evals and self.printed_step != run.evals[-1]["step"] and run.evals[-1]["step"] == run.steps:
                self._print(run)

    def _print(self, run) -> None:
        seconds = time.perf_counter() - self.start
        done = run.steps - (self.first_step or 0)
        rate = done / seconds if seconds > 0 and done > 0 else None
        self.printed_step = run.steps
        self.print_line(eval_line(run.steps, self.total, run.losses[-1] if run.losses else None, run.evals[-1],
                                  run.lrs[-1] if run.lrs else None, rate))
