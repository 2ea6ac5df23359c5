"""The `train:` section of a graph file and `expect: {train: ...}`: read from the
document's positioned values and checked against the checked graph before any step
runs, every problem a `FILE:LINE:COL: error[AG06n]` diagnostic (codes in diagnostics.py).
"""
from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data_sources import SOURCE_KEYS, SourceProblem, load_source
from .diagnostics import Collector, did_you_mean
from .optimizers import CYCLIC_MODES, MATRIX_OPTIMIZERS, OPTIMIZERS, REFUSED_OPTIMIZERS, SCHEDULES, make_optimizer
from .results import GraphFileError
from .shape_check import ShapeCheck

TRAIN_KEYS = ("loss", "params", "optimizer", "schedule", "steps", "epochs", "data", "clip_grad_norm", "eval")
DATA_KEYS = ("source", "file", "inputs", "batch_size", "shuffle")   # file/inputs: the source, written inline
EVAL_KEYS = ("every", "data", "metrics")
EXPECT_TRAIN_KEYS = ("final_loss", "loss", "accuracy")
BOUND_KEYS = ("min", "max")
# counts (steps, epochs, batch sizes, schedule lengths) up to 2**53: exact as floats, which the
# schedules' closed forms divide by, and beyond any run's length
LARGEST_COUNT = 2 ** 53
NUMBER_KINDS = "biuf"             # NumPy dtype kinds a data array may have: no strings, complex, dates
_ACCURACY = re.compile(r"^\s*accuracy\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)\s*$")


@dataclass
class Bound:
    """`{min: a, max: b}` on one number of the run's summary."""
    name: str
    low: float | None
    high: float | None
    pos: Any

    def failure(self, value: float | None) -> str | None:
        if value is None:
            return f"expect.train.{self.name}: the run has no {self.name}"
        if self.low is not None and not value >= self.low:
            return f"expect.train.{self.name}: {value:.6g} is below the minimum {self.low:g}"
        if self.high is not None and not value <= self.high:
            return f"expect.train.{self.name}: {value:.6g} is above the maximum {self.high:g}"
        return None


@dataclass
class TrainSpec:
    loss: str
    params: list[str]
    optimizer: dict
    schedule: dict | None
    steps: int
    data: dict[str, np.ndarray] | None = None
    batch_size: int | None = None
    shuffle: bool = False
    clip_grad_norm: float | None = None
    eval_every: int | None = None
    eval_data: dict[str, np.ndarray] | None = None
    metrics: list = field(default_factory=lambda: ["loss"])
    expect: list[Bound] = field(default_factory=list)
    pos: Any = None

    def options(self) -> dict:
        """Keyword arguments of `agrad.graphs.training.train`."""
        return dict(loss=self.loss, params=self.params, optimizer=self.optimizer, schedule=self.schedule,
                    data=self.data, batch_size=self.batch_size, shuffle=self.shuffle,
                    clip_grad_norm=self.clip_grad_norm, eval_data=self.eval_data, eval_every=self.eval_every,
                    metrics=self.metrics)


