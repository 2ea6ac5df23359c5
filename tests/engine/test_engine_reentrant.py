"""Re-entrant backward on agrad's own threads: device workers and the re-entrant pool.

(What PyTorch does in the same CPU scenarios is compared in test_engine_contract.py.)"""
import threading

import pytest

import agrad
from agrad.autograd import engine as engine_module
from engine_contract_scenarios import _deep_reentrant
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops


def _nested(on_backward, fail_at_bottom=False):
    """A Function whose backward, n levels from the bottom, runs backward on a fresh n - 1 level graph."""
    class Nest(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x, n):
            ctx.n = n
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            on_backward()
            if ctx.n:
                with agrad.enable_grad():
                    Nest.apply(agrad.tensor(1.0, requires_grad=True), ctx.n - 1).backward()
            elif fail_at_bottom:
                raise KeyError("deepest")
            return grad, None
    return Nest


def _thread_name():
    return threading.current_thread().name


def test_deep_reentrant_backward_switches_to_pool_threads():
    threads_seen = set()
    v = agrad.tensor(300.0, dtype=agrad.float64, requires_grad=True)
    _deep_reentrant(agrad, on_backward=lambda: threads_seen.add(_thread_name())).apply(v).sum().backward()
    assert v.grad.item() == 1.0
    assert _thread_name() in threads_seen
    assert "agrad-reentrant" in threads_seen          # past the depth limit, on a fresh stack


def test_nesting_on_one_thread_stops_at_max_depth(monkeypatch):
    """The depth limit alone (the Python stack being shallow) moves a chain to the pool."""
    depths = []
    monkeypatch.setattr(engine_module, "MAX_DEPTH", 3)
    monkeypatch.setattr(engine_module, "_stack_is_deep", lambda: False)
    nest = _nested(lambda: depths.append((engine_module._current.depth, _thread_name())))
    nest.apply(agrad.tensor(1.0, requires_grad=True), 7).backward()
    assert [d for d, _ in depths] == [1, 2, 3, 1, 2, 3, 1, 2]
    names = [name for _, name in depths]
    assert names[0] == _thread_name() and names[3] == names[4] == "agrad-reentrant"
    assert len({id(t) for t in threading.enumerate() if t.name == "agrad-reentrant"}) >= 2


def test_reentrant_backward_on_a_device_worker_does_not_deadlock(standin_cuda):
    """A backward called from a Node running on a CUDA worker: the worker keeps serving its
    device's queue meanwhile (and past the depth limit a pool thread serves it in its place)."""
    threads_seen = set()
    v = agrad.tensor(150.0, dtype=agrad.float64, requires_grad=True)
    fn = _deep_reentrant(agrad, on_backward=lambda: threads_seen.add(_thread_name()))
    out = fn.apply(v.to("cuda")).sum()
    done = threading.Event()
    errors = []

    def run():
        try:
            out.backward()
        except Exception as exc:   # noqa: BLE001 — reported below
            errors.append(exc)
        done.set()
    threading.Thread(target=run, daemon=True).start()
    assert done.wait(60), "re-entrant backward on a device worker deadlocked"
    assert not errors, errors
    assert v.grad.item() == 1.0
    assert "agrad-cuda:0" in threads_seen and "agrad-reentrant" in threads_seen


def test_error_deep_in_a_pool_thread_reaches_the_caller_with_its_type():
    with pytest.raises(KeyError, match="deepest"):
        _nested(lambda: None, fail_at_bottom=True).apply(agrad.tensor(1.0, requires_grad=True), 200).backward()
