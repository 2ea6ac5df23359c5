"""`agrad ops [OP]`: the dispatcher's table of operators; `--formulas`: their derivatives."""
from __future__ import annotations

import click

from agrad.cli import library
from agrad.cli.app import App, abort
from agrad.cli.status import ExitStatus
from agrad.cli.options import format_option, graph_reading


def _complete_op(_ctx, _param, incomplete: str) -> list:
    """`agrad ops <TAB>`: the op names, internal ones only once a `_` is typed."""
    from click.shell_completion import CompletionItem

    names = [op.name for op in library.all_ops() if incomplete.startswith("_") or library.is_public(op.name)]
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


@click.command()
@click.argument("op_name", metavar="[OP]", required=False, shell_complete=_complete_op)
@click.option("--all", "show_all", is_flag=True,
              help="Also list internal ops (`_name`, `*_backward`) that graphs do not call.")
@click.option("--formulas", "show_formulas", is_flag=True,
              help="Print the derivative formulas instead, one line per input (PyTorch's derivatives.yaml).")
@click.option("--source", "show_source", is_flag=True,
              help="With OP: print the Python code agrad generated for it (its function, kernels, "
                   "Node.apply), as tracebacks show it.")
@format_option("table", "json")
@graph_reading
@click.pass_obj
def ops(app: App, op_name, show_all, show_formulas, show_source, output_format, plugins):
    """List the public ops (schema, dispatch keys with kernels, backward), or show one OP with
    its derivative formulas; `--formulas`: every op's formulas, one line per input; `OP --source`:
    the code generated for OP."""
    library.load_plugins(plugins)     # so a plugin's ops are listed beside agrad's own
    if show_source and op_name is None:
        abort("--source needs an OP: `agrad ops mul --source`", ExitStatus.INVALID)
    if op_name is not None:
        entries = [library.get_op(op_name)]
    else:
        entries = [op for op in library.all_ops() if show_all or library.is_public(op.name)]
    derivatives = library.op_formulas(entries) if (show_formulas or op_name is not None) and not show_source else None
    if show_source:
        sources = library.generated_sources(entries[0].name)
        if output_format == "json":
            app.emit_json({"op": entries[0].name, "sources": sources})
        else:
            app.echo("\n".join(f"# {filename}\n{source}" for filename, source in sources.items()))
    elif show_formulas:
        if output_format == "json":
            from agrad.cli.json_docs import formulas_document

            app.emit_json(formulas_document(derivatives))
        else:
            from agrad.cli.tables import formulas_lines

            for line in formulas_lines(derivatives):
                app.line(line)
    elif output_format == "json":
        from agrad.cli.json_docs import ops_document

        app.emit_json(ops_document(entries, derivatives))
    elif op_name is not None:
        from agrad.cli.tables import op_detail_view

        app.show(op_detail_view(entries[0], derivatives[0]))
    else:
        from agrad.cli.tables import ops_view

        app.show(ops_view(entries))
