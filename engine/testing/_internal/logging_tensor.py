"""torch/testing/_internal/logging_tensor.py for agrad: a wrapper subclass and a dispatch mode that log every op
they see, below autograd, as `$2: f32[1] = agrad.ops.aten.mul.Tensor($0, $1)` (`capture_logs` collects the
lines). The ops of a backward pass show as well: they are ops on the subclass's gradients.

LoggingTensor can be used in two ways, as PyTorch's: the wrapped tensor needs no gradient and the wrapper may
require one (`requires_grad=True`, autograd records on the wrapper), or the wrapped tensor requires grad and
autograd records on it, inside the handler. A test uses one of them, never both.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import traceback
import weakref

from ... import dtypes
from ..._tensor import Tensor
from ...overrides import enable_reentrant_dispatch
from ...utils._python_dispatch import TorchDispatchMode
from ...utils._pytree import tree_map

__all__ = ["LoggingTensor", "LoggingTensorMode", "LoggingTensorReentrant", "LoggingTensorHandler", "log_input",
           "capture_logs", "capture_logs_with_logging_tensor_mode"]

logger = logging.getLogger("LoggingTensor")

# the short names of dtypes in the logs (those agrad has of PyTorch's list)
_dtype_abbrs = {getattr(dtypes, name): abbr for name, abbr in (
    ("bfloat16", "bf16"), ("float64", "f64"), ("float32", "f32"), ("float16", "f16"), ("complex32", "c32"),
    ("complex64", "c64"), ("complex128", "c128"), ("int8", "i8"), ("int16", "i16"), ("int32", "i32"),
    ("int64", "i64"), ("bool_", "b8"), ("uint8", "u8")) if hasattr(dtypes, name)}


class LoggingTensor(Tensor):
    """Holds the real tensor as `elem`; every op on it runs on `elem` and is logged."""
    elem: Tensor

    __slots__ = ["elem"]

    context = contextlib.nullcontext

    @staticmethod
    def __new__(cls, elem, *args, **kwargs):
        # the wrapper holds no memory, and claims elem's layout, dtype and device
        r = Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(), dtype=elem.dtype,
            layout=elem.layout, device=elem.device, requires_grad=kwargs.get("requires_grad", False))
        r.elem = elem.detach() if r.requires_grad else elem
        return r

    def __repr__(self):
        return super().__repr__(tensor_contents=f"{self.elem}")

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(e):
            return e.elem if isinstance(e, cls) else e

        def wrap(e):
            return cls(e) if isinstance(e, Tensor) else e

        with cls.context():
            rs = tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))
        logging.getLogger("LoggingTensor").info(f"{func.__module__}.{func.__name__}", args, kwargs or {}, rs)
        return rs


class LoggingTensorMode(TorchDispatchMode):
    """The same log for every op while the mode is pushed, on any tensor."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        rs = func(*args, **kwargs)
        logging.getLogger("LoggingTensor").info(f"{func.__module__}.{func.__name__}", args, kwargs, rs)
        return rs


class LoggingTensorReentrant(LoggingTensor):
    """A LoggingTensor whose handler runs its ops with autograd on again (enable_reentrant_dispatch)."""
    context = enable_reentrant_dispatch


class LoggingTensorHandler(logging.Handler):
    """Formats each record as `$<id>: <dtype>[<sizes>] = <op>(<args>)`: a tensor is `$n`, numbered in the
    order it is first seen (only LoggingTensors, unless `use_shortid_for_all_tensors`)."""

    def __init__(self, log_list: list, use_shortid_for_all_tensors: bool, with_type: bool,
                 tracebacks_list: list | None) -> None:
        logging.Handler.__init__(self)
        self.log_list = log_list
        self.use_shortid_for_all_tensors = use_shortid_for_all_tensors
        self.tracebacks_list = tracebacks_list
        self.memo: dict = {}        # id(tensor) -> (a weak reference to it, its number)
        self.next_id = 0
        self.with_type = with_type

    def _shortid(self, t: Tensor) -> int:
        known = self.memo.get(id(t))
        if known is None or known[0]() is not t:        # (an id reused by a tensor made since)
            known = self.memo[id(t)] = (weakref.ref(t), self.next_id)
            self.next_id += 1
        return known[1]

    def _fmt(self, a: object, with_type: bool = False) -> str:
        cond_cls = Tensor if self.use_shortid_for_all_tensors else LoggingTensor
        if isinstance(a, cond_cls):
            maybe_type = ""
            if with_type and self.with_type:
                maybe_type = f": {_dtype_abbrs[a.dtype]}[{', '.join(map(str, a.shape))}]"
            return f"${self._shortid(a)}{maybe_type}"
        return repr(a)

    def emit(self, record):
        fmt_args = ", ".join(itertools.chain(
            (str(tree_map(self._fmt, a)) for a in record.args[0]),
            (f"{k}={str(tree_map(self._fmt, v))}" for k, v in record.args[1].items())))
        fmt_rets = tree_map(functools.partial(self._fmt, with_type=True), record.args[2])
        self.log_list.append(f"{fmt_rets} = {record.msg}({fmt_args})")
        if self.tracebacks_list is not None:
            self.tracebacks_list.append(record.traceback)


def log_input(name: str, var: object) -> None:
    logger.info("input", (name,), {}, var)


class GatherTraceback(logging.Filter):
    """Keeps the Python stack of each record (agrad has no TorchScript or C++ frames to add)."""

    def __init__(self, python=True, script=True, cpp=False):
        super().__init__()
        self.python, self.script, self.cpp = python, script, cpp

    def filter(self, record):
        record.traceback = "".join(traceback.format_stack()) if self.python else ""
        return True


@contextlib.contextmanager
def capture_logs(is_mode=False, python_tb=False, script_tb=False, cpp_tb=False):
    """The log lines of the block, in a list; with a traceback option, (lines, their tracebacks)."""
    collect_traceback = python_tb or script_tb or cpp_tb
    log_list: list = []
    tracebacks_list: list = []
    handler = LoggingTensorHandler(log_list, with_type=True, use_shortid_for_all_tensors=is_mode,
                                   tracebacks_list=tracebacks_list if collect_traceback else None)
    # NOTE: the logger's level and propagation are put back after (torch leaves them set): a record of
    # LoggingTensor's is no %-format, and a handler that is not ours (pytest's, which it adds to every
    # non-propagating logger) fails to format it
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    gather = GatherTraceback(python=python_tb, script=script_tb, cpp=cpp_tb) if collect_traceback else None
    if gather is not None:
        logger.addFilter(gather)
    try:
        yield (log_list, tracebacks_list) if collect_traceback else log_list
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
        if gather is not None:
            logger.removeFilter(gather)


@contextlib.contextmanager
def capture_logs_with_logging_tensor_mode(python_tb=False, script_tb=False, cpp_tb=False):
    with LoggingTensorMode(), capture_logs(True, python_tb, script_tb, cpp_tb) as logs:
        yield logs
