"""torch.compile scenarios, each a function of the library (torch or agrad) returning plain data: compiled functions
and modules with backend="eager" (their results, gradients and state_dict keys against the uncompiled ones, the
wrapper's attributes, OptimizedModule's forwarding, pickling), Module.compile, torch.compiler's functions and
stances, and every argument check's exception and message. make_compile_reference.py records PyTorch's answers in
compile_scenarios.json; tests/engine/test_compile.py runs them with agrad and compares.
"""
from __future__ import annotations

import copy
import logging
import math
import pickle


def _text(text: str) -> str:
    """A message in agrad's words: torch's names are agrad's (torch._dynamo's list_backends is agrad.compiler's),
    and only the first paragraph counts (torch adds its TORCHDYNAMO_VERBOSE advice after a blank line)."""
    text = text.split("\n\n")[0]
    return (text.replace("torch._dynamo.list_backends", "agrad.compiler.list_backends")
            .replace("a torch.compile", "an agrad.compile").replace("torch", "agrad"))


def _error(fn) -> list:
    """What calling fn raised: its builtin class (agrad's error classes derive from torch's builtin ones) and text."""
    try:
        fn()
    except Exception as exc:    # noqa: BLE001 — the exception is the answer
        return [next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"), _text(str(exc))]
    return ["no error", ""]


def _r(lib, *shape):
    """Values in [0, 1) that both libraries make alike (their random streams differ)."""
    n = math.prod(shape)
    return ((lib.arange(n, dtype=lib.float32) * 0.618034 + 0.1) % 1).reshape(shape)


def _values(t) -> list:
    return [round(v, 5) for v in t.detach().reshape(-1).tolist()]


def _model(lib):
    """A user-defined module (a Linear, a BatchNorm1d, a buffer) with deterministic weights."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 3)
            self.bn = lib.nn.BatchNorm1d(3)
            self.register_buffer("scale", lib.tensor([2.0]))

        def forward(self, x):
            return self.bn(self.fc(x)).tanh() * self.scale

    net = Net()
    with lib.no_grad():
        net.fc.weight.copy_(_r(lib, 3, 4) - 0.5)
        net.fc.bias.copy_(_r(lib, 3) - 0.5)
    return net


def _grads(lib, module, x):
    module.zero_grad()
    x = x.detach().requires_grad_(True)
    out = module(x)
    out.pow(2).sum().backward()
    return out, x.grad, [p.grad.clone() for p in module.parameters()]


def compiled_function(lib):
    """A compiled function: its result and gradient against the eager ones, bit for bit; what the wrapper is."""
    def f(x, y=1.0):
        "doc of f"
        return (x.sin() * 2 + y).exp().sum()

    cf = lib.compile(f, backend="eager")
    x = _r(lib, 2, 3).requires_grad_(True)
    eager = f(x)
    (eager_grad,) = lib.autograd.grad(eager, x)
    compiled = cf(x, y=0.5 + 0.5)
    (compiled_grad,) = lib.autograd.grad(compiled, x)

    @lib.compile
    def bare(t):
        return t + 1

    @lib.compile(backend="eager", fullgraph=True, dynamic=False)
    def with_args(t):
        return t + 1

    decorator = lib.compile(backend="eager")
    again = lib.compile(cf, backend="eager")
    return {"equal": bool(lib.equal(compiled, eager)), "grad_equal": bool(lib.equal(compiled_grad, eager_grad)),
            "value": _values(compiled), "name": cf.__name__, "qualname": cf.__qualname__.split(".")[-1],
            "doc": cf.__doc__, "wrapped": cf.__wrapped__ is f, "orig_callable": cf._torchdynamo_orig_callable is f,
            "wrapper_id": cf._torchdynamo_wrapper_id == id(cf), "is_torch_compile": cf._is_torch_compile,
            "compiler_config": cf.get_compiler_config(), "inline": cf._torchdynamo_inline is f,
            "bare": [bare.__name__, _values(bare(lib.ones(2)))], "with_args": with_args.__name__,
            "decorator": [decorator.__name__, decorator.__qualname__, decorator(f).__name__],
            "nested_unwraps_to_f": again.__wrapped__ is f, "nested_is_new": again is not cf,
            "callable_object": type(lib.compile(lib.nn.ReLU().forward, backend="eager")).__name__,
            "lambda": lib.compile(lambda t: t * 3, backend="eager").__name__,
            "default_backend_runs": _values(lib.compile(f)(x))}


def argument_errors(lib):
    """Each argument check, in torch's order: the exception class and message, or that none was raised."""
    def f(x):
        return x + 1

    x = lib.ones(2)
    options = {"guard_filter_fn": None, "use_aoti": False, "trace.enabled": True}
    lib.compile(f, backend="eager", options=options)
    return {
        "mode_and_options": _error(lambda: lib.compile(f, mode="default", options={})),
        "mode_and_options_eager": _error(lambda: lib.compile(f, backend="eager", mode="default", options={})),
        "unknown_mode_inductor": _error(lambda: lib.compile(f, mode="fastest")),
        "unknown_mode_eager": _error(lambda: lib.compile(f, backend="eager", mode="fastest")(x)),
        "inductor_modes": [_error(lambda m=m: lib.compile(f, mode=m)) for m in
                           ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")],
        "unknown_backend": _error(lambda: lib.compile(f, backend="nope")),
        "unknown_backend_disabled": _error(lambda: lib.compile(f, backend="nope", disable=True)),
        "unknown_backend_decorator": _error(lambda: lib.compile(backend="nope")),
        "non_callable_backend_compiles": _error(lambda: lib.compile(f, backend=3)),
        "non_callable_backend_call": _error(lambda: lib.compile(f, backend=3)(x)),
        "model_none_through_decorator": _error(lambda: lib.compile(backend="eager")(None)),
        "model_not_callable": _error(lambda: lib.compile(3, backend="eager")),
        "model_str": _error(lambda: lib.compile("f", backend="eager")),
        "model_not_callable_disabled": _error(lambda: lib.compile(3, backend="eager", disable=True)),
        "dynamic_not_bool": _error(lambda: lib.compile(f, backend="eager", dynamic="yes")),
        "dynamic_not_bool_disabled": _error(lambda: lib.compile(f, backend="eager", dynamic="yes", disable=True)),
        "disable_gives_the_model": lib.compile(f, backend="eager", disable=True) is f,
        "options_left_in_the_callers_dict": sorted(options),
        "positional_backend": _error(lambda: lib.compile(f, "eager")),
    }


def optimized_module(lib):
    """lib.compile(module): an OptimizedModule holding the module as `_orig_mod`."""
    net = _model(lib)
    compiled = lib.compile(net, backend="eager")
    seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
    compiled_seq = lib.compile(seq, backend="eager")
    out = {"type": type(compiled).__name__, "orig_mod": compiled._orig_mod is net, "repr": repr(compiled),
           "state_dict": list(compiled.state_dict()), "parameters": [n for n, _ in compiled.named_parameters()],
           "buffers": [n for n, _ in compiled.named_buffers()], "modules": [n for n, _ in compiled.named_modules()],
           "children": [n for n, _ in compiled.named_children()], "own_parameters": list(compiled._parameters),
           "own_modules": list(compiled._modules), "attribute_is_the_originals": compiled.fc is net.fc,
           "parameter_is_the_originals": compiled.fc.weight is net.fc.weight, "buffer": _values(compiled.scale),
           "forward": compiled.forward.__name__, "ctx": type(compiled.dynamo_ctx).__name__,
           "compiler_config": compiled.get_compiler_config(), "len_sequential": len(compiled_seq),
           "len_error": _error(lambda: len(compiled)), "missing": _error(lambda: compiled.nope),
           "orig_callable": compiled._torchdynamo_orig_callable == net.forward,
           "in_dir": ["fc" in dir(compiled), "_orig_mod" in dir(compiled)],
           "is_torch_compile_on_the_original": getattr(net, "_is_torch_compile", None)}
    compiled.eval()
    out["eval"] = [compiled.training, net.training, net.bn.training]
    net.train()
    out["train_mirrored"] = compiled.training
    compiled.extra = 3
    out["set_goes_to_original"] = [net.extra, "extra" in compiled.__dict__]
    del compiled.extra
    out["del_goes_to_original"] = hasattr(net, "extra")
    compiled.training = False
    out["training_set"] = net.training
    net.train()
    return out


def optimized_module_values(lib):
    """The compiled module's outputs and gradients against the module's own, bit for bit, in train and eval."""
    x = _r(lib, 5, 4)
    result = {}
    for mode in ("train", "eval"):
        net = _model(lib)
        getattr(net, mode)()
        eager_out, eager_xgrad, eager_grads = _grads(lib, net, x)
        compiled = lib.compile(net, backend="eager")
        out, xgrad, grads = _grads(lib, compiled, x)
        result[mode] = {"equal": bool(lib.equal(out, eager_out)), "x_grad_equal": bool(lib.equal(xgrad, eager_xgrad)),
                        "grads_equal": [bool(lib.equal(a, b)) for a, b in zip(grads, eager_grads)],
                        "out": _values(out), "running_mean": _values(net.bn.running_mean)}
    return result


def optimized_module_state_dict(lib):
    """Its state_dict keys are `_orig_mod.`-prefixed, load_state_dict takes them (not the module's own)."""
    net = _model(lib)
    compiled = lib.compile(net, backend="eager")
    sd = compiled.state_dict()
    other = lib.compile(_model(lib), backend="eager")
    with lib.no_grad():
        other._orig_mod.fc.weight.mul_(0)
    loaded = other.load_state_dict(sd)
    return {"keys": list(sd), "loaded": repr(loaded), "weights_equal": bool(lib.equal(other.fc.weight, net.fc.weight)),
            "original_keys_refused": _error(lambda: compiled.load_state_dict(net.state_dict())),
            "into_original_non_strict": repr(net.load_state_dict(sd, strict=False)),
            "original_loads_stripped": repr(net.load_state_dict({k[len("_orig_mod."):]: v for k, v in sd.items()}))}


def optimized_module_copies(lib):
    """Pickling and deepcopy rebuild an OptimizedModule from a copy of the module and the context."""
    net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3))    # (a local class would not pickle)
    compiled = lib.compile(net, backend="eager")
    x = _r(lib, 2, 4)
    net.eval()
    back = pickle.loads(pickle.dumps(compiled))
    deep = copy.deepcopy(compiled)
    return {"pickled": [type(back).__name__, type(back.dynamo_ctx).__name__, back._orig_mod is net,
                        list(back.state_dict()), bool(lib.equal(back.eval()(x), compiled(x)))],
            "deepcopied": [type(deep).__name__, deep._orig_mod is net, bool(lib.equal(deep.eval()(x), compiled(x)))]}


