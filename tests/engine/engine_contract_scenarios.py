"""The engine's contract as scenarios that run on PyTorch and on agrad alike.

Each scenario takes the library module `T` (torch, or agrad) and returns what can be
observed of it, as plain JSON values: gradients, the order hooks and backward
functions ran in, exception types and messages. `tests/reference/make_engine_reference.py`
runs them on torch 2.13.0 and writes `tests/reference/engine/contract.json`;
`test_engine_contract.py` runs them on agrad and compares (never importing torch).
Messages are normalised only where the library's own name or its shape type appear.
"""
from __future__ import annotations

import sys
import warnings

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _error(call, shapes=()) -> list | None:
    """[type name, message] of what `call()` raises, or None. The library's name reads LIB,
    and the str() of each of `shapes` reads <shape [...]>."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
        msg = str(exc).split("\n")[0]
        for shape in shapes:
            msg = msg.replace(str(shape), f"<shape {list(shape)}>")
        return [type(exc).__name__, msg.replace("torch", "LIB").replace("agrad", "LIB")]
    return None


def _name(fn) -> str | None:
    if fn is None:
        return None
    kind = type(fn).__name__
    return kind if kind in ("Error", "AccumulateGrad", "CopySlices") else fn.name()


def _vals(ts) -> list:
    return [None if t is None else t.detach().tolist() for t in ts]


# -- re-entrant backward -------------------------------------------------------------
def _deep_reentrant(T, on_backward=None, fail_at_bottom=False):
    """PyTorch's DeepReentrant: its backward runs backward on a fresh graph one step shorter."""
    class DeepReentrant(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with T.enable_grad():
                ctx.x = x.detach().requires_grad_()
                ctx.x = ctx.x - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, grad):
            if on_backward is not None:
                on_backward()
            if ctx.x.to("cpu") < 0:
                if fail_at_bottom:
                    raise ValueError("boom at the bottom")
                return grad
            with T.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return grad
    return DeepReentrant


@scenario
def reentrant_2000_levels(T):
    """PyTorch's test_deep_reentrant: each backward calls backward again, 2,000 deep, twice."""
    fn = _deep_reentrant(T)
    v = T.tensor(2000.0, requires_grad=True)
    fn.apply(v).sum().backward()
    v2 = T.tensor(200.0, requires_grad=True)
    fn.apply(v2).sum().backward()         # the pool's threads are reused
    return {"grads": _vals([v.grad, v2.grad])}


