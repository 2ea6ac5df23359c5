"""torch.autograd.backward and torch.autograd.grad (torch/autograd/__init__.py): turn tensors into root edges and
output edges, with PyTorch's checks and messages, and run the engine."""
from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from .._tensor import Size, Tensor, filled
from ..dispatch_keys import PYTHON
from ..dispatcher import ops as _ops
from ..memory_formats import preserve_format
from ..overrides import handle_torch_function, has_torch_function, is_tensor_like
from .edge import Edge, GradientEdge
from .engine import get_default_engine
from .node import Node, gradient_edge

__all__ = ["backward", "grad"]


def _as_tuple(x, what: str) -> tuple:
    if isinstance(x, (Tensor, GradientEdge)):         # (a GradientEdge is a tuple, of a Node and a number)
        return (x,)
    if isinstance(x, (list, tuple)):
        return tuple(x)
    if x is None:
        return (None,)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _make_grads(outputs, grads, is_grads_batched=False) -> list:
    """One root gradient per output (zip: extra grads are ignored, missing ones fail in _check_counts);
    batched, each gradient has a batch dim first. An output may be a GradientEdge: its shape, dtype and
    device are those its Node expects of the gradient (`input_metadata`)."""
    new_grads = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, GradientEdge):
            if isinstance(g, Tensor) and is_grads_batched:
                raise RuntimeError("Batched grads are not supported with GradientEdge")
            out = _EdgeOutput(*out.node.input_metadata[out.output_nr])
        if isinstance(g, Tensor) and is_grads_batched:
            # NOTE: PyTorch's message shows the shape without its first two dims (it strips the batch dim
            # from grad_output[0], which has none): so does agrad's
            if g.shape[1:] != out.shape:
                raise RuntimeError(
                    f"If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                    f"dimension. The sizes of the remaining dimensions are expected to match the shape of "
                    f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
                    f"{g.shape[2:]} and output[{i}] has a shape of {out.shape}. If you only want some tensors in "
                    f"`grad_output` to be considered batched, consider using vmap.")
            new_grads.append(g)
        elif isinstance(g, Tensor):
            if g.shape != out.shape:
                # NOTE: the shapes as str() prints them, as PyTorch's message does (torch.Size there)
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                                   f"output[{i}] has a shape of {out.shape}.")
            if (out._data.dtype.kind == "c") != g.is_complex():
                # NOTE: only complex against real is refused (torch's _make_grads); the engine's
                # validate_outputs casts a float gradient to its output's float dtype
                raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the "
                                   f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                                   f"output[{i}] has a dtype of {out.dtype}.")
            new_grads.append(g)
        elif g is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.is_floating_point():
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype!r}")
                if isinstance(out, Tensor) and out._keys & PYTHON:
                    # a subclass with a __torch_dispatch__ makes its own (torch's _make_grads: ones_like)
                    new_grads.append(_ops.ones_like(out, memory_format=preserve_format))
                else:
                    new_grads.append(filled(out.shape, 1, out._data.dtype, out._device))
            else:
                new_grads.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return new_grads


class _EdgeOutput:
    """A GradientEdge as _make_grads reads an output: the shape, dtype and device of its gradient."""
    __slots__ = ("shape", "_data", "_device")
    requires_grad = True

    def __init__(self, shape, dtype, device):
        self.shape = Size(shape)
        self._data = np.empty(0, dtype)     # (only its dtype is read)
        self._device = device

    def numel(self) -> int:
        return int(np.prod(self.shape))

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    @property
    def dtype(self):
        return dtypes.from_numpy(self._data.dtype)


def _check_counts(tensors, grads) -> None:
    if len(tensors) != len(grads):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")


