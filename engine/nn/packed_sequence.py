"""torch.nn.utils.rnn's PackedSequence (torch/nn/utils/rnn.py), on its own so that nn.RNN and its
siblings (nn.modules.rnn) can take and return one without importing the nn.utils package, whose
parametrizations and other utilities import nn.modules: agrad.nn.utils.rnn re-exports it.

A PackedSequence holds the steps of a batch of sequences of different lengths, longest first, as
one tensor `data` and `batch_sizes` (an int64 CPU tensor: how many sequences each step has);
`sorted_indices` is the order the sequences were packed in (None where they came sorted) and
`unsorted_indices` its inverse."""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["PackedSequence", "invert_permutation"]


class PackedSequence_(NamedTuple):
    data: object
    batch_sizes: object
    sorted_indices: object
    unsorted_indices: object


def bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """Never built by hand: pack_padded_sequence and pack_sequence make them."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    # NOTE: batch_sizes stays an int64 CPU tensor whatever `to` does; only data and the indices move
    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, bind(self.sorted_indices, lambda t: t.to(data.device)),
                          bind(self.unsorted_indices, lambda t: t.to(data.device)))

    def cuda(self, *args, **kwargs):
        ex = _agrad().tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.is_cuda:
            return self.to(*args, **kwargs)
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        ex = _agrad().tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.device.type == "cpu":
            return self.to(*args, **kwargs)
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_agrad().float64)

    def float(self):
        return self.to(dtype=_agrad().float32)

    def half(self):
        return self.to(dtype=_agrad().float16)

    def long(self):
        return self.to(dtype=_agrad().int64)

    def int(self):
        return self.to(dtype=_agrad().int32)

    def short(self):
        return self.to(dtype=_agrad().int16)

    def char(self):
        return self.to(dtype=_agrad().int8)

    def byte(self):
        return self.to(dtype=_agrad().uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _agrad():
    import agrad
    return agrad


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:          # PackedSequence(data, batch_sizes, sorted_indices)
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):     # PackedSequence((data, batch_sizes))
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    if permutation is None:
        return None
    agrad = _agrad()
    output = agrad.empty_like(permutation)
    output.scatter_(0, permutation, agrad.arange(0, permutation.numel(), device=permutation.device))
    return output
