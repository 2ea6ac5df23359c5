"""Activation checkpointing, as torch.utils.checkpoint (PyTorch 2.13's torch/utils/checkpoint.py).

A checkpointed function keeps none of the tensors its ops save for backward: backward runs the
function again to get them. Two variants, as PyTorch's:
- reentrant (use_reentrant=True): CheckpointFunction, a custom Function whose forward runs the
  function under no_grad and whose backward runs it again with grad on and calls
  autograd.backward on the recomputed outputs (a backward inside a backward: "reentrant");
- non-reentrant (use_reentrant=False): saved_tensors_hooks whose pack hook keeps a placeholder
  (_Holder) and whose unpack hook, on the first unpack of a backward pass, runs the function
  again under a second hook that collects the tensors it saves (NOTE [ Nestable Checkpoint ]).
Both restore the global generator's state for the recomputation (preserve_rng_state), so that
dropout draws the same mask twice.

Selective activation checkpointing (create_selective_checkpoint_contexts, a non-reentrant
checkpoint's context_fn) is PyTorch's too: two dispatch modes (utils/_python_dispatch.py) share one
storage; in the forward the caching mode asks the policy about every op call and keeps the outputs of
those to save, and in the recomputation the cached mode hands them back instead of running the op.

Left out, because agrad has no counterpart: per-device generator states (agrad draws every random
number from one host generator, see agrad.random, so get_device_states/set_device_states have
nothing to save), autocast (agrad has no autocast), torch.compile (the dynamo guards, _is_compiling,
and SAC's graph annotations and inductor storage keys). debug=True logs the ops through agrad's op
observers (agrad.watchers) instead of PyTorch's LoggingTensorMode.
"""
from __future__ import annotations

import contextlib
import enum
import os
import threading
import traceback
import uuid
import warnings
import weakref
from collections import defaultdict

from .. import watchers
from .._tensor import Tensor
from ..autograd import _current_graph_task_id, _is_checkpoint_valid
from ..autograd import backward as _autograd_backward
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
from ..autograd.saved_variable import SavedVariable
from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from ..dispatcher import namespace as _op_namespace
from ..random import fork_rng, get_rng_state, set_rng_state
from ._python_dispatch import TorchDispatchMode

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "DefaultDeviceType",
    "set_checkpoint_debug_enabled",
    "GraphExecGroup",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
]

_DEFAULT_DETERMINISM_MODE = "default"

