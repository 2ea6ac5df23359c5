"""Forward-mode AD scenarios run by PyTorch and by agrad alike: each is a function of `T` (the
`torch` module or `agrad`) and `F` (its `autograd.forward_ad`) returning what it observed.
make_forward_ad.py runs them with torch 2.13 and writes forward_ad.json; tests/engine/
test_forward_ad.py runs them with agrad and compares (it never imports torch)."""
from __future__ import annotations

import numpy as np

PRIMAL = [0.25, -0.5, 1.5]
TANGENT = [1.0, 2.0, -1.0]


def _message(fn):
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        return [type(e).__name__, str(e)]
    return None


def _values(t):
    return None if t is None else np.asarray(t.detach().numpy()).tolist()


def errors(T, F):
    x, t = T.rand(3, dtype=T.float64), T.ones(3, dtype=T.float64)
    got = {"outside_level": _message(lambda: F.make_dual(x, t))}
    with F.dual_level():
        got["nested"] = _message(F.enter_dual_level)
        got["shape"] = _message(lambda: F.make_dual(x, T.ones(4, dtype=T.float64)))
        got["int_tangent"] = _message(lambda: F.make_dual(x, T.ones(3, dtype=T.int64)))
        got["int_primal"] = _message(lambda: F.make_dual(T.ones(3, dtype=T.int64), t))
        got["bad_level"] = _message(lambda: F.make_dual(x, t, level=1))
        dual = F.make_dual(x, t)
        got["dual_of_dual"] = _message(lambda: F.make_dual(dual, t))
        got["tangent_is_dual"] = _message(lambda: F.make_dual(T.rand(3, dtype=T.float64), dual))
        got["exit_other"] = _message(lambda: F.exit_dual_level(level=5))
    got["exit_none"] = _message(F.exit_dual_level)
    # torch's dtype names read torch.int64 where agrad's read agrad.int64
    return {k: None if v is None else [v[0], v[1].replace("torch.", "agrad.")] for k, v in got.items()}


def semantics(T, F):
    x = T.tensor(PRIMAL, dtype=T.float64)
    t = T.tensor(TANGENT, dtype=T.float64)
    got = {}
    with F.dual_level() as level:
        got["level"] = level
        d = F.make_dual(x, t)
        got["dual_is_view"] = d._base is x
        got["dual_requires_grad"] = d.requires_grad
        got["tangent_as_is"] = F.unpack_dual(d).tangent is t
        got["detach"] = _values(F.unpack_dual(d.detach()).tangent)
        got["plain"] = _values(F.unpack_dual(x).tangent)
        with T.no_grad():
            got["no_grad"] = _values(F.unpack_dual(d * 2).tangent)
        got["argmax"] = _values(F.unpack_dual(d.argmax()).tangent)
        got["floor"] = _values(F.unpack_dual(d.floor()).tangent)
        got["gt"] = _values(F.unpack_dual(d > 0).tangent)
        v = d[1:]
        got["view_of_tangent"] = F.unpack_dual(v).tangent._base is t
        b = x.clone()
        vb = b[:2]
        vb.mul_(F.make_dual(T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64)))
        got["inplace_view_base"] = _values(F.unpack_dual(b).tangent)
        got["inplace_view"] = _values(F.unpack_dual(vb).tangent)
        c = x.clone()
        vc = c[:2]
        c.mul_(d)
        got["view_after_base_inplace"] = _values(F.unpack_dual(vc).tangent)
        e = d.clone()
        kept = F.unpack_dual(e).tangent
        e.mul_(2)
        got["inplace_keeps_tangent"] = F.unpack_dual(e).tangent is kept
        got["inplace_tangent"] = _values(kept)
        f = (d.sin() * d).sum()
        got["chain"] = _values(F.unpack_dual(f).tangent)
        got["unpacked_type"] = type(F.unpack_dual(d)).__name__
        y = d * 2
    got["after_exit"] = _values(F.unpack_dual(y).tangent)
    got["after_exit_dual"] = _values(F.unpack_dual(d).tangent)
    return {"x": PRIMAL, "t": TANGENT, "got": got}


def backward(T, F):
    x = T.tensor(PRIMAL, dtype=T.float64, requires_grad=True)
    t = T.tensor(TANGENT, dtype=T.float64, requires_grad=True)
    with F.dual_level():
        d = F.make_dual(x, t)
        out = (d * d.exp()).sum()
        primal, tangent = F.unpack_dual(out)
        primal.backward(retain_graph=True)
        grad_primal = x.grad.clone()
        x.grad = None
        tangent.backward()
    return {"x": PRIMAL, "t": TANGENT, "grad_primal": _values(grad_primal), "grad_tangent_x": _values(x.grad),
            "grad_tangent_t": _values(t.grad)}


def _error(fn):
    """[type, message] of what fn raises (any exception), or None."""
    try:
        fn()
    except Exception as e:          # noqa: BLE001 — NotImplementedError and AssertionError are recorded too
        return [type(e).__name__, str(e)]
    return None


