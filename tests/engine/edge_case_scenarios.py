"""Edge cases of ops and tensors where agrad once differed from PyTorch 2.13, as scenarios that run
on either library (as engine_contract_scenarios.py): gradients at singular points, float32
accuracy of the cumulative ops, the errors PyTorch raises for in-place ops on views by how the
view was made, and what PyTorch allows (`x[t] = v` with a 0-d index, `del x.grad`, attributes).

`tests/reference/make_edge_case_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/edge_cases.json`; `test_edge_cases.py` runs them on agrad and compares
(never importing torch). Signed zeros are recorded as repr() strings, so -0.0 is not 0.0.
"""
from __future__ import annotations

import collections

import numpy as np

from engine_contract_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _reprs(t) -> list:
    return [repr(float(v)) for v in np.asarray(t.detach().tolist(), dtype=np.float64).ravel()]


def _long_row(T, dtype):
    """1,000 values from 0.9 to 1.1, made with NumPy so both libraries start from the same bits."""
    values = (np.arange(1000) / 1000 * 0.2 + 0.9).astype(np.float32)
    return T.tensor(values.tolist(), dtype=dtype, requires_grad=True)


# -- gradients at singular points, float32 accuracy ----------------------------------------------
@scenario
def atan2_backward_at_zero_zero(T):
    """atan2 is flat at (0, 0) by convention: the gradient is a signed zero, not 0/0."""
    out = {}
    for name, dtype in (("float64", T.float64), ("float32", T.float32)):
        a = T.tensor([0.0, 0.0, -0.0, -0.0, 1.0], dtype=dtype, requires_grad=True)
        b = T.tensor([0.0, -0.0, 0.0, -0.0, 0.0], dtype=dtype, requires_grad=True)
        T.atan2(a, b).backward(T.tensor([1.0, 1.0, 1.0, -1.0, 1.0], dtype=dtype))
        out[name] = [_reprs(a.grad), _reprs(b.grad)]
    return out


@scenario
def cumprod_float32_long_row_backward(T):
    """reversed_cumsum(grad * result) / x over 1,000 float32 values (sum - cumsum cancels here)."""
    x = _long_row(T, T.float32)
    y = T.cumprod(x, 0)
    y.backward(T.ones(1000, dtype=T.float32))
    return {"forward": y.detach().tolist()[::50], "grad": x.grad.tolist()[::5]}


@scenario
def cumsum_float32_backward_small_tail(T):
    """The adjoint of cumsum where the tail of grad is tiny beside its head: a reversed sum from the end."""
    x = _long_row(T, T.float32)
    grad = np.concatenate([np.full(500, 1e4), np.arange(1, 501) * 1e-3]).astype(np.float32)
    T.cumsum(x, 0).backward(T.tensor(grad.tolist(), dtype=T.float32))
    return {"grad": x.grad.tolist()[::5]}


@scenario
def cumsum_float32_forward_long_row(T):
    """PyTorch's CPU scan carries a float32 running sum in double and rounds each output once."""
    x = _long_row(T, T.float32)
    return {"values": T.cumsum(x * 0.1, 0).detach().tolist()[::5]}


# -- errors ------------------------------------------------------------------------------------------
@scenario
def grad_assignment_and_data_errors(T):
    x = T.ones(2, requires_grad=True)

    def own_grad():
        x.grad = x

    def int_data():
        a = T.ones(2, requires_grad=True)
        a.data = T.tensor([1, 2])

    def int_data_without_grad():
        a = T.ones(2)
        a.data = T.tensor([1, 2])
        return a.dtype == T.int64
    return {"own grad": _error(own_grad), "int data": _error(int_data),
            "int data, no grad": [_error(int_data_without_grad), int_data_without_grad()]}


@scenario
def roll_with_dims_none(T):
    x = T.arange(6.0).reshape(2, 3)
    return {"tuple shifts": _error(lambda: T.roll(x, (1, 2), None)),
            "one shift": T.roll(x, 1, None).tolist(), "one shift in a tuple": T.roll(x, (2,), None).tolist()}