@scenario
def reentrant_from_a_deep_python_stack(T):
    def recurse(n):
        if n:
            return recurse(n - 1)
        v = T.tensor(300.0, requires_grad=True)
        _deep_reentrant(T).apply(v).sum().backward()
        return v.grad.tolist()
    return {"grad": recurse(sys.getrecursionlimit() * 2 // 5)}


@scenario
def reentrant_error_reaches_the_first_caller(T):
    v = T.tensor(150.0, requires_grad=True)
    return {"error": _error(lambda: _deep_reentrant(T, fail_at_bottom=True).apply(v).sum().backward())}


@scenario
def reentrant_priority(T):
    """PyTorch's test_reentrant_priority: the nested backwards all run before MyFunction's."""
    order = []

    class MyFunction(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            order.append("MyFunction")
            return x

    a = MyFunction.apply(T.tensor(6.0, requires_grad=True))
    b = _deep_reentrant(T, on_backward=lambda: order.append("Reentrant")).apply(T.tensor(9.0, requires_grad=True))
    (a * b).backward()
    return {"order": order}


# -- autograd.grad runs only what leads to the inputs ---------------------------------
def _recording_function(T, calls, tag):
    class Recorded(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            calls.append(tag)
            return grad * 2
    return Recorded


@scenario
def grad_skips_backwards_that_lead_nowhere(T):
    calls = []
    x = T.tensor([1.0, 2.0], requires_grad=True)
    w = T.tensor([3.0, 4.0], requires_grad=True)
    unused = T.tensor(1.0, requires_grad=True)
    side = _recording_function(T, calls, "side").apply(x)
    out = (side * w).sum() + (_recording_function(T, calls, "root_side").apply(w)).sum()
    gw, gu = T.autograd.grad(out, [w, unused], allow_unused=True, retain_graph=True)
    first = list(calls)
    # the root itself leads to none of the inputs: its backward is not run either
    root = _recording_function(T, calls, "root").apply(x)
    (g_root,) = T.autograd.grad(root, [w], T.ones(2), allow_unused=True)
    after_root = list(calls)
    # several roots (a GraphRoot): only the branch that leads to w runs
    calls.clear()
    r1 = _recording_function(T, calls, "r1").apply(x)
    r2 = _recording_function(T, calls, "r2").apply(w)
    (g_multi,) = T.autograd.grad([r1, r2], [w], [T.ones(2), T.ones(2)], allow_unused=True)
    return {"first": first, "after_root": after_root, "grads": _vals([gw, gu, g_root, g_multi]), "multi_calls": calls}


# -- Function's contract -----------------------------------------------------------
@scenario
def mark_non_differentiable_keeps_a_gradient_slot_per_output(T):
    seen = {}

    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            seen["needs_input_grad_forward"] = list(ctx.needs_input_grad)
            a, b, c = x * 2, x * 3, (x > 1).long()
            ctx.mark_non_differentiable(b)
            return a, b, c, k, None

        @staticmethod
        def backward(ctx, ga, gb, gc, gk, gn):
            seen["grads"] = _vals([ga, gb, gc, gk, gn])
            seen["needs_input_grad_backward"] = list(ctx.needs_input_grad)
            return ga * 5, None

    x = T.tensor([1.0, 2.0], requires_grad=True)
    a, b, c, k, n = F.apply(x, 3)
    facts = {"requires_grad": [a.requires_grad, b.requires_grad, c.requires_grad], "k": k, "n": n,
             "b_grad_fn": _name(b.grad_fn)}
    a.sum().backward()
    facts.update(seen, x_grad=x.grad.tolist())
    with T.no_grad():
        F.apply(x, 3)
    facts["needs_input_grad_no_grad"] = seen["needs_input_grad_forward"]
    return facts


@scenario
def all_outputs_non_differentiable(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g

    class Int(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return (x * 2).long()

        @staticmethod
        def backward(ctx, g):
            return g
    x = T.tensor([1.0, 2.0], requires_grad=True)
    o, i = F.apply(x), Int.apply(x)
    return {"out": [o.requires_grad, _name(o.grad_fn)], "int": [i.requires_grad, _name(i.grad_fn)]}


@scenario
def materialize_grads(T):
    seen = []

    def make(materialize, non_diff):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if not materialize:
                    ctx.set_materialize_grads(False)
                if not non_diff:
                    ctx._materialize_non_diff_grads = False
                a, b, c = x * 2, x * 3, x * 4
                ctx.mark_non_differentiable(c)
                return a, b, c

            @staticmethod
            def backward(ctx, ga, gb, gc):
                seen.append(_vals([ga, gb, gc]))
                return ga if ga is not None else gb
        return F
    x = T.tensor([1.0, 2.0], requires_grad=True)
    for materialize, non_diff in [(True, True), (False, True), (True, False)]:
        make(materialize, non_diff).apply(x)[0].sum().backward()
    return {"grads_seen": seen}


def _double_in_place(T, result=lambda x: x):
    """A Function that doubles its input in place, marks it dirty and returns `result(input)`."""
    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return result(x)

        @staticmethod
        def backward(ctx, g, *more):
            return g * 2
    return Double


@scenario
def mark_dirty(T):
    Double = _double_in_place(T)
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    v0 = y._version
    z = Double.apply(y)
    facts = {"same_object": z is y, "version_step": y._version - v0, "grad_fn": _name(y.grad_fn),
             "next": [_name(f) for f, _ in y.grad_fn.next_functions], "value": y.tolist()}
    (z * z).sum().backward()
    facts["x_grad"] = x.grad.tolist()
    facts["leaf_error"] = _error(lambda: Double.apply(x))
    with T.no_grad():
        z = Double.apply(x)
        facts["no_grad_leaf"] = [z is x, x._version, z.requires_grad]
    plain = T.tensor([1.0, 2.0])
    z = Double.apply(plain)
    facts["plain"] = [z is plain, plain._version, z.requires_grad]

    forgot = _double_in_place(T, lambda x: x * 1)
    facts["not_returned"] = _error(lambda: forgot.apply(x * 1))

    class AddInto(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            x.add_(w)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g * 3
    w = T.tensor([1.0, 2.0], requires_grad=True)
    buf = T.tensor([0.5, 0.5])
    out = AddInto.apply(buf, w)
    out.sum().backward()
    facts["into_plain_tensor"] = [out is buf, buf.requires_grad, _name(buf.grad_fn), w.grad.tolist()]
    return facts


@scenario
def mark_dirty_on_a_view(T):
    """The base's history is rebased (CopySlices); a view may only be modified by a single-output Function."""
    Double = _double_in_place(T)
    Two = _double_in_place(T, lambda x: (x, x * 1))
    leaf = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = leaf * 1
    view = base[:2]
    out = Double.apply(view)
    facts = {"same_object": out is view, "base_grad_fn": _name(base.grad_fn), "values": base.tolist(),
             "versions": [view._version, base._version]}
    (base * T.tensor([1.0, 10.0, 100.0])).sum().backward()
    facts["leaf_grad"] = leaf.grad.tolist()
    err = _error(lambda: Two.apply((leaf * 1)[:2]))
    facts["two_outputs"] = [err[0], err[1][:80]]
    return facts


@scenario
def function_argument_errors(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    facts = {}
    for method in ["mark_dirty", "mark_non_differentiable", "save_for_backward"]:
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                getattr(ctx, method)(x, 3)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g
        err = _error(lambda: F.apply(x))
        facts[method] = [err[0], err[1].split(", but")[0]]
    return facts


@scenario
def backward_return_values(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)

    def run(result):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return result(g)
        return _error(lambda: F.apply(x, 2.0).sum().backward())
    facts = {
        "extra_nones": run(lambda g: (g, None, None, None)),
        "grad_for_a_number": run(lambda g: (g, g)),
        "too_few": run(lambda g: g),
        "too_many": run(lambda g: (g, None, g)),
        "not_a_tensor": run(lambda g: (3, None)),
        "a_list": run(lambda g: [g, None]),
    }
    facts["x_grad"] = x.grad.tolist()
    return facts


@scenario
def setup_context_style(T):
    class Scale(T.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k + x * 0, None
    x = T.tensor([1.0, 2.0], requires_grad=True)
    Scale.apply(x, 3.0).sum().backward()
    return {"grad": x.grad.tolist()}


@scenario
def returning_an_input(T):
    class Same(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = T.tensor([1.0, 2.0], requires_grad=True)
    out = Same.apply(x)
    facts = {"requires_grad": [out is x, _name(out.grad_fn), x.is_leaf]}
    out.sum().backward()
    facts["grad"] = x.grad.tolist()
    plain = T.ones(2)
    facts["plain"] = Same.apply(plain) is plain
    with T.no_grad():
        facts["no_grad"] = Same.apply(x) is x
    return facts


def _once_differentiable_function(T, seen):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.k = k
            ctx.save_for_backward(a, b)
            return a + k * b + a * b

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            seen.append(T.is_grad_enabled())
            a, b = ctx.saved_tensors
            return g + g * b, None, g * ctx.k + g * a
    return F


@scenario
def once_differentiable(T):
    """PyTorch's test_once_differentiable, and what differentiating again raises."""
    seen = []
    F = _once_differentiable_function(T, seen)
    x = T.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    y = T.tensor([[1.5, 1.0], [-2.0, 0.75]], requires_grad=True)
    go = T.ones((), requires_grad=True)
    F.apply(x, 2, y).sum().backward(go, create_graph=True)
    err = x.grad.grad_fn
    while err is not None and type(err).__name__ != "Error":
        err = next((f for f, _ in err.next_functions if f is not None), None)
    facts = {"grad_mode_inside": seen, "x_grad": x.grad.tolist(), "requires_grad": x.grad.requires_grad,
             "error_node": _name(err), "error_node_next": [_name(f) for f, _ in err.next_functions]}
    facts["again"] = _error(lambda: x.grad.sum().backward())
    # grad outputs that do not require grad: nothing to differentiate, no grad_fn
    (g,) = T.autograd.grad(F.apply(x, 2, y).sum(), x, create_graph=True)
    facts["plain_grad_output"] = [g.requires_grad, _name(g.grad_fn)]
    return facts


# -- materialize_grads -----------------------------------------------------------------
@scenario
def grad_materialize_grads(T):
    x = T.tensor(0.5, requires_grad=True)
    a = T.tensor(1.0, requires_grad=True)
    (dx,) = T.autograd.grad(x * a, x, create_graph=True)
    (none,) = T.autograd.grad(dx, x, allow_unused=True, retain_graph=True)
    (zero,) = T.autograd.grad(dx, x, materialize_grads=True, retain_graph=True)
    (zero_cg,) = T.autograd.grad(dx, x, materialize_grads=True, create_graph=True)
    (again,) = T.autograd.grad(zero_cg * 3, zero_cg)
    return {"none": none, "zero": [zero.tolist(), zero.requires_grad],
            "zero_create_graph": [zero_cg.tolist(), zero_cg.requires_grad, zero_cg.is_leaf],
            "grad_of_zero": again.tolist(),
            "allow_unused_false": _error(lambda: T.autograd.grad(dx, x, allow_unused=False, materialize_grads=True))}


# -- grad-mode helpers -----------------------------------------------------------------
@scenario
def grad_mode_decorators(T):
    def probe():
        return T.is_grad_enabled()
    facts = {}
    for name in ["no_grad", "enable_grad"]:
        mode = getattr(T, name)
        bare, called = mode(probe), mode()(probe)
        with T.set_grad_enabled(name == "no_grad"):
            facts[name] = [bare(), called(), bare.__name__, T.is_grad_enabled()]
    for mode in [True, False]:
        deco = T.set_grad_enabled(mode)(probe)
        with T.set_grad_enabled(not mode):
            facts[f"set_grad_enabled_{mode}"] = [deco(), T.is_grad_enabled()]
    r = T.set_grad_enabled(False)
    facts["as_call"] = [T.is_grad_enabled(), repr(r).replace("torch", "LIB").replace("agrad", "LIB")]
    T.set_grad_enabled(True)
    facts["bad_mode"] = _error(lambda: T.set_grad_enabled(3))
    facts["bare_set_grad_enabled"] = _error(lambda: T.set_grad_enabled(probe))

    def inference():
        return [T.is_grad_enabled(), T.is_inference_mode_enabled()]
    facts["inference_mode"] = [T.inference_mode(inference)(), T.inference_mode()(inference)(),
                               T.inference_mode(False)(inference)()]
    with T.no_grad():
        with T.inference_mode(False):
            facts["inference_mode_false_inside_no_grad"] = inference()
    with T.inference_mode():
        facts["inside_inference_mode"] = [inference(), (T.ones(2, requires_grad=True) * 2).requires_grad]
    try:
        with T.no_grad():
            raise KeyError("x")
    except KeyError:
        facts["restored_after_exception"] = T.is_grad_enabled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @T.no_grad()
        class Decorated:
            def __init__(self):
                self.mode = T.is_grad_enabled()
        facts["class"] = [Decorated().mode, [w.category.__name__ for w in caught]]
    return facts


@scenario
def grad_mode_generators(T):
    def make(mode):
        @mode
        def gen():
            got = yield T.is_grad_enabled()
            try:
                yield [got, T.is_grad_enabled()]
            except KeyError:
                yield ["thrown", T.is_grad_enabled()]
            finally:
                log.append(["finally", T.is_grad_enabled()])
            return "done"
        return gen
    log = []
    facts = {}
    modes = {"no_grad": lambda: T.no_grad, "no_grad()": lambda: T.no_grad(), "enable_grad": lambda: T.enable_grad,
             "set_grad_enabled(False)": lambda: T.set_grad_enabled(False)}
    for name, mode in modes.items():
        gen = make(mode())
        T.set_grad_enabled(name != "enable_grad")
        steps = []
        it = gen()
        steps += [next(it), T.is_grad_enabled(), it.send("sent"), T.is_grad_enabled(), it.throw(KeyError("k"))]
        try:
            next(it)
        except StopIteration as stop:
            steps.append(stop.value)
        it2 = gen()
        next(it2)
        it2.close()
        steps.append(list(log))
        log.clear()
        facts[name] = steps
    T.set_grad_enabled(True)
    return facts


# -- hooks -----------------------------------------------------------------------------
@scenario
def hooks_removed_while_hooks_run(T):
    calls, handles = [], {}

    def hook(tag, remove=None):
        def h(*args):
            calls.append(tag)
            if remove:
                handles[remove].remove()
        return h
    facts = {}
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    handles["self"] = y.register_hook(hook("h1", "self"))
    y.register_hook(hook("h2"))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    facts["tensor_remove_self"], calls[:] = list(calls), []

    y = x * 2
    y.register_hook(hook("r1", "r2"))
    handles["r2"] = y.register_hook(hook("r2"))
    y.register_hook(hook("r3"))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    facts["tensor_remove_other"], calls[:] = list(calls), []

    leaf = T.tensor([1.0, 2.0], requires_grad=True)
    handles["l1"] = leaf.register_hook(hook("l1", "l1"))
    leaf.register_hook(hook("l2", "l3"))
    handles["l3"] = leaf.register_hook(hook("l3"))
    leaf.register_hook(hook("l4"))
    (leaf * 2).sum().backward()
    (leaf * 2).sum().backward()
    facts["leaf"], calls[:] = list(calls), []

    y = x * 2
    fn = y.grad_fn
    handles["q1"] = fn.register_prehook(hook("q1", "q1"))
    fn.register_prehook(hook("q2", "q3"))
    handles["q3"] = fn.register_prehook(hook("q3"))
    fn.register_prehook(hook("q4"))
    handles["p1"] = fn.register_hook(hook("p1", "p1"))
    fn.register_hook(hook("p2", "p3"))
    handles["p3"] = fn.register_hook(hook("p3"))
    fn.register_hook(hook("p4"))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    facts["node"], calls[:] = list(calls), []

    y = x * 2

    def adder(grad):
        calls.append("adder")
        y.register_hook(hook("added"))
    y.register_hook(adder)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    facts["added_while_running"] = calls
    return facts


@scenario
def post_accumulate_grad_hooks(T):
    calls, handles = [], {}
    x = T.tensor([1.0, 2.0], requires_grad=True)

    def a1(t):
        calls.append(["a1", t.grad.tolist(), t is x])
        handles["a1"].remove()

    def a2(t):
        calls.append(["a2", t.grad.tolist()])
    handles["a1"] = x.register_post_accumulate_grad_hook(a1)
    x.register_post_accumulate_grad_hook(a2)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    facts = {"backward": list(calls)}
    calls.clear()
    T.autograd.grad((x * 3).sum(), x)
    facts["grad"] = list(calls)
    (x * 3).sum().backward(inputs=[x])
    facts["backward_inputs"] = list(calls)
    facts["non_leaf"] = _error(lambda: (x * 2).register_post_accumulate_grad_hook(a2))
    facts["no_grad"] = _error(lambda: T.ones(2).register_post_accumulate_grad_hook(a2))
    return facts


@scenario
def accumulate_grads_that_tie_run_in_queue_order(T):
    """Every AccumulateGrad has one sequence_nr (UINT64_MAX): the order leaves' hooks run in when
    several are ready together is the ready queue's. Two that tie run in the order they were queued,
    whether the Node that made them ready had one edge to each or they were made ready by two Nodes."""
    facts = {}

    def leaves(*values):
        ts = [T.tensor(v, requires_grad=True) for v in values]
        log = []
        for name, t in zip("abcd", ts):
            t.register_hook(lambda g, name=name: log.append(name))
        return ts, log
    (a, b), log = leaves(1.0, 2.0)
    (a * (a + b)).backward()                  # examples/seed.yaml
    facts["seed"] = list(log)
    (a, b), log = leaves(1.0, 2.0)
    (a * b).backward()
    facts["product"] = list(log)
    (a, b), log = leaves(1.0, 2.0)
    (a + b).backward()
    facts["sum"] = list(log)
    (a, b), log = leaves([1.0, 2.0], [3.0, 4.0])
    (T.tanh(a) * b).sum().backward()
    facts["tanh_times"] = list(log)
    (a, b), log = leaves([1.0, 2.0], [3.0, 4.0])
    (a * 2 + b * 3).sum().backward()
    facts["two_branches"] = list(log)
    facts["random_dags"] = [_leaf_hook_order(T, seed) for seed in range(60)]
    return facts


def _leaf_hook_order(T, seed: int) -> list[int]:
    """The order the leaves' hooks run in, in a random DAG of elementwise ops over 2-6 leaves, every
    node feeding the loss (Python's random, seeded: the same graph on either library)."""
    import random

    rng = random.Random(seed)
    n_leaves = rng.randint(2, 6)
    xs = [T.tensor([rng.uniform(-1, 1) for _ in range(3)], dtype=T.float64, requires_grad=True)
          for _ in range(n_leaves)]
    log = []
    for i, x in enumerate(xs):
        x.register_hook(lambda g, i=i: log.append(i))
    nodes = list(xs)
    for _ in range(rng.randint(1, 12)):
        op = rng.choice(["add", "mul", "sub", "tanh", "exp"])
        a, b = nodes[rng.randrange(len(nodes))], nodes[rng.randrange(len(nodes))]
        nodes.append(getattr(T, op)(a, b) if op in ("add", "mul", "sub") else getattr(T, op)(a))
    loss = nodes[n_leaves].sum()
    for node in nodes[n_leaves + 1:]:
        loss = loss + node.sum()
    loss.backward()
    return log


@scenario
def hook_ordering(T):
    """PyTorch's test_prehook_ordering, test_post_accumulate_grad_hook_ordering,
    test_hook_edge_case_when_called_with_grad and test_accumulate_grad_posthooks_should_not_execute."""
    facts = {}
    log = []

    def hook1(g):
        log.append(1)
        return g * 3

    def hook2(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)
    a = T.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(hook2)
    b.register_hook(hook1)
    b.grad_fn.register_prehook(hook2)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(hook1)
    acc.register_prehook(hook2)
    a.register_hook(hook1)
    b.sum().backward(retain_graph=True)
    facts["backward"], log[:] = list(log), []
    T.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
    facts["grad"], log[:] = list(log), []
    b.sum().backward(inputs=(b,))
    facts["backward_inputs"] = [list(log), b.grad.item()]

    tensor = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    acc_grad = (tensor * 1).grad_fn.next_functions[0][0]
    tensor.register_hook(lambda grad: grad.sub(2.0))
    acc_grad.register_prehook(lambda grad_out: (grad_out[0].div(5.0),))

    def post_acc_grad_hook(t):
        t.grad.add_(0.5)

    def acc_grad_node_post_hook(grad_in, grad_out):
        tensor.grad = grad_out[0].mul(10)
    tensor.register_post_accumulate_grad_hook(post_acc_grad_hook)
    acc_grad.register_hook(acc_grad_node_post_hook)
    tensor.sum().backward()
    facts["post_accumulate_order"] = tensor.grad.tolist()

    counts = {"tensor": 0, "pre": 0, "post": 0}

    def count(kind):
        def hook(*args):
            counts[kind] += 1
        return hook
    a = T.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    a.register_hook(count("tensor"))
    b.register_hook(count("tensor"))
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(count("post"))
    acc.register_prehook(count("pre"))
    b.grad_fn.register_hook(count("post"))
    b.grad_fn.register_prehook(count("pre"))
    runs = []
    for run in [lambda: T.autograd.grad(c, inputs=(b), retain_graph=True),
                lambda: T.autograd.grad(c, inputs=(a, b), retain_graph=True),
                lambda: c.backward(retain_graph=True), lambda: c.backward(inputs=(a, b), retain_graph=True)]:
        run()
        runs.append(dict(counts))
        counts.update(tensor=0, pre=0, post=0)
    facts["grad_runs_tensor_hooks_of_captured_nodes"] = runs

    def raises(*args):
        raise KeyError("must not run")
    a = T.tensor(1.0, requires_grad=True)
    a.register_hook(raises)
    b = T.tensor(1.0, requires_grad=True)
    c = a.clone()
    c.grad_fn.next_functions[0][0].register_hook(raises)
    (a + b + c).sum().backward(inputs=[b])
    facts["unneeded_accumulator_hooks"] = [a.grad, b.grad.item()]

    def bad(t):
        return t.grad
    t = T.tensor([1.0, 2.0], requires_grad=True)
    t.register_post_accumulate_grad_hook(bad)
    facts["post_accumulate_returns_a_tensor"] = _error(lambda: t.sum().backward())
    t = T.tensor([1.0, 2.0], requires_grad=True)
    t.register_post_accumulate_grad_hook(lambda x: x)
    t.sum().backward()
    t2 = T.tensor([1.0, 2.0], requires_grad=True)
    t2.register_post_accumulate_grad_hook(lambda x: 3)
    facts["post_accumulate_returns_itself_or_a_number"] = [t.grad.tolist(), _error(lambda: t2.sum().backward())]
    return facts


@scenario
def what_hooks_may_return(T):
    def run(register, result):
        x = T.ones(2, requires_grad=True)
        y = x * 2

        def named_hook(*args):
            return result(*args)
        register(x, y, named_hook)
        return _error(lambda: y.sum().backward())

    def on_tensor(x, y, h):
        y.register_hook(h)

    def on_leaf(x, y, h):
        x.register_hook(h)

    def pre(x, y, h):
        y.grad_fn.register_prehook(h)

    def post(x, y, h):
        y.grad_fn.register_hook(h)
    return {
        "size": run(on_tensor, lambda g: T.ones(3)),
        "leaf_size": run(on_leaf, lambda g: T.ones(3)),
        "dtype": run(on_tensor, lambda g: g.double()),
        "not_a_tensor": run(on_tensor, lambda g: 3),
        "pre_count": run(pre, lambda go: (go[0], go[0])),
        "pre_not_a_tuple": run(pre, lambda go: [go[0]]),
        "pre_size": run(pre, lambda go: (T.ones(3),)),
        "post_not_a_tuple": run(post, lambda gi, go: 3),
        "lambda_name": _error(lambda: _lambda_hook(T)),
    }


def _lambda_hook(T):
    x = T.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: T.ones(3))
    y.sum().backward()


@scenario
def calling_a_node(T):
    x = T.tensor([1.0, 3.0], requires_grad=True)
    y = x * x
    one = T.tanh(x)
    return {"too_many": _error(lambda: y.grad_fn(x.detach(), x.detach())), "too_few": _error(lambda: y.grad_fn()),
            "two_outputs": _vals(y.grad_fn(T.ones(2))), "one_output": _vals([one.grad_fn(T.ones(2))])}


@scenario
def assigning_grad(T):
    x = T.ones(2, requires_grad=True)

    def assign(value):
        def run():
            x.grad = value
        return _error(run)
    ok = T.full((2,), 3.0)
    assign(ok)
    return {"dtype": assign(T.ones(2, dtype=T.float64)), "int": assign(T.ones(2, dtype=T.int64)),
            "size": assign(T.ones(3)), "size_2d": assign(T.ones(1, 2)), "device": assign(T.ones(2, device="meta")),
            "not_a_tensor": assign(3), "kept": x.grad.tolist(), "none": [assign(None), x.grad]}


# -- messages and exception types ------------------------------------------------------
@scenario
def shape_messages(T):
    def wrong(shape):
        class Wrong(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return T.ones(shape)
        return Wrong
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    m = T.ones(2, 3, requires_grad=True)
    s = T.tensor(1.0, requires_grad=True)
    g3 = T.ones(3)
    g1 = T.ones(1)
    y = x * 2
    ys = (s * 2)
    return {
        "validate_outputs": _error(lambda: wrong((2,)).apply(x).sum().backward()),
        "validate_outputs_0d": _error(lambda: wrong(()).apply(x).sum().backward()),
        "validate_outputs_2d": _error(lambda: wrong((3, 2)).apply(m).sum().backward()),
        "validate_outputs_expandable": _vals(T.autograd.grad(wrong((4, 2, 3)).apply(m).sum(), m)),
        "grad_output": _error(lambda: T.autograd.grad(y, x, g1), [g1.shape, y.shape]),
        "grad_output_0d": _error(lambda: ys.backward(g3), [g3.shape, ys.shape]),
        "unused": _error(lambda: T.autograd.grad((x * 2).sum(), [x, s])),
        "counts": _error(lambda: T.autograd.grad([(x * 2).sum(), (x * 3).sum()], [x], [T.tensor(1.0)])),
        "extra_grad_outputs": _vals(T.autograd.grad([(x * 2).sum()], [x], [T.tensor(1.0), T.tensor(1.0)])),
        "backward_counts": _error(lambda: T.autograd.backward([(x * 2).sum(), (x * 3).sum()], [T.tensor(1.0)])),
        "grad_no_inputs": _error(lambda: T.autograd.grad((x * 2).sum(), [])),
        "backward_no_inputs": _error(lambda: (x * 2).sum().backward(inputs=[])),
        "grad_output_device": _error(lambda: T.autograd.grad(x * 2, x, T.ones(3, device="meta"))),
        "grad_output_dtype": str(T.autograd.grad(x * 2, x, T.ones(3, dtype=T.float64))[0].dtype)[-7:],
    }


@scenario
def exception_types(T):
    ints = T.tensor([1, 2, 3])
    return {
        "int_pow_negative_scalar": _error(lambda: ints ** -2),
        "int_pow_negative_tensor": (ints ** T.tensor([-1, -2, 2])).tolist(),
        "int_pow_negative_0d_tensor": (T.tensor([1, -1, 2, -3]) ** T.tensor(-3)).tolist(),
        "number_pow_int_tensor": (2 ** T.tensor([-1, 0, 3])).tolist(),
        "int_pow_negative_float": (ints ** -2.0).tolist(),
    }


@scenario
def function_misuse(T):
    class NoBackward(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=2.0):
            return x * scale

    class NoForward(T.autograd.Function):
        @staticmethod
        def backward(ctx, g):
            return g

    class Legacy(T.autograd.Function):
        def forward(self, x):
            return x

        def backward(self, g):
            return g
    x = T.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        legacy = _error(lambda: Legacy()(x))
    return {"no_backward": _error(lambda: NoBackward.apply(x).sum().backward()),
            "no_forward": _error(lambda: NoForward.apply(x)),
            "legacy": [legacy, [w.category.__name__ for w in caught]],
            "keyword": NoBackward.apply(x, scale=3.0).tolist(),
            "unknown_keyword": _error(lambda: NoBackward.apply(x, shift=1.0))[0]}
