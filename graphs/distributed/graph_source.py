"""A graph file as a job ships it to workers: its text and how it was loaded, so that
every worker builds the very graph the client checked (the same `--plugin` files,
`--input` replacements, device, dtype and seed).

Paths stay as given (input files are found from the graph file's folder, plugins by
their absolute path): on a cluster of several machines they must name the same files
on every machine, as a shared file system does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class GraphSource:
    file: str                       # the name in messages (a path, or `<stdin>`)
    text: str
    plugins: tuple[str, ...] = ()
    device: str | None = None
    dtype: str | None = None
    seed: int | None = None
    inputs: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, path: str, text: str | None = None, *, plugins=(), **options) -> "GraphSource":
        """`path`'s text (or `text`, when the client read it already, as from stdin)."""
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                from ..graph import load

                load(path)          # AG031, exactly as the command without a cluster reports it
                raise
        return cls(str(path), text, tuple(str(Path(p).resolve()) for p in plugins), **options)

    def load(self):
        """The checked graph (`agrad.graphs.load`); GraphFileError as the client would get."""
        from ..graph import load

        return load(self.file, source=self.text, plugins=self.plugins, device=self.device, dtype=self.dtype,
                    seed=self.seed, inputs=dict(self.inputs) or None)
