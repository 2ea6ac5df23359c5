"""Makes the ONNX fixtures of tests/onnx: small torch models exported with torch 2.13.0's two
exporters, their onnxruntime outputs and torch's gradients.

Run from a separate virtual environment (never needed by the tests):

    python3 -m venv /tmp/torchvenv17
    /tmp/torchvenv17/bin/pip install torch==2.13.0 onnx onnxscript onnxruntime numpy
    /tmp/torchvenv17/bin/python tests/onnx/make_onnx_fixtures.py

For each model NAME and exporter (`legacy`, `dynamo`) it writes, in tests/onnx/fixtures/:
- `NAME.EXPORTER.onnx`: the model (weights inside: each is a few KB);
- `NAME.EXPORTER.npz`: `in:<input>` the inputs, `out:<output>` onnxruntime's outputs on them,
  `target` a random tensor of the output's shape, and `grad:<input>` and `grad:<initializer>`
  torch autograd's gradients of `mse_loss(output, target)` (float64, on a float64 copy of the
  model) with respect to each float graph input and each parameter, keyed by the ONNX
  initializer that holds the parameter (parameters the exporter changed, as a BatchNormalization
  folded into a Conv, have none). The sum of the outputs would do for most models, but not for
  one ending in a layer norm, whose sum does not depend on anything before it.
An exporter that fails on a model is reported and skipped; `manifest.json` says which.
"""
from __future__ import annotations

import copy
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
import torch
from torch import nn

OUT = Path(__file__).parent / "fixtures"
OPSET = 17            # the legacy exporter's
OPSET_DYNAMO = 18     # the dynamo exporter's own (converting it down fails on Split)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 10), nn.Linear(10, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=2, bias=False)
        self.bn2 = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6 * 1 * 1, 5)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = nn.functional.max_pool2d(h, 2)
        h = torch.relu(self.bn2(self.conv2(h)))
        h = nn.functional.adaptive_avg_pool2d(h, 1)
        return self.fc(torch.flatten(h, 1))


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock with a downsampling shortcut, then a classifier head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.down = nn.Sequential(nn.Conv2d(3, 8, 1, stride=2, bias=False), nn.BatchNorm2d(8))
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = torch.relu(out + self.down(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(out, 1), 1))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                                batch_first=True, activation="gelu")

    def forward(self, x):
        return self.layer(x)


class EmbedAttention(nn.Module):
    """Token embedding, causal scaled-dot-product attention over two heads, layer norm, head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.qkv = nn.Linear(8, 24)
        self.ln = nn.LayerNorm(8)
        self.head = nn.Linear(8, 11)

    def forward(self, tokens):
        b, t = tokens.shape
        h = self.emb(tokens)
        q, k, v = self.qkv(h).split(8, dim=-1)
        q, k, v = (z.reshape(b, t, 2, 4).transpose(1, 2) for z in (q, k, v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + a.transpose(1, 2).reshape(b, t, 8)
        return torch.log_softmax(self.head(self.ln(h)), dim=-1)


class Elementwise(nn.Module):
    """Activations and elementwise math that exports use, one after another."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5))

    def forward(self, x):
        a = torch.sigmoid(x) * torch.tanh(x * self.w) + nn.functional.leaky_relu(x, 0.2)
        b = nn.functional.elu(x) + nn.functional.selu(x) + nn.functional.softplus(x) + nn.functional.hardsigmoid(x)
        c = torch.exp(-x * x) + torch.sqrt(torch.abs(x) + 1) / (1 + x.pow(2)) + torch.clamp(x, -0.5, 0.7)
        d = nn.functional.gelu(x) + nn.functional.silu(x) + torch.softmax(x, dim=-1) + torch.erf(x)
        e = torch.where(x > 0, x, self.w * x).mean(dim=1, keepdim=True) + x.max(dim=-1, keepdim=True).values
        f = torch.cat([a, b], dim=1)[:, 1:9:2] + torch.log1p(x.abs())[:, :4]
        return torch.cat([c * d + e, f], dim=1).transpose(0, 1).reshape(-1, 3).sum(0)


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, batch_first=True)
        self.fc = nn.Linear(5, 2)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


