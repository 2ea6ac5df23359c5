"""The recurrent functions (ATen's RNN.cpp, computed as its CPU path computes them): lstm, gru,
rnn_tanh and rnn_relu (their `input` overload: a padded sequence, the parameters as one flat
list), and one step of each, lstm_cell, gru_cell, rnn_tanh_cell and rnn_relu_cell. agrad.nn's
RNN, LSTM, GRU and their cells are PyTorch's Python over these, as torch.nn's are over _VF's;
a PackedSequence goes through `recurrent` (ATen's `data` overload) with its batch sizes.

The recurrence is a Python loop over time steps of agrad ops, so the engine differentiates it
and no op of its own is needed (every op here is a composite). As ATen does:
- a layer's input projections W_ih x + b_ih are computed for the whole sequence at once,
  then each step adds W_hh h + b_hh and applies the cell (`_CELLS`):
  RNN: h' = tanh|relu(·); LSTM: gates i, f, g, o (σ, σ, tanh, σ), c' = f c + i g,
  h' = o tanh(c'), projected h' = W_hr h' where the parameters have W_hr (h's size is not
  c's); GRU: gates r, z, n, n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (h - n) z + n;
- the parameters are gathered per layer and direction as ATen's gather_params does: W_ih,
  W_hh, then b_ih, b_hh where has_biases, then W_hr;
- a bidirectional layer runs the reverse direction over the reversed steps and concatenates
  both outputs on the last dimension; the final states are ordered layer by layer, forward
  then reverse;
- dropout (train only) is applied to each layer's output but the last's.
`_layer` is the one loop for both a padded batch (every step the same batch size) and a
packed one (batch sizes that shrink): a sequence that has ended leaves its state behind, as
ATen's PackedLayer and ReversedPackedLayer do.
"""
from __future__ import annotations

from ..linalg import linear
from ..pointwise.activation import relu, sigmoid, tanh
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.join import cat, stack
from .dropout import dropout as _dropout


# ---- the cells: one step from the input projection `ig` = W_ih x + b_ih (ATen's *Cell) ----------

def _simple_cell(activation):
    def cell(ig, h, w_hh, b_hh, w_hr):
        return activation(linear(h, w_hh, b_hh) + ig)
    return cell


def _lstm_cell(ig, hidden, w_hh, b_hh, w_hr):
    h, c = hidden
    i, f, g, o = (linear(h, w_hh, b_hh) + ig).chunk(4, 1)
    i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
    c = f * c + i * g
    h = o * tanh(c)
    return (h if w_hr is None else linear(h, w_hr)), c


def _gru_cell(ig, h, w_hh, b_hh, w_hr):
    i_r, i_z, i_n = ig.chunk(3, 1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, 1)
    r = sigmoid(h_r + i_r)
    z = sigmoid(h_z + i_z)
    n = tanh(i_n + h_n * r)
    return (h - n) * z + n


_CELLS = {"RNN_TANH": _simple_cell(tanh), "RNN_RELU": _simple_cell(relu), "LSTM": _lstm_cell, "GRU": _gru_cell}


# ---- a hidden state is a tensor, or LSTM's (h, c) ------------------------------------------------

def _hidden_slice(hidden, start: int, end: int):
    if isinstance(hidden, tuple):
        return tuple(_hidden_slice(t, start, end) for t in hidden)
    return hidden if (start, end) == (0, hidden.size(0)) else hidden.narrow(0, start, end - start)


def _hidden_concat(hiddens: list):
    if len(hiddens) == 1:
        return hiddens[0]
    if isinstance(hiddens[0], tuple):
        return tuple(cat(list(parts), 0) for parts in zip(*hiddens))
    return cat(hiddens, 0)


