"""The backward engine: GraphTask, ReadyQueue, NodeTask and Engine.execute.

This follows torch/csrc/autograd/engine.cpp. A backward pass is a GraphTask: the
dependency count of every Node reachable from the root, the InputBuffers of the
Nodes still waiting for gradients, and (for autograd.grad) which Nodes must run.
Nodes become ready when their count reaches zero and are run in the order of a
priority queue: later-created Nodes first (higher sequence_nr), AccumulateGrad
before everything. The CPU work runs on the calling thread; each device whose
backend asks for it (CUDA) has one long-lived worker thread with its own queue.
A backward called from inside a Node (re-entrant) nests on its thread up to a depth
limit, then continues on a pool thread: see [Reentrant backwards] below.
"""
from __future__ import annotations

import collections
import heapq
import itertools
import os
import sys
import threading

from .._device import device as Device
from ..dispatcher import ops as _ops
from ..fp_warnings import quiet as _quiet
from ..watchers import node_observers
from ..warn_once import warn_once
from ..grad_mode import saved_hooks_in_use
from ..grad_mode import tls as _dispatch_tls
from ..overrides import DisableTorchFunction
from .anomaly_mode import _state as _anomaly_state
from .anomaly_mode import check_outputs, is_anomaly_enabled, print_stack
from .gradient_sum import sum_into
from . import input_buffer
from .node import AccumulateGrad as _ACC  # AccumulateGrad's hooks live on its leaf
from .node import GraphRoot, check_hook_result, check_single_hook_result

__all__ = ["Engine", "GraphTask", "NodeTask", "ReadyQueue", "get_default_engine", "validate_outputs",
           "current_graph_task_id"]


class NodeTask:
    __slots__ = ("graph_task", "fn", "inputs", "is_shutdown")

    def __init__(self, graph_task, fn, inputs, is_shutdown=False):
        self.graph_task = graph_task
        self.fn = fn                  # None: an empty task that only wakes the owning thread
        self.inputs = inputs
        self.is_shutdown = is_shutdown


class ReadyQueue:
    """Priority queue of NodeTasks: shutdown, then wake-ups, then deeper re-entrant
    depth, then higher sequence_nr (PyTorch's CompareNodeTaskTime)."""
    __slots__ = ("_heap", "_lock", "_cond", "_tie", "_waiting")

    def __init__(self):
        self._heap: list = []
        # NOTE: `with self._lock`, not `with self._cond`: Condition.__enter__ is a Python-level call
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._tie = itertools.count().__next__
        self._waiting = 0         # threads blocked in pop(); notify() costs more than the push

    # A Node task's place (the smallest key pops first): after shutdown (0) and wake-up (1)
    # tasks, deeper re-entrant backward first, then the later-created Node. Written out in
    # `priority` and, once more for the hot path, in Engine._evaluate_function.
    @staticmethod
    def priority(graph_task, fn) -> tuple:
        return (2, -graph_task.reentrant_depth, -fn.sequence_nr)

    def push(self, task: NodeTask, increment_outstanding: bool = True) -> None:
        gt = task.graph_task
        if increment_outstanding:
            gt.add_outstanding(1)
        if task.fn is not None:
            key = self.priority(gt, task.fn)
        elif task.is_shutdown:
            key = (0, 0, 0)
        else:
            key = (1, 0, 0)
        with self._lock:
            heapq.heappush(self._heap, (key, self._tie(), task))
            if self._waiting:
                self._cond.notify()

    # A CPU queue is used by its GraphTask's thread alone until a device worker shares the task
    # (GraphTask.threaded): that thread pushes and pops without the lock.
    def push_unlocked(self, graph_task, fn, buffer) -> None:
        graph_task.outstanding_tasks += 1
        heapq.heappush(self._heap, (self.priority(graph_task, fn), self._tie(), NodeTask(graph_task, fn, buffer)))

    def pop_unlocked(self):
        """The next task, or None when the queue is empty."""
        heap = self._heap
        return heapq.heappop(heap)[2] if heap else None

    def shutdown(self) -> None:
        """Queue the task that ends a device worker's loop, ahead of everything."""
        with self._lock:
            heapq.heappush(self._heap, ((0, 0, 0), -1, NodeTask(None, None, None, is_shutdown=True)))
            self._cond.notify()

    def pop(self) -> NodeTask:
        with self._lock:
            while not self._heap:
                self._waiting += 1
                self._cond.wait()
                self._waiting -= 1
            return heapq.heappop(self._heap)[2]

    def __len__(self):
        return len(self._heap)


