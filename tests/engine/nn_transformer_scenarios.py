"""torch.nn scenarios of one family, merged into nn_scenarios.py (FAMILIES): same format as its
STRUCTURES (name -> builder(lib) -> module) and FORWARDS (name -> (structure name, input shapes, or
a callable spec(lib, rng) -> inputs)).

MultiheadAttention and the Transformer modules. A module called with masks or keywords is wrapped in
`Calling`, whose forward calls it as a user would; masks come in as inputs (float ones get gradients
too) or, the causal mask, from generate_square_subsequent_mask. Forward scenarios use dropout=0.0
(the two libraries draw different masks); dropout > 0 is covered by the structures."""
from __future__ import annotations

from nn_scenario_helpers import calling as _calling, normal as _normal


def _bool_mask(lib, rng, *shape):
    """True (masked) with probability 0.4; never at key 0, so no row is masked whole."""
    mask = rng.random(shape) < 0.4
    mask[..., 0] = False
    return lib.tensor(mask.tolist(), dtype=lib.bool)


def _causal(lib, size):
    return lib.nn.Transformer.generate_square_subsequent_mask(size)


def _bool_causal(lib, size):
    """The causal mask as bool (True above the diagonal): made float, it is detected as causal."""
    return lib.triu(lib.ones(size, size, dtype=lib.bool), diagonal=1)


def _as_float(lib, mask):
    """A bool mask as the float one it stands for (-inf where True), to go with a float mask."""
    return lib.zeros(tuple(mask.shape)).masked_fill(mask, float("-inf"))


def _mha(lib, *args, **kwargs):
    return lib.nn.MultiheadAttention(*args, **kwargs)


def _encoder_layer(lib, *args, **kwargs):
    return lib.nn.TransformerEncoderLayer(*args, **kwargs)


def _decoder_layer(lib, *args, **kwargs):
    return lib.nn.TransformerDecoderLayer(*args, **kwargs)


