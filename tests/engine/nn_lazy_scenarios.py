"""torch.nn scenarios of one family, merged into nn_scenarios.py (FAMILIES): same format as its
STRUCTURES (name -> builder(lib) -> module) and FORWARDS (name -> (structure name, input shapes, or
a callable spec(lib, rng) -> inputs)).

This family: the lazy modules, AdaptiveLogSoftmaxWithLoss, FractionalMaxPool2d/3d and CrossMapLRN2d.
- A lazy module's uninitialized state has no shapes and no values to record or load, so a
  structure here is a lazy module after its first forward (a dry run on zeros, which turns it
  into its regular class, as the user's first batch does), or one that loaded an initialized state
  dict (still its lazy class, its parameters shaped by what it loaded: its first forward in the
  harness turns it into the regular class). Its uninitialized state, the class change and the
  messages are tests/engine/test_nn_lazy.py's.
- A fractional max pool is compared given fixed `_random_samples` (a buffer, so the harness
  loads torch's); one that draws its own is a structure only.
- CrossMapLRN2d's gradient is compared where every channel's window holds all the channels:
  elsewhere PyTorch's hand-written backward is not the gradient of its forward (it fails torch's
  gradcheck), so those forwards run without grad (values only; agrad's gradient is gradchecked in
  test_nn_lazy.py)."""
from __future__ import annotations

import numpy as np

from nn_scenario_helpers import calling, normal as _normal


def _dry_run(lib, module, *shape):
    """module after one forward on zeros of `shape` (its lazy tensors materialized)."""
    module(lib.zeros(shape))
    return module


def _lazy_loaded(lib, lazy, regular):
    """A lazy module that loaded the state dict of a regular one (it stays lazy until its forward)."""
    lazy.load_state_dict(regular.state_dict())
    return lazy


def _samples(lib, seed, *shape):
    """Fixed `_random_samples` in [0, 1)."""
    return lib.tensor(np.random.default_rng(seed).uniform(size=shape).astype(np.float32).tolist(),
                      dtype=lib.float32)


def _no_grad(lib, module):
    """module called under no_grad: its forward values are compared, not its gradients."""
    def call(lib_, inner, *inputs):
        with lib.no_grad():
            return inner(*inputs)
    return calling(lib, module, call)


def _asm(lib, **kwargs):
    # NOTE: in_features 16: with the default div_value a smaller one gives a cluster a hidden size of 0
    return lib.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6], **kwargs)


def _targets(values):
    def spec(lib, rng):
        x = _normal(lib, rng, len(values), 16) if isinstance(values, list) else _normal(lib, rng, 16)
        return [x, lib.tensor(values, dtype=lib.int64)]
    return spec


