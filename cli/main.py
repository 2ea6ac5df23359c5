"""The `agrad` command group, and where exceptions become exit statuses.

Every failure a user can cause ends here as a message on stderr and one of SPEC
§2.2's statuses; a Python traceback is printed only with `--debug`.
"""
from __future__ import annotations

import functools
import os
import signal
import sys
import warnings

import click

from agrad.cli import diagnostics, interrupts, library, status
from agrad.cli.app import AbortCommand, App
from agrad.cli import commands
from agrad.cli.status import ExitStatus
from agrad.cli.terminal import discard_stdout, printable, tolerate_any_encoding

_INSTALL_CUDA = "install the GPU extra with: pip install 'agrad[cuda]'"


def _traceback() -> str:
    """The exception being handled, for --debug (traceback is imported only then)."""
    import traceback

    return traceback.format_exc().rstrip()


def _report(app: App, exc: BaseException) -> ExitStatus | None:
    """Print `exc` for a person and return its exit status; None when it is a bug in agrad."""
    from agrad.graphs.results import GraphFileError, GraphRuntimeError

    code = status.for_exception(exc)
    if code is None:
        return None
    if app.output_format == "github":       # annotations on stdout, as `validate --format github` prints them
        from agrad.cli import github

        for command in github.exception_commands(exc):
            app.echo(command)
        return code
    if app.output_format == "json" and isinstance(exc, (GraphFileError, GraphRuntimeError)):
        # `| jq` pipelines read a document on stdout whatever happened; people read stderr below
        from agrad.cli.json_docs import failure_document

        app.emit_json(failure_document(exc))
    if isinstance(exc, GraphFileError):
        for diagnostic in exc.diagnostics:
            app.note(diagnostics.diagnostic_text(diagnostic))
    elif isinstance(exc, GraphRuntimeError):
        app.note(diagnostics.runtime_error_text(exc))
    elif isinstance(exc, MemoryError):
        app.error(f"out of memory{': ' + str(exc) if str(exc) else ''}")
    else:   # the device is unavailable: SPEC §2.2 wants the reason and the way to install
        message = str(exc)
        app.error(message if "agrad[cuda]" in message else f"{message}; {_INSTALL_CUDA}")
    return code


def _make_context_ends_cleanly(make_context):
    """`make_context` whose help or version text (eager options print while a context is
    made) going to a closed stdout ends with status 0: `agrad --help | head -1` asked for
    less than all of it, which is no failure. A broken pipe while a command writes its
    results is 141 (AgradGroup.invoke). Ctrl-C while the command line is read is an
    interrupt (130), as it is once the command runs: click would say "Aborted!" and exit 1,
    which reads as a failed check."""
    @functools.wraps(make_context)
    def make(*args, **kwargs):
        try:
            return make_context(*args, **kwargs)
        except BrokenPipeError:
            discard_stdout()
            raise click.exceptions.Exit(int(ExitStatus.OK)) from None
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            raise click.exceptions.Exit(interrupts.exit_status(signal.SIGINT)) from None
    return make


class AgradGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(commands.COMMANDS)      # the order of COMMANDS, not alphabetical: run first

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A command, its module imported the first time it is asked for (`agrad run` imports no
        other command's module; `--help` imports them all, for their one-line help)."""
        if cmd_name not in self.commands and cmd_name in commands.COMMANDS:
            self.add_command(commands.load(cmd_name), cmd_name)
        return self.commands.get(cmd_name)

    def make_context(self, *args, **kwargs) -> click.Context:
        return _make_context_ends_cleanly(super().make_context)(*args, **kwargs)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        cmd.make_context = _make_context_ends_cleanly(cmd.make_context)      # `agrad run --help | head -1`
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context):
        app = ctx.ensure_object(App)
        try:
            result = self._invoke(ctx, app)
        except click.exceptions.Exit:
            _flush_stdout(app, ctx)
            raise
        _flush_stdout(app, ctx)
        return result

    def _invoke(self, ctx: click.Context, app: App):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except click.ClickException as exc:
            exc.message = printable(exc.message)      # click prints it; a file name may hold escapes too
            raise
        except BrokenPipeError:
            # The reader of stdout has gone (`| head`): stop quietly, as Unix tools do.
            discard_stdout()
            ctx.exit(status.STDOUT_CLOSED)
        except KeyboardInterrupt:
            # Ctrl-C (or a plugin raising KeyboardInterrupt): the status shells give a process
            # SIGINT ended, not click's 1, which would read as "a check failed"
            app.error("interrupted")
            ctx.exit(interrupts.exit_status(signal.SIGINT))
        except interrupts.Interrupted as stop:
            app.error(f"interrupted ({interrupts.signal_name(stop.signum)})")
            ctx.exit(interrupts.exit_status(stop.signum))
        except AbortCommand as stop:
            if app.debug:
                app.note(_traceback())     # escaped, like every other line
            if str(stop.message):
                app.error(stop.message)
            ctx.exit(stop.status)
        except Exception as exc:
            if app.debug:
                app.note(_traceback())     # escaped, like every other line
            code = _report(app, exc)
            if code is None:
                # A bug in agrad, not in the input: still one line and status 3, never a bare
                # crash (whose status 1 would read as "a check failed").
                app.error(f"internal error in agrad: {type(exc).__name__}: {exc} "
                          "(run again with --debug for the traceback)")
                code = ExitStatus.RUNTIME
            ctx.exit(code)
        except BaseException as exc:
            if isinstance(exc, SystemExit):     # an exit asked for (write_atomically's after a signal)
                raise
            # Not an Exception, and no interrupt: what a plugin's kernel raised of its own (GeneratorExit,
            # a class of its own), which no `except Exception` of the library stops. Still one line and
            # status 3, never a traceback.
            if app.debug:
                app.note(_traceback())
            said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            app.error(f"stopped by {said}, which is not an Exception (a plugin's?) "
                      "(run again with --debug for the traceback)")
            ctx.exit(ExitStatus.RUNTIME)


def _flush_stdout(app: App, ctx: click.Context) -> None:
    """Write what stdout still buffers while a failure can be said: to a file, a command's output
    is written at exit, where a full disk would otherwise be Python's "Exception ignored" and 120."""
    if sys.stdout is None:          # started with stdout closed (`agrad run g.yaml >&-`)
        return
    try:
        sys.stdout.flush()
    except ValueError:              # closed already
        return
    except BrokenPipeError:
        discard_stdout()
        ctx.exit(status.STDOUT_CLOSED)
    except OSError as exc:
        discard_stdout()            # what is buffered cannot be written: the exit's flush must not try
        app.error(f"cannot write the output: {exc.strerror or exc}")
        ctx.exit(ExitStatus.RUNTIME)


@click.group(cls=AgradGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agrad", prog_name="agrad", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Reverse-mode autodiff for computation graphs declared in YAML.

    agrad runs a graph file's forward pass and every backward pass with an engine
    built the way PyTorch's autograd engine is. Try: agrad examples seed | agrad run -
    """
    ctx.ensure_object(App)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A Python warning (agrad's own, or one a NumPy function gives besides the floating-point
    ones every kernel switches off) as agrad's `warning: ...` line on stderr, not a source path
    and a line of NumPy's code."""
    origin = "NumPy: " if f"{os.sep}numpy{os.sep}" in str(filename) else ""
    click.echo(printable(f"warning: {origin}{message}"), err=True)


def main() -> None:
    library.pause_collector()       # for start-up (see there)
    tolerate_any_encoding()
    warnings.showwarning = _show_warning
    try:
        cli(prog_name="agrad")
    finally:
        library.exiting()
