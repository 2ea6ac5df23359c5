"""agrad.nn.MultiheadAttention and the Transformer modules beyond the torch comparison of
nn_transformer_scenarios.py: float64 gradchecks of attention (inputs, masks and parameters), and
PyTorch 2.13's validation messages and warnings, copied from torch (torch.Size printed as
agrad.Size, as agrad's other messages print it)."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import agrad
import agrad.nn as nn
from agrad.nn.functional import multi_head_attention_forward
from agrad.testing import gradcheck

F64 = agrad.float64


def _rand(*shape, seed=0, requires_grad=True):
    values = np.random.default_rng([seed, *shape]).normal(size=shape)
    return agrad.tensor(values.tolist(), dtype=F64, requires_grad=requires_grad)


def _mask(*shape, seed=0):
    mask = np.random.default_rng([seed, 7, *shape]).random(shape) < 0.4
    mask[..., 0] = False                    # no row masked whole
    return agrad.tensor(mask.tolist(), dtype=agrad.bool)


def _outputs(out):
    """The float tensors of (attn_output, attn_output_weights or None)."""
    return tuple(t for t in out if t is not None)


# ---- gradients ------------------------------------------------------------------------------------

@pytest.mark.parametrize("need_weights", [True, False])
def test_gradcheck_cross_attention_with_masks(need_weights):
    agrad.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, dtype=F64)
    kpm = _mask(2, 5)

    def fn(q, kv, attn_mask):
        return _outputs(mha(q, kv, kv, key_padding_mask=kpm, attn_mask=attn_mask, need_weights=need_weights))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # a bool key_padding_mask with a float attn_mask: deprecated, allowed
        assert gradcheck(fn, [_rand(3, 2, 4), _rand(5, 2, 4, seed=1), _rand(3, 5, seed=2)])


def test_gradcheck_self_attention_batch_first_causal():
    agrad.manual_seed(1)
    mha = nn.MultiheadAttention(6, 3, batch_first=True, dtype=F64)
    causal = nn.Transformer.generate_square_subsequent_mask(4, dtype=F64)
    assert gradcheck(lambda x: _outputs(mha(x, x, x, attn_mask=causal, is_causal=True, need_weights=False)),
                     [_rand(2, 4, 6)])
    assert gradcheck(lambda x: _outputs(mha(x, x, x, attn_mask=causal, average_attn_weights=False)),
                     [_rand(2, 4, 6, seed=3)])


def test_gradcheck_kdim_vdim_unbatched():
    agrad.manual_seed(2)
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, dtype=F64)
    assert gradcheck(lambda q, k, v: _outputs(mha(q, k, v, key_padding_mask=_mask(4))),
                     [_rand(3, 4), _rand(4, 3, seed=1), _rand(4, 5, seed=2)])


def test_gradcheck_multi_head_attention_forward_parameters():
    """Every parameter of the packed projection, bias_k/bias_v and out_proj, through the function."""
    q, kv = _rand(3, 2, 4, requires_grad=False), _rand(5, 2, 4, seed=1, requires_grad=False)
    params = [_rand(12, 4, seed=2), _rand(12, seed=3), _rand(1, 1, 4, seed=4), _rand(1, 1, 4, seed=5),
              _rand(4, 4, seed=6), _rand(4, seed=7)]

    def fn(w_in, b_in, bias_k, bias_v, w_out, b_out):
        return multi_head_attention_forward(q, kv, kv, 4, 2, w_in, b_in, bias_k, bias_v, True, 0.0, w_out, b_out,
                                            key_padding_mask=_mask(2, 5))

    assert gradcheck(fn, params)


# ---- values the scenarios do not reach -----------------------------------------------------------

def _close(actual, expected):
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=0, atol=1e-12)


def test_batch_first_is_a_transpose_and_unbatched_is_a_batch_of_one():
    agrad.manual_seed(3)
    seq_first = nn.MultiheadAttention(4, 2, dtype=F64)
    batch_first = nn.MultiheadAttention(4, 2, batch_first=True, dtype=F64)
    batch_first.load_state_dict(seq_first.state_dict())
    x = _rand(3, 2, 4, requires_grad=False)
    out, weights = seq_first(x, x, x)
    xt = x.transpose(0, 1)
    out_bf, weights_bf = batch_first(xt, xt, xt)
    _close(out_bf.transpose(0, 1), out)
    _close(weights_bf, weights)
    one, one_weights = seq_first(x[:, 0], x[:, 0], x[:, 0])
    _close(one, out[:, 0])
    _close(one_weights, weights[0])


def test_bool_and_float_masks_agree_and_weights_skip_masked_keys():
    agrad.manual_seed(4)
    mha = nn.MultiheadAttention(4, 2, dtype=F64)
    q, kv, kpm = _rand(3, 2, 4, requires_grad=False), _rand(5, 2, 4, seed=1, requires_grad=False), _mask(2, 5)
    out_bool, weights = mha(q, kv, kv, key_padding_mask=kpm)
    out_float, _ = mha(q, kv, kv, key_padding_mask=agrad.zeros(2, 5, dtype=F64).masked_fill(kpm, float("-inf")))
    _close(out_bool, out_float)
    w = weights.detach().numpy()
    assert (w[np.broadcast_to(kpm.numpy()[:, None, :], w.shape)] == 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)


def test_generate_square_subsequent_mask_and_causal_detection():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == agrad.float32
    assert mask.tolist() == [[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]]
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=F64).dtype == F64
    agrad.manual_seed(5)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, dtype=F64), 2,
                                    enable_nested_tensor=False)
    src = _rand(3, 2, 4, requires_grad=False)
    causal = nn.Transformer.generate_square_subsequent_mask(3, dtype=F64)
    # a mask equal to the causal one is detected (is_causal=None): the layers get is_causal=True (SDPA's own mask)
    _close(encoder(src, mask=causal), encoder(src, mask=causal, is_causal=True))
    _close(encoder(src, mask=causal), encoder(src, mask=causal, is_causal=False))
    # the bool causal mask (True above the diagonal) becomes that float mask
    _close(encoder(src, mask=agrad.triu(agrad.ones(3, 3, dtype=agrad.bool), diagonal=1)), encoder(src, mask=causal))


def test_encoder_clones_its_layer_and_activations_are_classified():
    layer = nn.TransformerEncoderLayer(4, 2, 8)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    first, second = encoder.layers
    assert first is not layer and first.linear1.weight is not second.linear1.weight
    assert agrad.equal(first.linear1.weight, layer.linear1.weight)
    assert [nn.TransformerEncoderLayer(4, 2, 8, activation=a).activation_relu_or_gelu
            for a in ("relu", "gelu", nn.GELU(), agrad.tanh)] == [1, 2, 2, 0]
    assert nn.TransformerDecoderLayer(4, 2, 8, activation="gelu").activation is nn.functional.gelu
    assert copy.deepcopy(layer).activation is nn.functional.relu


def test_structure_of_the_reference_path():
    mha = nn.MultiheadAttention(4, 2)
    assert mha.bias_k is None and mha.bias_v is None and mha.head_dim == 2 and mha._qkv_same_embed_dim
    assert type(mha.out_proj).__name__ == "NonDynamicallyQuantizableLinear" and isinstance(mha.out_proj, nn.Linear)
    assert mha.in_proj_bias.tolist() == [0.0] * 12 and mha.out_proj.bias.tolist() == [0.0] * 4
    separate = nn.MultiheadAttention(4, 2, kdim=3, add_bias_kv=True)
    assert [n for n, _ in separate.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
        "out_proj.bias"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 1)
    assert (encoder.enable_nested_tensor, encoder.use_nested_tensor, encoder.mask_check) == (True, False, True)


# ---- PyTorch 2.13's messages ---------------------------------------------------------------------

def _m():
    agrad.manual_seed(6)
    return nn.MultiheadAttention(4, 2)


def _x():
    return agrad.randn(3, 2, 4)


def _k():
    return agrad.randn(5, 2, 4)


def _bool(*shape):
    return agrad.zeros(*shape, dtype=agrad.bool)


ERRORS = {
    "embed0": (lambda: nn.MultiheadAttention(0, 2), ValueError,
               "embed_dim and num_heads must be greater than 0, got embed_dim=0 and num_heads=2 instead"),
    "divisible": (lambda: nn.MultiheadAttention(5, 2), AssertionError, "embed_dim must be divisible by num_heads"),
    "query1d": (lambda: _m()(agrad.randn(4), agrad.randn(4), agrad.randn(4)), AssertionError,
                "query should be unbatched 2D or batched 3D tensor but received 1-D query tensor"),
    "key2d_batched": (lambda: _m()(_x(), agrad.randn(5, 4), agrad.randn(5, 4)), AssertionError,
                      "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 2-D tensors "
                      "respectively"),
    "kpm_dim_batched": (lambda: _m()(_x(), _k(), _k(), key_padding_mask=_bool(2, 5, 1)), AssertionError,
                        "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found 3-D "
                        "tensor instead"),
    "mask4d": (lambda: _m()(_x(), _k(), _k(), attn_mask=agrad.zeros(1, 1, 3, 5)), AssertionError,
               "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D tensor instead"),
    "key3d_unbatched": (lambda: _m()(agrad.randn(3, 4), _k(), _k()), AssertionError,
                        "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found 3-D and 3-D "
                        "tensors respectively"),
    "kpm_dim_unbatched": (lambda: _m()(agrad.randn(3, 4), agrad.randn(5, 4), agrad.randn(5, 4),
                                       key_padding_mask=_bool(1, 5)), AssertionError,
                          "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found 2-D "
                          "tensor instead"),
    "mask3d_unbatched": (lambda: _m()(agrad.randn(3, 4), agrad.randn(5, 4), agrad.randn(5, 4),
                                      attn_mask=agrad.zeros(4, 3, 5)), AssertionError,
                         "Expected `attn_mask` shape to be (2, 3, 5) but got agrad.Size([4, 3, 5])"),
    "int_mask": (lambda: _m()(_x(), _k(), _k(), attn_mask=agrad.zeros(3, 5, dtype=agrad.int64)), AssertionError,
                 "only bool and floating types of attn_mask are supported"),
    "int_kpm": (lambda: _m()(_x(), _k(), _k(), key_padding_mask=agrad.zeros(2, 5, dtype=agrad.int64)),
                AssertionError, "only bool and floating types of key_padding_mask are supported"),
    "causal_no_mask": (lambda: _m()(_x(), _k(), _k(), is_causal=True), RuntimeError,
                       "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                       "`generate_square_subsequent_mask` to create this mask."),
    "embed_mismatch": (lambda: _m()(agrad.randn(3, 2, 6), agrad.randn(5, 2, 6), agrad.randn(5, 2, 6)),
                       AssertionError, "was expecting embedding dimension of 4, but got 6"),
    "kv_shape": (lambda: _m()(_x(), _k(), agrad.randn(6, 2, 4)), AssertionError,
                 "key shape agrad.Size([5, 2, 4]) does not match value shape agrad.Size([6, 2, 4])"),
    "kv_seq_kdim": (lambda: nn.MultiheadAttention(4, 2, kdim=3, vdim=5)(_x(), agrad.randn(5, 2, 3),
                                                                         agrad.randn(6, 2, 5)), AssertionError,
                    "key's sequence and batch dims agrad.Size([5, 2]) do not match value's agrad.Size([6, 2])"),
    "weights_kdim": (lambda: nn.MultiheadAttention(4, 2, kdim=3, vdim=5)(_x(), agrad.randn(5, 2, 4),
                                                                          agrad.randn(5, 2, 5)), AssertionError,
                     "expecting key weights shape of (4, 4), but got agrad.Size([4, 3])"),
    "mask2d_shape": (lambda: _m()(_x(), _k(), _k(), attn_mask=agrad.zeros(2, 2)), RuntimeError,
                     "The shape of the 2D attn_mask is agrad.Size([2, 2]), but should be (3, 5)."),
    "mask3d_shape": (lambda: _m()(_x(), _k(), _k(), attn_mask=agrad.zeros(2, 3, 5)), RuntimeError,
                     "The shape of the 3D attn_mask is agrad.Size([2, 3, 5]), but should be (4, 3, 5)."),
    "kpm_shape0": (lambda: _m()(_x(), _k(), _k(), key_padding_mask=_bool(3, 5)), AssertionError,
                   "Expected key_padded_mask.shape[0] to be 2, but got 3"),
    "kpm_shape1": (lambda: _m()(_x(), _k(), _k(), key_padding_mask=_bool(2, 4)), AssertionError,
                   "Expected key_padded_mask.shape[1] to be 5, but got 4"),
    "activation": (lambda: nn.TransformerEncoderLayer(4, 2, 8, activation="tanh"), RuntimeError,
                   "activation should be relu/gelu, not tanh"),
    "dec_activation": (lambda: nn.TransformerDecoderLayer(4, 2, 8, activation="swish"), RuntimeError,
                       "activation should be relu/gelu, not swish"),
    "tr_batch": (lambda: nn.Transformer(4, 2, 1, 1, 8)(agrad.randn(3, 2, 4), agrad.randn(3, 3, 4)), RuntimeError,
                 "the batch number of src and tgt must be equal"),
    "tr_batch_first": (lambda: nn.Transformer(4, 2, 1, 1, 8, batch_first=True)(agrad.randn(2, 3, 4),
                                                                               agrad.randn(3, 3, 4)),
                       RuntimeError, "the batch number of src and tgt must be equal"),
    "tr_feature": (lambda: nn.Transformer(4, 2, 1, 1, 8, batch_first=True)(agrad.randn(2, 3, 4),
                                                                           agrad.randn(2, 3, 6)),
                   RuntimeError, "the feature number of src and tgt must be equal to d_model"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_messages_equal_torch(name):
    call, kind, message = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the Transformer's enable_nested_tensor warning
        with pytest.raises(kind) as info:
            call()
    assert str(info.value) == message


_NESTED = "enable_nested_tensor is True, but self.use_nested_tensor is False because "

WARNINGS = {
    "mismatched": (lambda: _m()(_x(), _k(), _k(), key_padding_mask=_bool(2, 5), attn_mask=agrad.zeros(3, 5)),
                   ["Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both "
                    "instead."]),
    "enc_layer_mismatch": (lambda: nn.TransformerEncoderLayer(4, 2, 8)(_x(), src_mask=agrad.zeros(3, 3),
                                                                       src_key_padding_mask=_bool(2, 3)),
                           ["Support for mismatched src_key_padding_mask and src_mask is deprecated. Use same type "
                            "for both instead."]),
    "enc_warn_batch_first": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 1),
                             [_NESTED + "encoder_layer.self_attn.batch_first was not True(use batch_first for better "
                              "inference performance)"]),
    "enc_warn_norm_first": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, norm_first=True), 1),
                            [_NESTED + "encoder_layer.norm_first was True"]),
    "enc_warn_odd": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 1, 8, batch_first=True), 1),
                     [_NESTED + "encoder_layer.self_attn.num_heads is odd"]),
    "enc_warn_act": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True,
                                                                             activation=agrad.tanh), 1),
                     [_NESTED + "encoder_layer.activation_relu_or_gelu was not True"]),
    "enc_warn_bias": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True,
                                                                              bias=False), 1),
                      [_NESTED + "encoder_layer.self_attn was passed bias=False"]),
    "enc_no_warn": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 1), []),
    "enc_no_warn_disabled": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 1,
                                                           enable_nested_tensor=False), []),
}


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_warnings_equal_torch(name):
    call, messages = WARNINGS[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert [str(w.message) for w in caught] == messages
    assert all(w.category is UserWarning for w in caught)
