"""agrad.nn's RNN, LSTM, GRU, their cells and agrad.nn.utils.rnn beyond the forwards compared with torch
in test_nn_reference.py (nn_rnn_scenarios.py): float64 gradchecks of the recurrences (inputs, initial
states and parameters), PyTorch 2.13's messages for wrong arguments (strings taken from torch 2.13;
torch.<dtype> printed as agrad.<dtype>), dropout between layers, and packing."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import agrad
import agrad.nn as nn
from agrad.autograd import gradcheck
from agrad.nn.utils import rnn as rnn_utils


def _randn(*shape, seed=0):
    rng = np.random.default_rng([seed, *shape])
    return agrad.tensor(rng.normal(size=shape).tolist(), dtype=agrad.float64, requires_grad=True)


def _with_parameters(module, fn):
    """fn(*inputs) whose trailing inputs stand for module's parameters (in named_parameters order),
    put in place for the call as torch.func.functional_call does, so gradcheck can perturb them."""
    names = [name for name, _ in module.named_parameters()]

    def call(*args):
        inputs, weights = args[:len(args) - len(names)], args[len(args) - len(names):]
        saved = dict(module._parameters)
        module._parameters.update(zip(names, weights))
        try:
            return fn(*inputs)
        finally:
            module._parameters.update(saved)

    return call, [p.detach().clone().requires_grad_() for p in module.parameters()]


# ---- gradients: float64 central differences -----------------------------------------------------

def test_lstm_gradcheck_inputs_states_and_parameters():
    agrad.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True, batch_first=True, dtype=agrad.float64)
    x, h0, c0 = _randn(2, 3, 3), _randn(4, 2, 2), _randn(4, 2, 4)

    def run(x, h0, c0):
        output, (h_n, c_n) = lstm(x, (h0, c0))
        return output, h_n, c_n

    assert gradcheck(run, (x, h0, c0))
    fn, weights = _with_parameters(lstm, run)
    assert gradcheck(fn, (x, h0, c0, *weights), fast_mode=True)


def test_gru_gradcheck_inputs_states_and_parameters():
    agrad.manual_seed(0)
    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True, dtype=agrad.float64)
    x, h0 = _randn(3, 2, 3), _randn(4, 2, 4)
    assert gradcheck(lambda x, h0: gru(x, h0), (x, h0))
    fn, weights = _with_parameters(gru, lambda x, h0: gru(x, h0))
    assert gradcheck(fn, (x, h0, *weights), fast_mode=True)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_gradcheck_unbatched(nonlinearity):
    agrad.manual_seed(0)
    rnn = nn.RNN(3, 4, num_layers=2, nonlinearity=nonlinearity, dtype=agrad.float64)
    assert gradcheck(lambda x, h0: rnn(x, h0), (_randn(4, 3), _randn(2, 4)))


def test_cells_gradcheck():
    agrad.manual_seed(0)
    lstm_cell, gru_cell = nn.LSTMCell(3, 4, dtype=agrad.float64), nn.GRUCell(3, 4, dtype=agrad.float64)
    rnn_cell = nn.RNNCell(3, 4, bias=False, dtype=agrad.float64)
    x, h, c = _randn(2, 3), _randn(2, 4), _randn(2, 4, seed=1)
    assert gradcheck(lambda x, h, c: lstm_cell(x, (h, c)), (x, h, c))
    assert gradcheck(lambda x, h: gru_cell(x, h), (x, h))
    assert gradcheck(lambda x, h: rnn_cell(x, h), (x, h))


def test_packed_lstm_gradcheck():
    """Through pack_padded_sequence (unsorted lengths), the shrinking batches and pad_packed_sequence."""
    agrad.manual_seed(0)
    lstm = nn.LSTM(2, 3, bidirectional=True, dtype=agrad.float64)

    def fn(x, h0, c0):
        packed = rnn_utils.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        out, (h, c) = lstm(packed, (h0, c0))
        return rnn_utils.pad_packed_sequence(out)[0], h, c

    assert gradcheck(fn, (_randn(4, 3, 2), _randn(2, 3, 3), _randn(2, 3, 3, seed=1)))


# ---- PyTorch's messages ------------------------------------------------------------------------------

def _zeros(*shape, dtype=agrad.float32):
    return agrad.zeros(*shape, dtype=dtype)


CALL_ERRORS = [
    # (module, call, exception, torch 2.13's message)
    (lambda: nn.LSTM(4, 3), lambda m: m(_zeros(5, 2, 6)), RuntimeError,
     "input.size(-1) must be equal to input_size. Expected 4, got 6"),
    (lambda: nn.GRU(4, 3, batch_first=True), lambda m: m(_zeros(2, 5, 3)), RuntimeError,
     "input.size(-1) must be equal to input_size. Expected 4, got 3"),
    (lambda: nn.LSTM(4, 3), lambda m: m(_zeros(5, 2, 6, 1)), ValueError,
     "LSTM: Expected input to be 2D or 3D, got 4D instead"),
    (lambda: nn.GRU(4, 3), lambda m: m(_zeros(4)), ValueError, "GRU: Expected input to be 2D or 3D, got 1D instead"),
    (lambda: nn.RNN(4, 3), lambda m: m(_zeros(4)), ValueError,
     "RNN: Expected input to be 2D or 3D, got 1D tensor instead"),
    (lambda: nn.LSTM(4, 3), lambda m: m(_zeros(5, 2, 4), (_zeros(1, 3, 3), _zeros(1, 2, 3))), RuntimeError,
     "Expected hidden[0] size (1, 2, 3), got [1, 3, 3]"),
    (lambda: nn.LSTM(4, 3), lambda m: m(_zeros(5, 2, 4), (_zeros(1, 2, 3), _zeros(2, 2, 3))), RuntimeError,
     "Expected hidden[1] size (1, 2, 3), got [2, 2, 3]"),
    (lambda: nn.LSTM(4, 3, proj_size=2), lambda m: m(_zeros(5, 2, 4), (_zeros(1, 2, 3), _zeros(1, 2, 3))),
     RuntimeError, "Expected hidden[0] size (1, 2, 2), got [1, 2, 3]"),
    (lambda: nn.LSTM(4, 3), lambda m: m(_zeros(5, 2, 4), (_zeros(2, 3), _zeros(1, 2, 3))), RuntimeError,
     "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 3-D) tensors"),
    (lambda: nn.LSTM(4, 3), lambda m: m(_zeros(5, 4), (_zeros(1, 1, 3), _zeros(1, 3))), RuntimeError,
     "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 2-D) tensors"),
    (lambda: nn.GRU(4, 3, num_layers=2), lambda m: m(_zeros(5, 2, 4), _zeros(1, 2, 3)), RuntimeError,
     "Expected hidden size (2, 2, 3), got [1, 2, 3]"),
    (lambda: nn.RNN(4, 3, batch_first=True, bidirectional=True), lambda m: m(_zeros(2, 5, 4), _zeros(1, 2, 3)),
     RuntimeError, "Expected hidden size (2, 2, 3), got [1, 2, 3]"),
    (lambda: nn.GRU(4, 3), lambda m: m(_zeros(5, 2, 4), _zeros(2, 3)), RuntimeError,
     "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    (lambda: nn.GRU(4, 3), lambda m: m(_zeros(5, 4), _zeros(1, 1, 3)), RuntimeError,
     "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
    (lambda: nn.RNN(4, 3), lambda m: m(_zeros(5, 4), _zeros(3)), RuntimeError,
     "For unbatched 2-D input, hx should also be 2-D but got 1-D tensor"),
    (lambda: nn.RNN(4, 3), lambda m: m(_zeros(5, 2, 4, dtype=agrad.float64)), ValueError,
     ("RNN input dtype (agrad.float64) does not match weight dtype (agrad.float32). Convert input: "
      "input.to(agrad.float32), or convert model: model.to(agrad.float64)")),
    (lambda: nn.RNN(4, 3), lambda m: m(_zeros(0, 2, 4)), RuntimeError,
     "Expected sequence length to be larger than 0 in RNN"),
    # the cells
    (lambda: nn.LSTMCell(4, 3), lambda m: m(_zeros(1, 2, 4)), ValueError,
     "LSTMCell: Expected input to be 1D or 2D, got 3D instead"),
    (lambda: nn.LSTMCell(4, 3), lambda m: m(_zeros(2, 4), (_zeros(2, 3), _zeros(1, 2, 3))), ValueError,
     "LSTMCell: Expected hx[1] to be 1D or 2D, got 3D instead"),
    (lambda: nn.GRUCell(4, 3), lambda m: m(_zeros(2, 4), _zeros(1, 2, 3)), ValueError,
     "GRUCell: Expected hidden to be 1D or 2D, got 3D instead"),
    (lambda: nn.RNNCell(4, 3), lambda m: m(_zeros(1, 2, 4)), ValueError,
     "RNNCell: Expected input to be 1D or 2D, got 3D instead"),
    (lambda: nn.RNNCell(4, 3), lambda m: m(_zeros(2, 5)), RuntimeError,
     "input has inconsistent input_size: got 5 expected 4"),
    (lambda: nn.RNNCell(4, 3), lambda m: m(_zeros(2, 4), _zeros(3, 3)), RuntimeError,
     "Input batch size 2 doesn't match hidden0 batch size 3"),
    (lambda: nn.RNNCell(4, 3), lambda m: m(_zeros(2, 4), _zeros(2, 4)), RuntimeError,
     "hidden0 has inconsistent hidden_size: got 4, expected 3"),
    (lambda: nn.LSTMCell(4, 3), lambda m: m(_zeros(2, 4), (_zeros(2, 3), _zeros(2, 4))), RuntimeError,
     "hidden1 has inconsistent hidden_size: got 4, expected 3"),
    (lambda: nn.LSTMCell(4, 3), lambda m: m(_zeros(2, 4), (_zeros(2, 3), _zeros(1, 3))), RuntimeError,
     "Input batch size 2 doesn't match hidden1 batch size 1"),
    (lambda: nn.GRUCell(4, 3), lambda m: m(_zeros(2, 5)), RuntimeError,
     "input has inconsistent input_size: got 5 expected 4"),
    (lambda: nn.GRUCell(4, 3), lambda m: m(_zeros(2, 4), _zeros(2, 2)), RuntimeError,
     "hidden0 has inconsistent hidden_size: got 2, expected 3"),
    (lambda: nn.GRUCell(4, 3), lambda m: m(_zeros(4), _zeros(1, 3)), RuntimeError,
     "hidden0 has inconsistent hidden_size: got 1, expected 3"),
    (lambda: nn.RNNCell(4, 3, nonlinearity="gelu"), lambda m: m(_zeros(2, 4)), RuntimeError,
     "Unknown nonlinearity: gelu"),
]


@pytest.mark.parametrize("index", range(len(CALL_ERRORS)))
def test_forward_messages_equal_torch(index):
    build, call, error, message = CALL_ERRORS[index]
    with pytest.raises(error) as info:
        call(build())
    assert str(info.value) == message


CONSTRUCTOR_ERRORS = [
    (lambda: nn.RNN(4, 3, nonlinearity="gelu"), ValueError,
     "Unknown nonlinearity 'gelu'. Select from 'tanh' or 'relu'."),
    (lambda: nn.RNN(4, 3, proj_size=2), ValueError, "proj_size argument is only supported for LSTM, not RNN or GRU"),
    (lambda: nn.GRU(4, 3, proj_size=2), ValueError, "proj_size argument is only supported for LSTM, not RNN or GRU"),
    (lambda: nn.LSTM(4, 3, proj_size=3), ValueError, "proj_size has to be smaller than hidden_size"),
    (lambda: nn.LSTM(4, 3, proj_size=-1), ValueError,
     "proj_size should be a positive integer or zero to disable projections"),
    (lambda: nn.LSTM(4, 3, dropout=1.5), ValueError,
     "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"),
    (lambda: nn.LSTM(4, 3, dropout=True), ValueError,
     "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"),
    (lambda: nn.LSTM(4, 3, bias=1), TypeError, "bias should be of type bool, got: int"),
    (lambda: nn.LSTM(4, 3, batch_first=1), TypeError, "batch_first should be of type bool, got: int"),
    (lambda: nn.LSTM(4.0, 3), TypeError, "input_size should be of type int, got: float"),
    (lambda: nn.LSTM(0, 3), ValueError, "input_size must be greater than zero"),
    (lambda: nn.LSTM(4, 3.0), TypeError, "hidden_size should be of type int, got: float"),
    (lambda: nn.LSTM(4, 0), ValueError, "hidden_size must be greater than zero"),
    (lambda: nn.LSTM(4, 3, num_layers=0), ValueError, "num_layers must be greater than zero"),
    (lambda: nn.RNNBase("FOO", 4, 3), ValueError, "Unrecognized RNN mode: FOO"),
]


@pytest.mark.parametrize("index", range(len(CONSTRUCTOR_ERRORS)))
def test_constructor_messages_equal_torch(index):
    build, error, message = CONSTRUCTOR_ERRORS[index]
    with pytest.raises(error) as info:
        build()
    assert str(info.value) == message


# ---- dropout, names, reprs ---------------------------------------------------------------------------

def test_dropout_warning_with_one_layer():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.LSTM(4, 3, dropout=0.5)
    assert [str(w.message) for w in caught] == [
        ("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects num_layers "
         "greater than 1, but got dropout=0.5 and num_layers=1")]


def test_dropout_between_layers_in_training_only():
    agrad.manual_seed(0)
    dropped, plain = nn.GRU(3, 8, num_layers=2, dropout=0.5), nn.GRU(3, 8, num_layers=2)
    plain.load_state_dict(dropped.state_dict())
    x = _randn(4, 2, 3).float()
    dropped.eval()
    assert np.array_equal(dropped(x)[0].detach().numpy(), plain(x)[0].detach().numpy())
    dropped.train()
    assert not np.allclose(dropped(x)[0].detach().numpy(), plain(x)[0].detach().numpy())
    # the last layer's output is not dropped: its first layer's state is the same either way
    assert np.array_equal(dropped(x)[1][0].detach().numpy(), plain(x)[1][0].detach().numpy())


def test_flat_weights_and_all_weights_follow_pytorch():
    lstm = nn.LSTM(3, 4, num_layers=2, bias=False, proj_size=2, bidirectional=True)
    assert lstm._flat_weights_names == [
        "weight_ih_l0", "weight_hh_l0", "weight_hr_l0", "weight_ih_l0_reverse", "weight_hh_l0_reverse",
        "weight_hr_l0_reverse", "weight_ih_l1", "weight_hh_l1", "weight_hr_l1", "weight_ih_l1_reverse",
        "weight_hh_l1_reverse", "weight_hr_l1_reverse"]
    assert [[tuple(w.shape) for w in ws] for ws in lstm.all_weights][2] == [(16, 4), (16, 2), (2, 4)]
    replacement = nn.Parameter(agrad.zeros(16, 4))
    lstm.weight_ih_l1 = replacement
    assert lstm._flat_weights[6] is replacement
    assert repr(lstm) == "LSTM(3, 4, proj_size=2, num_layers=2, bias=False, bidirectional=True)"
    assert repr(nn.RNN(4, 3, 2, "relu")) == "RNN(4, 3, num_layers=2)"
    assert repr(nn.RNNCell(4, 3, False, "relu")) == "RNNCell(4, 3, bias=False, nonlinearity=relu)"


def test_reset_parameters_bound():
    agrad.manual_seed(3)
    gru = nn.GRU(5, 16, num_layers=2)
    values = np.concatenate([p.detach().numpy().ravel() for p in gru.parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24


# ---- agrad.nn.utils.rnn ------------------------------------------------------------------------------

def test_pack_and_pad_equal_torch():
    """torch 2.13's results for arange(24).reshape(4, 3, 2) with lengths [3, 4, 1], unsorted."""
    x = agrad.arange(24.0).reshape(4, 3, 2)
    packed = rnn_utils.pack_padded_sequence(x, [3, 4, 1], enforce_sorted=False)
    assert packed.data.tolist() == [[2, 3], [0, 1], [4, 5], [8, 9], [6, 7], [14, 15], [12, 13], [20, 21]]
    assert packed.batch_sizes.tolist() == [3, 2, 2, 1] and packed.batch_sizes.dtype == agrad.int64
    assert packed.sorted_indices.tolist() == [1, 0, 2] and packed.unsorted_indices.tolist() == [1, 0, 2]
    padded, lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True, padding_value=-1, total_length=5)
    assert lengths.tolist() == [3, 4, 1]
    assert padded.tolist() == [[[0, 1], [6, 7], [12, 13], [-1, -1], [-1, -1]],
                               [[2, 3], [8, 9], [14, 15], [20, 21], [-1, -1]],
                               [[4, 5], [-1, -1], [-1, -1], [-1, -1], [-1, -1]]]
    assert [t.tolist() for t in rnn_utils.unpack_sequence(packed)] == [
        [[0, 1], [6, 7], [12, 13]], [[2, 3], [8, 9], [14, 15], [20, 21]], [[4, 5]]]
    assert rnn_utils.pad_sequence([agrad.ones(2), 2 * agrad.ones(3)], padding_side="left",
                                  batch_first=True).tolist() == [[0, 1, 1], [2, 2, 2]]
    seq = rnn_utils.pack_sequence([agrad.ones(2), agrad.ones(3)], enforce_sorted=False)
    assert seq.batch_sizes.tolist() == [2, 2, 1] and seq.sorted_indices.tolist() == [1, 0]


