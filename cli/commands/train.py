"""`agrad train GRAPH`: run the file's `train:` section with agrad.optim; a summary, the
loss curve, checkpoints (`--save`, `--resume`) and `expect: {train: ...}`."""
from __future__ import annotations

import math
import shlex
from contextlib import contextmanager

import click
from rich.text import Text

from agrad.cli import files, interrupts, library
from agrad.cli.app import App, abort, finish
from agrad.cli.options import cluster_options, format_option, graph_reading
from agrad.cli.status import ExitStatus

PLOT_SUFFIXES = (".svg", ".png")


@contextmanager
def _progress(app: App, total: int, start: int):
    """A bar with step, loss, lr, steps/s and ETA on a terminal; elsewhere (a CI log) one plain line per
    evaluation (cli/train_progress.py). Yields the per-step callback."""
    if not app.err.is_terminal:
        from agrad.cli.train_progress import EvalLines

        lines = EvalLines(app.note, total)
        yield lines
        lines.flush()
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn)

    columns = (TextColumn("training"), BarColumn(), MofNCompleteColumn(),
               TextColumn("loss {task.fields[loss]}  lr {task.fields[lr]}  {task.fields[rate]}"),
               TimeRemainingColumn())
    with Progress(*columns, console=app.err, transient=True) as progress:
        task = progress.add_task("train", total=total, completed=start, loss="-", lr="-", rate="")

        def on_step(trainer):
            run = trainer.run
            speed = progress.tasks[0].speed
            progress.update(task, completed=run.steps, loss=f"{run.losses[-1]:.4g}", lr=f"{run.lrs[-1]:.3g}",
                            rate=f"{speed:.1f} steps/s" if speed else "")
        yield on_step


def _check_plot_path(plot: str | None) -> None:
    if plot is None:
        return
    suffix = plot[plot.rfind("."):].lower() if "." in plot else ""
    if suffix not in PLOT_SUFFIXES:
        abort(f"--plot {plot}: expected a .svg or .png file name", ExitStatus.INVALID)
    try:
        import matplotlib  # noqa: F401
    except ImportError:      # an optional extra that is missing: exit 3, naming the install (SPEC §2.2)
        abort(f"--plot {plot}: plots need matplotlib, which is not installed: pip install 'agrad[plot]'",
              ExitStatus.RUNTIME)


@click.command()
@click.argument("graph_file", metavar="GRAPH", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--steps", type=click.IntRange(min=1),
              help="Stop after step N (default: the file's steps; the schedule keeps the file's horizon, so a "
                   "run stopped with --save and continued with --resume equals an uninterrupted one).")
@click.option("--seed", type=click.IntRange(min=0), help="Seed for random inits and the data order.")
@format_option("table", "json")
@click.option("--save", "save_path", type=click.Path(dir_okay=False), metavar="CKPT.npz",
              help="Write a checkpoint at the end: parameters, optimizer state, step, RNG state.")
@click.option("--resume", "resume_path", type=click.Path(exists=True, dir_okay=False), metavar="CKPT.npz",
              help="Continue from a checkpoint, exactly as if never stopped (checked first: a checkpoint of "
                   "another graph, or of this one edited, is refused).")
@click.option("--force-resume", is_flag=True,
              help="Resume from a checkpoint whose graph hash differs (the file was edited), if its "
                   "parameters and optimizer state still fit.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the loss curve (eval loss and metrics too) as .svg or .png (needs agrad[plot]).")
@click.option("--anomaly", is_flag=True,
              help="Check every forward value and gradient for NaN/Inf each step (slower): a NaN/Inf loss "
                   "names the node that made the first one and its line, and a NaN/Inf gradient stops "
                   "training too.")
@click.option("--no-replay", "no_replay", is_flag=True,
              help="Run every step through the engine (by default the second step of each batch shape is "
                   "recorded and later ones replay its kernels, with the same results).")
@graph_reading
@cluster_options
@click.pass_obj
def train(app: App, graph_file, steps, seed, output_format, save_path, resume_path, force_resume, plot_path,
          anomaly, no_replay, plugins, cluster):
    """Train GRAPH's `train:` section (GRAPH: a file, or - for standard input): optimizer steps on its
    loss, with a summary and loss curve."""
    files.check_output_paths(graph_file, save=save_path, plot=plot_path)
    _check_plot_path(plot_path)
    if graph_file == "-" and cluster is not None:      # workers read the graph by its path
        abort("- (standard input) cannot be sent to --workers/--cluster; give the graph as a file",
              ExitStatus.INVALID)
    library.load_plugins(plugins)
    graph = library.load_graph(graph_file, seed=seed)
    from agrad.graphs import training
    from agrad.graphs.train_section import expectation_failures, train_spec

    spec = train_spec(graph)
    total = steps or spec.steps
    horizon = max(spec.steps, total)
    options = dict(steps=horizon, anomaly=anomaly, replay=not no_replay, **{k: v for k, v in spec.options().items() if k != "eval_every"})
    trainer = training.Trainer(graph, **options)
    if resume_path:
        _resume(app, trainer, resume_path, force_resume)
    if resume_path and trainer.step_count >= total:
        limit = f"--steps {steps}" if steps else f"the file's {total} steps"
        app.warn(f"{resume_path} is at step {trainer.step_count}, already at or past {limit}: no step runs")
    diverged = None
    # Ctrl-C / SIGTERM: stop at the next step boundary and save that step; a second one stops at once
    with interrupts.stop_requests() as stop, _progress(app, total, trainer.step_count) as on_step:
        try:
            if cluster is not None:       # --workers / --cluster: data-parallel replicas on dask workers
                from agrad.cli import distributed

                distributed.train(cluster, graph_file, plugins, seed, trainer, options, steps=horizon,
                                  stop_after=total, eval_every=spec.eval_every, on_step=on_step)
            else:
                training.run_trainer(trainer, steps=horizon, stop_after=total, eval_every=spec.eval_every,
                                     on_step=on_step, should_stop=lambda: bool(stop))
        except training.TrainingDiverged as exc:
            diverged = exc
        if save_path and diverged is None:
            with files.writing("save", save_path):
                training.save_checkpoint(trainer, save_path)
    if stop:
        _interrupted(app, stop.signum, trainer.run.steps, horizon, graph_file, save_path)
    run = trainer.run
    if plot_path:
        with files.writing("plot", plot_path):
            _write_plot(plot_path, graph.name, run)
    # a run stopped early (--steps below the file's) is checked when it is finished, not before
    checked = bool(spec.expect) and diverged is None and run.steps == horizon
    failures = expectation_failures(spec, run) if checked else []
    if diverged is not None:
        where = f"{diverged.location}: " if diverged.location else f"{graph_file}: "
        hint = "" if anomaly else " (--anomaly names the node that made the first NaN/Inf)"
        app.note(f"{where}error[AG068]: {diverged}{hint}")
        if diverged.anomaly is not None:
            from agrad.cli.diagnostics import anomaly_text

            app.note(anomaly_text(diverged.anomaly))
    for failure in failures:
        app.note(f"{graph.file}: expect failed: {failure}")
    if output_format == "json":
        app.emit_json(_document(graph, graph.file, run, failures, diverged, checked))
    else:
        app.show(_summary(graph, run, failures, diverged, checked, horizon))
        if len(run.losses) > 1:
            from agrad.cli.train_plot import loss_line

            app.line(loss_line(run.losses))
    finish(ExitStatus.CHECK_FAILED if diverged is not None or failures else ExitStatus.OK)


