"""agrad.autograd.profiler: PyTorch's autograd profiler (torch/autograd/profiler.py).

`profile` times every op call (through the dispatcher: agrad.watchers.op_observers), every
backward Node the engine runs (agrad.watchers.node_observers) and every `record_function`
range, as PyTorch's RecordFunction callbacks do. What it records is kept raw in `events`
(one `Event` a range, cheap to append); the PyTorch view, `function_events` (an EventList of
FunctionEvents with their tree), is built from them on first use, as PyTorch post-processes
its profiler's results lazily. Off, the profiler costs the op path one empty-list check.

Names follow PyTorch's: an ATen op "mul" is "aten::mul"; a Node runs as
"autograd::engine::evaluate_function: MulBackward0" around "MulBackward0"; a record_function
range is named as given.
"""
from __future__ import annotations

import enum
import threading
import time
import traceback
import warnings

from .. import watchers
from ..grad_mode import is_grad_enabled
from .node import UINT64_MAX

# NOTE: profiler_util (PyTorch's EventList and FunctionEvent, 1,600 lines) is imported where the
# PyTorch view is first built, not with this module: the engine imports this one, and a command
# that profiles nothing (every `agrad run`) would pay for it at start-up


def __getattr__(name):
    if name in ("EventList", "FunctionEvent"):       # torch.autograd.profiler's re-exports
        import importlib
        return getattr(importlib.import_module(f"{__package__}.profiler_util"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "Event", "kineto_available", "EventList",
           "FunctionEvent"]

# RecordScope values (ATen's record_function.h), FunctionEvent.scope
_FUNCTION, _BACKWARD_FUNCTION, _USER_SCOPE = 0, 1, 7

_active: list = []           # the profiles recording now; record_function tells each of them
_thread_ids: dict = {}       # threading ident -> PyTorch's small per-process thread id (from 1)


def kineto_available() -> bool:
    """agrad has no Kineto: its profiler is the legacy, in-process one."""
    return False


class ProfilerActivity(enum.Enum):
    """torch.autograd.ProfilerActivity (torch._C._profiler's enum, its values): the activity groups a
    torch.profiler.profile is asked to record. An Enum, not an IntEnum, so that str() names the member
    ("ProfilerActivity.CPU") as PyTorch's pybind enum does; int() gives the value, as there."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __int__(self):
        return self.value


def _supported_activities() -> set:
    """torch.autograd._supported_activities: the CPU only. Without Kineto (CUPTI) nothing records a
    device's kernels, so CUDA is not supported here even where agrad can run CUDA tensors."""
    return {ProfilerActivity.CPU}


def _profiler_enabled() -> bool:
    """torch.autograd._profiler_enabled: whether a profile is recording."""
    return bool(_active)


def _thread_id() -> int:
    # RecordFunction::currentThreadId: a sequential id a thread, not the OS's
    ident = threading.get_ident()
    tid = _thread_ids.get(ident)
    if tid is None:
        tid = _thread_ids.setdefault(ident, len(_thread_ids) + 1)
    return tid


class Event:
    """One recorded range, raw. `phase` is "forward" (an op outside backward) or "backward" (a
    Node, its evaluate_function wrapper, or an op a Node's formula called); `node` is the
    Node for a Node's own event (graphs/profiling.py attributes backward time by it)."""
    __slots__ = ("id", "name", "overload_name", "scope", "phase", "thread", "fwd_thread", "start", "end",
                 "sequence_nr", "input_shapes", "concrete_inputs", "stack", "node", "origin", "is_annotation")

    def __init__(self, id, name, scope, phase, thread, origin, node=None, sequence_nr=-1, fwd_thread=0,
                 input_shapes=(), concrete_inputs=(), stack=(), overload_name="", is_annotation=False):
        self.id, self.name, self.scope, self.phase, self.thread = id, name, scope, phase, thread
        self.origin, self.node, self.sequence_nr, self.fwd_thread = origin, node, sequence_nr, fwd_thread
        self.input_shapes, self.concrete_inputs, self.stack = input_shapes, concrete_inputs, stack
        self.overload_name, self.is_annotation = overload_name, is_annotation
        self.start = self.end = time.perf_counter()

    @property
    def start_s(self) -> float:
        """Seconds from the profile's start."""
        return self.start - self.origin

    @property
    def duration_s(self) -> float:
        return self.end - self.start


def _shapes(args) -> list:
    # PyTorch's input_shapes: a tensor's sizes, [] for anything else
    return [list(a.shape) if hasattr(a, "_keys") else [] for a in args]


def _concrete(args) -> list:
    # PyTorch's concrete_inputs: a scalar argument's value, None for a tensor
    return [a if isinstance(a, (bool, int, float, str)) or a is None else None for a in args]


def _python_stack() -> list:
    # with_stack: PyTorch's "file(line): function" entries, innermost first, agrad's own frames left out
    from .profiler_util import _filter_stack_entry
    frames = traceback.extract_stack()[:-3]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if "/agrad/" not in f.filename and _filter_stack_entry((f.filename, f.name))]


