"""The engine's contract: PyTorch's semantics for backward, grad, create_graph, errors."""
import numpy as np
import pytest

import agrad
from agrad.autograd import AccumulateGrad, Function
from agrad.autograd.graph import walk
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from recordings import recording  # noqa: F401 — and with the C and the Python recording of each op


def seed_graph():
    a = agrad.tensor(1.0, requires_grad=True)
    b = agrad.tensor(2.0, requires_grad=True)
    c = agrad.add(a, b)
    d = a * c
    return a, b, c, d


def test_seed_example():
    a, b, c, d = seed_graph()
    d.backward()
    assert a.grad.item() == 4.0 and b.grad.item() == 1.0 and c.grad is None
    assert c.grad_fn.name() == "AddBackward0" and d.grad_fn.name() == "MulBackward0"
    (f0, n0), (f1, n1) = d.grad_fn.next_functions
    assert isinstance(f0, AccumulateGrad) and f0.variable is a and n0 == 0
    assert f1 is c.grad_fn and n1 == 0
    assert a.is_leaf and not c.is_leaf and a.grad_fn is None


def test_sequence_and_topological_numbers():
    a, b, c, d = seed_graph()
    acc_a = d.grad_fn.next_functions[0][0]
    assert d.grad_fn.sequence_nr > c.grad_fn.sequence_nr          # created later, runs earlier
    assert acc_a.sequence_nr == 2 ** 64 - 1
    assert acc_a.topological_nr == 0
    assert c.grad_fn.topological_nr == 1 and d.grad_fn.topological_nr == 2


def test_retain_graph_accumulates_and_freed_graph_raises():
    a, b, c, d = seed_graph()
    d.backward(retain_graph=True)
    d.backward()
    assert a.grad.item() == 8.0 and b.grad.item() == 2.0
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        d.backward()


def test_second_pass_without_saved_tensors_succeeds_as_in_pytorch():
    # add saves nothing, so a second pass through it alone needs no retained graph
    a = agrad.tensor(1.0, requires_grad=True)
    b = agrad.tensor(2.0, requires_grad=True)
    c = a + b
    c.backward()
    c.backward()
    assert a.grad.item() == 2.0


def test_implicit_grad_needs_a_scalar_and_root_needs_grad():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    y = agrad.tensor(3.0)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()


def test_multi_root_backward_with_grad_tensors():
    x = agrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y1 = x * 2
    y2 = (x * x).sum()
    agrad.autograd.backward([y1, y2], [agrad.tensor([1.0, 0.0, 1.0]), agrad.tensor(0.5)])
    np.testing.assert_allclose(x.grad.numpy(), [2 + 1.0, 0 + 2.0, 2 + 3.0])


def test_grad_leaves_dot_grad_untouched_and_runs_only_needed_nodes():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    w = agrad.tensor([3.0, 4.0], requires_grad=True)
    side = agrad.exp(w).sum()          # a branch that does not lead to x
    y = (x * w).sum() + side
    ran = []
    for node in walk([y.grad_fn])[0]:
        node.register_prehook(lambda grads, n=node: ran.append(n.name()))
    (gx,) = agrad.autograd.grad(y, x)
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    assert x.grad is None and w.grad is None
    # AddBackward0 (root), SumBackward0, MulBackward0: the exp branch and the accumulators never run
    assert sorted(ran) == ["AddBackward0", "MulBackward0", "SumBackward0"]


def test_allow_unused():
    x = agrad.tensor(1.0, requires_grad=True)
    z = agrad.tensor(2.0, requires_grad=True)
    y = x * 3
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        agrad.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = agrad.autograd.grad(y, [x, z], allow_unused=True)
    assert gx.item() == 3.0 and gz is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        agrad.autograd.grad(x * 2, [agrad.tensor(1.0)])


def test_second_derivative_of_cube():
    x = agrad.tensor([0.5, -1.0, 2.0], dtype=agrad.float64, requires_grad=True)
    (g,) = agrad.autograd.grad((x ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, -1.0, 2.0]) ** 2)
    (h,) = agrad.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * np.array([0.5, -1.0, 2.0]))


def test_hessian_vector_product_matches_analytic():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    A = A + A.T
    x0, v0 = rng.standard_normal(4), rng.standard_normal(4)
    x = agrad.tensor(x0, requires_grad=True)
    Am, v = agrad.tensor(A), agrad.tensor(v0)
    # f(x) = 1/2 x^T A x + sum(tanh(x)): H = A + diag(-2 tanh(x) (1 - tanh(x)^2))
    f = 0.5 * agrad.dot(x, agrad.mv(Am, x)) + agrad.tanh(x).sum()
    (g,) = agrad.autograd.grad(f, x, create_graph=True)
    (hv,) = agrad.autograd.grad(agrad.dot(g, v), x)
    t = np.tanh(x0)
    H = A + np.diag(-2 * t * (1 - t ** 2))
    np.testing.assert_allclose(hv.numpy(), H @ v0, rtol=1e-12)