def _root_edges(tensors) -> list[Edge]:
    edges = []
    for i, t in enumerate(tensors):
        if isinstance(t, GradientEdge):
            edges.append(Edge(t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"element {i} of tensors is not a Tensor but {type(t).__name__}")
        edge = gradient_edge(t)
        if edge.function is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(edge)
    return edges


def _output_edges(inputs, accumulate_grad: bool) -> list[Edge]:
    edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            edges.append(Edge(t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors or GradientEdges, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        meta = t._autograd_meta
        if meta.grad_fn is not None:
            if accumulate_grad:
                t.retain_grad()
            edges.append(Edge(meta.grad_fn, meta.output_nr))
        else:
            ref = meta.grad_accumulator
            acc = ref() if ref is not None else None
            # a leaf no op has used has no accumulator: nothing can reach it
            edges.append(Edge(acc if acc is not None else _Unreachable(), 0))
    return edges


class _Unreachable(Node):
    """Stands for a leaf that no graph uses (PyTorch's Identity placeholder)."""
    __slots__ = ()


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    tensors = _as_tuple(tensors, "tensors")
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    else:
        grad_tensors = list(_as_tuple(grad_tensors, "grad_tensors"))
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs, "inputs")
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(tensors, grad_tensors)
    _check_counts(tensors, grads)
    roots = _root_edges(tensors)
    outputs = _output_edges(inputs, accumulate_grad=True) if inputs is not None else None
    get_default_engine().execute(roots, grads, retain_graph, create_graph, True, outputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False) -> tuple:
    """torch.autograd.grad. With `is_grads_batched`, the first dim of each grad_output is a batch: the
    result is the gradient for each of them, stacked (PyTorch vmaps one backward over the batch; agrad
    runs one backward per batch entry, keeping the graph until the last)."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use agrad.autograd.backward.", FutureWarning,
                      stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    overridable = tuple(t for group in (outputs, inputs) for t in (group if isinstance(group, (tuple, list))
                                                                   else (group,)) if is_tensor_like(t))
    if has_torch_function(overridable):         # (torch.autograd.grad's: a subclass's handler gives its grads)
        return handle_torch_function(grad, overridable, outputs, inputs, grad_outputs=grad_outputs,
                                     retain_graph=retain_graph, create_graph=create_graph, only_inputs=only_inputs,
                                     allow_unused=allow_unused, is_grads_batched=is_grads_batched,
                                     materialize_grads=materialize_grads)
    outputs = _as_tuple(outputs, "outputs")
    inputs = _as_tuple(inputs, "inputs")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = list(_as_tuple(grad_outputs, "grad_outputs"))
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grad_outputs, is_grads_batched)
    _check_counts(outputs, grads)
    roots = _root_edges(outputs)
    out_edges = _output_edges(inputs, accumulate_grad=False)
    if is_grads_batched:
        result = _batched(roots, grads, retain_graph, create_graph, out_edges)
    else:
        result = get_default_engine().execute(roots, grads, retain_graph, create_graph, False, out_edges)
    for i, g in enumerate(result):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   f"graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                # NOTE: zeros_like(input, requires_grad=create_graph): a leaf that can be differentiated again
                t = inputs[i]
                if isinstance(t, GradientEdge):
                    raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
                result[i] = filled(t.shape, 0, t._data.dtype, t._device).requires_grad_(create_graph)
    return tuple(result)


def _batched(roots, grads, retain_graph, create_graph, out_edges) -> list:
    """One backward per batch entry of the gradients; each input's results stacked (None stays None)."""
    sizes = sorted({g.shape[0] for g in grads if g is not None})
    if len(sizes) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{[g.shape[0] for g in grads if g is not None]} for the mapped dimension")
    n = sizes[0] if sizes else 0
    engine = get_default_engine()
    per_entry = [engine.execute(roots, [g[b] if g is not None else None for g in grads],
                                retain_graph if b == n - 1 else True, create_graph, False, out_edges)
                 for b in range(n)]
    result = []
    for i in range(len(out_edges)):
        column = [r[i] for r in per_entry]
        result.append(None if not column or any(c is None for c in column) else _ops.stack(column, 0))
    return result
