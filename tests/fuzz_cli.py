"""A seeded mutation fuzzer of the `agrad` CLI with hostile files, checkpoints, ONNX models,
plugin paths and signals. Not collected by pytest (its name does not start with `test_`);
the classes of failure it found each have a regression test in the hostile-input tests.

    PYTHONPATH=.pp python tests/fuzz_cli.py --seed 1 --cases 2000 --time 1800

Each case is a folder of files (a mutated example graph and its data, a corrupt checkpoint,
a corrupt ONNX model, a graph with one hostile sampling call (kind `sampling`), ...) and one
`agrad` command line, run in a child process forked from a parent that has imported agrad
once (a fresh interpreter per case costs a second;
`--exec` runs each in one, for a check of the fork). The child runs under an address-space
limit (RLIMIT_AS) and a wall-clock timeout. The oracle, SPEC §2.2 and §1.5:

- the exit status is in the set documented for the command (0 1 2 3; 130/143 after a
  signal; validate never 1 or 3); a child ended by a signal we did not send is a crash;
- no Python traceback, no "internal error in agrad" (nor "a bug in agrad import"), no "Exception
  ignored" on stderr; no NumPy message for what agrad should have refused in its own words
  (NUMPY_WORDS: a negative seed, an absurd size, a count NumPy cannot take);
- with `--format json`, stdout is one JSON document or empty (an error before any document);
  a status 0 or 1 always carries one;
- no hang (the timeout) and no runaway memory (the child's peak RSS stays under the bound);
- an output file (`--save`, `-o`, `--trace`) is the old file or a whole new one, and no
  temporary file is left beside it, whatever signal arrived when.

Every failing case prints its class, the command and the folder it ran in (kept with
`--keep`), and the seed and case number that regenerate it: `--seed S --only N`.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from small_classifier import SMALL_CLASSIFIER     # (tests/ is this script's folder: on sys.path)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "graphs" / "examples"
MEMORY_LIMIT = 3 << 30          # address space a child may add to the parent's
RSS_LIMIT = 2 << 30             # peak resident memory past which a case is a runaway
# NumPy's own words for a size, seed or parameter agrad should have refused first, in its terms: the
# user cannot act on them, and the status is often wrong (a file's error found only once a kernel ran).
# (Not "Unable to allocate": a size that fits the machine but not the child's address-space limit is
# an honest out of memory, AG044.)
NUMPY_WORDS = ["expected non-negative integer", "array is too big", "negative dimensions are not allowed",
               "ValueError: n < 0", "lam value too large", "Maximum allowed size exceeded", "low >= high",
               "high is out of bounds", "cannot convert float NaN to integer"]

SMALL_TRAIN = SMALL_CLASSIFIER + """\
train:
  loss: loss
  params: [W, b]
  optimizer: {type: adam, lr: 0.05, betas: [0.9, 0.99], weight_decay: 0.001, amsgrad: false}
  schedule: {type: cosine, warmup: 2}
  clip_grad_norm: 1.0
  steps: 20
  data: {source: {file: d.npz}, batch_size: 8, shuffle: true}
  eval: {every: 10, data: {file: t.npz}, metrics: [loss, "accuracy(logits, y)"]}
expect:
  train: {final_loss: {max: 5.0}, accuracy: {min: 0.0, max: 1.0}}
"""

FILE_GRAPH = """\
inputs:
  x: {file: %s, requires_grad: true}
nodes:
  s: sum(x * x)
backward: s
"""

# every sampling op with a seed, for the structural mutations to change their sizes, parameters and seeds
SAMPLING_GRAPH = """\
seed: 3
inputs:
  x: {value: [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], requires_grad: true}
  n: {value: [4.0, 10.0, 2.0]}
nodes:
  k: multinomial(x, 2, False, seed=5)
  m: {op: multinomial, args: [x, 6], replacement: true, seed: 11}
  z: normal(x, 0.5, seed=1)
  p: poisson(n, seed=2)
  b: binomial(n, sigmoid(n), seed=3)
  c: bernoulli(sigmoid(x), seed=4)
  r: randint_like(x, 0, 10, seed=6)
  d: dropout(x, 0.5, True, seed=7)
  loss: sum(z * d)