def test_create_graph_accumulates_differentiable_grad():
    x = agrad.tensor(2.0, dtype=agrad.float64, requires_grad=True)
    y = x ** 3
    y.backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.item() == 12.0
    (gg,) = agrad.autograd.grad(x.grad, x)
    assert gg.item() == 12.0     # d/dx 3x^2 = 6x


def test_broadcast_gradient_is_reduced_to_input_shape():
    x = agrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = agrad.tensor([1.0, 1.0, 1.0], requires_grad=True)
    s = agrad.tensor(2.0, requires_grad=True)
    ((x + b) * s).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 4.0, 4.0])
    assert s.grad.item() == 21.0 + 6.0


def test_retain_grad_and_hooks():
    a, b, c, d = seed_graph()
    c.retain_grad()
    seen = []
    c.register_hook(lambda g: seen.append(g.item()))
    a.register_hook(lambda g: g * 10)       # replaces the gradient on its way into a.grad
    d.backward()
    assert c.grad.item() == 1.0 and seen == [1.0]
    assert a.grad.item() == 40.0


def test_retained_grads_accumulate_across_passes():
    a, b, c, d = seed_graph()
    c.retain_grad()
    d.backward(retain_graph=True)
    d.backward()
    assert c.grad.item() == 2.0


def test_backward_inputs_accumulates_only_there():
    a, b, c, d = seed_graph()
    d.backward(inputs=[b])
    assert a.grad is None and b.grad.item() == 1.0


def test_no_grad_records_nothing():
    x = agrad.tensor(1.0, requires_grad=True)
    with agrad.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert agrad.is_grad_enabled()


def test_inplace_change_of_saved_tensor_is_detected():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    w = agrad.tensor([3.0, 4.0])
    y = (x * w).sum()
    w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_leaf_requiring_grad_rejects_inplace():
    x = agrad.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1)


def test_integer_tensors_cannot_require_grad():
    # PyTorch's two messages: a factory's, and the requires_grad setter's
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients"):
        agrad.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex dtype can require gradients"):
        agrad.tensor([1, 2]).requires_grad = True


def test_error_in_a_backward_node_names_it():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = agrad.tensor(1.0, requires_grad=True)
    y = Boom.apply(x) * 2
    with pytest.raises(ValueError, match="boom") as info:
        y.backward()
    assert info.value.agrad_node.name() == "BoomBackward"


def test_custom_function():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            result = agrad.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

    x = agrad.tensor([0.0, 1.0], dtype=agrad.float64, requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))
    assert agrad.testing.gradcheck(Exp.apply, [agrad.tensor([0.3, -0.2], dtype=agrad.float64,
                                                             requires_grad=True)])


def test_custom_function_saved_tensors_are_freed():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = agrad.tensor(3.0, requires_grad=True)
    y = Square.apply(x)
    y.backward()
    assert x.grad.item() == 6.0
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_anomaly_mode_names_the_node():
    x = agrad.tensor([0.0, 1.0], requires_grad=True)
    y = agrad.sqrt(x) if hasattr(agrad, "sqrt") else x ** 0.5
    with agrad.autograd.detect_anomaly():
        with pytest.raises(agrad.autograd.AnomalyError, match="returned inf values in its 0th output") as info:
            y.sum().backward()
    assert info.value.node.name().startswith(("SqrtBackward0", "PowBackward0"))


def test_device_mismatch_is_an_error_and_meta_graphs_build():
    x = agrad.empty([100000, 100000], device="meta", requires_grad=True)
    w = agrad.empty([100000, 10], device="meta")
    y = (x @ w).sum()
    assert y.shape == () and y.grad_fn.name() == "SumBackward0" and y.device.type == "meta"
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        agrad.add(agrad.ones(3), agrad.ones(3, device="meta"))


def test_dtype_promotion_follows_pytorch():
    f32 = agrad.ones(3)
    assert (f32 + agrad.tensor(1.0, dtype=agrad.float64)).dtype == agrad.float32     # 0-d does not win
    assert (f32 + agrad.ones(3, dtype=agrad.float64)).dtype == agrad.float64
    assert (agrad.tensor([1, 2]) * 2.5).dtype == agrad.float32                      # int * float -> default
    assert (agrad.tensor([1, 2]) / agrad.tensor([2, 2])).dtype == agrad.float32
    assert agrad.exp(agrad.tensor([1, 2])).dtype == agrad.float32
    assert (agrad.tensor([True]) + 1).dtype == agrad.int64