class RNNModel(nn.Module):
    """A bidirectional RNN (tanh: a ReLU's kinks would make float32 and float64 gradients differ), two layers,
    batch first."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 5, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(10, 2)

    def forward(self, x, h0):
        # (h0 a model input: with zeros the exporter folds the first step's h0 @ W_hh + b_hh into a constant,
        # and b_hh's initializer no longer has torch's gradient)
        out, _ = self.rnn(x, h0)
        return self.fc(out[:, -1])


class Indexing(nn.Module):
    """Elements read and written by index pairs (x[:, rows, cols], and an in-place write to them)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 5))
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        rows, cols = torch.tensor([0, 2, 3, -1]), torch.tensor([1, 1, 4, 0])
        picked = x[:, rows, cols] * self.w[rows, cols]
        y = x.clone()
        y[:, rows, cols] = torch.tanh(picked)
        return self.fc(y.sum(1))


class Sampling(nn.Module):
    """The ops that move pixels: pixel_shuffle (DepthToSpace), grid_sample at a trained grid (GridSample),
    a 3-d max pool whose indices pick values again (MaxPool's Indices, made per-plane by the exporter),
    unfold and fold (Col2Im)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 8, 3, padding=1)
        self.grid = nn.Parameter(torch.rand(2, 6, 6, 2) * 2.6 - 1.3)          # (one per sample of the batch)
        self.fc = nn.Linear(12, 3)

    def forward(self, x):
        h = nn.functional.pixel_shuffle(self.conv(x), 2)                                     # (N, 2, 8, 8)
        h = nn.functional.grid_sample(h, self.grid, mode="bicubic", padding_mode="reflection", align_corners=False)
        hp = h.unsqueeze(1)                                                                  # (N, 1, 2, 6, 6)
        h, idx = nn.functional.max_pool3d(hp, (2, 2, 2), stride=(1, 2, 2), return_indices=True)
        h = h + 0.5 * torch.gather(hp.flatten(2), 2, idx.flatten(2)).reshape(h.shape)       # (N, 1, 1, 3, 3)
        u = nn.functional.unfold(h.flatten(1, 2), 2)                                        # (N, 4, 4)
        f = nn.functional.fold(u, (3, 3), 2)                                                # (N, 1, 3, 3)
        return self.fc(torch.cat([f.flatten(1), h.flatten(1)[:, :3]], 1))


class GRUModel(nn.Module):
    """A two-layer bidirectional GRU, batch first, its last step and final states into a head."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 5, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(10 + 5, 3)

    def forward(self, x):
        out, h = self.gru(x)
        return self.fc(torch.cat([out[:, -1], h[-1]], 1))


class MaskedEncoder(nn.Module):
    """A pre-norm transformer encoder layer under a causal mask and a key padding mask (an input)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                                batch_first=True, norm_first=True)

    def forward(self, x, pad):
        causal = torch.triu(torch.full((x.shape[1], x.shape[1]), float("-inf")), diagonal=1)
        return self.layer(x, src_mask=causal, src_key_padding_mask=pad)


class PositionalEmbedding(nn.Module):
    """Token embedding, learned and sinusoidal positions (arange, sin/cos of a buffer), layer norm,
    a masked mean over the tokens (padding id 0), a head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(13, 8, padding_idx=0)
        self.pos = nn.Embedding(16, 8)
        self.register_buffer("freq", torch.exp(torch.arange(0, 8, 2).float() * (-2.0 / 8)))
        self.ln = nn.LayerNorm(8)
        self.head = nn.Linear(8, 4)

    def forward(self, tokens):
        t = torch.arange(tokens.shape[1])
        angles = t[:, None].float() * self.freq[None, :]
        sinus = torch.stack([angles.sin(), angles.cos()], -1).flatten(1)
        h = self.ln(self.emb(tokens) + self.pos(t)[None] + sinus)
        keep = (tokens != 0).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1).clamp_min(1.0))