def _finite_number(value) -> bool:
    """An int or float (not a bool) that a float holds: not NaN, not Inf, not 10**400."""
    if type(value) not in (int, float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _shown(value, limit: int = 40) -> str:
    """A value in a message: a 400-digit number is shown by its start."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def has_train_section(checked) -> bool:
    data = checked.spec.doc.data
    return isinstance(data, dict) and "train" in data


class _Reader:
    def __init__(self, checked, collector: Collector):
        self.checked = checked
        self.doc = checked.spec.doc
        self.c = collector
        self.names = set(checked.spec.inputs) | {n.name for n in checked.spec.nodes}

    def error(self, code: str, message: str, path: tuple, hint: str | None = None, key: bool = False) -> None:
        self.c.error(code, message, self.doc.key_pos(path) if key else self.doc.pos(path), hint)

    def mapping(self, value, path: tuple, what: str, allowed: tuple, code: str = "AG060") -> dict | None:
        if not isinstance(value, dict):
            self.error(code, f"{what} must be a mapping, not {type(value).__name__}", path)
            return None
        for k in value:
            if k not in allowed:
                self.error(code, f"unknown key '{k}' in {what}", path + (k,),
                           did_you_mean(str(k), allowed), key=True)
        return value

    def integer(self, value, path: tuple, what: str, code: str = "AG060") -> int | None:
        if type(value) is not int or not 1 <= value <= LARGEST_COUNT:
            self.error(code, f"{what} must be a positive integer up to 2**53, not {_shown(value)}", path)
            return None
        return value

    def positive(self, value, path: tuple, what: str, code: str = "AG060") -> float | None:
        if not _finite_number(value) or not value > 0:
            self.error(code, f"{what} must be a positive finite number, not {_shown(value)}", path)
            return None
        return float(value)

    # ---- the section ------------------------------------------------------------------

    def read(self) -> TrainSpec | None:
        path = ("train",)
        section = self.mapping(self.doc.data["train"], path, "`train`", TRAIN_KEYS)
        if section is None:
            return None
        loss = self.loss(section.get("loss"), path + ("loss",))
        params = self.params(section.get("params"), path + ("params",))
        optimizer = self.optimizer(section.get("optimizer", {"type": "sgd", "lr": 0.01}), path + ("optimizer",),
                                   params)
        data = batch_size = None
        shuffle = False
        if "data" in section:
            data, batch_size, shuffle = self.data(section["data"], path + ("data",))
        steps = self.steps(section, path, data, batch_size)
        schedule = self.schedule(section["schedule"], path + ("schedule",)) if "schedule" in section else None
        clip = (self.positive(section["clip_grad_norm"], path + ("clip_grad_norm",), "`clip_grad_norm`")
                if "clip_grad_norm" in section else None)
        eval_every, eval_data, metrics = None, None, ["loss"]
        if "eval" in section:
            eval_every, eval_data, metrics = self.eval(section["eval"], path + ("eval",))
        expect = self.expect()
        if not self.c.ok or loss is None or steps is None or optimizer is None:
            return None
        return TrainSpec(loss=loss, params=params, optimizer=optimizer, schedule=schedule, steps=steps, data=data,
                         batch_size=batch_size, shuffle=shuffle, clip_grad_norm=clip, eval_every=eval_every,
                         eval_data=eval_data, metrics=metrics, expect=expect, pos=self.doc.key_pos(path))

    def tensor_name(self, value, path: tuple, what: str, code: str) -> str | None:
        if not isinstance(value, str):
            self.error(code, f"{what} must be a name, not {value!r}", path)
            return None
        if value not in self.names:
            self.error(code, f"{what} '{value}' names no input or node", path, did_you_mean(value, self.names))
            return None
        return value

    def loss(self, value, path: tuple) -> str | None:
        if value is None:
            self.error("AG060", "`train` needs `loss`: the name of a scalar node", path[:-1], key=True)
            return None
        name = self.tensor_name(value, path, "train.loss", "AG062")
        if name is None:
            return None
        meta = self.checked.meta.get(name)
        if meta is None or isinstance(meta, tuple):
            if isinstance(meta, tuple):
                self.error("AG062", f"train.loss '{name}' has several outputs; name one (a node such as "
                                    f"{name}[0])", path)
            return None
        if meta.numel() != 1:
            self.error("AG062", f"train.loss '{name}' has shape {list(meta.shape)}; the loss must be a scalar",
                       path)
        elif not meta.requires_grad:
            self.error("AG062", f"train.loss '{name}' reaches no input with requires_grad: true", path)
        return name

    def params(self, value, path: tuple) -> list[str]:
        trainable = [n for n, plan in self.checked.leaves.items() if plan.requires_grad]
        if value is None:
            if not trainable:
                self.error("AG063", "no input has requires_grad: true, so there is nothing to train", path[:-1],
                           key=True)
            return trainable
        items = value if isinstance(value, list) else [value]
        if not items:
            self.error("AG063", "train.params is empty: name at least one input with requires_grad: true", path)
        names = []
        for i, item in enumerate(items):
            ipath = path + (i,) if isinstance(value, list) else path
            if not isinstance(item, str) or item not in trainable:
                why = ("is not a name" if not isinstance(item, str) else "is not an input"
                       if item not in self.checked.spec.inputs else "does not have requires_grad: true")
                self.error("AG063", f"train.params: {item!r} {why}", ipath,
                           did_you_mean(item, trainable) if isinstance(item, str) else None)
            elif item in names:
                self.error("AG063", f"train.params: '{item}' is listed twice", ipath)
            else:
                names.append(item)
        return names

    def optimizer(self, value, path: tuple, params: list[str]) -> dict | None:
        if not isinstance(value, dict):
            self.error("AG061", f"train.optimizer must be a mapping with `type`, not {value!r}", path)
            return None
        kind = value.get("type")
        if isinstance(kind, str) and kind in REFUSED_OPTIMIZERS:
            self.error("AG061", f"optimizer {kind} cannot be used in a train section: {REFUSED_OPTIMIZERS[kind]}",
                       path + ("type",))
            return None
        if not isinstance(kind, str) or kind not in OPTIMIZERS:
            self.error("AG061", f"unknown optimizer {kind!r}; expected one of {', '.join(OPTIMIZERS)}",
                       path + ("type",) if "type" in value else path,
                       did_you_mean(str(kind), OPTIMIZERS))
            return None
        signature = inspect.signature(OPTIMIZERS[kind]).parameters
        # torch's switches of implementation (foreach, differentiable, ...) are no graph file's business
        allowed = [p for p in signature if p not in ("params", "foreach", "differentiable", "capturable", "fused")]
        ok = True
        for key, v in value.items():
            if key == "type":
                continue
            if key not in allowed:
                self.error("AG061", f"unknown key '{key}' for optimizer {kind}; it takes {', '.join(allowed)}",
                           path + (key,), did_you_mean(key, allowed), key=True)
                ok = False
            elif isinstance(signature[key].default, tuple):     # betas, etas, step_sizes, eps, ns_coefficients
                default = signature[key].default
                if not (isinstance(v, list) and len(v) == len(default) and all(
                        _finite_number(b) or (b is None and d is None) for b, d in zip(v, default))):
                    also = " (the first may be null)" if None in default else ""
                    count = {2: "two", 3: "three"}.get(len(default), str(len(default)))
                    self.error("AG061", f"optimizer {key} must be a list of {count} finite numbers{also}, "
                                        f"not {v!r}", path + (key,))
                    ok = False
            elif signature[key].default is None:                # Muon's adjust_lr_fn: a name, or null
                if not (v is None or isinstance(v, str)):
                    self.error("AG061", f"optimizer {key} must be a name or null, not {_shown(v)}", path + (key,))
                    ok = False
            elif isinstance(signature[key].default, bool):
                if type(v) is not bool:
                    self.error("AG061", f"optimizer {key} must be true or false, not {v!r}", path + (key,))
                    ok = False
            elif not _finite_number(v):
                self.error("AG061", f"optimizer {key} must be a finite number, not {_shown(v)}", path + (key,))
                ok = False
        if not ok:
            return None
        import agrad
        try:                                 # the class's own checks (PyTorch's messages): lr < 0, ...
            make_optimizer(value, [agrad.zeros(1, 1, requires_grad=True)])     # 1x1: Muon takes matrices only
        except (ValueError, TypeError) as exc:
            bad = next((k for k in value if k != "type" and str(value[k]) in str(exc)), None)
            self.error("AG061", f"optimizer {kind}: {exc}", path + (bad,) if bad else path)
            return None
        if kind in MATRIX_OPTIMIZERS:
            for name in params:
                shape = self.checked.leaves[name].shape
                if len(shape) != 2:
                    self.error("AG061", f"optimizer {kind} trains 2-D parameters only, and '{name}' has shape "
                                        f"{list(shape)}: {MATRIX_OPTIMIZERS[kind]}", path + ("type",))
                    ok = False
        return dict(value) if ok else None

    def data(self, value, path: tuple):
        section = self.mapping(value, path, "train.data", DATA_KEYS)
        if section is None:
            return None, None, False
        if "source" in section:
            arrays = self.source(section["source"], path + ("source",), "train.data")
        else:       # the same form as eval.data: `{file: ...}` or `{inputs: ...}` beside batch_size
            inline = {k: section[k] for k in SOURCE_KEYS if k in section}
            arrays = self.source(inline or None, path + ("source",), "train.data", at=path if inline else None)
        batch_size = None
        if "batch_size" in section:
            batch_size = self.integer(section["batch_size"], path + ("batch_size",), "train.data.batch_size")
        shuffle = section.get("shuffle", False)
        if type(shuffle) is not bool:
            self.error("AG060", f"train.data.shuffle must be true or false, not {shuffle!r}", path + ("shuffle",))
            shuffle = False
        if arrays is None:
            return None, batch_size, shuffle
        length = len(next(iter(arrays.values())))
        if batch_size is None:
            batch_size = length
        elif batch_size > length:
            self.error("AG065", f"train.data.batch_size {batch_size} is larger than the data ({length} rows)",
                       path + ("batch_size",))
            return None, batch_size, shuffle
        self.fits({n: (batch_size,) + a.shape[1:] for n, a in arrays.items()}, path + ("source", "file"), "a batch")
        return arrays, batch_size, shuffle

    def source(self, value, path: tuple, what: str, at: tuple | None = None) -> dict[str, np.ndarray] | None:
        """`value`: `{file: D.npz}`, `{inputs: {NAME: FILE}}` (graphs/data_sources.py), or either wrapped
        in `{source: ...}`; `at`: where its keys are written when not at `path` (inline in train.data)."""
        if value is None:
            self.error("AG060", f"{what} needs `file: DATA.npz` (or `inputs: {{NAME: FILE}}`)", path[:-1], key=True)
            return None
        if isinstance(value, dict) and set(value) == {"source"}:        # eval.data written as train.data is
            value, path = value["source"], path + ("source",)
        at = path if at is None else at
        section = self.mapping(value, at, f"{what}.source", SOURCE_KEYS)
        if section is None:
            return None
        file = section.get("file") if isinstance(section.get("file"), str) else "the data"
        fpath = at + ("file",) if "file" in section else at + ("inputs",) if "inputs" in section else at
        try:
            arrays = load_source(section, self.checked.base_dir, self.checked.options.sandbox, what)
        except SourceProblem as exc:
            self.error("AG065" if exc.where else "AG060", str(exc) if exc.complete else f"{what}: {exc}",
                       at + exc.where)
            return None
        bad = False
        for key in arrays:
            if key not in self.checked.leaves:
                self.error("AG064", f"{file}: key '{key}' names no input of the graph", fpath,
                           did_you_mean(key, self.checked.leaves))
                bad = True
        for key, array in arrays.items():
            if array.dtype.kind not in NUMBER_KINDS:
                self.error("AG065", f"{file}: array '{key}' holds {array.dtype} values; training data must be "
                                    "numbers (bool, integer or float)", fpath)
                bad = True
        lengths = {k: (a.shape[0] if a.ndim else None) for k, a in arrays.items()}
        if not arrays or None in lengths.values() or len(set(lengths.values())) != 1:
            self.error("AG065", f"{file}: the arrays must have one common length along dim 0 "
                                f"(got {', '.join(f'{k}: {v}' for k, v in lengths.items()) or 'no arrays'})", fpath)
            bad = True
        elif set(lengths.values()) == {0}:
            self.error("AG065", f"{file}: the arrays have no rows (length 0 along dim 0)", fpath)
            bad = True
        return None if bad else arrays

    def fits(self, shapes: dict, path: tuple, what: str) -> None:
        for d in ShapeCheck(self.checked, self.c.file).problems(shapes):
            self.error("AG065", f"{what} does not fit the graph: {d.message}"
                       + (f" (at {d.location})" if d.location else ""), path)

    def steps(self, section: dict, path: tuple, data, batch_size) -> int | None:
        if ("steps" in section) == ("epochs" in section):
            self.error("AG060", "`train` needs exactly one of `steps` and `epochs`", path, key=True)
            return None
        if "steps" in section:
            return self.integer(section["steps"], path + ("steps",), "train.steps")
        epochs = self.integer(section["epochs"], path + ("epochs",), "train.epochs")
        if epochs is None:
            return None
        if data is None:
            if "data" not in section:       # data given but wrong is reported once, where it is wrong
                self.error("AG060", "train.epochs needs `data` (an epoch is one pass over it)", path + ("epochs",))
            return None
        steps = epochs * max(1, len(next(iter(data.values()))) // batch_size)
        if steps > LARGEST_COUNT:
            self.error("AG060", f"train.epochs {epochs} makes {steps} steps, more than 2**53", path + ("epochs",))
            return None
        return steps

    def schedule(self, value, path: tuple) -> dict | None:
        if not isinstance(value, dict):
            self.error("AG061", f"train.schedule must be a mapping with `type`, not {value!r}", path)
            return None
        kind = value.get("type", "constant")
        if not isinstance(kind, str) or kind not in SCHEDULES:
            self.error("AG061", f"unknown schedule {kind!r}; expected one of {', '.join(SCHEDULES)}",
                       path + ("type",), did_you_mean(str(kind), SCHEDULES))
            return None
        allowed = SCHEDULES[kind] + ("type", "warmup")
        ok = True
        for key, v in value.items():
            kpath = path + (key,)
            if key not in allowed:
                self.error("AG061", f"unknown key '{key}' for schedule {kind}; it takes "
                                    f"{', '.join(allowed[:-2] + ('warmup',))}", kpath, did_you_mean(key, allowed),
                           key=True)
                ok = False
            elif key in ("warmup", "step_size", "t_max", "total_iters", "t_0", "t_mult", "step_size_up",
                         "step_size_down") and self.integer(v, kpath, f"schedule {key}", "AG061") is None:
                ok = False
            elif key == "mode" and v not in CYCLIC_MODES:
                self.error("AG061", f"schedule mode must be one of {', '.join(CYCLIC_MODES)}, not {_shown(v)}", kpath,
                           did_you_mean(str(v), CYCLIC_MODES))
                ok = False
            elif key == "power" and (not _finite_number(v) or v < 0):
                self.error("AG061", f"schedule power must be a finite number >= 0, not {_shown(v)}", kpath)
                ok = False
            elif key == "milestones" and not (isinstance(v, list) and all(
                    type(m) is int and 0 < m <= LARGEST_COUNT for m in v)):
                self.error("AG061", f"schedule milestones must be a list of positive integers up to 2**53, not "
                                    f"{_shown(v)}", kpath)
                ok = False
            elif key in ("gamma", "eta_min", "start_factor", "end_factor", "factor", "base_factor") and (
                    not _finite_number(v) or not 0 <= v <= (1 if key != "gamma" else float("inf"))):
                self.error("AG061", f"schedule {key} must be a number"
                                    + (" in [0, 1]" if key != "gamma" else " >= 0 and finite") + f", not {v!r}",
                           kpath)
                ok = False
        for need in {"step": ("step_size",), "multistep": ("milestones",), "exponential": ("gamma",),
                     "cosine_restarts": ("t_0",)}.get(kind, ()):
            if need not in value:
                self.error("AG061", f"schedule {kind} needs `{need}`", path, key=True)
                ok = False
        return dict(value) if ok else None

    def eval(self, value, path: tuple):
        section = self.mapping(value, path, "train.eval", EVAL_KEYS, "AG066")
        if section is None:
            return None, None, ["loss"]
        every = self.integer(section["every"], path + ("every",), "train.eval.every", "AG066") \
            if "every" in section else None
        eval_data = None
        if "data" in section:
            eval_data = self.source(section["data"], path + ("data",), "train.eval.data")
            if eval_data is not None:
                self.fits({n: a.shape for n, a in eval_data.items()}, path + ("data", "file"), "the eval data")
        metrics = []
        raw = section.get("metrics", ["loss"])
        mpath = path + ("metrics",)
        for i, m in enumerate(raw if isinstance(raw, list) else [raw]):
            ipath = mpath + (i,) if isinstance(raw, list) else mpath
            match = _ACCURACY.match(m) if isinstance(m, str) else None
            if m == "loss":
                metrics.append("loss")
            elif match:
                logits, target = match.groups()
                for name in (logits, target):
                    if name not in self.names:
                        self.error("AG066", f"metric {m}: '{name}' names no input or node", ipath,
                                   did_you_mean(name, self.names))
                self.accuracy_shapes(m, logits, target, ipath)
                metrics.append(("accuracy", logits, target))
            else:
                self.error("AG066", f"unknown metric {m!r}; expected loss or accuracy(LOGITS, TARGET)", ipath)
        return every, eval_data, metrics

    def accuracy_shapes(self, metric: str, logits: str, target: str, path: tuple) -> None:
        """accuracy(LOGITS, TARGET) compares argmax over LOGITS' last dim with TARGET: LOGITS must be
        (*, C) and TARGET (*)."""
        lm, tm = self.checked.meta.get(logits), self.checked.meta.get(target)
        if lm is None or tm is None or isinstance(lm, tuple) or isinstance(tm, tuple):
            return
        if len(lm.shape) == 0 or tuple(lm.shape[:-1]) != tuple(tm.shape):
            self.error("AG066", f"metric {metric}: '{logits}' has shape {list(lm.shape)} and '{target}' "
                                f"{list(tm.shape)}; accuracy needs logits of shape (*, C) and a target of shape (*)",
                       path)

    def expect(self) -> list[Bound]:
        data = self.doc.data.get("expect")
        if not isinstance(data, dict) or "train" not in data:
            return []
        path = ("expect", "train")
        section = self.mapping(data["train"], path, "expect.train", EXPECT_TRAIN_KEYS, "AG067")
        if section is None:
            return []
        bounds = []
        for name, value in section.items():
            if name not in EXPECT_TRAIN_KEYS:
                continue
            bpath = path + (name,)
            if not isinstance(value, dict) or not value or any(k not in BOUND_KEYS for k in value):
                self.error("AG067", f"expect.train.{name} must be a mapping with `min` and/or `max`", bpath)
                continue
            limits = {}
            for k, v in value.items():
                if not _finite_number(v):
                    self.error("AG067", f"expect.train.{name}.{k} must be a finite number, not {_shown(v)}",
                               bpath + (k,))
                else:
                    limits[k] = float(v)
            bounds.append(Bound(name, limits.get("min"), limits.get("max"), self.doc.key_pos(bpath)))
        return bounds


def check_train_section(checked, collector: Collector) -> TrainSpec | None:
    """Read and check the file's `train:` (None when it has none, or after reporting problems)."""
    if not has_train_section(checked):
        data = checked.spec.doc.data
        if isinstance(data, dict) and isinstance(data.get("expect"), dict) and "train" in data["expect"]:
            collector.error("AG067", "expect.train needs a `train:` section",
                            checked.spec.doc.key_pos(("expect", "train")))
        return None
    return _Reader(checked, collector).read()


def train_spec(graph) -> TrainSpec:
    """The graph's checked `train:` section; GraphFileError (exit 2) when it has none or problems."""
    collector = Collector(graph.file)
    if not has_train_section(graph._checked):
        collector.error("AG060", f"{graph.file} has no `train:` section", None)
    spec = check_train_section(graph._checked, collector)
    if collector.errors or spec is None:
        raise GraphFileError(collector.sorted())
    return spec


def expectation_failures(spec: TrainSpec, run) -> list[str]:
    """What `expect: {train: ...}` finds wrong with a finished run."""
    last_eval = run.evals[-1] if run.evals else {}
    values = {"final_loss": run.final_loss, "loss": last_eval.get("loss"), "accuracy": last_eval.get("accuracy")}
    return [f for b in spec.expect if (f := b.failure(values[b.name])) is not None]


def json_schemas() -> tuple[dict, dict]:
    """JSON Schema of the `train:` section and of `expect.train` (graphs/schema.py)."""
    number = {"type": "number"}
    positive_int = {"type": "integer", "minimum": 1}
    source = {"type": "object", "additionalProperties": False,
              "properties": {"file": {"type": "string", "description": ".npz whose keys name inputs"},
                             "inputs": {"type": "object", "additionalProperties": {"type": "string"},
                                        "description": "input name -> FILE.npy, FILE.csv or FILE.npz:KEY"}}}
    train = {
        "type": "object", "additionalProperties": False, "required": ["loss"],
        "description": "`agrad train`: optimize `loss` over `params`",
        "properties": {
            "loss": {"type": "string", "description": "a scalar node"},
            "params": {"type": "array", "items": {"type": "string"},
                       "description": "default: every input with requires_grad"},
            "optimizer": {"type": "object", "required": ["type"], "properties": {"type": {"enum": list(OPTIMIZERS)}},
                          "additionalProperties": {"anyOf": [number, {"type": "boolean"},
                                                             {"type": "array",
                                                              "items": {"anyOf": [number, {"type": "null"}]}}]}},
            "schedule": {"type": "object", "properties": {"type": {"enum": list(SCHEDULES)},
                                                          "warmup": positive_int,
                                                          "mode": {"enum": list(CYCLIC_MODES)}},
                         "additionalProperties": {"anyOf": [number, {"type": "array", "items": number}]}},
            "steps": positive_int,
            "epochs": positive_int,
            "data": {"type": "object", "additionalProperties": False,
                     "properties": {"source": source, **source["properties"], "batch_size": positive_int,
                                    "shuffle": {"type": "boolean"}}},
            "clip_grad_norm": number,
            "eval": {"type": "object", "additionalProperties": False,
                     "properties": {"every": positive_int,
                                    "data": {"anyOf": [source, {"type": "object", "additionalProperties": False,
                                                                "properties": {"source": source}}]},
                                    "metrics": {"type": "array", "items": {"type": "string"}}}},
        },
    }
    assert set(train["properties"]) == set(TRAIN_KEYS)
    bound = {"type": "object", "additionalProperties": False, "properties": {"min": number, "max": number}}
    expect_train = {"type": "object", "additionalProperties": False,
                    "properties": {k: bound for k in EXPECT_TRAIN_KEYS}}
    return train, expect_train
