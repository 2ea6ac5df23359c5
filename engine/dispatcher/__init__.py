"""The dispatcher: schemas, dispatch keys, and the operator registry."""
from .dispatcher import (FALLTHROUGH, OMITTED, Deferred, OperatorEntry, UnknownOperatorError, all_ops, call,
                         define, get_op, impl, keyset_for, namespace, ops, register_fallback)
from ..dispatch_keys import AUTOGRAD, DispatchKey, format_keyset
from .schema import Argument, Schema, SchemaError, parse_schema

__all__ = ["DispatchKey", "OperatorEntry", "Schema", "Argument", "SchemaError", "UnknownOperatorError",
           "FALLTHROUGH", "OMITTED", "Deferred", "define", "impl", "register_fallback", "get_op", "all_ops",
           "keyset_for",
           "call", "ops", "namespace", "parse_schema", "format_keyset", "AUTOGRAD"]