class UNetBlock(nn.Module):
    """A U-Net stage: conv, max-pool down, conv, nearest and bilinear upsampling back, the skip
    concatenated, a transposed convolution, a 1x1 conv."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(2, 4, 3, padding=1)
        self.mid = nn.Conv2d(4, 4, 3, padding=1)
        self.up = nn.ConvTranspose2d(12, 4, 3, stride=2, padding=1, output_padding=1)
        self.out = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        e = torch.relu(self.enc(x))                                              # (N, 4, 8, 8)
        m = torch.relu(self.mid(nn.functional.max_pool2d(e, 2)))                 # (N, 4, 4, 4)
        a = nn.functional.interpolate(m, scale_factor=2, mode="nearest")
        b = nn.functional.interpolate(m, size=(8, 8), mode="bilinear", align_corners=False)
        h = torch.cat([e, a, b], 1)                                              # (N, 12, 8, 8)
        return self.out(self.up(nn.functional.avg_pool2d(h, 2)))                 # (N, 1, 8, 8)


class MoE(nn.Module):
    """Mixture-of-experts routing: a softmax router, the top 2 experts per token (topk), their
    outputs gathered from all experts' and mixed by the renormalised router weights."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(6, 4)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 6)) for _ in range(4))

    def forward(self, x):                                                        # (N, T, 6)
        probs = torch.softmax(self.router(x), -1)
        weights, chosen = torch.topk(probs, 2, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        every = torch.stack([e(x) for e in self.experts], -2)                   # (N, T, 4, 6)
        index = chosen.unsqueeze(-1).expand(*chosen.shape, 6)
        picked = torch.gather(every, -2, index)                                  # (N, T, 2, 6)
        return x + (picked * weights.unsqueeze(-1)).sum(-2)


class Depthwise(nn.Module):
    """MobileNet's depthwise-separable block: a dilated depthwise conv ('same' padding), group
    norm, hardswish, the pointwise conv, an average pool that leaves its padding out, a 1-d
    conv and pool over the flattened rows."""

    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(4, 4, 3, padding="same", dilation=2, groups=4)
        self.gn = nn.GroupNorm(2, 4)
        self.pw = nn.Conv2d(4, 6, 1)
        self.c1 = nn.Conv1d(6, 3, 3, stride=2)

    def forward(self, x):
        h = self.pw(nn.functional.hardswish(self.gn(self.dw(x))))
        h = nn.functional.avg_pool2d(h, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)
        h = self.c1(h.flatten(2))
        return nn.functional.max_pool1d(h, 2, ceil_mode=True)


class EinsumAttention(nn.Module):
    """Attention written with einsum: per-head scores, a causal masked_fill, softmax, the weighted
    values, the heads merged by another einsum."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (nn.Parameter(torch.randn(2, 8, 4) * 0.3) for _ in range(3))
        self.o = nn.Parameter(torch.randn(2, 4, 8) * 0.3)

    def forward(self, x):
        q, k, v = (torch.einsum("btd,hde->bhte", x, w) for w in (self.q, self.k, self.v))
        scores = torch.einsum("bhqe,bhke->bhqk", q, k) / 2.0
        t = x.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        attn = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)
        return torch.einsum("bhqk,bhke,hed->bqd", attn, v, self.o)


class Reductions(nn.Module):
    """Reductions and scans exports write: var and std, norm, logsumexp, cumsum, prod, amax, an
    argmax's row picked back, flip, roll, repeat, expand."""

    def forward(self, x):                                                        # (N, 4, 5)
        a = x.var(-1, keepdim=True) + x.std(1, keepdim=True) + torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        b = torch.logsumexp(x, 1, keepdim=True) + torch.cumsum(x, -1) - torch.flip(x, [1])
        c = torch.roll(x, 1, -1) * torch.tanh(x).prod(-1, keepdim=True) + x.amax((1, 2), keepdim=True)
        rows = torch.argmax(x.sum(-1), 1)                                        # (N,)
        d = x[torch.arange(x.shape[0]), rows].unsqueeze(1).expand(-1, 4, -1)
        return (a + b + c + d).repeat(1, 2, 1)


class Interpolations(nn.Module):
    """interpolate's modes as each exporter writes them: nearest-exact (half_pixel, round_prefer_ceil),
    bicubic, bilinear with align_corners on a scale that does not divide the size, trilinear, 1-d linear."""

    def forward(self, x):                                                        # (N, 2, 4, 5)
        a = nn.functional.interpolate(x, scale_factor=2, mode="nearest-exact")[:, :, ::2, ::2]
        b = nn.functional.interpolate(x, size=(4, 5), mode="bicubic", align_corners=False)
        c = nn.functional.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=True)[:, :, :4, :5]
        d = nn.functional.interpolate(x.unsqueeze(1), scale_factor=(1, 2, 2), mode="trilinear")[:, 0, :, 1::2, 1::2]
        e = nn.functional.interpolate(x.flatten(2), size=25, mode="linear").reshape(x.shape[0], 2, 5, 5)[:, :, :4]
        return a + b + c + d + e


