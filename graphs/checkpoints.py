"""Checkpoints of `agrad train --save`, and reading them back as untrusted input.

A checkpoint is a plain .npz of named arrays, readable by NumPy with
`allow_pickle=False` and by any tool that reads .npz:

  params/NAME         each trained parameter
  optim/I/BUFFER      the optimizer's per-parameter buffers (I: the parameter's index)
  history/losses      the loss of every step so far (float64), and history/lrs their lr
  meta                a 0-d string array holding one JSON object: format, version, the
                      graph's hash, step, optimizer type and param_groups, scheduler
                      state, evaluations, the RNG state

`--resume` reads a file someone else may have written: it is read as graph inputs
are (a regular file, no pickles, no zip bombs; `inputs.read_npz`), then every key,
shape, dtype and metadata value is checked against what this graph's run would have
written, before anything is changed. A problem is a CheckpointError naming the key
and what was expected (AG069, exit status 2).
"""
from __future__ import annotations

import hashlib
import json
import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

import agrad

from .inputs import InputError, read_npz, regular_file_size

FORMAT = "agrad-train-checkpoint"
VERSION = 2                 # 1: before graph hashes (read no more: it kept the loss history in JSON)
CODE = "AG069"
META_KEYS = {"format", "version", "graph", "graph_sha256", "step", "params", "optimizer", "param_groups",
             "scheduler", "evals", "rng"}
HISTORY = ("losses", "lrs")
SCHEDULER_KEYS = ("last_epoch", "_step_count", "_last_lr", "base_lrs")
# group hyper-parameters that are rates or sizes: a negative (or NaN) one is no optimizer's
_NON_NEGATIVE = {"lr", "initial_lr", "eps", "weight_decay", "momentum", "dampening", "alpha", "lr_decay",
                 "initial_accumulator_value"}


class CheckpointError(ValueError):
    """The checkpoint cannot be read or does not fit this graph's run."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(f"key '{key}': {message}" if key else message)
        self.key = key
        self.code = CODE


# ---- the graph's identity ---------------------------------------------------------------

def graph_hash(checked) -> str:
    """sha256 of the graph file's text and the names of the data files it reads (inputs,
    train data, eval data): a checkpoint of another graph, or of this one edited, differs."""
    digest = hashlib.sha256(checked.spec.doc.source.encode("utf-8"))
    for name in data_file_names(checked):
        digest.update(b"\0" + name.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def data_file_names(checked) -> list[str]:
    names = [spec.file for spec in checked.spec.inputs.values() if spec.kind == "file" and spec.file]
    train = checked.spec.doc.data.get("train") if isinstance(checked.spec.doc.data, dict) else None
    if isinstance(train, dict):
        for section in (train.get("data"), (train.get("eval") or {}).get("data") if isinstance(
                train.get("eval"), dict) else None):
            source = section.get("source", section) if isinstance(section, dict) else None
            if isinstance(source, dict) and isinstance(source.get("file"), str):
                names.append(source["file"])
    return names


# ---- the RNG of graphs that draw from agrad's global generator -----------------------------

def _rng_state() -> dict:
    # NOTE: NumPy's own state dict of the default Generator (what `meta.rng` holds), not
    # agrad.get_rng_state()'s byte tensor: a checkpoint's meta is JSON
    from agrad.generator import numpy_rng
    return numpy_rng(None).bit_generator.state


def _set_rng_state(state: dict) -> None:
    from agrad.generator import numpy_rng
    numpy_rng(None).bit_generator.state = state


# ---- writing ------------------------------------------------------------------------------

def checkpoint_arrays(trainer, graph_sha256: str | None) -> dict[str, np.ndarray]:
    """The trainer's state as named arrays (what `--save` writes)."""
    arrays = {f"params/{n}": t.detach().cpu().numpy() for n, t in zip(trainer.param_names, trainer.params)}
    optim = trainer.optimizer.state_dict()
    for index, buffers in optim["state"].items():
        for key, value in buffers.items():
            arrays[f"optim/{index}/{key}"] = value.detach().cpu().numpy()
    scheduler = trainer.scheduler
    meta = {"format": FORMAT, "version": VERSION, "graph": trainer.checked.spec.name,
            "graph_sha256": graph_sha256, "step": trainer.run.steps, "params": trainer.param_names,
            "optimizer": {"type": type(trainer.optimizer).__name__}, "param_groups": optim["param_groups"],
            "scheduler": None if scheduler is None else
            {"last_epoch": scheduler.last_epoch, "_step_count": scheduler._step_count,
             "_last_lr": scheduler._last_lr, "base_lrs": scheduler.base_lrs},
            "evals": trainer.run.evals, "rng": _rng_state()}
    for name in HISTORY:
        arrays[f"history/{name}"] = np.array(getattr(trainer.run, name), dtype=np.float64).reshape(-1)
    arrays["meta"] = np.array(json.dumps(meta, default=_jsonable, allow_nan=False))
    return arrays


