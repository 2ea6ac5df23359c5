"""torch.autograd.set_multithreading_enabled: thread-local, set on construction (so a function as
well as a block), restored on leaving the block; while off, a backward runs every Node on the calling
thread instead of a device's worker thread (the stand-in CUDA backend has one)."""
import threading

import agrad
from agrad.autograd import is_multithreading_enabled, set_multithreading_enabled


def test_as_a_block_and_as_a_function():
    assert is_multithreading_enabled()
    with set_multithreading_enabled(False):
        assert not is_multithreading_enabled()
    assert is_multithreading_enabled()
    with set_multithreading_enabled(False):
        set_multithreading_enabled(True)
        assert is_multithreading_enabled()
    assert is_multithreading_enabled()      # the block restores what it found
    set_multithreading_enabled(False)
    try:
        seen = []
        t = threading.Thread(target=lambda: seen.append(is_multithreading_enabled()))
        t.start()
        t.join()
        assert seen == [True] and not is_multithreading_enabled()     # thread-local
    finally:
        set_multithreading_enabled(True)


def _threads_of_backward():
    x = agrad.randn(4, dtype=agrad.float64, device="cuda", requires_grad=True)
    y = (x * 2).sin()
    threads = set()
    y.grad_fn.register_prehook(lambda grads: threads.add(threading.current_thread().name))
    y.grad_fn.next_functions[0][0].register_prehook(lambda grads: threads.add(threading.current_thread().name))
    y.sum().backward()
    assert x.grad is not None
    return threads


def test_off_a_backward_runs_on_the_calling_thread(standin_cuda):
    assert _threads_of_backward() == {"agrad-cuda:0"}
    with set_multithreading_enabled(False):
        assert _threads_of_backward() == {threading.current_thread().name}
