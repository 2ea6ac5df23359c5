"""PyTorch's top-level basics, as scenarios that run on PyTorch and on agrad alike: the constants,
torch.dtype, finfo/iinfo, promote_types/result_type/can_cast, the is_* predicates, the default
dtype and device, typename, the thread/determinism/matmul-precision settings, Generator and the
global seed, the sampling functions (normal's overloads, multinomial, randperm, poisson, binomial,
randint_like, the in-place log_normal_/cauchy_/geometric_) and the Tensor casts and memory
predicates (byte/char/short, is_signed, is_nonzero, new_empty_strided, share_memory_), asarray.

Random numbers cannot equal PyTorch's (another bit generator): the scenarios record what does not
depend on the draws (shapes, dtypes, Nodes, messages, the values a certain draw gives, whether a
seed repeats its numbers); tests/engine/test_torch_namespace_basics.py checks the distributions.
Each scenario takes the library module `T` (torch, or agrad) and returns plain JSON values;
`tests/reference/make_namespace_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/namespace.json`. Messages read LIB for the library's name. A scenario
puts back any global setting it changes.
"""
from __future__ import annotations

import importlib
import re

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _dtypes(T):
    # the dtypes agrad has (no bfloat16, no complex ones)
    return [T.float16, T.float32, T.float64, T.uint8, T.int8, T.int16, T.int32, T.int64, T.uint32, T.uint64, T.bool]


def _dname(d) -> str:
    return str(d).split(".")[-1]