# name -> builder(lib) -> module
STRUCTURES = {
    # lazy modules after their first forward ------------------------------------------------------------
    "lazy_linear": lambda lib: _dry_run(lib, lib.nn.LazyLinear(3), 2, 5),
    "lazy_linear_nobias_3d_input": lambda lib: _dry_run(lib, lib.nn.LazyLinear(2, bias=False), 2, 3, 4),
    "lazy_conv1d": lambda lib: _dry_run(lib, lib.nn.LazyConv1d(4, 3, stride=2, padding=1), 2, 3, 9),
    "lazy_conv2d_groups_reflect": lambda lib: _dry_run(lib, lib.nn.LazyConv2d(4, (3, 2), padding=1, groups=2,
                                                                              padding_mode="reflect"), 1, 4, 5, 6),
    "lazy_conv3d_nobias_unbatched": lambda lib: _dry_run(lib, lib.nn.LazyConv3d(2, 2, bias=False), 3, 4, 4, 4),
    "lazy_conv_transpose1d": lambda lib: _dry_run(lib, lib.nn.LazyConvTranspose1d(3, 3, stride=2, output_padding=1),
                                                  2, 2, 5),
    "lazy_conv_transpose2d_groups": lambda lib: _dry_run(lib, lib.nn.LazyConvTranspose2d(4, 2, groups=2, dilation=2),
                                                         1, 2, 3, 3),
    "lazy_conv_transpose3d_unbatched": lambda lib: _dry_run(lib, lib.nn.LazyConvTranspose3d(2, (2, 1, 2), stride=2),
                                                            3, 2, 2, 2),
    "lazy_batchnorm1d": lambda lib: _dry_run(lib, lib.nn.LazyBatchNorm1d(), 4, 3),
    "lazy_batchnorm2d_cma": lambda lib: _dry_run(lib, lib.nn.LazyBatchNorm2d(momentum=None), 2, 3, 2, 2),
    "lazy_batchnorm3d_noaffine": lambda lib: _dry_run(lib, lib.nn.LazyBatchNorm3d(affine=False), 2, 2, 2, 2, 2),
    "lazy_batchnorm1d_untracked_nobias": lambda lib: _dry_run(lib, lib.nn.LazyBatchNorm1d(track_running_stats=False,
                                                                                          bias=False), 3, 4, 2),
    "lazy_instancenorm1d": lambda lib: _dry_run(lib, lib.nn.LazyInstanceNorm1d(), 2, 3, 5),
    "lazy_instancenorm2d_untracked": lambda lib: _dry_run(lib, lib.nn.LazyInstanceNorm2d(track_running_stats=False),
                                                          2, 3, 2, 3),
    "lazy_instancenorm3d_plain": lambda lib: _dry_run(lib, lib.nn.LazyInstanceNorm3d(affine=False,
                                                                                     track_running_stats=False),
                                                      1, 2, 2, 3, 2),
    "lazy_mlp": lambda lib: _dry_run(lib, lib.nn.Sequential(lib.nn.LazyLinear(6), lib.nn.Tanh(), lib.nn.LazyLinear(2)),
                                     3, 4),
    "lazy_cnn": lambda lib: _dry_run(lib, lib.nn.Sequential(
        lib.nn.LazyConv2d(4, 3), lib.nn.LazyBatchNorm2d(), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.LazyLinear(3)),
        2, 2, 5, 5),
    # lazy modules that loaded an initialized state dict (still lazy) -----------------------------------
    "lazy_linear_loaded": lambda lib: _lazy_loaded(lib, lib.nn.LazyLinear(3), lib.nn.Linear(5, 3)),
    "lazy_conv2d_loaded": lambda lib: _lazy_loaded(lib, lib.nn.LazyConv2d(2, 3, bias=False),
                                                   lib.nn.Conv2d(3, 2, 3, bias=False)),
    "lazy_batchnorm1d_loaded": lambda lib: _lazy_loaded(lib, lib.nn.LazyBatchNorm1d(), lib.nn.BatchNorm1d(3)),
    # AdaptiveLogSoftmaxWithLoss -------------------------------------------------------------------------
    "adaptive_log_softmax": lambda lib: _asm(lib),
    "adaptive_log_softmax_head_bias": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 9, [2, 4, 7], div_value=2.0,
                                                                                    head_bias=True),
    "adaptive_log_prob_predict": lambda lib: calling(lib, _asm(lib, div_value=2.0),
                                                     lambda lib_, m, x: (m.log_prob(x), m.predict(x))),
    # fractional max pooling -----------------------------------------------------------------------------
    "fractional_max_pool2d": lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=(3, 4),
                                                                    _random_samples=_samples(lib, 1, 2, 3, 2)),
    "fractional_max_pool2d_ratio_indices": lambda lib: lib.nn.FractionalMaxPool2d(
        (2, 3), output_ratio=(0.5, 0.7), return_indices=True, _random_samples=_samples(lib, 2, 1, 2, 2)),
    "fractional_max_pool3d": lambda lib: lib.nn.FractionalMaxPool3d(2, output_size=(2, 3, 2),
                                                                    _random_samples=_samples(lib, 3, 2, 2, 3)),
    "fractional_max_pool3d_ratio_indices": lambda lib: lib.nn.FractionalMaxPool3d(
        (1, 2, 2), output_ratio=0.6, return_indices=True, _random_samples=_samples(lib, 4, 1, 3, 3)),
    "fractional_max_pool2d_random": lambda lib: lib.nn.FractionalMaxPool2d(3, output_ratio=0.5),
    "fractional_max_pool3d_random_indices": lambda lib: lib.nn.FractionalMaxPool3d(2, output_size=4,
                                                                                   return_indices=True),
    # CrossMapLRN2d --------------------------------------------------------------------------------------
    "cross_map_lrn2d": lambda lib: lib.nn.CrossMapLRN2d(5, alpha=0.5, beta=0.7, k=1.5),
    "cross_map_lrn2d_default": lambda lib: lib.nn.CrossMapLRN2d(3),
    "cross_map_lrn2d_values": lambda lib: _no_grad(lib, lib.nn.CrossMapLRN2d(3, alpha=0.3, beta=0.6, k=2.0)),
    "cross_map_lrn2d_values_even": lambda lib: _no_grad(lib, lib.nn.CrossMapLRN2d(4, alpha=1.0, beta=0.75)),
}