def module_compile_in_place(lib):
    """Module.compile: the module stays itself (its state_dict keys too) and calls the compiled _call_impl."""
    net = _model(lib)
    x = _r(lib, 3, 4)
    eager_out, eager_xgrad, eager_grads = _grads(lib, net, x)
    returned = net.compile(backend="eager")
    out, xgrad, grads = _grads(lib, net, x)
    impl = net._compiled_call_impl
    plain = lib.nn.Linear(2, 2)
    plain.compile(backend="eager")
    copies = [pickle.loads(pickle.dumps(plain))._compiled_call_impl, copy.deepcopy(plain)._compiled_call_impl,
              copy.deepcopy(net)._compiled_call_impl]
    plain = lib.nn.Linear(2, 2)
    return {"returned": returned, "type": type(net).__name__, "keys": list(net.state_dict()),
            "impl": [impl.__name__, impl._is_torch_compile], "equal": bool(lib.equal(out, eager_out)),
            "x_grad_equal": bool(lib.equal(xgrad, eager_xgrad)),
            "grads_equal": [bool(lib.equal(a, b)) for a, b in zip(grads, eager_grads)],
            "copies_uncompiled": copies, "plain_uncompiled": plain._compiled_call_impl,
            "unknown_backend": _error(lambda: plain.compile(backend="nope")),
            "mode_and_options": _error(lambda: plain.compile(mode="default", options={})),
            "still_uncompiled": plain._compiled_call_impl, "repr": repr(plain)}


