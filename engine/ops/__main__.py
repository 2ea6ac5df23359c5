"""`python -m agrad.ops`: rewrite the op library's table of contents (contents.py) from the
declarations, after adding, moving or removing an op."""
from .contents import write

write()