# name -> (structure name, input shapes or spec(lib, rng) -> inputs)
FORWARDS = {
    # lazy modules, from torch's state after their first forward
    "lazy_linear": ("lazy_linear", [(3, 5)]),
    "lazy_linear_nobias_3d_input": ("lazy_linear_nobias_3d_input", [(2, 3, 4)]),
    "lazy_conv1d": ("lazy_conv1d", [(2, 3, 9)]),
    "lazy_conv2d_groups_reflect": ("lazy_conv2d_groups_reflect", [(2, 4, 5, 6)]),
    "lazy_conv3d_nobias_unbatched": ("lazy_conv3d_nobias_unbatched", [(3, 4, 4, 4)]),
    "lazy_conv_transpose1d": ("lazy_conv_transpose1d", [(2, 2, 5)]),
    "lazy_conv_transpose2d_groups": ("lazy_conv_transpose2d_groups", [(1, 2, 3, 3)]),
    "lazy_conv_transpose3d_unbatched": ("lazy_conv_transpose3d_unbatched", [(3, 2, 2, 2)]),
    "lazy_batchnorm1d": ("lazy_batchnorm1d", [(4, 3)]),
    "lazy_batchnorm2d_cma": ("lazy_batchnorm2d_cma", [(2, 3, 2, 2)]),
    "lazy_batchnorm3d_noaffine": ("lazy_batchnorm3d_noaffine", [(2, 2, 2, 2, 2)]),
    "lazy_batchnorm1d_untracked_nobias": ("lazy_batchnorm1d_untracked_nobias", [(3, 4, 2)]),
    "lazy_instancenorm1d": ("lazy_instancenorm1d", [(2, 3, 5)]),
    "lazy_instancenorm2d_untracked": ("lazy_instancenorm2d_untracked", [(2, 3, 2, 3)]),
    "lazy_instancenorm3d_plain": ("lazy_instancenorm3d_plain", [(1, 2, 2, 3, 2)]),
    "lazy_mlp": ("lazy_mlp", [(3, 4)]),
    "lazy_cnn": ("lazy_cnn", [(2, 2, 5, 5)]),
    # lazy modules still lazy: the harness's first call materializes nothing and turns them regular
    "lazy_linear_loaded": ("lazy_linear_loaded", [(2, 5)]),
    "lazy_conv2d_loaded": ("lazy_conv2d_loaded", [(1, 3, 4, 4)]),
    "lazy_batchnorm1d_loaded": ("lazy_batchnorm1d_loaded", [(4, 3)]),
    # AdaptiveLogSoftmaxWithLoss: targets in the shortlist and in each cluster; one row; unbatched
    "adaptive_log_softmax": ("adaptive_log_softmax", _targets([0, 9, 4, 2, 7, 5, 3])),
    "adaptive_log_softmax_shortlist_only": ("adaptive_log_softmax", _targets([0, 2, 1])),
    "adaptive_log_softmax_one_row": ("adaptive_log_softmax", _targets([8])),
    "adaptive_log_softmax_unbatched": ("adaptive_log_softmax", _targets(4)),
    "adaptive_log_softmax_head_bias": ("adaptive_log_softmax_head_bias",
                                       lambda lib, rng: [_normal(lib, rng, 5, 8),
                                                         lib.tensor([8, 1, 3, 6, 5], dtype=lib.int64)]),
    "adaptive_log_prob_predict": ("adaptive_log_prob_predict", [(6, 16)]),
    # fractional max pooling with fixed samples
    "fractional_max_pool2d": ("fractional_max_pool2d", [(2, 3, 6, 7)]),
    "fractional_max_pool2d_ratio_indices": ("fractional_max_pool2d_ratio_indices", [(2, 7, 9)]),
    "fractional_max_pool3d": ("fractional_max_pool3d", [(2, 2, 4, 6, 5)]),
    "fractional_max_pool3d_ratio_indices": ("fractional_max_pool3d_ratio_indices", [(1, 3, 4, 6, 5)]),
    # CrossMapLRN2d: gradients where every window holds every channel, values elsewhere
    "cross_map_lrn2d": ("cross_map_lrn2d", [(2, 2, 3, 4)]),
    "cross_map_lrn2d_default": ("cross_map_lrn2d_default", [(1, 1, 3, 3)]),
    "cross_map_lrn2d_values": ("cross_map_lrn2d_values", [(2, 7, 2, 3)]),
    "cross_map_lrn2d_values_even": ("cross_map_lrn2d_values_even", [(1, 6, 3, 2)]),
}