class profile:
    """torch.autograd.profiler.profile: a context manager that records the ops, backward Nodes
    and record_function ranges run inside it, and reports them as PyTorch's does."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.events: list = []
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        self.use_device = use_device
        self._function_events = None
        self._old_function_events = None
        self._needs_processing = False
        self.entered = False
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        self.trace_id = ""
        self.use_kineto = use_kineto      # the trace file is then Kineto's JSON object, not the legacy list
        self._metadata: dict = {}         # the trace's metadata (key -> JSON text), as Kineto keeps it
        self._tracing = False             # between _prepare_trace and __exit__: metadata may be added
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        if self.use_device is not None:
            if self.use_device not in ("cuda", "xpu", "mtia", "hpu"):
                warnings.warn(f"The {self.use_device} is not a valid device option.", stacklevel=2)
                self.use_device = None
            elif self.use_device == "cuda":
                from .. import cuda
                if not cuda.is_available():
                    warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
                    self.use_cuda = False
                    self.use_device = None
            else:
                warnings.warn(f"{self.use_device.upper()} is not available, disabling {self.use_device.upper()} "
                              "profiling", stacklevel=2)
                self.use_device = None
        if not use_cpu:
            # agrad records CPU-side ranges only (no Kineto): a CUDA profile is PyTorch's legacy fallback,
            # which needs the CPU's, and with no device left there is nothing to record
            if self.use_device == "cuda":
                raise AssertionError("Legacy CUDA profiling requires use_cpu=True")
            raise AssertionError("No activities specified for the profiler")

    def default_trace_id(self):
        import uuid
        return f"{uuid.uuid4().int:032X}"

    def create_trace_id(self):
        if self.custom_trace_id_callback:
            return self.custom_trace_id_callback()
        return self.default_trace_id()

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    # NOTE: entering is two steps, as PyTorch's: agrad.profiler's schedule prepares a trace at its
    # warmup steps and starts recording at its first active one (and, accumulating events, starts the
    # same profile again each cycle)
    def _prepare_trace(self):
        self.entered = True
        self.trace_id = self.create_trace_id()
        self._metadata = {}               # each trace its own, as each Kineto session
        self._tracing = True

    def _add_metadata_json(self, key: str, value: str) -> None:
        """torch.autograd._add_metadata_json: `value` (JSON text) under `key` in the trace being made;
        skipped, as Kineto skips it, where none is (this profile's trace not prepared, or ended)."""
        if not self._tracing:
            warnings.warn("Profiler is not initialized: skipping profiling metadata", stacklevel=4)
            return
        self._metadata[key] = value

    def _start_trace(self):
        self.entered = True
        self.events = []
        self._stacks: dict = {}            # thread ident -> its open ranges, innermost last
        self._forward_threads: dict = {}   # a Node's sequence_nr -> the thread whose op made it
        self._next_id = iter(range(1, 1 << 62)).__next__
        self._t0 = time.perf_counter()
        _active.append(self)
        watchers.op_observers.append(self)
        watchers.node_observers.append(self)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        watchers.op_observers.remove(self)
        watchers.node_observers.remove(self)
        _active.remove(self)
        self._tracing = False
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._needs_processing = True
        if self.acc_events:
            self._ensure_function_events()
        return False

    # ---- recording (only while entered) ----------------------------------------------------------

    def _open(self, name, scope, **fields) -> Event:
        stack = self._stacks.setdefault(threading.get_ident(), [])
        in_backward = any(e.scope == _BACKWARD_FUNCTION for e in stack)
        if self.with_stack and scope != _BACKWARD_FUNCTION:
            fields["stack"] = _python_stack()
        event = Event(self._next_id(), name, scope, "backward" if in_backward or scope == _BACKWARD_FUNCTION
                      else "forward", _thread_id(), self._t0, **fields)
        stack.append(event)
        return event

    def _close(self, event: Event) -> None:
        event.end = time.perf_counter()
        stack = self._stacks.setdefault(threading.get_ident(), [])
        # record_function ranges may close out of order (torch's test_record_function_multithreaded)
        if stack and stack[-1] is event:
            stack.pop()
        elif event in stack:
            stack.remove(event)
        self.events.append(event)

    def op_start(self, op, args):
        name = op.name if "::" in op.name else "aten::" + op.name
        fields = {"overload_name": op.schema.overload}
        if self.record_shapes:
            fields["input_shapes"], fields["concrete_inputs"] = _shapes(args), _concrete(args)
        event = self._open(name, _FUNCTION, **fields)
        # the Node this op records, if any, is newer than any Node its arguments hold
        event.sequence_nr = max((a.grad_fn.sequence_nr for a in args if hasattr(a, "_keys") and
                                 a.grad_fn is not None and a.grad_fn.sequence_nr != UINT64_MAX), default=-1)

    def op_end(self, op, result):
        stack = self._stacks[threading.get_ident()]
        at = len(stack) - 1
        while stack[at].is_annotation:      # a range the op opened (profiler::_record_function_enter) stays open
            at -= 1
        event = stack[at]
        # sequence_nr: as PyTorch, that of the Node the op records at the autograd level; ops
        # called beneath another op (a composite's parts) run below it and have none
        floor, event.sequence_nr = event.sequence_nr, -1
        outermost = not any(e.scope == _FUNCTION for e in stack[:at])
        first = result[0] if isinstance(result, tuple) and result else result
        node = getattr(first, "grad_fn", None) if hasattr(first, "_keys") else None
        if outermost and node is not None and is_grad_enabled() and floor < node.sequence_nr != UINT64_MAX:
            event.sequence_nr = node.sequence_nr
            self._forward_threads[node.sequence_nr] = event.thread
        self._close(event)

    def node_start(self, node, inputs=()):
        seq = -1 if node.sequence_nr == UINT64_MAX else node.sequence_nr
        fwd = self._forward_threads.get(seq, 0)
        name = node.name()
        wrapper = self._open(f"autograd::engine::evaluate_function: {name}", _FUNCTION, sequence_nr=seq,
                             fwd_thread=fwd)
        wrapper.phase = "backward"
        self._open(name, _BACKWARD_FUNCTION, node=node, sequence_nr=seq, fwd_thread=fwd,
                   input_shapes=_shapes(inputs) if self.record_shapes else ())

    def node_end(self, node):
        stack = self._stacks[threading.get_ident()]
        self._close(stack[-1])          # the Node's own range
        self._close(stack[-1])          # its evaluate_function wrapper

    def range_start(self, name, args=None) -> Event:
        # PyTorch passes `args` as the range's one (string) input: a shape [] and no concrete value
        fields = {"input_shapes": [[]], "concrete_inputs": [None]} if args is not None and self.record_shapes else {}
        return self._open(name, _USER_SCOPE, is_annotation=True, **fields)

    # ---- PyTorch's results ------------------------------------------------------------------------

    def _ensure_function_events(self):
        if self._function_events is not None:
            return
        from .profiler_util import DeviceType, EventList, FunctionEvent, _rewrite_name
        self._needs_processing = False
        events = sorted(self.events, key=lambda e: (e.start, e.id))
        self._function_events = EventList(
            [FunctionEvent(id=e.id, name=_rewrite_name(e.name, with_wildcard=True), overload_name=e.overload_name,
                           trace_name=_rewrite_name(e.name, with_wildcard=False), thread=e.thread,
                           start_us=(e.start - self._t0) * 1e6, end_us=(e.end - self._t0) * 1e6,
                           fwd_thread=e.fwd_thread, input_shapes=list(e.input_shapes),
                           concrete_inputs=list(e.concrete_inputs), kwinputs={}, stack=list(e.stack),
                           scope=e.scope, use_device=self.use_device, sequence_nr=e.sequence_nr,
                           device_type=DeviceType.CPU, is_user_annotation=e.is_annotation)
             for e in events],
            use_device=self.use_device, profile_memory=self.profile_memory, with_flops=self.with_flops)
        self._function_events._build_tree()
        if self._old_function_events and self.acc_events:
            for evt in self._old_function_events:
                self._function_events.append(evt)
            self._old_function_events = None

    def __repr__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    @property
    def function_events(self):
        if self._function_events is None or self._needs_processing:
            self._ensure_function_events()
        return self._function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """EventList.table of the events: PyTorch's columns, sorting and row limit."""
        self._ensure_function_events()
        return self._function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width, max_shapes_column_width=max_shapes_column_width,
            header=header, top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """The events as a Chrome trace (chrome://tracing), written atomically. A profile made with
        use_kineto=True (agrad.profiler's) writes Kineto's JSON object: the trace id and the
        metadata added while the trace was made among its keys (with `use_python_export`, the
        `metadata` given instead, as PyTorch's Python exporter writes it), the events under
        "traceEvents"; gzipped where `path` ends in .gz. Otherwise PyTorch's legacy list of events."""
        import gzip
        import json

        from .._atomic_write import write_atomically
        self._ensure_function_events()
        keys = None
        if self.use_kineto:
            added = (metadata or {}) if use_python_export else self._metadata
            keys = {"trace_id": json.dumps(self.trace_id), **added}
        data = self._function_events._chrome_trace(keys).encode()
        if self.use_kineto and path.endswith(".gz"):
            data = gzip.compress(data, mtime=0)
        write_atomically(path, lambda f: f.write(data))

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total"):
        self._ensure_function_events()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self._function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events averaged by name (and by input shapes, stack or overload where asked): EventList.key_averages."""
        self._ensure_function_events()
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        """One FunctionEventAvg of every event: EventList.total_average."""
        self._ensure_function_events()
        return self._function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """Total time spent on CPU: the sum of every event's self time."""
        self._ensure_function_events()
        return self._function_events.self_cpu_time_total


class record_function:
    """torch.autograd.profiler.record_function: a user-named range, recorded by every profile that
    is on (nesting the ranges run inside it), nothing otherwise. A context manager and a
    decorator; `args` counts as its one input, as in PyTorch."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._open: list = []      # one entry an enter: [(profile, Event)], so a decorated recursion nests

    def __enter__(self):
        self._open.append([(p, p.range_start(self.name, self.args)) for p in _active])
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._open:
            for prof, event in self._open.pop():
                if prof in _active:
                    prof._close(event)
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapped


class _emit_ranges:
    """What emit_itt and emit_nvtx share: every op as a range of a vendor's tracing API. agrad emits
    neither kind, so entering fails as PyTorch's does in a build without it, after its checks."""
    _kind = ""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._kind} annotation context manager is not reentrant")
        self.entered = True
        self._synchronize()
        raise RuntimeError(f"Can't use {self._kind} profiler - agrad was built without {self._kind}")

    def _synchronize(self) -> None:
        """What PyTorch does before it starts the ranges: nothing for ITT, which is host-side."""

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False


class emit_itt(_emit_ranges):
    """torch.autograd.profiler.emit_itt: every op as an ITT range, for Intel VTune. agrad has no ITT
    (agrad.profiler.itt.is_available() is False), so entering fails as PyTorch's does in a build
    without ITT, when its profiler is asked for the ITT callbacks."""
    _kind = "ITT"


class emit_nvtx(_emit_ranges):
    """torch.autograd.profiler.emit_nvtx: every op as an NVTX range, for nvprof and Nsight. Entering
    synchronizes CUDA first, as PyTorch's does, and so fails where CUDA is not available, with the
    error a CUDA device gives there; agrad emits no NVTX ranges, so where CUDA is available it fails
    as PyTorch's does in a build without them."""
    _kind = "NVTX"

    def _synchronize(self) -> None:
        from .. import backends
        from .._device import device
        backends.get_backend("cuda").check_device(device("cuda", 0))      # torch.cuda.synchronize()'s check
