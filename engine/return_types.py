"""agrad.return_types, as torch.return_types: the types of the named tuples that ops with several results
return (`agrad.max(x, 0)` is a `return_types.max(values=..., indices=...)`), each named after its op with
PyTorch's field names (PyTorch's structseqs, made from the named returns in native_functions.yaml; here
namedtuples, made once in this table). The op families take their type from here (ops._common's
_named_results); PyTorch's `<name>_out` types, which only an `out=` call returns, have no counterpart.
"""
from __future__ import annotations

import collections

# op name -> its result's field names (torch 2.13's torch.return_types, less the _out types)
_FIELDS = {
    "aminmax": ("min", "max"),
    "cummax": ("values", "indices"), "cummin": ("values", "indices"),
    "frexp": ("mantissa", "exponent"),
    "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"), "histogramdd": ("hist", "bin_edges"),
    "kthvalue": ("values", "indices"),
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"), "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"), "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"),
    "linalg_lu_factor": ("LU", "pivots"), "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"),
    "lu_unpack": ("P", "L", "U"),
    "max": ("values", "indices"), "median": ("values", "indices"), "min": ("values", "indices"),
    "mode": ("values", "indices"), "nanmedian": ("values", "indices"),
    "qr": ("Q", "R"),
    "slogdet": ("sign", "logabsdet"),
    "sort": ("values", "indices"),
    "svd": ("U", "S", "V"),
    "topk": ("values", "indices"),
    "triangular_solve": ("solution", "cloned_coefficient"),
}


def _structseq(name: str, fields: tuple):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = __name__
    return cls


globals().update({name: _structseq(name, fields) for name, fields in _FIELDS.items()})
all_return_types = [globals()[name] for name in _FIELDS]

__all__ = ["all_return_types", *_FIELDS]