@scenario
def sdpa_causal_with_attn_mask(T):
    """Refused by PyTorch's math path; its CPU flash path (4-D, no dropout, a mask without grad) applies
    both masks."""
    F = T.nn.functional
    q = (T.arange(24.0, dtype=T.float64).reshape(1, 2, 3, 4) / 10).sin()
    k = (T.arange(40.0, dtype=T.float64).reshape(1, 2, 5, 4) / 7).cos()
    mask = T.tensor([[True, False, True, True, True]] * 3)
    return {
        "2-d": _error(lambda: F.scaled_dot_product_attention(q[0, 0], k[0, 0], k[0, 0], attn_mask=mask,
                                                             is_causal=True)),
        "3-d": _error(lambda: F.scaled_dot_product_attention(q[0], k[0], k[0], attn_mask=mask, is_causal=True)),
        "dropout": _error(lambda: F.scaled_dot_product_attention(q, k, k, attn_mask=mask, dropout_p=0.5,
                                                                 is_causal=True)),
        "value head size 6": _error(lambda: F.scaled_dot_product_attention(
            q, k, T.ones(1, 2, 5, 6, dtype=T.float64), attn_mask=mask, is_causal=True)),
        "float mask that requires grad": _error(lambda: F.scaled_dot_product_attention(
            q, k, k, attn_mask=T.zeros(3, 5, dtype=T.float64, requires_grad=True), is_causal=True)),
        "4-d": F.scaled_dot_product_attention(q, k, k, attn_mask=mask, is_causal=True).tolist(),
        "4-d float mask": F.scaled_dot_product_attention(q, k, k, attn_mask=T.where(mask, 0.0, -1.0).double(),
                                                         is_causal=True).tolist(),
    }


def _function(T, forward):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(ctx, x)

        @staticmethod
        def backward(ctx, *grads):
            return grads[0]
    return F


@scenario
def inplace_on_views_made_in_a_custom_function(T):
    def run(forward, act, modify_base=False):
        a = T.ones(4, requires_grad=True).clone()
        out = _function(T, forward).apply(a)
        outs = out if isinstance(out, tuple) else (out,)
        if modify_base:
            a.mul_(2)
        return _error(lambda: act(outs))

    def non_differentiable_second(ctx, x):
        first, second = x[:2], x[2:]
        ctx.mark_non_differentiable(second)
        return first, second
    return {
        "view output": run(lambda ctx, x: x[:2], lambda o: o[0].mul_(2)),
        "view of the view output": run(lambda ctx, x: x[:2], lambda o: o[0][:1].mul_(2)),
        "input returned as is": run(lambda ctx, x: x, lambda o: o[0].mul_(2)),
        "base modified, then grad_fn": run(lambda ctx, x: x[:2], lambda o: o[0].grad_fn, modify_base=True),
        "two differentiable outputs": run(lambda ctx, x: (x[:2], x * 2), lambda o: o[0].mul_(2)),
        "the other output": run(lambda ctx, x: (x[:2], x * 2), lambda o: o[1].mul_(2)),
        "non-differentiable view output": run(non_differentiable_second, lambda o: o[1].mul_(2)),
        "input without grad": _error(lambda: _function(T, lambda ctx, x: x[:2]).apply(T.ones(4)).mul_(2)),
    }


@scenario
def inplace_on_views_made_in_inference_mode(T):
    def run(act, modify_base=False, view_of_view=False):
        a = T.ones(4, requires_grad=True).clone()
        with T.inference_mode():
            v = a[:2]
        if view_of_view:
            v = v[:1]
        if modify_base:
            a.mul_(2)
        return _error(lambda: act(v))

    def inside(_):
        a = T.ones(4, requires_grad=True).clone()
        with T.inference_mode():
            v = a[:2]
            v.mul_(2)
        return a.tolist()
    return {"view": run(lambda v: v.mul_(2)), "view of the view": run(lambda v: v.mul_(2), view_of_view=True),
            "base modified, then grad_fn": run(lambda v: v.grad_fn, modify_base=True),
            "requires_grad": run(lambda v: v.requires_grad) or "no error",
            "both inside": inside(None)}


@scenario
def inplace_on_views_made_in_no_grad(T):
    def run(act, modify_base=False, modify_inside=False):
        a = T.ones(4, requires_grad=True).clone()
        with T.no_grad():
            v = a[:2]
            if modify_inside:
                v.mul_(2)
        if modify_base:
            a.mul_(2)
        return _error(lambda: act(v))
    return {"base modified, then grad_fn": run(lambda v: v.grad_fn, modify_base=True),
            "base modified, then the view in place": run(lambda v: v.mul_(2), modify_base=True),
            "modified inside, then grad_fn": run(lambda v: v.grad_fn, modify_inside=True),
            "base modified, then requires_grad": run(lambda v: v.requires_grad, modify_base=True) or "no error"}


# -- what PyTorch allows ----------------------------------------------------------------------------
@scenario
def setitem_with_0d_integer_index(T):
    x = T.zeros(3, requires_grad=True).clone()
    v = T.tensor(2.0, requires_grad=True)
    x[T.tensor(1)] = v
    (x * T.tensor([1.0, 2.0, 3.0])).sum().backward()
    y = T.zeros(2, 3)
    y[T.tensor(1), [0, 2]] = 7.0
    z = T.zeros(2, 3)
    z[T.tensor(-1)] = T.tensor([1.0, 2.0, 3.0])
    return {"x": x.tolist(), "grad_fn": type(x.grad_fn).__name__, "v.grad": v.grad.tolist(),
            "with a list": y.tolist(), "a row": z.tolist()}


