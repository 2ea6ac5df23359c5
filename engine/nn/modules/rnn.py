"""torch.nn.RNN, LSTM, GRU and their cells (torch/nn/modules/rnn.py). The Python side is
PyTorch's: the same arguments, checks and messages, parameters named, shaped and registered as
PyTorch registers them (`weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}`,
`weight_hr_l{k}`, `_reverse` for the second direction; `_flat_weights_names` in that order), all
starting U(-1/√hidden_size, 1/√hidden_size). The computation is agrad's recurrent functions
(engine/ops/nn/rnn.py), called as torch.nn calls _VF's: agrad.lstm, gru, rnn_tanh, rnn_relu with the
flat weights (a PackedSequence: their `recurrent` core with its batch sizes, ATen's `data`
overload), and agrad.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell for the cells.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ...ops.nn.rnn import recurrent
from .. import init
from ..parameter import Parameter
from ..packed_sequence import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


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
        """_VF's rnn_tanh / rnn_relu / lstm / gru on a checked input: (output, final state)."""
        import agrad
        args = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training, self.bidirectional)
        if batch_sizes is not None:
            return recurrent(self.mode, input, batch_sizes.tolist(), hx, *args)
        out = getattr(agrad, self.mode.lower())(input, list(hx) if self.mode == "LSTM" else hx, *args,
                                                self.batch_first)
        return (out[0], out[1:]) if self.mode == "LSTM" else out


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
        """_VF's rnn_*_cell / lstm_cell / gru_cell on a batch."""
        import agrad
        step = getattr(agrad, f"{mode.lower()}_cell")
        return step(input, list(hx) if mode == "LSTM" else hx, self.weight_ih, self.weight_hh, self.bias_ih,
                    self.bias_hh)


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
