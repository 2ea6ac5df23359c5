"""One module per command; `COMMANDS` is the order `agrad --help` lists them in (name ->
its module). A command's module is imported when it is asked for (cli/main.py's group), so
`agrad run` imports `run`'s options and helpers, not those of ten other commands."""
import importlib

COMMANDS = {"run": "run", "inspect": "inspect", "check": "check", "train": "train", "test": "test",
            "validate": "validate", "import": "import_", "export": "export", "ops": "ops", "schema": "schema",
            "examples": "examples"}


def load(name: str):
    """The click command `name` (its module imported now)."""
    module = COMMANDS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), module)
