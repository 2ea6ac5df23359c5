"""One module per command; `COMMANDS` is the order `agrad --help` lists them in."""
from agrad.cli.commands.check import check
from agrad.cli.commands.examples import examples
from agrad.cli.commands.export import export
from agrad.cli.commands.import_ import import_
from agrad.cli.commands.inspect import inspect
from agrad.cli.commands.ops import ops
from agrad.cli.commands.run import run
from agrad.cli.commands.schema import schema
from agrad.cli.commands.test import test
from agrad.cli.commands.train import train
from agrad.cli.commands.validate import validate

COMMANDS = [run, inspect, check, train, test, validate, import_, export, ops, schema, examples]
