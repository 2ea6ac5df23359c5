"""torch.profiler's schedule, its cycles and what it reports, as scenarios that run on PyTorch and
on agrad alike.

Each scenario takes the library module `T` (torch, or agrad) and returns what can be compared
without timings: the actions a schedule gives, when on_trace_ready is called and what the events
hold then (the ProfilerStep ranges and the ops of the cycle), the warnings and errors, the keys
and events of the trace files. `tests/reference/make_profiler_namespace_reference.py` runs them
on torch 2.13.0 (CPU) and writes `tests/reference/engine/profiler_namespace.json`;
`test_profiler_namespace.py` runs them on agrad and compares (never importing torch).

Only this module's ops (aten::mul) and the ProfilerStep ranges are looked at among the events:
Kineto adds events of its own.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
import warnings

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _observe(call) -> dict:
    """What `call` returned or raised, and the warnings it gave (category, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = {"returned": call()}
        except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
            builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
            result = {"raised": [builtin.__name__, str(exc)]}
    result["warnings"] = [[w.category.__name__, str(w.message)] for w in caught
                          if issubclass(w.category, (UserWarning, FutureWarning, DeprecationWarning))]
    return result


def _seen(events) -> list:
    # the events this file made: the step ranges (by trace name: "ProfilerStep#3") and the ops
    return [e.trace_name if e.name.startswith("ProfilerStep") else e.name for e in events
            if e.name.startswith("ProfilerStep") or e.name == "aten::mul"]


def _run(T, steps, **kwargs) -> dict:
    """Profile `steps` steps (one mul each) with these profile arguments; what each on_trace_ready
    call saw, and the action after each step."""
    ready, actions = [], []

    def on_trace_ready(p):
        ready.append({"step_num": p.step_num, "events": _seen(p.events())})

    x = T.ones(3)

    def go():
        with T.profiler.profile(on_trace_ready=on_trace_ready, **kwargs) as p:
            actions.append(p.current_action.name)
            for _ in range(steps):
                x.mul(2)
                p.step()
                actions.append(p.current_action.name)
        return p.step_num

    T.profiler.profiler._WARNINGS_SHOWN.clear()       # as in a fresh process: the cycle warning is given once
    result = _observe(go)
    result.update(ready=ready, actions=actions)
    return result


# -- schedule -------------------------------------------------------------------------------
SCHEDULES = {
    "wait1_warmup1_active2": dict(wait=1, warmup=1, active=2),
    "wait1_warmup1_active2_repeat1": dict(wait=1, warmup=1, active=2, repeat=1),
    "wait2_warmup2_active3_repeat2": dict(wait=2, warmup=2, active=3, repeat=2),
    "wait0_warmup1_active1": dict(wait=0, warmup=1, active=1),
    "skip_first3_wait1_warmup1_active1_repeat2": dict(skip_first=3, wait=1, warmup=1, active=1, repeat=2),
    "skip_first2_wait3_warmup1_active2_skip_first_wait": dict(skip_first=2, wait=3, warmup=1, active=2,
                                                              skip_first_wait=1),
    "skip_first_wait_repeat2": dict(wait=2, warmup=1, active=1, repeat=2, skip_first_wait=1),
}


@scenario
def schedule_actions(T):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: [T.profiler.schedule(**kw)(step).name for step in range(20)] for name, kw in SCHEDULES.items()}


@scenario
def schedule_checks_its_arguments(T):
    s = T.profiler.schedule
    return {"negative_wait": _observe(lambda: s(wait=-1, warmup=1, active=1) and None),
            "no_active": _observe(lambda: s(wait=0, warmup=1, active=0) and None),
            "negative_repeat_and_skip": _observe(lambda: s(wait=0, warmup=1, active=1, repeat=-1, skip_first=-2)
                                                 and None),
            "no_warmup": _observe(lambda: s(wait=1, warmup=0, active=1) and None),
            "negative_step": _observe(lambda: s(wait=1, warmup=1, active=1)(-1).name),
            "positional": _observe(lambda: s(1, 1, 1) and None)}


@scenario
def enums_and_supported_activities(T):
    P = T.profiler
    return {"actions": [[a.name, a.value] for a in P.ProfilerAction],
            "activities": sorted([a.name, int(a)] for a in P.ProfilerActivity.__members__.values()),
            "str": [str(P.ProfilerActivity.CPU), str(P.ProfilerAction.RECORD)],
            "supported": sorted(a.name for a in P.supported_activities()),
            "same_record_function": P.record_function is T.autograd.profiler.record_function,
            "same_activity": P.ProfilerActivity is T.autograd.ProfilerActivity}


