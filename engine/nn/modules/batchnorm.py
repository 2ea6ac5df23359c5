"""torch.nn.BatchNorm1d, BatchNorm2d and BatchNorm3d (torch/nn/modules/batchnorm.py): weight ones, bias
zeros, and three buffers — running_mean (zeros), running_var (ones) and
num_batches_tracked (an int64 0) — which F.batch_norm updates in training mode and uses
in eval mode. momentum=None averages over all batches seen (1 / num_batches_tracked).
LazyBatchNorm1d/2d/3d take num_features from the first input's dim 1 (lazy.py).

SyncBatchNorm synchronizes the batch statistics across the processes of a torch.distributed group.
agrad has no process groups, so distributed is never initialized, and PyTorch's SyncBatchNorm then
normalizes each batch by itself: a batch norm over any (N, C, +) input."""
from __future__ import annotations

from ... import dtypes
from .. import functional as F, init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


class _BatchNorm(Module):
    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        import agrad
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(agrad.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(agrad.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", agrad.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", agrad.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", agrad.tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        import agrad
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # NOTE: checkpoints of version 1 have no num_batches_tracked: keep the module's
            num_batches_tracked_key = prefix + "num_batches_tracked"
            if num_batches_tracked_key not in state_dict:
                state_dict[num_batches_tracked_key] = (self.num_batches_tracked
                                                       if self.num_batches_tracked is not None
                                                       else agrad.tensor(0, dtype=dtypes.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
                if self.momentum is None:       # cumulative moving average
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:                           # exponential moving average
                    exponential_average_factor = self.momentum
        bn_training = True if self.training else (self.running_mean is None) and (self.running_var is None)
        # NOTE: in training without tracked statistics, none are passed, so none are updated
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias, bn_training,
                            exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    """The lazy batch and instance norms: the regular class built with no features, no affine
    parameters and no statistics, then given uninitialized ones (the int64 num_batches_tracked is
    made at once, as in PyTorch)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True) -> None:
        import agrad
        # NOTE: affine, bias and track_running_stats False: no tensors that would be replaced at once
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = agrad.tensor(0, dtype=dtypes.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                if not isinstance(self.weight, UninitializedParameter):
                    raise AssertionError("self.weight must be an UninitializedParameter")
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    if not isinstance(self.bias, UninitializedParameter):
                        raise AssertionError("self.bias must be an UninitializedParameter")
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class SyncBatchNorm(_BatchNorm):
    """torch.nn.SyncBatchNorm on one process: `process_group` is kept; the statistics are the batch's own
    (PyTorch takes F.batch_norm's path whenever torch.distributed is not initialized)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with every BatchNorm*D (lazy ones included, not the instance norms) replaced by a
        SyncBatchNorm holding the same parameters and buffers; a BatchNorm itself is returned converted."""
        module_output = module
        # NOTE: torch's _BatchNorm subclasses; agrad's instance norms derive from _BatchNorm too, so by name
        if isinstance(module, (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d,
                               LazyBatchNorm3d, SyncBatchNorm)):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                import agrad
                with agrad.no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