PACKING_ERRORS = [
    (lambda x: rnn_utils.pack_padded_sequence(x, [2, 3, 1]), RuntimeError,
     ("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
      "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
      "do not need ONNX exportability.")),
    (lambda x: rnn_utils.pack_padded_sequence(x, [3, 2, 0]), RuntimeError,
     "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"),
    (lambda x: rnn_utils.pack_padded_sequence(x, [3, 2]), RuntimeError,
     "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)"),
    (lambda x: rnn_utils.pack_padded_sequence(agrad.zeros(0, 3, 2), [3, 2, 1]), RuntimeError,
     "Cannot pack empty tensors."),
    (lambda x: rnn_utils.pack_padded_sequence(x, agrad.tensor([[3, 2, 1]])), RuntimeError,
     "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor"),
    (lambda x: rnn_utils.pad_packed_sequence(rnn_utils.pack_padded_sequence(x, [4, 2, 1]), total_length=2),
     ValueError, ("Expected total_length to be at least the length of the longest sequence in input, but got "
                  "total_length=2 and max sequence length being 4")),
    (lambda x: rnn_utils.pad_sequence([agrad.ones(2), agrad.ones(3)], padding_side="middle"), RuntimeError,
     "Expected padding_side to be one of left or right, but got middle."),
    (lambda x: rnn_utils.pad_sequence([]), RuntimeError, "received an empty list of sequences"),
    (lambda x: rnn_utils.pad_sequence(3), RuntimeError,
     "pad_sequence: Expected iterable for input sequences, but got arg of type: <class 'int'>"),
]


@pytest.mark.parametrize("index", range(len(PACKING_ERRORS)))
def test_packing_messages_equal_torch(index):
    call, error, message = PACKING_ERRORS[index]
    with pytest.raises(error) as info:
        call(agrad.arange(24.0).reshape(4, 3, 2))
    assert str(info.value) == message


def test_packed_output_matches_padded_runs():
    """Each sequence of a packed batch gets what it gets run alone, final state included."""
    agrad.manual_seed(1)
    lstm = nn.LSTM(2, 3, num_layers=2, proj_size=1, bidirectional=True)
    x, lengths = _randn(4, 3, 2).float(), [2, 4, 1]
    out, (h, c) = lstm(rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False))
    padded, _ = rnn_utils.pad_packed_sequence(out)
    for b, length in enumerate(lengths):
        alone, (h_b, c_b) = lstm(x[:length, b])
        np.testing.assert_allclose(padded[:length, b].detach().numpy(), alone.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(h[:, b].detach().numpy(), h_b.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c[:, b].detach().numpy(), c_b.detach().numpy(), rtol=1e-5, atol=1e-6)