def disable(lib):
    """torch.compiler.disable: a wrapper (or a decorator) that keeps a function out of compiled regions."""
    def f(x):
        "doc"
        return x + 1

    def attributes(w):
        return sorted(k for k in vars(w) if k.startswith("_torchdynamo") or k == "__wrapped__")

    d = lib.compiler.disable(f)
    nonrecursive = lib.compiler.disable(f, recursive=False)
    bare_decorator = lib.compiler.disable()

    @lib.compiler.disable
    def g(x):
        return x

    @lib.compiler.disable(recursive=False, reason="why")
    def h(x):
        return x

    net = _model(lib)
    disabled = lib.compiler.disable(net)
    x = _r(lib, 2, 4)
    return {"recursive": [d.__name__, d.__doc__, d.__wrapped__ is f, attributes(d), d._torchdynamo_disable_recursive,
                          d._torchdynamo_disable_msg],
            "nonrecursive": [nonrecursive.__name__, attributes(nonrecursive),
                             nonrecursive._torchdynamo_disable_recursive],
            "decorators": [g.__name__, h.__name__, h._torchdynamo_disable_msg, type(bare_decorator).__name__,
                           bare_decorator(f).__name__],
            "values": [_values(d(lib.ones(2))), _values(nonrecursive(lib.ones(2)))],
            "not_callable": [_error(lambda: lib.compiler.disable(3)),
                             _error(lambda: lib.compiler.disable(3, recursive=False))],
            "module": [type(disabled).__name__, type(disabled.dynamo_ctx).__name__, list(disabled.state_dict()),
                       bool(lib.equal(disabled.eval()(x), net.eval()(x)))],
            "compiled_then_disabled": lib.compiler.disable(lib.compile(f, backend="eager")).__wrapped__ is f,
            "inside_compiled": _values(lib.compile(lambda t: d(t) * 2, backend="eager")(lib.ones(2)))}