def should_compute_output(fn) -> bool:
    """Node::task_should_compute_output: whether the gradient flowing into `fn` (a Node's next
    function, None for an input without history) is wanted by the backward pass running now: any,
    in backward(); in autograd.grad or backward(inputs=), only on a path to the inputs asked for."""
    if fn is None:
        return False
    graph_task = _current.graph_task
    if graph_task is None or not graph_task.exec_info:
        return True
    info = graph_task.exec_info.get(fn)
    return info is not None and info.should_execute()


class ExecInfo:
    """For autograd.grad / backward(inputs=...): must this Node run, and which of its
    incoming gradients are the answers (captures: (input_nr, output index))."""
    __slots__ = ("needed", "captures")

    def __init__(self):
        self.needed = False
        self.captures = None

    def should_execute(self) -> bool:
        return self.needed or self.captures is not None


def _warn_reference_cycle() -> None:
    """Engine::execute's TORCH_WARN_ONCE for backward(create_graph=True)."""
    warn_once("backward(create_graph=True)",
              "Using backward() with create_graph=True will create a reference cycle between the parameter "
              "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
              "creating the graph to avoid this. If you have to use this function, make sure to reset the "
              ".grad fields of your parameters to None after use to break the cycle and avoid the leak.",
              stacklevel=4)


_next_graph_task_id = itertools.count().__next__      # atomic under the GIL


class GraphTask:
    __slots__ = ("keep_graph", "create_graph", "dependencies", "not_ready", "exec_info", "captured_vars",
                 "outstanding_tasks", "has_error", "error", "reentrant_depth", "cpu_ready_queue", "owner",
                 "_lock", "threaded", "anomaly", "observer", "order", "dry_run", "plain", "on_devices",
                 "final_callbacks", "graph_root", "id", "checkpoint_valid")

    def __init__(self, keep_graph, create_graph, reentrant_depth, dry_run=False):
        # PyTorch's GraphTask::id_, from one process-wide counter: what tells passes apart (a
        # multi-grad hook's state is per pass), where id() of a freed task is reused by the next
        self.id = _next_graph_task_id()
        self.keep_graph = keep_graph
        self.create_graph = create_graph          # grad mode while backward formulas run
        self.dependencies: dict = {}
        self.not_ready: dict = {}
        self.exec_info: dict = {}
        self.captured_vars: list = []
        self.outstanding_tasks = 0
        self.has_error = False
        self.error = None
        self.reentrant_depth = reentrant_depth
        self.cpu_ready_queue = ReadyQueue()
        self.owner = threading.get_ident()
        self._lock = threading.Lock()
        self.threaded = False          # set once a device worker thread may run its tasks
        self.anomaly = is_anomaly_enabled()
        self.observer = node_observers[-1] if node_observers else None
        self.order: list | None = [] if dry_run else None
        self.dry_run = dry_run
        self.plain = self.observer is None and not self.anomaly     # Nodes run without watchers
        self.on_devices = False        # set once a gradient off the CPU was handed on
        self.final_callbacks: list = []    # Engine.queue_callback's, run once the task is done
        self.graph_root = None             # the Node the pass starts from (what will run: will_execute)
        # a reentrant checkpoint cannot run in .grad() or backward(inputs=) (a non-empty exec_info):
        # it calls backward() itself, which would accumulate into .grad; set by Engine.execute
        self.checkpoint_valid = True

    def add_outstanding(self, delta: int) -> int:
        """Count tasks pushed and not yet finished. Until a device worker shares this task
        only its owner thread touches the count, so the lock is taken only after that."""
        if self.threaded:
            with self._lock:
                self.outstanding_tasks += delta
                return self.outstanding_tasks
        self.outstanding_tasks += delta
        return self.outstanding_tasks

    def set_error(self, exc: BaseException, fn) -> None:
        with self._lock:
            self.has_error = True
            if self.error is None:
                self.error = exc
                if self.anomaly and fn is not None:
                    print_stack(fn)           # PyTorch's set_exception_without_signal
                if getattr(exc, "agrad_node", None) is None:
                    try:
                        exc.agrad_node = fn
                        exc.add_note(f"(raised in the backward of {fn.name()})")
                    except (AttributeError, TypeError):
                        pass

    # -- preparing a run ---------------------------------------------------------
    def compute_dependencies(self, root, min_topo_nr: int) -> None:
        """Count incoming edges of every Node reachable from `root`; iterative, so a
        graph a million Nodes deep needs no recursion."""
        dependencies = self.dependencies       # a Node is in it once seen: it is its own `seen` set
        if _native is not None:
            _native.compute_dependencies(dependencies, root, min_topo_nr)
            return
        get = dependencies.get
        stack = [root]
        while stack:
            fn = stack.pop()
            if fn.topological_nr < min_topo_nr:
                continue
            for nxt in fn.next_fns:
                if nxt is not None:
                    count = get(nxt)
                    if count is None:
                        dependencies[nxt] = 1
                        stack.append(nxt)
                    else:
                        dependencies[nxt] = count + 1

    def init_to_execute(self, root, outputs, accumulate_grad: bool, min_topo_nr: int) -> None:
        """Mark the Nodes on a path from `root` to any of `outputs` (GraphTask::init_to_execute)."""
        exec_info = self.exec_info
        output_idx = 0
        for edge in outputs:
            info = exec_info.setdefault(edge.function, ExecInfo())
            if accumulate_grad:
                info.needed = True
            else:
                if info.captures is None:
                    info.captures = []
                info.captures.append((edge.input_nr, output_idx))
                output_idx += 1
        self.captured_vars = [None] * output_idx
        # NOTE: the root too runs only if it leads to an output: grad(y, unrelated, allow_unused=True)
        # must not call y's backward at all
        exec_info.setdefault(root, ExecInfo())

        def should_execute(fn):
            info = exec_info.get(fn)
            return info is not None and info.should_execute()

        seen = set()
        stack = [[root, 0]]       # frames: node, index of the next child to visit
        while stack:
            frame = stack[-1]
            fn = frame[0]
            child = None
            edges = fn.next_fns
            while frame[1] < len(edges):
                candidate = edges[frame[1]]
                frame[1] += 1
                if candidate is None:
                    continue
                if candidate in seen:
                    if should_execute(candidate):
                        exec_info.setdefault(fn, ExecInfo()).needed = True
                    continue
                seen.add(candidate)
                child = candidate
                break
            if child is not None:
                if child.topological_nr < min_topo_nr:
                    continue
                stack.append([child, 0])
            else:
                stack.pop()
                if should_execute(fn) and stack:
                    exec_info.setdefault(stack[-1][0], ExecInfo()).needed = True


