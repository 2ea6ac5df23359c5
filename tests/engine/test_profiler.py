"""agrad.autograd.profiler as PyTorch's autograd profiler: event names, the event tree, sequence
numbers, record_function, key averages, the table and the Chrome trace. The expected names and
values are those PyTorch 2.13 gives for the same code (torch.autograd.profiler, use_kineto=False)."""
from __future__ import annotations

import json
import threading
import warnings

import pytest

import agrad
from agrad import watchers
from agrad.autograd.profiler import profile, record_function
from agrad.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg, _format_memory, _format_time


def _names(prof):
    return [e.name for e in prof.function_events]


def test_ops_and_nodes_are_named_as_pytorch_names_them_and_nest():
    x = agrad.randn(3, 3, requires_grad=True)
    with profile() as p:
        assert agrad.autograd._profiler_enabled()
        y = (x * 2).sum()
        y.backward()
    assert not agrad.autograd._profiler_enabled()
    assert agrad.autograd.kineto_available() is False
    names = _names(p)
    assert names[:2] == ["aten::mul", "aten::sum"]
    events = {}
    for e in p.function_events:                      # each name's first event
        events.setdefault(e.name, e)
    wrapper = events["autograd::engine::evaluate_function: MulBackward0"]
    node = events["MulBackward0"]
    assert wrapper.cpu_children == [node] and node.cpu_parent is wrapper and wrapper.cpu_parent is None
    assert [c.name for c in node.cpu_children] == ["aten::mul"]       # the formula's op, inside its Node
    # sequence_nr: a forward op's is that of the Node it recorded; its Node's and wrapper's the same
    assert events["aten::mul"].sequence_nr == node.sequence_nr == wrapper.sequence_nr >= 0
    assert node.cpu_children[0].sequence_nr == -1                     # grad mode is off in backward
    assert node.scope == 1 and wrapper.scope == 0 and events["aten::mul"].fwd_thread == 0
    assert node.fwd_thread == events["aten::mul"].thread == 1
    acc = events["torch::autograd::AccumulateGrad"]
    assert acc.sequence_nr == -1 and acc.fwd_thread == 0
    assert [e.id for e in p.function_events] == sorted(e.id for e in p.function_events)


def test_record_function_ranges_nest_the_events_run_inside_them():
    x = agrad.randn(4)
    with profile() as p:
        with record_function("outer"):
            y = x * 2 + 4
            with record_function("inner"):
                y = y - 1
        y = y / 1
    assert _names(p) == ["outer", "aten::mul", "aten::add", "inner", "aten::sub", "aten::div"]
    outer, _, _, inner, sub, div = p.function_events
    assert [c.name for c in outer.cpu_children] == ["aten::mul", "aten::add", "inner"]
    assert inner.cpu_parent is outer and sub.cpu_parent is inner and div.cpu_parent is None
    assert outer.is_user_annotation and outer.scope == 7 and outer.sequence_nr == -1
    assert outer.cpu_time_total >= inner.cpu_time_total >= sub.cpu_time_total


def test_record_function_as_decorator_outside_a_profile_and_out_of_order():
    @record_function("my_func")
    def f(a, b):
        return a + b

    assert f(1, 2) == 3                              # no profile: nothing recorded, nothing raised
    with profile() as p:
        f(agrad.ones(2), agrad.ones(2))
    assert "my_func" in str(p) and _names(p) == ["my_func", "aten::add"]
    # ranges may close out of their opening order (PyTorch's test_record_function_multithreaded)
    with profile() as p:
        rf = record_function("outer")
        rf.__enter__()
        with record_function("inner"):
            rf.__exit__(None, None, None)
        agrad.ones(1) * 2
    assert _names(p)[:2] == ["outer", "inner"] and "aten::mul" in _names(p)


def test_record_shapes_and_key_averages_grouped_by_input_shape():
    layer1, layer2 = agrad.nn.Linear(20, 30), agrad.nn.Linear(30, 40)
    with profile(record_shapes=True) as p:
        layer2(layer1(agrad.randn(128, 20)))
        layer2(layer1(agrad.randn(128, 20)))
    linear = [e.input_shapes for e in p.function_events if e.name == "aten::linear"]
    assert linear == [[[128, 20], [30, 20], [30]], [[128, 30], [40, 30], [40]]] * 2
    by_name = {a.key: a for a in p.key_averages()}
    assert by_name["aten::linear"].count == 4
    by_shape = [a for a in p.key_averages(group_by_input_shape=True) if a.key == "aten::linear"]
    assert sorted(a.count for a in by_shape) == [2, 2]
    table = p.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=3)
    assert "Input Shapes" in table and len(table.splitlines()) == 3 + 3 + 2


