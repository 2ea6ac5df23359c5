"""What the families of torch.nn scenarios (nn_*_scenarios.py) build their modules and inputs with."""
from __future__ import annotations

import numpy as np


def calling(lib, module, call):
    """module inside a Module whose forward(*inputs) is call(lib, module, *inputs): a module called with
    masks, keywords or non-tensor arguments (an LSTM's (h0, c0)) as a user calls it, from tensor inputs."""
    class Calling(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = module

        def forward(self, *inputs):
            return call(lib, self.inner, *inputs)

    return Calling()


def normal(lib, rng, *shape):
    """A float32 tensor of standard normals from `rng`."""
    return lib.tensor(rng.normal(size=shape).astype(np.float32).tolist(), dtype=lib.float32)