# name -> builder(lib) -> module
STRUCTURES = {
    # MultiheadAttention ------------------------------------------------------------------------------
    "mha": lambda lib: _mha(lib, 6, 3),
    "mha_self": lambda lib: _calling(lib, _mha(lib, 6, 2), lambda lib, m, x: m(x, x, x)),
    "mha_cross_padding": lambda lib: _calling(
        lib, _mha(lib, 4, 2), lambda lib, m, q, kv, kpm: m(q, kv, kv, key_padding_mask=kpm)),
    "mha_kdim_vdim": lambda lib: _mha(lib, 6, 2, kdim=5, vdim=3),
    "mha_kdim_vdim_float_mask": lambda lib: _calling(
        lib, _mha(lib, 4, 2, kdim=3, vdim=5),
        lambda lib, m, q, k, v, mask: m(q, k, v, attn_mask=mask, average_attn_weights=False)),
    "mha_bias_kv_zero_attn": lambda lib: _calling(
        lib, _mha(lib, 4, 2, add_bias_kv=True, add_zero_attn=True),
        lambda lib, m, x, kpm, mask: m(x, x, x, key_padding_mask=kpm, attn_mask=mask)),
    "mha_bool_mask_3d": lambda lib: _calling(
        lib, _mha(lib, 4, 2), lambda lib, m, q, kv, mask: m(q, kv, kv, attn_mask=mask)),
    "mha_float_masks": lambda lib: _calling(
        lib, _mha(lib, 6, 3, add_bias_kv=True),
        lambda lib, m, q, k, v, kpm, mask: m(q, k, v, key_padding_mask=kpm, attn_mask=mask,
                                             average_attn_weights=False)),
    "mha_no_weights_batch_first": lambda lib: _calling(
        lib, _mha(lib, 4, 2, batch_first=True, add_zero_attn=True),
        lambda lib, m, x, kpm, mask: m(x, x, x, key_padding_mask=kpm, attn_mask=mask, need_weights=False)),
    "mha_causal_batch_first": lambda lib: _calling(
        lib, _mha(lib, 4, 2, batch_first=True),
        lambda lib, m, x: m(x, x, x, attn_mask=_causal(lib, x.shape[1]), need_weights=False, is_causal=True)),
    "mha_causal_weights": lambda lib: _calling(
        lib, _mha(lib, 4, 2), lambda lib, m, x: m(x, x, x, attn_mask=_causal(lib, x.shape[0]), is_causal=True)),
    "mha_unbatched": lambda lib: _calling(
        lib, _mha(lib, 4, 2, batch_first=True),
        lambda lib, m, q, kv, kpm, mask: m(q, kv, kv, key_padding_mask=kpm, attn_mask=mask)),
    "mha_nobias_dropout": lambda lib: _mha(lib, 8, 4, dropout=0.1, bias=False, add_bias_kv=True, kdim=3),
    # layers ------------------------------------------------------------------------------------------
    "encoder_layer": lambda lib: _encoder_layer(lib, 8, 2, 16),
    "encoder_layer_norm_first_gelu": lambda lib: _calling(
        lib, _encoder_layer(lib, 8, 2, 16, dropout=0.0, activation="gelu", norm_first=True),
        lambda lib, m, src, mask, kpm: m(src, src_mask=mask, src_key_padding_mask=kpm)),
    "encoder_layer_batch_first_module_act": lambda lib: _encoder_layer(
        lib, 8, 4, 12, dropout=0.0, activation=lib.nn.GELU(approximate="tanh"), batch_first=True, bias=False,
        layer_norm_eps=1e-3),
    "decoder_layer_norm_first_gelu": lambda lib: _calling(
        lib, _decoder_layer(lib, 8, 2, 16, dropout=0.0, activation="gelu", norm_first=True),
        lambda lib, m, tgt, memory, kpm: m(tgt, memory, tgt_mask=_causal(lib, tgt.shape[0]),
                                           memory_key_padding_mask=kpm, tgt_is_causal=True)),
    "decoder_layer_batch_first_callable": lambda lib: _decoder_layer(
        lib, 8, 2, 16, dropout=0.0, activation=lib.nn.functional.silu, batch_first=True),
    # stacks ------------------------------------------------------------------------------------------
    "encoder": lambda lib: _calling(
        lib, lib.nn.TransformerEncoder(_encoder_layer(lib, 8, 2, 16, dropout=0.0), 2, norm=lib.nn.LayerNorm(8),
                                       enable_nested_tensor=False),
        lambda lib, m, src, kpm: m(src, mask=_bool_causal(lib, src.shape[0]), src_key_padding_mask=kpm)),
    "decoder": lambda lib: lib.nn.TransformerDecoder(_decoder_layer(lib, 8, 2, 16, dropout=0.0, batch_first=True),
                                                     2),
    "transformer": lambda lib: _calling(
        lib, lib.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0),
        lambda lib, m, src, tgt, src_kpm, tgt_kpm: m(
            src, tgt, tgt_mask=_causal(lib, tgt.shape[0]), src_key_padding_mask=src_kpm,
            tgt_key_padding_mask=_as_float(lib, tgt_kpm), memory_key_padding_mask=src_kpm)),
    "transformer_norm_first_causal": lambda lib: _calling(
        lib, lib.nn.Transformer(8, 4, 1, 2, 12, dropout=0.0, activation="gelu", batch_first=True, norm_first=True),
        lambda lib, m, src, tgt: m(src, tgt, src_mask=_causal(lib, src.shape[1]), tgt_mask=_causal(lib, tgt.shape[1]),
                                   tgt_is_causal=True)),
    "transformer_dropout": lambda lib: lib.nn.Transformer(8, 2, 1, 1, 8, dropout=0.1, batch_first=True,
                                                          norm_first=True, bias=False),
}


