"""agrad.library: register operators from outside agrad, through the dispatcher's
own registration path (as torch.library).

    import agrad
    from agrad import library

    library.define("myops::scale(Tensor x, float k) -> Tensor")
    # a kernel runs below Autograd, on tensors that may require grad: detach() to reach the data
    library.impl("myops::scale", "CPU", lambda x, k: agrad.tensor(x.detach().numpy() * k, dtype=x.dtype))
    # the Meta kernel (shapes and dtypes only) lets graph files check the op before running it
    library.impl("myops::scale", "Meta", lambda x, k: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
    library.register_autograd("myops::scale", lambda ctx, grad: (grad * ctx.k, None),
                              setup_context=lambda ctx, inputs, output: setattr(ctx, "k", inputs[1]))

    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = agrad.ops.myops.scale(x, 2.0)     # or library.op("myops::scale")(x, 2.0)
    y.sum().backward()
    assert y.tolist() == [2.0, 4.0] and x.grad.tolist() == [2.0, 2.0]
"""
from __future__ import annotations

from ._tensor import Tensor
from .autograd.function import BackwardCFunction
from .autograd.node import Node, collect_next_edges, record
from .watchers import unreplayable
from .dispatch_keys import AUTOGRAD
from .dispatcher import DispatchKey
from .dispatcher import dispatcher as _dispatcher
from .grad_mode import ExcludeDispatchKeyGuard

__all__ = ["define", "impl", "register_autograd", "op", "namespace"]

def define(schema: str, *, doc: str = ""):
    """Declare an operator `ns::name(...) -> ...`; returns its function."""
    if "::" not in schema.split("(")[0]:
        raise ValueError(f"library.define: the operator needs a namespace, e.g. 'myops::{schema.strip()}'")
    entry = _dispatcher.define(schema, doc=doc, _depth=3)
    return entry.function


def namespace(ns: str):
    """`agrad.ops.<ns>`: the operators defined in namespace `ns`, as OpOverloadPackets (callable)."""
    return _dispatcher.namespace(ns)


def op(name: str):
    return _dispatcher.get_op(name).function


def impl(name: str, key, fn):
    """Register `fn(*args)` (tensors in, tensors out) as the kernel of `name` for `key`.

    Below Autograd the kernel runs with Autograd excluded, as a backend kernel does in
    PyTorch, so ops it calls record nothing."""
    if key in ("CompositeImplicitAutograd", DispatchKey.CompositeImplicitAutograd):
        def kernel(op, keyset, args):
            unreplayable(f"{op.name} is a kernel registered through agrad.library")
            return fn(*args)          # a composite's ops record their own graph
    else:
        def kernel(op, keyset, args):
            unreplayable(f"{op.name} is a kernel registered through agrad.library")
            with ExcludeDispatchKeyGuard(AUTOGRAD):
                return fn(*args)
    _dispatcher.impl(name, key, kernel, _depth=3)
    return fn


class _OpBackward(BackwardCFunction):
    """The Node of a library op's call; named after the op, as `ScaleBackward`."""

    def __init__(self, entry, backward_fn):
        super().__init__(type(entry.name.split("::")[-1].capitalize(), (), {}))
        self._backward_fn = backward_fn

    def _backward(self, *grads):
        return self._backward_fn(self, *grads)


def register_autograd(name: str, backward, *, setup_context=None) -> None:
    """Give `name` a backward: `backward(ctx, *grads) -> one gradient per input`,
    `setup_context(ctx, inputs, output)` saves what backward needs (torch.library.register_autograd)."""
    _dispatcher.get_op(name)          # an unknown name fails here, with a "did you mean"

    def autograd_kernel(op, keyset, args):
        out = op.redispatch(keyset & ~AUTOGRAD, args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        node = _OpBackward(op, backward)
        node._input_positions = tuple(positions)
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        if not any(node.needs_input_grad):
            return out
        if setup_context is not None:
            setup_context(node, tuple(args), out)
        record(node, collect_next_edges(args[i] for i in positions), out if isinstance(out, tuple) else (out,))
        from .autograd.saved_variable import SavedVariable
        outs = {id(o) for o in (out if isinstance(out, tuple) else (out,))}
        node._saved = [None if t is None else SavedVariable(t, id(t) in outs) for t in node._to_save]
        return out
    _dispatcher.impl(name, DispatchKey.Autograd, autograd_kernel, _depth=3)


class _NotImplementedBackward(Node):
    """Autograd fallback for ops with no registered backward: fails only if a gradient is needed."""
    __slots__ = ("op_name",)

    def apply(self, grads):
        raise RuntimeError(f"the derivative for '{self.op_name}' is not implemented. Register one with "
                           f"agrad.library.register_autograd('{self.op_name}', backward).")


def _autograd_not_implemented(op, keyset, args):
    out = op.redispatch(keyset & ~AUTOGRAD, args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    node = _NotImplementedBackward()
    node.op_name = op.name
    record(node, collect_next_edges(tensors), out if isinstance(out, tuple) else (out,))
    return out


_dispatcher.register_fallback(DispatchKey.Autograd, _autograd_not_implemented)
