"""torch.nn scenarios of one family, merged into nn_scenarios.py (FAMILIES): same format as its
STRUCTURES (name -> builder(lib) -> module) and FORWARDS (name -> (structure name, input shapes, or
a callable spec(lib, rng) -> inputs))."""
from __future__ import annotations

STRUCTURES: dict = {}
FORWARDS: dict = {}
