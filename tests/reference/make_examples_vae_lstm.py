"""Write the `expect:` blocks of graphs/examples/vae.yaml and lstm.yaml from PyTorch.

    /tmp/torchvenv/bin/python tests/reference/make_examples_vae_lstm.py

Each graph is loaded and run by agrad only to read its inputs (the seeded inits) and, for
the VAE, the seeded normal `eps` that randn_like drew; PyTorch then computes the model on
those numbers in float64 — the VAE with torch.nn.functional's ops, the LSTM with
torch.nn.LSTMCell (an implementation independent of the graph's spelled-out gates) — and
the file's `expect:` block (the last lines of the file) is rewritten with its outputs and
gradients. Deterministic: running it twice writes the same bytes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import agrad.graphs

torch.set_default_dtype(torch.float64)
EXAMPLES = Path(__file__).resolve().parents[2] / "graphs" / "examples"


def _agrad_values(path: Path) -> dict[str, np.ndarray]:
    run = agrad.graphs.load(path).run()
    return {name: np.asarray(value.detach()) for name, value in run.values.items()
            if isinstance(value, agrad.Tensor)}


def _leaf(values, name, requires_grad=False):
    return torch.tensor(values[name], requires_grad=requires_grad)


def vae(values):
    params = {n: _leaf(values, n, True) for n in ("W_enc", "b_enc", "W_mu", "b_mu", "W_logvar", "b_logvar",
                                                  "W_dec", "b_dec", "W_out", "b_out")}
    p = params
    x, eps = _leaf(values, "x"), _leaf(values, "eps")
    h = torch.tanh(x @ p["W_enc"] + p["b_enc"])
    mu = h @ p["W_mu"] + p["b_mu"]
    logvar = h @ p["W_logvar"] + p["b_logvar"]
    z = mu + torch.exp(0.5 * logvar) * eps
    x_hat = torch.sigmoid(torch.tanh(z @ p["W_dec"] + p["b_dec"]) @ p["W_out"] + p["b_out"])
    recon = F.binary_cross_entropy(x_hat, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = (recon + kl) / x.shape[0]
    loss.backward()
    return {"eps": eps, "recon": recon, "kl": kl, "loss": loss}, params


def lstm(values):
    params = {n: _leaf(values, n, True) for n in ("W_ih", "W_hh", "b", "W_out")}
    xs, ys = _leaf(values, "xs"), _leaf(values, "ys")
    cell = torch.nn.LSTMCell(3, 4)
    with torch.no_grad():
        cell.bias_hh.zero_()
    # the cell's parameters are functions of the graph's leaves, so their gradients reach the leaves
    del cell.weight_ih, cell.weight_hh, cell.bias_ih
    cell.weight_ih, cell.weight_hh, cell.bias_ih = params["W_ih"].T, params["W_hh"].T, params["b"]
    h, c = _leaf(values, "h0"), _leaf(values, "c0")
    hs = []
    for step in xs:
        h, c = cell(step, (h, c))
        hs.append(h)
    loss = F.mse_loss(torch.stack(hs) @ params["W_out"], ys)
    loss.backward()
    return {"h8": h, "c8": c, "loss": loss}, params


def _fmt(t: torch.Tensor) -> str:
    return repr(t.detach().tolist()) if t.dim() else repr(t.item())


def expect_block(outputs, params) -> str:
    lines = ["expect:", "  atol: 1.0e-10", "  rtol: 1.0e-8", "  outputs:"]
    lines += [f"    {name}: {_fmt(value)}" for name, value in outputs.items()]
    lines.append("  grads:")
    lines += [f"    {name}: {_fmt(leaf.grad)}" for name, leaf in params.items()]
    return "\n".join(lines) + "\n"


def write(path: Path, block: str) -> None:
    text = path.read_text()
    head = text[:text.index("\nexpect:") + 1] if "\nexpect:" in text else text
    path.write_text(head.rstrip("\n") + "\n\n" + block)


def regenerate(models) -> int:
    """For each (example name, model): run agrad for the inputs, PyTorch for the expect block."""
    for name, model in models:
        path = EXAMPLES / f"{name}.yaml"
        outputs, params = model(_agrad_values(path))
        write(path, expect_block(outputs, params))
        print(f"wrote the expect block of {path.name} (torch {torch.__version__})")
    return 0


def main() -> int:
    return regenerate((("vae", vae), ("lstm", lstm)))


if __name__ == "__main__":
    sys.exit(main())
