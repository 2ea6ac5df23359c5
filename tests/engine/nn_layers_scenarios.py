"""torch.nn scenarios of one family, merged into nn_scenarios.py (FAMILIES): same format as its
STRUCTURES (name -> builder(lib) -> module) and FORWARDS (name -> (structure name, input shapes, or
a callable spec(lib, rng) -> inputs)).

The layers beyond the common ones: Conv3d and the transposed convolutions (output_size too),
the 1-d, 3-d, adaptive-max, LP and unpooling layers, the padding layers, the feature and alpha
dropouts, GroupNorm, LocalResponseNorm, RMSNorm and BatchNorm3d, Upsample and its 2-d forms,
the distances, Bilinear, Unflatten, ParameterList and ParameterDict, ChannelShuffle. A call the
harness cannot make directly (a forward's output_size, an unpooling fed by its pool's indices, a
container's parameters) goes through a small Module whose forward takes tensors. Dropouts run
forwards only with p = 0 or p = 1, whose training-mode output has no randomness (their masks are
tested statistically in test_nn_layers.py); any other p is a structure."""
from __future__ import annotations

import numpy as np

from nn_scenario_helpers import normal as _normal


def _calling(lib, modules, call):
    """modules (a dict name -> module) inside a Module whose forward(*inputs) is call(self, *inputs)."""
    class Calling(lib.nn.Module):
        def __init__(self):
            super().__init__()
            for name, module in modules.items():
                setattr(self, name, module)

        def forward(self, *inputs):
            return call(self, *inputs)

    return Calling()


def _normals(*shapes):
    return lambda lib, rng: [_normal(lib, rng, *shape) for shape in shapes]


def _positive(*shapes):
    """spec: |normal| + 0.1, for LP pools of odd power (a negative mean has no real root)."""
    return lambda lib, rng: [lib.tensor((np.abs(rng.normal(size=shape)) + 0.1).astype(np.float32).tolist())
                             for shape in shapes]


def _transpose_to(lib, module, output_size):
    return _calling(lib, {"conv": module}, lambda self, x: self.conv(x, output_size=output_size))


def _unpooling(lib, pool, unpool, output_size=None):
    """pool(x) -> (values, indices) -> unpool(values, indices, output_size)."""
    return _calling(lib, {"pool": pool, "unpool": unpool},
                    lambda self, x: self.unpool(*self.pool(x), output_size=output_size))


def _parameter_list(lib):
    """A ParameterList filled every way PyTorch allows: constructor (tensor and Parameter), append,
    extend, item assignment, +=; a non-tensor object; and used in forward by iteration and index."""
    nn = lib.nn
    params = nn.ParameterList([nn.Parameter(lib.full((3,), 1.5)), lib.full((3,), -0.5)])
    params.append(lib.full((3,), 0.25))
    params.extend([lib.ones(3)])
    params += [nn.Parameter(lib.full((1, 3), 2.0))]
    params[1] = lib.full((3,), 0.75)
    params.append("not a tensor")
    return _calling(lib, {"params": params},
                    lambda self, x: sum(x * p for p in list(self.params)[:4]) + self.params[-2] + self.params[0])


def _parameter_dict(lib):
    """A ParameterDict: a plain dict (added in sorted key order), update with pairs and with an
    OrderedDict-like ParameterDict, item assignment, setdefault, a deleted key, a non-tensor value."""
    nn = lib.nn
    params = nn.ParameterDict({"shift": lib.full((4,), 0.5), "scale": nn.Parameter(lib.full((4,), 2.0))})
    params.update([("gate", lib.full((4,), -1.0)), ("drop", lib.ones(4))])
    params.update(nn.ParameterDict({"z": lib.zeros(1), "a": lib.ones(1)}))
    params["late"] = lib.full((2, 4), 0.1)
    params.setdefault("shift", lib.zeros(4))
    params.setdefault("new", lib.full((4,), 3.0))
    del params["drop"]
    params["label"] = "text"
    return _calling(lib, {"params": params},
                    lambda self, x: (x * self.params["scale"] + self.params["shift"]) * self.params.get("gate")
                    + self.params["late"].sum(0) + self.params["new"] * self.params["a"])