# name -> (structure name, input shapes, or spec(lib, rng) -> inputs)
FORWARDS = {
    "mha_qkv_distinct": ("mha", [(3, 2, 6), (4, 2, 6), (4, 2, 6)]),
    "mha_self": ("mha_self", [(5, 2, 6)]),
    "mha_cross_padding": ("mha_cross_padding",
                          lambda lib, rng: [_normal(lib, rng, 3, 2, 4), _normal(lib, rng, 5, 2, 4),
                                            _bool_mask(lib, rng, 2, 5)]),
    "mha_kdim_vdim": ("mha_kdim_vdim", [(3, 2, 6), (4, 2, 5), (4, 2, 3)]),
    "mha_kdim_vdim_float_mask": ("mha_kdim_vdim_float_mask",
                                 lambda lib, rng: [_normal(lib, rng, 3, 2, 4), _normal(lib, rng, 4, 2, 3),
                                                   _normal(lib, rng, 4, 2, 5), _normal(lib, rng, 3, 4)]),
    "mha_bias_kv_zero_attn": ("mha_bias_kv_zero_attn",
                              lambda lib, rng: [_normal(lib, rng, 4, 3, 4), _bool_mask(lib, rng, 3, 4),
                                                _bool_mask(lib, rng, 4, 4)]),
    "mha_bool_mask_3d": ("mha_bool_mask_3d",
                         lambda lib, rng: [_normal(lib, rng, 3, 2, 4), _normal(lib, rng, 4, 2, 4),
                                           _bool_mask(lib, rng, 4, 3, 4)]),
    "mha_float_masks": ("mha_float_masks",
                        lambda lib, rng: [_normal(lib, rng, 3, 2, 6), _normal(lib, rng, 4, 2, 6),
                                          _normal(lib, rng, 4, 2, 6), _normal(lib, rng, 2, 4),
                                          _normal(lib, rng, 6, 3, 4)]),
    "mha_no_weights_batch_first": ("mha_no_weights_batch_first",
                                   lambda lib, rng: [_normal(lib, rng, 2, 5, 4), _bool_mask(lib, rng, 2, 5),
                                                     _bool_mask(lib, rng, 5, 5)]),
    "mha_causal_batch_first": ("mha_causal_batch_first", [(2, 5, 4)]),
    "mha_causal_weights": ("mha_causal_weights", [(4, 3, 4)]),
    "mha_unbatched": ("mha_unbatched",
                      lambda lib, rng: [_normal(lib, rng, 3, 4), _normal(lib, rng, 5, 4), _bool_mask(lib, rng, 5),
                                        _bool_mask(lib, rng, 2, 3, 5)]),
    "encoder_layer_norm_first_gelu": ("encoder_layer_norm_first_gelu",
                                      lambda lib, rng: [_normal(lib, rng, 5, 2, 8), _normal(lib, rng, 5, 5),
                                                        _normal(lib, rng, 2, 5)]),
    "encoder_layer_batch_first_module_act": ("encoder_layer_batch_first_module_act", [(2, 4, 8)]),
    "encoder_layer_unbatched": ("encoder_layer_batch_first_module_act", [(4, 8)]),
    "decoder_layer_norm_first_gelu": ("decoder_layer_norm_first_gelu",
                                      lambda lib, rng: [_normal(lib, rng, 4, 2, 8), _normal(lib, rng, 5, 2, 8),
                                                        _bool_mask(lib, rng, 2, 5)]),
    "decoder_layer_batch_first_callable": ("decoder_layer_batch_first_callable", [(2, 3, 8), (2, 5, 8)]),
    "encoder": ("encoder", lambda lib, rng: [_normal(lib, rng, 5, 2, 8), _bool_mask(lib, rng, 2, 5)]),
    "decoder": ("decoder", [(2, 3, 8), (2, 4, 8)]),
    "transformer": ("transformer",
                    lambda lib, rng: [_normal(lib, rng, 5, 2, 8), _normal(lib, rng, 4, 2, 8),
                                      _bool_mask(lib, rng, 2, 5), _bool_mask(lib, rng, 2, 4)]),
    "transformer_norm_first_causal": ("transformer_norm_first_causal", [(2, 4, 8), (2, 3, 8)]),
}
