"""The ops of ONNX's training domain, `ai.onnx.preview.training` (onnx/defs/training/defs.cc).

`Gradient` asks for dy/dx of the graph's own tensors; agrad computes gradients, so it is one
`grad` line (`create_graph=True`: the gradient is itself differentiable, for the import's own
backward and for a Gradient of a Gradient, a second derivative). Its inputs are the point at which
to differentiate, the values of `xs` then `zs`: where they are those tensors themselves the graph's
`y` is differentiated; where one is another value, the nodes between them and `y` are translated
again with it in its place (the importer's `recomputed`). A `y` of more than one element is
differentiated as a backward from it seeded with ones (the gradient of its sum).

Adagrad, Momentum and Adam are one step of each optimizer, elementwise, written line for line as
onnx's reference (onnx/reference/ops/aionnx_preview_training) computes them: inputs R (the rate),
T (the step count), then the tensors X, their gradients G and each optimizer's state, several of
each in that order; outputs the new X, then the new state.
"""
from __future__ import annotations

from .import_table import TRAINING_OPS, Multi, Outputs, Refuse, lit, op


def training(*names: str, composed: bool = False):
    """`op`, for the training domain."""
    TRAINING_OPS.update(names)
    return op(*names, composed=composed)


@training("Gradient")
def _gradient(ctx, node, a):
    xs, zs, y = list(a.get("xs") or []), list(a.get("zs") or []), a.get("y")
    if not y or not xs:
        raise Refuse("a Gradient without its 'y' or 'xs' attribute")
    named = xs + zs
    if len(node.input) != len(named):
        raise Refuse(f"{len(node.input)} inputs for the {len(named)} tensors xs and zs name")
    if len(node.output) > len(xs):
        raise Refuse(f"{len(node.output)} outputs for the {len(xs)} tensors of xs")
    for x, given in zip(xs, node.input):
        if ctx.dtype(given).kind != "f":
            raise Refuse(f"the gradient with respect to '{x}', of dtype {ctx.dtype(given).name} (only a float "
                         "tensor has one)")
        if ctx.is_const(given) or not ctx.carries_grad(given):
            raise Refuse(f"the gradient with respect to '{x}', whose value '{given}' is known at import or "
                         "computed from no float input or parameter (agrad's autograd records what is)")
    for out, given in zip(node.output, node.input):
        if out:
            ctx.declare(out, ctx.shape(given), ctx.dtype(given))
    fed = {name: given for name, given in zip(named, node.input) if given != name}
    wrt = [ctx.ref(given) for given in node.input[:len(xs)]]
    if not fed and not ctx.carries_grad(y):          # y does not depend on xs: their gradients are zeros
        return Outputs(f"zeros_like({x})" for x in wrt)
    target = ctx.recomputed(y, fed) if fed else ctx.ref(y)
    size = 1
    for d in ctx.shape(y):
        size *= d
    seed = "" if size == 1 else f", grad_outputs=[ones_like({target})]"
    return Multi(f"grad([{target}], [{', '.join(wrt)}]{seed}, create_graph=True)")


def _variables(node, per: int) -> list[list[str]]:
    """The inputs after R and T, as `per` groups of one input per optimized tensor."""
    rest = list(node.input[2:])
    if not rest or len(rest) % per:
        raise Refuse(f"{len(rest)} inputs after R and T, not a multiple of {per} (X, G and the state per tensor)")
    n = len(rest) // per
    return [rest[i * n:(i + 1) * n] for i in range(per)]


def _regularized(ctx, norm: float, x: str, g: str, i: int) -> str:
    """The gradient with its L2 regularization's added (a line of its own where there is one)."""
    return ctx.step(f"{lit(norm)} * {x} + {g}", f"g_regularized_{i}") if norm else g