class Decoder(nn.Module):
    """A transformer decoder layer: causal self-attention, cross-attention to a memory, feed-forward."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)

    def forward(self, x, memory):
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        return self.layer(x, memory, tgt_mask=mask, tgt_is_causal=True)


class FreshBatchNorm(nn.Module):
    """A batch norm as made, not trained (bias and running mean zeros, weight and running variance ones):
    the dynamo exporter gives each pair of equal tensors one initializer, so the bias is read as the
    running mean too; its gradient is still the bias's alone, as torch's."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
        self.conv = nn.Conv1d(3, 4, 3, dilation=2, padding="same")

    def forward(self, x):                                                        # (N, 3, 9)
        y = self.conv(self.bn(x))
        return nn.functional.adaptive_avg_pool1d(y, 4) + nn.functional.max_pool1d(y, 2, ceil_mode=True)[..., :4]


class Patches(nn.Module):
    """ViT's patch embedding (a strided conv, flattened, a class token and positions added) over an
    image first convolved with reflect and circular padding."""

    def __init__(self):
        super().__init__()
        self.reflect = nn.Conv2d(3, 3, 3, padding=1, padding_mode="reflect")
        self.circular = nn.Conv2d(3, 3, 3, padding=1, padding_mode="circular")
        self.patch = nn.Conv2d(3, 8, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, 8))
        self.pos = nn.Parameter(torch.randn(1, 5, 8))

    def forward(self, x):                                                        # (N, 3, 8, 8)
        h = self.patch(self.reflect(x) + self.circular(x)).flatten(2).transpose(1, 2)
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), h], 1) + self.pos


