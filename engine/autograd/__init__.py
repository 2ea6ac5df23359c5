"""agrad.autograd: the Node/Edge graph, the engine, and the functions users call."""
from . import graph, inference_tensors, profiler  # noqa: F401 — inference_tensors registers its fallback
from . import forward_ad  # noqa: F401 — registers the ForwardAD key's fallback
# torch.autograd's names for its profiler's
from .profiler import ProfilerActivity, _profiler_enabled, _supported_activities, kineto_available  # noqa: F401
from .. import grad_mode  # noqa: F401 — agrad.autograd.grad_mode, as torch.autograd.grad_mode
from ..grad_mode import (_force_original_view_tracking, enable_grad, enforce_grad_layout_policy, inference_mode,
                         is_multithreading_enabled, is_view_replay_enabled, no_grad, set_grad_enabled,
                         set_multithreading_enabled)
from .anomaly_mode import (AnomalyError, detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                           set_detect_anomaly)
from .edge import Edge
from .engine import Engine, GraphTask, NodeTask, ReadyQueue, current_graph_task_id as _current_graph_task_id
from .engine import get_default_engine
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .backward_and_grad import backward, grad
from . import functional
from .gradcheck import gradcheck, gradgradcheck
from . import input_buffer
from .node import AccumulateGrad, GraphRoot, Node
from .saved_variable import SavedTensor, SavedVariable
from .variable import Variable
from .._tensor import Tensor as _Tensor


def _is_checkpoint_valid() -> bool:
    """torch.autograd._is_checkpoint_valid: whether a reentrant checkpoint may run its backward here."""
    return Engine.is_checkpoint_valid()


def is_tensor_like(inp) -> bool:
    """torch.overrides.is_tensor_like, which torch.autograd re-exports: whether `inp` is a Tensor (a
    subclass's instance too: torch.Tensor's subclasses inherit its __torch_function__) or an object
    with a __torch_function__ of its own."""
    return isinstance(inp, _Tensor) or hasattr(inp, "__torch_function__")


__all__ = ["Node", "Edge", "AccumulateGrad", "GraphRoot", "Engine", "GraphTask", "NodeTask", "ReadyQueue",
           "input_buffer", "SavedTensor", "SavedVariable", "Variable", "Function", "FunctionCtx", "InplaceFunction",
           "NestedIOFunction", "once_differentiable", "backward", "grad", "forward_ad", "functional", "gradcheck",
           "gradgradcheck",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "AnomalyError",
           "get_default_engine",
           "graph", "profiler", "profiler_util", "kineto_available", "ProfilerActivity", "grad_mode", "no_grad",
           "enable_grad",
           "set_grad_enabled", "inference_mode", "set_multithreading_enabled", "is_multithreading_enabled",
           "is_view_replay_enabled", "enforce_grad_layout_policy", "is_tensor_like"]


def __getattr__(name):
    # agrad.autograd.profiler_util (torch.autograd.profiler_util), imported on first use: see profiler.py;
    # DeviceType, the profiler events' device enum, is torch.autograd's name for its class
    if name in ("profiler_util", "DeviceType"):
        import importlib     # (not `from . import`, which would ask this __getattr__ again)
        module = importlib.import_module(f"{__name__}.profiler_util")
        return module if name == "profiler_util" else module.DeviceType
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