def validate_outputs(fns, nrs, grads, fn_name) -> None:
    """Check (and reduce) each gradient against the metadata of the input it flows into: input
    `nrs[i]` of `fns[i]` (a Node's next_fns and next_nrs).

    This is the one place where a gradient of a broadcast input is summed back to the
    input's shape, and cast to its dtype (PyTorch's validate_outputs). `fn_name` None:
    the root gradients, whose messages name no Function; a Node: its name, asked for
    only when a message needs it. A gradient whose shape, dtype and device already
    match costs three comparisons. (The engine's common case does the same checks as it hands
    the gradients on: see Engine._evaluate_function.)"""
    if len(grads) != len(fns):
        _wrong_count(fns, grads, fn_name)
    i = -1
    for fn, nr in zip(fns, nrs):
        i += 1
        if fn is None:
            continue
        grad = grads[i]
        if grad is None:
            continue
        shape, dtype, dev = fn.input_metadata[nr]
        data = grad._data
        d = data.dtype
        if data.shape != shape or (d is not dtype and d != dtype) or grad._device is not dev:
            grads[i] = _conform(grad, shape, dtype, dev, i, fn_name)


def _wrong_count(fns, grads, fn_name):
    raise RuntimeError(f"{_returned(fn_name)}invalid number of gradients - expected {len(fns)}, "
                       f"but got {len(grads)}")


def _conform(grad, shape, dtype, dev, i, fn_name):
    """validate_outputs' slow path: sum a broadcast gradient to `shape`, cast it to `dtype`. A complex
    gradient of a real input is its real part (what derivatives.yaml's handle_r_to_c gives in each
    formula of PyTorch's that mixes real and complex inputs, done here once for every op); a custom
    Function's complex gradient of a real input is refused, as PyTorch's engine refuses it."""
    data = grad._data
    if data.shape != shape:
        if not _is_expandable_to(shape, data.shape):
            raise RuntimeError(f"{_returned(fn_name)}invalid gradient at index {i} - got "
                               f"{list(data.shape)} but expected shape compatible with {list(shape)}")
        grad = _ops.sum_to_size(grad, shape)
    if dtype is not None and grad._data.dtype != dtype:        # None: a leaf's grad_dtype that allows any
        if grad._data.dtype.kind == "c" and dtype.kind != "c":
            if getattr(fn_name, "_forward_cls", None) is not None:
                # a custom Function's backward: PyTorch's engine takes no real part, its formulas do
                raise RuntimeError("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
                                   "grad_is_complex) to be true, but got false.  (Could this error message be "
                                   "improved?  If so, please report an enhancement request to PyTorch.)")
            grad = _ops.real(grad)
        grad = _ops.to(grad, dtype=_dtype_of(dtype))
    if grad._device is not dev:
        raise RuntimeError(f"{_returned(fn_name)}invalid gradient at index {i} - expected device "
                           f"{dev} but got {grad._device}")
    return grad


