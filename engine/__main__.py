"""`python -m agrad` runs the `agrad` command (importing only the CLI, never the engine up front)."""
from agrad.cli.main import main

main()
