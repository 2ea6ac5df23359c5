"""The profiler's operators (PyTorch's `torch.ops.profiler`, profiler/record_function_ops.cpp): a
record_function range opened and closed as two op calls, the handle passed between them.

    handle = agrad.ops.profiler._record_function_enter("bar", None)
    ...
    agrad.ops.profiler._record_function_exit(handle)

Registered with the dispatcher on the first use of `agrad.ops.profiler` (ops/__init__.py's
_NAMESPACE_MODULES), so that the op listing of a program that never asks for them stays aten's. The
handle is a tensor in both of PyTorch's forms: `_record_function_enter_new` returns a ScriptObject there,
which agrad has not; `_record_function_exit` takes either handle.
"""
from __future__ import annotations

import itertools

from ..creation import tensor
from ..dispatch_keys import DispatchKey
from ..dispatcher import define, impl
from .profiler import record_function

__all__: list = []

_open: dict = {}            # a handle's number -> the record_function it opened
_numbers = itertools.count(1)


def _enter(name, args=None):
    rf = record_function(name, args)
    rf.__enter__()
    number = next(_numbers)
    _open[number] = rf
    return tensor(number)


def _exit(handle):
    rf = _open.pop(int(handle.item()), None) if handle.numel() == 1 else None
    if rf is None:
        raise RuntimeError("profiler::_record_function_exit: the handle is not that of an open "
                           "_record_function_enter range")
    rf.__exit__(None, None, None)


def _kernel(fn):
    def kernel(op, keyset, args):
        return fn(*args)
    return kernel


for _schema, _fn in (("profiler::_record_function_enter(str name, str? args=None) -> Tensor", _enter),
                     ("profiler::_record_function_enter_new(str name, str? args=None) -> Tensor", _enter),
                     ("profiler::_record_function_exit(Tensor handle) -> ()", _exit)):
    _entry = define(_schema, doc=(_fn.__doc__ or ""))
    impl(_entry.name, DispatchKey.CompositeImplicitAutograd, _kernel(_fn))