def test_million_node_chain_has_no_recursion(engine_loop, recording):
    if engine_loop != recording:
        # each loop's walk and each recording's teardown meet a million-deep graph once (C with C, Python
        # with Python); a mixed pair would walk the same graph again, for a minute of the suite
        pytest.skip("the million-deep chain runs on the C build and on the Python build, not on mixed pairs")
    # a million deep on the C build, what `pip install` gives; 200,000 on the pure-Python one, which a
    # recursion anywhere (its limit is 1,000 frames, the C stack's some tens of thousands) overflows as surely
    depth = 1_000_000 if engine_loop == "native" else 200_000
    x = agrad.tensor(0.0, dtype=agrad.float64, requires_grad=True)
    y = x
    for _ in range(depth):
        y = y + 1.0
    y.backward()
    assert y.item() == float(depth) and x.grad.item() == 1.0
    del y       # tearing down a million-deep graph must not overflow the C stack either


def test_reentrant_backward_from_inside_a_node():
    """A checkpoint-style Function recomputes its forward inside backward and calls the
    engine again from there (PyTorch's re-entrant backward)."""
    class Checkpoint(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return agrad.tanh(x) * x          # recorded nowhere: forward runs under no_grad

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            with agrad.enable_grad():
                x_ = x.detach().requires_grad_()
                y = agrad.tanh(x_) * x_
            (gx,) = agrad.autograd.grad(y, x_, grad)
            return gx

    x = agrad.tensor([0.3, -0.7], dtype=agrad.float64, requires_grad=True)
    out = (Checkpoint.apply(x) * 2).sum()
    assert out.grad_fn.next_functions[0][0].next_functions[0][0].name() == "CheckpointBackward"
    out.backward()
    t = np.tanh([0.3, -0.7])
    np.testing.assert_allclose(x.grad.numpy(), 2 * ((1 - t ** 2) * np.array([0.3, -0.7]) + t), rtol=1e-12)


def test_concurrent_backward_from_several_threads():
    """Each thread's backward is its own GraphTask with its own ready queue; grad mode is
    per thread. Shared leaves accumulate every thread's gradient."""
    import threading
    w = agrad.tensor([1.0, 2.0], dtype=agrad.float64, requires_grad=True)
    errors = []

    def work(k):
        try:
            for _ in range(50):
                x = agrad.tensor([float(k), 1.0], dtype=agrad.float64)
                (g,) = agrad.autograd.grad((agrad.tanh(w * x) * x).sum(), w)
                t = np.tanh(np.array([1.0, 2.0]) * [k, 1.0])
                np.testing.assert_allclose(g.numpy(), (1 - t ** 2) * np.array([k, 1.0]) ** 2)
            with agrad.no_grad():              # must not switch grad mode off for the other threads
                (w * 2).sum()
            (w * k).sum().backward()
        except Exception as exc:              # noqa: BLE001 — reported below, from the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    np.testing.assert_allclose(w.grad.numpy(), [1 + 2 + 3 + 4] * 2)


def test_anomaly_mode_records_where_the_forward_op_ran():
    x = agrad.tensor([0.0, 1.0], requires_grad=True)
    with agrad.autograd.set_detect_anomaly(True):
        y = agrad.log(x)                                     # the line the report must name
        with pytest.raises(agrad.autograd.AnomalyError), pytest.warns(UserWarning) as caught:
            (y * 0 + y).sum().backward()
    # PyTorch's warning from the engine (python_anomaly_mode.cpp), not a note on the error
    detected = [str(w.message) for w in caught if str(w.message).startswith("Error detected in")]
    assert "Traceback of forward call that caused the error" in detected[0]
    assert "y = agrad.log(x)" in detected[0]
    plain = agrad.log(x)
    assert "traceback_" not in plain.grad_fn.metadata         # recorded only in anomaly mode


def test_graphs_hold_no_reference_cycles():
    """Reference counting alone frees a graph (why graph runs may pause the cyclic GC):
    a saved output does not hold its own Node, a leaf holds its accumulator weakly."""
    import gc

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            out = x * x
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            x, _ = ctx.saved_tensors
            return 2 * x * grad

    def build_and_run():
        x = agrad.tensor([0.5, -1.0], dtype=agrad.float64, requires_grad=True)
        h = agrad.tanh(x) * agrad.exp(x)            # tanh and exp save their outputs
        h.retain_grad()
        parts = agrad.split(Square.apply(h), 1)
        loss = (parts[0] + parts[1]).sum()
        loss.backward(retain_graph=True)
        (g,) = agrad.autograd.grad(loss, x)

    build_and_run()         # first: the ops' kernels and Node classes are generated (not the graph's garbage)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)      # what the collector finds is kept in gc.garbage, to be read
    try:
        build_and_run()
        gc.collect()
        # a cycle through the graph holds one of agrad's objects (a Node, tensor, saved variable, edge);
        # cycles of other objects made meanwhile by another thread (a dask cluster a test before left
        # winding down) are not the graph's
        held = [type(o).__qualname__ for o in gc.garbage if type(o).__module__.split(".")[0] == "agrad"]
        assert held == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_inplace_updates_outside_autograd_and_iteration():
    w = agrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (w * w).sum().backward()
    with agrad.no_grad():                       # an optimiser step
        w.sub_(w.grad, alpha=0.5)
        w.grad.zero_()
    np.testing.assert_allclose(w.detach().numpy(), [[0.0, 0.0], [0.0, 0.0]])
    assert w.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]] and w.requires_grad
    t = agrad.zeros(2, 3)
    t.copy_(agrad.tensor([1, 2, 3]))            # cast and broadcast, as torch's copy_
    assert t.tolist() == [[1.0, 2.0, 3.0]] * 2 and t.dtype == agrad.float32 and t._version == 1
    assert [row.tolist() for row in t] == [[1.0, 2.0, 3.0]] * 2
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(agrad.tensor(1.0))