def compiler_functions(lib):
    """torch.compiler's other functions, outside any compiled region."""
    def f(x):
        return x

    marked = lib.compiler.assume_constant_result(f)
    before = lib.compiler.get_default_backend()
    lib.compiler.set_default_backend("eager")
    changed = lib.compiler.get_default_backend()
    lib.compiler.set_default_backend(None)
    return {"is_compiling": [lib.compiler.is_compiling(), lib.compiler.is_dynamo_compiling(),
                             lib.compiler.is_exporting()],
            "reset": lib.compiler.reset(), "mark_step": lib.compiler.cudagraph_mark_step_begin(),
            "allow_in_graph": [lib.compiler.allow_in_graph(f) is f,
                               [g is f for g in lib.compiler.allow_in_graph([f, f])],
                               type(lib.compiler.allow_in_graph((f,))).__name__,
                               _error(lambda: lib.compiler.allow_in_graph(3))],
            "assume_constant_result": [marked is f, f._dynamo_marked_constant,
                                       _error(lambda: lib.compiler.assume_constant_result(3))],
            "list_backends": lib.compiler.list_backends(), "list_backends_all": lib.compiler.list_backends(None),
            "list_backends_no_tags": lib.compiler.list_backends(exclude_tags=()),
            "list_backends_debug_excluded": lib.compiler.list_backends(("debug",)),
            "default_backend": [before, changed, lib.compiler.get_default_backend()],
            "set_default_backend_bad": _error(lambda: lib.compiler.set_default_backend(3)),
            "compiler_compile": lib.compiler.compile(f, backend="eager").__wrapped__ is f}