def test_table_totals_and_string_match_pytorch_layout():
    with profile() as p:
        agrad.einsum("i->", agrad.randn(16))
    assert str(p) == p.table()
    lines = p.table().splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[-1].startswith("Self CPU time total: ")
    events = p.function_events
    assert p.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))
    total = p.total_average()
    assert total.key == "Total" and total.count == len(events)
    for e in events:                                  # a parent's time covers its children's
        assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))


def test_chrome_trace_is_json_with_every_event(tmp_path):
    with profile() as p:
        agrad.ones(3) * 2
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert [t["name"] for t in trace] == _names(p)
    assert all(t["ph"] == "X" and t["pid"] == "CPU functions" and t["tid"] == 1 for t in trace)
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]       # no temporary file left


def test_off_and_disabled_profiles_watch_nothing():
    with profile(enabled=False) as p:
        assert p is None and not agrad.autograd._profiler_enabled()
    assert watchers.op_observers == [] and watchers.node_observers == []
    prof = profile()
    with prof:
        with pytest.raises(RuntimeError, match="not reentrant"):
            prof.__enter__()
    assert watchers.op_observers == [] and watchers.node_observers == []
    with pytest.raises(AssertionError, match="Kineto"):
        profile(use_cpu=False)
    with pytest.warns(FutureWarning, match="use_cuda"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)      # "CUDA is not available" where it is not
            profile(use_cuda=True)


def test_acc_events_keeps_earlier_cycles():
    p = profile(acc_events=True)
    with p:
        agrad.ones(2) * 2
    with _reenter(p):
        agrad.ones(2) + 2
    assert sorted(_names(p)) == ["aten::add", "aten::mul"]


class _reenter:
    # PyTorch's acc_events accumulates over several start/stop cycles of one profile
    def __init__(self, prof):
        self.prof = prof

    def __enter__(self):
        self.prof.entered = False
        return self.prof.__enter__()

    def __exit__(self, *exc):
        return self.prof.__exit__(*exc)


def test_with_stack_records_the_calling_line():
    with profile(with_stack=True) as p:
        agrad.ones(2) * 2
    mul = next(e for e in p.function_events if e.name == "aten::mul")
    assert any("test_profiler.py" in entry and "test_with_stack_records_the_calling_line" in entry
               for entry in mul.stack)


def test_threads_get_their_own_ids_and_stacks():
    def work():
        agrad.ones(2) * 3

    with profile() as p:
        agrad.ones(2) * 2
        t = threading.Thread(target=work)
        t.start()
        t.join()
    threads = {e.thread for e in p.function_events if e.name == "aten::mul"}
    assert len(threads) == 2 and all(e.cpu_parent is None for e in p.function_events if e.name == "aten::mul")


def test_event_list_aggregation_and_formats_as_pytorch():
    # PyTorch's test_profiler_aggregation_fake and test_profiler_function_event_avg
    events = EventList()
    ranges = [(1, [(0, 1, 1), (1, 2, 2)]), (0, [(0, 2, 3), (1, 2, 4), (1, 3, 5)])]
    for thread, spans in ranges:
        for start, end, id in spans:
            events.append(FunctionEvent(id=id, node_id=0, name="", thread=thread, start_us=start, end_us=end))
    events._populate_cpu_children()
    assert [[c.id for c in e.cpu_children] for e in events] == [[], [], [], [], [4]]
    avg = FunctionEventAvg()
    avg.add(FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
    avg.add(FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
    avg.add(avg)
    assert (avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total, avg.cpu_time) == ("foo", 4, 30, 30, 7.5)
    assert [_format_time(1500), _format_time(2.5e6), _format_time(12.3456)] == ["1.500ms", "2.500s", "12.346us"]
    assert [_format_memory(2048), _format_memory(-3 * 1024 * 1024), _format_memory(10)] == ["2.00 KB", "-3.00 MB",
                                                                                          "10 B"]


def test_raw_events_keep_phase_and_node_for_graph_profiles():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    with profile() as p:
        loss.backward()
    nodes = [e for e in p.events if e.node is not None]
    assert [e.name for e in nodes] == ["SumBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    # the Nodes, their wrappers and their formulas' ops are "backward"; x's two gradients are
    # summed by the engine's input buffer, outside any Node
    assert [e.name for e in p.events if e.phase == "forward"] == ["aten::add"]
    assert all(e.duration_s >= 0 and e.start_s >= 0 for e in p.events)


def test_profiler_util_loads_on_first_use_from_either_name():
    # imported lazily (start-up): the first read, by either name, in a fresh process
    import subprocess
    import sys
    for first in ("agrad.autograd.profiler_util.EventList", "agrad.autograd.profiler.EventList"):
        code = f"import agrad.autograd, sys; assert 'agrad.autograd.profiler_util' not in sys.modules; print({first}.__name__)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.strip() == "EventList", out.stderr