def _returned(fn_name) -> str:
    if fn_name is None:
        return ""
    return f"Function {fn_name if fn_name.__class__ is str else fn_name.name()} returned an "


def _is_expandable_to(shape, desired) -> bool:
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def _dtype_of(np_dtype):
    from ..dtypes import from_numpy
    return from_numpy(np_dtype)


class _Planned:
    """A dry run's stand-in gradient: it only has to say which device it is on."""
    __slots__ = ("_device",)

    def __init__(self, dev):
        self._device = dev

    def __add__(self, other):
        return self


def _planned_outputs(fn) -> list:
    """What a dry run hands on from `fn`: a stand-in gradient per edge, on the device its Node expects."""
    return [_Planned(f.input_metadata[nr][2]) if f is not None else None for f, nr in zip(fn.next_fns, fn.next_nrs)]


class _ThreadState(threading.local):
    graph_task = None      # the GraphTask whose Node this thread is running: a backward from there re-enters
    depth = 0              # engine loops nested on this thread (PyTorch's current_depth)
    worker_queue = None    # on a device worker (or a pool thread standing in for one): the queue it serves


_current = _ThreadState()

# NOTE: [Reentrant backwards] a backward called inside a Node's backward runs its GraphTask
# on the calling thread, nested. Past MAX_DEPTH nested loops (PyTorch's number), or once the
# thread's Python stack has used half of the recursion limit (a Python frame budget, which
# PyTorch's C++ stack does not have), it runs on a pool thread instead, on a fresh stack,
# while the caller waits: a re-entrant chain of any depth needs no recursion on one stack.
MAX_DEPTH = 60