@scenario
def del_grad(T):
    x = T.ones(2, requires_grad=True)
    (x * 3).sum().backward()
    before = x.grad.tolist()
    del x.grad
    return {"before": before, "after": x.grad}


@scenario
def numpy_of_a_tensor_that_requires_grad(T):
    x = T.ones(2, requires_grad=True)
    with T.no_grad():
        under_no_grad = x.numpy().tolist()
    with T.inference_mode():
        under_inference_mode = x.numpy().tolist()
    return {"grad mode": _error(lambda: x.numpy()), "no_grad": under_no_grad,
            "inference_mode": under_inference_mode}


@scenario
def linspace_logspace_one_step(T):
    return {"linspace": T.linspace(5, 10, 1).tolist(), "int64": T.linspace(5, 10, 1, dtype=T.int64).tolist(),
            "logspace": T.logspace(2, 3, 1).tolist(), "two": T.linspace(5, 10, 2).tolist()}


@scenario
def tensor_attributes_and_backward_hooks(T):
    x = T.ones(2, requires_grad=True)
    default = x._backward_hooks
    x._backward_hooks = collections.OrderedDict([(0, lambda g: g * 2), (1, lambda g: None)])
    (x * 3).sum().backward()
    with_hooks = x.grad.tolist()
    x._backward_hooks = None
    x.grad = None
    (x * 3).sum().backward()
    cleared = x.grad.tolist()
    h = x.clone()
    h._backward_hooks = collections.OrderedDict([(0, lambda g: g + 1)])   # a non-leaf keeps it, unrun
    x.grad = None
    (h * 3).sum().backward()
    x.tag = "weights"
    return {"default": default, "with hooks": with_hooks, "cleared": cleared,
            "non-leaf": x.grad.tolist(), "tag": x.tag, "kept": h._backward_hooks is not None}


@scenario
def bilinear_interpolate_uint8(T):
    """PyTorch's fixed point, bit for bit: weights that are multiples of 2**-k and those it rounds
    (scale 1.7, 64 -> 10 as tinygrad's test_ops has it, align_corners with uneven steps)."""
    F = T.nn.functional
    values = np.random.default_rng(0).integers(0, 256, (1, 2, 5, 7)).tolist()
    x = T.tensor(values, dtype=T.uint8)
    cases = {"x2": {"scale_factor": 2}, "size (10, 14)": {"size": (10, 14)}, "x4": {"scale_factor": 4},
             "x0.5": {"scale_factor": 0.5}, "size (3, 4)": {"size": (3, 4)}, "size (8, 8)": {"size": (8, 8)},
             "align_corners size (9, 13)": {"size": (9, 13), "align_corners": True},
             "align_corners x2": {"scale_factor": 2, "align_corners": True},
             "x1.7": {"scale_factor": 1.7}, "size (4, 11)": {"size": (4, 11)},
             "align_corners size (4, 11)": {"size": (4, 11), "align_corners": True}}
    out = {name: F.interpolate(x, mode="bilinear", **kw).tolist() for name, kw in cases.items()}
    big = T.tensor(np.random.default_rng(1).integers(0, 256, (2, 3, 64, 64)).tolist(), dtype=T.uint8)
    out["64 -> 10"] = F.interpolate(big, size=(10, 10), mode="bilinear").tolist()
    out["dtype"] = str(F.interpolate(x, scale_factor=2, mode="bilinear").dtype).split(".")[-1]
    return out


