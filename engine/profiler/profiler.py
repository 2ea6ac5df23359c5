"""agrad.profiler.profiler: torch/profiler/profiler.py (PyTorch 2.13): `profile`, its `schedule` and
`tensorboard_trace_handler`, over agrad's autograd profiler.

One mechanism records: `_KinetoProfile` makes an agrad.autograd.profiler.profile and drives it
through the same two steps as PyTorch's Kineto profile (`_prepare_trace` at a warmup step,
`_start_trace` at the first active one, `__exit__` at the cycle's end); its events, key averages,
table and Chrome trace are that profile's. What is added here is when to record: `profile` asks its
schedule for an action at each step and takes the transition PyTorch's action_map gives for each
(previous action, action) pair, calling on_trace_ready at the end of every active cycle.

Where PyTorch's behaviour rests on Kineto it is agrad's own: the metadata `add_metadata` gathers
goes into the trace file (as Kineto writes it there) whether or not Kineto is available; a device's
collection never stops early, so `ProfilerAction.DEVICE_STOPPED` is never entered (a schedule still
may not return it); there is no ExecutionTraceObserver (an execution_trace_observer given is
started and stopped with the trace, as PyTorch's _ITraceObserver contract says).
"""
from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from enum import Enum
from functools import partial
from warnings import warn

from ..autograd import profiler as prof
from ..autograd.profiler import ProfilerActivity, _supported_activities

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler", "profile"]

PROFILER_STEP_NAME = "ProfilerStep"

_WARNINGS_SHOWN: set = set()


def _warn_once(msg, category=UserWarning, stacklevel=2):
    if msg not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(msg)
        warn(msg, category=category, stacklevel=stacklevel)


def supported_activities():
    """The activity groups a profile can record here: {ProfilerActivity.CPU} (no Kineto, no CUPTI)."""
    return _supported_activities()


class _ITraceObserver(ABC):
    """A trace observer (PyTorch's interface): started and stopped with the trace, cleaned up at the end."""

    @abstractmethod
    def start(self):
        pass

    @abstractmethod
    def stop(self):
        pass

    @abstractmethod
    def cleanup(self):
        pass


def _parse_activities(activities):
    """The activity groups asked for, and a filter for those given as {activity: [names]}."""
    parsed_activities: set = set()
    activity_filters: dict = {}
    for item in activities:
        if isinstance(item, ProfilerActivity):
            if item in parsed_activities:
                raise ValueError(f"Activity {item} specified more than once")
            parsed_activities.add(item)
        elif isinstance(item, dict):
            for key, val in item.items():
                if key in parsed_activities:
                    raise ValueError(f"Activity {key} specified more than once")
                parsed_activities.add(key)
                activity_filters[key] = set(val)
        else:
            raise TypeError(f"Expected ProfilerActivity or dict, got {type(item)}")
    return parsed_activities, activity_filters


