"""Write graphs/examples/gnn_edges.npy and the `expect:` blocks of gpt_block.yaml and
gnn_layer.yaml from PyTorch.

    /tmp/torchvenv/bin/python tests/reference/make_examples_gpt_gnn.py

Each graph is loaded and run by agrad only to read its inputs (the seeded inits and the
edge list); PyTorch then computes the model on those numbers in float64 with
torch.nn.functional — the GPT block's two layers both through
F.scaled_dot_product_attention(is_causal=True) (the graph spells layer 2 out with
masked_fill and softmax), the GNN with index_select/index_add/scatter_add/gather — and
the file's `expect:` block (the last lines of the file) is rewritten with its outputs
and gradients. Deterministic: running it twice writes the same bytes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_examples_vae_lstm import _agrad_values, _leaf, expect_block, write  # noqa: E402

torch.set_default_dtype(torch.float64)
EXAMPLES = Path(__file__).resolve().parents[2] / "graphs" / "examples"
EDGES = np.array([[0, 1, 1, 2, 3, 4, 4, 0],      # source
                  [1, 0, 2, 3, 2, 0, 3, 2]],     # destination
                 dtype=np.int64)

_GPT_PARAMS = ["wte", "wpe"] + [f"{name}{layer}" for layer in (1, 2) for name in ("W_qkv", "b_qkv", "W_o", "b_o")] \
    + [f"ln{i}_{p}" for i in (1, 2, 3, 4) for p in ("w", "b")] \
    + [f"{name}{layer}" for layer in (1, 2) for name in ("W_fc", "b_fc", "W_pr", "b_pr")] + ["lnf_w", "lnf_b", "W_head"]


def gpt_block(values):
    p = {n: _leaf(values, n, True) for n in sorted(_GPT_PARAMS, key=list(values).index)}
    tokens, targets, positions = (torch.tensor(values[n]) for n in ("tokens", "targets", "positions"))
    x = F.embedding(tokens, p["wte"]) + F.embedding(positions, p["wpe"])

    def heads(t):
        return t.reshape(2, 5, 2, 2).transpose(1, 2)

    for layer, (ln_a, ln_b) in ((1, (1, 2)), (2, (3, 4))):
        q, k, v = (F.layer_norm(x, [4], p[f"ln{ln_a}_w"], p[f"ln{ln_a}_b"]) @ p[f"W_qkv{layer}"]
                   + p[f"b_qkv{layer}"]).chunk(3, dim=-1)
        a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + a.transpose(1, 2).reshape(2, 5, 4) @ p[f"W_o{layer}"] + p[f"b_o{layer}"]
        x = x + F.gelu(F.layer_norm(x, [4], p[f"ln{ln_b}_w"], p[f"ln{ln_b}_b"]) @ p[f"W_fc{layer}"]
                       + p[f"b_fc{layer}"]) @ p[f"W_pr{layer}"] + p[f"b_pr{layer}"]
    logits = F.layer_norm(x, [4], p["lnf_w"], p["lnf_b"]) @ p["W_head"]
    loss = F.cross_entropy(logits.reshape(10, 7), targets.reshape(10))
    loss.backward()
    return {"logits": logits, "loss": loss}, p


def gnn_layer(values):
    p = {n: _leaf(values, n, True) for n in ("W_self", "W_msg", "b", "W_out")}
    X, labels = _leaf(values, "X"), torch.tensor(values["labels"])
    src, dst = torch.tensor(values["edges"])
    degree = torch.zeros(5).scatter_add(0, dst, torch.ones(8)).clamp(min=1.0).unsqueeze(1)
    messages = (X @ p["W_msg"]).index_select(0, src)
    h = torch.relu(X @ p["W_self"] + torch.zeros(5, 4).index_add(0, dst, messages) / degree + p["b"])
    rows_src, rows_dst = src.unsqueeze(1).expand(8, 4), dst.unsqueeze(1).expand(8, 4)
    h2 = h + torch.zeros(5, 4).scatter_add(0, rows_dst, h.gather(0, rows_src)) / degree
    loss = F.cross_entropy(h2 @ p["W_out"], labels)
    loss.backward()
    return {"h2": h2, "loss": loss}, p


def main() -> int:
    edges = EXAMPLES / "gnn_edges.npy"
    if not edges.exists() or not np.array_equal(np.load(edges), EDGES):
        np.save(edges, EDGES)
    for name, model in (("gpt_block", gpt_block), ("gnn_layer", gnn_layer)):
        path = EXAMPLES / f"{name}.yaml"
        outputs, params = model(_agrad_values(path))
        write(path, expect_block(outputs, params))
        print(f"wrote the expect block of {path.name} (torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
