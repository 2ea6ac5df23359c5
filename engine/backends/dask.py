"""The dask backend: lazy dask.array arrays, imported only when a dask tensor is first made.

dask.array mirrors NumPy's array API, so every op's one kernel serves it as it serves
NumPy and CuPy; a kernel builds a task graph and computes nothing. Arrays are chunked
along their first (batch) dimension. What a run prints or saves is computed by one
`compute` call (`compute` below), on the threads of this process or, with a distributed
Client in `scheduler`, on a cluster.

An op that cannot be lazy here (its output's shape depends on its input's values, or its
kernel loops as many times as an index's values say) is named in `REFUSED` with the reason: a
graph that calls one is refused before it runs, and a call on dask tensors raises instead
of computing something else. tests/engine/test_ops_on_dask.py runs every op's samples here
against the CPU.
"""
from __future__ import annotations

import gc
import math

import numpy as np

from .._device import Backend, DeviceUnavailableError
from ..dispatch_keys import DispatchKey

INSTALL_HINT = "pip install 'agrad[dask]'"

_DATA_DEPENDENT = "its output's shape depends on its input's values, which a lazy array does not know"
_ROUNDS = ("its kernel applies repeated positions in rounds, as many as the index's most repeated value, "
           "which a lazy index does not know")
_REPEATS = ("its kernel writes at computed positions where a repeated position keeps one of its values, and "
            "which one is each library's choice: dask's could differ from the CPU's")

# op -> why it cannot run on dask arrays: its dask kernel raises this, and a graph that calls it
# is refused before it runs (graphs/build.py asks Backend.refusal)
REFUSED: dict[str, str] = {
    **dict.fromkeys(("nonzero", "masked_select", "_masked_select_backward", "_unique2", "unique_dim"), _DATA_DEPENDENT),
    **dict.fromkeys(("scatter_reduce", "index_reduce"), _ROUNDS),
    "max_unpool2d": _REPEATS,
    **dict.fromkeys(("argwhere", "unique_consecutive"), _DATA_DEPENDENT),
    # a view by geometry over the tensor's memory (sizes, strides, storage offset): a dask array has
    # no memory layout to read through
    **dict.fromkeys(("as_strided", "as_strided_copy", "slice_inverse"),
                    "it reads the tensor's memory by strides and an offset, and a dask array has no memory layout"),
    # (real + 1j * imag would turn an infinite part into NaNs: the parts are written, as ATen's complex)
    # the gradient of a real matrix's complex eigenvalues is the real part of a complex one (the engine's
    # handle_r_to_c, through `real`, refused above)
    **dict.fromkeys(("linalg_eig", "linalg_eigvals"),
                    "the gradient of a real matrix's complex eigendecomposition takes a real part (`real`), and a "
                    "dask array has no memory layout to view it in"),
    **dict.fromkeys(("complex", "polar"),
                    "it writes the real and imaginary parts of its result in place, which a dask array cannot"),
    **dict.fromkeys(("linalg_ldl_factor_ex", "linalg_ldl_factor", "linalg_ldl_solve", "geqrf"),
                    "its LAPACK routine (geqrf, sytrf, sytrs) factors or solves NumPy arrays on the host, which a lazy "
                    "array is not"),
    "nonzero_static": "it finds where the nonzero elements are to fill its fixed rows, which a lazy array does not "
                      "know",
    # kernels that write into a copy of self through a view or at indices (a dask array is never written through)
    **dict.fromkeys(("slice_scatter", "select_scatter", "diagonal_scatter", "as_strided_scatter", "index_fill",
                     "index_copy", "masked_scatter", "put"),
                    "its kernel writes into a copy of self through a view or at indices, and a dask array is never "
                    "written through"),
    "mode": "its kernel counts each row's runs of equal values on the host, which a lazy array does not have",
    # kernels that read index values on the host to lay out their computation (a lazy array has none)
    **dict.fromkeys(("_ctc_loss", "_ctc_loss_backward", "ctc_loss"),
                    "its recursion runs up to each sample's input and target lengths, values a lazy array does not know"),
    **dict.fromkeys(("_embedding_bag", "_embedding_bag_freq", "embedding_bag"),
                    "its bags are laid out by the offsets' and indices' values, which a lazy array does not know"),
}