def _resume(app: App, trainer, path: str, force: bool) -> None:
    """Continue from the checkpoint at `path`, read as untrusted input: any problem is
    AG069 naming the key (exit 2) before any step, and nothing has changed."""
    from agrad.graphs.checkpoints import CheckpointError
    from agrad.graphs.training import load_checkpoint

    try:
        load_checkpoint(trainer, path, force=force)
    except CheckpointError as exc:
        app.note(Text.assemble(f"{path}: ", ("error[AG069]", "bold red"), f": {exc}"))
        finish(ExitStatus.INVALID)


def _interrupted(app: App, signum: int, step: int, horizon: int, graph_file: str, save_path: str | None):
    """Stopped by a signal at a step boundary: where, and how to go on; exit 128 + the signal."""
    what = f"{interrupts.signal_name(signum)}: training stopped after step {step} of {horizon}"
    if save_path:
        again = " ".join(shlex.quote(a) for a in ("agrad", "train", graph_file, "--resume", save_path,
                                                   "--save", save_path))
        app.note(f"{what}; checkpoint of step {step} written to {save_path}; continue with: {again}")
    else:
        app.note(f"{what}; nothing saved (--save CKPT.npz keeps the progress of an interrupted run)")
    finish(interrupts.exit_status(signum))


def _write_plot(path: str, title: str, run) -> None:
    from agrad.cli import train_plot
    from agrad.graphs.saving import write_atomically

    data = train_plot.plot_bytes(title, run.losses, run.evals, path[path.rfind(".") + 1:].lower())
    write_atomically(path, lambda f: f.write(data))


def _rate(run) -> float | None:
    return run.session_steps / run.seconds if run.seconds > 0 and run.session_steps else None


def _document(graph, file, run, failures, diverged, checked: bool) -> dict:
    def finite(v):
        return v if v is None or math.isfinite(v) else str(v)

    last = run.evals[-1] if run.evals else {}
    return {"schema_version": 1, "graph": graph.name, "file": file, "steps": run.steps,
            "final_loss": finite(run.final_loss), "eval": {k: v for k, v in last.items() if k != "step"},
            "seconds": run.seconds, "steps_per_second": _rate(run),
            "losses": [finite(v) for v in run.losses], "lrs": run.lrs, "evals": run.evals,
            "diverged": None if diverged is None else _diverged_entry(diverged),
            "expect": {"checked": checked, "passed": checked and not failures, "failures": failures}}


def _diverged_entry(diverged) -> dict:
    entry = {"step": diverged.step, "loss": str(diverged.value)}
    if diverged.anomaly is not None:             # --anomaly: the node, as `run --anomaly`'s anomalies
        from agrad.cli.json_docs import location_fields

        a = diverged.anomaly
        entry["anomaly"] = {"phase": a.phase, "node": a.node, "message": a.message, **location_fields(a.location)}
    return entry


def _summary(graph, run, failures, diverged, checked: bool, horizon: int):
    from rich.table import Table

    table = Table(title=f"train {graph.name}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    rows = [("steps", str(run.steps)),
            ("final loss", "-" if run.final_loss is None else f"{run.final_loss:.6g} (mean of the last 10 steps)")]
    last = run.evals[-1] if run.evals else {}
    if "loss" in last:
        rows.append(("eval loss", f"{last['loss']:.6g}"))
    if "accuracy" in last:
        rows.append(("eval accuracy", f"{last['accuracy']:.4f}"))
    rate = _rate(run)
    rows.append(("time", f"{run.seconds:.2f} s" + (f" ({rate:.1f} steps/s)" if rate else "")))
    if diverged is not None:
        rows.append(("stopped", str(diverged).removesuffix("; training stopped")))
    if checked:
        rows.append(("expect", "passed" if not failures else f"{len(failures)} failed"))
    elif diverged is None and run.steps < horizon:
        rows.append(("stopped", f"at step {run.steps} of {horizon} (continue with --resume)"))
    for name, value in rows:
        table.add_row(name, value)
    return table
