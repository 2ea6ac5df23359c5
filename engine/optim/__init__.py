"""agrad.optim: torch.optim's optimizers and learning-rate schedulers.

    opt = agrad.optim.Adam([W, b], lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()

SparseAdam is left out: agrad has no sparse tensors. swa_utils sits above agrad.nn (its
AveragedModel is a Module), so it is imported on first use, as agrad's own submodules are.
"""
import importlib

from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
           "Rprop", "ASGD", "LBFGS", "Adafactor", "Muon", "lr_scheduler",
           "swa_utils"]


def __getattr__(name: str):
    if name == "swa_utils":
        return importlib.import_module(f"{__name__}.{name}")
    if name == "SparseAdam":
        raise AttributeError("agrad.optim has no SparseAdam: it updates sparse gradients, and agrad has no sparse "
                             "tensors")
    raise AttributeError(f"module 'agrad.optim' has no attribute '{name}'")
