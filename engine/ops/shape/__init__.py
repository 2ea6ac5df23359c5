"""Ops that move elements without computing new values (ATen's TensorShape, Indexing,
TensorAdvancedIndexing, PadNd), one family a file: view (view, reshape, transpose, permute,
expand, squeeze, …), diagonal (diagonal, diag, tril, triu), rearrange (flip, roll, repeat,
movedim, …), join (cat, stack, split, unbind), pad, indexing (select, slice, narrow, `x[i]`
with basic indices) and advanced_indexing (gather, scatter, index_select, embedding,
`x[idx]`, `x[idx] = v`, …)."""
