"""What reaches a terminal: user text made harmless, streams that cannot fail on it.

Names, keys and messages come from graph files, which anyone may write. A name
holding `ESC ] 0 ; ... BEL` would retitle the window, one holding `ESC [ 2 J` clear
it, one holding a carriage return overwrite the line before it, and a bidi override
reorder what is read. Every control character (C0 but tab and newline, DEL, C1)
and every bidi formatting character is therefore printed as its Python escape
(`\\x1b`, `\\u202e`), once, here, for every console and plain line the CLI prints.
So is a lone surrogate (`\\udcff`): the bytes of a file name that are not UTF-8, as Python
decodes them, which no UTF-8 writer (a JUnit report, a terminal) could otherwise encode.
JSON needs none of this: `json.dumps` escapes them itself.
"""
from __future__ import annotations

import re
import sys

from rich.console import Console
from rich.segment import Segment

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control and bidi formatting character written as its escape."""
    return _UNSAFE.sub(_escape, text)


class SafeConsole(Console):
    """A rich Console that never writes a control character it was not asked to style with.

    Strings are escaped before they are measured (`render_str`), so tables stay
    aligned; anything else (a `Text` assembled from user text) is escaped segment
    by segment on its way out. rich's own control segments (cursor moves of a
    progress bar) carry `control` and pass untouched, and so do the colour codes,
    which are added after rendering from each segment's style.
    """

    def on_broken_pipe(self) -> None:
        # rich would exit 1 here ("a check failed", to agrad); the command layer decides instead.
        raise BrokenPipeError(32, "the reader of the output has gone")

    def render_str(self, text: str, **kwargs):
        return super().render_str(printable(text), **kwargs)

    def render(self, renderable, options=None):
        for segment in super().render(renderable, options):
            if segment.control is None and _UNSAFE.search(segment.text):
                yield Segment(printable(segment.text), segment.style)
            else:
                yield segment


def tolerate_any_encoding() -> None:
    """Let stdout and stderr write any text, whatever the locale says they can encode.

    Under `LC_ALL=C` or `PYTHONIOENCODING=ascii` a graph named `ŷ` would otherwise end
    the program in a UnicodeEncodeError; what the encoding cannot hold is written
    as a backslash escape instead, as Python's own error messages are.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def discard_stdout() -> None:
    """stdout's reader has gone (`agrad run g.yaml | head -3`): point it at the null device.

    Nothing more can be shown, and the interpreter's last flush at exit would
    otherwise raise BrokenPipeError again, outside any handler (Python's docs on
    SIGPIPE advise the same).
    """
    import os

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):      # not a real file (a test's buffer, or closed)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)
