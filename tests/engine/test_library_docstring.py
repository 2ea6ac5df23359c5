"""agrad.library's own docstring example works as written (issue 7 §4)."""
import subprocess
import sys
import textwrap

import agrad.library


def test_library_docstring_example_runs_verbatim():
    doc = agrad.library.__doc__
    example = textwrap.dedent(doc[doc.index("\n\n    ") + 2:])
    assert "library.impl(\"myops::scale\", \"Meta\"" in example
    # a fresh interpreter: the example registers myops::scale for the whole process
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
