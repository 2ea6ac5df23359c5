"""agrad.profiler: torch.profiler (PyTorch 2.13's torch/profiler/__init__.py), the namespace code
profiles with today.

    with agrad.profiler.profile(schedule=agrad.profiler.schedule(wait=1, warmup=1, active=2),
                                on_trace_ready=agrad.profiler.tensorboard_trace_handler("log")) as p:
        for batch in data:
            train_step(batch)
            p.step()

It is a schedule over agrad.autograd.profiler.profile, which does all the recording (profiler.py
says how); agrad has no Kineto, no ITT and no NVTX, and `supported_activities()` is the CPU.
Imported on first use of `agrad.profiler`, never by `import agrad`.
"""
from ..autograd import ProfilerActivity, _supported_activities, kineto_available  # noqa: F401
from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType
from . import itt
from .profiler import (_KinetoProfile, ProfilerAction, profile, schedule, supported_activities,  # noqa: F401
                       tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function", "itt"]
