"""Write the `expect:` block of graphs/examples/resnet_block.yaml from PyTorch.

    /tmp/torchvenv/bin/python tests/reference/make_examples_resnet.py

The graph is loaded and run by agrad only to read its seeded inputs; PyTorch then computes
the block with torch.nn.functional's ops in float64, on fresh running-stat buffers (zeros
and ones, as the graph's inits — agrad's own were updated by its run), and the file's
`expect:` block (the last lines of the file) is rewritten with the outputs, the updated
running statistics and the gradients. Deterministic: running it twice writes the same bytes.
"""
from __future__ import annotations

import sys

import torch
import torch.nn.functional as F

from make_examples_vae_lstm import EXAMPLES, _agrad_values, _leaf, expect_block, write

PARAMS = ("W1", "gamma1", "beta1", "W2", "gamma2", "beta2", "W_short", "W_fc", "b_fc")


def resnet_block(values):
    p = {n: _leaf(values, n, True) for n in PARAMS}
    x, target = _leaf(values, "x"), torch.tensor(values["target"])
    stats = {f"running_{kind}{i}": (torch.zeros if kind == "mean" else torch.ones)(4, dtype=torch.float64)
             for i in (1, 2) for kind in ("mean", "var")}
    h1 = F.relu(F.batch_norm(F.conv2d(x, p["W1"], stride=2, padding=1), stats["running_mean1"],
                             stats["running_var1"], p["gamma1"], p["beta1"], training=True))
    h2 = F.batch_norm(F.conv2d(h1, p["W2"], padding=1), stats["running_mean2"], stats["running_var2"],
                      p["gamma2"], p["beta2"], training=True)
    block = F.relu(h2 + F.conv2d(x, p["W_short"], stride=2))
    logits = F.linear(torch.flatten(F.adaptive_avg_pool2d(block, 1), 1), p["W_fc"], p["b_fc"])
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return {"logits": logits, "loss": loss, **stats}, p


def main() -> int:
    path = EXAMPLES / "resnet_block.yaml"
    text = path.read_text()
    for i in (1, 2):    # the buffers PyTorch starts from are the graph's inits
        assert f"running_mean{i}: {{shape: [4], init: zeros}}" in text and \
            f"running_var{i}: {{shape: [4], init: ones}}" in text
    outputs, params = resnet_block(_agrad_values(path))
    write(path, expect_block(outputs, params))
    print(f"wrote the expect block of {path.name} (torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    sys.exit(main())
