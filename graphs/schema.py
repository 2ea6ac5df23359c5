"""The JSON Schema (draft-07) of the graph format, for `agrad schema` and editors.

It mirrors what `document.py` accepts; the op names come from the dispatcher's
registry so the schema never keeps a second list of ops.
"""
from __future__ import annotations

from typing import Any

from .document import BACKWARD_KEYS, EXPECT_KEYS, INPUT_KEYS, TOP_KEYS
from .train_section import json_schemas as train_json_schemas
from .spec import DTYPE_NAMES, INITS

_DEVICE_PATTERN = r"^(cpu|cuda(:[0-9]+)?|dask|meta)$"
_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
# a plugin's op (`--plugin FILE.py`), which the schema cannot list: `namespace::name`
_PLUGIN_OP_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*$"


def registered_op_names() -> list[str]:
    """The registry's op names, or [] when the engine is not importable (schema stays usable)."""
    try:
        from agrad import dispatcher
        return sorted(entry.name for entry in dispatcher.all_ops())
    except (ImportError, AttributeError):
        return []


def _literal() -> dict:
    return {"description": "a number, a boolean, or a (nested) list of them",
            "anyOf": [{"type": ["number", "boolean"]}, {"type": "array", "items": {"$ref": "#/definitions/literal"}}]}


def _names(description: str) -> dict:
    return {"description": description,
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


def json_schema() -> dict[str, Any]:
    ops = [name for name in registered_op_names() if "::" not in name]
    plugin_op = {"type": "string", "pattern": _PLUGIN_OP_PATTERN,
                 "description": "an op a --plugin file registers, `namespace::name`"}
    op_name: dict[str, Any] = {"type": "string", "description": "an op of the registry (`agrad ops`)"}
    if ops:
        op_name = {"description": "an op of the registry (`agrad ops`) or of a plugin (`myops::scale`)",
                   "anyOf": [{"type": "string", "enum": ops}, plugin_op]}
    input_entry = {
        "type": "object", "additionalProperties": False,
        "description": "a leaf tensor: `value`, or `shape` + `init`, or `file` (+ `key`)",
        "properties": {
            "value": {"$ref": "#/definitions/literal"},
            "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}, "description": "sizes"},
            "init": {"enum": list(INITS), "description": "how to fill a `shape`"},
            "fill": {"type": "number", "description": "the value of init `full`"},
            "mean": {"type": "number", "default": 0.0}, "std": {"type": "number", "default": 1.0},
            "low": {"type": "number", "default": 0.0}, "high": {"type": "number", "default": 1.0},
            "seed": {"type": "integer", "description": "seed of a random init (default: the graph seed)"},
            "file": {"type": "string", "description": ".npy, .npz or .safetensors, relative to the graph file"},
            "key": {"type": "string", "description": "the array's name inside an .npz or a .safetensors"},
            "dtype": {"$ref": "#/definitions/dtype"},
            "device": {"$ref": "#/definitions/device"},
            "requires_grad": {"type": "boolean", "default": False},
        },
    }
    assert set(input_entry["properties"]) == set(INPUT_KEYS)
    structured_node = {
        "type": "object", "required": ["op"],
        "description": "an op applied to `args`; other keys are keyword arguments",
        "properties": {"op": op_name, "args": {"type": "array", "description": "positional arguments; "
                                                "a string naming an input or node is that tensor"}},
        "additionalProperties": True,
    }
    backward_pass = {
        "type": "object", "additionalProperties": False, "required": ["of"],
        "properties": {
            "of": _names("root name or list of root names"),
            "grad_tensors": {"type": "array", "description": "one gradient per root: a literal or an input's name",
                             "items": {"anyOf": [{"type": "string"}, {"$ref": "#/definitions/literal"}]}},
            "inputs": _names("accumulate only into these leaves"),
            "retain_graph": {"type": "boolean", "description": "default: create_graph"},
            "create_graph": {"type": "boolean", "default": False},
        },
    }
    assert set(backward_pass["properties"]) == set(BACKWARD_KEYS)
    train, expect_train = train_json_schemas()
    expectations = {"type": "object", "additionalProperties": {"$ref": "#/definitions/literal"}}
    expect = {
        "type": "object", "additionalProperties": False,
        "description": "checked by `agrad run` and `agrad test`",
        "properties": {
            "outputs": expectations,
            "grads": {"type": "object", "additionalProperties": {
                "anyOf": [{"$ref": "#/definitions/literal"}, {"type": "null"}]}},
            "atol": {"type": "number", "description": "absolute tolerance (default by dtype)"},
            "rtol": {"type": "number", "description": "relative tolerance (default by dtype)"},
            "train": expect_train,
        },
    }
    assert set(expect["properties"]) == set(EXPECT_KEYS)
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "urn:agrad:schema:graph:1",
        "title": "agrad graph file",
        "description": "A computation graph: leaf inputs, op nodes, backward passes, expectations.",
        "type": "object",
        "additionalProperties": False,
        "required": ["nodes"],
        "definitions": {
            "literal": _literal(),
            "dtype": {"enum": list(DTYPE_NAMES), "description": "element type"},
            "device": {"type": "string", "pattern": _DEVICE_PATTERN, "description": "cpu, cuda, cuda:N or dask"},
        },
        "properties": {
            "agrad": {"const": 1, "default": 1, "description": "format version"},
            "name": {"type": "string", "description": "default: the file's stem"},
            "description": {"type": "string"},
            "dtype": {"$ref": "#/definitions/dtype", "default": "float32",
                      "description": "default dtype of inputs"},
            "device": {"$ref": "#/definitions/device", "default": "cpu", "description": "default device of inputs"},
            "seed": {"type": "integer", "default": 0, "description": "seed of random inits"},
            "inputs": {"type": "object", "description": "leaf tensors, in order",
                       "propertyNames": {"pattern": _NAME_PATTERN},
                       "additionalProperties": {"anyOf": [{"$ref": "#/definitions/literal"}, input_entry]}},
            "nodes": {"type": "object", "description": "name: expression, or name: {op, args, ...}",
                      "propertyNames": {"pattern": _NAME_PATTERN},
                      "additionalProperties": {"anyOf": [{"type": "string"}, structured_node]}},
            "backward": {"description": "root(s) of one pass, or passes run in order",
                         "anyOf": [_names("root(s) of one pass"), backward_pass,
                                   {"type": "array", "items": backward_pass}]},
            "retain_grad": _names("non-leaf tensors whose .grad is kept"),
            "outputs": _names("what `run` reports (default: the roots, or the last node)"),
            "expect": expect,
            "train": train,
        },
    }
    assert set(schema["properties"]) == set(TOP_KEYS)
    return schema