def _jsonable(value):
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# ---- reading ------------------------------------------------------------------------------

def read_checkpoint(path) -> dict[str, np.ndarray]:
    """The arrays of the checkpoint at `path`, read as graph inputs are."""
    try:
        regular_file_size(Path(path), None, CODE, "checkpoint")        # before opening: no FIFO, no device
        if not zipfile.is_zipfile(path):
            raise CheckpointError("not a checkpoint (an .npz written by `agrad train --save`)")
        return read_npz(Path(path), None, CODE, "checkpoint")
    except InputError as exc:
        raise CheckpointError(exc.message) from None


def check_checkpoint(arrays: dict[str, np.ndarray], trainer, graph_sha256: str | None, *, horizon: int,
                     force: bool = False) -> dict:
    """Check `arrays` against `trainer`'s run without changing anything; returns the
    state `restore` applies. `force` accepts a checkpoint of another graph (hash) whose
    parameters still fit."""
    meta = _meta(arrays)
    version = meta.get("version")
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"format is {_short(meta.get('format'))}, expected {FORMAT!r}", "meta.format")
    if type(version) is not int or version != VERSION:
        raise CheckpointError(f"expected {VERSION}, got {_short(version)}: this agrad reads checkpoints of format "
                              f"version {VERSION}", "meta.version")
    _exact_keys(meta, META_KEYS, "meta")
    saved_hash = meta.get("graph_sha256")
    if graph_sha256 is not None and saved_hash != graph_sha256 and not force:
        raise CheckpointError(f"the checkpoint was written for another graph, or for this one before it changed "
                              f"(graph hash {_short(saved_hash, 15)}, this graph's is {graph_sha256[:12]}...); "
                              "--force-resume resumes anyway", "meta.graph_sha256")
    step = meta.get("step")
    if type(step) is not int or not 0 <= step <= horizon:
        raise CheckpointError(f"expected an integer step from 0 to the run's {horizon}, got {_short(step)}", "meta.step")
    if meta.get("params") != trainer.param_names:
        raise CheckpointError(f"holds parameters {meta.get('params')!r}, the graph trains {trainer.param_names}",
                              "meta.params")
    optimizer_type = type(trainer.optimizer).__name__
    if not isinstance(meta["optimizer"], dict):
        raise CheckpointError(f"expected {{\"type\": NAME}}, got {_short(meta['optimizer'])}", "meta.optimizer")
    _exact_keys(meta["optimizer"], {"type"}, "meta.optimizer")
    saved = meta["optimizer"].get("type")
    if saved != optimizer_type:
        raise CheckpointError(f"was written with optimizer {_short(saved)}; the graph trains with {optimizer_type} "
                              "(a changed optimizer cannot continue another's state)", "meta.optimizer.type")
    params = {}
    for name, t in zip(trainer.param_names, trainer.params):
        key = f"params/{name}"
        params[name] = _array(arrays, key, tuple(t.shape), t.dtype.name)
    groups = _param_groups(meta.get("param_groups"), trainer)
    buffers = _optimizer_buffers(arrays, trainer, optimizer_type, groups, step)
    scheduler = _scheduler(meta.get("scheduler"), trainer, step)
    history = {name: _array(arrays, f"history/{name}", (step,), "float64").tolist() for name in HISTORY}
    evals = _evals(meta.get("evals"), step)
    rng = meta.get("rng")
    try:                                       # a probe generator: the global one is set only in restore
        np.random.PCG64().state = rng
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise CheckpointError(f"expected NumPy PCG64 generator state ({exc})", "meta.rng") from None
    known = {"meta"} | {f"params/{n}" for n in params} | {f"history/{n}" for n in HISTORY} | set(buffers["keys"])
    extra = sorted(set(arrays) - known)
    if extra:
        raise CheckpointError(f"unexpected; a checkpoint of this graph holds meta, params/NAME, history/losses, "
                              f"history/lrs and optim/I/BUFFER of its {optimizer_type}", extra[0])
    return {"step": step, "params": params, "state": buffers["state"], "groups": groups, "scheduler": scheduler,
            "history": history, "evals": evals, "rng": rng}


