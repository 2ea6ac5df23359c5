"""The dispatcher: registration, key sets, lookup order, errors; agrad.library."""
import numpy as np
import pytest

import agrad
from agrad import library
from agrad.dispatcher import DispatchKey, get_op, keyset_for
from agrad.grad_mode import ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard


def test_schema_is_parsed():
    schema = get_op("add").schema
    assert [a.name for a in schema.arguments] == ["self", "other", "alpha"]
    assert schema.arguments[2].kwarg_only and schema.arguments[2].default == 1
    assert str(schema) == "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"


def test_autograd_outranks_backend_and_no_grad_drops_it():
    op = get_op("mul")
    assert op.explain(keyset_for("cpu", True)) == "Autograd -> CPU"
    assert op.explain(keyset_for("cpu", False)) == "CPU"
    assert get_op("matmul").explain(keyset_for("cpu", True)) == "CompositeImplicitAutograd"
    assert get_op("eq").explain(keyset_for("cpu", True)) == "CPU"          # autograd falls through


def test_lookup_is_cached_per_key_set():
    op = get_op("add")
    agrad.ones(2) + 1
    ks = keyset_for("cpu", False)
    assert ks in op._cache and op._cache[ks] is op.dispatch_table[DispatchKey.CPU]


def test_thread_local_exclude_and_include():
    x = agrad.ones(2, requires_grad=True)
    with ExcludeDispatchKeyGuard(DispatchKey.Autograd):
        assert (x * 2).grad_fn is None
    with IncludeDispatchKeyGuard(DispatchKey.Meta):
        # Meta outranks nothing but is included: CPU still wins over Meta
        assert (agrad.ones(2) * 2).device.type == "cpu"


def test_duplicate_define_names_both_places():
    library.define("testns::twice(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=r"multiple times.*Duplicate registration: .*test_dispatcher.py:\d+\. "
                                           r"Original registration: .*test_dispatcher.py:\d+"):
        library.define("testns::twice(Tensor x) -> Tensor")


def test_missing_kernel_lists_the_keys_the_op_has():
    library.define("testns::cpu_only(Tensor x) -> Tensor")
    library.impl("testns::cpu_only", "CPU", lambda x: x * 2)
    with pytest.raises(NotImplementedError, match=r"Could not run 'testns::cpu_only' with arguments from the "
                                                  r"'Meta' backend.*only available for these backends: \[CPU\]"):
        library.op("testns::cpu_only")(agrad.empty([2], device="meta"))


def test_reregistering_a_kernel_warns():
    library.define("testns::again(Tensor x) -> Tensor")
    library.impl("testns::again", "CPU", lambda x: x)
    with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
        library.impl("testns::again", "CPU", lambda x: x * 1)


def test_library_op_with_registered_autograd():
    scale = library.define("myops::scale(Tensor x, float k) -> Tensor")
    library.impl("myops::scale", "CPU", lambda x, k: agrad.tensor(x.detach().numpy() * k, dtype=x.dtype))

    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    library.register_autograd("myops::scale", lambda ctx, grad: (grad * ctx.k, None), setup_context=setup_context)
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = scale(x, 3.0)
    assert y.grad_fn.name() == "ScaleBackward" and agrad.ops.myops.scale.op is scale
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_library_op_without_backward_fails_only_when_differentiated():
    library.define("testns::nograd(Tensor x) -> Tensor")
    library.impl("testns::nograd", "CPU", lambda x: x * 2)
    fn = library.op("testns::nograd")
    assert fn(agrad.ones(2)).requires_grad is False
    y = fn(agrad.ones(2, requires_grad=True)).sum()
    with pytest.raises(RuntimeError, match="the derivative for 'testns::nograd' is not implemented"):
        y.backward()


def test_composite_library_op_gets_its_gradient_from_the_ops_it_calls():
    library.define("testns::square_plus(Tensor x, Tensor y) -> Tensor")
    library.impl("testns::square_plus", "CompositeImplicitAutograd", lambda x, y: x * x + y)
    x = agrad.tensor(3.0, requires_grad=True)
    library.op("testns::square_plus")(x, agrad.tensor(1.0)).backward()
    assert x.grad.item() == 6.0


def test_op_functions_bind_arguments_like_python():
    x = agrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert agrad.sum(x, dim=1).tolist() == [3.0, 7.0]
    assert x.sum(1, keepdim=True).shape == (2, 1)
    assert agrad.add(x, x, alpha=2).tolist() == [[3.0, 6.0], [9.0, 12.0]]
    with pytest.raises(TypeError):
        agrad.add(x)
    with pytest.raises(TypeError, match="argument 'mat2' must be Tensor, not str"):
        agrad.mm(x, "nope")


def test_a_kernel_registered_later_is_used_below_autograd_too():
    """Re-registering a backend kernel must reach calls that come through Autograd (no stale cache)."""
    import warnings
    from agrad.dispatcher import impl

    entry = get_op("neg")
    original = entry.dispatch_table[DispatchKey.CPU]
    x = agrad.tensor([1.0], requires_grad=True)
    assert agrad.neg(x).tolist() == [-1.0]               # the Autograd -> CPU path is cached now
    try:
        with pytest.warns(UserWarning, match="Overriding"):
            library.impl("neg", "CPU", lambda self: agrad.tensor(self.detach().numpy() * -3))
        y = agrad.neg(x)
        assert y.tolist() == [-3.0] and y.grad_fn.name() == "NegBackward0"
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            impl("neg", "CPU", original)
    assert agrad.neg(x).tolist() == [-1.0]