def _layer(cell, steps: list, hidden, weights: tuple, reverse: bool):
    """One direction of one layer: `cell` over `steps` (each step's input projections, batch
    sizes non-increasing), from `hidden`. Returns each step's output in time order and the
    final state, every sequence's own last one (ATen's FullLayer, PackedLayer and
    ReversedPackedLayer)."""
    outputs = []
    if not reverse:
        ended, h, last = [], hidden, steps[0].size(0)
        for ig in steps:
            batch = ig.size(0)
            if batch < last:         # sequences batch..last-1 have ended: keep their states
                ended.append(_hidden_slice(h, batch, last))
                h = _hidden_slice(h, 0, batch)
            last = batch
            h = cell(ig, h, *weights)
            outputs.append(h[0] if isinstance(h, tuple) else h)
        return outputs, _hidden_concat([h] + ended[::-1])
    last = steps[-1].size(0)
    h = _hidden_slice(hidden, 0, last)
    for ig in reversed(steps):
        batch = ig.size(0)
        if batch > last:             # sequences last..batch-1 start here, from their initial states
            h = _hidden_concat([h, _hidden_slice(hidden, last, batch)])
        last = batch
        h = cell(ig, h, *weights)
        outputs.append(h[0] if isinstance(h, tuple) else h)
    return outputs[::-1], h


# ---- the whole network ---------------------------------------------------------------------------

def _check_devices(input, hiddens, params):
    """ATen's check_attributes: every hidden state and parameter on the input's device."""
    for name, tensors in (("hidden", hiddens), ("parameter", params)):
        for t in tensors:
            if t is not None and t.device != input.device:
                raise RuntimeError(f"Input and {name} tensors are not at the same device, found input tensor at "
                                   f"{input.device} and {name} tensor at {t.device}")


def _gather_params(params, has_biases: bool, has_projections: bool) -> list:
    """ATen's gather_params: (w_ih, w_hh, b_ih, b_hh, w_hr) per layer and direction (None where absent)."""
    stride = 2 + 2 * has_biases + has_projections
    if len(params) % stride:
        raise RuntimeError("got an incorrect number of RNN parameters")
    groups = []
    for i in range(0, len(params), stride):
        w_ih, w_hh, *rest = params[i:i + stride]
        b_ih, b_hh = (rest[0], rest[1]) if has_biases else (None, None)
        groups.append((w_ih, w_hh, b_ih, b_hh, rest[-1] if has_projections else None))
    return groups


def recurrent(mode: str, input, batch_sizes, hx, params, has_biases: bool, num_layers: int, dropout: float,
              train: bool, bidirectional: bool):
    """ATen's _rnn_impl (and _lstm_impl) on a time-major input (L, N, H_in), or a PackedSequence's data
    with its `batch_sizes` (a list of ints): (output, final state), the state a tensor (D·num_layers, N,
    H), or LSTM's (h, c) pair of them. `params` is the flat list (`_gather_params`)."""
    lstm = mode == "LSTM"
    hidden_list = list(hx) if lstm else [hx]
    _check_devices(input, hidden_list, params)
    if lstm:
        hiddens = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        has_projections = hx[0].size(2) != hx[1].size(2)
    else:
        hiddens = list(hx.unbind(0))
        has_projections = False
    weights = _gather_params(params, has_biases, has_projections)
    num_directions = 2 if bidirectional else 1
    if bidirectional and (len(hiddens) % 2 or len(weights) % 2):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    if len(hiddens) != num_layers * num_directions:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(weights) != num_layers * num_directions:
        raise RuntimeError("Expected more weights in stacked_rnn")
    if batch_sizes is None and input.size(0) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    cell = _CELLS[mode]
    x, finals = input, []
    for layer in range(num_layers):
        outputs = []
        for direction in range(num_directions):
            k = layer * num_directions + direction
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[k]
            igates = linear(x, w_ih, b_ih)
            steps = list(igates.unbind(0) if batch_sizes is None else igates.split(batch_sizes, 0))
            step_outputs, final = _layer(cell, steps, hiddens[k], (w_hh, b_hh, w_hr), reverse=direction == 1)
            outputs.append(stack(step_outputs, 0) if batch_sizes is None else cat(step_outputs, 0))
            finals.append(final)
        x = outputs[0] if num_directions == 1 else cat(outputs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    if lstm:
        return x, (stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0))
    return x, stack(finals, 0)


