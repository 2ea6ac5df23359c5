import textwrap

import pytest


@pytest.fixture
def graph_file(tmp_path):
    """Write a graph file's text (dedented) and return its path."""
    def write(text: str, name: str = "g.yaml"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path
    return write
