"""`python -m agrad.cli` runs the same program as the `agrad` console script."""
from agrad.cli.main import main

main()