_checkpoint_debug_enabled: bool | None = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within the block, every checkpoint's `debug` is `enabled` (None: each checkpoint's own)."""
    global _checkpoint_debug_enabled
    try:
        prev = _checkpoint_debug_enabled
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of `inputs` detached, keeping its requires_grad: the leaves the reentrant
    recomputation differentiates with respect to."""
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, Tensor):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError(
        f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type checkpoint names when no argument is off the CPU (PyTorch's current
    accelerator). agrad restores one generator whatever the devices, so the type only keeps
    PyTorch's API: "cpu" until set."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def _tensors_in(args):
    """The tensors in `args` and in the lists, tuples and dicts nested in them (tree_map's leaves)."""
    stack = list(reversed(args))
    while stack:
        arg = stack.pop()
        if isinstance(arg, Tensor):
            yield arg
        elif isinstance(arg, (list, tuple)):
            stack.extend(reversed(arg))
        elif isinstance(arg, dict):
            stack.extend(reversed(list(arg.values())))


def _infer_device_type(*args) -> str:
    device_types = [t.device.type for t in _tensors_in(args) if t.device.type != "cpu"]
    device_types_set = set(device_types)
    if len(device_types_set) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of devices. "
            "Device state will only be saved for devices of a single device type, and the remaining "
            "devices will be ignored. Consequently, if any checkpointed functions involve randomness, "
            "this may result in incorrect gradients. (Note that if CUDA devices are among the devices "
            "detected, it will be prioritized; otherwise, the first device encountered will be selected.)"
            f"\nDevice types: {sorted(device_types_set)} first device type: {device_types[0]}", stacklevel=2)
    if len(device_types) == 0:
        return DefaultDeviceType.get_device_type()
    if "cuda" in device_types_set:
        return "cuda"
    return device_types[0]


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.device_type = _infer_device_type(*args)
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()

        # Non-tensor inputs are kept in ctx, with a None in place of each tensor, which
        # save_for_backward keeps (and backward puts back).
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)

        ctx.save_for_backward(*tensor_inputs)

        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        tensor_indices = ctx.tensor_indices
        tensors = ctx.saved_tensors
        for i, idx in enumerate(tensor_indices):
            inputs[idx] = tensors[i]

        # The recomputation draws what the forward drew; the caller's generator state is put
        # back afterwards, as if nothing had been drawn.
        with fork_rng(enabled=ctx.preserve_rng_state, device_type=ctx.device_type):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)

        if isinstance(outputs, Tensor):
            outputs = (outputs,)

        # backward() only through the outputs that require grad, each with its incoming gradient
        outputs_with_grad = []
        args_with_grad = []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outputs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outputs_with_grad) == 0:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _autograd_backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = _DEFAULT_DETERMINISM_MODE, debug: bool = False,
               early_stop: bool = True, **kwargs):
    """Run `function(*args, **kwargs)` keeping none of the tensors it saves for backward: backward
    recomputes them by running it again (torch.utils.checkpoint.checkpoint).

    use_reentrant: True for the reentrant variant (backward through the recomputation with a
    backward of its own; no kwargs, no autograd.grad), False for the saved-tensor-hooks one
    (recommended: works with autograd.grad, kwargs, nesting, and stops recomputing early).
    preserve_rng_state (a keyword, default True): recompute with the generator state of the
    forward. context_fn: two context managers, the forward's and the recomputation's
    (non-reentrant only). determinism_check: "default" compares the shapes, dtypes and devices
    of the recomputed saved tensors with the original ones, "none" does not. debug: errors show
    the ops of both runs. early_stop: stop recomputing once every needed tensor is back.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True

    # preserve_rng_state is a keyword that is not the function's
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)

    gen = _checkpoint_without_reentrant_generator(
        function, preserve, context_fn, determinism_check, debug, early_stop, *args, **kwargs)
    next(gen)        # what comes before the forward: the hooks and the forward context entered
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(
                "torch.utils.checkpoint: the forward context provided by "
                "context_fn suppressed an exception raised during the "
                "checkpointed forward. This is not supported because "
                "checkpoint cannot return a value for a failed forward.") from stop
        raise
    try:
        next(gen)    # what comes after: the contexts left
    except StopIteration:
        return ret
    raise AssertionError(
        "torch.utils.checkpoint: expected context_fn generator to yield "
        "exactly twice, but it yielded more than twice.")


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (an nn.Sequential or a list of modules or functions) one after another on
    `input`, in `segments` chunks of which all but the last are checkpointed
    (torch.utils.checkpoint.checkpoint_sequential)."""
    from ..nn import Sequential

    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True

    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    segment_size = len(functions) // segments
    # the last chunk runs as it is: its saved tensors are needed first by backward anyway
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


def _internal_assert(cond) -> None:
    if not cond:
        raise AssertionError(
            "Something went unexpectedly wrong in activation checkpoint. "
            "Please report this bug by filing an issue to PyTorch.")


# NOTE [ Nestable Checkpoint ] (PyTorch's, in brief; torch/utils/checkpoint.py has it in full)
# Rule 1. Saved tensors are managed by the innermost checkpoint only.
# Rule 2. The inputs of an inner checkpoint are tensors saved to its parent (save_inputs saves them
#         as SavedVariables while the parent's hook is the innermost one).
#   So to unpack a saved tensor, every checkpoint around it at save time is recomputed first.
# Rule 3. Recomputation starts as if no checkpoint were active (its hook is pushed innermost);
#         checkpoints met while recomputing are respected.
# Rule 4. Recomputed tensors belong to one backward pass (keyed by its graph task id) and are
#         dropped as they are unpacked, even with retain_graph=True: the pack hook returns a
#         _Holder whose per-pass _Handle is the key of a WeakKeyDictionary and is cleared on unpack.
# Rule 5. Recomputation stops (_StopRecomputationError) once as many tensors as the forward saved
#         are back, when early_stop.
# Rule 6. Backward inside the checkpointed function works: the recomputation hook also returns the
#         (detached) tensor, so the recomputed graph can itself be differentiated; holders cleared
#         by an earlier backward are skipped.

