"""agrad.optim: torch.optim's optimizers and learning-rate schedulers.

    opt = agrad.optim.Adam([W, b], lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()
"""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
