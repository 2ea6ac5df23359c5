"""`agrad ops [OP]`: the dispatcher's table of operators."""
from __future__ import annotations

import click

from agrad.cli import library
from agrad.cli.app import App
from agrad.cli.options import format_option, graph_reading


@click.command()
@click.argument("op_name", metavar="[OP]", required=False)
@format_option("table", "json")
@graph_reading
@click.pass_obj
def ops(app: App, op_name, output_format, plugins):
    """List the registered ops (schema, dispatch keys with kernels, backward), or show one OP."""
    library.load_plugins(plugins)     # so a plugin's ops are listed beside agrad's own
    entries = [library.get_op(op_name)] if op_name is not None else library.all_ops()
    if output_format == "json":
        from agrad.cli.json_docs import ops_document

        app.emit_json(ops_document(entries))
    elif op_name is not None:
        from agrad.cli.tables import op_detail_view

        app.show(op_detail_view(entries[0]))
    else:
        from agrad.cli.tables import ops_view

        app.show(ops_view(entries))
