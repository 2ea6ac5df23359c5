"""torch.nn.modules: `Module` and the layers built on it, one family per file as PyTorch
files them (linear.py, conv.py, sparse.py, normalization.py, batchnorm.py, dropout.py,
activation.py, loss.py, container.py, flatten.py, pooling.py, instancenorm.py)."""
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softmax2d, Softmin,
                         Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss,
                   SmoothL1Loss)
from .module import Module
from .normalization import LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, AvgPool3d, MaxPool2d
from .sparse import Embedding

__all__ = ["Module", "Identity", "Linear", "Conv1d", "Conv2d", "Embedding", "LayerNorm", "BatchNorm1d",
           "BatchNorm2d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Dropout", "Flatten", "MaxPool2d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool2d", "Sequential",
           "ModuleList", "ModuleDict", "ReLU", "LeakyReLU", "GELU", "SiLU", "ELU", "Tanh", "Sigmoid", "Softplus",
           "Mish", "Softmax", "LogSoftmax", "ReLU6", "PReLU", "SELU", "CELU", "GLU", "Hardtanh", "Hardsigmoid",
           "Hardswish", "LogSigmoid", "Softsign", "Tanhshrink", "Softmin", "Softmax2d", "Threshold", "Hardshrink", "Softshrink", "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss"]