# -- cycles ---------------------------------------------------------------------------------
@scenario
def cycles_with_repeat(T):
    with warnings.catch_warnings():
        return _run(T, 10, schedule=T.profiler.schedule(wait=1, warmup=1, active=2, repeat=2))


@scenario
def cycles_without_repeat_until_the_end(T):
    return _run(T, 9, schedule=T.profiler.schedule(wait=1, warmup=1, active=2))


@scenario
def cycles_without_warmup(T):
    return _observe(lambda: _run(T, 5, schedule=T.profiler.schedule(wait=1, warmup=0, active=1)))


@scenario
def cycles_with_skip_first(T):
    return _run(T, 10, schedule=T.profiler.schedule(skip_first=3, wait=1, warmup=1, active=1, repeat=3))


@scenario
def cycles_with_skip_first_wait(T):
    return _run(T, 10, schedule=T.profiler.schedule(skip_first=1, wait=3, warmup=1, active=1,
                                                    skip_first_wait=1))


@scenario
def ending_while_warming_up(T):
    return _run(T, 2, schedule=T.profiler.schedule(wait=1, warmup=2, active=1))


@scenario
def ending_while_recording(T):
    return _run(T, 3, schedule=T.profiler.schedule(wait=1, warmup=1, active=3))


@scenario
def without_a_schedule(T):
    return _run(T, 3)


@scenario
def accumulating_events_across_cycles(T):
    return _run(T, 8, schedule=T.profiler.schedule(wait=1, warmup=1, active=1), acc_events=True)


@scenario
def incorrect_schedules(T):
    # NOTE: not RECORD then WARMUP: PyTorch 2.13 stops the trace there and never prepares another, and
    # Kineto crashes (a segmentation fault) at the next start (test_profiler_namespace.py checks agrad's)
    A = T.profiler.ProfilerAction
    plan = [A.RECORD, A.NONE, A.WARMUP, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.RECORD_AND_SAVE,
            A.RECORD, A.NONE]
    return _run(T, len(plan) - 1, schedule=lambda step: plan[step])


@scenario
def a_schedule_may_not_answer_device_stopped(T):
    A = T.profiler.ProfilerAction
    at_start = _observe(lambda: T.profiler.profile(schedule=lambda step: A.DEVICE_STOPPED) and None)
    p = T.profiler.profile(schedule=lambda step: A.RECORD if step < 2 else A.DEVICE_STOPPED)
    p.start()
    p.step()
    later = _observe(p.step)
    state = [p.step_num, p.current_action.name]
    p.stop()
    return {"at_start": at_start, "later": later, "state": state}


@scenario
def start_and_stop_without_a_context(T):
    ready = []
    p = T.profiler.profile(schedule=T.profiler.schedule(wait=0, warmup=1, active=1),
                           on_trace_ready=lambda q: ready.append(_seen(q.events())))
    x = T.ones(2)
    p.start()
    for _ in range(4):
        x.mul(3)
        p.step()
    p.stop()
    return {"ready": ready, "step_num": p.step_num, "events": _seen(p.events())}


@scenario
def before_starting(T):
    p = T.profiler.profile()
    return {"events": _observe(p.events), "key_averages": _observe(p.key_averages),
            "export_chrome_trace": _observe(lambda: p.export_chrome_trace("never.json")),
            "trace_id": p.get_trace_id()}


@scenario
def key_averages_of_a_cycle(T):
    counts = []

    def on_trace_ready(p):
        counts.append(sorted([e.key, e.count] for e in p.key_averages()
                             if e.key == "aten::mul" or e.key.startswith("ProfilerStep")))

    x = T.ones(2)
    with T.profiler.profile(schedule=T.profiler.schedule(wait=0, warmup=1, active=3),
                            on_trace_ready=on_trace_ready) as p:
        for step in range(8):
            for _ in range(step):
                x.mul(2)
            p.step()
    return counts