def custom_function(T, F):
    """A custom Function's output tangents come from its jvp (custom_function.cpp's _process_forward_mode_AD)."""
    Function = T.autograd.Function
    seen = {}

    class Scale(Function):         # jvp deliberately not forward's derivative: the tangent must be jvp's
        @staticmethod
        def forward(ctx, nt, x, y):
            seen["forward_tangent"] = F.unpack_dual(x).tangent is None
            ctx.save_for_forward(x, y)
            ctx.nt = nt
            return x * y * nt, x.detach().long()

        @staticmethod
        def jvp(ctx, nt_t, x_t, y_t):
            x, y = ctx.saved_tensors
            seen["jvp_args"] = [nt_t is None, _values(x_t), _values(y_t)]
            return ctx.nt * (y * x_t + x * y_t) + 100 * x_t, None

        @staticmethod
        def backward(ctx, g, _):
            return None, g, g

    class NoJvp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def returning(*tangents, n_out=1, dirty=False, view=False, nondiff=False):
        class Custom(Function):
            @staticmethod
            def forward(ctx, x):
                if dirty:
                    ctx.mark_dirty(x)
                    return x.mul_(2)
                out = x.narrow(0, 0, 2) if view else x * 2
                if nondiff:
                    ctx.mark_non_differentiable(out)
                return (out,) * n_out if n_out > 1 else out

            @staticmethod
            def jvp(ctx, x_t):
                return tangents[0](x_t) if len(tangents) == 1 else tuple(f(x_t) for f in tangents)
        return Custom

    x = T.tensor(PRIMAL, dtype=T.float64)
    t = T.tensor(TANGENT, dtype=T.float64)
    got = {}
    with F.dual_level():
        d = F.make_dual(x, t)
        out, index = Scale.apply(3.0, d, T.ones(3, dtype=T.float64) * 2)
        got["tangent"] = _values(F.unpack_dual(out).tangent)
        got["integer_output_tangent"] = _values(F.unpack_dual(index).tangent)
        got["outside_dual"] = _values(F.unpack_dual(Scale.apply(3.0, x, x)[0]).tangent)
        got["no_jvp"] = _error(lambda: NoJvp.apply(d))
        got["no_jvp_no_tangent"] = _values(NoJvp.apply(x))
        got["wrong_count"] = _error(lambda: returning(lambda g: g, lambda g: g).apply(d))
        got["not_a_tensor"] = _error(lambda: returning(lambda g: 3).apply(d))
        got["wrong_shape"] = _error(lambda: returning(lambda g: g.sum()).apply(d))
        got["non_differentiable"] = _error(lambda: returning(lambda g: g * 2, nondiff=True).apply(d))
        got["dirty_not_inplace"] = _error(lambda: returning(lambda g: g * 2, dirty=True).apply(
            F.make_dual(x.clone(), t.clone())))
        got["dirty_not_as_is"] = _error(lambda: returning(lambda g: g.mul_(2) * 1, dirty=True).apply(
            F.make_dual(x.clone(), t.clone())))
        dirty_t = t.clone()
        dirty_out = returning(lambda g: g.mul_(2), dirty=True).apply(F.make_dual(x.clone(), dirty_t))
        got["dirty"] = [_values(F.unpack_dual(dirty_out).tangent), F.unpack_dual(dirty_out).tangent is dirty_t]
        got["view_not_a_view"] = _error(lambda: returning(lambda g: g.narrow(0, 0, 2).clone(), view=True).apply(d))
        got["view_of_other"] = _error(lambda: returning(lambda g: g.clone().narrow(0, 0, 2), view=True).apply(d))
        view_out = returning(lambda g: g.narrow(0, 0, 2), view=True).apply(d)
        got["view"] = _values(F.unpack_dual(view_out).tangent)
    got.update(seen)
    return got


def gradcheck_forward(T, F):
    """gradcheck(check_forward_ad=True): forward AD's Jacobian against finite differences, slow and fast."""
    gradcheck = T.autograd.gradcheck

    def user_fn(factor):
        class UserFn(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return 2 * g

            @staticmethod
            def jvp(ctx, x_t):
                return factor * x_t
        return UserFn.apply

    x = T.tensor(PRIMAL, dtype=T.float64, requires_grad=True)
    y = T.tensor(TANGENT, dtype=T.float64, requires_grad=True)
    got = {}
    for fast in (False, True):
        key = "fast" if fast else "slow"
        got[key + "_ops"] = gradcheck(lambda a, b: (a.sin() * b, a.exp().sum()), (x, y), check_forward_ad=True,
                                      fast_mode=fast)
        got[key + "_forward_only"] = gradcheck(user_fn(2), (x,), check_forward_ad=True, check_backward_ad=False,
                                               check_undefined_grad=False, fast_mode=fast)
        wrong = _error(lambda: gradcheck(user_fn(3), (x,), check_forward_ad=True, fast_mode=fast))
        got[key + "_wrong"] = None if wrong is None else [wrong[0], wrong[1].split(",")[0]]
        got[key + "_wrong_quiet"] = gradcheck(user_fn(3), (x,), check_forward_ad=True, fast_mode=fast,
                                              raise_exception=False)
    got["neither"] = _error(lambda: gradcheck(user_fn(2), (x,), check_forward_ad=False, check_backward_ad=False))
    if got["slow_wrong"] is not None:
        got["slow_wrong"][0] = "GradcheckError"     # torch's class is torch.autograd.gradcheck.GradcheckError
    if got["fast_wrong"] is not None:
        got["fast_wrong"][0] = "GradcheckError"
    return got


SCENARIOS = {"errors": errors, "semantics": semantics, "backward": backward, "custom_function": custom_function,
             "gradcheck_forward": gradcheck_forward}
