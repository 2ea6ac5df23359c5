"""The structure of a nested checkpoint (`{"model": model.state_dict(), "optimizer":
opt.state_dict(), "epoch": 3}`), as JSON that agrad.save keeps in a file's metadata while
the tensors are the file's entries — what torch.save pickles, without pickle.

Each value is one JSON object with one key: {"tensor": ENTRY} (an entry of the file,
named by the value's path, `optimizer/state/0/exp_avg`), {"value": X} (None, a bool, an
int, a float, a str), {"dict": [[KEY, VALUE], ...]} (keys str or int, in order),
{"list": [...]}, {"tuple": [...]}. Reading checks every object's form and that the
entries named are exactly the file's.
"""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["flatten", "unflatten", "StructureError"]

_MAX_DEPTH = 64


class StructureError(ValueError):
    """A structure description that is not one flatten() writes."""


def flatten(obj, tensor_type, reserved=()) -> tuple[dict, dict]:
    """(entries: name -> tensor, structure) for a nest of dicts, lists, tuples, tensors and
    JSON scalars; anything else is a TypeError naming where it is. No entry is named as
    one of `reserved`."""
    entries: dict = {}

    def encode(value, path: str):
        if isinstance(value, tensor_type):
            name = path or "tensor"
            while name in entries or name in reserved:     # `0` and "0" as keys of one dict collide
                name += "'"
            entries[name] = value
            return {"tensor": name}
        if value is None or isinstance(value, (bool, int, float, str)):
            return {"value": value}
        if isinstance(value, Mapping):
            items = []
            for key, item in value.items():
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    raise TypeError(f"agrad.save: a key at {path or 'the top'} is a {type(key).__name__}; "
                                    "keys must be str or int")
                items.append([key, encode(item, f"{path}/{key}" if path else str(key))])
            return {"dict": items}
        if isinstance(value, (list, tuple)):
            kind = "tuple" if isinstance(value, tuple) else "list"
            return {kind: [encode(item, f"{path}/{i}" if path else str(i)) for i, item in enumerate(value)]}
        raise TypeError(f"agrad.save: {path or 'the object'} is a {type(value).__name__}; agrad saves tensors and "
                        "None, bool, int, float and str in dicts, lists and tuples (it never pickles)")

    return entries, encode(obj, "")


def unflatten(structure, entries: dict):
    """The object flatten() described, with `entries`' tensors in place."""
    used: set = set()

    def decode(node, depth: int):
        if depth > _MAX_DEPTH:
            raise StructureError(f"nested deeper than {_MAX_DEPTH} levels")
        if not isinstance(node, dict) or len(node) != 1:
            raise StructureError(f"{node!r:.60} is not an object with one key")
        (kind, body), = node.items()
        if kind == "tensor":
            if not isinstance(body, str) or body not in entries:
                raise StructureError(f"it names a tensor {body!r:.60} the file does not hold")
            used.add(body)
            return entries[body]
        if kind == "value":
            if body is not None and not isinstance(body, (bool, int, float, str)):
                raise StructureError(f"{body!r:.60} is not a JSON scalar")
            return body
        if kind in ("list", "tuple"):
            if not isinstance(body, list):
                raise StructureError(f"a {kind} of {body!r:.60}")
            items = [decode(item, depth + 1) for item in body]
            return tuple(items) if kind == "tuple" else items
        if kind == "dict":
            if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2 for p in body):
                raise StructureError(f"a dict of {body!r:.60}, not [key, value] pairs")
            out = {}
            for key, item in body:
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    raise StructureError(f"a dict key {key!r:.60}")
                out[key] = decode(item, depth + 1)
            return out
        raise StructureError(f"unknown kind {kind!r:.60}")

    obj = decode(structure, 0)
    if used != set(entries):
        raise StructureError(f"the file holds tensors no part of it names: {sorted(set(entries) - used)[:5]}")
    return obj
