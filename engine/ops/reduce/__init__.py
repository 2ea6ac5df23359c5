"""Reductions (ATen's ReduceOps, Sorting, TensorCompare), one family a file: arithmetic
(sum, mean, prod, logsumexp, norm, …), moments (var, std and their pairs with the mean),
selection (the reductions that pick by value: max, argmax, sort, topk, median, all, any, …)
and cumulative (cumsum, cumprod, logcumsumexp, diff)."""