# -- the LU family: pivots, info, errors ------------------------------------------------------------
@scenario
def lu_pivots_info_and_errors(T):
    """LAPACK's 1-based int32 pivots, info of singular matrices in a batch, lu_unpack, torch.lu (no error
    for a singular matrix), PyTorch's errors (no pivoting on the CPU, a zero on U's diagonal, bad pivots and shapes)."""
    A = T.tensor([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [0.0, 5.0, 2.0]], dtype=T.float64)
    S = T.zeros(3, 3, 3, dtype=T.float64)
    S[0] = T.eye(3, dtype=T.float64)
    S[2] = T.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=T.float64)
    LU, pivots = T.linalg.lu_factor(A)
    ex = T.linalg.lu_factor_ex(S)
    wide = T.linalg.lu_factor(T.tensor([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]], dtype=T.float64))
    P, L, U = T.lu_unpack(LU, pivots)
    lu_tuple = T.lu(A, get_infos=True)
    out = {"LU": LU.tolist(), "pivots": pivots.tolist(), "pivots dtype": str(pivots.dtype).split(".")[-1],
           "info": ex.info.tolist(), "singular LU": ex.LU.tolist(), "singular pivots": ex.pivots.tolist(),
           "wide pivots": wide.pivots.tolist(), "wide LU": wide.LU.tolist(),
           "unpacked": [P.tolist(), L.tolist(), U.tolist()], "torch.lu": [t.tolist() for t in lu_tuple],
           "empty": [list(t.shape) for t in T.linalg.lu(T.zeros(2, 0, 3, dtype=T.float64))]}
    b = T.tensor([[1.0], [2.0], [3.0]], dtype=T.float64)
    out["lu_solve"] = T.linalg.lu_solve(LU, pivots, b).tolist()
    out["torch.lu_solve"] = T.lu_solve(b, LU, pivots).tolist()
    out["errors"] = {
        "no pivoting": _error(lambda: T.linalg.lu_factor(A, pivot=False)),
        "no pivoting lu": _error(lambda: T.linalg.lu(A, pivot=False)),
        "no pivoting ex": _error(lambda: T.linalg.lu_factor_ex(A, pivot=False)),
        "singular": _error(lambda: T.linalg.lu_factor(S)),
        "singular ex": _error(lambda: T.linalg.lu_factor_ex(S, check_errors=True)),
        "singular lu": _error(lambda: T.lu(S[1])),
        "1-d": _error(lambda: T.linalg.lu_factor(T.ones(3))),
        "int64 pivots": _error(lambda: T.lu_unpack(LU, pivots.long())),
        "pivot out of range": _error(lambda: T.lu_unpack(LU, T.tensor([5, 1, 3], dtype=T.int32))),
        "lu_solve shapes": _error(lambda: T.linalg.lu_solve(LU, pivots, T.ones(2, 1, dtype=T.float64))),
        "lu_solve right shapes": _error(lambda: T.linalg.lu_solve(LU, pivots, T.ones(3, 2, dtype=T.float64),
                                                                  left=False)),
        "lu_solve 1-d": _error(lambda: T.linalg.lu_solve(LU, pivots, T.ones(3, dtype=T.float64))),
        # (the message: agrad's is a DtypeError, a RuntimeError as PyTorch's)
        "lu_solve dtype": _error(lambda: T.linalg.lu_solve(LU, pivots, T.ones(3, 1, dtype=T.float32)))[1],
        "lu_solve not square": _error(lambda: T.linalg.lu_solve(wide.LU, wide.pivots, T.ones(2, 1, dtype=T.float64))),
    }
    return out


# -- igamma / igammac: no derivative in the input ----------------------------------------------------
@scenario
def igamma_input_derivative_and_in_place(T):
    """The gradient in x flows (autograd.grad of x alone succeeds while a requires grad); the one in a is
    PyTorch's NotImplementedError, raised only when asked for; the in-place forms record IgammaBackward0;
    the edge values at a = 0, x = 0 and infinities are scipy's and PyTorch's."""
    out = {}
    for name, special in (("igamma", T.special.gammainc), ("igammac", T.special.gammaincc)):
        a = T.tensor([0.5, 1.0, 2.5, 3.0], dtype=T.float64, requires_grad=True)
        x = T.tensor([0.3, 1.5, 2.0, 0.0], dtype=T.float64, requires_grad=True)
        y = getattr(T, name)(a, x)
        z = special(a, x)
        gx, = T.autograd.grad(y.sum(), x, retain_graph=True)
        c = a * 1
        getattr(c, name + "_")(x)
        edges = getattr(T, name)(T.tensor([-1.0, 0.0, 1.0, 0.0, 2.0, float("inf"), 0.0]),
                                 T.tensor([1.0, 1.0, -1.0, 0.0, float("inf"), 1.0, 2.0]))
        out[name] = {"value": y.tolist(), "special": z.tolist(), "grad_fn": type(y.grad_fn).__name__,
                     "special grad_fn": type(z.grad_fn).__name__, "grad x": gx.tolist(),
                     "grad a": _error(lambda: T.autograd.grad(y.sum(), a, retain_graph=True)),
                     "backward": _error(lambda: y.sum().backward()),
                     "in place": [c.tolist(), type(c.grad_fn).__name__,
                                  T.autograd.grad(c.sum(), x, retain_graph=True)[0].tolist(),
                                  _error(lambda: T.autograd.grad(c.sum(), a))],
                     "leaf in place": _error(lambda: getattr(a, name + "_")(x)),
                     "int in place": _error(lambda: getattr(T.tensor([1, 2]), name + "_")(T.tensor([1.0, 2.0]))),
                     # (the message: agrad's error is a DtypeNotImplementedError, a NotImplementedError)
                     "int": _error(lambda: getattr(T, name)(T.tensor([1, 2]), T.tensor([1, 2])))[1],
                     "edges": _reprs(edges)}
    return out
