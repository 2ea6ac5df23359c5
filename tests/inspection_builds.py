"""Comparing two Meta builds of one graph made in one process (`inspect`, kept and streamed)."""
from __future__ import annotations


def renumbered(backward: list[dict]) -> list[dict]:
    """Backward entries (as JSON has them) with each Node's sequence_nr counted from the first's:
    a second build numbers its Nodes on from wherever the process's count stood (an
    AccumulateGrad's is fixed)."""
    first = min((b["sequence_nr"] for b in backward if b["name"] != "AccumulateGrad"), default=0)
    return [{**b, "sequence_nr": b["sequence_nr"] - first} if b["name"] != "AccumulateGrad" else b
            for b in backward]