_enable_checkpoint_early_stop: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether the non-reentrant checkpoints run in the block (their forward) stop recomputing as
    soon as every tensor they need is back; overrides each checkpoint's `early_stop`."""
    global _enable_checkpoint_early_stop
    try:
        prev = _enable_checkpoint_early_stop
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class _Handle:
    """An object of its own per checkpointed call: the key its recomputed tensors are stored under
    (PyTorch's _Handle)."""


class _Holder:
    def __init__(self) -> None:
        self.handles: dict = {}


class _CheckpointFrame:
    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn) -> None:
        self.recompute_fn = recompute_fn
        self.saved_args: list = []
        self.weak_holders: list = []
        # weak keys: after a partial backward, an entry goes with its Holder, which goes when
        # the SavedVariable holding it is released
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        # both: they diverge when a holder was cleared by a backward inside the forward
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)

        self.early_stop = early_stop

        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.x_metadatas: list = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        # SavedVariables, so that a modified input is caught at unpack, and so that an enclosing
        # checkpoint's hook packs them (Rule 2)
        self.saved_args = [SavedVariable(arg, False) if isinstance(arg, Tensor) else arg for arg in args]

    def get_inputs(self):
        return [arg.unpack() if isinstance(arg, SavedVariable) else arg for arg in self.saved_args]

    def check_recomputed_tensors_match(self, gid) -> None:
        if self.ignore_saved_mismatch:
            return
        # NOTE [ Error handling for checkpoint ]: more tensors saved during recomputation is
        # caught by the recomputation hook (or hidden by early stop); fewer, here; the same
        # number with other metadata, below.
        if not len(self.weak_holders) == self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}")

        nb_meta_different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            # a holder alive now was alive during the recomputation, so it has this pass's handle
            _internal_assert(gid in holder.handles)
            _internal_assert(holder.handles[gid] is not None)
            _internal_assert(holder.handles[gid] in self.recomputed[gid])
            x_meta = self.x_metadatas[idx]
            recomputed_x = self.recomputed[gid][holder.handles[gid]]
            if x_meta != self.metadata_fn(recomputed_x):
                nb_meta_different.append((idx, x_meta, self.metadata_fn(recomputed_x)))

        if len(nb_meta_different) > 0:
            mismatched_tensors = ""
            for idx, x_meta, recomputed_meta in nb_meta_different:
                mismatched_tensors += (
                    f"tensor at position {idx}:\n"
                    f"saved metadata: {x_meta}\n"
                    f"recomputed metadata: {recomputed_meta}\n")
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{mismatched_tensors}.\n"
                f"{_debug_tip_msg}")