backward: loss
"""

CSV_TRAIN = SMALL_TRAIN.replace("data: {source: {file: d.npz}", "data: {source: {inputs: {x: x.csv, y: y.npy}}")


@dataclass
class Case:
    kind: str
    files: dict[str, bytes]
    argv: list[str]
    allowed: set[int] = field(default_factory=lambda: {0, 1, 2, 3})
    signal_at: float | None = None          # seconds after start to send `signum`
    signum: int = signal.SIGINT
    guarded: str | None = None              # an output file that must stay whole
    note: str = ""


# ---- hostile values ------------------------------------------------------------------------

HOSTILE_VALUES = [None, True, False, 0, -1, 1.5, 2 ** 70, -2 ** 63, 2 ** 64, 1e308, float("nan"), float("inf"),
                  float("-inf"), "", "x" * 5000, [], {}, [[[]]], "1e400", "\x00", "\U0001f600", [1] * 500,
                  {"a": 1}, [10 ** 12] * 3, [-1, -1], [2 ** 63], "../../../../etc/passwd", "/dev/zero", "cuda:999",
                  "float128", "meta", "nul\x00byte", [None], [float("nan")], "\t", "a: b", "*x", "&y", "!!python/none",
                  "{", "[", "'", '"', 0.0, -0.0, 1e-320]

ODD_EXPRESSIONS = ["x.attr", "lambda: 1", "[i for i in x]", "a < b < c", "x[::0]", "x[...]", "x[None]", "f(**k)",
                   "x if y else z", "1 @ 2", "neg(x, y, z, w)", "unknownop(x)", "add(x, x, alpha=1e400)",
                   "sum(x, dim=[0, 0, 0])", "reshape(x, [-1, -1])", "reshape(x, [100000000000000000000])",
                   "x[1000000000000000000000000000000]", "x[-10**30:10**30:10**30]", "'str' + x", "x ** 10**10",
                   "expand(x, [2147483648, 2147483648, 2147483648])", "f'{x}'", "b'bytes'", "1j", "x[1.5]",
                   "x[True]", "await x", "(yield x)", "(x := 1)", "*x", "neg(*x)", "neg(x)[0][0][0]",
                   "(" * 200 + "x" + ")" * 200, "neg(" * 60 + "x" + ")" * 60, "x" + " + x" * 400, "x @ x @ x @ x",
                   "sum(x, dim=99999999999999999999)", "softmax(x, dim=-100)", "x[0, 0, 0, 0, 0, 0, 0]",
                   "to(x, dtype='float128')", "to(x, device='cuda:99')", "dropout(x, p=2.0)", "dropout(x, p=nan)",
                   "cat([])", "stack([x] * 0)", "split(x, 0)", "chunk(x, -1)", "pad(x, [1000000000, 1000000000])",
                   "einsum('ii->', x)", "einsum('...->', x, x)", "grad(x, x)", "grad([], [])", "x[[[[[0]]]]]",
                   "arange(1e300)", "zeros([1e10])", "full([2], 1e400)", "clamp(x, min=nan)", "eye(-1)",
                   "gather(x, 0, x)", "x[x > 0]", "neg(x, bogus=1)", "neg(x, x=x)", "add(x, other=x, other=x)",
                   "\\u0000", "x\x00", "x # comment", "x;y", "import os", "__import__('os')", "x.__class__",
                   "getattr(x, 'a')", "neg(x)\nneg(x)", "repeat(x, [1000000, 1000000])", "max_pool2d(x, 0)",
                   "conv2d(x, x, stride=0)", "nll_loss(x, x)", "embedding(x, x)", "index_select(x, 0, x)"]
# the sampling ops (engine/ops/distributions.py) with hostile sizes, parameters, dtypes and seeds; and the
# library's factories, which a graph file cannot call (an unknown op, or a keyword it does not take)
SAMPLING_EXPRESSIONS = [
    "multinomial(x, 1000000000000, True)", "multinomial(softmax(x, dim=-1), 9223372036854775807, True)",
    "multinomial(abs(x), -1)", "multinomial(abs(x), 0)", "multinomial(abs(x), 1000)", "multinomial(neg(abs(x)), 1)",
    "multinomial(x * 0, 1)", "multinomial(exp(x * 1e30), 2, True)", "multinomial(log(neg(abs(x))), 1)",
    "multinomial(abs(x), 1.5)", "multinomial(abs(x), True)", "multinomial(abs(x), 1, replacement='yes')",
    "multinomial(reshape(abs(x), [-1]), 3, True, seed=-1)", "multinomial(abs(x), 1, seed='s')",
    "multinomial(expand(abs(x), [100000000, 100000000]), 2, True)", "multinomial(to(x, dtype='int64'), 1)",
    "normal(x, -1.0)", "normal(x, x * 0 - 1)", "normal(x, log(neg(abs(x))))", "normal(x, exp(x * 1e30))",
    "normal(x, 1.0, seed=-1)", "normal(x, 1.0, seed=18446744073709551616)", "normal(x, 1.0, seed=1.5)",
    "normal(x, 1.0, seed='7')", "normal(x, generator=x)", "normal(0.0, 1.0, size=[1000000000, 1000000000])",
    "normal(0.0, 1.0, [1000000000, 1000000000])", "normal(to(x, dtype='int64'), 1.0)", "normal(1.0, 2.0)",
    "normal(expand(x, [1000000000, 1000000000]), 1.0)", "poisson(x)", "poisson(neg(abs(x)) - 1)",
    "poisson(exp(x * 1e30))", "poisson(log(neg(abs(x))))", "poisson(to(x, dtype='int32'))", "poisson(x, seed=-5)",
    "poisson(expand(abs(x), [1000000000, 1000000000]))", "binomial(abs(x) * 1e30, sigmoid(x))",
    "binomial(exp(x * 1e30), sigmoid(x))", "binomial(neg(abs(x)), sigmoid(x) * 2)", "binomial(x, to(x, 'float64'))",
    "binomial(to(x, dtype='int64'), x)", "binomial(abs(x), log(neg(abs(x))), seed=-2)", "bernoulli(x, p=2.0)",
    "bernoulli(sigmoid(x), seed=-1)", "bernoulli(sigmoid(x), seed=9223372036854775808)", "bernoulli(x, p=-0.5)",
    "bernoulli(to(x, dtype='int64'))", "bernoulli(sigmoid(x), generator=None)", "bernoulli(sigmoid(x), p=1e400)",
    "randint_like(x, 10**30)", "randint_like(x, -5)", "randint_like(x, 0, 9223372036854775807, seed=-1)",
    "randint_like(x, 5, dtype='bool')", "randint_like(x, 5, dtype='float128')", "randint_like(x, 3, 2)",
    "randint_like(expand(x, [1000000000, 1000000000]), 5)", "randperm(10000000000000)", "randperm(-1)",
    "randn([1000000000, 1000000000])", "rand_like(x, seed=-1)", "randn_like(x, seed=-7)",
    "randint(0, 5, [10000000000000])", "dropout(x, 0.5, True, seed=-1)"]


def _hostile_value(rng: random.Random):
    value = rng.choice(HOSTILE_VALUES)
    if rng.random() < 0.1:
        for _ in range(rng.randint(50, 300)):
            value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def _paths(tree, prefix=()):
    """Every (path, value) in a loaded YAML tree."""
    yield prefix, tree
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _paths(v, prefix + (i,))


def _set(tree, path, value):
    for part in path[:-1]:
        tree = tree[part]
    tree[path[-1]] = value


def _get(tree, path):
    for part in path:
        tree = tree[part]
    return tree


def _same_type(rng: random.Random, value, strings: list[str]):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, 1, -1, 2, 3, 7, 64, 2 ** 31, 10 ** 6, value + 1, value - 1, -value])
    if isinstance(value, float):
        return rng.choice([0.0, -1.0, 0.5, 1e-30, 1e30, 3.4e38, float("nan"), float("inf"), -value, value * 1e6])
    if isinstance(value, str):
        if rng.random() < 0.5 and strings:
            return rng.choice(strings)
        return rng.choice([value[::-1], value + value, value[: len(value) // 2], value.upper(), value + "[0]",
                           f"neg({value})", f"{value} @ {value}", f"sum({value}, dim=5)", f"{value}[::2]"])
    if isinstance(value, list):
        value = list(value)
        if value and rng.random() < 0.5:
            del value[rng.randrange(len(value))]
        elif value:
            value.insert(rng.randrange(len(value) + 1), rng.choice(value))
        return value
    if isinstance(value, dict) and value:
        value = dict(value)
        del value[rng.choice(list(value))]
        return value
    return value


def _delete(tree, path):
    for part in path[:-1]:
        tree = tree[part]
    del tree[path[-1]]


def _dump(tree) -> str:
    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True
    try:
        return yaml.dump(tree, Dumper=Dumper, allow_unicode=True, sort_keys=False, default_flow_style=None,
                         width=120)
    except (yaml.YAMLError, RecursionError, ValueError):
        return json.dumps(tree, default=str)      # JSON is YAML


def mutate_structure(rng: random.Random, text: str) -> str:
    try:
        tree = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if not isinstance(tree, dict):
        return text
    for _ in range(rng.randint(1, 3)):
        paths = [p for p, _ in _paths(tree) if p]
        if not paths:
            break
        path = rng.choice(paths)
        what = rng.randrange(12)
        if what >= 8:           # same type, other value: past the schema, into the checks behind it
            _set(tree, path, _same_type(rng, _get(tree, path), [v for _, v in _paths(tree) if isinstance(v, str)]))
        elif what == 0:
            _delete(tree, path)
        elif what in (1, 2):
            _set(tree, path, _hostile_value(rng))
        elif what == 3 and "nodes" in tree and isinstance(tree["nodes"], dict) and tree["nodes"]:
            name = rng.choice(list(tree["nodes"]))
            inputs = tree.get("inputs")
            names = list(inputs) if isinstance(inputs, dict) and inputs else ["x"]
            name_in = str(rng.choice(names))
            if rng.random() < 0.3:      # (the word x only: these name ops with an x in them)
                tree["nodes"][name] = re.sub(r"\bx\b", lambda _: name_in, rng.choice(SAMPLING_EXPRESSIONS))
            else:
                tree["nodes"][name] = rng.choice(ODD_EXPRESSIONS).replace("x", name_in,
                                                                          1 if rng.random() < 0.5 else -1)
        elif what == 4 and "nodes" in tree and isinstance(tree["nodes"], dict) and tree["nodes"]:
            name = rng.choice(list(tree["nodes"]))
            node = tree["nodes"][name]
            if isinstance(node, str) and node.endswith(")"):
                keyword = rng.choice(['bogus', 'dim', 'keepdim', 'dtype', 'p', 'seed', 'generator', 'num_samples'])
                tree["nodes"][name] = node[:-1] + f", {keyword}=" \
                    f"{rng.choice(['1', '-1', '1e400', 'None', 'True', '[0, 0]', 'x', chr(39) * 2, str(2 ** 64)])})"
        elif what == 5:
            parent_path = path[:-1]
            parent = tree
            for part in parent_path:
                parent = parent[part]
            if isinstance(parent, dict):
                items = list(parent.items())
                rng.shuffle(items)
                parent.clear()
                parent.update(items)
        elif what == 6:
            top = rng.choice(["agrad", "dtype", "device", "seed", "name", "backward", "outputs", "retain_grad",
                              "expect", "train", "inputs", "nodes", "unknown_key"])
            tree[top] = _hostile_value(rng)
        else:
            _set(tree, path, rng.choice([10 ** rng.randint(6, 30), -(10 ** rng.randint(1, 30)),
                                         float("nan"), float("inf"), [10 ** rng.randint(3, 15)] * rng.randint(1, 6)]))
    return _dump(tree)


def mutate_text(rng: random.Random, text: str) -> bytes:
    """Text-level hostility: duplicated keys, tabs, a BOM, bad UTF-8, NULs, long lines, alias bombs."""
    lines = text.splitlines(keepends=True)
    what = rng.randrange(10)
    if what == 0 and lines:                               # a duplicated key
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif what == 1:                                       # tabs as indentation
        lines = [line.replace("  ", "\t", 1) if rng.random() < 0.3 else line for line in lines]
    elif what == 2:
        return b"\xef\xbb\xbf" + text.encode() if rng.random() < 0.5 else b"\xef\xbb\xbf" * 3 + text.encode()
    elif what == 3:
        data = bytearray(text.encode())
        at = rng.randrange(len(data) + 1)
        data[at:at] = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80"])
        return bytes(data)
    elif what == 4:
        data = bytearray(text.encode())
        data.insert(rng.randrange(len(data) + 1), 0)
        return bytes(data)
    elif what == 5 and lines:                             # a very long line
        i = rng.randrange(len(lines))
        lines[i] = lines[i].rstrip("\n") + " " * rng.choice([0, 1]) + "#" + "x" * rng.choice([10 ** 5, 10 ** 6]) + "\n"
    elif what == 6:                                       # an alias bomb ahead of the graph
        bomb = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, rng.randint(3, 10))]
        return ("\n".join(bomb) + "\n" + text).encode()
    elif what == 7:                                       # CRLF, CR alone, or form feeds
        sep = rng.choice(["\r\n", "\r", "\x0c\n", "\u2028", "\x85"])
        return sep.join(text.split("\n")).encode()
    elif what == 8:                                       # a second document, or a directive
        extra = rng.choice(["---\na: 1\n", "%YAML 1.1\n---\n", "--- !!python/object:os.system\n", "...\n",
                            "!!binary aGk=\n", "? [a, b]\n: 1\n", "<<: *nowhere\n", "%TAG ! tag:x,2000:\n---\n"])
        return (text + extra if rng.random() < 0.5 else extra + text).encode()
    else:                                                 # anchors and merge keys on the graph's own mappings
        return text.replace("inputs:", "inputs: &in", 1).replace("nodes:", "nodes:\n  <<: *in", 1).encode()
    return "".join(lines).encode()


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        what = rng.randrange(4)
        if what == 0 and data:                            # flip
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)
        elif what == 1 and data:                          # truncate
            del data[rng.randrange(len(data)):]
        elif what == 2:                                   # insert
            at = rng.randrange(len(data) + 1)
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif data:                                        # overwrite with an interesting value
            at = rng.randrange(len(data))
            data[at:at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x7f\xff\xff\xff",
                                          b"\x80\x00\x00\x00"])
    return bytes(data)


# ---- data files ------------------------------------------------------------------------------

def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def _npy_header(header: str, body: bytes = b"", version=(1, 0)) -> bytes:
    header = header + " " * (-(len(header) + 11) % 64) + "\n"
    if version[0] == 1:
        return b"\x93NUMPY" + bytes(version) + struct.pack("<H", len(header)) + header.encode("latin1") + body
    return b"\x93NUMPY" + bytes(version) + struct.pack("<I", len(header)) + header.encode("utf8") + body


def hostile_npy(rng: random.Random) -> bytes:
    good = np.arange(6, dtype=np.float32).reshape(2, 3)
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    choices = [
        lambda: mutate_bytes(rng, _npy(good)),
        lambda: _npy(good)[:rng.randrange(len(_npy(good)))],
        lambda: pickled.getvalue(),
        lambda: _npy(np.asfortranarray(np.arange(6.0).reshape(2, 3))),
        lambda: _npy(np.array(3.5)),
        lambda: _npy(np.zeros((0, 3))),
        lambda: _npy(np.array(["a", "b"])),
        lambda: _npy(np.array([1 + 2j])),
        lambda: _npy(np.array([1, 2], dtype="M8[s]")),
        lambda: _npy(np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")])),
        lambda: _npy(np.zeros(2, dtype="V8")),
        lambda: _npy(np.array([True, False])),
        lambda: _npy(np.array([1, 2], dtype=np.uint64)),
        lambda: _npy(np.array([np.nan, np.inf], dtype=np.float64)),
        lambda: _npy(np.array([1.0], dtype=np.float16)),
        lambda: _npy(np.array([1.0], dtype=np.longdouble)),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }"
                            % (rng.choice([10 ** 6, 2 ** 31, 10 ** 12]), rng.choice([10 ** 6, 2 ** 31, 3])),
                            b"\0" * 64),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", b"\0" * 24),
        lambda: _npy_header("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16),
        lambda: _npy_header("{'descr': [('a', '<f4', (%d,))], 'fortran_order': False, 'shape': (2,), }" % 10 ** 9),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", b"\0" * 4),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24, (3, 0)),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24, (2, 0)),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24, (9, 9)),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': 'yes', 'shape': (2, 3), }", b"\0" * 24),
        lambda: _npy_header("{'descr': '<f4', 'shape': (2, 3), }", b"\0" * 24),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", b"\0" * 24),
        lambda: _npy_header("{'descr': 'S%d', 'fortran_order': False, 'shape': (1,), }" % 10 ** 12),
        lambda: _npy_header("{'descr': '<U%d', 'fortran_order': False, 'shape': (1,), }" % 2 ** 40),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5, 3), }", b"\0" * 24),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", b"\0" * 24),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 70 + "), }", b"\0" * 4),
        lambda: _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 200 + ")" * 200 + "}"),
        lambda: _npy_header("{" * 5000 + "}" * 5000),
        lambda: _npy_header("[]"),
        lambda: _npy_header("{'descr': 'x' * 10**9, 'fortran_order': False, 'shape': (1,), }"),
        lambda: b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 100,
        lambda: b"\x93NUMPY\x02\x00\xff\xff\xff\x7f" + b"{" * 100,
        lambda: b"\x93NUMPY",
        lambda: b"",
        lambda: b"PK\x03\x04" + b"\0" * 40,
    ]
    return rng.choice(choices)()


def _zip(members: dict[str, bytes], compression=zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def hostile_npz(rng: random.Random, arrays: dict[str, np.ndarray]) -> bytes:
    members = {f"{k}.npy": _npy(v) for k, v in arrays.items()}
    good = _zip(members, rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    key = rng.choice(list(members))
    choices = [
        lambda: mutate_bytes(rng, good),
        lambda: good[:rng.randrange(len(good))],
        lambda: _zip({**members, key: hostile_npy(rng)}),
        lambda: _zip({**members, "extra.txt": b"hello"}),
        lambda: _zip({**members, "../evil.npy": _npy(np.zeros(2))}),
        lambda: _zip({k[:-4]: v for k, v in members.items()}),
        lambda: _zip({**members, key: good}),
        lambda: _zip({}),
        lambda: _zip({**members, key: _npy(np.zeros(2 ** 22, np.float32))}, zipfile.ZIP_DEFLATED),
        lambda: _zip({**members, key: _npy(np.zeros(2 ** 21, np.float32))}, zipfile.ZIP_BZIP2),
        lambda: _zip({**members, key: _npy(np.zeros(2 ** 21, np.float32))}, zipfile.ZIP_LZMA),
        lambda: _zip({**members, key + "/": b""}),
        lambda: _zip({**members, "a" * 300 + ".npy": _npy(np.zeros(1))}),
        lambda: _zip({**members, "\udcff.npy".encode("utf-8", "surrogateescape").decode("latin1"): _npy(np.zeros(1))}),
        lambda: good.replace(b"PK\x01\x02", b"PK\x01\x03", 1),
        lambda: good[:-22] + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0),
        lambda: _duplicate_member(members, key),
        lambda: _npy(np.zeros(3)),
        lambda: b"",
    ]
    return rng.choice(choices)()


def _duplicate_member(members, key) -> bytes:
    out = io.BytesIO()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(out, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
            archive.writestr(key, _npy(np.zeros((9, 9, 9))))
    return out.getvalue()


def _safetensors(header: dict | bytes | str, body: bytes = b"") -> bytes:
    raw = header if isinstance(header, bytes) else (header if isinstance(header, str) else json.dumps(header)).encode()
    return struct.pack("<Q", len(raw)) + raw + body


def hostile_safetensors(rng: random.Random, key: str) -> bytes:
    body = np.arange(6, dtype=np.float32).tobytes()
    good_header = {key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}
    good = _safetensors(good_header, body)
    choices = [
        lambda: mutate_bytes(rng, good),
        lambda: good[:rng.randrange(len(good))],
        lambda: struct.pack("<Q", 2 ** 63) + b"{}",
        lambda: struct.pack("<Q", 2 ** 40) + b"{}",
        lambda: _safetensors(b"{not json", body),
        lambda: _safetensors(b"\xff\xfe", body),
        lambda: _safetensors([1, 2], body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 10 ** 12]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [10 ** 6, 10 ** 6], "data_offsets": [0, 24]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [-2, -3], "data_offsets": [0, 24]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": "2x3", "data_offsets": [0, 24]}}, body),
        lambda: _safetensors({key: {"dtype": "Q99", "shape": [2, 3], "data_offsets": [0, 24]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [24, 0]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [-24, 0]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0.5, 24]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3]}}, body),
        lambda: _safetensors({key: 5}, body),
        lambda: _safetensors({key: {"dtype": None, "shape": None, "data_offsets": None}}, body),
        lambda: _safetensors({"__metadata__": {"a": {"b": 1}}, **good_header}, body),
        lambda: _safetensors({"__metadata__": 7, **good_header}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                              "other": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, body),
        lambda: _safetensors('{"%s": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, "%s": 1}'
                             % (key, key), body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, b""),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, body + b"\0" * 7),
        lambda: _safetensors("[" * 100000 + "]" * 100000),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [[2], 3], "data_offsets": [0, 24]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [True, 3], "data_offsets": [0, 24]}}, body),
        lambda: _safetensors({key: {"dtype": "F32", "shape": [2 ** 64, 0], "data_offsets": [0, 0]}}, body),
        lambda: _safetensors({key: {"dtype": "BOOL", "shape": [24], "data_offsets": [0, 24]}}, bytes(range(24))),
        lambda: b"",
        lambda: b"\0" * 7,
    ]
    return rng.choice(choices)()


def hostile_csv(rng: random.Random) -> bytes:
    rows = np.random.default_rng(rng.randrange(2 ** 32)).normal(size=(48, 4))
    good = "\n".join(",".join(f"{v:.6f}" for v in row) for row in rows) + "\n"
    choices = [
        lambda: mutate_bytes(rng, good.encode()),
        lambda: b"",
        lambda: b"a,b,c,d\n",
        lambda: ("a,b,c,d\n" + good).encode(),
        lambda: good.replace("\n", ",1\n", 3).encode(),
        lambda: good.replace(",", ",,", 2).encode(),
        lambda: good.replace("0.", "nan", 5).encode(),
        lambda: good.replace("0.", "1e400", 3).encode(),
        lambda: good.replace("0.", "0x1p3", 3).encode(),
        lambda: ("\ufeff" + good).encode(),
        lambda: good.encode() + b"\xff\xfe\n",
        lambda: good.encode("utf-16"),
        lambda: (",".join(["1"] * 200000) + "\n").encode(),
        lambda: ("1" * 1000000 + "\n").encode(),
        lambda: good.replace(",", ";").encode(),
        lambda: good.replace("\n", "\r\n").encode(),
        lambda: good.replace("\n", "\r").encode(),
        lambda: ("# comment\n" + good).encode(),
        lambda: ("\n" * 1000).encode(),
        lambda: good.encode().replace(b"\n", b"\x00\n", 2),
        lambda: ('"1","2","3","4"\n' * 48).encode(),
    ]
    return rng.choice(choices)()


# ---- ONNX ---------------------------------------------------------------------------------------

def hostile_onnx(rng: random.Random) -> bytes:
    data = (EXAMPLES / "onnx" / "resnet_block.onnx").read_bytes()
    if rng.random() < 0.4:
        return mutate_bytes(rng, data)
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load_from_string(data)
    graph = model.graph
    what = rng.randrange(14)
    if what == 0 and graph.input:
        dims = rng.choice(graph.input).type.tensor_type.shape.dim
        if dims:
            rng.choice(dims).dim_value = rng.choice([0, -1, 2 ** 40, 2 ** 62])
    elif what == 1 and graph.initializer:
        init = rng.choice(graph.initializer)
        init.raw_data = init.raw_data[:rng.randrange(len(init.raw_data) + 1)]
    elif what == 2 and graph.initializer:
        init = rng.choice(graph.initializer)
        init.data_type = rng.choice([0, 8, 14, 16, 99, TensorProto.STRING, TensorProto.COMPLEX64])
    elif what == 3 and graph.initializer:
        init = rng.choice(graph.initializer)
        init.data_location = TensorProto.EXTERNAL
        init.ClearField("raw_data")
        entry = init.external_data.add()
        entry.key, entry.value = "location", rng.choice(["../../../../etc/passwd", "/dev/zero", "nowhere.bin",
                                                         "resnet_block_x.npy"])
    elif what == 4 and graph.node:
        rng.choice(graph.node).op_type = rng.choice(["Bogus", "", "Loop", "If", "Scan", "Einsum", "NonMaxSuppression"])
    elif what == 5 and graph.node:
        node = rng.choice(graph.node)
        node.input.append(rng.choice(["", "nowhere", node.output[0]]))
    elif what == 6 and len(graph.node) > 1:       # a cycle
        a, b = rng.sample(list(graph.node), 2)
        a.input[0] = b.output[0]
        b.input[0] = a.output[0]
    elif what == 7:
        model.opset_import[0].version = rng.choice([0, 1, 99, 2 ** 40])
    elif what == 8 and graph.node:
        node = rng.choice(graph.node)
        node.attribute.append(helper.make_attribute(rng.choice(["kernel_shape", "strides", "pads", "axis", "bogus"]),
                                                    rng.choice([[10 ** 9], [-5], 0, 2 ** 62, "x", 1.5, [0.5, 2.5]])))
    elif what == 9 and graph.node:
        node = rng.choice(graph.node)
        for attr in node.attribute:
            if attr.ints:
                attr.ints[0] = rng.choice([0, -1, 2 ** 40])
    elif what == 10 and graph.initializer:
        init = rng.choice(graph.initializer)
        if init.dims:
            init.dims[0] = rng.choice([0, -1, 2 ** 40, init.dims[0] + 1])
    elif what == 11:
        del graph.output[:]
    elif what == 12 and graph.node:
        dup = graph.node.add()
        dup.CopyFrom(graph.node[0])
    else:
        model.ir_version = rng.choice([0, 1, 99])
    return model.SerializeToString()


# ---- plugins ------------------------------------------------------------------------------------
# A plugin is code the user chose to run (SPEC §4): what it raises must be a located error, but what it
# does to the process itself (closing stdout, os._exit, an endless loop) is its own business.

PLUGINS = {
    "syntax": b"def (:\n",
    "binary": bytes(range(256)) * 4,
    "raises": b"raise RuntimeError('plugin broke')\n",
    "exit0": b"import sys\nsys.exit(0)\n",
    "exit9": b"raise SystemExit(9)\n",
    "exitstr": b"raise SystemExit('bye')\n",
    "memory": b"raise MemoryError\n",
    "recursion": b"def f(): f()\nf()\n",
    "bad schema": b"from agrad import library\nlibrary.define('fz::f(Tensor x -> Tensor')\n",
    "twice": b"from agrad import library\nlibrary.define('fz::g(Tensor x) -> Tensor')\n"
             b"library.define('fz::g(Tensor x) -> Tensor')\n",
    "builtin": b"from agrad import library\nlibrary.define('add(Tensor x) -> Tensor')\n",
    "impl unknown": b"from agrad import library\nlibrary.impl('fz::none', 'CPU', lambda x: x)\n",
    "impl key": b"from agrad import library\nlibrary.define('fz::h(Tensor x) -> Tensor')\n"
                b"library.impl('fz::h', 'TPU', lambda x: x)\n",
    "nul": b"x = 1\x00\n",
    "bad utf8": b"x = '\xff'\n",
    "bom": b"\xef\xbb\xbfx = 1\n",
    "stdout": b"import sys\nsys.stdout.write('noise')\n",
    "base exc": b"raise BaseException('odd')\n",
    "generator exit": b"raise GeneratorExit\n",
}


# ---- cases ---------------------------------------------------------------------------------------

def _example_files(name: str) -> dict[str, bytes]:
    files = {name: (EXAMPLES / name).read_bytes()}
    text = files[name].decode()
    for ref in ("gnn_edges.npy", "data/digits.npz", "data/digits_test.npz", "data/chars.npz", "data/chars_eval.npz"):
        if ref in text:
            files[ref] = (EXAMPLES / ref).read_bytes()
    return files


def _train_data() -> dict[str, bytes]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)
    out = {}
    for name, arrays in (("d.npz", {"x": x, "y": y}), ("t.npz", {"x": x[:16], "y": y[:16]})):
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        out[name] = buffer.getvalue()
    return out


FAST_EXAMPLES = ["seed.yaml", "diamond.yaml", "mlp.yaml", "two_pass.yaml", "hessian_vector.yaml",
                 "split_and_slice.yaml", "gnn_layer.yaml", "classifier.yaml", "resnet_block.yaml"]
ALL_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.yaml"))


def _graph_command(rng: random.Random, graph: str) -> tuple[list[str], set[int]]:
    command = rng.choice(["validate", "run", "run", "inspect", "check", "test", "train", "export", "validate"])
    fmt = ["--format", "json"] if rng.random() < 0.5 and command not in ("export",) else []
    if command == "inspect" and not fmt and rng.random() < 0.3:
        fmt = ["--format", "dot"]
    extra = {"check": ["--fast"], "train": ["--steps", "2"], "export": ["-o", "out.onnx"]}.get(command, [])
    if command == "run" and rng.random() < 0.3:
        extra = ["--save", "out.npz"]
    allowed = {"validate": {0, 2}, "inspect": {0, 2, 3}, "export": {0, 2, 3}}.get(command, {0, 1, 2, 3})
    return [command, graph, *extra, *fmt], allowed


def make_case(rng: random.Random, kinds: list[str]) -> Case:
    kind = rng.choice(kinds)
    if kind in ("yaml-bytes", "yaml-struct", "yaml-text"):
        if rng.random() < 0.15:
            name, files = "sampling.yaml", {"sampling.yaml": SAMPLING_GRAPH.encode()}
        else:
            name = rng.choice(ALL_EXAMPLES if rng.random() < 0.15 else FAST_EXAMPLES)
            files = _example_files(name)
        text = files[name].decode()
        if kind == "yaml-bytes":
            files[name] = mutate_bytes(rng, files[name])
        elif kind == "yaml-struct":
            files[name] = mutate_structure(rng, text).encode("utf-8", "surrogatepass")
        else:
            files[name] = mutate_text(rng, text)
        argv, allowed = _graph_command(rng, name)
        return Case(kind, files, argv, allowed, note=name)
    if kind == "sampling":         # one hostile sampling call in an otherwise valid graph: nothing masks it
        tree = yaml.safe_load(SAMPLING_GRAPH)
        node = rng.choice(list(tree["nodes"]))
        tree["nodes"][node] = re.sub(r"\bx\b", lambda _: rng.choice(["x", "n"]), rng.choice(SAMPLING_EXPRESSIONS))
        if rng.random() < 0.3:
            tree = yaml.safe_load(mutate_structure(rng, _dump(tree))) or tree
        argv, allowed = _graph_command(rng, "g.yaml")
        return Case(kind, {"g.yaml": _dump(tree).encode("utf-8", "surrogatepass")}, argv, allowed, note=node)
    if kind == "train-struct":
        files = {"g.yaml": mutate_structure(rng, SMALL_TRAIN).encode("utf-8", "surrogatepass"), **_train_data()}
        command = rng.choice([["train", "g.yaml", "--steps", "3"], ["train", "g.yaml", "--steps", "3"],
                              ["test", "g.yaml"], ["validate", "g.yaml"], ["run", "g.yaml"]])
        return Case(kind, files, [*command, *(["--format", "json"] * rng.randint(0, 1))],
                    {0, 2} if command[0] == "validate" else {0, 1, 2, 3})
    if kind == "data":
        which = rng.choice(["npy", "npz", "safetensors", "train-npz", "train-csv", "train-npy"])
        if which == "npy":
            files = {"g.yaml": (FILE_GRAPH % "x.npy").encode(), "x.npy": hostile_npy(rng)}
        elif which == "npz":
            files = {"g.yaml": (FILE_GRAPH % "x.npz").replace("x.npz,", "x.npz, key: a,").encode(),
                     "x.npz": hostile_npz(rng, {"a": np.arange(6.0).reshape(2, 3), "b": np.ones(2)})}
        elif which == "safetensors":
            files = {"g.yaml": (FILE_GRAPH % "x.safetensors").replace("x.safetensors,", "x.safetensors, key: a,")
                     .encode(), "x.safetensors": hostile_safetensors(rng, "a")}
        elif which == "train-npz":
            files = {"g.yaml": SMALL_TRAIN.encode(), **_train_data()}
            files[rng.choice(["d.npz", "t.npz"])] = hostile_npz(
                rng, {"x": np.zeros((48, 4), np.float32), "y": np.zeros(48, np.int64)})
        elif which == "train-csv":
            files = {"g.yaml": CSV_TRAIN.encode(), **_train_data(), "x.csv": hostile_csv(rng),
                     "y.npy": _npy(np.zeros(48, np.int64))}
        else:
            files = {"g.yaml": CSV_TRAIN.replace("x.csv", "x.npy").encode(), **_train_data(),
                     "x.npy": hostile_npy(rng), "y.npy": _npy(np.zeros(48, np.int64))}
        if which.startswith("train"):
            argv = ["train", "g.yaml", "--steps", "3"]
        else:
            argv, _ = _graph_command(rng, "g.yaml")
        if not which.startswith("train") and rng.random() < 0.3:        # the same file through --input
            argv = ["run", "g.yaml", "--input", f"x={next(k for k in files if k != 'g.yaml')}"]
        if "--format" not in argv and rng.random() < 0.5:
            argv += ["--format", "json"]
        allowed = {0, 2} if argv[0] == "validate" else {0, 1, 2, 3}
        return Case(kind, files, argv, allowed, note=which)
    if kind == "checkpoint":
        return Case(kind, {"g.yaml": SMALL_TRAIN.encode(), **_train_data()}, [], note="checkpoint")  # see run_case
    if kind == "onnx":
        files = {"m.onnx": hostile_onnx(rng)}
        argv = ["import", "m.onnx", "-o", "out.yaml", *rng.choice([[], ["--weights", "safetensors"],
                                                                    ["--shape", "x=1,2,8,8"], ["--loss", "mse"]])]
        return Case(kind, files, argv, {0, 2, 3})
    if kind == "plugin":
        files = {"g.yaml": (EXAMPLES / "seed.yaml").read_bytes()}
        choice = rng.choice(sorted(PLUGINS) + ["missing", "folder", "devzero", "fifo", "newline name",
                                               "non-utf8 name", "no suffix", "empty"])
        plugin = {"missing": "nowhere.py", "folder": ".", "devzero": "/dev/zero", "fifo": "pipe.py",
                  "newline name": "a\nb.py", "non-utf8 name": os.fsdecode(b"p\xff.py"), "no suffix": "plug",
                  "empty": ""}.get(choice, "p.py")
        if choice in PLUGINS:
            files["p.py"] = PLUGINS[choice]
        elif choice in ("newline name", "non-utf8 name", "no suffix"):
            files[plugin] = b"x = 1\n"
        argv = [rng.choice(["run", "validate", "inspect", "check", "test", "train", "export"]), "g.yaml",
                "--plugin", plugin, *(["--format", "json"] * rng.randint(0, 1))]
        if argv[0] == "export":
            argv = [a for a in argv if a not in ("--format", "json")]
        return Case(kind, files, argv, {0, 1, 2, 3}, note=choice)
    if kind == "signal":
        target = rng.choice(["train", "run", "import", "export", "check-trace"])
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        files = {"g.yaml": SMALL_TRAIN.replace("steps: 20", "steps: 400").encode(), **_train_data()}
        if target == "train":
            guarded, argv = "ck.npz", ["train", "g.yaml", "--save", "ck.npz"]
        elif target == "run":
            # (not --repeat on resnet_block: its batch norm updates running stats each pass, failing expect:)
            repeat = rng.random() < 0.5
            files["g.yaml"] = (EXAMPLES / ("mlp.yaml" if repeat else "resnet_block.yaml")).read_bytes()
            guarded, argv = "out.npz", ["run", "g.yaml", "--save", "out.npz", *(["--repeat", "50"] * repeat)]
        elif target == "import":
            files["m.onnx"] = (EXAMPLES / "onnx" / "resnet_block.onnx").read_bytes()
            guarded, argv = "out.yaml", ["import", "m.onnx", "-o", "out.yaml"]
        elif target == "export":
            files["g.yaml"] = (EXAMPLES / "resnet_block.yaml").read_bytes()
            guarded, argv = "out.onnx", ["export", "g.yaml", "-o", "out.onnx"]
        else:
            files["g.yaml"] = (EXAMPLES / "mlp.yaml").read_bytes()
            guarded, argv = "trace.json", ["run", "g.yaml", "--trace", "trace.json", "--profile"]
        files[guarded] = b"the old file"
        return Case(kind, files, argv, {0, 128 + signum, -signum}, signal_at=rng.uniform(0.01, 2.5), signum=signum,
                    guarded=guarded, note=target)
    if kind == "cli-args":
        files = {"g.yaml": (EXAMPLES / "seed.yaml").read_bytes()}
        argv = rng.choice([
            ["run", "g.yaml", "--input", rng.choice(["a", "a=", "=x.npy", "zz=x.npy", "a=/dev/zero", "a=.",
                                                     "a=x.npy:k", "a=nowhere.npz:k"])],
            ["run", "g.yaml", "--seed", rng.choice(["-1", "1e400", str(2 ** 80), "nan", ""])],
            ["run", "g.yaml", "--dtype", rng.choice(["float128", "", "bool", "int8", "complex64"])],
            ["run", "g.yaml", "--device", rng.choice(["tpu", "cuda:-1", "cuda:99999999999999999999", "", "meta",
                                                      "dask", "cpu:0", "cuda:x"])],
            ["check", "g.yaml", "--eps", rng.choice(["0", "-1", "nan", "inf", "1e400", "1e-400"])],
            ["check", "g.yaml", "--atol", rng.choice(["-1", "nan", "inf"])],
            ["run", "g.yaml", "--save", rng.choice(["/", ".", "/dev/null", "/proc/self/mem", "a/b/c.npz", "x" * 300,
                                                    "\n.npz", ""])],
            ["run", "g.yaml", "--trace", rng.choice(["/", ".", "/dev/full", "a/b.json"])],
            ["train", "g.yaml", "--steps", rng.choice(["-1", "0", str(2 ** 70), "1.5"])],
            ["test", rng.choice(["/dev/zero", "/proc", "nowhere", "", "g.yaml", "."]), "--junit-xml",
             rng.choice(["/", "/dev/full", "j.xml", "/proc/x/j.xml"])],
            ["validate", rng.choice(["/dev/zero", "/dev/stdin", "nowhere.yaml", "", "-", "."])],
            ["import", rng.choice(["g.yaml", "/dev/zero"]), "--shape", rng.choice(["x=", "x=-1", "x=a,b", "=1",
                                                                                     "x=" + "9" * 40])],
            ["schema", "--format", "json"], ["schema", "extra"], ["ops", "nonexistent_op"], ["ops", "--format", "dot"],
            ["examples", rng.choice(["nonexistent", "../seed", ""])],
            ["examples", "seed", "--to", rng.choice(["/dev/null", "/", "g.yaml", "nested/dir"])],
        ])
        return Case(kind, files, argv, {0, 1, 2, 3})
    if kind == "library":          # the library's loaders, called as a script would call them
        which = rng.choice(["npz", "safetensors", "sniffed", "bytesio", "graph"])
        if which == "graph":
            name = rng.choice(FAST_EXAMPLES)
            files = _example_files(name)
            files[name] = mutate_structure(rng, files[name].decode()).encode("utf-8", "surrogatepass") \
                if rng.random() < 0.5 else mutate_bytes(rng, files[name])
            return Case(kind, files, ["@library", "graph", name], {0, 2}, note=which)
        arrays = {"a": np.arange(6.0).reshape(2, 3), "__metadata__": np.array(json.dumps(
            rng.choice([{"agrad": "dict"}, {"agrad": "tensor"}, {"agrad": "structure", "structure": json.dumps(
                rng.choice([{"a": 1}, [["x"]], None, {"type": "dict", "items": [[1, 2]]}, "\ud800"]))}])))}
        if which == "safetensors":
            data = hostile_safetensors(rng, "a")
        elif which == "npz" or rng.random() < 0.5:
            data = hostile_npz(rng, arrays)
        else:
            data = rng.choice([hostile_safetensors(rng, "a"), hostile_npy(rng), b"", b"\x80\x02}q\x00."])
        name = {"npz": "w.npz", "safetensors": "w.safetensors"}.get(which, "w.pt")
        return Case(kind, {name: data}, ["@library", "bytesio" if which == "bytesio" else "load", name], {0, 2},
                    note=which)
    raise ValueError(kind)


def library_call(argv: list[str]) -> int:
    """`@library load FILE`: agrad.load as a script calls it; 0 when it loads, 2 when it refuses with its
    documented error (SerializationError; GraphFileError/GraphRuntimeError for graphs.load), else a
    traceback on stderr."""
    import agrad
    from agrad import graphs
    what, name = argv
    try:
        if what == "load":
            agrad.load(name)
        elif what == "bytesio":
            agrad.load(io.BytesIO(Path(name).read_bytes()))
        else:
            graphs.load(name).run()
    except (agrad.serialization.SerializationError, graphs.GraphFileError, graphs.GraphRuntimeError) as exc:
        print(f"refused: {str(exc)[:200]}", file=sys.stderr)
        return 2
    return 0


KINDS = ["yaml-bytes", "yaml-struct", "yaml-text", "train-struct", "data", "checkpoint", "onnx", "plugin", "signal",
         "cli-args", "library", "sampling"]


# ---- running a case -----------------------------------------------------------------------------

@dataclass
class Outcome:
    status: int | None          # exit status, -signal when a signal ended it, None when it hung
    stdout: bytes
    stderr: bytes
    seconds: float
    peak_rss: int


class Runner:
    """Runs `agrad ARGV` in a folder: forked from this process (agrad imported once) or exec'd."""

    def __init__(self, exec_mode: bool, timeout: float):
        self.exec_mode, self.timeout = exec_mode, timeout
        if not exec_mode:
            from agrad.cli import commands
            from agrad.cli.main import cli  # noqa: F401  (imported before the fork)
            for name in commands.COMMANDS:
                cli.get_command(None, name)
            import agrad.graphs  # noqa: F401
            try:
                import onnx  # noqa: F401
                import agrad.graphs.onnx.importing  # noqa: F401
            except ImportError:
                pass

    def run(self, folder: Path, argv: list[str], signal_at: float | None = None, signum: int = 0) -> Outcome:
        out, err = folder / ".fuzz-stdout", folder / ".fuzz-stderr"
        start = time.monotonic()
        ready_r, ready_w = os.pipe()        # the child says when agrad starts: signals are timed from then
        pid = os.fork()
        if pid == 0:                                                    # the child
            os.close(ready_r)
            try:
                os.chdir(folder)
                os.setpgid(0, 0)
                limit = _vm_size() + MEMORY_LIMIT
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                fd_in = os.open(os.devnull, os.O_RDONLY)
                fd_out = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                fd_err = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd_in, 0), os.dup2(fd_out, 1), os.dup2(fd_err, 2)
                env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "120"}
                os.write(ready_w, b"1")
                os.close(ready_w)
                if self.exec_mode and argv[0] != "@library":
                    os.execve(sys.executable, [sys.executable, "-m", "agrad.cli", *argv], env)
                os.environ.update(env)
                for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
                    signal.signal(s, signal.SIG_DFL if s != signal.SIGINT else signal.default_int_handler)
                sys.argv = ["agrad", *argv]
                from agrad.cli.main import main
                code = 0
                try:
                    if argv[0] == "@library":
                        code = library_call(argv[1:])
                    else:
                        main()
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                except BaseException:
                    pass
                os._exit(code)
            except BaseException:
                import traceback
                traceback.print_exc()
                os._exit(99)
        os.close(ready_w)
        import select
        if select.select([ready_r], [], [], self.timeout)[0]:
            os.read(ready_r, 1)
        os.close(ready_r)
        start = time.monotonic()
        sent = False
        while True:
            done, wait_status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            elapsed = time.monotonic() - start
            if signal_at is not None and not sent and elapsed >= signal_at:
                os.kill(pid, signum)
                sent = True
            if elapsed > self.timeout:
                os.killpg(pid, signal.SIGKILL)
                os.wait4(pid, 0)
                return Outcome(None, _read(out), _read(err), elapsed, 0)
            time.sleep(0.005)
        seconds = time.monotonic() - start
        try:
            os.killpg(pid, signal.SIGKILL)       # anything the command left behind (dask workers)
        except (ProcessLookupError, PermissionError):
            pass
        status = os.waitstatus_to_exitcode(wait_status)
        return Outcome(status, _read(out), _read(err), seconds, usage.ru_maxrss * 1024)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:       # the child ended before it made it
        return b""


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _checkpoint_case(rng: random.Random, case: Case, folder: Path, runner: Runner, base: Path) -> list[str]:
    """Mutate the checkpoint `base` (made once per fuzz run) and resume from it, saving to a guarded file."""
    with np.load(base, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    good = base.read_bytes()
    what = rng.randrange(6)
    if what == 0:
        data = mutate_bytes(rng, good)
    elif what == 1:
        data = good[:rng.randrange(len(good))]
    elif what == 2:
        key = rng.choice(list(arrays))
        arrays[key] = rng.choice([np.zeros(0), np.array(1.5), np.full((2, 2), np.nan, np.float32),
                                  np.array(["x"]), np.zeros((3, 4), np.float64), np.array([2 ** 62]),
                                  np.zeros(10 ** 5, np.float32), np.zeros((1,) * 40)])
        data = _savez(arrays)
    elif what == 3:
        meta_key = next((k for k in arrays if "meta" in k), None)
        if meta_key is None:
            data = _savez(arrays)
        else:
            raw = arrays[meta_key]
            text = bytes(raw).decode("utf-8", "replace") if raw.dtype == np.uint8 else str(raw)
            try:
                meta = json.loads(text)
            except ValueError:
                meta = {}
            paths = [p for p, _ in _paths(meta) if p]
            if paths:
                _set(meta, rng.choice(paths), _hostile_value(rng))
            encoded = json.dumps(meta, allow_nan=True).encode() if rng.random() < 0.8 else mutate_bytes(
                rng, json.dumps(meta).encode())
            arrays[meta_key] = (np.frombuffer(encoded, np.uint8) if raw.dtype == np.uint8
                                else np.array(encoded.decode("utf-8", "replace")))
            data = _savez(arrays)
    elif what == 4:
        data = hostile_npz(rng, arrays)
    else:
        key = rng.choice(list(arrays))
        del arrays[key]
        data = _savez(arrays)
    (folder / "bad.npz").write_bytes(data)
    (folder / "keep.npz").write_bytes(b"the old checkpoint")
    case.argv = ["train", "g.yaml", "--resume", "bad.npz", "--save", "keep.npz", "--steps",
                 str(rng.choice([1, 8, 12])), *(["--format", "json"] * rng.randint(0, 1))]
    case.guarded = "keep.npz"
    return case.argv


def _savez(arrays) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def judge(case: Case, outcome: Outcome, folder: Path, old_guarded: bytes | None) -> list[str]:
    """The classes of failure this outcome shows (empty: it passed)."""
    failures = []
    err = outcome.stderr.decode("utf-8", "replace")
    if outcome.status is None:
        return ["hang"]
    if outcome.status not in case.allowed:
        failures.append("crash-signal" if outcome.status < 0 else f"status-{outcome.status}")
    if "Traceback (most recent call last)" in err:
        failures.append("traceback")
    if "internal error in agrad" in err or "a bug in agrad" in err:
        failures.append("internal-error")
    if "Exception ignored" in err:
        failures.append("exception-ignored")
    if any(words in err for words in NUMPY_WORDS):
        failures.append("numpy-message")
    if outcome.peak_rss > RSS_LIMIT:
        failures.append("memory")
    if "--format" in case.argv and case.argv[case.argv.index("--format") + 1] == "json" and outcome.status in (
            0, 1, 2, 3):
        text = outcome.stdout.decode("utf-8", "replace").strip()
        if text or outcome.status in (0, 1):
            try:
                json.loads(text)
            except ValueError:
                failures.append("bad-json")
    if case.guarded is not None:
        path = folder / case.guarded
        leftovers = [p.name for p in folder.iterdir() if p.name.startswith(f".{case.guarded}.")]
        if leftovers:
            failures.append("temp-file-left")
        if not path.exists():
            failures.append("output-removed")
        elif path.read_bytes() != old_guarded:
            if outcome.status not in (0, 130, 143) and case.kind == "checkpoint":
                failures.append("output-replaced-on-error")
            elif not _whole(path):
                failures.append("output-torn")
    return failures


def _whole(path: Path) -> bool:
    data = path.read_bytes()
    try:
        if path.suffix == ".npz":
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                for k in npz.files:
                    npz[k]
        elif path.suffix == ".json":
            json.loads(data)
        elif path.suffix == ".yaml":
            yaml.safe_load(data)
        elif path.suffix == ".onnx":
            import onnx
            onnx.load_from_string(data)
        return True
    except Exception:
        return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--time", type=float, default=600, help="stop after this many seconds")
    parser.add_argument("--timeout", type=float, default=60, help="per case")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--only", type=int, action="append", help="run only case number N (repeatable)")
    parser.add_argument("--keep", action="store_true", help="keep the folders of failing cases")
    parser.add_argument("--exec", action="store_true", help="a fresh interpreter per case instead of a fork")
    parser.add_argument("--json", help="write a summary here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case's status")
    args = parser.parse_args(argv)
    kinds = args.kinds.split(",")
    runner = Runner(args.exec, args.timeout)
    work = Path(tempfile.mkdtemp(prefix="agrad-fuzz-"))
    base = None
    if "checkpoint" in kinds:
        (work / "base").mkdir()
        for name, data in {"g.yaml": SMALL_TRAIN.encode(), **_train_data()}.items():
            (work / "base" / name).write_bytes(data)
        made = runner.run(work / "base", ["train", "g.yaml", "--steps", "6", "--save", "ck.npz"])
        assert made.status == 0, made.stderr.decode()
        base = work / "base" / "ck.npz"
    started = time.monotonic()
    counts: dict[str, int] = {}
    statuses: dict[str, int] = {}
    failing: list[dict] = []
    ran = 0
    for number in range(args.cases):
        if args.only and number not in args.only:
            continue
        if time.monotonic() - started > args.time:
            break
        rng = random.Random(f"{args.seed}:{number}")
        try:
            case = make_case(rng, kinds)
        except Exception as exc:       # noqa: BLE001 - a mutation the generator cannot make: the next case
            print(f"case {number}: no case made ({type(exc).__name__}: {exc})", flush=True)
            continue
        folder = work / f"case{number}"
        folder.mkdir()
        for name, data in case.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if case.note == "fifo":
            os.mkfifo(folder / "pipe.py")
        if case.kind == "checkpoint":
            _checkpoint_case(rng, case, folder, runner, base)
        old = (folder / case.guarded).read_bytes() if case.guarded else None
        outcome = runner.run(folder, case.argv, case.signal_at, case.signum)
        ran += 1
        classes = judge(case, outcome, folder, old)
        statuses[f"{case.kind} {outcome.status}"] = statuses.get(f"{case.kind} {outcome.status}", 0) + 1
        if args.verbose:
            last = outcome.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            print(f"case {number} [{case.kind}/{case.note}] status={outcome.status} {outcome.seconds:.1f}s "
                  f"{' '.join(case.argv)[:80]!r}: {last[0][:160]}", flush=True)
        for c in classes:
            counts[f"{case.kind}/{c}"] = counts.get(f"{case.kind}/{c}", 0) + 1
        if classes:
            err = outcome.stderr.decode("utf-8", "replace").strip().splitlines()
            tail = next((line for line in reversed(err) if line.strip()), "")
            failing.append({"case": number, "kind": case.kind, "classes": classes, "argv": case.argv,
                            "status": outcome.status, "note": case.note, "stderr": tail[:300],
                            "folder": str(folder)})
            print(f"FAIL case {number} [{case.kind}/{case.note}] {','.join(classes)} status={outcome.status} "
                  f"({outcome.seconds:.1f}s): agrad {' '.join(map(repr, case.argv))}\n    {tail[:300]}\n"
                  f"    reproduce: python tests/fuzz_cli.py --seed {args.seed} --cases {number + 1} --only {number} "
                  f"--kinds {args.kinds} --keep  (folder {folder})", flush=True)
        if not (classes and args.keep):
            shutil.rmtree(folder, ignore_errors=True)
        if ran % 100 == 0:
            print(f"... {ran} cases, {len(failing)} failing, {time.monotonic() - started:.0f}s", flush=True)
    print(f"{ran} cases in {time.monotonic() - started:.0f}s; {len(failing)} failing")
    for name, count in sorted(counts.items()):
        print(f"  {name}: {count}")
    print("statuses (kind status: cases): " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    if args.json:
        summary = {"cases": ran, "counts": counts, "statuses": statuses, "failing": failing}
        Path(args.json).write_text(json.dumps(summary, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
