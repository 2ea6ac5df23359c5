"""torch.nn.RNN, LSTM, GRU and their cells (torch/nn/modules/rnn.py, computed as ATen's
aten/src/ATen/native/RNN.cpp computes them on the CPU). The Python side is PyTorch's: the
same arguments, checks and messages, parameters named, shaped and registered as PyTorch
registers them (`weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}`,
`weight_hr_l{k}`, `_reverse` for the second direction; `_flat_weights_names` in that
order), all starting U(-1/√hidden_size, 1/√hidden_size).

The recurrence is a Python loop over time steps of agrad ops, so the engine differentiates
it and no op of its own is needed. As ATen does:
- a layer's input projections W_ih x + b_ih are computed for the whole sequence at once,
  then each step adds W_hh h + b_hh and applies the cell (`_cells`):
  RNN: h' = tanh|relu(·); LSTM: gates i, f, g, o (σ, σ, tanh, σ), c' = f c + i g,
  h' = o tanh(c'), projected h' = W_hr h' where proj_size > 0; GRU: gates r, z, n,
  n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (h - n) z + n;
- a bidirectional layer runs the reverse direction over the reversed steps and
  concatenates both outputs on the last dimension; the final states are ordered layer by
  layer, forward then reverse;
- dropout (training only) is applied to each layer's output but the last's.
`_layer` is the one loop for both a padded batch (every step the same batch size) and a
PackedSequence (batch sizes that shrink, agrad.nn.utils.rnn): a sequence that has ended
leaves its state behind, as ATen's PackedLayer and ReversedPackedLayer do.
"""
from __future__ import annotations

import math
import numbers
import warnings

from .. import functional as F, init
from ..parameter import Parameter
from ..packed_sequence import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# ---- the cells: one step from the input projection `ig` = W_ih x + b_ih (ATen's *Cell) ----------

def _simple_cell(activation):
    def cell(ig, h, w_hh, b_hh, w_hr):
        return activation(F.linear(h, w_hh, b_hh) + ig)
    return cell


def _lstm_cell(ig, hidden, w_hh, b_hh, w_hr):
    import agrad
    h, c = hidden
    i, f, g, o = (F.linear(h, w_hh, b_hh) + ig).chunk(4, 1)
    i, f, g, o = agrad.sigmoid(i), agrad.sigmoid(f), agrad.tanh(g), agrad.sigmoid(o)
    c = f * c + i * g
    h = o * agrad.tanh(c)
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_cell(ig, h, w_hh, b_hh, w_hr):
    import agrad
    i_r, i_z, i_n = ig.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = agrad.sigmoid(h_r + i_r)
    z = agrad.sigmoid(h_z + i_z)
    n = agrad.tanh(i_n + h_n * r)
    return (h - n) * z + n


def _cells():
    import agrad
    return {"RNN_TANH": _simple_cell(agrad.tanh), "RNN_RELU": _simple_cell(agrad.relu), "LSTM": _lstm_cell,
            "GRU": _gru_cell}


# ---- a hidden state is a tensor, or LSTM's (h, c) ------------------------------------------------

def _hidden_slice(hidden, start: int, end: int):
    if isinstance(hidden, tuple):
        return tuple(_hidden_slice(t, start, end) for t in hidden)
    return hidden if (start, end) == (0, hidden.size(0)) else hidden.narrow(0, start, end - start)


def _hidden_concat(hiddens: list):
    import agrad
    if len(hiddens) == 1:
        return hiddens[0]
    if isinstance(hiddens[0], tuple):
        return tuple(agrad.cat(list(parts), 0) for parts in zip(*hiddens))
    return agrad.cat(hiddens, 0)


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


