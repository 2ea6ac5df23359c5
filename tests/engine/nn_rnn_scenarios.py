"""torch.nn scenarios of one family, merged into nn_scenarios.py (FAMILIES): same format as its
STRUCTURES (name -> builder(lib) -> module) and FORWARDS (name -> (structure name, input shapes, or
a callable spec(lib, rng) -> inputs)).

RNN (tanh, relu), LSTM (proj_size too), GRU and the three cells: layers, directions, batch_first,
no bias, initial states, unbatched inputs, and PackedSequence inputs. An LSTM's (h0, c0) and a packed
sequence are not tensors, so those calls go through `Calling`, whose forward takes tensors (h0 and
c0 get their gradients recorded as inputs) and calls the module as a user would; its outputs are
tensors or tuples of them. Forward scenarios use dropout=0 (the two libraries draw different masks);
dropout > 0 is covered by a structure."""
from __future__ import annotations

from nn_scenario_helpers import calling as _calling, normal as _normal


def _normals(*shapes):
    """spec: float32 normals of the given shapes."""
    return lambda lib, rng: [_normal(lib, rng, *shape) for shape in shapes]


def _with_state(lib, module):
    """An LSTM or LSTMCell called as module(x, (h0, c0))."""
    return _calling(lib, module, lambda lib, m, x, h0, c0: m(x, (h0, c0)))


def _packed(lib, module, lengths, enforce_sorted=True, batch_first=False):
    """module on pack_padded_sequence(x, lengths); the output padded back (its lengths dropped)."""
    rnn_utils = lib.nn.utils.rnn

    def call(lib, m, x, *state):
        packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        hx = None if not state else (state[0] if len(state) == 1 else tuple(state))
        output, hidden = m(packed, hx)
        padded, _ = rnn_utils.pad_packed_sequence(output, batch_first=batch_first, padding_value=-2.0)
        return padded, hidden

    return _calling(lib, module, call)


# name -> builder(lib) -> module
STRUCTURES = {
    # RNN ---------------------------------------------------------------------------------------------
    "rnn_tanh": lambda lib: lib.nn.RNN(4, 5),
    "rnn_relu_2layer": lambda lib: lib.nn.RNN(3, 4, num_layers=2, nonlinearity="relu"),
    "rnn_bidirectional_batch_first": lambda lib: lib.nn.RNN(3, 4, bidirectional=True, batch_first=True),
    "rnn_nobias_positional": lambda lib: lib.nn.RNN(3, 4, 2, "tanh", False),
    "rnn_relu_3layer_bidirectional": lambda lib: lib.nn.RNN(2, 3, 3, nonlinearity="relu", bidirectional=True),
    # LSTM --------------------------------------------------------------------------------------------
    "lstm": lambda lib: lib.nn.LSTM(4, 5),
    "lstm_2layer_bidirectional": lambda lib: lib.nn.LSTM(3, 4, num_layers=2, bidirectional=True),
    "lstm_proj_2layer_bidirectional": lambda lib: lib.nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True),
    "lstm_proj_nobias_batch_first": lambda lib: lib.nn.LSTM(3, 4, bias=False, proj_size=3, batch_first=True),
    "lstm_dropout_everything": lambda lib: lib.nn.LSTM(3, 6, num_layers=3, bias=False, batch_first=True,
                                                       dropout=0.25, bidirectional=True, proj_size=2),
    "lstm_with_state": lambda lib: _with_state(lib, lib.nn.LSTM(4, 5)),
    "lstm_proj_bidirectional_with_state": lambda lib: _with_state(
        lib, lib.nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True, batch_first=True)),
    # GRU ---------------------------------------------------------------------------------------------
    "gru": lambda lib: lib.nn.GRU(4, 5),
    "gru_2layer_bidirectional_batch_first": lambda lib: lib.nn.GRU(3, 4, num_layers=2, bidirectional=True,
                                                                   batch_first=True),
    "gru_nobias": lambda lib: lib.nn.GRU(3, 4, bias=False),
    # PackedSequence ----------------------------------------------------------------------------------
    "gru_packed": lambda lib: _packed(lib, lib.nn.GRU(3, 4, num_layers=2, bidirectional=True), [5, 3, 3, 1]),
    "rnn_packed_unsorted_batch_first": lambda lib: _packed(
        lib, lib.nn.RNN(3, 4, bidirectional=True, batch_first=True), [2, 4, 1], enforce_sorted=False,
        batch_first=True),
    "lstm_proj_packed_unsorted": lambda lib: _packed(
        lib, lib.nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True), [3, 5, 2], enforce_sorted=False),
    # cells -------------------------------------------------------------------------------------------
    "rnn_cell": lambda lib: lib.nn.RNNCell(4, 5),
    "rnn_cell_relu_nobias": lambda lib: lib.nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
    "lstm_cell": lambda lib: lib.nn.LSTMCell(4, 5),
    "lstm_cell_nobias": lambda lib: lib.nn.LSTMCell(3, 2, bias=False),
    "lstm_cell_with_state": lambda lib: _with_state(lib, lib.nn.LSTMCell(4, 5)),
    "gru_cell": lambda lib: lib.nn.GRUCell(4, 5),
    "gru_cell_nobias": lambda lib: lib.nn.GRUCell(3, 4, bias=False),
}