def restore(trainer, state: dict) -> None:
    """Apply a state `check_checkpoint` returned: the run continues as if never stopped."""
    with agrad.no_grad():
        for name, t in zip(trainer.param_names, trainer.params):
            t.copy_(agrad.tensor(state["params"][name], dtype=t.dtype, device=t.device))
    tensors = {i: {k: agrad.tensor(v, dtype=agrad.dtypes.from_name(str(v.dtype))) for k, v in buffers.items()}
               for i, buffers in state["state"].items()}
    trainer.optimizer.load_state_dict({"state": tensors, "param_groups": state["groups"]})
    if trainer.scheduler is not None and state["scheduler"] is not None:
        trainer.scheduler.__dict__.update(state["scheduler"])
    _set_rng_state(state["rng"])
    trainer.run.steps = state["step"]
    trainer.run.losses, trainer.run.lrs = state["history"]["losses"], state["history"]["lrs"]
    trainer.run.evals = state["evals"]


def _meta(arrays) -> dict:
    if "meta" not in arrays:
        raise CheckpointError("missing; not an agrad train checkpoint (an .npz written by `agrad train --save`)",
                              "meta")
    meta = arrays["meta"]
    if meta.dtype.kind != "U" or meta.ndim != 0:
        raise CheckpointError(f"expected a JSON text (a 0-d string array), got {meta.dtype} {list(meta.shape)}",
                              "meta")
    try:
        value = json.loads(str(meta))          # NaN/Infinity parse; each value's check refuses them
    except (ValueError, RecursionError) as exc:
        raise CheckpointError(f"expected a JSON object: {exc}", "meta") from None
    if not isinstance(value, dict):
        raise CheckpointError(f"expected a JSON object, got {type(value).__name__}", "meta")
    return value


def _exact_keys(value: dict, expected, where: str) -> None:
    missing = sorted(set(expected) - set(value))
    if missing:
        raise CheckpointError("missing", f"{where}.{missing[0]}")
    extra = sorted(set(value) - set(expected))
    if extra:
        raise CheckpointError(f"unexpected (expected {', '.join(sorted(expected))})", f"{where}.{extra[0]}")


def _array(arrays, key: str, shape: tuple, dtype: str) -> np.ndarray:
    """arrays[key], which must be a finite array of `dtype` and `shape`."""
    if key not in arrays:
        raise CheckpointError(f"missing; expected {dtype} {list(shape)}", key)
    value = arrays[key]
    if tuple(value.shape) != shape or str(value.dtype) != dtype:
        raise CheckpointError(f"expected {dtype} {list(shape)}, got {value.dtype} {list(value.shape)}", key)
    if value.dtype.kind == "f" and not np.isfinite(value).all():
        raise CheckpointError("holds NaN or Inf values", key)
    return value


def _optimizer_buffers(arrays, trainer, optimizer_type: str, groups: list[dict], step: int) -> dict:
    """Each parameter's buffers: none yet, or exactly those this optimizer keeps with the
    checkpoint's hyper-parameters (amsgrad keeps one more), in their shapes and dtypes
    (learned from one step of a twin optimizer on zero parameters); a parameter's step count
    is a whole number up to the checkpoint's `step`."""
    expected = _expected_buffers(trainer, groups)
    saved: dict[int, dict[str, np.ndarray]] = {}
    keys = []
    for key in arrays:
        if not key.startswith("optim/"):
            continue
        parts = key.split("/")
        if len(parts) != 3 or not parts[1].isdigit() or int(parts[1]) >= len(trainer.params):
            raise CheckpointError(f"expected optim/I/BUFFER with I below {len(trainer.params)}", key)
        saved.setdefault(int(parts[1]), {})[parts[2]] = key
        keys.append(key)
    state = {}
    for index, names in saved.items():
        wanted = expected.get(index, {})
        for name, key in names.items():
            if name not in wanted:
                raise CheckpointError(f"{optimizer_type} keeps no buffer '{name}' (it keeps: "
                                      f"{', '.join(wanted) or 'none'})", key)
        for name, (shape, dtype) in wanted.items():
            if name not in names:
                raise CheckpointError(f"missing; {optimizer_type} keeps {dtype} {list(shape)} here",
                                      f"optim/{index}/{name}")
        state[index] = {name: _array(arrays, key, *wanted[name]) for name, key in names.items()}
        if "step" in state[index]:
            # a float32 tensor in the optimizer, counted up once per optimizer step (and only for a
            # parameter that had a gradient): 3.5, 1e30 or more than the checkpoint's steps is no
            # count this run made, and would resume with the wrong bias corrections
            count = state[index]["step"]
            if not ((count >= 0) & (count <= step) & (count == np.floor(count))).all():
                raise CheckpointError(f"expected a whole step count from 0 to the checkpoint's {step}, got "
                                      f"{_short(count.tolist())}", names["step"])
    return {"state": state, "keys": keys}


