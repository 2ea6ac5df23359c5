"""agrad.testing._internal, as torch.testing._internal: helpers that PyTorch's own tests import (the tensor
subclasses of logging_tensor.py and two_tensor.py), so those tests run against agrad."""