def _network(mode):
    def run(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        if mode == "LSTM" and len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        x = input.transpose(0, 1) if batch_first else input
        output, hidden = recurrent(mode, x, None, tuple(hx) if mode == "LSTM" else hx, list(params), has_biases,
                                   num_layers, dropout, train, bidirectional)
        if mode == "LSTM":
            return (output.transpose(0, 1) if batch_first else output, *hidden)
        if batch_first:             # NOTE: ATen's one-hidden RNNs transpose their output in place (TransposeBackward1)
            output.transpose_(0, 1)
        return output, hidden
    return run


# ---- one step ------------------------------------------------------------------------------------

def _check_cell_input(input, input_size: int) -> None:
    """ATen's check_rnn_cell_forward_input."""
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {input_size}")


def _check_cell_hidden(input, hx, hidden_size: int, label: int) -> None:
    """ATen's check_rnn_cell_forward_hidden."""
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected {hidden_size}")


def _step(mode):
    def step(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        if mode == "LSTM":
            if len(hx) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
            hx = tuple(hx)
        _check_cell_input(input, w_ih.size(1))
        for label, h in enumerate(hx if mode == "LSTM" else (hx,)):
            _check_cell_hidden(input, h, w_hh.size(1), label)
        return _CELLS[mode](linear(input, w_ih, b_ih), hx, w_hh, b_hh, None)
    return step


# ---- samples: a network's parameters as nn.LSTM/GRU/RNN flatten them ----------------------------

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _params(op, mode, input_size, hidden, num_layers, bidirectional, bias=True, proj=0):
    out, directions = [], 2 if bidirectional else 1
    real = proj or hidden
    gate = _GATES[mode] * hidden
    for layer in range(num_layers):
        for d in range(directions):
            size = input_size if layer == 0 else real * directions
            shapes = [(gate, size), (gate, real)] + ([(gate,), (gate,)] if bias else []) + \
                ([(proj, hidden)] if proj else [])
            out += [make_arg(s, key=(op, layer, d, i), low=-0.6, high=0.6) for i, s in enumerate(shapes)]
    return out


def _network_samples(mode):
    def samples(op):
        out = []
        # (name, input (L, N, H_in), hidden, num_layers, bidirectional, bias, batch_first, proj)
        for name, (length, batch, size), hidden, layers, bidir, bias, first, proj in (
                ("1 layer", (4, 2, 3), 3, 1, False, True, False, 0),
                ("2 layers bidirectional", (3, 2, 2), 2, 2, True, True, False, 0),
                ("no biases batch_first", (3, 2, 2), 3, 1, False, False, True, 0),
                ("projections", (3, 2, 3), 3, 2, False, True, False, 2)):
            if proj and mode != "LSTM":
                continue
            directions = 2 if bidir else 1
            x = make_arg((batch, length, size) if first else (length, batch, size), key=(op, name, "x"))
            h = make_arg((layers * directions, batch, proj or hidden), key=(op, name, "h"))
            if mode == "LSTM":
                h = [h, make_arg((layers * directions, batch, hidden), key=(op, name, "c"))]
            out.append(SampleInput(name, x, h, _params(op, mode, size, hidden, layers, bidir, bias, proj), bias,
                                   layers, 0.0, False, bidir, first))
        return out
    return samples


def _cell_samples(mode):
    def samples(op):
        out = []
        for name, bias in (("biases", True), ("no biases", False)):
            x = make_arg((2, 3), key=(op, name, "x"))
            h = make_arg((2, 4), key=(op, name, "h"))
            if mode == "LSTM":
                h = [h, make_arg((2, 4), key=(op, name, "c"))]
            params = _params(op + name, mode, 3, 4, 1, False, bias)
            out.append(SampleInput(name, x, h, *params))
        return out
    return samples


_NETWORK_ARGS = "Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, " \
                "bool batch_first"
_CELL_ARGS = "Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None"
_NETWORK_DOC = ("(input (L, N, H_in), or (N, L, H_in) with batch_first; hx (D·num_layers, N, H); params W_ih, "
                "W_hh[, b_ih, b_hh] per layer and direction, as nn.{0}'s flat weights): {1}")

lstm = defop(
    f"lstm(Tensor input, Tensor[] hx, {_NETWORK_ARGS}) -> (Tensor, Tensor, Tensor)",
    composite=_network("LSTM"), samples=_network_samples("LSTM"), torch="torch.lstm",
    doc="torch.lstm " + _NETWORK_DOC.format("LSTM", "(output, h_n, c_n); hx is [h_0, c_0], and W_hr after the "
                                            "biases projects h where h_0's size is not c_0's."))
gru = defop(
    f"gru(Tensor input, Tensor hx, {_NETWORK_ARGS}) -> (Tensor, Tensor)",
    composite=_network("GRU"), samples=_network_samples("GRU"), torch="torch.gru",
    doc="torch.gru " + _NETWORK_DOC.format("GRU", "(output, h_n)."))
rnn_tanh = defop(
    f"rnn_tanh(Tensor input, Tensor hx, {_NETWORK_ARGS}) -> (Tensor, Tensor)",
    composite=_network("RNN_TANH"), samples=_network_samples("RNN_TANH"), torch="torch.rnn_tanh",
    doc="torch.rnn_tanh " + _NETWORK_DOC.format("RNN", "(output, h_n), h' = tanh(W_ih x + b_ih + W_hh h + b_hh)."))
rnn_relu = defop(
    f"rnn_relu(Tensor input, Tensor hx, {_NETWORK_ARGS}) -> (Tensor, Tensor)",
    composite=_network("RNN_RELU"), samples=_network_samples("RNN_RELU"), torch="torch.rnn_relu",
    doc="torch.rnn_relu " + _NETWORK_DOC.format("RNN", "(output, h_n), h' = relu(W_ih x + b_ih + W_hh h + b_hh)."))

lstm_cell = defop(
    f"lstm_cell(Tensor input, Tensor[] hx, {_CELL_ARGS}) -> (Tensor, Tensor)",
    composite=_step("LSTM"), samples=_cell_samples("LSTM"), torch="torch.lstm_cell",
    doc="torch.lstm_cell: one LSTM step of input (N, H_in) from hx [h (N, H), c (N, H)]: (h', c').")
gru_cell = defop(
    f"gru_cell(Tensor input, Tensor hx, {_CELL_ARGS}) -> Tensor",
    composite=_step("GRU"), samples=_cell_samples("GRU"), torch="torch.gru_cell",
    doc="torch.gru_cell: one GRU step of input (N, H_in) from hx (N, H): h'.")
rnn_tanh_cell = defop(
    f"rnn_tanh_cell(Tensor input, Tensor hx, {_CELL_ARGS}) -> Tensor",
    composite=_step("RNN_TANH"), samples=_cell_samples("RNN_TANH"), torch="torch.rnn_tanh_cell",
    doc="torch.rnn_tanh_cell: tanh(W_ih x + b_ih + W_hh h + b_hh).")
rnn_relu_cell = defop(
    f"rnn_relu_cell(Tensor input, Tensor hx, {_CELL_ARGS}) -> Tensor",
    composite=_step("RNN_RELU"), samples=_cell_samples("RNN_RELU"), torch="torch.rnn_relu_cell",
    doc="torch.rnn_relu_cell: relu(W_ih x + b_ih + W_hh h + b_hh).")
