"""torch.nn.modules: `Module` and the layers built on it, one family per file as PyTorch
files them (linear.py, conv.py, sparse.py, normalization.py, batchnorm.py, dropout.py,
activation.py, loss.py, container.py, flatten.py, pooling.py, instancenorm.py, fold.py,
pixelshuffle.py, multihead_attention.py, transformer.py, padding.py, upsampling.py, distance.py,
channelshuffle.py, adaptive.py; lazy.py's LazyModuleMixin under the lazy layers)."""
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softmax2d, Softmin,
                         RReLU, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
                        SyncBatchNorm)
from .channelshuffle import ChannelShuffle
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d, LazyConv2d,
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d)
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
                           LazyInstanceNorm3d)
from .lazy import LazyModuleMixin  # noqa: F401 — torch.nn.modules has it, torch.nn does not
from .linear import Bilinear, Identity, LazyLinear, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss, GaussianNLLLoss,
                   HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, LinearCrossEntropyLoss, MarginRankingLoss,
                   MSELoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, NLLLoss2d,
                   PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .module import Module
from .multihead_attention import MultiheadAttention
from .normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, FractionalMaxPool2d, FractionalMaxPool3d,
                      LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d,
                      MaxUnpool3d)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Module", "Identity", "Linear", "Conv1d", "Conv2d", "Embedding", "LayerNorm", "BatchNorm1d", "BatchNorm2d",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Dropout", "Flatten", "Fold", "Unfold",
           "PixelShuffle", "PixelUnshuffle", "MaxPool2d", "MaxPool3d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool2d",
           "Sequential", "ModuleList", "ModuleDict", "ReLU", "LeakyReLU", "GELU", "SiLU", "ELU", "Tanh", "Sigmoid",
           "Softplus", "Mish", "Softmax", "LogSoftmax", "ReLU6", "PReLU", "SELU", "CELU", "GLU", "Hardtanh",
           "Hardsigmoid", "Hardswish", "LogSigmoid", "Softsign", "Tanhshrink", "Softmin", "Softmax2d", "Threshold",
           "Hardshrink", "Softshrink", "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "MultiheadAttention", "Transformer",
           "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer", "RNNBase",
           "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
           # the layers ported with torch.nn's full set (conv, pooling, padding, dropout, normalization …)
           "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d", "AvgPool1d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout", "GroupNorm", "LocalResponseNorm", "RMSNorm", "BatchNorm3d", "Upsample",
           "UpsamplingNearest2d", "UpsamplingBilinear2d", "CosineSimilarity", "PairwiseDistance", "Bilinear",
           "Unflatten", "ParameterList", "ParameterDict", "ChannelShuffle",
           # the losses ported with torch.nn's full set, EmbeddingBag and RReLU
           "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
           "SoftMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss", "EmbeddingBag", "RReLU",
           # the lazy layers, the adaptive softmax, fractional max pooling and CrossMapLRN2d
           "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d", "AdaptiveLogSoftmaxWithLoss", "FractionalMaxPool2d",
           "FractionalMaxPool3d", "CrossMapLRN2d",
           # PyTorch 2.13's LinearCrossEntropyLoss, SyncBatchNorm (one process) and the deprecated Container
           "LinearCrossEntropyLoss", "SyncBatchNorm", "Container"]