class Bag(nn.Module):
    """EmbeddingBag (mean): both exporters write a Loop over the bags, the dynamo one a while loop that
    carries a sequence."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(10, 4, mode="mean")

    def forward(self, tokens):                                                   # (N, 5) int64
        return self.bag(tokens)


class Lists(nn.Module):
    """List code, scripted (torch.jit.script): the legacy exporter writes its lists as ONNX sequences
    (SplitToSequence, SequenceAt, SequenceLength, ConcatFromSequence)."""

    def forward(self, x):                                                        # (N, 6, 4)
        parts = torch.split(x, 2, 1)
        rows = torch.unbind(x, 2)
        first = torch.cat([parts[2], parts[0]], 1)
        return first * len(parts) + torch.stack(rows, 2)[:, :4] + torch.cat(parts, 1)[:, 2:]


class Spectrogram(nn.Module):
    """torch.stft's power spectrum (the dynamo exporter's STFT; the legacy one refuses complex results)."""

    def forward(self, x):                                                        # (N, 32)
        s = torch.stft(x, n_fft=8, hop_length=4, window=torch.hann_window(8), return_complex=True)
        return torch.view_as_real(s).pow(2).sum(-1)


class SpectralFilter(nn.Module):
    """An FNO-style spectral layer: rfft, each mode times a complex weight, irfft back to the signal's
    length; plus the power of an fft across the channels of the spectrum. The dynamo exporter writes
    aten's _fft_r2c, _fft_c2r and _fft_c2c as DFT nodes (onnxscript's torchlib; it has no complex
    constant_pad_nd, so the weights cover every mode rather than the lowest few zero-padded)."""

    def __init__(self, channels=3, modes=9):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, modes, 2) * 0.5)      # complex, as (real, imaginary)

    def forward(self, x):                                                        # (N, 3, 16)
        spectrum = torch.fft.rfft(x, norm="ortho")                               # (N, 3, 9)
        weighted = spectrum * torch.view_as_complex(self.weight)
        filtered = torch.fft.irfft(weighted, n=x.shape[-1], norm="ortho")       # (N, 3, 16)
        mixed = torch.view_as_real(torch.fft.fft(spectrum, dim=1)).pow(2).sum(-1)
        return filtered + mixed.mean(-1, keepdim=True)


MODELS = {
    "mlp": (MLP, {"x": (2, 6)}),
    "convbn": (ConvBN, {"x": (2, 3, 6, 6)}),
    "resblock": (BasicBlock, {"x": (2, 3, 8, 8)}),
    "encoder": (Encoder, {"x": (2, 5, 8)}),
    "attention": (EmbedAttention, {"tokens": (2, 6)}),
    "elementwise": (Elementwise, {"x": (3, 5)}),
    "lstm": (LSTMModel, {"x": (2, 4, 4)}),
    "rnn": (RNNModel, {"x": (2, 3, 4), "h0": (4, 2, 5)}),
    "indexing": (Indexing, {"x": (2, 4, 5)}),
    "sampling": (Sampling, {"x": (2, 2, 4, 4)}),
    "gru": (GRUModel, {"x": (2, 3, 4)}),
    "masked_encoder": (MaskedEncoder, {"x": (2, 5, 8), "pad": (2, 5)}),
    "positional": (PositionalEmbedding, {"tokens": (2, 6)}),
    "unet": (UNetBlock, {"x": (2, 2, 8, 8)}),
    "moe": (MoE, {"x": (2, 3, 6)}),
    "depthwise": (Depthwise, {"x": (2, 4, 9, 9)}),
    "einsum_attention": (EinsumAttention, {"x": (2, 5, 8)}),
    "reductions": (Reductions, {"x": (2, 4, 5)}),
    "interpolations": (Interpolations, {"x": (2, 2, 4, 5)}),
    "decoder": (Decoder, {"x": (2, 4, 8), "memory": (2, 6, 8)}),
    "patches": (Patches, {"x": (2, 3, 8, 8)}),
    "fresh_bn": (FreshBatchNorm, {"x": (2, 3, 9)}),
    "embedding_bag": (Bag, {"tokens": (2, 5)}),
    "lists": (Lists, {"x": (2, 6, 4)}),
    "spectrogram": (Spectrogram, {"x": (2, 32)}),
    "spectral_filter": (SpectralFilter, {"x": (2, 3, 16)}),
}

# The batch-norm models also once without the legacy exporter's folding of BN into Conv.
EXPORTERS = {"convbn": ("legacy", "dynamo", "unfolded"), "resblock": ("legacy", "dynamo", "unfolded"),
             "sampling": ("dynamo",),     # (Col2Im is opset 18's: the legacy exporter writes opset 17)
             "fresh_bn": ("dynamo",),     # (the legacy exporter folds the batch norm into the Conv)
             "lists": ("legacy",),        # (scripted: the dynamo exporter traces, and writes no sequences)
             "spectrogram": ("dynamo",),  # (the legacy exporter refuses stft's complex result)
             "spectral_filter": ("dynamo",)}  # (nor does it export torch.fft's transforms)
# Exported with a dynamic batch (the exporters' dynamic_axes / dynamic_shapes), as a deployed model is.
DYNAMIC = {"embedding_bag", "lists", "spectrogram"}
SCRIPTED = {"lists"}


def _inputs(name: str, shapes: dict, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    if name in ("attention", "positional", "embedding_bag"):
        return {k: rng.integers(0, 11, size=s).astype(np.int64) for k, s in shapes.items()}
    if name == "masked_encoder":         # the last token of the second sequence is padding
        return {"x": rng.normal(size=shapes["x"]).astype(np.float32),
                "pad": np.array([[False] * 5, [False] * 4 + [True]])}
    return {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}


def _randomise_stats(model: nn.Module, seed: int) -> None:
    """Batch norms with running statistics that are not the identity, as a trained model's, and
    layer norms and attention biases whose weights differ (the exporters merge equal initializers into one)."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
        if isinstance(m, nn.MultiheadAttention) and m.in_proj_bias is not None:
            # (zeros at first: two attentions' biases would be one initializer, its gradient their sum)
            m.in_proj_bias.data.copy_(torch.randn(m.in_proj_bias.shape, generator=g) * 0.1)
            m.out_proj.bias.data.copy_(torch.randn(m.out_proj.bias.shape, generator=g) * 0.1)
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.2)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)