def _expected_buffers(trainer, groups: list[dict]) -> dict[int, dict[str, tuple[tuple, str]]]:
    optimizer = trainer.optimizer
    twins = [agrad.zeros(*t.shape, dtype=t.dtype, requires_grad=True) for t in trainer.params]
    for t in twins:
        t.grad = agrad.zeros(*t.shape, dtype=t.dtype)
    options = {k: v for k, v in groups[0].items() if k in optimizer.defaults}     # one group: train's
    probe = type(optimizer)(twins, **options)
    probe.step()
    return {i: {k: (tuple(v.shape), v.dtype.name) for k, v in buffers.items()}
            for i, buffers in probe.state_dict()["state"].items()}


def _param_groups(groups, trainer) -> list[dict]:
    current = trainer.optimizer.state_dict()["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(current):
        raise CheckpointError(f"expected a list of {len(current)} parameter group(s), got {_short(groups)}",
                              "meta.param_groups")
    checked = []
    for i, (group, mine) in enumerate(zip(groups, current)):
        where = f"meta.param_groups.{i}"
        if not isinstance(group, dict):
            raise CheckpointError(f"expected a mapping, got {_short(group)}", where)
        _exact_keys(group, set(mine), where)
        out = {}
        for key, value in group.items():
            like = mine.get(key, 0.0)
            kwhere = f"{where}.{key}"
            if key == "params":
                if value != mine["params"]:
                    raise CheckpointError(f"expected {mine['params']}, got {_short(value)}", kwhere)
            elif isinstance(like, bool):
                if type(value) is not bool:
                    raise CheckpointError(f"expected true or false, got {_short(value)}", kwhere)
            elif isinstance(like, (tuple, list)):
                # NOTE: Adafactor's eps is (None, 1e-3) by default: None where this run has None
                if not (isinstance(value, list) and len(value) == len(like) and all(
                        _finite(v) or (v is None and m is None) for v, m in zip(value, like))):
                    raise CheckpointError(f"expected a list of {len(like)} finite numbers, got {_short(value)}",
                                          kwhere)
                value = tuple(value)
            elif isinstance(like, (int, float)):
                if not _finite(value) or (key in _NON_NEGATIVE and value < 0):
                    what = "a finite number" + (" >= 0" if key in _NON_NEGATIVE else "")
                    raise CheckpointError(f"expected {what}, got {_short(value)}", kwhere)
            elif value != like:
                raise CheckpointError(f"expected {like!r}, got {_short(value)}", kwhere)
            out[key] = value
        _optimizer_accepts(trainer, out, where)
        checked.append(out)
    return checked


def _optimizer_accepts(trainer, group: dict, where: str) -> None:
    """The optimizer class's own checks of its hyper-parameters (beta < 1, ...), on a twin (of a
    1x1 parameter: Muon takes matrices only)."""
    options = {k: v for k, v in group.items() if k in trainer.optimizer.defaults}
    try:
        type(trainer.optimizer)([agrad.zeros(1, 1, requires_grad=True)], **options)
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"{type(trainer.optimizer).__name__} refuses these values: {exc}", where) from None


def _scheduler(value, trainer, step: int) -> dict | None:
    if trainer.scheduler is None:
        if value is not None:
            raise CheckpointError("holds a schedule's state; the graph has no `schedule`", "meta.scheduler")
        return None
    if not isinstance(value, dict):
        raise CheckpointError(f"expected the schedule's state ({', '.join(SCHEDULER_KEYS)}), got {_short(value)}",
                              "meta.scheduler")
    _exact_keys(value, SCHEDULER_KEYS, "meta.scheduler")
    groups = len(trainer.optimizer.param_groups)
    # the schedule steps once per training step, so its counters follow the step
    for key, want in (("last_epoch", step), ("_step_count", step + 1)):
        if type(value[key]) is not int or value[key] != want:
            raise CheckpointError(f"expected {want} (the step is {step}), got {_short(value[key])}",
                                  f"meta.scheduler.{key}")
    for key in ("_last_lr", "base_lrs"):
        lrs = value[key]
        if not (isinstance(lrs, list) and len(lrs) == groups and all(_finite(v) and v >= 0 for v in lrs)):
            raise CheckpointError(f"expected a list of {groups} finite learning rate(s) >= 0, got {_short(lrs)}",
                                  f"meta.scheduler.{key}")
    return dict(value)


def _evals(value, step: int) -> list[dict]:
    if not isinstance(value, list):
        raise CheckpointError(f"expected a list of evaluations, got {_short(value)}", "meta.evals")
    for i, record in enumerate(value):
        ok = (isinstance(record, dict) and type(record.get("step")) is int and 0 < record["step"] <= step
              and set(record) <= {"step", "loss", "accuracy"}
              and all(_finite(v) for k, v in record.items() if k != "step"))
        if not ok:
            raise CheckpointError(f"expected {{step: 1..{step}, loss: x, accuracy: x}}, got {_short(record)}",
                                  f"meta.evals.{i}")
    return value


def _finite(value: Any) -> bool:
    if type(value) not in (int, float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
