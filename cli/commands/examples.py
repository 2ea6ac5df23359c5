"""`agrad examples [NAME]`: the example graphs that ship inside the package."""
from __future__ import annotations

import click

from agrad.cli.app import App, abort
from agrad.cli.status import ExitStatus


def _examples() -> dict:
    """name -> the example's file, read from the installed package (works from a wheel too)."""
    from importlib.resources import files

    folder = files("agrad.graphs") / "examples"
    return {entry.name.rsplit(".", 1)[0]: entry for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith((".yaml", ".yml"))}


def _summary(text: str) -> str:
    """The first sentence of an example's opening comment: what it shows."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    comment = " ".join(lines)
    end = comment.find(". ")
    return comment if end < 0 else comment[:end + 1]


def _complete_example(_ctx, _param, incomplete: str) -> list:
    from click.shell_completion import CompletionItem

    return [CompletionItem(name) for name in _examples() if name.startswith(incomplete)]


@click.command()
@click.argument("name", metavar="[NAME]", required=False, shell_complete=_complete_example)
@click.pass_obj
def examples(app: App, name):
    """List the bundled example graphs, or print example NAME (agrad examples seed | agrad run -)."""
    found = _examples()
    if name is None:
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True)
        table.add_column()
        for example, entry in found.items():
            table.add_row(example, _summary(entry.read_text(encoding="utf-8")))
        app.show(table)
        return
    if name not in found:
        from difflib import get_close_matches

        near = get_close_matches(name, list(found), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        abort(f"no example named {name!r}{hint}; `agrad examples` lists them", ExitStatus.INVALID)
    click.echo(found[name].read_text(encoding="utf-8"), nl=False)
