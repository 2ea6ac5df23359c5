"""torch.func.replace_all_batch_norm_modules_ (PyTorch 2.13's torch/_functorch/batch_norm_replacement.py):
BatchNorm modules that stop tracking running statistics, so that vmap over a model in training mode
does not write per-sample statistics into one shared buffer (PyTorch refuses that write; agrad's vmap,
a loop, would make it once per sample)."""
from __future__ import annotations

from ..nn.modules.batchnorm import _BatchNorm

__all__ = ["replace_all_batch_norm_modules_"]


def _batch_norm_without_running_stats(module) -> None:
    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root):
    """Every BatchNorm module in root (root included), in place, without running statistics: it then
    normalizes with the batch's own statistics in eval mode too. Returns root."""
    _batch_norm_without_running_stats(root)
    for obj in root.modules():
        _batch_norm_without_running_stats(obj)
    return root