@training("Adagrad", composed=True)
def _adagrad(ctx, node, a):
    decay, epsilon, norm = a.get("decay_factor", 0.0), a.get("epsilon", 0.0), a.get("norm_coefficient", 0.0)
    xs, gs, hs = _variables(node, 3)
    r, t = ctx.ref(node.input[0]), ctx.ref(node.input[1])
    rate = ctx.step(f"{r} / (1 + {t} * {lit(decay)})", "rate")
    news, states = [], []
    for i, (x, g, h) in enumerate(zip(xs, gs, hs)):
        x, g, h = ctx.ref(x), ctx.ref(g), ctx.ref(h)
        reg = _regularized(ctx, norm, x, g, i)
        h_new = ctx.step(f"{h} + {reg} * {reg}", f"h_new_{i}")
        states.append(f"alias({h_new})")
        news.append(f"{x} - {rate} * {reg} / (sqrt({h_new}) + {lit(epsilon)})")
    return Outputs(news + states)


@training("Momentum", composed=True)
def _momentum(ctx, node, a):
    alpha, beta, norm = a["alpha"], a["beta"], a["norm_coefficient"]
    mode = a["mode"]
    if mode not in ("standard", "nesterov"):
        raise Refuse(f"Momentum mode {mode!r}")
    xs, gs, vs = _variables(node, 3)
    r, t = ctx.ref(node.input[0]), ctx.ref(node.input[1])
    # the gradient's coefficient is 1 at the first step (T = 0)
    beta_t = ctx.step(f"where({t} > 0, {lit(beta)}, 1.0)", "beta_adjusted")
    news, states = [], []
    for i, (x, g, v) in enumerate(zip(xs, gs, vs)):
        x, g, v = ctx.ref(x), ctx.ref(g), ctx.ref(v)
        reg = _regularized(ctx, norm, x, g, i)
        v_new = ctx.step(f"{lit(alpha)} * {v} + {beta_t} * {reg}", f"v_new_{i}")
        states.append(f"alias({v_new})")
        step = v_new if mode == "standard" else f"({reg} + {lit(alpha)} * {v_new})"
        news.append(f"{x} - {r} * {step}")
    return Outputs(news + states)


@training("Adam", composed=True)
def _adam(ctx, node, a):
    alpha, beta = a.get("alpha", 0.9), a.get("beta", 0.999)
    epsilon, norm, post = a.get("epsilon", 0.0), a.get("norm_coefficient", 0.0), a.get("norm_coefficient_post", 0.0)
    xs, gs, vs, hs = _variables(node, 4)
    r, t = ctx.ref(node.input[0]), ctx.ref(node.input[1])
    # bias correction from the first step on (T > 0); T = 0 keeps the rate (its 1 - alpha**0 would divide by 0:
    # the power is taken at T >= 1 so that the branch not taken has no infinity for a gradient to meet)
    t1 = ctx.step(f"clamp({t}, 1)", "t_at_least_1")
    rate = ctx.step(f"where({t} > 0, {r} * sqrt(1 - pow({lit(beta)}, {t1})) / (1 - pow({lit(alpha)}, {t1})), "
                    f"{r})", "rate")
    news, firsts, seconds = [], [], []
    for i, (x, g, v, h) in enumerate(zip(xs, gs, vs, hs)):
        x, g, v, h = ctx.ref(x), ctx.ref(g), ctx.ref(v), ctx.ref(h)
        reg = _regularized(ctx, norm, x, g, i)
        v_new = ctx.step(f"{lit(alpha)} * {v} + {lit(1 - alpha)} * {reg}", f"v_new_{i}")
        h_new = ctx.step(f"{lit(beta)} * {h} + {lit(1 - beta)} * ({reg} * {reg})", f"h_new_{i}")
        firsts.append(f"alias({v_new})")
        seconds.append(f"alias({h_new})")
        x_new = f"{x} - {rate} * ({v_new} / (sqrt({h_new}) + {lit(epsilon)}))"
        news.append(f"{lit(1 - post)} * ({x_new})" if post else x_new)
    return Outputs(news + firsts + seconds)