# name -> builder(lib) -> module
STRUCTURES = {
    # convolutions ------------------------------------------------------------------------------------
    "conv3d": lambda lib: lib.nn.Conv3d(2, 4, (3, 2, 2), stride=(1, 2, 1), padding=1),
    "conv3d_groups_circular": lambda lib: lib.nn.Conv3d(4, 4, 3, groups=2, padding=1, padding_mode="circular",
                                                        bias=False),
    "conv3d_same_dilated": lambda lib: lib.nn.Conv3d(1, 2, (2, 3, 1), padding="same", dilation=(1, 2, 1)),
    "conv3d_reflect_valid": lambda lib: lib.nn.Conv3d(2, 1, 2, padding="valid", padding_mode="reflect"),
    "conv_transpose1d": lambda lib: lib.nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, output_padding=1),
    "conv_transpose2d_groups_dilated": lambda lib: lib.nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 1),
                                                                          padding=(1, 0), groups=2, dilation=(1, 2)),
    "conv_transpose2d_nobias": lambda lib: lib.nn.ConvTranspose2d(3, 2, 2, bias=False),
    "conv_transpose3d": lambda lib: lib.nn.ConvTranspose3d(2, 2, 2, stride=2, output_padding=(1, 0, 1)),
    "conv_transpose2d_to_size": lambda lib: _transpose_to(lib, lib.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1),
                                                          [8, 7]),
    "conv_transpose2d_to_full_size": lambda lib: _transpose_to(lib, lib.nn.ConvTranspose2d(2, 3, 3, stride=2),
                                                               [1, 3, 10, 9]),
    "conv_transpose1d_unbatched_to_size": lambda lib: _transpose_to(lib, lib.nn.ConvTranspose1d(2, 3, 3, stride=3),
                                                                    [13]),
    "conv_transpose3d_to_size": lambda lib: _transpose_to(lib, lib.nn.ConvTranspose3d(1, 2, 3, stride=2,
                                                                                      padding=1), (5, 6, 4)),
    # pooling -----------------------------------------------------------------------------------------
    "maxpool1d_ceil": lambda lib: lib.nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True),
    "maxpool1d_indices_dilated": lambda lib: lib.nn.MaxPool1d(2, dilation=2, return_indices=True),
    "avgpool1d": lambda lib: lib.nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    "avgpool1d_default": lambda lib: lib.nn.AvgPool1d(2),
    "adaptive_avgpool1d": lambda lib: lib.nn.AdaptiveAvgPool1d(3),
    "adaptive_avgpool2d_none": lambda lib: lib.nn.AdaptiveAvgPool2d((None, 2)),
    "adaptive_avgpool3d": lambda lib: lib.nn.AdaptiveAvgPool3d((2, None, 3)),
    "adaptive_avgpool3d_int": lambda lib: lib.nn.AdaptiveAvgPool3d(2),
    "adaptive_maxpool1d_indices": lambda lib: lib.nn.AdaptiveMaxPool1d(4, return_indices=True),
    "adaptive_maxpool2d_none": lambda lib: lib.nn.AdaptiveMaxPool2d((3, None)),
    "adaptive_maxpool3d_indices": lambda lib: lib.nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True),
    "adaptive_maxpool3d": lambda lib: lib.nn.AdaptiveMaxPool3d((None, 2, 4)),
    "lppool1d": lambda lib: lib.nn.LPPool1d(2, 3, stride=2),
    "lppool2d_cube": lambda lib: lib.nn.LPPool2d(3, (2, 3), stride=(1, 2), ceil_mode=True),
    "lppool2d_inf": lambda lib: lib.nn.LPPool2d(float("inf"), 2),
    "lppool3d": lambda lib: lib.nn.LPPool3d(2.0, 2),
    "maxunpool1d": lambda lib: _unpooling(lib, lib.nn.MaxPool1d(2, return_indices=True), lib.nn.MaxUnpool1d(2)),
    "maxunpool1d_output_size": lambda lib: _unpooling(lib, lib.nn.MaxPool1d(3, stride=2, return_indices=True),
                                                      lib.nn.MaxUnpool1d(3, stride=2), [10]),
    "maxunpool2d": lambda lib: _unpooling(lib, lib.nn.MaxPool2d(2, return_indices=True), lib.nn.MaxUnpool2d(2),
                                          [1, 2, 5, 5]),
    "maxunpool3d": lambda lib: _unpooling(lib, lib.nn.MaxPool3d(2, return_indices=True), lib.nn.MaxUnpool3d(2)),
    "maxunpool3d_padded": lambda lib: _unpooling(
        lib, lib.nn.MaxPool3d(3, stride=2, padding=1, return_indices=True), lib.nn.MaxUnpool3d(3, 2, 1), [5, 4, 5]),
    # padding -----------------------------------------------------------------------------------------
    "pads_1d": lambda lib: lib.nn.Sequential(
        lib.nn.ConstantPad1d((1, 2), 3.5), lib.nn.ZeroPad1d(1), lib.nn.ReflectionPad1d((2, 1)),
        lib.nn.ReplicationPad1d(2), lib.nn.CircularPad1d((1, 3))),
    "pads_2d": lambda lib: lib.nn.Sequential(
        lib.nn.ConstantPad2d((1, 0, 2, 1), -1.0), lib.nn.ZeroPad2d((0, 1, 1, 0)), lib.nn.ReflectionPad2d(1),
        lib.nn.ReplicationPad2d((2, 0, 1, 1)), lib.nn.CircularPad2d(1)),
    "pads_3d": lambda lib: lib.nn.Sequential(
        lib.nn.ConstantPad3d(1, 0.5), lib.nn.ZeroPad3d((1, 0, 0, 1, 1, 0)), lib.nn.ReflectionPad3d((1, 1, 2, 0, 1, 0)),
        lib.nn.ReplicationPad3d(1), lib.nn.CircularPad3d((0, 1, 1, 0, 2, 1))),
    "pads_negative": lambda lib: lib.nn.Sequential(lib.nn.ZeroPad2d((-1, 2, 0, -1)),
                                                   lib.nn.ConstantPad1d((-2, 1), 1.0)),
    "reflection_pad2d": lambda lib: lib.nn.ReflectionPad2d((3, 0, 1, 2)),
    "circular_pad1d": lambda lib: lib.nn.CircularPad1d(2),
    # dropout -----------------------------------------------------------------------------------------
    "dropouts": lambda lib: lib.nn.Sequential(
        lib.nn.Dropout1d(0.2), lib.nn.Dropout2d(0.3, inplace=True), lib.nn.Dropout3d(), lib.nn.AlphaDropout(0.1),
        lib.nn.FeatureAlphaDropout(0.4, inplace=True)),
    "dropouts_p0": lambda lib: lib.nn.Sequential(lib.nn.Dropout1d(0.0), lib.nn.AlphaDropout(0.0),
                                                 lib.nn.FeatureAlphaDropout(0.0)),
    "dropouts_2d_3d_p0": lambda lib: lib.nn.Sequential(lib.nn.Dropout2d(0.0), lib.nn.Dropout3d(0.0)),
    "dropouts_p1": lambda lib: lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Dropout1d(1.0)),
    "alpha_dropouts_p1": lambda lib: lib.nn.Sequential(lib.nn.AlphaDropout(1.0), lib.nn.FeatureAlphaDropout(1.0)),
    "dropout3d_p0_unbatched": lambda lib: lib.nn.Dropout3d(0.0),
    # normalization -----------------------------------------------------------------------------------
    "groupnorm": lambda lib: lib.nn.GroupNorm(2, 4),
    "groupnorm_noaffine": lambda lib: lib.nn.GroupNorm(3, 6, eps=1e-3, affine=False),
    "groupnorm_nobias": lambda lib: lib.nn.GroupNorm(1, 3, bias=False),
    "local_response_norm": lambda lib: lib.nn.LocalResponseNorm(3),
    "local_response_norm_args": lambda lib: lib.nn.LocalResponseNorm(2, alpha=0.01, beta=0.5, k=2.0),
    "rmsnorm": lambda lib: lib.nn.RMSNorm([3, 4]),
    "rmsnorm_eps_noaffine": lambda lib: lib.nn.RMSNorm(4, eps=1e-3, elementwise_affine=False),
    "batchnorm3d": lambda lib: lib.nn.BatchNorm3d(2),
    "batchnorm3d_cma_noaffine": lambda lib: lib.nn.BatchNorm3d(2, momentum=None, affine=False),
    "batchnorm3d_untracked_nobias": lambda lib: lib.nn.BatchNorm3d(3, track_running_stats=False, bias=False),
    # upsampling --------------------------------------------------------------------------------------
    "upsample_nearest": lambda lib: lib.nn.Upsample(scale_factor=2),
    "upsample_bilinear_size": lambda lib: lib.nn.Upsample(size=(5, 7), mode="bilinear"),
    "upsample_linear_aligned": lambda lib: lib.nn.Upsample(scale_factor=1.5, mode="linear", align_corners=True),
    "upsample_trilinear_tuple": lambda lib: lib.nn.Upsample(scale_factor=(2, 1, 1.5), mode="trilinear"),
    "upsample_bicubic": lambda lib: lib.nn.Upsample(size=5, mode="bicubic"),
    "upsample_nearest_recompute": lambda lib: lib.nn.Upsample(scale_factor=1.7, recompute_scale_factor=True),
    "upsampling_nearest2d": lambda lib: lib.nn.UpsamplingNearest2d(size=(4, 6)),
    "upsampling_bilinear2d": lambda lib: lib.nn.UpsamplingBilinear2d(scale_factor=2),
    # distances, Bilinear, Unflatten, ChannelShuffle --------------------------------------------------
    "cosine_similarity": lambda lib: lib.nn.CosineSimilarity(dim=2, eps=1e-6),
    "cosine_similarity_default": lambda lib: lib.nn.CosineSimilarity(),
    "pairwise_distance": lambda lib: lib.nn.PairwiseDistance(p=1.5, keepdim=True),
    "pairwise_distance_default": lambda lib: lib.nn.PairwiseDistance(),
    "bilinear": lambda lib: lib.nn.Bilinear(3, 4, 5),
    "bilinear_nobias": lambda lib: lib.nn.Bilinear(2, 3, 2, bias=False),
    "unflatten": lambda lib: lib.nn.Unflatten(1, (2, 3)),
    "unflatten_list_inferred": lambda lib: lib.nn.Unflatten(-1, [2, -1]),
    "channel_shuffle": lambda lib: lib.nn.ChannelShuffle(3),
    "channel_shuffle_1d": lambda lib: lib.nn.ChannelShuffle(2),
    # containers --------------------------------------------------------------------------------------
    "parameter_list": _parameter_list,
    "parameter_dict": _parameter_dict,
    "parameter_list_empty": lambda lib: lib.nn.ParameterList(),
    "parameter_dict_ordered": lambda lib: lib.nn.ParameterDict(
        lib.nn.ParameterDict({"b": lib.ones(2)}) | lib.nn.ParameterDict({"a": lib.zeros(2, 3)})),
}


