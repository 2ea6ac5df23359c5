"""PyTorch's operator objects (torch/_ops.py): `agrad.ops.aten.add` is an OpOverloadPacket, `add.Tensor`
one OpOverload of it. They are views of the registry, not a second one: a packet is made once per
OperatorEntry (kept on it) and an overload once per packet and name, so `func is ops.aten.mm.default`
holds wherever the same op is meant, and a dispatch mode is handed the same object every call.

agrad declares each op once, with one schema that takes what PyTorch splits into overloads (`add` takes
a Tensor or a number: aten::add.Tensor and aten::add.Scalar); aten_overloads.py (generated from torch)
lists the overloads of PyTorch's that an op serves, the one its calls dispatch as first. Every overload
of an op calls the same function, agrad's; `_schema` is agrad's schema of the op.
"""
from __future__ import annotations

__all__ = ["OpOverloadPacket", "OpOverload"]


def overload_names(entry) -> tuple:
    """The overload names `entry` serves, the one its calls dispatch as first."""
    if entry.schema.namespace:
        return (entry.schema.overload or "default",)
    from .aten_overloads import OVERLOADS
    return OVERLOADS.get(entry.name, ("default",))


class OpOverload:
    """One overload of an operator (torch._ops.OpOverload): callable, as the op."""
    # (__dict__: its own __module__, as torch's: `f"{func.__module__}.{func.__name__}"` names it in logs and messages)
    __slots__ = ("_entry", "_overloadname", "overloadpacket", "__name__", "__weakref__", "__dict__")

    def __init__(self, packet, overload: str):
        self._entry = packet._entry
        self._overloadname = overload
        self.overloadpacket = packet
        self.__name__ = f"{packet.__name__}.{overload}"
        self.__module__ = f"agrad.ops.{packet._namespace}"

    @property
    def namespace(self) -> str:
        return self.overloadpacket._namespace

    @property
    def _schema(self):
        return self._entry.schema

    @property
    def op(self):
        """The function that runs the op (torch's `op`, the builtin)."""
        return self._entry.function

    def name(self) -> str:
        """`aten::add.Tensor`: the qualified name with the overload (`aten::mm` for `default`)."""
        base = self.overloadpacket._qualified_op_name
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        return self._entry.function(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverload(op='{self.namespace}.{self.overloadpacket.__name__}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self.namespace}.{self.__name__}"

    def __copy__(self):         # a copy is the one object (a policy's op list deep-copied still matches)
        return self

    def __deepcopy__(self, memo):
        return self


class OpOverloadPacket:
    """The overloads of one operator (torch._ops.OpOverloadPacket): `packet.<overload>`, and callable
    itself (the op)."""
    __slots__ = ("_entry", "_namespace", "__name__", "_qualified_op_name", "_overloads", "_names", "__weakref__")

    def __init__(self, entry):
        self._entry = entry
        self._namespace = entry.schema.namespace or "aten"
        self.__name__ = entry.name.rpartition("::")[2]
        self._qualified_op_name = f"{self._namespace}::{self.__name__}"
        self._names = overload_names(entry)
        self._overloads = {}

    @property
    def op(self):
        return self._entry.function

    @property
    def _schemas(self) -> dict:
        return {name: self._entry.schema for name in self._names}

    @property
    def dispatched(self) -> OpOverload:
        """The overload a call of the op dispatches as (what a dispatch mode is handed)."""
        return getattr(self, self._names[0])

    def overloads(self) -> list:
        return list(self._names)

    def __getattr__(self, overload):
        if overload.startswith("__") or overload in OpOverloadPacket.__slots__:
            raise AttributeError(overload)          # (a slot not yet set: a copy being made)
        made = self._overloads.get(overload)
        if made is None:
            if overload not in self._names:
                raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
            made = self._overloads[overload] = OpOverload(self, overload)
        return made

    def __call__(self, *args, **kwargs):
        return self._entry.function(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self):
        return f"{self._namespace}.{self.__name__}"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self
