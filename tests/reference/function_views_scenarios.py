"""Custom Functions on views, retain_grad through in-place ops, detach_ of saved tensors:
scenarios run by PyTorch and by agrad alike (issue 20, items 1, 2, 5, 6 and 11).

Each scenario is a function of `T` (the `torch` module or `agrad`) returning what it
observed: leaf and retained gradients, whether a Function's backward ran, grad_fn names,
versions, error types and messages, warnings, whether tensors outlived their last reference.
make_function_views_reference.py runs them with torch 2.13 and writes
function_views_scenarios.json; tests/engine/test_function_views.py runs them with agrad and
compares (it never imports torch). Only API both libraries share is used.

Where PyTorch rebuilds a view's grad_fn after an in-place change it makes an
AsStridedBackward0 (its view_fn path is for backends without as_strided); agrad replays the
view ops (the view_fn path), so a view's own grad_fn name is not recorded, only what it leads to.
"""
from __future__ import annotations

import gc
import re
import warnings
import weakref
from functools import partial

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def value(t):
    return None if t is None else t.detach().tolist()


def name(node):
    """A Node's name: PyTorch's C++ Nodes print with their namespace (torch::autograd::CopySlices)."""
    return None if node is None else node.name().split("::")[-1]


def outcome(fn):
    """What `fn()` did: its error (type and message) or 'ok', and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
            result = "ok"
        except Exception as exc:        # noqa: BLE001 - the type is part of what is compared
            # up to PyTorch's hint (which names the library's anomaly switch), the library's name removed
            message = str(exc).split("\n")[0].split(" Hint:")[0]
            result = [type(exc).__name__, re.sub(r"\b(torch|agrad)\.", "LIB.", message)]
    # PyTorch's C++ warnings end with where they were raised: "(Triggered internally at ...)"
    return {"result": result, "warnings": [str(w.message).split(" (Triggered internally at")[0]
                                           for w in caught if w.category is UserWarning]}


def _double_in_place(T, ran=None):
    """x.mul_(2) in forward, x marked dirty and returned; backward doubles (and says it ran)."""
    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            if ran is not None:
                ran.append(True)
            return g * 2
    return Double


def _add_into(T):
    """x.add_(w) in forward, x marked dirty: gradients g for x and 3 g for w."""
    class AddInto(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            x.add_(w)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g * 3
    return AddInto


# ---- 1. a custom Function that modifies a view input in place ---------------------------------

@scenario
def dirty_view_backward_from_the_output(T):
    """The Function's backward runs when the gradient comes through its output (the view)."""
    ran = []
    a = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    base = a * 1
    view = base[:2]
    out = _double_in_place(T, ran).apply(view)
    facts = {"same_object": out is view, "base_grad_fn": name(base.grad_fn),
             "out_grad_fn_next": [name(f) for f, _ in out.grad_fn.next_functions],
             "versions": [view._version, base._version], "values": value(base)}
    (out * T.tensor([1.0, 10.0], dtype=T.float64)).sum().backward()
    facts.update(backward_ran=len(ran), a_grad=value(a.grad))
    return facts


@scenario
def dirty_view_of_a_view(T):
    ran = []
    a = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64, requires_grad=True)
    base = a * 1
    view = base[1][1:]
    out = _double_in_place(T, ran).apply(view)
    (base * base).sum().backward(retain_graph=True)
    first = value(a.grad)
    a.grad = None
    (out * out).sum().backward()
    return {"base_grad_fn": name(base.grad_fn), "grad_through_base": first, "grad_through_out": value(a.grad),
            "backward_ran": len(ran)}


@scenario
def dirty_view_of_a_tensor_without_history(T):
    """The base needs no gradient, the other input does: both the output and the base get history."""
    w = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    base = T.zeros(3, dtype=T.float64)
    view = base[1:]
    out = _add_into(T).apply(view, w)
    facts = {"requires_grad": [out.requires_grad, out.grad_fn is not None, base.requires_grad],
             "base_grad_fn": name(base.grad_fn)}
    (out * out).sum().backward()
    facts["w_grad_through_out"] = value(w.grad)
    w.grad = None
    w2 = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    base2 = T.zeros(3, dtype=T.float64)
    _add_into(T).apply(base2[:2], w2)
    (base2 * T.tensor([1.0, 10.0, 100.0], dtype=T.float64)).sum().backward()
    facts["w_grad_through_base"] = value(w2.grad)
    return facts


