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


def _printed(name: str, entry) -> str:
    """The example as printed: its data files named where they are installed, so the printed graph
    runs wherever it is saved (`agrad examples train_digits > td.yaml && agrad train td.yaml`)."""
    from pathlib import Path

    from agrad.graphs.data_files import referenced_files, with_files_at

    text = entry.read_text(encoding="utf-8")
    folder = Path(str(entry)).parent
    installed = {f: str(folder / f) for f in referenced_files(text) if (folder / f).is_file()}
    if not installed:
        return text
    note = (f"# Its data files are read where agrad is installed; `agrad examples {name} --to DIR` writes\n"
            "# the graph and a copy of its data to DIR.\n")
    return note + with_files_at(text, installed)


def _write_to(app: App, name: str, entry, folder: str, force: bool) -> None:
    """`--to DIR`: the graph as it ships and every data file it reads, at the same relative places."""
    from pathlib import Path

    from agrad.cli.files import check_output_paths, writing
    from agrad.graphs.data_files import referenced_files
    from agrad.graphs.saving import write_atomically

    source = Path(str(entry)).parent
    text = entry.read_text(encoding="utf-8")
    data = referenced_files(text)
    readmes = sorted({str(Path(f).parent / "README.md") for f in data if (source / Path(f).parent / "README.md")
                      .is_file() and str(Path(f).parent) != "."})     # the data's source and licence go along
    copies = [(Path(folder) / f"{name}.yaml", None)] + [(Path(folder) / f, source / f) for f in data + readmes]
    existing = [str(target) for target, _ in copies if target.exists()]
    if existing and not force:
        abort(f"--to {folder}: {', '.join(existing)} already exist{'s' if len(existing) == 1 else ''} "
              "(--force replaces them)", ExitStatus.INVALID)
    try:
        for target, _ in copies:
            target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        abort(f"--to {folder}: cannot create {exc.filename or folder}: {exc.strerror or exc}", ExitStatus.INVALID, exc)
    for target, _ in copies:          # a device or a pipe in the way is never written through
        check_output_paths(to=str(target))
    for target, origin in copies:
        content = text.encode("utf-8") if origin is None else origin.read_bytes()
        with writing("to", target):
            write_atomically(target, lambda f, content=content: f.write(content))
        app.line(str(target))
    command = "train" if "\ntrain:" in "\n" + text else "run"
    app.note(f"wrote {copies[0][0]} and the {len(copies) - 1} file{'s' if len(copies) != 2 else ''} it reads; "
             f"try: agrad {command} {copies[0][0]}")


@click.command()
@click.argument("name", metavar="[NAME]", required=False, shell_complete=_complete_example)
@click.option("--to", "folder", type=click.Path(file_okay=False), metavar="DIR",
              help="Write example NAME and the data files it reads into DIR (made if missing).")
@click.option("--force", is_flag=True, help="With --to: replace files that already exist.")
@click.pass_obj
def examples(app: App, name, folder, force):
    """List the bundled example graphs, or print example NAME (agrad examples seed | agrad run -);
    --to DIR writes it with its data."""
    found = _examples()
    if folder is not None and name is None:
        raise click.UsageError("--to DIR writes one example: give its NAME")
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
    if folder is not None:
        _write_to(app, name, found[name], folder, force)
        return
    click.echo(_printed(name, found[name]), nl=False)