class DaskBackend(Backend):
    type = "dask"
    key = int(DispatchKey.Dask)
    lazy = True
    # how many chunks the batch dimension is cut into (the workers of a cluster, set by the CLI)
    partitions = 2
    # what `compute` runs on: None is dask's default (threads); a distributed Client, a cluster
    scheduler = None

    def __init__(self):
        self._da = None
        self._special = None

    @property
    def xp(self):
        if self._da is None:
            self._da = DaskArrayAPI(self._import_dask_array())
        return self._da

    @property
    def special(self):
        # scipy.special's functions are NumPy ufuncs, which dask arrays apply lazily, chunk by chunk
        if self._special is None:
            import scipy.special
            self._special = scipy.special
        return self._special

    @staticmethod
    def _import_dask_array():
        # NOTE: with the cyclic collector on, which agrad pauses while it reads or checks a graph (the
        # first use of dask is often there): dask's slice_array is decorated with a disable_gc() that
        # notes at import whether the collector is on, and after each call turns it back on only if it
        # was. Imported while paused, every later slicing of a dask array would leave it off for good.
        paused = not gc.isenabled()
        gc.enable()
        try:
            import dask.array
        except ImportError as exc:
            raise DeviceUnavailableError(f"device dask is not available: dask.array is not installed ({exc}); "
                                         f"install it with: {INSTALL_HINT}") from None
        finally:
            if paused:
                gc.disable()
        return dask.array

    def check_device(self, dev):
        if dev.index not in (None, 0):
            raise DeviceUnavailableError(f"invalid device {dev}: dask has no index {dev.index}")
        self.xp        # noqa: B018 — raises DeviceUnavailableError without dask

    def chunks(self, shape) -> tuple:
        """Chunks of an array of `shape`: its first dimension cut into `partitions` pieces."""
        if not shape:
            return ()
        rows = max(1, math.ceil(shape[0] / self.partitions))
        return (rows,) + tuple(shape[1:])

    def asarray(self, data, np_dtype, dev):
        da = self.xp
        if isinstance(data, da.Array):
            return data if np_dtype is None or data.dtype == np_dtype else data.astype(np_dtype)
        host = np.asarray(data, dtype=np_dtype)
        return da.from_array(host, chunks=self.chunks(host.shape))

    def full(self, shape, fill_value, np_dtype, dev):
        shape = tuple(shape)
        return self.xp.full(shape, fill_value, dtype=np_dtype, chunks=self.chunks(shape))

    def to_numpy(self, array):
        if isinstance(array, np.ndarray):
            return array
        return compute([array])[0]

    def to_numpy_all(self, arrays: list) -> list:
        return compute(arrays)

    def refusal(self, op_name: str) -> str | None:
        return REFUSED.get(op_name)


def _axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