# (PyTorch's tip goes on about torch.compile's automatic dynamic shapes, which agrad has not)
_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.
"""


_checkpoint_error_template = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""


class CheckpointError(RuntimeError):
    pass


_AGRAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class _OpLog:
    """debug=True's record of the ops a run dispatches (PyTorch's LoggingTensorMode with
    capture_logs): one line per op, `aten.<name>` and the shapes and dtypes of its tensor
    arguments and result, with the Python stack that called it. An op observer
    (agrad.watchers.op_observers) sees each call; an op called by another op logs too."""

    def __init__(self) -> None:
        self.logs: list | None = None
        self.tbs: list | None = None

    def op_start(self, op, args):
        """(an op is logged once it has its result: op_end)"""

    def op_end(self, op, result):
        self.logs.append(f"{_describe(result)} = aten.{op.name}")
        # the caller's frames, without agrad's own (the dispatcher's, the op's, this one's)
        self.tbs.append([{"filename": f.filename, "line": f.lineno, "name": f.name}
                         for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_AGRAD_DIR)])

    @contextlib.contextmanager
    def capture(self):
        self.logs, self.tbs = [], []
        watchers.op_observers.append(self)
        try:
            yield self.logs, self.tbs
        finally:
            watchers.op_observers.remove(self)


def _describe(value) -> str:
    if isinstance(value, Tensor):
        return f"{value.dtype}{list(value.shape)}"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_describe(v) for v in value) + ")"
    return repr(value)


def _get_debug_context_and_cb():
    """The context_fn and the unpack error callback of debug=True: both runs' ops are logged, and
    a CheckpointError at unpack is raised again with both logs."""
    capture_logs_fwd = _OpLog()
    capture_logs_recompute = _OpLog()

    def unpack_error_cb(e: CheckpointError):
        def get_str_tb(label, capture_logs):
            out = ""
            total_len = len(capture_logs.logs)
            for i, (log, tb) in enumerate(zip(capture_logs.logs, capture_logs.tbs)):
                out += f"{log}   ({i + 1} of {total_len} in {label})\n\n"
                for line in tb:
                    out += f"{line['filename']}:{line['line']}:{line['name']}\n"
                out += "\n\n"
            return out
        if capture_logs_fwd.logs is None:
            raise AssertionError("capture_logs_fwd.logs is None")
        if capture_logs_recompute.logs is None:
            raise AssertionError("capture_logs_recompute.logs is None")
        raise CheckpointError(
            _checkpoint_error_template.format(
                forward_traces=get_str_tb("original", capture_logs_fwd),
                recompute_traces=get_str_tb("recompute", capture_logs_recompute),
                forward_ops="\n".join(capture_logs_fwd.logs),
                recompute_ops="\n".join(capture_logs_recompute.logs))) from e

    def context_fn():
        return capture_logs_fwd.capture(), capture_logs_recompute.capture()

    return context_fn, unpack_error_cb


def _default_meta_extractor(x: Tensor) -> dict:
    # quick to compare and easy to read in the error
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _StopRecomputationError(Exception):
    """Raised by the recomputation hook to end the recomputation early (Rule 5)."""


class _recomputation_hook(saved_tensors_hooks):
    def __init__(self, target_frame_ref, gid) -> None:
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            target_frame = target_frame_ref()
            if target_frame is None:
                raise AssertionError("Internal error: target_frame reference is None")
            recomp_idx = target_frame.recomp_counter[gid]
            target_frame.recomp_counter[gid] += 1

            if recomp_idx >= len(target_frame.weak_holders):
                if target_frame.early_stop:
                    raise AssertionError("Unexpected state: target_frame.early_stop is set")
                if not target_frame.forward_completed:
                    # a backward inside the forward without early stop: the recomputation saves
                    # more than the forward had saved so far, which is expected
                    target_frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during "
                    "recomputation than during the original forward pass.\n"
                    f"{_debug_tip_msg}")

            holder = target_frame.weak_holders[recomp_idx]()

            # None: cleared by a backward run inside the forward; nothing to keep for it
            if holder is not None:
                _internal_assert(holder.handles.get(gid, None) is None)
                holder.handles[gid] = _Handle()
                target_frame.recomputed[gid][holder.handles[gid]] = x

            if target_frame.early_stop and target_frame.recomp_counter[gid] == len(target_frame.weak_holders):
                raise _StopRecomputationError
            # Rule 6: the recomputed graph keeps x, so that it can be differentiated
            return x

        def unpack_hook(x):
            return x

        super().__init__(pack_hook, unpack_hook)


class _checkpoint_hook(saved_tensors_hooks):
    def __init__(self, frame) -> None:
        def pack_hook(x):
            # Rule 4: a Holder, not the tensor
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = GraphExecGroup._get_current_group()
            if gid is None:
                gid = _current_graph_task_id()
                if gid == -1:
                    # an unpack outside any backward (ctx.saved_tensors read directly): its own key
                    gid = int(uuid.uuid4())

            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)

            _internal_assert(gid in holder.handles)

            if holder.handles[gid] is None:
                extra = ""
                if _graph_exec_group.group is not None:
                    extra = (
                        "Performing two backward calls that overlap (i.e. require the same "
                        "saved activation in order to compute gradients) is not allowed while "
                        "under the torch.utils.checkpoint.GraphExecGroup context. ")
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                    f"unpacked once. {extra}If you are calling ctx.saved_tensors in backward, make sure "
                    "to do so only once. Otherwise please open an issue with details on your use case.")
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        if frame.unpack_error_cb is not None:
            def unpack_hook_with_error_cb(holder):
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)
            super().__init__(pack_hook, unpack_hook_with_error_cb)
        else:
            super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True, context_fn=noop_context_fn,
                                            determinism_check: str = _DEFAULT_DETERMINISM_MODE,
                                            debug: bool = False, early_stop: bool = True, *args, **kwargs):
    """Non-reentrant checkpoint as a generator that yields once: before the yield it sets up (the
    generator state kept, the inputs saved, the hooks and the forward context entered), the caller
    runs the forward, then after it the contexts are left. See checkpoint() for the arguments."""
    unpack_error_cb = None

    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _get_debug_context_and_cb()

    if determinism_check in _allowed_determinism_checks_to_fns:
        metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    else:
        raise ValueError(
            f"determinism_check should be one of {list(_allowed_determinism_checks_to_fns.keys())}, "
            f"but got {determinism_check}")

    device_type = _infer_device_type(*args)
    forward_context, recompute_context = context_fn()

    if preserve_rng_state:
        fwd_cpu_state = get_rng_state()

    def recompute_fn(*args) -> None:
        # run at unpack time, with the state of the forward's time captured here
        with fork_rng(enabled=preserve_rng_state, device_type=device_type):
            if preserve_rng_state:
                set_rng_state(fwd_cpu_state)
            with recompute_context:
                fn(*args, **kwargs)

    new_frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
        unpack_error_cb,
        metadata_fn)

    # nothing is saved for backward without grad mode: nothing to recompute
    if not is_grad_enabled():
        yield
        return

    new_frame.save_inputs(*args)

    forward_context_suppressed_exc = False
    with _checkpoint_hook(new_frame), forward_context:
        try:
            yield
        except BaseException:
            forward_context_suppressed_exc = True
            raise
    if forward_context_suppressed_exc:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by "
            "context_fn suppressed an exception raised during the "
            "checkpointed forward. This is not supported because checkpoint "
            "cannot return a value for a failed forward.")
    new_frame.forward_completed = True


# ---- selective activation checkpointing ------------------------------------------------------------

class _VersionWrapper:
    # Check that cached tensors are not mutated.
    def __init__(self, val) -> None:
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation):
        if self.version is not None and not allow_cache_entry_mutation:
            if self.val._version != self.version:
                raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        return self.val


def _detach_helper(x):
    # Detached: the value handed back in the recomputation gets the recomputed graph's history, not
    # the forward's (the Node autograd records there is set on it), and the storage holds no graph
    # (graph -> saved tensor hooks -> recompute context -> storage -> graph would be a cycle).
    # detach() shares the version counter, which _VersionWrapper reads.
    return x.detach() if isinstance(x, Tensor) else x


def _tree_map(fn, out):
    if isinstance(out, (tuple, list)):
        return type(out)(_tree_map(fn, o) for o in out)
    return fn(out)


class SelectiveCheckpointContext:
    """Context passed to the policy function of selective checkpointing. The policy is only called
    during the forward (the recomputation takes the cached values by index), so `is_recompute` is
    always False, as in PyTorch where it is deprecated; `op_output` is the op's output."""

    def __init__(self, *, is_recompute, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: `{MUST,PREFER}_SAVE` keeps it from the
    forward, `{MUST,PREFER}_RECOMPUTE` runs the op again in backward. `{MUST,PREFER}_CPU_OFFLOAD` are
    torch.compile's; in eager they recompute, as in PyTorch. MUST_* over PREFER_* only tells other
    subsystems (torch.compile) not to override the choice."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b):
    # For backward compatibility
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


# AC inserts a different number of detach during forward and recompute. (PyTorch's set also holds
# prim.device and FunctionalTensor's metadata functions; agrad reads metadata without dispatching.)
SAC_IGNORED_OPS = {_op_namespace("aten").detach.default}


class _CachingTorchDispatchMode(TorchDispatchMode):
    # The forward's mode: asks the policy about each op call and keeps the outputs to save.
    def __init__(self, policy_fn, storage, ac_graph_id=None) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self.ac_graph_id = ac_graph_id
        self.func_counter: dict = defaultdict(int)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)

        out = func(*args, **kwargs)

        key = func
        idx = self.func_counter[key]
        self.func_counter[key] += 1

        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)

        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            self.storage[key][idx] = _tree_map(lambda x: _VersionWrapper(_detach_helper(x)), out)
        else:
            self.storage[key][idx] = _RECOMPUTE
        return out


