"""Automatic mixed precision scenarios, each a function of the library (torch or agrad) returning plain data: the
dtypes ops produce inside CPU autocast with float16 (ops from each of its lists, and ops on none), nesting, the
weight cast cache, custom_fwd/custom_bwd, and a GradScaler trajectory. make_amp_reference.py records PyTorch's
answers in amp_scenarios.json; tests/engine/test_autocast.py and test_grad_scaler.py run them with agrad and compare.
"""
from __future__ import annotations

import math


def _error(exc) -> list:
    """An error as data: its builtin class (agrad's own error classes derive from torch's builtin ones) and text."""
    return [next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"), str(exc)]


def _r(lib, *shape):
    """Values in [0, 1) that both libraries make alike (their random streams differ)."""
    n = math.prod(shape)
    return ((lib.arange(n, dtype=lib.float32) * 0.618034 + 0.1) % 1).reshape(shape)


def _inputs(lib):
    r = lambda *shape: _r(lib, *shape)   # noqa: E731
    return {"a": r(3, 4), "b": r(4, 5), "v": r(4), "sq": r(3, 3) + 3 * lib.eye(3), "t3": r(2, 3, 4), "u3": r(2, 4, 5),
            "img": r(1, 2, 5, 5), "k": r(3, 2, 3, 3), "seq": r(1, 2, 6), "k1": r(3, 2, 3), "p": r(3, 4).softmax(-1),
            "tgt": lib.tensor([0, 2, 1]), "pos": r(3, 4) + 0.5, "h": r(3, 4).half()}


def _policy_ops(lib):
    """name -> a call of the op on float32 inputs (and float16 ones, for the promote list)."""
    F = lib.nn.functional
    x = _inputs(lib)
    a, b, v, sq, h = x["a"], x["b"], x["v"], x["sq"], x["h"]
    return {
        # lower_precision_fp
        "mm": lambda: lib.mm(a, b), "matmul": lambda: lib.matmul(a, b), "bmm": lambda: lib.bmm(x["t3"], x["u3"]),
        "addmm": lambda: lib.addmm(lib.zeros(3, 5), a, b), "baddbmm": lambda: lib.baddbmm(lib.zeros(2, 3, 5), x["t3"], x["u3"]),
        "addbmm": lambda: lib.addbmm(lib.zeros(3, 5), x["t3"], x["u3"]), "linear": lambda: F.linear(a, b.t(), v[:1].expand(5).contiguous()),
        "conv1d": lambda: F.conv1d(x["seq"], x["k1"]), "conv2d": lambda: F.conv2d(x["img"], x["k"]),
        "conv_transpose2d": lambda: F.conv_transpose2d(x["img"], x["k"].transpose(0, 1).contiguous()),
        "prelu": lambda: F.prelu(a, lib.tensor([0.25])), "linalg_vecdot": lambda: lib.linalg.vecdot(a, a),
        "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(x["t3"], x["t3"], x["t3"]),
        # fp32 (inputs float16 so that the cast up shows)
        "mse_loss": lambda: F.mse_loss(h, h), "l1_loss": lambda: F.l1_loss(h, h), "huber_loss": lambda: F.huber_loss(h, h),
        "smooth_l1_loss": lambda: F.smooth_l1_loss(h, h), "soft_margin_loss": lambda: F.soft_margin_loss(h, h.sign()),
        "kl_div": lambda: F.kl_div(h, h, reduction="sum"), "nll_loss": lambda: F.nll_loss(h, x["tgt"]),
        "cross_entropy": lambda: F.cross_entropy(h, x["tgt"]), "multi_margin_loss": lambda: F.multi_margin_loss(h, x["tgt"]),
        "binary_cross_entropy_with_logits": lambda: F.binary_cross_entropy_with_logits(h, h),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(x["p"].half(), x["p"].half()),
        "cosine_embedding_loss": lambda: F.cosine_embedding_loss(h, h, lib.tensor([1.0, -1.0, 1.0])),
        "hinge_embedding_loss": lambda: F.hinge_embedding_loss(h, h.sign()),
        "margin_ranking_loss": lambda: F.margin_ranking_loss(h[0], h[1], h[2].sign()),
        "poisson_nll_loss": lambda: F.poisson_nll_loss(h, h), "triplet_margin_loss": lambda: F.triplet_margin_loss(h, h, h),
        "prod": lambda: lib.prod(h), "trace": lambda: lib.trace(sq.half()), "cdist": lambda: lib.cdist(h, h),
        "inverse": lambda: lib.inverse(sq.half()), "linalg_inv": lambda: lib.linalg.inv(sq.half()),
        "cholesky": lambda: lib.linalg.cholesky((sq @ sq.t()).half()), "linalg_svdvals": lambda: lib.linalg.svdvals(sq.half()),
        "linalg_solve": lambda: lib.linalg.solve(sq.half(), h[:, :1]), "quantile": lambda: lib.quantile(h, 0.5),
        "avg_pool3d": lambda: F.avg_pool3d(x["img"].half(), 2), "max_pool3d": lambda: F.max_pool3d(x["img"].half(), 2),
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(x["img"].half(), 2),
        "reflection_pad1d": lambda: F.pad(x["seq"].half(), (1, 1), mode="reflect"),
        "replication_pad2d": lambda: F.pad(x["img"].half(), (1, 1, 1, 1), mode="replicate"),
        # promote (a float16 and a float32 input: float32; float16 alone: float16)
        "cat": lambda: lib.cat([h, a]), "cat_fp16": lambda: lib.cat([h, h]), "stack": lambda: lib.stack([h, a]),
        "index_copy": lambda: lib.index_copy(h, 0, lib.tensor([0, 2]), a[:2]),
        # on no CPU list: they run in their inputs' dtypes
        "add": lambda: h + a, "relu": lambda: F.relu(h), "softmax": lambda: lib.softmax(h, -1),
        "sum": lambda: lib.sum(h), "exp": lambda: lib.exp(h), "layer_norm": lambda: F.layer_norm(h, (4,)),
        "addcmul": lambda: lib.addcmul(h, a, a), "mv": lambda: lib.mv(a, v), "dot": lambda: lib.dot(v, v),
        "einsum": lambda: lib.einsum("ij,jk->ik", a, b), "pow": lambda: lib.pow(h, 2),
        "float64_mm": lambda: lib.mm(a.double(), b.double()), "int_add": lambda: x["tgt"] + x["tgt"],
        "interpolate": lambda: F.interpolate(x["seq"], scale_factor=2),
        "constant_pad": lambda: F.pad(x["seq"].half(), (1, 1)), "tensordot": lambda: lib.tensordot(a, b, dims=1),
        "cosine_similarity": lambda: F.cosine_similarity(a, a), "group_norm": lambda: F.group_norm(x["img"].half(), 2),
    }


def autocast_cpu_float16_dtypes(lib):
    """The dtype of each op's result inside autocast("cpu", dtype=float16), or the error it raised."""
    out = {}
    with lib.autocast("cpu", dtype=lib.float16):
        for name, fn in _policy_ops(lib).items():
            try:
                out[name] = str(fn().dtype).split(".")[-1]
            except Exception as exc:   # noqa: BLE001 — recorded as data
                out[name] = ": ".join(_error(exc)).split("\n")[0]
    return out


def outside_autocast_dtypes(lib):
    """The same calls outside any region: the inputs' dtypes (float32 products, float16 losses)."""
    out = {}
    for name in ("mm", "linear", "conv2d", "cat", "mse_loss"):
        out[name] = str(_policy_ops(lib)[name]().dtype).split(".")[-1]
    return out


def nesting_and_state(lib):
    x = _inputs(lib)
    a, b = x["a"], x["b"]
    out = {"enabled_outside": lib.is_autocast_enabled("cpu")}
    with lib.autocast("cpu", dtype=lib.float16):
        out["enabled_inside"] = lib.is_autocast_enabled("cpu")
        out["dtype_inside"] = str(lib.get_autocast_dtype("cpu")).split(".")[-1]
        out["outer_mm"] = str(lib.mm(a, b).dtype).split(".")[-1]
        with lib.autocast("cpu", enabled=False):
            out["disabled_enabled"] = lib.is_autocast_enabled("cpu")
            out["disabled_mm"] = str(lib.mm(a, b).dtype).split(".")[-1]
        with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
            out["inner_cache_enabled"] = lib.is_autocast_cache_enabled()
        out["cache_enabled_restored"] = lib.is_autocast_cache_enabled()
        out["after_inner_mm"] = str(lib.mm(a, b).dtype).split(".")[-1]
    out["enabled_after"] = lib.is_autocast_enabled("cpu")

    @lib.autocast("cpu", dtype=lib.float16)
    def decorated(p, q):
        return lib.mm(p, q)

    out["decorated"] = str(decorated(a, b).dtype).split(".")[-1]
    out["after_decorated"] = lib.is_autocast_enabled("cpu")
    out["nesting"] = [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                      lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()]
    return out


def gradients_through_casts(lib):
    """Backward through a float16 mm inside autocast: the graph (cast nodes), and the float32 leaf gradients."""
    x = _inputs(lib)
    a = x["a"].clone().requires_grad_()
    w = x["b"].clone().requires_grad_()
    with lib.autocast("cpu", dtype=lib.float16):
        y = lib.mm(a, w)
        y2 = lib.mm(a, w)
        loss = lib.nn.functional.mse_loss(y, lib.zeros(3, 5))
    loss.backward()
    return {"y": str(y.dtype).split(".")[-1], "loss": str(loss.dtype).split(".")[-1],
            "grad_fn": type(y.grad_fn).__name__,
            "next": sorted(type(f).__name__ for f, _ in y.grad_fn.next_functions if f is not None),
            "weight_cast_cached": y.grad_fn.next_functions[1][0] is y2.grad_fn.next_functions[1][0],
            "input_cast_cached": y.grad_fn.next_functions[0][0] is y2.grad_fn.next_functions[0][0],
            "a_grad": [str(a.grad.dtype).split(".")[-1], [round(v, 2) for v in a.grad.flatten().tolist()]],
            "w_grad": [str(w.grad.dtype).split(".")[-1], [round(v, 2) for v in w.grad.flatten().tolist()]]}


def cache_cleared_on_outermost_exit(lib):
    w = lib.ones(2, 2, requires_grad=True)
    with lib.autocast("cpu", dtype=lib.float16):
        first = lib.mm(w, w).grad_fn.next_functions[0][0]
        with lib.autocast("cpu", dtype=lib.float16):
            inner = lib.mm(w, w).grad_fn.next_functions[0][0]
    with lib.autocast("cpu", dtype=lib.float16):
        later = lib.mm(w, w).grad_fn.next_functions[0][0]
    with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
        u1 = lib.mm(w, w).grad_fn.next_functions[0][0]
        u2 = lib.mm(w, w).grad_fn.next_functions[0][0]
    return {"nested_shares": first is inner, "next_region_shares": first is later, "uncached_shares": u1 is u2}


def custom_fwd_bwd(lib):
    seen = {}

    class MyMM(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
        def forward(ctx, p, q):
            seen["fwd_enabled"] = lib.is_autocast_enabled("cpu")
            seen["fwd_input"] = str(p.dtype).split(".")[-1]
            ctx.save_for_backward(p, q)
            return p.mm(q)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen["bwd_enabled"] = lib.is_autocast_enabled("cpu")
            p, q = ctx.saved_tensors
            return grad.mm(q.t()), p.t().mm(grad)

    class Plain(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu")
        def forward(ctx, p):
            seen["plain_fwd_enabled"] = lib.is_autocast_enabled("cpu")
            return p * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen["plain_bwd_enabled"] = lib.is_autocast_enabled("cpu")
            seen["plain_bwd_dtype"] = str(lib.get_autocast_dtype("cpu")).split(".")[-1]
            return grad * 2

    p = lib.ones(2, 2, dtype=lib.float16, requires_grad=True)
    q = lib.ones(2, 2, requires_grad=True)
    with lib.autocast("cpu", dtype=lib.float16):
        out = MyMM.apply(p, q)
        out2 = Plain.apply(q)
    seen["out"] = str(out.dtype).split(".")[-1]
    (out.sum() + out2.sum()).backward()
    seen["p_grad"] = str(p.grad.dtype).split(".")[-1]
    return seen


def errors_and_warnings(lib):
    import warnings
    out = {}
    for label, fn in {"device_type_not_str": lambda: lib.autocast(3),
                      "unsupported_device": lambda: lib.autocast("meta"),
                      "decorate_non_callable": lambda: lib.autocast("cpu", dtype=lib.float16)(3),
                      "unknown_device": lambda: lib.is_autocast_enabled("xyz")}.items():
        try:
            fn()
            out[label] = None
        except Exception as exc:   # noqa: BLE001 — recorded as data
            kind, text = _error(exc)
            out[label] = [kind, text.replace("torch", "agrad") if "xyz" not in text else "xyz"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        off = lib.autocast("cpu", dtype=lib.float64)
        out["unsupported_dtype"] = [off._enabled, [str(w.message).replace("torch.bfloat16, ", "")
                                                   .replace("torch.", "").replace("agrad.", "") for w in caught]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.cpu.amp.autocast(dtype=lib.float16)
        lib.cpu.amp.GradScaler()
        out["deprecated"] = [[w.category.__name__, str(w.message)] for w in caught]
    return out


def _scaler_model(lib):
    w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    b = lib.tensor([0.1, -0.2], requires_grad=True)
    return w, b


def grad_scaler_trajectory(lib):
    """SGD on a tiny model, a GradScaler on cpu with growth_interval 2; the loss overflows (inf) on steps 2 and 5."""
    w, b = _scaler_model(lib)
    opt = lib.optim.SGD([w, b], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=1024.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2)
    x = lib.tensor([[1.0, 2.0], [3.0, -1.0]])
    steps = []
    for i in range(7):
        opt.zero_grad()
        loss = ((x @ w + b) ** 2).mean()
        if i in (2, 5):
            loss = loss * math.inf
        scaled = scaler.scale(loss)
        scaled.backward()
        ret = scaler.step(opt)
        found = sum(v.item() for v in scaler._found_inf_per_device(opt).values())
        scaler.update()
        steps.append({"scale": scaler.get_scale(), "tracker": scaler._get_growth_tracker(), "found_inf": found,
                      "skipped": ret is None and found > 0, "scaled_loss": round(float(scaled.item()), 3),
                      "w": [round(v, 6) for v in w.detach().flatten().tolist()],
                      "b": [round(v, 6) for v in b.detach().tolist()]})
    return {"steps": steps, "state_dict": scaler.state_dict()}


def grad_scaler_api(lib):
    w, b = _scaler_model(lib)
    opt = lib.optim.SGD([w, b], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
    out = {"before": [scaler.get_scale(), scaler.get_growth_factor(), scaler.get_backoff_factor(),
                      scaler.get_growth_interval(), scaler.is_enabled()]}

    def error(fn):
        try:
            fn()
            return None
        except Exception as exc:   # noqa: BLE001 — recorded as data
            return _error(exc)

    out["step_before_scale"] = error(lambda: scaler.step(opt))
    scaled = scaler.scale([w.sum(), (b.sum(), b.sum() * 2)])
    out["scaled_structure"] = [type(scaled).__name__, type(scaled[1]).__name__, float(scaled[1][1].item())]
    (w * w).sum().mul(scaler.get_scale()).backward()
    scaler.unscale_(opt)
    out["unscaled_grad"] = w.grad.flatten().tolist()
    out["unscale_twice"] = error(lambda: scaler.unscale_(opt))
    out["closure"] = error(lambda: scaler.step(opt, closure=lambda: 0))
    scaler.step(opt)
    out["step_twice"] = error(lambda: scaler.step(opt))
    out["unscale_after_step"] = error(lambda: scaler.unscale_(opt))
    scaler.update(new_scale=4.0)
    out["after_new_scale"] = scaler.get_scale()
    out["bad_new_scale"] = error(lambda: scaler.update(lib.tensor([1.0, 2.0])))
    scaler.set_growth_factor(3.0)
    scaler.set_backoff_factor(0.25)
    scaler.set_growth_interval(5)
    state = scaler.state_dict()
    out["state_dict"] = state
    other = lib.amp.GradScaler("cpu")
    other.load_state_dict(state)
    out["loaded"] = other.state_dict()
    disabled = lib.amp.GradScaler("cpu", enabled=False)
    out["disabled"] = [disabled.get_scale(), disabled.state_dict(), disabled.scale(w) is w]
    out["load_empty"] = error(lambda: other.load_state_dict({}))
    out["bad_growth"] = error(lambda: lib.amp.GradScaler("cpu", growth_factor=1.0))
    out["bad_backoff"] = error(lambda: lib.amp.GradScaler("cpu", backoff_factor=1.0))
    h = lib.ones(2, dtype=lib.float16, requires_grad=True)
    opt16 = lib.optim.SGD([h], lr=0.1)
    h.grad = lib.ones(2, dtype=lib.float16)
    out["fp16_grads"] = error(lambda: scaler.unscale_(opt16))
    return out


def amp_kernels(lib):
    def error(fn):
        try:
            fn()
            return None
        except Exception as exc:   # noqa: BLE001 — recorded as data
            return _error(exc)

    grads = [lib.tensor([1.0, 4.0]), lib.tensor([2.0, math.inf]), lib.tensor([8.0], dtype=lib.float16)]
    found = lib.zeros(())
    lib._amp_foreach_non_finite_check_and_unscale_(grads, found, lib.full((), 0.5))
    out = {"unscaled": [g.tolist() for g in grads], "found_inf": found.item()}
    finite = [lib.tensor([1.0, 2.0])]
    found2 = lib.zeros(())
    lib._amp_foreach_non_finite_check_and_unscale_(finite, found2, lib.full((), 0.25))
    out["finite"] = [finite[0].tolist(), found2.item()]
    inv = lib.full((), 0.5)
    out["errors"] = [error(lambda: lib._amp_foreach_non_finite_check_and_unscale_(finite, lib.zeros(2), inv)),
                     error(lambda: lib._amp_foreach_non_finite_check_and_unscale_(finite, found, lib.ones(2))),
                     error(lambda: lib._amp_foreach_non_finite_check_and_unscale_(finite, found, inv.double())),
                     error(lambda: lib._amp_foreach_non_finite_check_and_unscale_(finite, found.double(), inv)),
                     error(lambda: lib._amp_foreach_non_finite_check_and_unscale_([lib.tensor([1, 2])], found, inv))]
    s, t = lib.full((), 4.0), lib.zeros((), dtype=lib.int32)
    trail = []
    for inf in (0.0, 0.0, 1.0, 0.0, 0.0):
        lib._amp_update_scale_(s, t, lib.full((), inf), 2.0, 0.5, 2)
        trail.append([s.item(), t.item()])
    out["update_trail"] = trail
    big, t1 = lib.full((), 3e38), lib.ones((), dtype=lib.int32)
    lib._amp_update_scale_(big, t1, lib.zeros(()), 2.0, 0.5, 2)
    out["overflowing_growth"] = [big.item(), t1.item()]
    z = lib.zeros(())
    out["update_errors"] = [error(lambda: lib._amp_update_scale_(lib.ones(2), t, z, 2.0, 0.5, 2)),
                            error(lambda: lib._amp_update_scale_(s, t.float(), z, 2.0, 0.5, 2)),
                            error(lambda: lib._amp_update_scale_(s.double(), t, z, 2.0, 0.5, 2)),
                            error(lambda: lib._amp_update_scale_(s, t, z.double(), 2.0, 0.5, 2)),
                            error(lambda: lib._amp_update_scale_(s, lib.zeros(2, dtype=lib.int32), z, 2.0, 0.5, 2)),
                            error(lambda: lib._amp_update_scale_(s, t, lib.zeros(2), 2.0, 0.5, 2))]
    return out


SCENARIOS = {f.__name__: f for f in (autocast_cpu_float16_dtypes, outside_autocast_dtypes, nesting_and_state,
                                     gradients_through_casts, cache_cleared_on_outermost_exit, custom_fwd_bwd,
                                     errors_and_warnings, grad_scaler_trajectory, grad_scaler_api, amp_kernels)}
