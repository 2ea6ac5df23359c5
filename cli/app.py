"""The application object every command finds in `ctx.obj`, and `abort`.

One `App` per invocation holds the two consoles: data goes to `out` (stdout),
everything else -- diagnostics, progress, warnings -- to `err` (stderr). Both
follow the terminal and NO_COLOR, which rich does on its own; markup and
highlighting are off because user text (shapes like `[2, 3]`, codes like
`error[AG001]`) must print as written. Both are `terminal.SafeConsole`s, and plain
lines go through `echo`: control characters from graph files are escaped in one
place, whatever the command or the renderer.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import NoReturn

import click
from rich.console import Console, RenderableType
from rich.text import Text

from agrad.cli.status import ExitStatus
from agrad.cli.terminal import SafeConsole, discard_stdout, printable


class AbortCommand(Exception):
    """Stop the command: print `message` on stderr and exit with `status`."""

    def __init__(self, message: str | Text, status: ExitStatus):
        super().__init__(str(message))
        self.message = message
        self.status = status


def abort(message: str | Text, status: ExitStatus, cause: BaseException | None = None) -> NoReturn:
    """The one way a command gives up; `cause` is kept for the `--debug` traceback."""
    raise AbortCommand(message, status) from cause


def finish(status: ExitStatus) -> NoReturn:
    """End the command with `status` (decided by `agrad.cli.status`)."""
    click.get_current_context().exit(int(status))


@contextlib.contextmanager
def _writing_stdout():
    """A failed write to stdout (a full disk, an I/O error) is the command's error, said as such, not
    a bug in agrad; a reader that has gone (BrokenPipeError) stays the quiet stop main.py makes it."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        discard_stdout()            # what is buffered cannot be written: no later flush must try
        abort(f"cannot write the output: {exc.strerror or exc}", ExitStatus.RUNTIME, exc)


def _console(stderr: bool) -> Console:
    return SafeConsole(stderr=stderr, markup=False, highlight=False, emoji=False)


@dataclass
class App:
    out: Console = field(default_factory=lambda: _console(stderr=False))
    err: Console = field(default_factory=lambda: _console(stderr=True))
    debug: bool = False
    output_format: str = "table"      # set by --format; "github" turns failures into annotations
    sandbox: bool = False             # --sandbox / AGRAD_SANDBOX=1: graphs read data files in their folder only

    def show(self, renderable: RenderableType) -> None:
        """A renderable for people, on stdout."""
        with _writing_stdout():
            self.out.print(renderable)

    def line(self, text: str | Text) -> None:
        """One line of data on stdout, never wrapped (scripts grep these)."""
        with _writing_stdout():
            self.out.print(text, soft_wrap=True)

    def echo(self, text: str) -> None:
        """Plain text on stdout, not through rich (workflow commands, DOT, the closing line);
        control characters escaped as on the consoles."""
        with _writing_stdout():
            click.echo(printable(text))

    def emit_json(self, document: dict) -> None:
        """A JSON document on stdout, written as it is made (`inspect` of a large graph makes
        its rows as they are written). JSON never goes through rich: no wrapping, no colour."""
        from agrad.cli.json_docs import json_chunks

        for chunk in json_chunks(document):
            with _writing_stdout():
                click.echo(chunk, nl=False)
        with _writing_stdout():
            click.echo()

    def note(self, text: str | Text) -> None:
        """A diagnostic, warning or progress line on stderr, never wrapped."""
        self.err.print(text, soft_wrap=True)

    def warn(self, message: str) -> None:
        self.note(Text.assemble(("warning", "bold yellow"), ": ", message))

    def error(self, message: str | Text) -> None:
        self.note(Text.assemble(("error", "bold red"), ": ", message))