class DaskArrayAPI:
    """dask.array as the kernels' `xp`, with the NumPy functions they call that dask.array lacks
    or spells differently: written here once, so that no kernel asks which library it runs on.
    Along an axis that a function needs whole (a sort, a gather), that axis is made one chunk
    and NumPy's own function runs on each block: the same results as NumPy's, bit for bit."""

    multi_array_indexing = False     # dask indexes by one 1-d index array at a time

    def __init__(self, da):
        self._da = da
        # running maxima and minima (cummax, cummin): NumPy's ufunc.accumulate, which dask's ufuncs lack
        self.maximum = _Accumulating(self, da.maximum, np.maximum)
        self.minimum = _Accumulating(self, da.minimum, np.minimum)
        self.linalg = _BatchedLinalg(da)

    def __getattr__(self, name):
        value = getattr(self._da, name)
        setattr(self, name, value)        # found once: later lookups are plain attributes
        return value

    # NumPy's ufuncs, which dask arrays apply lazily, block by block
    def gcd(self, a, b):
        return np.gcd(a, b)

    def lcm(self, a, b):
        return np.lcm(a, b)

    def _whole_along(self, a, axis: int):
        """`a` with `axis` in one chunk (the others as they are)."""
        return a.rechunk({axis: -1}) if len(a.chunks[axis]) > 1 else a

    def amax(self, a, axis=None, keepdims=False):
        return self._da.max(a, axis=axis, keepdims=keepdims)

    def amin(self, a, axis=None, keepdims=False):
        return self._da.min(a, axis=axis, keepdims=keepdims)

    def array(self, a, dtype=None, copy=True, order="K"):
        # a new Array object: a later `out[...] = v` (dask's __setitem__ rebinds the object it is
        # called on) then changes this copy only
        a = self._da.asarray(a, dtype=dtype)
        return a.copy() if copy else a

    def bincount(self, x, weights=None, minlength=0):
        if weights is not None and weights.chunks != x.chunks:   # dask counts block by block
            weights = self._da.asarray(weights).rechunk(x.chunks)
        return self._da.bincount(x, weights=weights, minlength=minlength)

    def ascontiguousarray(self, a, dtype=None):
        return self._da.asarray(a, dtype=dtype)      # a dask array has no memory layout to fix

    def argsort(self, a, axis=-1, kind=None):
        a = self._da.asarray(a)
        axis = _axis(axis, a.ndim)
        a = self._whole_along(a, axis)
        return a.map_blocks(np.argsort, axis=axis, kind=kind, dtype=np.intp)

    def searchsorted(self, a, v, side="left", sorter=None):
        # dask writes into its result by index, which a 0-d `v` leaves a NumPy scalar: searched as one element
        if getattr(v, "ndim", 0) == 0:
            v = self._da.asarray(v).reshape(1)
            return self._da.searchsorted(a, v, side=side, sorter=sorter).reshape(())
        return self._da.searchsorted(a, v, side=side, sorter=sorter)

    def take_along_axis(self, arr, indices, axis):
        da = self._da
        arr, indices = da.asarray(arr), da.asarray(indices)
        axis = _axis(axis, arr.ndim)
        # NumPy broadcasts every other axis of the two; dask's blocks must then line up
        shape = np.broadcast_shapes(arr.shape[:axis] + (1,) + arr.shape[axis + 1:],
                                    indices.shape[:axis] + (1,) + indices.shape[axis + 1:])
        arr = da.broadcast_to(arr, shape[:axis] + (arr.shape[axis],) + shape[axis + 1:])
        indices = da.broadcast_to(indices, shape[:axis] + (indices.shape[axis],) + shape[axis + 1:])
        arr = self._whole_along(arr, axis)
        chunks = {i: c for i, c in enumerate(arr.chunks) if i != axis}
        chunks[axis] = -1
        indices = indices.rechunk(chunks)
        return da.map_blocks(np.take_along_axis, arr, indices, axis=axis, dtype=arr.dtype, chunks=indices.chunks)

    def reshape(self, a, shape):
        try:
            return self._da.reshape(a, shape)
        except NotImplementedError:     # dask reshapes only what merges or splits its chunks evenly
            return self._da.reshape(a.rechunk(-1), shape)

    def einsum(self, subscripts, *operands, **options):
        # every dimension of one subscript chunked alike (a repeated one within an operand too):
        # dask contracts block by block
        da = self._da
        operands = [da.asarray(o) for o in operands]
        terms = subscripts.split("->")[0].split(",")
        chunks: dict = {}
        for term, o in zip(terms, operands):
            for c, n, ch in zip(term, o.shape, o.chunks):
                if n != 1:
                    chunks.setdefault(c, ch)
        operands = [o.rechunk(tuple(chunks.get(c, ch) if n != 1 else ch for c, n, ch in zip(term, o.shape, o.chunks)))
                    for term, o in zip(terms, operands)]
        return da.einsum(subscripts, *operands, **options)

    def split(self, a, sections, axis=0):
        axis = _axis(axis, a.ndim)
        if isinstance(sections, int):
            if a.shape[axis] % sections:
                raise ValueError("array split does not result in an equal division")
            step = a.shape[axis] // sections
            sections = [step * k for k in range(1, sections)]
        bounds = [0, *sections, a.shape[axis]]
        lead = (slice(None),) * axis
        return [a[lead + (slice(start, stop),)] for start, stop in zip(bounds[:-1], bounds[1:])]

    def cross(self, a, b, axis=-1):
        da = self._da
        a, b = da.asarray(a), da.asarray(b)
        ndim = max(a.ndim, b.ndim)
        axis = _axis(axis, ndim)
        a = a.reshape((1,) * (ndim - a.ndim) + a.shape)
        b = b.reshape((1,) * (ndim - b.ndim) + b.shape)
        lead = (slice(None),) * axis

        def part(x, i):
            return x[lead + (slice(i, i + 1),)]
        a0, a1, a2 = (part(a, i) for i in range(3))
        b0, b1, b2 = (part(b, i) for i in range(3))
        return da.concatenate([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=axis)

    def nan_to_num(self, x, copy=True, nan=0.0, posinf=None, neginf=None):
        return self._da.map_blocks(np.nan_to_num, x, nan=nan, posinf=posinf, neginf=neginf, dtype=x.dtype)


class _Accumulating:
    """A dask ufunc with NumPy's `accumulate`, run block by block along an axis made whole."""

    def __init__(self, api: DaskArrayAPI, lazy, ufunc):
        self._api, self._lazy, self._ufunc = api, lazy, ufunc

    def __call__(self, *args, **kwargs):
        return self._lazy(*args, **kwargs)

    def accumulate(self, a, axis=0):
        axis = _axis(axis, a.ndim)
        return self._api._whole_along(a, axis).map_blocks(self._ufunc.accumulate, axis=axis, dtype=a.dtype)


class _BatchedLinalg:
    """NumPy's linalg on a batch of matrices, each block holding its matrices whole (the last two
    dimensions one chunk, the batch chunked as it is): dask.array.linalg factors one 2-D matrix
    across chunks and has no batches, eigh, det nor slogdet, where agrad's kernels pass batches of
    small matrices. NumPy's functions on each block: the same results as on the CPU. (A singular
    matrix raises when the graph is computed, not when the kernel runs.)"""

    def __init__(self, da):
        self._da = da

    @staticmethod
    def _whole(a, batch_chunks=None):
        chunks = (batch_chunks or a.chunks[:-2]) + ((a.shape[-2],), (a.shape[-1],))
        return a if a.chunks == chunks else a.rechunk(chunks)

    def _each(self, fn, a, out_matrix, dtype, *others):
        """fn on each block of `a` (and `others`, chunked as `a` along the batch); its result per matrix
        has the trailing shape `out_matrix`."""
        a = self._whole(a)
        others = [self._whole(o, a.chunks[:-2]) for o in others]
        chunks = a.chunks[:-2] + tuple((d,) for d in out_matrix)
        nd = a.ndim
        drop = list(range(nd - 2 + len(out_matrix), nd)) if len(out_matrix) < 2 else []
        return self._da.map_blocks(fn, a, *others, dtype=dtype, chunks=chunks, drop_axis=drop)

    def inv(self, a):
        return self._each(np.linalg.inv, a, a.shape[-2:], a.dtype)

    def cholesky(self, a):
        return self._each(np.linalg.cholesky, a, a.shape[-2:], a.dtype)

    def det(self, a):
        return self._each(np.linalg.det, a, (), a.dtype)

    def slogdet(self, a):
        return (self._each(lambda x: np.linalg.slogdet(x)[0], a, (), a.dtype),
                self._each(lambda x: np.linalg.slogdet(x)[1], a, (), a.dtype))

    def solve(self, a, b):
        return self._each(lambda x, y: np.linalg.solve(x, y), a, b.shape[-2:], np.result_type(a, b), b)

    def eigh(self, a, UPLO="L"):
        n = a.shape[-1]
        return (self._each(lambda x: np.linalg.eigh(x, UPLO)[0], a, (n,), a.dtype),
                self._each(lambda x: np.linalg.eigh(x, UPLO)[1], a, (n, n), a.dtype))

    def svd(self, a, full_matrices=True):
        m, n = a.shape[-2:]
        k = min(m, n)
        u, vh = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
        return tuple(self._each(lambda x, i=i: np.linalg.svd(x, full_matrices=full_matrices)[i], a, shape, a.dtype)
                     for i, shape in enumerate((u, (k,), vh)))

    def qr(self, a, mode="reduced"):
        m, n = a.shape[-2:]
        k = min(m, n)
        q, r = ((m, m), (m, n)) if mode == "complete" else ((m, k), (k, n))
        if mode == "r":
            return self._each(lambda x: np.linalg.qr(x, mode="r"), a, r, a.dtype)
        return (self._each(lambda x: np.linalg.qr(x, mode=mode)[0], a, q, a.dtype),
                self._each(lambda x: np.linalg.qr(x, mode=mode)[1], a, r, a.dtype))


def compute(arrays: list) -> list:
    """Every array of `arrays` as a NumPy array, in one `dask.compute` (one graph, shared work
    computed once); NumPy arrays pass through."""
    import dask

    from . import get_backend

    lazy = [i for i, a in enumerate(arrays) if not isinstance(a, np.ndarray)]
    out = list(arrays)
    if lazy:
        scheduler = get_backend("dask").scheduler
        options = {} if scheduler is None else {"scheduler": scheduler}
        values = dask.compute(*[arrays[i] for i in lazy], **options)
        for i, value in zip(lazy, values):
            out[i] = np.asarray(value)
    return out