@scenario
def dirty_view_used_before_the_function(T):
    a = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    base = a * 1
    view = base[:2]
    s = view * 3
    out = _double_in_place(T).apply(view)
    (s.sum() + (out * out).sum() + base.sum()).backward()
    return {"a_grad": value(a.grad)}


@scenario
def dirty_view_second_order(T):
    a = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    base = a * a
    out = _double_in_place(T).apply(base[1:])
    (g,) = T.autograd.grad((out * out).sum() + (base * base).sum(), a, create_graph=True)
    g.sum().backward()
    return {"first": value(g), "second": value(a.grad)}


@scenario
def dirty_view_with_another_input(T):
    a = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    w = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    base = a * 1
    out = _add_into(T).apply(base[1:], w)
    (out * T.tensor([5.0, 7.0], dtype=T.float64)).sum().backward()
    return {"base_grad_fn": name(base.grad_fn), "a_grad": value(a.grad), "w_grad": value(w.grad)}


@scenario
def dirty_and_saved_output_differentiated_twice(T):
    """The Function saves its dirty output (saved as an output: unpacked with the Function's node
    as grad_fn); a second-order backward reaches that node both through CopySlices and directly,
    so CopySlices must not free what the node saved when it is done with it."""
    class SquareInPlace(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(x)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * 2 * y.sqrt()
    facts = {}
    for view in (False, True):
        a = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
        base = a * 1
        SquareInPlace.apply(base[:2] if view else base)
        (g,) = T.autograd.grad((base * base).sum(), a, create_graph=True)
        facts[f"view={view}"] = [value(g), outcome(lambda: g.sum().backward()), value(a.grad)]
    return facts


@scenario
def view_of_a_saved_output_modified_after_the_output_is_gone(T):
    """exp saves its result; a view of it modified in place (by an op or by a Function marking it
    dirty) must fail the backward even when only the view kept the result alive."""
    def by_op(a):
        v = a.exp()[0]
        v.mul_(2)
        return v * 3

    def by_function(a):
        return _double_in_place(T).apply(a.exp()[0]) * 3
    facts = {}
    for label, f in (("op", by_op), ("function", by_function)):
        a = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
        out = f(a)
        facts[label] = [outcome(lambda: out.sum().backward()), value(a.grad)]
    return facts


# ---- 2. retain_grad() follows in-place ops ------------------------------------------------------

@scenario
def retain_grad_then_in_place(T):
    """PyTorch's test_retain_grad_inplace: .grad is the gradient of the newest version."""
    facts = {}
    a = T.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    facts["once"] = value(a.grad)
    a = T.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    facts["twice"] = value(a.grad)
    x = T.tensor([1.0], requires_grad=True).clone()
    x.retain_grad()
    x_view = x[:]
    x_view *= 2
    x *= 2
    x.sum().backward()
    facts["base_after_view_and_base"] = value(x.grad)
    # the base did not require grad before the in-place op: no hook to move
    z = T.zeros(4)
    y = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    z[:2].mul_(y[:2])
    z.retain_grad()
    (z * T.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    facts["base_without_history"] = [value(z.grad), value(y.grad)]
    # accumulated over two passes
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    b.retain_grad()
    b.mul_(3)
    s = (b * b).sum()
    s.backward(retain_graph=True)
    s.backward()
    facts["two_passes"] = value(b.grad)
    return facts


@scenario
def retain_grad_of_views_then_in_place(T):
    """PyTorch's test_retain_grad_inplace_over_view, and a view whose new grad_fn is not used."""
    base = T.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)
    (view + view2).sum().backward()
    facts = {"views": [value(view.grad), value(view2.grad)]}
    base = T.tensor([1.0, 2.0], requires_grad=True).clone()
    view = base[:1]
    view.retain_grad()
    base.retain_grad()
    view.mul_(3)
    (base * T.tensor([5.0, 7.0])).sum().backward()
    facts["through_the_base_only"] = [value(view.grad), value(base.grad)]
    return facts


@scenario
def retain_grad_of_multiple_outputs_then_in_place(T):
    """PyTorch's test_retains_grad_inplace_multiple_outputs (a custom Function and var_mean);
    then the second output modified: PyTorch moves the hook of the new output_nr (0)."""
    class DoubleMul(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3
    facts = {}
    for label, fn in (("function", DoubleMul.apply), ("var_mean", partial(T.var_mean, dim=0))):
        for which in (0, 1):
            b = T.tensor([[1.0, 2.0], [3.0, 5.0], [4.0, 9.0]], dtype=T.float64, requires_grad=True)
            outs = fn(b)
            outs[0].retain_grad()
            outs[1].retain_grad()
            outs[which].mul_(2)
            (outs[0] + outs[1] * 3).sum().backward()
            facts[f"{label}_{which}"] = [value(outs[0].grad), value(outs[1].grad), value(b.grad)]
    return facts


@scenario
def tensor_hooks_stay_with_their_version(T):
    """Unlike the retain_grad() hook, hooks from register_hook stay on the grad_fn they were
    registered on (PyTorch's test_tensor_hooks_inplace*): a guard for the hook moves above."""
    seen = []

    def hook(tag, factor=None):
        def fn(grad):
            seen.append([tag, value(grad)])
            return None if factor is None else grad * factor
        return fn
    facts = {}
    a = T.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(hook("before", 2))
    b.mul_(2)
    b.register_hook(hook("after", 2))
    b.sum().backward()
    facts["in_place"] = [seen[:], value(a.grad)]
    seen.clear()
    b = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    var, mean = T.var_mean(b, dim=0)
    var.register_hook(hook("var"))
    mean.register_hook(hook("mean"))
    var.mul_(2)
    var.register_hook(hook("var_after"))
    (var + mean * 3).sum().backward()
    facts["multiple_outputs"] = sorted(seen)
    seen.clear()
    base = T.tensor([1.0], requires_grad=True).clone()
    view, view2 = base[:], base[:]
    view.register_hook(hook("view"))
    view2.register_hook(hook("view2"))
    view.mul_(2)
    view2.grad_fn            # noqa: B018 - rebuilds view2's grad_fn, so the next hook goes there
    view2.register_hook(hook("view2_after"))
    (view + view2).sum().backward()
    facts["views"] = seen[:]
    return facts


@scenario
def retain_grad_then_dirty_in_a_function(T):
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    b.retain_grad()
    _double_in_place(T).apply(b)
    (b * T.tensor([3.0, 4.0])).sum().backward()
    facts = {"non_view": [value(b.grad), value(a.grad)]}
    a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    view = b[1:]
    view.retain_grad()
    b.retain_grad()
    _double_in_place(T).apply(view)
    (b * T.tensor([3.0, 4.0, 5.0])).sum().backward()
    facts["view"] = [value(view.grad), value(b.grad), value(a.grad)]
    return facts


# ---- 5. mark_dirty's errors, backward and vjp ----------------------------------------------------

@scenario
def mark_dirty_errors(T):
    class NotAnInput(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class ViewOfALocal(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v = x.clone()[:2]
            v.mul_(2)
            ctx.mark_dirty(v)
            return v

        @staticmethod
        def backward(ctx, g):
            return T.cat([g, g[:1]])
    Double = _double_in_place(T)
    leaf = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = leaf * 1
    with T.no_grad():
        no_grad_view = base[:2]
    facts = {
        "not_an_input": outcome(lambda: NotAnInput.apply(leaf)),
        "not_an_input_no_grad": outcome(lambda: NotAnInput.apply(T.tensor([1.0, 2.0]))),
        "view_of_a_local": outcome(lambda: ViewOfALocal.apply(leaf)),
        "split_with_sizes_output": outcome(lambda: Double.apply((leaf * 1).split_with_sizes([1, 2])[1])),
        "split_output": outcome(lambda: Double.apply((leaf * 1).split([1, 2])[1])),
        "unbind_output": outcome(lambda: Double.apply((leaf * 1).unbind(0)[1])),
        "view_of_a_leaf": outcome(lambda: Double.apply(leaf[:2])),
        "leaf": outcome(lambda: Double.apply(leaf)),
        "view_made_under_no_grad": outcome(lambda: Double.apply(no_grad_view)),
    }
    facts["leaf_unchanged"] = [value(leaf), leaf._version]
    return facts


@scenario
def backward_and_vjp(T):
    class Both(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    class VjpOnly(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    class Neither(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = Both.apply(x)
    facts = {"both_forward": name(y.grad_fn), "both_backward": outcome(lambda: y.sum().backward())}
    VjpOnly.apply(x).sum().backward()
    facts["vjp_only"] = value(x.grad)
    facts["neither"] = outcome(lambda: Neither.apply(x).sum().backward())
    return facts


# ---- 6. detach_() of a tensor saved for backward ------------------------------------------------

@scenario
def detach_in_place_of_a_saved_tensor(T):
    facts = {}

    def saved_input(op):
        a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
        b = a * 2
        c = op(b)
        b.detach_()
        return outcome(lambda: c.sum().backward()), value(a.grad), [b.requires_grad, b.is_leaf]
    facts["mul"] = saved_input(lambda b: b * b)
    facts["sin"] = saved_input(lambda b: b.sin())
    # an output saved by its own node (exp saves its result): PyTorch unpacks it with its node
    a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    c = (a * 2).exp()
    d = c * 1
    c.detach_()
    facts["saved_output"] = [outcome(lambda: d.sum().backward()), value(a.grad)]
    # a second backward after the detach
    a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    b = a * 2
    c = b * b
    c.sum().backward(retain_graph=True)
    b.detach_()
    facts["second_pass"] = [outcome(lambda: c.sum().backward()), value(a.grad)]
    # a leaf detached in place: its AccumulateGrad no longer writes .grad
    a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    c = a * a
    a.detach_()
    facts["leaf"] = [outcome(lambda: c.sum().backward()), value(a.grad)]

    # a custom Function's saved_tensors are unpacked with its node: allowed
    class Saves(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x
    a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    b = a * 2
    c = Saves.apply(b)
    b.detach_()
    facts["custom_function"] = [outcome(lambda: c.sum().backward()), value(a.grad)]
    return facts


# ---- 11. no reference cycle; a view output's grad_fn is the Function's -------------------------

@scenario
def dirty_and_saved_input_freed_by_reference_count(T):
    """A Function that marks its input dirty and saves it: once the caller's names are gone,
    the tensors are freed without the cycle collector (which is switched off here)."""
    class DoubleSave(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2

    def run(view, backward):
        a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = a * 1
        out = DoubleSave.apply(base[:2] if view else base)
        refs = [weakref.ref(base), weakref.ref(out)]
        if backward:
            out.sum().backward()
        return refs, value(a.grad)
    facts = {}
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for view in (False, True):
            for backward in (False, True):
                refs, grad = run(view, backward)
                facts[f"view={view},backward={backward}"] = [[r() is None for r in refs], grad]
    finally:
        if enabled:
            gc.enable()
    return facts


@scenario
def view_of_a_modified_local_has_the_function_as_grad_fn(T):
    """forward returns a view of a tensor it made and then modified in place: the view's grad_fn
    is the Function's node (set_gradient_edge), not rebuilt from that tensor's history."""
    def make(local):
        class ViewOfLocal(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return local(x)

            @staticmethod
            def backward(ctx, g):
                return T.cat([g, g[:1]]) * 5
        return ViewOfLocal

    def modified_under_no_grad(x):       # forward's own mode
        y = x.clone()
        v = y[:2]
        y.mul_(2)
        return v

    def modified_with_grad(x):
        with T.enable_grad():
            y = x.clone()
            v = y[:2]
            y.mul_(2)
        return v

    def local_requiring_grad(x):
        y = x.detach().clone().requires_grad_()
        v = y[:2]
        with T.no_grad():
            y.mul_(2)
        return v
    facts = {}
    for label, local in (("no_grad", modified_under_no_grad), ("enable_grad", modified_with_grad),
                         ("requires_grad_local", local_requiring_grad)):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = make(local).apply(x)
        facts[label] = [name(out.grad_fn), out.requires_grad, out._base is not None]
        out.sum().backward()
        facts[label].append(value(x.grad))
    return facts