def stances(lib):
    """torch.compiler.set_stance: as a call, a context manager and a decorator; the stance is judged at the call."""
    def f(x):
        return x * 2

    x = lib.ones(2)
    broken = lib.compile(f, backend=3)
    out = {"type": type(lib.compiler.set_stance("default")).__name__,
           "force_backend_with_non_default": _error(lambda: lib.compiler.set_stance("force_eager",
                                                                                     force_backend="eager"))}
    lib.compiler.set_stance("force_eager")
    out["force_eager_skips_the_backend"] = _values(broken(x))
    lib.compiler.set_stance("eager_on_recompile")
    out["eager_on_recompile_skips_the_backend"] = _values(broken(x))
    lib.compiler.set_stance("default")
    out["default_consults_it"] = _error(lambda: broken(x))
    with lib.compiler.set_stance("force_eager"):
        out["in_block"] = _values(broken(x))
    out["after_block"] = _error(lambda: broken(x))

    @lib.compiler.set_stance("force_eager")
    def run():
        return _values(broken(x))

    out["decorated"] = [run(), run.__name__, _error(lambda: broken(x))]
    lib.compiler.set_stance("bogus")
    out["unknown_stance_at_call"] = _error(lambda: lib.compile(f, backend="eager")(x))
    lib.compiler.set_stance("default", force_backend="nope")
    out["unknown_forced_backend_at_call"] = _error(lambda: lib.compile(f, backend="eager")(x))
    lib.compiler.set_stance("default", force_backend="eager")
    out["forced_backend_replaces_the_broken_one"] = _values(broken(x))
    lib.compiler.set_stance("default")
    return out


def compiled_class(lib):
    """Compiling a class wraps its __call__ (and a Module's _call_impl); instances run as before."""
    class Net(lib.nn.Module):
        def forward(self, x):
            return x * 3

    same = lib.compile(Net, backend="eager")
    return {"same_class": same is Net, "call_name": Net.__call__.__name__,
            "values": _values(Net()(lib.ones(2))), "is_torch_compile": Net._is_torch_compile}


def lazy_module(lib):
    """A lazy module compiled before its first call infers its parameters on that call."""
    compiled = lib.compile(lib.nn.LazyLinear(3), backend="eager")
    out = compiled(lib.ones(2, 5))
    return {"forward": compiled.forward.__name__, "shape": list(out.shape),
            "keys": list(compiled.state_dict()), "weight_shape": list(compiled.weight.shape)}


def eager_backend_log(lib):
    """The eager backend logs (a warning) that it ignores the mode or options it is given."""
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    # (torch's log records stop at torch._dynamo, which has its own handler; agrad's reach the package's logger)
    logger = logging.getLogger("torch._dynamo" if lib.__name__ == "torch" else lib.__name__)
    handler = Keep(level=logging.WARNING)
    logger.addHandler(handler)
    try:
        lib.compile(lambda t: t + 1, backend="eager", mode="max-autotune")(lib.ones(1))
        lib.compile(lambda t: t + 1, backend="eager", options={"a": 1})(lib.ones(1))
        lib.compile(lambda t: t + 1, backend="eager")(lib.ones(1))
    finally:
        logger.removeHandler(handler)
    return [m for m in records if "ignoring" in m]


SCENARIOS = {fn.__name__: fn for fn in (
    compiled_function, argument_errors, optimized_module, optimized_module_values, optimized_module_state_dict,
    optimized_module_copies, module_compile_in_place, disable, compiler_functions, stances, compiled_class,
    lazy_module, eager_backend_log)}
