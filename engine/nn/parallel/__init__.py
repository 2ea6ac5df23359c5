"""agrad.nn.parallel: torch.nn.parallel's DataParallel and data_parallel (data_parallel.py)."""
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