def _stack_is_deep() -> bool:
    try:
        sys._getframe(sys.getrecursionlimit() // 2)
    except ValueError:
        return False
    return True


class _ReentrantPool:
    """Threads that run re-entrant GraphTasks past the depth limit (PyTorch's
    reentrant_thread_pool): idle ones are reused, a new one starts when none is idle."""

    def __init__(self):
        self._jobs = collections.deque()
        self._cond = threading.Condition()
        self._idle = 0

    def run(self, job) -> None:
        """Run `job()` on a pool thread; return when it has finished."""
        done = threading.Event()

        def wrapped():
            try:
                job()
            finally:
                done.set()
        with self._cond:
            self._jobs.append(wrapped)
            if self._idle >= len(self._jobs):
                self._cond.notify()
            else:
                threading.Thread(target=self._worker, name="agrad-reentrant", daemon=True).start()
        done.wait()

    def _worker(self) -> None:
        while True:
            with self._cond:
                self._idle += 1
                while not self._jobs:
                    self._cond.wait()
                self._idle -= 1
                job = self._jobs.popleft()
            job()


class Engine:
    def __init__(self):
        self._device_queues: dict = {}
        self._lock = threading.Lock()
        self._pool = _ReentrantPool()

    def execute(self, root_edges, grads, keep_graph: bool, create_graph: bool, accumulate_grad: bool,
                outputs=None, dry_run: bool = False):
        """Run backward from `root_edges` seeded with `grads` (Engine::execute).

        `outputs` (edges) turns this into autograd.grad: only Nodes on a path to them
        run, and their incoming gradients are returned instead of accumulated.
        With `dry_run`, no Node is applied: the GraphTask is returned with `order`,
        the sequence in which the ready queue would run the Nodes.
        """
        parent = _current.graph_task
        depth = parent.reentrant_depth + 1 if parent is not None else 0
        graph_task = GraphTask(keep_graph, create_graph, depth, dry_run)
        validate_outputs([e.function for e in root_edges], [e.input_nr for e in root_edges], grads, None)
        if accumulate_grad and create_graph:
            _warn_reference_cycle()
        worker_queue = _current.worker_queue
        if worker_queue is not None:
            # re-entrant on a device worker: its queue takes this task's CPU work too, so the
            # worker keeps serving its device while it waits (PyTorch's local_ready_queue)
            graph_task.cpu_ready_queue = worker_queue
            graph_task.threaded = True

        if len(root_edges) == 1:
            graph_root = root_edges[0].function
            buffer = [None] * len(graph_root.input_metadata)
            input_buffer.add(buffer, root_edges[0].input_nr, grads[0])
        else:
            graph_root = GraphRoot(root_edges, grads)
            buffer = []

        min_topo_nr = min((e.function.topological_nr for e in outputs), default=0) if outputs else 0
        graph_task.graph_root = graph_root
        graph_task.compute_dependencies(graph_root, min_topo_nr)
        if outputs is not None:
            graph_task.init_to_execute(graph_root, outputs, accumulate_grad, min_topo_nr)

        # PyTorch's CheckpointValidGuard: valid while every backward on this thread's stack can checkpoint
        graph_task.checkpoint_valid = not graph_task.exec_info and (parent is None or parent.checkpoint_valid)
        self._ready_queue(graph_task, input_buffer.device(buffer)).push(NodeTask(graph_task, graph_root, buffer))
        if parent is not None and (_current.depth >= MAX_DEPTH or _stack_is_deep()):
            self._run_on_pool(graph_task, worker_queue)
        else:
            self._run(graph_task, worker_queue)
        if graph_task.error is not None:
            # NOTE: neither the task nor this frame may keep the error: its traceback holds this frame,
            # and such a cycle would keep the whole graph (and whatever its Nodes hold) until a GC pass
            error, graph_task.error = graph_task.error, None
            try:
                raise error
            finally:
                del error
        if graph_task.final_callbacks:
            self._run_final_callbacks(graph_task)
        return graph_task if dry_run else graph_task.captured_vars

    @staticmethod
    def current_graph_task():
        """The GraphTask whose Node this thread is running (None outside a backward pass)."""
        return _current.graph_task

    @staticmethod
    def is_checkpoint_valid() -> bool:
        """Engine::is_checkpoint_valid: False inside a .grad() or backward(inputs=) pass (or one
        nested in it), where reentrant checkpoint's own backward() call would be wrong."""
        graph_task = _current.graph_task
        return graph_task is None or graph_task.checkpoint_valid

    def queue_callback(self, callback) -> None:
        """Run `callback()` once the backward pass now running has finished (PyTorch's
        Variable._execution_engine.queue_callback), on the thread that started it; a callback may
        queue more."""
        graph_task = _current.graph_task
        if graph_task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        with graph_task._lock:
            graph_task.final_callbacks.append(callback)

    @staticmethod
    def _run_final_callbacks(graph_task: GraphTask) -> None:
        # GraphTask::exec_post_processing: by index, since a callback may append more; the task is
        # still the current one (so they can), under the caller's grad mode
        prev_task = _current.graph_task
        _current.graph_task = graph_task
        try:
            i = 0
            while True:
                with graph_task._lock:
                    if i >= len(graph_task.final_callbacks):
                        return
                    callback = graph_task.final_callbacks[i]
                callback()
                i += 1
        finally:
            _current.graph_task = prev_task

    # -- the loops ---------------------------------------------------------------
    def _run(self, graph_task: GraphTask, worker_queue) -> None:
        """Run `graph_task` to its end on this thread, grad mode on exactly when create_graph."""
        prev_task, prev_grad_mode = _current.graph_task, _dispatch_tls.grad_enabled
        # (saved-tensor hooks a backward sets and leaves set end with it, as PyTorch restores the
        # caller's thread-local state)
        prev_hooks = _dispatch_tls.saved_hooks
        _current.graph_task = graph_task
        _current.depth += 1
        _dispatch_tls.grad_enabled = graph_task.create_graph
        _dispatch_tls.refresh()
        # (no __torch_function__ handler sees the formulas' ops: PyTorch's are C++)
        no_handlers = DisableTorchFunction()
        no_handlers.__enter__()
        try:
            # NumPy's floating-point warnings (a gradient dividing by zero, log's at 0) are not shown,
            # as PyTorch's backward shows none (fp_warnings): set once a pass, so that each kernel
            # finds it set
            with _quiet():
                if worker_queue is None:
                    self._thread_main(graph_task)
                else:
                    self._device_thread_main(worker_queue, graph_task)
        finally:
            no_handlers.__exit__(None, None, None)
            _current.depth -= 1
            _current.graph_task = prev_task
            _dispatch_tls.grad_enabled = prev_grad_mode
            if _dispatch_tls.saved_hooks is not prev_hooks:
                # (and the count of open blocks follows: those entered and not left are gone, those
                # left are back)
                left_open = len(_dispatch_tls.saved_hooks) - len(prev_hooks)
                saved_hooks_in_use.count = max(0, saved_hooks_in_use.count - left_open)
                _dispatch_tls.saved_hooks = prev_hooks
            _dispatch_tls.refresh()

    def _run_on_pool(self, graph_task: GraphTask, worker_queue) -> None:
        """Run a re-entrant `graph_task` on a pool thread, with this thread's dispatch state."""
        included, excluded, anomaly = _dispatch_tls.included, _dispatch_tls.excluded, _anomaly_state.enabled

        def job():
            _dispatch_tls.included, _dispatch_tls.excluded = included, excluded
            _anomaly_state.enabled = anomaly
            _current.worker_queue = worker_queue
            try:
                self._run(graph_task, worker_queue)
            finally:
                _current.worker_queue = None
        self._pool.run(job)

    def _thread_main(self, graph_task: GraphTask) -> None:
        """The owning thread's loop: run CPU tasks until this GraphTask has none outstanding."""
        queue = graph_task.cpu_ready_queue
        pop_unlocked = queue.pop_unlocked
        while True:
            # NOTE: until a device worker shares this task (threaded), only this thread touches its queue
            task = None if graph_task.threaded else pop_unlocked()
            if task is None:
                task = queue.pop()
            gt = task.graph_task
            fn = task.fn
            inputs = task.inputs
            task = None
            if fn is not None and not gt.has_error:
                # and the chain of Nodes it makes ready; in C where that was built (_native_engine.c)
                if _native is not None and not gt.exec_info:
                    _native.evaluate_function(self, gt, fn, inputs)
                else:
                    self._evaluate_function(gt, fn, inputs, True)
            fn = inputs = None
            if gt.threaded:
                if gt.add_outstanding(-1) == 0 and gt is graph_task:
                    return
            else:
                gt.outstanding_tasks -= 1
                if gt.outstanding_tasks == 0 and gt is graph_task:
                    return

    def _device_thread_main(self, queue: ReadyQueue, graph_task: GraphTask | None = None) -> None:
        """A device's worker: runs that device's tasks for every GraphTask, forever; or, in a
        re-entrant backward on the worker, until `graph_task` has none outstanding."""
        _current.worker_queue = queue
        while True:
            task = queue.pop()
            if task.is_shutdown:
                return
            gt = task.graph_task
            if task.fn is not None and not gt.has_error:
                _dispatch_tls.grad_enabled = gt.create_graph
                _dispatch_tls.refresh()
                _current.graph_task = gt
                self._evaluate_function(gt, task.fn, task.inputs)       # an error becomes gt's
            if gt.add_outstanding(-1) == 0:
                if gt is graph_task:
                    return
                # the owner may be asleep on its own queue: wake it to see the task is done
                gt.cpu_ready_queue.push(NodeTask(gt, None, None))

    def _ready_queue(self, graph_task: GraphTask, device):
        if device is None or graph_task.dry_run or not device.backend.uses_worker_thread:
            return graph_task.cpu_ready_queue
        if not _dispatch_tls.multithreading_enabled:
            # set_multithreading_enabled(False) on the thread that started the backward (the only one
            # that pushes, since no worker ever gets this task): all on its own queue, as PyTorch's
            return graph_task.cpu_ready_queue
        graph_task.threaded = True     # from now on a worker shares the task counts
        queue = self._device_queues.get(device)
        if queue is None:
            with self._lock:
                queue = self._device_queues.get(device)
                if queue is None:
                    queue = ReadyQueue()
                    worker = threading.Thread(target=self._device_thread_main, args=(queue,),
                                              name=f"agrad-{device}", daemon=True)
                    worker.start()
                    self._device_queues[device] = queue
        return queue

    def shutdown_workers(self) -> None:
        with self._lock:
            queues, self._device_queues = self._device_queues, {}
        for queue in queues.values():
            queue.shutdown()

    # -- one node ----------------------------------------------------------------
    def _evaluate_function(self, graph_task: GraphTask, fn, inputs: list, direct: bool = False) -> None:
        """Run `fn` and hand its outputs to the Nodes they flow into. With `direct` (the owning
        thread), a single Node it made ready that would be the next one popped runs next, in this
        same loop, without the queue (the order stays the queue's; the push, the pop and a call per
        Node are saved): a chain of Nodes runs here from end to end. An error is the GraphTask's,
        named after the Node that raised it."""
        exec_info = graph_task.exec_info
        order = graph_task.order
        dependencies = graph_task.dependencies
        not_ready = graph_task.not_ready
        plain = graph_task.plain
        release = not graph_task.keep_graph
        heap = graph_task.cpu_ready_queue._heap
        depth = -graph_task.reentrant_depth
        while True:
            try:
                if exec_info:
                    info = exec_info[fn]
                    if not info.needed:
                        inputs = _call_tensor_pre_hooks(fn, list(inputs))
                    if info.captures is not None:
                        captured = graph_task.captured_vars
                        for input_nr, output_idx in info.captures:
                            captured[output_idx] = inputs[input_nr]
                    if not info.needed:
                        return

                validate = False
                if order is not None:
                    order.append(fn)
                    outputs = _planned_outputs(fn)
                else:
                    if fn.hooks is None and plain and fn.__class__ is not _ACC:
                        # the common case: _call_function without hooks or watchers; the outputs are
                        # validated below, as they are handed on (validate_outputs' checks, one loop)
                        outputs = fn.apply(inputs)
                        validate = True
                    else:
                        outputs = self._call_function(graph_task, fn, inputs)
                    if release:
                        fn.release_variables()
                    if graph_task.anomaly:
                        check_outputs(fn, outputs)
                # NOTE: empty the buffer, not only our name for it: the loop that popped this Node still
                # holds the list, and AccumulateGrad keeps a gradient as .grad only if nobody else holds it
                # (a transpose's gradient is a view that keeps its input alive)
                if inputs.__class__ is list:
                    inputs.clear()
                inputs = None

                fns = fn.next_fns
                if len(outputs) != len(fns):
                    _wrong_count(fns, outputs, fn)
                ready = ready_buffer = None
                i = -1
                for nxt, nr, grad in zip(fns, fn.next_nrs, outputs):
                    i += 1
                    if nxt is None:
                        continue
                    if grad is not None:
                        if validate:
                            shape, dtype, dev = nxt.input_metadata[nr]
                            data = grad._data
                            d = data.dtype
                            if data.shape != shape or (d is not dtype and d != dtype) or grad._device is not dev:
                                grad = _conform(grad, shape, dtype, dev, i, fn)
                        # (a dry run's queues are all the CPU's: its stand-ins take the CPU's path)
                        if grad._device is not _CPU and order is None:
                            graph_task.on_devices = True
                    count = dependencies[nxt] - 1
                    if count:
                        dependencies[nxt] = count
                        buffer = not_ready.get(nxt)
                    else:
                        del dependencies[nxt]
                        buffer = not_ready.pop(nxt, None)
                    if buffer is None:
                        if exec_info:
                            info = exec_info.get(nxt)
                            if info is None or not info.should_execute():
                                continue           # not on a path to anything asked for
                        # a fresh buffer (input_buffer.add without the call)
                        buffer = [None] * len(nxt.input_metadata)
                        buffer[nr] = grad
                        if count:
                            not_ready[nxt] = buffer
                            continue
                    else:
                        if grad is not None:
                            # NOTE: never `old += grad` on a sum someone else may hold: sum_into decides
                            buffer[nr] = grad if buffer[nr] is None else sum_into(buffer, nr, grad)
                        if count:
                            continue
                    # ready: _push's common case (every gradient on the CPU, no device worker) inline
                    if graph_task.threaded or (graph_task.on_devices and input_buffer.device(buffer) is not None):
                        self._push(graph_task, nxt, buffer)
                    else:
                        if ready is not None:
                            self._push(graph_task, ready, ready_buffer)
                        ready, ready_buffer = nxt, buffer
                # NOTE: drop our references: AccumulateGrad keeps a gradient as .grad only if nobody else holds it
                outputs = grad = data = buffer = None
                if ready is None:
                    return
                if graph_task.threaded:       # a device worker now shares the queue (a GPU gradient above)
                    self._push(graph_task, ready, ready_buffer)
                    return
                # runs next when nothing queued would run before it (ReadyQueue.priority's order); on a tie
                # (AccumulateGrads share a sequence_nr) the one queued first runs first, as the queue would
                # pop them and as PyTorch's queue pops two
                if not direct or graph_task.has_error or (heap and (2, depth, -ready.sequence_nr) >= heap[0][0]):
                    graph_task.cpu_ready_queue.push_unlocked(graph_task, ready, ready_buffer)
                    return
            except BaseException as exc:   # noqa: B902 — handed to the caller of execute()
                graph_task.set_error(exc, fn)
                return
            fn, inputs = ready, ready_buffer

    def _push(self, graph_task: GraphTask, fn, buffer: list) -> None:
        """Queue a ready Node on the ready queue of its gradients' device."""
        device = input_buffer.device(buffer)
        if device is None and not graph_task.threaded:
            # only this thread uses the CPU queue (see _thread_main): ReadyQueue.push without the lock
            graph_task.cpu_ready_queue.push_unlocked(graph_task, fn, buffer)
        else:
            self._ready_queue(graph_task, device).push(NodeTask(graph_task, fn, buffer))

    def _call_function(self, graph_task: GraphTask, fn, inputs: list) -> list:
        hooks = fn.hooks
        if hooks is not None or fn.__class__ is _ACC:
            inputs = _call_tensor_pre_hooks(fn, inputs)
            if hooks is not None:
                # NOTE: over a copy: a hook that removes itself or another must not make the next one be skipped
                for hook in tuple(hooks.pre):
                    prev = tuple(inputs)
                    result = hook(prev)
                    if result is not None:
                        check_hook_result(prev, result, hook)
                        inputs = list(result)
                # NOTE: drop our references: AccumulateGrad keeps a gradient as .grad only if nobody else holds it
                prev = result = None
        observer = graph_task.observer
        if graph_task.anomaly:
            # the Nodes fn's backward makes (create_graph) take it as their parent_ (print_stack)
            previous, _anomaly_state.evaluating = _anomaly_state.evaluating, fn
            try:
                outputs = _applied(observer, fn, inputs)
            finally:
                _anomaly_state.evaluating = previous
        elif observer is None:
            outputs = fn.apply(inputs)      # (inline: the path of every Node with hooks)
        else:
            outputs = _applied(observer, fn, inputs)
        validate_outputs(fn.next_fns, fn.next_nrs, outputs, fn)
        if hooks is not None:
            for hook in tuple(hooks.post):
                prev = tuple(outputs)
                result = hook(prev, tuple(inputs))
                if result is not None:
                    check_hook_result(prev, result, hook)
                    outputs = list(result)
        return outputs


def _applied(observer, fn, inputs: list) -> list:
    """fn.apply(inputs), between the observer's node_start and node_end where there is one."""
    if observer is None:
        return fn.apply(inputs)
    observer.node_start(fn, inputs)
    try:
        return fn.apply(inputs)
    finally:
        observer.node_end(fn)


def _call_tensor_pre_hooks(fn, inputs: list) -> list:
    """Tensor hooks first, then retain_grad (which sees what the hooks returned), as in PyTorch.
    Each list is copied first: the hooks that run are those registered when the Node starts."""
    for input_nr, hook in tuple(fn.tensor_pre_hooks()):
        result = hook(inputs[input_nr])
        if result is not None:
            check_single_hook_result(inputs[input_nr], result, hook)
            inputs[input_nr] = result
    if fn.hooks is not None and fn.hooks.retains_grad:
        for input_nr, hook in tuple(fn.hooks.retains_grad.items()):
            hook(inputs[input_nr])
    return inputs


_new = object.__new__
_CPU = Device("cpu")
_default_engine = Engine()


def get_default_engine() -> Engine:
    return _default_engine


def current_graph_task_id() -> int:
    """torch._C._current_graph_task_id: the id of the backward pass whose Node this thread is
    running, -1 outside one (non-reentrant checkpoint keys what it recomputed by it)."""
    graph_task = _current.graph_task
    return -1 if graph_task is None else graph_task.id


def register_release(node_class: type, saved_names: tuple) -> None:
    """Let the C loop release a generated Node class's saved tensors itself, as that class's
    release_variables (ops/registry.py's _make_release) would: called for each class generated."""
    if _native is not None:
        _native.register_release(node_class, tuple(saved_names))


def _load_native():
    """The C build of the engine's loops over Nodes (_native_engine.c), or None: where `pip install`
    found no compiler (the extension is optional), or with AGRAD_PURE_PYTHON=1 (the tests run both)."""
    if os.environ.get("AGRAD_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        import numpy as np

        from .. import watchers
        from .._tensor import Tensor
        from . import _native_engine as native
        from .saved_variable import RELEASED, SavedVariable
        native.configure(_ACC, _CPU, sum_into, _conform, _wrong_count, check_outputs, input_buffer.device,
                         _planned_outputs, Tensor, np.ndarray, _dispatch_tls, watchers, SavedVariable, RELEASED)
    except (ImportError, TypeError):        # TypeError: a build older than this file (configure's arguments)
        return None
    return native


_native = _load_native()
