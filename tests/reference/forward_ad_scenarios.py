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


SCENARIOS = {"errors": errors, "semantics": semantics, "backward": backward}
