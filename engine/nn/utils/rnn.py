"""torch.nn.utils.rnn (torch/nn/utils/rnn.py; the kernels of aten/src/ATen/native/PackedSequence.cpp
written with agrad ops, so their gradients come from the engine): a PackedSequence holds the
steps of a batch of sequences of different lengths, longest first, as one tensor `data`
((sum of lengths, *) — step 0 of every sequence, then step 1 of those that have one, …) and
`batch_sizes` (an int64 CPU tensor: how many sequences each step has, non-increasing).
`sorted_indices` is the order the sequences were packed in (None where they came sorted) and
`unsorted_indices` its inverse. nn.RNN, LSTM and GRU take one and return one; the class itself
is in agrad.nn.packed_sequence (nn.modules.rnn imports it from there, below this package)."""
from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from ...messages import scalar_type_name
from ..packed_sequence import PackedSequence, _agrad, invert_permutation

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _check_long_tensor(tensor) -> None:
    agrad = _agrad()
    if tensor.dim() != 1 or tensor.device.type != "cpu" or tensor.dtype != agrad.int64:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {tensor.dim()}D "
                           f"{tensor.device} {scalar_type_name(tensor.dtype.np)} tensor")


def _pack_padded_sequence(input, lengths, batch_first: bool):
    """ATen's _pack_padded_sequence: (data, batch_sizes) from a padded (T, B, *) input."""
    agrad = _agrad()
    if batch_first:
        input = input.transpose(0, 1)
    _check_long_tensor(lengths)
    batch_size = input.size(1)
    lens = lengths.tolist()
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(lens) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch_size})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(later > earlier for earlier, later in pairwise(lens)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                           "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    # from the shortest sequence up: each time the length grows, the block of steps
    # prev..length of the sequences at least that long
    blocks, batch_sizes, prev = [], [], 0
    for i, length in enumerate(reversed(lens)):
        if length > prev:
            current = batch_size - i
            blocks.append(input[prev:length, :current].reshape(-1, *input.shape[2:]))
            batch_sizes += [current] * (length - prev)
            prev = length
    return agrad.cat(blocks), agrad.tensor(batch_sizes, dtype=agrad.int64)


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    agrad = _agrad()
    if not isinstance(lengths, agrad.Tensor):
        lengths = agrad.as_tensor(lengths, dtype=agrad.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=agrad.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = agrad.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded_sequence(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pad_packed_sequence(data, batch_sizes, batch_first: bool, padding_value, total_length: int):
    """ATen's _pad_packed_sequence: the padded (T, B, *) tensor and the lengths."""
    agrad = _agrad()
    _check_long_tensor(batch_sizes)
    sizes = batch_sizes.tolist()
    max_batch_size, max_seq_length = sizes[0], len(sizes)
    if total_length > 0:
        if total_length < max_seq_length:
            raise RuntimeError("Expected total_length to be at least the length of the longest sequence in input, "
                               f"but got total_length={total_length} and max sequence length being "
                               f"{max_seq_length}")
        max_seq_length = total_length
    rest = tuple(data.shape[1:])

    def padding(rows):
        return agrad.full((rows, *rest), padding_value, dtype=data.dtype, device=data.device)

    steps, offset = [], 0
    for size in sizes:
        step = data.narrow(0, offset, size)
        offset += size
        steps.append(step if size == max_batch_size else agrad.cat([step, padding(max_batch_size - size)]))
    steps += [padding(max_batch_size)] * (max_seq_length - len(sizes))
    output = agrad.stack(steps, 0)
    lengths = agrad.tensor([sum(1 for size in sizes if size > j) for j in range(max_batch_size)], dtype=agrad.int64)
    return (output.transpose(0, 1) if batch_first else output), lengths


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded_output, lengths = _pad_packed_sequence(sequence.data, sequence.batch_sizes, batch_first, padding_value,
                                                  max_seq_length)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded_output.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices.cpu()]
    return padded_output, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    agrad = _agrad()
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        pad = agrad.full((max_len - s.size(0), *first.shape[1:]), padding_value, dtype=first.dtype,
                         device=first.device)
        s = s.to(dtype=first.dtype)
        padded.append(agrad.cat([s, pad] if padding_side == "right" else [pad, s]))
    return agrad.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    agrad = _agrad()
    unpadded_sequences = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)       # NOTE: in place, as PyTorch does: the caller's tensor too
    max_length = padded_sequences.shape[1]
    idx = agrad.arange(max_length, device=lengths.device)
    for seq, length in zip(padded_sequences, lengths):
        unpadded_sequences.append(seq[idx < length])
    return unpadded_sequences


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    lengths = _agrad().as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