class RNNBase(Module):
    """The multi-layer recurrent network of RNN, LSTM and GRU (`mode`: RNN_TANH, RNN_RELU,
    LSTM or GRU)."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]
    _input_dim_message = "{name}: Expected input to be 2D or 3D, got {dim}D instead"

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        import agrad
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
        if mode not in gates:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = gates[mode] * hidden_size

        def param(*shape):
            return Parameter(agrad.empty(shape, device=device, dtype=dtype))

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                layer_params = [param(gate_size, layer_input_size), param(gate_size, real_hidden_size)]
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    layer_params += [param(gate_size), param(gate_size)]
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    layer_params += [param(proj_size, hidden_size)]
                    param_names += ["weight_hr_l{}{}"]
                suffix = "_reverse" if direction == 1 else ""
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, p in zip(param_names, layer_params):
                    setattr(self, name, p)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)
        self.reset_parameters()

    # NOTE: PyTorch caches these lists for cuDNN (and keeps them current in __setattr__ and
    # _apply); read from the attributes, they are always the module's current parameters
    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def flatten_parameters(self) -> None:
        """Packs the weights into one cuDNN buffer in PyTorch; agrad has no cuDNN, so nothing to do."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                             f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size: tuple, msg: str = "Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        expected_hidden_size = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hidden, expected_hidden_size)

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- forward: PyTorch's RNN/GRU.forward, LSTM's where it differs (the `_*hidden*` methods) -----
    def _zero_hidden(self, input, batch: int):
        import agrad
        num_directions = 2 if self.bidirectional else 1
        return agrad.zeros(self.num_layers * num_directions, batch, self.hidden_size, dtype=input.dtype,
                           device=input.device)

    def _check_hidden_dim(self, hx, is_batched: bool):
        if is_batched:
            if hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            return hx
        if hx.dim() != 2:
            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
        return hx.unsqueeze(1)

    def _unbatch_hidden(self, hidden):
        return hidden.squeeze(1)

    def _forward(self, input, hx):
        orig_input = input
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                raise ValueError(self._input_dim_message.format(name=type(self).__name__, dim=input.dim()))
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                hx = self._check_hidden_dim(hx, is_batched)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            hx = self._zero_hidden(input, max_batch_size)
        else:
            # Each batch of the hidden state should match the input sequence that
            # the user believes he/she is passing in.
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)

        output, hidden = self._run(input, hx, batch_sizes)
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = self._unbatch_hidden(hidden)
        return output, hidden

    def _run(self, input, hx, batch_sizes):
        """ATen's rnn_tanh / rnn_relu / lstm / gru on a checked input: (output, final state)."""
        import agrad
        cell = _cells()[self.mode]
        num_directions = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        if lstm:
            hiddens = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        else:
            hiddens = list(hx.unbind(0))
        x = input.transpose(0, 1) if self.batch_first and batch_sizes is None else input
        if batch_sizes is None and x.size(0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                w_ih, w_hh, b_ih, b_hh, w_hr = (getattr(self, f"{name}_l{layer}{suffix}", None) for name in
                                                ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))
                igates = F.linear(x, w_ih, b_ih)
                steps = list(igates.unbind(0) if batch_sizes is None else igates.split(batch_sizes.tolist(), 0))
                step_outputs, final = _layer(cell, steps, hiddens[layer * num_directions + direction],
                                             (w_hh, b_hh, w_hr), reverse=direction == 1)
                outputs.append(agrad.stack(step_outputs, 0) if batch_sizes is None else agrad.cat(step_outputs, 0))
                finals.append(final)
            x = outputs[0] if num_directions == 1 else agrad.cat(outputs, -1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        if self.batch_first and batch_sizes is None:
            x = x.transpose(0, 1)
        if lstm:
            return x, (agrad.stack([h for h, _ in finals], 0), agrad.stack([c for _, c in finals], 0))
        return x, agrad.stack(finals, 0)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh|relu(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh), for each layer."""

    _input_dim_message = "{name}: Expected input to be 2D or 3D, got {dim}D tensor instead"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        """(output, h_n): output (L, N, D·H) (batch_first: (N, L, D·H)), h_n (D·num_layers, N, H);
        an unbatched input (L, H_in) and its hx (D·num_layers, H) lose the N dimension."""
        return self._forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o; c_t = f c_(t-1) + i g, h_t = o tanh(c_t),
    h_t = W_hr h_t where proj_size > 0."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def _zero_hidden(self, input, batch: int):
        import agrad
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        kwargs = {"dtype": input.dtype, "device": input.device}
        return (agrad.zeros(self.num_layers * num_directions, batch, real_hidden_size, **kwargs),
                agrad.zeros(self.num_layers * num_directions, batch, self.hidden_size, **kwargs))

    def _check_hidden_dim(self, hx, is_batched: bool):
        if is_batched:
            if hx[0].dim() != 3 or hx[1].dim() != 3:
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            return hx
        if hx[0].dim() != 2 or hx[1].dim() != 2:
            raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        return hx[0].unsqueeze(1), hx[1].unsqueeze(1)

    def _unbatch_hidden(self, hidden):
        return hidden[0].squeeze(1), hidden[1].squeeze(1)

    def forward(self, input, hx=None):
        """(output, (h_n, c_n)); hx is (h_0, c_0), h of size proj_size where proj_size > 0."""
        return self._forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n; n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
    h_t = (1 - z) n + z h_(t-1)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        """(output, h_n), as RNN's."""
        return self._forward(input, hx)


# ---- the cells as modules: one step, a batch (N, H_in) or one sample (H_in) ----------------------

def _check_cell_input(input, input_size: int) -> None:
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {input_size}")


def _check_cell_hidden(input, hx, hidden_size: int, label: int) -> None:
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected {hidden_size}")


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        import agrad
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kwargs = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(agrad.empty((num_chunks * hidden_size, input_size), **kwargs))
        self.weight_hh = Parameter(agrad.empty((num_chunks * hidden_size, hidden_size), **kwargs))
        if bias:
            self.bias_ih = Parameter(agrad.empty(num_chunks * hidden_size, **kwargs))
            self.bias_hh = Parameter(agrad.empty(num_chunks * hidden_size, **kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, name: str, input, hx):
        """(input, hx, batched) of an RNNCell's or GRUCell's call: an unbatched one given a batch of one,
        hx zeros where None; PyTorch's messages for other dimensions."""
        import agrad
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = agrad.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched

    def _step(self, mode: str, input, hx):
        """ATen's rnn_*_cell / lstm_cell / gru_cell on a batch: its checks, then the cell."""
        _check_cell_input(input, self.weight_ih.size(1))
        for label, h in enumerate(hx if isinstance(hx, tuple) else (hx,)):
            _check_cell_hidden(input, h, self.weight_hh.size(1), label)
        return _cells()[mode](F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh, None)


class RNNCell(RNNCellBase):
    """h' = tanh|relu(W_ih x + b_ih + W_hh h + b_hh)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched("RNNCell", input, hx)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, hx)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """(h', c') from (h, c): gates i, f, g, o as LSTM's."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        import agrad
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = agrad.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        else:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if not is_batched else tuple(hx)
        ret = self._step("LSTM", input, hx)
        return ret if is_batched else (ret[0].squeeze(0), ret[1].squeeze(0))


class GRUCell(RNNCellBase):
    """h' from h: gates r, z, n as GRU's."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched("GRUCell", input, hx)
        ret = self._step("GRU", input, hx)
        return ret if is_batched else ret.squeeze(0)
