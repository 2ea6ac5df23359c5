"""torch.nn scenarios of one family, merged into nn_scenarios.py (FAMILIES): same format as its
STRUCTURES (name -> builder(lib) -> module) and FORWARDS (name -> (structure name, input shapes, or
a callable spec(lib, rng) -> inputs)).

This family: the loss layers beyond the common ones (PoissonNLLLoss, GaussianNLLLoss, the margin
losses, CTCLoss, the deprecated NLLLoss2d and size_average/reduce), EmbeddingBag and RReLU. A
forward's float inputs get requires_grad, so a target that PyTorch refuses to differentiate
(soft_margin_loss's) is given as integers; RReLU draws its slopes in training, so its forward
runs a layer that keeps it in eval mode (its training statistics are tests/engine/test_nn_losses.py's)."""
from __future__ import annotations

import numpy as np


def _floats(lib, rng, *shape, low=None, high=None):
    values = rng.normal(size=shape) if low is None else rng.uniform(low, high, size=shape)
    return lib.tensor(values.astype(np.float32).tolist(), dtype=lib.float32)


def _ints(lib, values):
    return lib.tensor(np.asarray(values).tolist(), dtype=lib.int64)


def _signs(lib, rng, *shape, dtype=None):
    values = np.where(rng.uniform(size=shape) < 0.5, -1, 1)
    return lib.tensor(values.tolist(), dtype=dtype or lib.float32)


def _log_probs(lib, rng, *shape, dim=-1):
    x = rng.normal(size=shape)
    x = x - np.log(np.exp(x).sum(dim, keepdims=True))
    return lib.tensor(x.astype(np.float32).tolist(), dtype=lib.float32)


def _rrelu_eval(lib):
    class EvalRReLU(lib.nn.Module):
        """RReLU kept in eval mode (its mean slope): training draws random slopes."""

        def __init__(self):
            super().__init__()
            self.act = lib.nn.RReLU(0.1, 0.3)

        def forward(self, x):
            self.act.eval()
            return self.act(x)

    return EvalRReLU()


STRUCTURES: dict = {
    "poisson_nll": lambda lib: lib.nn.PoissonNLLLoss(),
    "poisson_nll_full": lambda lib: lib.nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-6, reduction="sum"),
    "poisson_nll_legacy": lambda lib: lib.nn.PoissonNLLLoss(True, False, False, 1e-8, True),
    "gaussian_nll": lambda lib: lib.nn.GaussianNLLLoss(full=True, eps=1e-3),
    "hinge_embedding": lambda lib: lib.nn.HingeEmbeddingLoss(margin=0.8, reduction="none"),
    "multilabel_margin": lambda lib: lib.nn.MultiLabelMarginLoss(),
    "soft_margin": lambda lib: lib.nn.SoftMarginLoss(reduction="sum"),
    "multilabel_soft_margin": lambda lib: lib.nn.MultiLabelSoftMarginLoss(weight=lib.tensor([0.5, 1.0, 2.0, 1.5])),
    "cosine_embedding": lambda lib: lib.nn.CosineEmbeddingLoss(margin=0.2),
    "margin_ranking": lambda lib: lib.nn.MarginRankingLoss(margin=0.1, reduction="none"),
    "multi_margin": lambda lib: lib.nn.MultiMarginLoss(p=2, margin=0.7, weight=lib.tensor([1.0, 0.5, 2.0, 1.2, 0.8])),
    "multi_margin_legacy": lambda lib: lib.nn.MultiMarginLoss(1, 1.0, None, None, False),
    "triplet_margin": lambda lib: lib.nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True),
    "triplet_distance": lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True),
    "triplet_distance_cosine": lambda lib: lib.nn.TripletMarginWithDistanceLoss(
        distance_function=lib.nn.CosineSimilarity(), margin=1.5, reduction="sum"),
    "ctc": lambda lib: lib.nn.CTCLoss(blank=1, zero_infinity=True),
    "ctc_sum": lambda lib: lib.nn.CTCLoss(reduction="sum"),
    "nll2d": lambda lib: lib.nn.NLLLoss2d(ignore_index=1),
    "embedding_bag": lambda lib: lib.nn.EmbeddingBag(10, 3, padding_idx=2),
    "embedding_bag_sum": lambda lib: lib.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True),
    "embedding_bag_max_norm": lambda lib: lib.nn.EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.5, mode="max"),
    "embedding_bag_freq": lambda lib: lib.nn.EmbeddingBag(8, 2, mode="sum", scale_grad_by_freq=True, padding_idx=-1),
    "embedding_bag_pretrained": lambda lib: lib.nn.EmbeddingBag.from_pretrained(
        lib.tensor([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5], [1.0, 1.0]]), freeze=False, mode="sum", padding_idx=0),
    "rrelu": lambda lib: lib.nn.RReLU(0.2, 0.4, inplace=True),
    "rrelu_eval": _rrelu_eval,
}