# name -> (structure name, input shapes or spec(lib, rng) -> inputs)
FORWARDS = {
    # convolutions: batched and unbatched inputs
    "conv3d": ("conv3d", [(2, 2, 4, 5, 4)]),
    "conv3d_unbatched": ("conv3d", [(2, 3, 4, 3)]),
    "conv3d_groups_circular": ("conv3d_groups_circular", [(1, 4, 3, 4, 3)]),
    "conv3d_same_dilated": ("conv3d_same_dilated", [(2, 1, 3, 5, 2)]),
    "conv3d_reflect_valid": ("conv3d_reflect_valid", [(1, 2, 3, 3, 4)]),
    "conv_transpose1d": ("conv_transpose1d", [(2, 2, 5)]),
    "conv_transpose1d_unbatched": ("conv_transpose1d", [(2, 4)]),
    "conv_transpose2d_groups_dilated": ("conv_transpose2d_groups_dilated", [(2, 4, 4, 3)]),
    "conv_transpose2d_nobias": ("conv_transpose2d_nobias", [(1, 3, 3, 4)]),
    "conv_transpose3d": ("conv_transpose3d", [(1, 2, 2, 3, 2)]),
    "conv_transpose2d_to_size": ("conv_transpose2d_to_size", [(1, 2, 4, 4)]),
    "conv_transpose2d_to_full_size": ("conv_transpose2d_to_full_size", [(1, 2, 4, 4)]),
    "conv_transpose1d_unbatched_to_size": ("conv_transpose1d_unbatched_to_size", [(2, 4)]),
    "conv_transpose3d_to_size": ("conv_transpose3d_to_size", [(2, 1, 3, 3, 2)]),
    # pooling
    "maxpool1d_ceil": ("maxpool1d_ceil", [(2, 3, 9)]),
    "maxpool1d_indices_dilated": ("maxpool1d_indices_dilated", [(2, 7)]),
    "avgpool1d": ("avgpool1d", [(2, 3, 8)]),
    "avgpool1d_default": ("avgpool1d_default", [(3, 5)]),
    "adaptive_avgpool1d": ("adaptive_avgpool1d", [(2, 3, 7)]),
    "adaptive_avgpool2d_none": ("adaptive_avgpool2d_none", [(2, 3, 5, 4)]),
    "adaptive_avgpool3d": ("adaptive_avgpool3d", [(1, 2, 5, 4, 7)]),
    "adaptive_avgpool3d_int_unbatched": ("adaptive_avgpool3d_int", [(2, 3, 4, 5)]),
    "adaptive_maxpool1d_indices": ("adaptive_maxpool1d_indices", [(2, 3, 10)]),
    "adaptive_maxpool1d_indices_unbatched": ("adaptive_maxpool1d_indices", [(3, 6)]),
    "adaptive_maxpool2d_none": ("adaptive_maxpool2d_none", [(1, 2, 7, 5)]),
    "adaptive_maxpool3d_indices": ("adaptive_maxpool3d_indices", [(2, 2, 5, 7, 4)]),
    "adaptive_maxpool3d_indices_upsampling": ("adaptive_maxpool3d_indices", [(1, 1, 1, 2, 3)]),
    "adaptive_maxpool3d_unbatched": ("adaptive_maxpool3d", [(2, 3, 4, 6)]),
    "lppool1d": ("lppool1d", [(2, 3, 9)]),
    "lppool2d_cube": ("lppool2d_cube", _positive((1, 2, 5, 7))),
    "lppool2d_inf": ("lppool2d_inf", [(2, 2, 4, 5)]),
    "lppool3d": ("lppool3d", [(1, 2, 4, 4, 5)]),
    "maxunpool1d": ("maxunpool1d", [(2, 3, 8)]),
    "maxunpool1d_output_size": ("maxunpool1d_output_size", [(2, 2, 9)]),
    "maxunpool2d": ("maxunpool2d", [(1, 2, 5, 5)]),
    "maxunpool3d": ("maxunpool3d", [(1, 2, 4, 4, 6)]),
    "maxunpool3d_unbatched": ("maxunpool3d", [(2, 4, 2, 4)]),
    "maxunpool3d_padded": ("maxunpool3d_padded", [(1, 1, 5, 4, 5)]),
    # padding
    "pads_1d": ("pads_1d", [(2, 3, 4)]),
    "pads_1d_unbatched": ("pads_1d", [(3, 4)]),
    "pads_2d": ("pads_2d", [(1, 2, 3, 4)]),
    "pads_3d": ("pads_3d", [(1, 1, 3, 3, 4)]),
    "pads_3d_unbatched": ("pads_3d", [(2, 3, 3, 4)]),
    "pads_negative": ("pads_negative", [(2, 3, 4)]),
    "reflection_pad2d_unbatched": ("reflection_pad2d", [(2, 4, 5)]),
    "circular_pad1d": ("circular_pad1d", [(3, 5)]),
    # dropout: p = 0 (the identity) and p = 1 (zeros) in training mode, the identity in eval mode
    "dropouts_p0": ("dropouts_p0", [(2, 3, 4)]),
    "dropouts_2d_3d_p0": ("dropouts_2d_3d_p0", [(2, 3, 4, 2)]),
    "dropouts_p1": ("dropouts_p1", [(3, 4)]),
    "dropouts_p1_batched": ("dropouts_p1", [(2, 3, 4)]),
    "alpha_dropouts_p1": ("alpha_dropouts_p1", [(2, 3, 4)]),
    "dropout3d_p0_unbatched": ("dropout3d_p0_unbatched", [(2, 3, 2, 2)]),
    # normalization
    "groupnorm": ("groupnorm", [(3, 4, 5)]),
    "groupnorm_noaffine": ("groupnorm_noaffine", [(2, 6, 2, 2)]),
    "groupnorm_nobias": ("groupnorm_nobias", [(2, 3, 4)]),
    "local_response_norm": ("local_response_norm", [(2, 5, 4)]),
    "local_response_norm_4d": ("local_response_norm_args", [(2, 6, 3, 3)]),
    "local_response_norm_5d": ("local_response_norm", [(1, 4, 2, 2, 2)]),
    "rmsnorm": ("rmsnorm", [(2, 3, 4)]),
    "rmsnorm_eps_noaffine": ("rmsnorm_eps_noaffine", [(3, 4)]),
    "batchnorm3d": ("batchnorm3d", [(3, 2, 2, 3, 2)]),
    "batchnorm3d_cma_noaffine": ("batchnorm3d_cma_noaffine", [(2, 2, 2, 2, 3)]),
    "batchnorm3d_untracked_nobias": ("batchnorm3d_untracked_nobias", [(2, 3, 2, 2, 2)]),
    # upsampling
    "upsample_nearest": ("upsample_nearest", [(1, 2, 3, 3)]),
    "upsample_bilinear_size": ("upsample_bilinear_size", [(1, 2, 3, 4)]),
    "upsample_linear_aligned": ("upsample_linear_aligned", [(2, 2, 4)]),
    "upsample_trilinear_tuple": ("upsample_trilinear_tuple", [(1, 1, 2, 3, 2)]),
    "upsample_bicubic": ("upsample_bicubic", [(1, 1, 3, 4)]),
    "upsample_nearest_recompute": ("upsample_nearest_recompute", [(1, 1, 3, 4)]),
    "upsampling_nearest2d": ("upsampling_nearest2d", [(1, 2, 2, 3)]),
    "upsampling_bilinear2d": ("upsampling_bilinear2d", [(1, 2, 3, 2)]),
    # distances, Bilinear, Unflatten, ChannelShuffle
    "cosine_similarity": ("cosine_similarity", [(2, 3, 4), (2, 3, 4)]),
    "cosine_similarity_broadcast": ("cosine_similarity_default", [(3, 5), (1, 5)]),
    "pairwise_distance": ("pairwise_distance", [(4, 5), (4, 5)]),
    "pairwise_distance_default": ("pairwise_distance_default", [(3, 4), (3, 4)]),
    "bilinear": ("bilinear", [(2, 3), (2, 4)]),
    "bilinear_unbatched": ("bilinear", [(3,), (4,)]),
    "bilinear_nobias_batched": ("bilinear_nobias", [(2, 4, 2), (2, 4, 3)]),
    "unflatten": ("unflatten", [(4, 6)]),
    "unflatten_list_inferred": ("unflatten_list_inferred", [(2, 3, 8)]),
    "channel_shuffle": ("channel_shuffle", [(2, 6, 2, 2)]),
    "channel_shuffle_1d": ("channel_shuffle_1d", [(1, 4, 5)]),
    # containers
    "parameter_list": ("parameter_list", [(2, 3)]),
    "parameter_dict": ("parameter_dict", [(3, 4)]),
}
