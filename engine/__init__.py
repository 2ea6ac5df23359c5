"""agrad: reverse-mode autodiff with an engine built the way PyTorch's is.

    import agrad
    a = agrad.tensor(1.0, requires_grad=True)
    b = agrad.tensor(2.0, requires_grad=True)
    d = a * agrad.add(a, b)
    d.backward()            # a.grad == 4, b.grad == 1

The engine (NumPy, the op library) loads on first use of any `agrad.<name>`, so that
`agrad.cli`, a subpackage, starts without it: `agrad --help` stays fast. (Modules
whose names a public object takes are private, `_tensor`, `_device`, as PyTorch's
`torch/_tensor.py`: importing them must not shadow `agrad.tensor` or `agrad.device`.)
"""
import importlib
import pkgutil

__version__ = "0.1.0"


def _load_api():
    """Everything `agrad.<name>` offers: the whole engine, op library included."""
    # NOTE: import_module, not `from . import _api`: that form would ask this module's
    # __getattr__ for `_api` first, and recurse.
    return importlib.import_module(f"{__name__}._api")


# Submodules are imported as submodules (`from . import dtypes` inside the engine asks
# this hook first); graphs/ and cli/ live in their own folders (pyproject's package-dir).
_SUBMODULES = {m.name for m in pkgutil.iter_modules(__path__)} | {"graphs", "cli"}


def __getattr__(name):
    if name == "__all__":                 # `from agrad import *`
        return _load_api().__all__
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _SUBMODULES:
        if name == "autograd":
            _load_api()     # which attaches agrad.autograd.gradcheck (the checker lives in agrad.testing)
        return importlib.import_module(f"{__name__}.{name}")
    api = _load_api()
    try:
        value = getattr(api, name)
    except AttributeError:
        raise AttributeError(f"module 'agrad' has no attribute '{name}'") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_load_api().__all__))