def _export(model, args, names, path: Path, exporter: str, dynamic: bool = False) -> None:
    if exporter == "dynamo":
        batch = torch.export.Dim("batch", min=1, max=64)
        program = torch.onnx.export(model, args, dynamo=True, input_names=list(names), opset_version=OPSET_DYNAMO,
                                    external_data=False,
                                    dynamic_shapes={k: {0: batch} for k in names} if dynamic else None)
        program.save(str(path), external_data=False)
    else:
        # `unfolded`: no constant folding, so BatchNormalization stays a node of its own
        torch.onnx.export(model, args, str(path), dynamo=False, input_names=list(names), opset_version=OPSET,
                          do_constant_folding=exporter == "legacy",
                          dynamic_axes={k: {0: "batch"} for k in names} if dynamic else None)


def _torch_grads(model, inputs: dict, onnx_model, target: np.ndarray) -> dict[str, np.ndarray]:
    """d mse_loss(output, target) / d(each float input and each parameter kept as an initializer),
    in float64."""
    m64 = copy.deepcopy(model).double().eval()
    args = []
    for v in inputs.values():
        t = torch.tensor(v.astype(np.float64) if v.dtype == np.float32 else v)
        if t.is_floating_point():
            t.requires_grad_(True)
        args.append(t)
    out = m64(*args)
    total = nn.functional.mse_loss(out, torch.tensor(target))
    params = dict(m64.named_parameters())
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in onnx_model.graph.initializer}
    # a parameter the exporter changed (BatchNormalization folded into Conv) keeps its name
    # but not its value: only the ones held as they are have a gradient to compare
    wanted = {n: p for n, p in params.items() if n in inits and tuple(p.shape) == inits[n].shape
              and np.array_equal(p.detach().float().numpy(), inits[n])}
    leaves = [a for a in args if a.requires_grad] + list(wanted.values())
    grads = torch.autograd.grad(total, leaves, allow_unused=True)
    result = {}
    float_names = [k for k, a in zip(inputs, args) if a.requires_grad]
    for name, g in zip(float_names + list(wanted), grads):
        if g is not None:
            result[f"grad:{name}"] = g.numpy()
    return result


def main() -> int:
    OUT.mkdir(exist_ok=True)
    only = set(sys.argv[1:])
    manifest = {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": ort.__version__,
                "opset": OPSET, "models": {}}
    if only and (OUT / "manifest.json").exists():       # the other models' entries stay as they were
        manifest["models"] = json.loads((OUT / "manifest.json").read_text())["models"]
    for seed, (name, (cls, shapes)) in enumerate(MODELS.items()):
        if only and name not in only:
            continue
        torch.manual_seed(100 + seed)
        model = cls()
        _randomise_stats(model, 200 + seed)
        model.eval()
        inputs = _inputs(name, shapes, 300 + seed)
        args = tuple(torch.tensor(v) for v in inputs.values())
        for exporter in EXPORTERS.get(name, ("legacy", "dynamo")):
            path = OUT / f"{name}.{exporter}.onnx"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _export(torch.jit.script(model) if name in SCRIPTED else model, args, inputs, path, exporter,
                            name in DYNAMIC)
                onnx_model = onnx.load(str(path))
                onnx.checker.check_model(onnx_model)
                session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
                names = [i.name for i in session.get_inputs()]
                feeds = {n: inputs[n] for n in names}
                outs = session.run(None, feeds)
                data = {f"in:{k}": v for k, v in feeds.items()}
                data.update({f"out:{o.name}": v for o, v in zip(session.get_outputs(), outs)})
                target = np.random.default_rng(400 + seed).normal(size=outs[0].shape)
                data["target"] = target
                data.update(_torch_grads(model, inputs, onnx_model, target))
                np.savez(OUT / f"{name}.{exporter}.npz", **data)
                ops = sorted({n.op_type for n in onnx_model.graph.node})
                manifest["models"][f"{name}.{exporter}"] = {"ops": ops, "bytes": path.stat().st_size}
                print(f"{name}.{exporter}: {path.stat().st_size} bytes, ops {ops}")
            except Exception as exc:       # noqa: BLE001 - an exporter's failure is recorded, not fatal
                path.unlink(missing_ok=True)
                manifest["models"][f"{name}.{exporter}"] = {"failed": f"{type(exc).__name__}: {exc}"[:300]}
                print(f"{name}.{exporter}: FAILED {type(exc).__name__}: {str(exc)[:200]}")
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