@scenario
def trace_ids_per_cycle(T):
    ids, made = [], []

    def next_id():
        made.append(f"cycle-{len(made)}")
        return made[-1]

    with T.profiler.profile(schedule=T.profiler.schedule(wait=1, warmup=1, active=1),
                            on_trace_ready=lambda p: ids.append(p.get_trace_id()),
                            custom_trace_id_callback=next_id) as p:
        for _ in range(6):
            p.step()
    return {"ids": ids, "made": made}


@scenario
def execution_trace_observer_follows_the_trace(T):
    calls = []

    class Observer:
        def start(self):
            calls.append("start")

        def stop(self):
            calls.append("stop")

        def cleanup(self):
            calls.append("cleanup")

    with T.profiler.profile(schedule=T.profiler.schedule(wait=1, warmup=1, active=1),
                            execution_trace_observer=Observer(),
                            on_trace_ready=lambda p: calls.append("ready")) as p:
        for _ in range(5):
            p.step()
    return calls


# -- activities -----------------------------------------------------------------------------
@scenario
def activities(T):
    A = T.profiler.ProfilerActivity

    def enter(**kwargs):
        def go():
            with T.profiler.profile(**kwargs) as p:
                T.ones(2).mul(2)
            return _seen(p.events())
        return go

    return {"cuda_only": _observe(enter(activities=[A.CUDA])),
            "cpu_and_cuda": _observe(enter(activities=[A.CPU, A.CUDA])),
            "none": _observe(enter(activities=[])),
            "twice": _observe(enter(activities=[A.CPU, A.CPU])),
            "not_an_activity": _observe(enter(activities=["cpu"])),
            "use_cuda": _observe(enter(use_cuda=True)),
            "use_cuda_false": _observe(enter(activities=[A.CPU, A.CUDA], use_cuda=False))}


# -- trace files ----------------------------------------------------------------------------
def _trace_summary(trace, trace_id=None) -> dict:
    """The trace's metadata keys this file set, and the events this file made."""
    keys = ("at_none", "at_warmup", "at_record", "json_at_record", "second_cycle", "preset", "record_shapes",
            "with_stack")
    names = [e.get("name", "") for e in trace["traceEvents"]]
    return {"metadata": {k: trace.get(k) for k in keys}, "is_the_trace_id": trace.get("trace_id") == trace_id,
            "events": sorted(n for n in names if n.startswith("ProfilerStep#") or n == "aten::mul")}


@scenario
def chrome_trace_with_metadata(T):
    """Metadata goes to the trace being made (at a warmup or active step), each cycle's its own; added
    when none is, it is skipped."""
    traces = []
    folder = tempfile.mkdtemp()

    def on_trace_ready(p):
        path = os.path.join(folder, f"trace{len(traces)}.json")
        p.export_chrome_trace(path)
        with open(path) as f:
            traces.append(_trace_summary(json.load(f), p.get_trace_id()))

    x = T.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # agrad warns where it skips; PyTorch logs it from C++
        with T.profiler.profile(schedule=T.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                                on_trace_ready=on_trace_ready, record_shapes=True) as p:
            p.preset_metadata_json("preset", "[1, 2]")
            p.add_metadata("at_none", "0")
            for step in range(9):
                x.mul(2)
                p.step()
                if step == 0:
                    p.add_metadata("at_warmup", "one two")
                if step == 1:
                    p.add_metadata("at_record", "2")
                    p.add_metadata_json("json_at_record", '{"a": [1, 2.5, null]}')
                if step == 4:
                    p.add_metadata("second_cycle", "3")
    return traces


@scenario
def tensorboard_trace_handler_files(T):
    folder = os.path.join(tempfile.mkdtemp(), "made", "here")
    x = T.ones(2)
    for use_gzip in (False, True):
        with T.profiler.profile(schedule=T.profiler.schedule(wait=0, warmup=1, active=1, repeat=2),
                                on_trace_ready=T.profiler.tensorboard_trace_handler(folder, "worker0",
                                                                                    use_gzip=use_gzip)) as p:
            for _ in range(6):
                x.mul(2)
                p.step()
    files = sorted(os.listdir(folder), key=lambda n: (n.endswith(".gz"), n))
    summaries = []
    for name in files:
        with (gzip.open if name.endswith(".gz") else open)(os.path.join(folder, name), "rt") as f:
            summaries.append(_trace_summary(json.load(f))["events"])
    return {"names": [re.sub(r"\.\d+\.", ".<ns>.", n) for n in files], "events": summaries}
