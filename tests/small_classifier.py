"""The small classifier graph that the train tests (library and CLI) both train."""

SMALL_CLASSIFIER = """\
seed: 3
inputs:
  x: {shape: [8, 4], init: normal}
  y: {value: [0, 1, 2, 0, 1, 2, 0, 1], dtype: int64}
  W: {shape: [4, 3], init: normal, std: 0.5, requires_grad: true}
  b: {shape: [3], init: zeros, requires_grad: true}
nodes:
  logits: x @ W + b
  loss: cross_entropy(logits, y)
backward: loss
"""
