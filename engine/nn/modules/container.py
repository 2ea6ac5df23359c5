"""torch.nn.Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict
(torch/nn/modules/container.py): modules registered under their position ("0", "1", …) or key,
so their parameters' names are PyTorch's (`0.weight`, `layers.1.bias`); the parameter containers
register a tensor put in them as a Parameter the same way (`params.0`, `params.scale`). And the
deprecated Container, a Module with its keyword arguments as children."""
from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class Container(Module):
    """Deprecated (a FutureWarning, as torch's): a Module with the keyword arguments as its children."""

    def __init__(self, **kwargs) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules called in order, each on the previous one's output."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        # NOTE: renumber, so the keys stay "0" … "n-1"
        self._modules = OrderedDict(zip((str(i) for i in range(len(self._modules))), self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]):
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v


class ModuleList(Module):
    """A list of modules, registered (unlike a Python list attribute) so that parameters(),
    state_dict() and train()/eval() reach them."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx) -> str:
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        self._modules = OrderedDict(zip((str(i) for i in range(len(self._modules))), self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]):
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        """Runs of equal reprs fold into one line (`(0-2): 3 x Linear(...)`), as PyTorch's."""
        list_of_reprs = [repr(item) for item in self]
        if len(list_of_reprs) == 0:
            return self._get_name() + "()"
        start_end_indices = [[0, 0]]
        repeated_blocks = [list_of_reprs[0]]
        for i, r in enumerate(list_of_reprs[1:], 1):
            if r == repeated_blocks[-1]:
                start_end_indices[-1][1] += 1
                continue
            start_end_indices.append([i, i])
            repeated_blocks.append(r)
        lines = []
        for (start_id, end_id), b in zip(start_end_indices, repeated_blocks):
            local_repr = f"({start_id}): {b}"
            if start_id != end_id:
                local_repr = f"({start_id}-{end_id}): {end_id - start_id + 1} x {b}"
            lines.append(_addindent(local_repr, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]):
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """A dict of modules, registered under their keys, in insertion order."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, Mapping):
            for key, module in modules.items():
                self[key] = module
        else:
            _update_from_pairs(self, "ModuleDict", modules)


def _parameter_line(key, p, type_name) -> str:
    """One line of ParameterList's and ParameterDict's repr."""
    if isinstance(p, Tensor):
        size_str = "x".join(str(size) for size in p.size())
        device_str = f" ({p.device})" if p.device.type == "cuda" else ""
        parastr = "{} containing: [{} of size {}{}]".format("Parameter" if isinstance(p, Parameter) else "Tensor",
                                                            type_name(p), size_str, device_str)
        return "  (" + str(key) + "): " + parastr
    return "  (" + str(key) + "): Object of type: " + type(p).__name__


class ParameterList(Module):
    """A list of parameters, registered under their positions; a tensor put in it becomes a Parameter.
    Other objects are kept as they are (a Module is registered as a child)."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx):
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            out = self.__class__()
            for i in range(start, stop, step):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param) -> None:
        # NOTE: every addition to the list comes here, so this is the one place a tensor becomes a Parameter
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        return setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        # NOTE: a Tensor is iterable, but is never unpacked here
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_parameter_line(k, p, lambda t: t.dtype) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters, registered under their (string) keys in insertion order; a tensor put in
    it becomes a Parameter. A plain dict given to the constructor or update() is added in sorted key
    order, an OrderedDict or ParameterDict in its own, as PyTorch's."""

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        # NOTE: every addition to the dict comes here, so this is the one place a tensor becomes a Parameter
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def copy(self) -> ParameterDict:
        # NOTE: an OrderedDict, so the copy keeps this order (a plain dict would be sorted)
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k, _ = self._keys.popitem()
        self._keys[k] = None            # back in _keys, so that it can be read and deleted
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            _update_from_pairs(self, "ParameterDict", parameters)

    def extra_repr(self) -> str:
        return "\n".join(_parameter_line(k, p, lambda t: t.type()) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict):
        self.update(other)
        return self


def _update_from_pairs(target, kind: str, pairs) -> None:
    """ModuleDict/ParameterDict.update from a sequence of (key, value) pairs, with PyTorch's messages."""
    for j, pair in enumerate(pairs):
        if not isinstance(pair, Iterable):
            raise TypeError(f"{kind} update sequence element #{j} should be Iterable; is{type(pair).__name__}")
        if not len(pair) == 2:
            raise ValueError(f"{kind} update sequence element #{j} has length {len(pair)}; 2 is required")
        target[pair[0]] = pair[1]