def _node(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


@scenario
def constants(T):
    return [repr(T.pi), repr(T.e), repr(T.inf), repr(T.nan), T.newaxis is None]


@scenario
def dtype_class(T):
    return {_dname(d): [isinstance(d, T.dtype), d.is_floating_point, d.is_signed, d.is_complex, d.itemsize,
                        d.to_real() is d] for d in _dtypes(T)}


@scenario
def finfo_values(T):
    out = {}
    for d in (T.float16, T.float32, T.float64):
        f = T.finfo(d)
        out[_dname(d)] = [f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype, repr(f)]
    out["default"] = [T.finfo() == T.finfo(T.float32), T.finfo().dtype]
    out["errors"] = [_error(lambda: T.finfo(T.int32)), _error(lambda: T.finfo(T.bool))]
    return out


@scenario
def iinfo_values(T):
    out = {}
    for d in (T.uint8, T.int8, T.int16, T.int32, T.int64, T.uint32, T.uint64):
        i = T.iinfo(d)
        out[_dname(d)] = [i.bits, str(i.max), str(i.min), i.dtype, repr(i)]
    out["errors"] = [_error(lambda: T.iinfo(T.bool)), _error(lambda: T.iinfo(T.float32))]
    return out


@scenario
def promote_types_table(T):
    out = {}
    for a in _dtypes(T):
        for b in _dtypes(T):
            r = _error(lambda: T.promote_types(a, b))
            out[f"{_dname(a)},{_dname(b)}"] = r if r is not None else _dname(T.promote_types(a, b))
    out["not a dtype"] = _error(lambda: T.promote_types("float32", T.int8))
    return out


@scenario
def can_cast_table(T):
    out = {f"{_dname(a)}->{_dname(b)}": T.can_cast(a, b) for a in _dtypes(T) for b in _dtypes(T)}
    out["not a dtype"] = _error(lambda: T.can_cast(1, T.int32))
    return out


@scenario
def result_type_cases(T):
    i8 = T.tensor([1], dtype=T.int8)
    cases = {"int tensor, float": (T.tensor([1]), 1.0), "int, float": (1, 1.0), "int, bool": (2, True),
             "0-d double, float vector": (T.tensor(1., dtype=T.float64), T.tensor([1.])),
             "int, int": (1, 2), "int8 vector, big int": (i8, 1000), "bool, bool": (True, False),
             "bool vector, float": (T.tensor([True]), 2.5), "0-d int64, int8 vector": (T.tensor(5), i8),
             "0-d float64, int vector": (T.tensor(1., dtype=T.float64), T.tensor([1])),
             "half vector, 0-d double": (T.tensor([1.], dtype=T.float16), T.tensor(2., dtype=T.float64))}
    out = {name: _dname(T.result_type(*args)) for name, args in cases.items()}
    out["list"] = _error(lambda: T.result_type([1], 2))
    return out


@scenario
def predicates(T):
    u8, f, b = T.tensor([1], dtype=T.uint8), T.tensor(1.), T.tensor([True])
    return {"is_floating_point": [T.is_floating_point(f), T.is_floating_point(u8),
                                  _error(lambda: T.is_floating_point(1.0))],
            "is_complex": [T.is_complex(f), T.is_complex(u8)],
            "is_signed": [T.is_signed(u8), T.is_signed(b), T.is_signed(f), T.is_signed(T.tensor([1]))],
            "is_nonzero": [T.is_nonzero(T.tensor([[3]])), T.is_nonzero(T.tensor([0.])),
                           T.is_nonzero(T.tensor(float("nan"))), _error(lambda: T.is_nonzero(T.tensor([1, 2]))),
                           _error(lambda: T.is_nonzero(T.tensor([]))), _error(lambda: T.is_nonzero(1))],
            "bool()": [_error(lambda: bool(T.tensor([]))), _error(lambda: bool(T.ones(2)))],
            "is_same_size": [T.is_same_size(T.ones(2), T.ones(3)), T.is_same_size(T.ones(2, 3), T.zeros(2, 3))],
            "numel": [T.numel(T.ones(2, 3)), T.numel(T.ones(())), _error(lambda: T.numel([1, 2]))]}


@scenario
def default_dtype(T):
    out = {"errors": [_error(lambda: T.set_default_dtype(T.int32)), _error(lambda: T.set_default_dtype("float64"))]}
    try:
        for d in (T.float64, T.float16):
            T.set_default_dtype(d)
            made = {"get": T.get_default_dtype(), "tensor(1.)": T.tensor(1.), "ones": T.ones(2), "rand": T.rand(2),
                    "arange(1.)": T.arange(1.), "linspace": T.linspace(0, 1, 3), "int*1.5": T.tensor([1]) * 1.5,
                    "exp(int)": T.tensor([1]).exp(), "normal(0., 1., (2,))": T.normal(0., 1., (2,)),
                    "randn": T.randn(2), "eye": T.eye(2)}
            out[_dname(d)] = {k: _dname(v if isinstance(v, T.dtype) else v.dtype) for k, v in made.items()}
            out[_dname(d)]["finfo()"] = T.finfo().dtype
            out[_dname(d)]["tensor(1.5) repr"] = repr(T.tensor(1.5)).replace("torch", "LIB").replace("agrad", "LIB")
    finally:
        T.set_default_dtype(T.float32)
    return out


@scenario
def default_tensor_type(T):
    import warnings
    out = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # (deprecated, said once per process)
            T.set_default_tensor_type(T.DoubleTensor)
            out["DoubleTensor"] = _dname(T.get_default_dtype())
            T.set_default_tensor_type(f"{T.__name__}.HalfTensor")
            out["'LIB.HalfTensor'"] = _dname(T.get_default_dtype())
            out["IntTensor"] = _error(lambda: T.set_default_tensor_type(T.IntTensor))
            out["3"] = _error(lambda: T.set_default_tensor_type(3))
            out["after"] = _dname(T.get_default_dtype())
    finally:
        T.set_default_dtype(T.float32)
    return out


@scenario
def default_device(T):
    out = {"start": str(T.get_default_device())}
    try:
        T.set_default_device("meta")
        out["meta"] = [str(T.get_default_device()), T.ones(2).device.type, T.tensor([1.]).device.type,
                       T.arange(3).device.type, T.rand(2).device.type, T.ones(2, device="cpu").device.type]
    finally:
        T.set_default_device(None)
    out["reset"] = [str(T.get_default_device()), T.ones(1).device.type]
    return out


@scenario
def typename_of(T):
    nn = importlib.import_module(f"{T.__name__}.nn")
    names = [T.typename(T.ones(2)), T.typename(T.ones(2, dtype=T.int64)), T.typename(T.ones(2, dtype=T.uint8)),
             T.typename(3), T.typename(nn.Linear(1, 1)), T.typename(nn.Linear), T.typename(len)]
    return [n.replace(T.__name__, "LIB") for n in names]


@scenario
def thread_settings(T):
    before = T.get_num_threads()
    try:
        T.set_num_threads(3)
        out = {"set 3": T.get_num_threads()}
    finally:
        T.set_num_threads(before)
    out["errors"] = [_error(lambda: T.set_num_threads(0)), _error(lambda: T.set_num_threads("a")),
                     _error(lambda: T.set_num_interop_threads(0)), _error(lambda: T.set_num_interop_threads(-2))]
    out["types"] = [type(T.get_num_threads()).__name__, type(T.get_num_interop_threads()).__name__]
    return out


@scenario
def determinism_settings(T):
    out = {"start": [T.are_deterministic_algorithms_enabled(), T.is_deterministic_algorithms_warn_only_enabled(),
                     T.get_deterministic_debug_mode()]}
    try:
        T.use_deterministic_algorithms(True, warn_only=True)
        out["warn_only"] = [T.are_deterministic_algorithms_enabled(), T.is_deterministic_algorithms_warn_only_enabled(),
                            T.get_deterministic_debug_mode()]
        T.set_deterministic_debug_mode("error")
        out["error"] = [T.are_deterministic_algorithms_enabled(), T.is_deterministic_algorithms_warn_only_enabled(),
                        T.get_deterministic_debug_mode()]
        T.set_deterministic_debug_mode(1)
        out["1"] = T.get_deterministic_debug_mode()
        out["errors"] = [_error(lambda: T.use_deterministic_algorithms(1)),
                         _error(lambda: T.set_deterministic_debug_mode("foo")),
                         _error(lambda: T.set_deterministic_debug_mode(3)),
                         _error(lambda: T.set_deterministic_debug_mode(0.5))]
    finally:
        T.set_deterministic_debug_mode("default")
    out["end"] = [T.are_deterministic_algorithms_enabled(), T.get_deterministic_debug_mode()]
    return out


@scenario
def matmul_precision(T):
    import warnings
    out = {"start": T.get_float32_matmul_precision()}
    try:
        T.set_float32_matmul_precision("medium")
        out["medium"] = T.get_float32_matmul_precision()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.set_float32_matmul_precision("foo")
        # (PyTorch's C++ warning ends with where it was raised)
        out["foo"] = [T.get_float32_matmul_precision(),
                      [str(w.message).split(" (Triggered internally")[0] for w in caught]]
        out["3"] = _error(lambda: T.set_float32_matmul_precision(3))
    finally:
        T.set_float32_matmul_precision("highest")
    return out


@scenario
def generator_object(T):
    g = T.Generator()
    out = {"initial": g.initial_seed(), "device": str(g.device), "manual_seed returns it": g.manual_seed(3) is g,
           "seeded": g.initial_seed(), "-1": g.manual_seed(-1).initial_seed(),
           "-2^63": g.manual_seed(-2 ** 63).initial_seed(), "2^64-1": g.manual_seed(2 ** 64 - 1).initial_seed(),
           "state dtype": _dname(g.get_state().dtype), "state dim": g.get_state().dim()}
    out["errors"] = [_error(lambda: g.manual_seed(1.5)), _error(lambda: g.manual_seed("a")),
                     _error(lambda: g.manual_seed(2 ** 64)), _error(lambda: T.Generator("meta")),
                     _error(lambda: g.set_state(T.zeros(3))), _error(lambda: g.set_state(5))]
    # the state's size is the bit generator's (PyTorch's mt19937: 5056 bytes; agrad's PCG64: 37)
    wrong = _error(lambda: g.set_state(T.zeros(3, dtype=T.uint8)))
    out["wrong size"] = [wrong[0], re.sub(r"of size \d+", "of size N", wrong[1])]
    g.manual_seed(11)
    state = g.get_state()
    a = T.rand(5, generator=g)
    g.set_state(state)
    out["set_state repeats"] = T.equal(a, T.rand(5, generator=g))
    twin = g.clone_state()
    out["clone_state"] = [type(twin).__name__, T.equal(T.rand(4, generator=g), T.rand(4, generator=twin))]
    seed = g.seed()
    out["seed()"] = [type(seed).__name__, g.initial_seed() == seed, 0 <= seed < 2 ** 64]
    out["not a generator"] = _error(lambda: T.rand(2, generator=5))[0]
    return out


@scenario
def global_seed(T):
    out = {"manual_seed returns default_generator": T.manual_seed(7) is T.default_generator,
           "initial_seed": T.initial_seed(), "default_generator's": T.default_generator.initial_seed(),
           "float seed": T.manual_seed(2.9).initial_seed(), "errors": [_error(lambda: T.manual_seed("a")),
                                                                     _error(lambda: T.manual_seed(2 ** 64))]}
    s = T.seed()
    out["seed()"] = [type(s).__name__, T.initial_seed() == s]
    T.manual_seed(5)
    a = T.rand(3)
    T.manual_seed(5)
    out["repeats"] = T.equal(a, T.rand(3))
    return out


def _repeats(T, draw):
    """Whether two generators of one seed give the same numbers, and one of another seed others."""
    a, b, c = (draw(T.Generator().manual_seed(s)) for s in (4, 4, 5))
    return [T.equal(a, b), not T.equal(a, c)]


@scenario
def generator_argument(T):
    x = T.full((50,), 0.5)
    return {"rand": _repeats(T, lambda g: T.rand(50, generator=g)),
            "randn": _repeats(T, lambda g: T.randn(50, generator=g)),
            "randint": _repeats(T, lambda g: T.randint(0, 1000, (50,), generator=g)),
            "randperm": _repeats(T, lambda g: T.randperm(50, generator=g)),
            "normal": _repeats(T, lambda g: T.normal(T.zeros(50), 1., generator=g)),
            "normal(float, float)": _repeats(T, lambda g: T.normal(0., 1., (50,), generator=g)),
            "bernoulli": _repeats(T, lambda g: T.bernoulli(x, generator=g)),
            "poisson": _repeats(T, lambda g: T.poisson(T.full((50,), 100.), generator=g)),
            "multinomial": _repeats(T, lambda g: T.multinomial(T.ones(1000), 20, generator=g)),
            "uniform_": _repeats(T, lambda g: T.zeros(50).uniform_(generator=g)),
            "normal_": _repeats(T, lambda g: T.zeros(50).normal_(generator=g)),
            "exponential_": _repeats(T, lambda g: T.zeros(50).exponential_(generator=g)),
            "cauchy_": _repeats(T, lambda g: T.zeros(50).cauchy_(generator=g)),
            "log_normal_": _repeats(T, lambda g: T.zeros(50).log_normal_(generator=g)),
            "geometric_": _repeats(T, lambda g: T.zeros(50).geometric_(0.2, generator=g)),
            "random_": _repeats(T, lambda g: T.zeros(50).random_(0, 1000, generator=g))}


@scenario
def normal_overloads(T):
    mean = T.zeros(2, 3, requires_grad=True)
    std = T.ones(3, requires_grad=True)
    tt, tf, ft = T.normal(mean, std), T.normal(mean, 1.), T.normal(0., std)
    ff = T.normal(0., 1., (2, 2))
    (tt.sum() + tf.sum() + ft.sum()).backward()
    out = {"shapes": [list(r.shape) for r in (tt, tf, ft, ff)], "nodes": [_node(r) for r in (tt, tf, ft, ff)],
           "grads": [mean.grad.tolist(), std.grad.tolist()],
           "dtypes": [_dname(T.normal(T.zeros(2), T.ones(2, dtype=T.float64)).dtype),
                      _dname(T.normal(T.zeros(2, dtype=T.float64), T.ones(2)).dtype),
                      _dname(T.normal(T.zeros(2, dtype=T.float16), 1.).dtype),
                      _dname(T.normal(1, 2, (2,)).dtype), _dname(T.normal(0., 1., (2,), dtype=T.float64).dtype),
                      _dname(T.normal(0., T.ones(2, dtype=T.float64)).dtype)],
           "std 0": [T.normal(T.tensor([1.5, -2.]), 0.).tolist(), T.normal(T.tensor([3.]), T.zeros(2, 1)).tolist()],
           "keywords": list(T.normal(mean=T.zeros(2), std=1.).shape),
           "requires_grad factory": T.normal(0., 1., (2,), requires_grad=True).requires_grad}
    out["errors"] = [_error(lambda: T.normal(T.zeros(2, 3), T.ones(4))),
                     _error(lambda: T.normal(T.zeros(6), T.ones(2, 3))),
                     _error(lambda: T.normal(0., -1., (2,))), _error(lambda: T.normal(T.zeros(2), -T.ones(2))),
                     _error(lambda: T.normal(0., T.tensor([-1.]))), _error(lambda: T.normal(T.zeros(2), -1.)),
                     _error(lambda: T.normal(T.zeros(2, dtype=T.int64), 1.)), _error(lambda: T.normal(0, 1))[0]]
    return out


@scenario
def multinomial_checks(T):
    p = T.tensor([0.1, 0.2, 0.7])
    out = {"shapes": [list(T.multinomial(p, 2).shape), list(T.multinomial(p, 4, True).shape),
                      list(T.multinomial(T.ones(2, 3), 2).shape), list(T.multinomial(T.ones(0, 3), 1).shape),
                      list(p.multinomial(2).shape)],
           "dtype": _dname(T.multinomial(p, 2).dtype),
           "certain": [T.multinomial(T.tensor([0., 1., 0.]), 1).tolist(),
                       T.multinomial(T.tensor([[0., 0., 3.], [2., 0., 0.]]), 4, True).tolist(),
                       sorted(T.multinomial(T.tensor([0.2, 5., 1., 0.1]), 4).tolist()),
                       T.multinomial(T.tensor([0., 0., 1e-30]), 1).tolist()],
           "double and half": [T.multinomial(T.tensor([0., 1.], dtype=T.float64), 1).tolist(),
                               T.multinomial(T.tensor([1., 0.], dtype=T.float16), 1).tolist()],
           "requires_grad": T.multinomial(T.tensor([0.5, 0.5], requires_grad=True), 1).requires_grad}
    out["errors"] = [_error(lambda: T.multinomial(p, 4)), _error(lambda: T.multinomial(T.ones(2, 3, 4), 2)),
                     _error(lambda: T.multinomial(T.tensor([-1., 1]), 1)),
                     _error(lambda: T.multinomial(T.tensor([0., 0]), 1)),
                     _error(lambda: T.multinomial(T.tensor([float("inf"), 1]), 1)),
                     _error(lambda: T.multinomial(T.tensor([float("nan"), 1]), 1)),
                     _error(lambda: T.multinomial(p, 0)), _error(lambda: T.multinomial(p, -1)),
                     _error(lambda: T.multinomial(T.tensor([1, 2]), 1)), _error(lambda: T.multinomial(T.tensor(1.), 1)),
                     _error(lambda: T.multinomial(T.ones(0), 1)), _error(lambda: T.multinomial(T.ones(2 ** 24 + 1), 1)),
                     _error(lambda: T.multinomial(T.ones(2, 0), 1)),
                     _error(lambda: T.multinomial(T.tensor([[1., 1], [0, 0]]), 1)),
                     _error(lambda: T.multinomial(T.tensor([1., -1.]), 3, True)),
                     _error(lambda: T.multinomial(T.tensor([1., float("inf")]), 3, True)),
                     _error(lambda: T.multinomial(T.tensor([1., float("nan")]), 3, True)),
                     _error(lambda: T.multinomial(T.tensor([0., 0.]), 3, True))]
    return out


@scenario
def randperm_checks(T):
    return {"default": [_dname(T.randperm(5).dtype), sorted(T.randperm(7).tolist()), T.randperm(0).tolist()],
            "dtypes": [_dname(T.randperm(5, dtype=T.float32).dtype), list(T.randperm(256, dtype=T.uint8).shape),
                       list(T.randperm(2049, dtype=T.float16).shape), _dname(T.randperm(3, dtype=T.float16).dtype)],
            "requires_grad": [T.randperm(3, dtype=T.float32, requires_grad=True).requires_grad,
                              _error(lambda: T.randperm(3, requires_grad=True))],
            "errors": [_error(lambda: T.randperm(-1)), _error(lambda: T.randperm(300, dtype=T.uint8)),
                       _error(lambda: T.randperm(70000, dtype=T.int16)), _error(lambda: T.randperm(5, dtype=T.bool)),
                       _error(lambda: T.randperm(2050, dtype=T.float16)),
                       _error(lambda: T.randperm(2 ** 24 + 2, dtype=T.float32))]}


@scenario
def poisson_checks(T):
    x = T.tensor([0., 0.], requires_grad=True)
    y = T.poisson(x)
    (g,) = T.autograd.grad(y.sum(), x)
    return {"rate 0": [y.tolist(), _node(y), g.tolist(), _dname(T.poisson(T.ones(2, dtype=T.float64)).dtype)],
            "errors": [_error(lambda: T.poisson(T.tensor([-1.]))), _error(lambda: T.poisson(T.tensor([1, 2]))),
                       _error(lambda: T.poisson(T.tensor([float("nan")])))]}


@scenario
def binomial_checks(T):
    count = T.tensor([10.5, -3., 4., 0., 7., float("inf"), 5.])
    prob = T.tensor([1., float("nan"), 1.5, 0.5, 0., 1., float("nan")])
    y = T.binomial(T.tensor([10.], requires_grad=True), T.tensor([0.5]))
    return {"certain": [repr(v) for v in T.binomial(count, prob).tolist()],
            "broadcast": list(T.binomial(T.tensor([10., 5.]), T.tensor([0.5])).shape),
            "node": [_node(y), _error(lambda: y.sum().backward())],
            "errors": [_error(lambda: T.binomial(T.tensor([10, 5]), T.tensor([0.5, 0.2]))),
                       _error(lambda: T.binomial(T.tensor([10.]), T.tensor([1], dtype=T.int64))),
                       _error(lambda: T.binomial(T.tensor([10., 5.]), T.tensor([0.5], dtype=T.float64)))]}


@scenario
def randint_like_checks(T):
    x = T.zeros(2, 3)
    return {"dtypes": [_dname(T.randint_like(x, 5).dtype),
                       _dname(T.randint_like(T.zeros(2, dtype=T.int32), high=5).dtype),
                       _dname(T.randint_like(x, 3, dtype=T.int16).dtype)],
            "certain": [T.randint_like(x, 1).tolist(), T.randint_like(T.zeros(3), 4, 5).tolist(),
                        T.randint_like(T.zeros(2), low=1, high=2).tolist()],
            "requires_grad": T.randint_like(T.zeros(2), 3, requires_grad=True).requires_grad,
            "errors": [_error(lambda: T.randint_like(T.zeros(2), 5, 2)), _error(lambda: T.randint_like(x, 0)),
                       _error(lambda: T.randint_like(T.zeros(2, dtype=T.uint8), 300))]}


@scenario
def inplace_samplers(T):
    a = T.zeros(3, requires_grad=True) * 1
    out = {"nodes": [_node(a.clone().log_normal_()), _node(a.clone().cauchy_()), _node(a.clone().geometric_(0.5))],
           "geometric dtypes": [_dname(T.zeros(3, dtype=T.int64).geometric_(0.3).dtype),
                                _dname(T.zeros(3, dtype=T.uint8).geometric_(0.3).dtype)],
           "keywords": [list(T.zeros(2).log_normal_(mean=1, std=2).shape),
                        list(T.zeros(2).cauchy_(median=1, sigma=2).shape), list(T.zeros(2).geometric_(p=0.5).shape)]}
    z = T.zeros(4)
    out["errors"] = [_error(lambda: z.log_normal_(1, 0)), _error(lambda: z.log_normal_(1, -1)),
                     _error(lambda: T.zeros(2, dtype=T.int64).log_normal_()), _error(lambda: z.cauchy_(0, 0)),
                     _error(lambda: z.cauchy_(0, -1)), _error(lambda: T.zeros(2, dtype=T.int64).cauchy_()),
                     _error(lambda: z.geometric_(0)), _error(lambda: z.geometric_(1)),
                     _error(lambda: z.geometric_(1.5)), _error(lambda: z.geometric_(-0.1)),
                     _error(lambda: T.zeros(3, dtype=T.bool).geometric_(0.3)),
                     _error(lambda: T.zeros(2, requires_grad=True).cauchy_())]
    return out


@scenario
def tensor_casts_and_memory(T):
    x = T.tensor([1.5, -2.7, 300.])
    s = T.ones(3).share_memory_()
    meta = T.ones(1, device="meta")
    strided = x.new_empty_strided((2, 3), (1, 2))
    return {"casts": [[x.byte().tolist(), _dname(x.byte().dtype)], [x.char().tolist(), _dname(x.char().dtype)],
                      [x.short().tolist(), _dname(x.short().dtype)]],
            "is_signed": {_dname(d): T.zeros(1, dtype=d).is_signed() for d in _dtypes(T)},
            "is_nonzero": [T.tensor(2.).is_nonzero(), T.tensor([0]).is_nonzero()],
            "new_empty_strided": [list(strided.shape), list(strided.stride()), _dname(strided.dtype),
                                  _dname(x.new_empty_strided((2,), (1,), dtype=T.int32).dtype),
                                  x.new_empty_strided((2,), (1,), requires_grad=True).requires_grad],
            "shared": [x.is_shared(), s.is_shared(), s.share_memory_() is s, meta.is_shared(),
                       _error(lambda: meta.share_memory_())],
            "pinned": [x.is_pinned(), meta.is_pinned(), _error(lambda: meta.pin_memory())],
            "storage_offset": [x[1:].storage_offset(), T.ones(4, 4)[1, 2:].storage_offset()]}


@scenario
def asarray_sharing(T):
    import numpy as np
    t = T.ones(3)
    n = np.ones(3)
    viewed, copied = T.asarray(n), T.asarray(n, copy=True)
    n[0] = 5
    same = T.asarray(t)
    grad = T.asarray(T.zeros(2), requires_grad=True)
    return {"tensor": [same is t, _dname(T.asarray(t, dtype=T.float64).dtype), T.asarray(t, copy=True) is t],
            "ndarray": [viewed.tolist(), copied.tolist(), _dname(viewed.dtype)],
            "data": [_dname(T.asarray([1, 2.5]).dtype), list(T.asarray(3).shape),
                     T.asarray([[1, 2]], dtype=T.int8).tolist(),
                     _dname(T.asarray(np.float64(2.0)).dtype), _dname(T.asarray(2.0).dtype)],
            "requires_grad": [grad.requires_grad, grad.grad_fn is None],
            "errors": [_error(lambda: T.asarray(t, dtype=T.float64, copy=False)),
                       _error(lambda: T.asarray([1.5], copy=False)),
                       _error(lambda: T.asarray(np.ones(2), dtype=T.float32, copy=False))]}


@scenario
def conj_neg_device_flags(T):
    t = T.ones(2)
    return {"values": [T.is_conj(t), T.is_neg(t), t.is_conj(), t.is_neg(), T.get_device(t), T.init_num_threads()],
            "errors": [_error(lambda: T.is_conj(3)), _error(lambda: T.get_device(3)),
                       _error(lambda: T.set_flush_denormal(1))],
            "flush_denormal returns": type(T.set_flush_denormal(False)).__name__}
