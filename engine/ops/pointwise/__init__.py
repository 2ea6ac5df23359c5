"""Elementwise ops (ATen's BinaryOps, UnaryOps, PointwiseOps, Activation), one family a file:
binary (arithmetic, comparisons, selections, fused forms), unary (math on one tensor),
special (erf, lgamma, digamma, …), logical (logical, bitwise and value-test ops, no
gradients) and activation (relu, tanh, sigmoid, gelu, … with their backward ops)."""