FORWARDS: dict = {
    "poisson_nll": ("poisson_nll", lambda lib, rng: [_floats(lib, rng, 3, 4), _floats(lib, rng, 3, 4, low=0, high=4)]),
    "poisson_nll_full": ("poisson_nll_full", lambda lib, rng: [_floats(lib, rng, 3, 4, low=0.1, high=3),
                                                               _floats(lib, rng, 3, 4, low=0, high=5)]),
    "poisson_nll_legacy": ("poisson_nll_legacy", lambda lib, rng: [_floats(lib, rng, 5),
                                                                   _floats(lib, rng, 5, low=0, high=3)]),
    "gaussian_nll": ("gaussian_nll", lambda lib, rng: [_floats(lib, rng, 4, 3), _floats(lib, rng, 4, 3),
                                                       _floats(lib, rng, 4, 1, low=0.0005, high=2)]),
    "gaussian_nll_short_var": ("gaussian_nll", lambda lib, rng: [_floats(lib, rng, 2, 3), _floats(lib, rng, 2, 3),
                                                                 _floats(lib, rng, 2, low=0.1, high=2)]),
    "hinge_embedding": ("hinge_embedding", lambda lib, rng: [_floats(lib, rng, 3, 4),
                                                             _signs(lib, rng, 3, 4, dtype=lib.int64)]),
    "multilabel_margin": ("multilabel_margin", lambda lib, rng: [
        _floats(lib, rng, 3, 5), _ints(lib, [[4, 1, -1, 0, 0], [0, 1, 2, 3, 4], [2, 2, 3, -1, 1]])]),
    "soft_margin": ("soft_margin", lambda lib, rng: [_floats(lib, rng, 3, 4),
                                                     _signs(lib, rng, 3, 4, dtype=lib.int64)]),
    "multilabel_soft_margin": ("multilabel_soft_margin", lambda lib, rng: [
        _floats(lib, rng, 3, 4), _floats(lib, rng, 3, 4, low=0, high=1)]),
    "cosine_embedding": ("cosine_embedding", lambda lib, rng: [_floats(lib, rng, 4, 3), _floats(lib, rng, 4, 3),
                                                               _signs(lib, rng, 4)]),
    "margin_ranking": ("margin_ranking", lambda lib, rng: [_floats(lib, rng, 5), _floats(lib, rng, 5),
                                                           _signs(lib, rng, 5)]),
    "multi_margin": ("multi_margin", lambda lib, rng: [_floats(lib, rng, 4, 5), _ints(lib, rng.integers(0, 5, 4))]),
    "multi_margin_legacy": ("multi_margin_legacy", lambda lib, rng: [_floats(lib, rng, 3, 4),
                                                                     _ints(lib, rng.integers(0, 4, 3))]),
    "triplet_margin": ("triplet_margin", [(4, 3), (4, 3), (4, 3)]),
    "triplet_distance": ("triplet_distance", [(4, 3), (4, 3), (4, 3)]),
    "triplet_distance_cosine": ("triplet_distance_cosine", [(4, 3), (4, 3), (4, 3)]),
    "ctc": ("ctc", lambda lib, rng: [_log_probs(lib, rng, 6, 3, 4), _ints(lib, [[2, 3, 3], [0, 2, 0], [3, 3, 3]]),
                                     _ints(lib, [6, 5, 2]), _ints(lib, [3, 2, 3])]),
    "ctc_concatenated": ("ctc_sum", lambda lib, rng: [_log_probs(lib, rng, 5, 2, 4), _ints(lib, [1, 2, 2, 3]),
                                                      _ints(lib, [5, 4]), _ints(lib, [3, 1])]),
    "ctc_unbatched": ("ctc_sum", lambda lib, rng: [_log_probs(lib, rng, 5, 4), _ints(lib, [3, 1]), _ints(lib, 5),
                                                   _ints(lib, 2)]),
    "nll2d": ("nll2d", lambda lib, rng: [_log_probs(lib, rng, 2, 3, 2, 3, dim=1),
                                         _ints(lib, rng.integers(0, 3, (2, 2, 3)))]),
    "embedding_bag": ("embedding_bag", lambda lib, rng: [_ints(lib, [1, 2, 2, 7, 0, 9, 4, 2]),
                                                         _ints(lib, [0, 3, 3, 5])]),
    "embedding_bag_2d": ("embedding_bag", lambda lib, rng: [_ints(lib, rng.integers(0, 10, (3, 4)))]),
    "embedding_bag_sum": ("embedding_bag_sum", lambda lib, rng: [
        _ints(lib, [3, 1, 4, 1, 5, 9, 2]), _ints(lib, [0, 2, 2, 7]), _floats(lib, rng, 7)]),
    "embedding_bag_max_norm": ("embedding_bag_max_norm", lambda lib, rng: [_ints(lib, rng.integers(0, 10, (2, 3)))]),
    "embedding_bag_freq": ("embedding_bag_freq", lambda lib, rng: [_ints(lib, [1, 1, 3, 7, 2, 1, 5]),
                                                                   _ints(lib, [0, 4])]),
    "embedding_bag_pretrained": ("embedding_bag_pretrained", lambda lib, rng: [
        _ints(lib, [1, 0, 3, 2, 2, 0]), _ints(lib, [0, 3]), _floats(lib, rng, 6)]),
    "rrelu_eval": ("rrelu_eval", [(3, 4)]),
}
