"""`agrad schema`: the JSON Schema of the graph format, for editors."""
from __future__ import annotations

import json

import click


@click.command()
def schema():
    """Print the JSON Schema of graph files (point your editor's YAML language server at it)."""
    from agrad.cli import library

    # A JSON Schema, not one of SPEC §2.1's result documents: printed exactly as the library gives it.
    click.echo(json.dumps(library.json_schema(), indent=2))
