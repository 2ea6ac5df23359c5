"""nn.Module.register_full_backward_hook / register_full_backward_pre_hook (PyTorch's BackwardHook): the
gradients with respect to a module's outputs and inputs, seen and replaced; this file passes unchanged on
torch 2.13 with `import torch as agrad`."""
from __future__ import annotations

import numpy as np
import pytest

import agrad


def test_a_modules_full_backward_hooks_see_and_replace_its_gradients():
    lin = agrad.nn.Linear(3, 2)
    seen = []

    def pre(module, grad_output):
        seen.append(("pre", module is lin, [g.shape for g in grad_output]))
        return (grad_output[0] * 2,)              # the gradient with respect to the output, doubled

    def post(module, grad_input, grad_output):
        seen.append(("post", [None if g is None else g.shape for g in grad_input], grad_output[0].tolist()))
        return (grad_input[0] * 10,)

    h1, h2 = lin.register_full_backward_pre_hook(pre), lin.register_full_backward_hook(post)
    x = agrad.ones(4, 3, requires_grad=True)
    lin(x).sum().backward()
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.tile(w.sum(0) * 2 * 10, (4, 1)), rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.full((2, 3), 8.0))        # the doubled output gradient
    assert seen[0] == ("pre", True, [(4, 2)]) and seen[1][0] == "post" and seen[1][1] == [(4, 3)]
    assert seen[1][2] == [[2.0, 2.0]] * 4
    h1.remove(); h2.remove()
    x.grad = None
    lin(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.tile(w.sum(0), (4, 1)), rtol=1e-6)


def test_a_module_whose_input_needs_no_gradient_still_calls_its_hook():
    lin = agrad.nn.Linear(3, 2)
    calls = []
    lin.register_full_backward_hook(lambda m, gi, go: calls.append((gi, go[0].shape)))
    lin(agrad.ones(1, 3)).sum().backward()
    assert calls == [((None,), (1, 2))]
    lin.register_full_backward_hook(lambda m, gi, go: (agrad.ones(1, 3),))
    with pytest.raises(RuntimeError, match="where no input requires gradient should always return None"):
        lin(agrad.ones(1, 3)).sum().backward()