_RECOMPUTE = object()
_CONSUMED = object()

_SAC_MISMATCH_MSG = (
    "This can happen if the operations in the checkpointed region are "
    "nondeterministic or depend on global state that changed between "
    "forward and backward.")


class _CachedTorchDispatchMode(TorchDispatchMode):
    # The recomputation's mode: an op whose output was kept is not run; its output is handed back, once.
    # policy_fn is accepted but ignored, as in PyTorch (for callers that subclass this).
    def __init__(self, policy_fn, storage, allow_cache_entry_mutation=False) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter: dict = defaultdict(int)

    def __enter__(self):
        # Reset so retain_graph=True hits "backward an extra time" not "index not found".
        self.func_counter.clear()
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in SAC_IGNORED_OPS:
            return func(*args, **(kwargs or {}))

        key = func
        idx = self.func_counter[key]
        self.func_counter[key] += 1

        func_storage = self.storage.get(key)
        if func_storage is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. {_SAC_MISMATCH_MSG}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward "
                               f"but not found in storage. {_SAC_MISMATCH_MSG}")
        elif entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once "
                "on any region computed under selective activation checkpoint.")
        elif entry is _RECOMPUTE:
            kwargs = {} if kwargs is None else kwargs
            return func(*args, **kwargs)
        else:
            func_storage[idx] = _CONSUMED
            return _tree_map(lambda x: x.get_val(self.allow_cache_entry_mutation), entry)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The context_fn of a non-reentrant checkpoint that saves the outputs of chosen ops instead of
    recomputing them (torch.utils.checkpoint.create_selective_checkpoint_contexts).

    policy_fn_or_list: a function `policy(ctx, op, *args, **kwargs)` called on each op call of the
    forward, `op` the OpOverload (`agrad.ops.aten.mm.default`), returning a CheckpointPolicy (or a
    bool: True saves); or a list of OpOverloads to save, every other op recomputed.
    allow_cache_entry_mutation: by default a saved output changed in place before backward is an
    error; True allows it.
    Returns the two context managers of context_fn: the forward's and the recomputation's."""
    # NB: If grad_mode is disabled, checkpoint would not run forward under
    #     context_fn anyway, so proceed as usual.
    from ..dispatcher.overloads import OpOverload, OpOverloadPacket
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                _extra_msg = (
                    "Please update the OpOverloadPacket to a specific OpOverload."
                    "For example, if you have `torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                ) if isinstance(op, OpOverloadPacket) else ""
                raise ValueError(
                    f"Expected op in `op_list` to be an OpOverload but got: {op} "
                    f"of type {type(op)}. {_extra_msg}")

        def policy_fn(ctx, op, *args, **kwargs):
            if op in policy_fn_or_list:
                return CheckpointPolicy.MUST_SAVE
            else:
                return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")

    storage: dict = defaultdict(dict)
    return (
        _CachingTorchDispatchMode(policy_fn, storage),
        _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation),
    )


class _GraphExecGroupState(threading.local):
    group = None      # the GraphExecGroup this thread is in (PyTorch keeps it thread-local in C++)


_graph_exec_group = _GraphExecGroupState()


class GraphExecGroup:
    """Within the block, a non-reentrant checkpointed region recomputes at most once, however many
    backward calls reach it; those calls must not need the same saved activation."""

    def __enter__(self):
        if _graph_exec_group.group is not None:
            raise RuntimeError(
                "GraphExecGroup contexts cannot be nested. "
                f"Already inside group {_graph_exec_group.group}")
        _graph_exec_group.group = self
        return self

    def __exit__(self, *args) -> None:
        _graph_exec_group.group = None

    @classmethod
    def _get_current_group(cls):
        return _graph_exec_group.group