def test_input_buffer_sums_in_place_only_into_a_gradient_nobody_else_holds():
    # x feeds three ops: the gradients arriving at its accumulator are summed in its InputBuffer,
    # in place into the first (fresh, held by the buffer alone): no `add` op runs in the backward
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 2.0 + x * 3.0 + x * 4.0).sum()
    with agrad.autograd.profiler.profile() as prof:
        loss.backward()
    assert [e.name for e in prof.events if e.phase == "forward" and e.name == "aten::add"] == []
    assert x.grad.tolist() == [9.0, 9.0]

    # a post hook keeps the gradients MulBackward0 returns: the first one to reach x's buffer is
    # then held elsewhere, so the sum is out of place and what the hook kept is unchanged
    kept = []
    x.grad = None
    a = x * 2.0
    a.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.append(grad_inputs))
    (a + x * 3.0).sum().backward()
    assert kept[0][0].tolist() == [2.0, 2.0]
    assert x.grad.tolist() == [5.0, 5.0]


def test_input_buffer_sum_is_differentiable_with_create_graph():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    (g,) = agrad.autograd.grad((y + y).sum(), x, create_graph=True)
    assert g.tolist() == [4.0, 8.0]
    (gg,) = agrad.autograd.grad(g.sum(), x)
    assert gg.tolist() == [4.0, 4.0]


# ---- final callbacks (Variable._execution_engine.queue_callback) ---------------------------------------

