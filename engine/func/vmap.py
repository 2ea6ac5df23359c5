"""torch.func.vmap, with the argument handling and messages of PyTorch 2.13's torch/_functorch/vmap.py and
apis.py, computed by a loop.

agrad has no batching rules, so vmap does what PyTorch's own slow fallback does for an op without one,
for the whole function: it calls func once per index of the mapped dimension, on that slice of each
mapped input (unmapped inputs and kwargs as they are), and stacks the results along out_dims. The
numbers are exact (each sample is an ordinary agrad call) and every transform composes with it
(vmap(grad(f)), jacrev(vmap(f)), vmap(vmap(f))): slicing and stacking are differentiable ops, so
autograd and forward AD go through them. It costs one call of func per sample.

What a loop changes, and how PyTorch's semantics are kept:
- randomness: 'error' makes agrad's global generator refuse to draw while func runs (PyTorch's
  message); 'same' puts the generator back to its state on entry before each sample, so that every
  sample draws the same numbers; 'different' lets each sample draw its own.
- chunk_size is checked as PyTorch checks it; a loop already runs one sample at a time, and with
  'same' every chunk would see the same randomness as every sample does, so the results are those of
  PyTorch's chunked vmap.
- an output with out_dim None must not vary along the mapped dimension: PyTorch knows whether it is a
  BatchedTensor, the loop knows whether the samples gave the same tensor (or equal values).
- a mapped dimension of size 0 leaves no sample to call func on: an error, where PyTorch runs func on
  an empty batch.
- func runs as ordinary Python once per sample, so what PyTorch refuses inside vmap happens here:
  reading a value (`.item()`, data-dependent control flow), or an in-place op that writes a per-sample
  value into a tensor that is not mapped (a captured buffer; BatchNorm's running statistics, which
  replace_all_batch_norm_modules_ turns off), which the loop writes once per sample.
"""
from __future__ import annotations

import functools

import numpy as np

from .._tensor import Tensor
from .. import creation
from ..generator import draws_refused
from ..dispatcher import ops as _ops
from .pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """func mapped over a dimension of its inputs: in_dims says which dimension of each input (a pytree
    prefix of the arguments; None: not mapped), out_dims where the mapped dimension goes in each output.
    A loop over the mapped dimension (see the module's docstring)."""
    if randomness not in ["error", "different", "same"]:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims_is_int_or_int_pytree(out_dims, func)
        batch_size, flat_in_dims, flat_args, args_spec = _process_batched_inputs(in_dims, args, func)
        if batch_size == 0:
            raise ValueError(f"vmap({_get_name(func)}, ...): the mapped dimension has size 0, and agrad's vmap, a "
                             f"loop over it, has no sample to call {_get_name(func)} on")
        outputs = []
        with _Randomness(randomness) as per_sample:
            for i in range(batch_size):
                sliced = [arg if in_dim is None else arg.select(in_dim, i)
                          for arg, in_dim in zip(flat_args, flat_in_dims)]
                per_sample()
                outputs.append(func(*tree_unflatten(sliced, args_spec), **kwargs))
        return _stack_outputs(outputs, out_dims, func)

    return wrapped


def _get_name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _check_out_dims_is_int_or_int_pytree(out_dims, func) -> None:
    if isinstance(out_dims, int):
        return
    for x in tree_flatten(out_dims)[0]:
        if not (isinstance(x, int) or x is None):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
                             f"a python collection of ints representing where in the outputs the vmapped dimension "
                             f"should appear.")


def _process_batched_inputs(in_dims, args: tuple, func):
    """(batch size, in_dims flattened against args, args flattened, args' spec), with PyTorch's checks."""
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or "
                         f"a (potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_get_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                         f"are trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
                         f"the structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {args_spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an "
                             f"input but in_dim must be either an integer dimension or None.")
        if isinstance(in_dim, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an "
                             f"input but the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, "
                             f"please use None as the respective in_dim")
        if in_dim is not None and (in_dim < -arg.dim() or in_dim >= arg.dim()):
            raise ValueError(f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some "
                             f"input, but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    batch_sizes = [arg.size(in_dim) for in_dim, arg in zip(flat_in_dims, flat_args) if in_dim is not None]
    if len(batch_sizes) == 0:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != batch_sizes[0] for size in batch_sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{batch_sizes} for the mapped dimension")
    return batch_sizes[0], flat_in_dims, flat_args, args_spec


def _stack_outputs(outputs: list, out_dims, func):
    """The samples' outputs as one: each tensor leaf stacked at its out_dim (PyTorch's _unwrap_batched)."""
    name = _get_name(func)
    flat_first, output_spec = tree_flatten(outputs[0])
    flat_samples = [flat_first]
    for out in outputs[1:]:
        flat, spec = tree_flatten(out)
        if spec != output_spec:
            raise RuntimeError(f"vmap({name}, ...): `{name}` returned outputs of different structures for different "
                               f"samples ({output_spec} and {spec}); a vmapped function's output structure may not "
                               f"depend on the values of its inputs")
        flat_samples.append(flat)

    def incompatible_error():
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has "
                         f"structure {output_spec}.")

    if isinstance(outputs[0], Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_out_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_out_dims = list(out_dims)
        else:
            incompatible_error()
    else:
        flat_out_dims = broadcast_to_and_flatten(out_dims, output_spec)
        if flat_out_dims is None:
            incompatible_error()
    flat_outputs = []
    for k, out_dim in enumerate(flat_out_dims):
        samples = [flat[k] for flat in flat_samples]
        first = samples[0]
        if out_dim is None:
            if isinstance(first, Tensor) and not all(s is first or _same_value(s, first) for s in samples[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            flat_outputs.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. Did you "
                             "mean to set out_dims= to None for output?")
        flat_outputs.append(_ops.stack(samples, out_dim))
    return tree_unflatten(flat_outputs, output_spec)


def _same_value(a, b) -> bool:
    return (tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
            and bool(np.array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy(), equal_nan=True)))


class _Randomness:
    """The generator's behaviour for one vmap call; entering it gives what to call before each sample."""

    def __init__(self, randomness: str):
        self.randomness = randomness

    def __enter__(self):
        if self.randomness == "error":
            self.refused = draws_refused(_RANDOM_ERROR).__enter__()
            return lambda: None
        if self.randomness == "same":
            state = creation.get_rng_state()
            return lambda: creation.set_rng_state(state)
        return lambda: None

    def __exit__(self, *exc) -> None:
        if self.randomness == "error":
            self.refused.__exit__(*exc)