class _KinetoProfile:
    """The low-level profiler: start() and stop() one agrad.autograd.profiler.profile, and report it.

    Args: activities (ProfilerActivity members, or {member: [names]}; default supported_activities()),
    record_shapes, profile_memory, with_stack, with_flops, with_modules, experimental_config,
    execution_trace_observer, acc_events (keep the events of every cycle), custom_trace_id_callback,
    post_processing_timeout_s: as PyTorch's."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            self.activities, self.activity_filters = _parse_activities(activities)
        else:
            self.activities = supported_activities()
            self.activity_filters = {}
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler: prof.profile | None = None
        self.use_device = None
        for activity, device in ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
                                 (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu")):
            if activity in self.activities:
                self.use_device = device
                break
        # user-defined metadata: preset (added when a trace starts), and the trace's own
        self.preset_metadata: dict = {}
        self._trace_metadata: dict = {}

    def start(self) -> None:
        self.prepare_trace()
        self.start_trace()

    def stop(self) -> None:
        self.stop_trace()

    def prepare_trace(self) -> None:
        if self.profiler is not None and not self.acc_events:
            _warn_once("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                       "cycle will be reported. To keep events across cycles, set acc_events=True.")
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                use_cpu=ProfilerActivity.CPU in self.activities, use_device=self.use_device,
                record_shapes=self.record_shapes, with_flops=self.with_flops, profile_memory=self.profile_memory,
                with_stack=self.with_stack, with_modules=self.with_modules, use_kineto=True,
                experimental_config=self.experimental_config, acc_events=self.acc_events,
                custom_trace_id_callback=self.custom_trace_id_callback)
        self.profiler._prepare_trace()

    def start_trace(self) -> None:
        if self.execution_trace_observer:
            self.execution_trace_observer.start()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler._start_trace()
        for option in ("profile_memory", "with_stack", "record_shapes", "with_modules", "with_flops"):
            if getattr(self, option):
                self.add_metadata_json(option, "1")
        # NOTE: PyTorch adds the preset metadata only where Kineto is: it is Kineto that writes
        # metadata into the trace. agrad's trace carries it itself
        for k, v in self.preset_metadata.items():
            self.add_metadata_json(k, v)

    def stop_trace(self) -> None:
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path: str, use_python_export: bool = False):
        """The collected trace as a Chrome trace (Kineto's JSON object, with the metadata added while
        it was made), written atomically; gzipped where `path` ends in .gz. With a schedule, the last
        cycle's."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        return self.profiler.export_chrome_trace(path, self._trace_metadata, use_python_export=use_python_export)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total"):
        """Save the stack traces (with_stack=True) to `path`, weighted by `metric`: "self_cpu_time_total"
        or "self_cuda_time_total"."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False):
        """The events averaged by name (and by input shape, stack or overload where asked): an EventList
        of FunctionEventAvg, whose table() prints PyTorch's table."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def events(self):
        """The unaggregated FunctionEvents, for on_trace_ready or after profiling."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler.function_events

    def add_metadata(self, key: str, value: str) -> None:
        """Add a string `value` under `key` to the trace being made (at a warmup or active step)."""
        # NOTE: PyTorch quotes the string escaping only its quotes (a backslash at its end would make
        # the trace unreadable); json.dumps reads back as the same string and is always JSON
        wrapped_value = json.dumps(value)
        self._trace_metadata[key] = wrapped_value
        self._add_to_trace(key, wrapped_value)

    def add_metadata_json(self, key: str, value: str) -> None:
        """Add `value`, JSON text, under `key` to the trace being made (at a warmup or active step)."""
        # NOTE: PyTorch passes the text to Kineto unchecked; text that is not JSON would make a trace
        # file no reader can load, so it is refused here, when it is added
        try:
            json.loads(value)
        except (TypeError, ValueError):
            raise ValueError(f"add_metadata_json: the value of {key!r} is not JSON text: {value!r}") from None
        self._trace_metadata[key] = value
        self._add_to_trace(key, value)

    def _add_to_trace(self, key, value):
        # torch.autograd._add_metadata_json: the metadata goes to the trace being made, if any
        if self.profiler is None:
            warn("Profiler is not initialized: skipping profiling metadata", stacklevel=3)
        else:
            self.profiler._add_metadata_json(key, value)

    def preset_metadata_json(self, key: str, value: str) -> None:
        """Set metadata (JSON text) before the profiler starts, added to the trace when it does."""
        self.preset_metadata[key] = value


class ProfilerAction(Enum):
    """What the profiler does at a step. NONE, WARMUP, RECORD and RECORD_AND_SAVE are a schedule's
    answers; DEVICE_STOPPED is PyTorch's own state for a device whose collection stopped early (never
    here), which a schedule may not return."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """A profile's `schedule`: skip the first `skip_first` steps, then wait `wait` steps, warm up
    `warmup`, record `active` (the last of them RECORD_AND_SAVE), and start again with the wait;
    `repeat` cycles (0: until profiling ends). A non-zero `skip_first_wait` skips the first cycle's wait."""

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    """Without a schedule: record from the start, at every step."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                              use_python_export: bool = False):
    """An on_trace_ready that writes each cycle's trace into `dir_name` (TensorBoard's logdir) as
    `<worker_name>.<time in ns>.pt.trace.json[.gz]`; `worker_name` is `<hostname>_<pid>` by default."""
    import socket
    import time

    def handler_fn(prof) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        # nanoseconds, so that two traces never share a name
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name = file_name + ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name), use_python_export=use_python_export)

    return handler_fn


class profile(_KinetoProfile):
    """torch.profiler.profile: the profiler's context manager (or start()/stop()), stepped with step().

    Args: activities, record_shapes, profile_memory, with_stack, with_flops, with_modules,
    experimental_config, execution_trace_observer, acc_events as _KinetoProfile's; schedule (step ->
    ProfilerAction; default: record every step); on_trace_ready (called with the profile at the end of
    each active cycle, when the schedule's RECORD_AND_SAVE step ends); use_cuda (deprecated: activities).

    With a schedule each step is a "ProfilerStep#<n>" range in the events."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            activities_set: set = set()
            for item in activities:
                if isinstance(item, ProfilerActivity):
                    activities_set.add(item)
                elif isinstance(item, dict):
                    activities_set.update(item.keys())
        else:
            activities_set = supported_activities()
        if use_cuda is not None:
            warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning, stacklevel=2)
            if use_cuda:
                activities_set.add(ProfilerActivity.CUDA)
            elif ProfilerActivity.CUDA in activities_set:
                activities_set.remove(ProfilerActivity.CUDA)
        if len(activities_set) == 0:
            raise AssertionError("No valid profiler activities found")

        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config, execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback,
                         post_processing_timeout_s=post_processing_timeout_s)
        if schedule:
            self.schedule = schedule
            self.record_steps = True         # step markers in the trace and the table
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn: prof.record_function | None = None
        self.current_action = self._checked(self.schedule(self.step_num))
        # the schedule's own answer at the last step (PyTorch keeps it beside current_action, which
        # a device's early stop overrides)
        self._prev_schedule_action = self.current_action

        A = ProfilerAction
        # (previous action, action) -> what to do; None is the profile's end
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warn, "Incorrect schedule: WARMUP followed by NONE"), self.start_trace,
                                 self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warn, "Incorrect schedule: RECORD followed by NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warn, "Incorrect schedule: RECORD followed by WARMUP"), self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready, self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                            self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                                     self.start_trace],
            # the profile's end
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    @staticmethod
    def _checked(action):
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        return action

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        if self.execution_trace_observer:
            self.execution_trace_observer.cleanup()

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)
        self.current_action = self._prev_schedule_action

    def step(self) -> None:
        """Signal that the next step has begun: end this step's range, take the schedule's transition."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None        # a step() or stop() after this one raised exits it no more
        prev_action = self.current_action
        # the schedule is asked before any state changes, so that a bad answer leaves the profile as it was
        schedule_action = self._checked(self.schedule(self.step_num + 1))
        self.step_num += 1
        self.current_action = self._prev_schedule_action = schedule_action
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def set_custom_trace_id_callback(self, callback) -> None:
        """Set the trace id generator, called at the start of each cycle."""
        self.custom_trace_id_callback = callback

    def get_trace_id(self):
        """The current cycle's trace id (None before the first)."""
        if self.profiler is None:
            return None
        return self.profiler.trace_id

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action) -> None:
        for action in self.action_map.get((prev_action, current_action)) or ():
            action()