def test_queued_callbacks_run_once_the_pass_is_done_and_may_queue_more():
    from agrad.autograd import Function, Variable

    order = []

    def last():
        order.append("last")

    def first():
        order.append("first")
        Variable._execution_engine.queue_callback(last)

    class Mark(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            order.append("backward")
            Variable._execution_engine.queue_callback(first)
            return grad

    a = agrad.ones(2, requires_grad=True)
    Mark.apply(a).sum().backward()
    assert order == ["backward", "first", "last"] and a.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
        Variable._execution_engine.queue_callback(last)


def test_a_reentrant_pass_runs_its_own_callbacks_before_the_outer_ones():
    from agrad.autograd import Function, Variable

    order = []

    class Inner(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            Variable._execution_engine.queue_callback(lambda: order.append("inner"))
            return grad

    class Outer(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            Variable._execution_engine.queue_callback(lambda: order.append("outer"))
            with agrad.enable_grad():
                y = agrad.ones(1, requires_grad=True)
                Inner.apply(y).sum().backward()       # re-entrant
            order.append("after inner backward")
            return grad

    Outer.apply(agrad.ones(1, requires_grad=True)).sum().backward()
    assert order == ["inner", "after inner backward", "outer"]


# ---- GradientEdge: a Node's input in place of a tensor ----------------------------------------------

def test_grad_and_backward_take_gradient_edges_in_place_of_tensors():
    from agrad.autograd.graph import GradientEdge, get_gradient_edge

    for make in (lambda x: x, lambda x: x.clone(), lambda x: agrad.var_mean(x)[1]):
        x = agrad.rand(2, requires_grad=True)
        inp = make(x)
        out = inp.clone() * 3
        ref = agrad.autograd.grad(out.sum(), inp, retain_graph=True)
        (new,) = agrad.autograd.grad(out.sum(), get_gradient_edge(inp))
        assert new.tolist() == ref[0].tolist()
    x = agrad.rand(2, requires_grad=True).clone()
    y = agrad.rand(2, requires_grad=True)
    out = (x * y).sum()
    agrad.autograd.backward(out, inputs=(GradientEdge(x.grad_fn, x.output_nr), y), retain_graph=True)
    assert y.grad.tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(agrad.ones(2))


# ---- register_multi_grad_hook (test_autograd.py's cases) ---------------------------------------------

def test_a_multi_grad_hook_in_any_mode_runs_once_per_pass_on_the_first_gradient():
    from agrad.autograd.graph import register_multi_grad_hook

    order = []
    x = agrad.randn(2, 3, requires_grad=True)
    handles = []

    def block(inp, first_id):
        z = inp * 2
        out = agrad.sin(z), agrad.cos(z)
        z.register_hook(lambda g: order.append(first_id))
        handles.append(register_multi_grad_hook(out, lambda g: order.append(first_id + 1), mode="any"))
        return out

    y = block(x, 0)
    out = block(y[0] + y[1], 2)
    (out[0] + out[1]).sum().backward()
    assert order == [3, 2, 1, 0]
    order.clear()
    y = block(x, 0)
    out = block(y[0] + y[1], 2)
    for handle in handles[2:]:
        handle.remove()
    (out[0] + out[1]).sum().backward()
    assert order == [2, 0]
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got foo"):
        register_multi_grad_hook((x,), lambda g: None, mode="foo")


def test_a_multi_grad_hook_in_all_mode_gets_every_gradient_the_pass_reaches():
    from agrad.autograd.graph import register_multi_grad_hook

    t1, t2, t3 = (agrad.rand(2, requires_grad=True) for _ in range(3))
    got = []
    handle = register_multi_grad_hook((t1, t2, t3), lambda grads: got.append(grads))
    (t1 * 2 + t2 * 3).sum().backward()
    assert [g if g is None else g.tolist() for g in got[0]] == [[2.0, 2.0], [3.0, 3.0], None]
    with pytest.raises(RuntimeError, match="currently running autograd.grad"):     # as PyTorch
        agrad.autograd.grad((t1 * t3).sum(), (t3,))
    handle.remove()
    (t1 + t2 + t3).sum().backward()
    assert len(got) == 1


def test_with_warnings_made_errors_anomaly_mode_prints_where_the_forward_ran_to_stderr(capsys):
    import warnings

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        with warnings.catch_warnings(record=True) as caught:
            with agrad.autograd.detect_anomaly():
                warnings.simplefilter("error")
                a = agrad.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                agrad.autograd.grad(d2.sum(), a)
    assert len(caught) == 1 and "Anomaly Detection has been enabled" in str(caught[0].message)
    assert "Error detected in PowBackward0" in capsys.readouterr().err


def test_a_failed_backward_keeps_nothing_alive_until_a_gc_pass():
    import gc
    import weakref

    from agrad.autograd import Function

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("boom")

    class Held:
        pass

    gc.disable()
    try:
        y = Boom.apply(agrad.ones(2, requires_grad=True))
        held = Held()
        y.grad_fn.metadata["held"] = held
        ref = weakref.ref(held)
        del held
        try:
            y.sum().backward()
        except RuntimeError as exc:
            assert "boom" in str(exc)
        del y
        assert ref() is None        # no cycle through the error's traceback kept the graph
    finally:
        gc.enable()


def test_saved_tensor_hooks_left_open_in_a_backward_leave_no_count_behind():
    # the savers read one global count of open hook blocks before the thread's stack: a block entered
    # in a backward and never left ends with the backward, and so does its count
    from agrad.autograd.graph import saved_tensors_hooks
    from agrad.grad_mode import saved_hooks_in_use

    before = saved_hooks_in_use.count
    inner = saved_tensors_hooks(lambda t: t, lambda t: t)

    def unpack(t):
        inner.__enter__()
        return t

    with saved_tensors_hooks(lambda t: t, unpack):
        x = agrad.randn(3, requires_grad=True)
        x.sin().sum().backward()
        assert saved_hooks_in_use.count == before + 1
    assert saved_hooks_in_use.count == before