# name -> (structure name, input shapes or spec(lib, rng) -> inputs)
FORWARDS = {
    # RNN: (L, N, H_in) input, h0 (D·num_layers, N, H); unbatched (L, H_in) with h0 (D·num_layers, H)
    "rnn_tanh": ("rnn_tanh", [(6, 2, 4)]),
    "rnn_tanh_h0": ("rnn_tanh", _normals((6, 2, 4), (1, 2, 5))),
    "rnn_relu_2layer": ("rnn_relu_2layer", [(5, 3, 3)]),
    "rnn_relu_2layer_unbatched_h0": ("rnn_relu_2layer", _normals((5, 3), (2, 4))),
    "rnn_bidirectional_batch_first_h0": ("rnn_bidirectional_batch_first", _normals((2, 5, 3), (2, 2, 4))),
    "rnn_bidirectional_batch_first_unbatched": ("rnn_bidirectional_batch_first", [(5, 3)]),
    "rnn_nobias_positional": ("rnn_nobias_positional", [(4, 2, 3)]),
    "rnn_relu_3layer_bidirectional": ("rnn_relu_3layer_bidirectional", [(4, 3, 2)]),
    # LSTM
    "lstm": ("lstm", [(6, 2, 4)]),
    "lstm_h0_c0": ("lstm_with_state", _normals((6, 2, 4), (1, 2, 5), (1, 2, 5))),
    "lstm_unbatched_h0_c0": ("lstm_with_state", _normals((6, 4), (1, 5), (1, 5))),
    "lstm_2layer_bidirectional": ("lstm_2layer_bidirectional", [(5, 2, 3)]),
    "lstm_proj_2layer_bidirectional": ("lstm_proj_2layer_bidirectional", [(5, 2, 3)]),
    "lstm_proj_2layer_bidirectional_unbatched": ("lstm_proj_2layer_bidirectional", [(4, 3)]),
    "lstm_proj_nobias_batch_first": ("lstm_proj_nobias_batch_first", [(2, 4, 3)]),
    "lstm_proj_bidirectional_h0_c0": ("lstm_proj_bidirectional_with_state",
                                      _normals((3, 4, 3), (4, 3, 2), (4, 3, 5))),
    # GRU
    "gru": ("gru", [(6, 2, 4)]),
    "gru_h0": ("gru", _normals((6, 2, 4), (1, 2, 5))),
    "gru_unbatched_h0": ("gru", _normals((6, 4), (1, 5))),
    "gru_2layer_bidirectional_batch_first": ("gru_2layer_bidirectional_batch_first", [(2, 5, 3)]),
    "gru_2layer_bidirectional_batch_first_h0": ("gru_2layer_bidirectional_batch_first",
                                                _normals((3, 4, 3), (4, 3, 4))),
    "gru_nobias": ("gru_nobias", [(5, 2, 3)]),
    # PackedSequence: padded (T, B, H_in) inputs (batch_first: (B, T, H_in)), h0 for the sorted order
    "gru_packed": ("gru_packed", [(5, 4, 3)]),
    "gru_packed_h0": ("gru_packed", _normals((5, 4, 3), (4, 4, 4))),
    "rnn_packed_unsorted_batch_first": ("rnn_packed_unsorted_batch_first", [(3, 4, 3)]),
    "lstm_proj_packed_unsorted": ("lstm_proj_packed_unsorted", [(5, 3, 3)]),
    "lstm_proj_packed_unsorted_h0_c0": ("lstm_proj_packed_unsorted", _normals((5, 3, 3), (4, 3, 2), (4, 3, 4))),
    # cells: (N, H_in) with (N, H), or unbatched (H_in) with (H)
    "rnn_cell": ("rnn_cell", [(3, 4)]),
    "rnn_cell_h": ("rnn_cell", _normals((3, 4), (3, 5))),
    "rnn_cell_relu_nobias_unbatched_h": ("rnn_cell_relu_nobias", _normals((3,), (4,))),
    "lstm_cell": ("lstm_cell", [(3, 4)]),
    "lstm_cell_nobias_unbatched": ("lstm_cell_nobias", [(3,)]),
    "lstm_cell_h_c": ("lstm_cell_with_state", _normals((3, 4), (3, 5), (3, 5))),
    "lstm_cell_unbatched_h_c": ("lstm_cell_with_state", _normals((4,), (5,), (5,))),
    "gru_cell": ("gru_cell", [(3, 4)]),
    "gru_cell_h": ("gru_cell", _normals((3, 4), (3, 5))),
    "gru_cell_nobias_unbatched_h": ("gru_cell_nobias", _normals((3,), (4,))),
}
