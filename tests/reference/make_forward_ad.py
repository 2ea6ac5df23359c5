"""Record what PyTorch 2.13 does with forward-mode AD, for tests/engine/test_forward_ad.py (which never
imports torch and computes the same cases on agrad).

    /work/torchvenv/bin/python tests/reference/make_forward_ad.py

Writes tests/reference/forward_ad.json. Deterministic: the inputs are fixed numbers.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.autograd.forward_ad as fwAD

X = [0.25, -0.5, 1.5]
T = [1.0, 2.0, -1.0]


def _message(fn):
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        return [type(e).__name__, str(e)]
    return None


def _values(t):
    return None if t is None else t.detach().numpy().tolist()


def errors():
    x, t = torch.rand(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    got = {"outside_level": _message(lambda: fwAD.make_dual(x, t))}
    with fwAD.dual_level():
        got["nested"] = _message(fwAD.enter_dual_level)
        got["shape"] = _message(lambda: fwAD.make_dual(x, torch.ones(4, dtype=torch.float64)))
        got["int_tangent"] = _message(lambda: fwAD.make_dual(x, torch.ones(3, dtype=torch.int64)))
        got["int_primal"] = _message(lambda: fwAD.make_dual(torch.ones(3, dtype=torch.int64), t))
        got["bad_level"] = _message(lambda: fwAD.make_dual(x, t, level=1))
        dual = fwAD.make_dual(x, t)
        got["dual_of_dual"] = _message(lambda: fwAD.make_dual(dual, t))
        got["exit_other"] = _message(lambda: fwAD.exit_dual_level(level=5))
    got["exit_none"] = _message(fwAD.exit_dual_level)
    # torch's dtype names read torch.int64 where agrad's read agrad.int64
    return {k: None if v is None else [v[0], v[1].replace("torch.", "agrad.")] for k, v in got.items()}


def semantics():
    x = torch.tensor(X, dtype=torch.float64)
    t = torch.tensor(T, dtype=torch.float64)
    got = {}
    with fwAD.dual_level() as level:
        got["level"] = level
        d = fwAD.make_dual(x, t)
        got["dual_is_view"] = d._base is x
        got["dual_requires_grad"] = d.requires_grad
        got["tangent_as_is"] = fwAD.unpack_dual(d).tangent is t
        got["detach"] = _values(fwAD.unpack_dual(d.detach()).tangent)
        got["plain"] = _values(fwAD.unpack_dual(x).tangent)
        with torch.no_grad():
            got["no_grad"] = _values(fwAD.unpack_dual(d * 2).tangent)
        got["argmax"] = _values(fwAD.unpack_dual(d.argmax()).tangent)
        got["floor"] = _values(fwAD.unpack_dual(d.floor()).tangent)
        got["gt"] = _values(fwAD.unpack_dual(d > 0).tangent)
        v = d[1:]
        got["view_of_tangent"] = fwAD.unpack_dual(v).tangent._base is t
        b = x.clone()
        vb = b[:2]
        vb.mul_(fwAD.make_dual(torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
        got["inplace_view_base"] = _values(fwAD.unpack_dual(b).tangent)
        got["inplace_view"] = _values(fwAD.unpack_dual(vb).tangent)
        c = x.clone()
        vc = c[:2]
        c.mul_(d)
        got["view_after_base_inplace"] = _values(fwAD.unpack_dual(vc).tangent)
        e = d.clone()
        kept = fwAD.unpack_dual(e).tangent
        e.mul_(2)
        got["inplace_keeps_tangent"] = fwAD.unpack_dual(e).tangent is kept
        got["inplace_tangent"] = _values(kept)
        f = (d.sin() * d).sum()
        got["chain"] = _values(fwAD.unpack_dual(f).tangent)
        got["unpacked_type"] = type(fwAD.unpack_dual(d)).__name__
        y = d * 2
    got["after_exit"] = _values(fwAD.unpack_dual(y).tangent)
    got["after_exit_dual"] = _values(fwAD.unpack_dual(d).tangent)
    return {"x": X, "t": T, "got": got}


def backward():
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    t = torch.tensor(T, dtype=torch.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        out = (d * d.exp()).sum()
        primal, tangent = fwAD.unpack_dual(out)
        primal.backward(retain_graph=True)
        grad_primal = x.grad.clone()
        x.grad = None
        tangent.backward()
    return {"x": X, "t": T, "grad_primal": _values(grad_primal), "grad_tangent_x": _values(x.grad),
            "grad_tangent_t": _values(t.grad)}


def main() -> None:
    out = {"torch": torch.__version__, "errors": errors(), "semantics": semantics(), "backward": backward()}
    path = Path(__file__).parent / "forward_ad.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
