"""The `*_copy` variants of the view ops (ATen's generated view_copy kernels, for functionalized
programs): view_copy, permute_copy, expand_copy, transpose_copy, t_copy, squeeze_copy,
unsqueeze_copy, select_copy, slice_copy, split_copy, split_with_sizes_copy, unbind_copy,
unfold_copy, alias_copy, as_strided_copy; and narrow_copy and detach_copy, which PyTorch
declares on their own.

Each is its view op followed by a contiguous clone, as ATen's generated composite is: the result
owns its memory, nothing is recorded as a view. Each is made here from its view op's declaration
(`_copy_of`): the same kernel, Meta rule, samples and derivative formulas, its Nodes named as
PyTorch names them, the view's with `_copy` appended (SqueezeBackward1_copy), so a view op's
formula is written once. narrow_copy has a derivative of its own (NarrowCopyBackward0: a
slice_backward), and detach_copy's is not implemented in PyTorch: its result requires grad and its
backward raises.
"""
from __future__ import annotations

from ...backends.meta import MetaArray
from ...shapes import normalize_dim
from ..registry import defop, get_info
from ..samples import SampleInput, make_arg
from .indexing import slice_backward
from . import indexing, join, strided, view  # noqa: F401 — registers the view ops copied below


def _copied(out):
    """A contiguous copy of a view op's result (each piece of a Tensor[] result)."""
    if isinstance(out, (tuple, list)):
        return type(out)(o.copy() for o in out)
    return out.copy()


def _copy_of(view_name, *, schema=None, adapt=None, samples=None, torch=None):
    """The op `<view_name>_copy`: the view op's declaration, its result copied. `schema` replaces the
    view's where PyTorch's copy variant takes other arguments (split_copy's int split_size), `adapt`
    turning those into the view kernel's (and `samples` then its own); `torch` is how the reference script
    calls PyTorch's op."""
    info = get_info(view_name)
    name = f"{view_name}_copy"
    schema = schema or f"{name}{str(info.entry.schema)[len(view_name):]}"
    adapt = adapt or (lambda *args: args)
    kernel, meta = info.kernel, info.meta
    return defop(
        schema,
        kernel=lambda xp, *args: _copied(kernel(xp, *adapt(*args))),
        meta=lambda *args: meta(*adapt(*args)),
        grads=info.grads, backward_name=[f"{n}_copy" for n in info.backward_names],
        supports_complex=info.supports_complex,     # (the view's own kernel, copied)
        overload=None if info.overload is None else lambda *args: info.overload(*adapt(*args)),
        samples=samples or info.samples, gradgrad=info.gradgrad, torch=torch or f"torch.{name}",
        doc=f"{view_name}, as a new tensor (contiguous, owning its memory) rather than a view.")


view_copy = _copy_of("view")
permute_copy = _copy_of("permute")
expand_copy = _copy_of("expand")
transpose_copy = _copy_of("transpose")
t_copy = _copy_of("t")
squeeze_copy = _copy_of("squeeze", torch="lambda x, dim=None: torch.squeeze_copy(x) if dim is None else "
                                         "torch.squeeze_copy(x, dim)")
unsqueeze_copy = _copy_of("unsqueeze")
select_copy = _copy_of("select")
slice_copy = _copy_of("slice")
split_with_sizes_copy = _copy_of("split_with_sizes")
unbind_copy = _copy_of("unbind")
unfold_copy = _copy_of("unfold")
alias_copy = _copy_of("alias")
as_strided_copy = _copy_of("as_strided")
# PyTorch's split_copy takes one size (split_copy.Tensor); its sizes form is split_with_sizes_copy
split_copy = _copy_of("split", schema="split_copy(Tensor self, SymInt split_size, int dim=0) -> Tensor[]",
                      adapt=lambda self, split_size, dim: (self, [split_size], dim),
                      samples=lambda op: [
                          SampleInput("(5,4) size 2", make_arg((5, 4), key=(op, 0)), 2),
                          SampleInput("(5,4) size 3 dim 1", make_arg((5, 4), key=(op, 1)), 3, 1),
                          SampleInput("T (4,3) size 7 (one piece) dim -1",
                                      make_arg((4, 3), key=(op, 2), transposed=True), 7, dim=-1)])


def _narrowed(shape, dim, start, length):
    """(dim, start) normalised, after narrow's checks and messages."""
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, len(shape))
    size = shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start %= size if size else 1
    if length < 0 or start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return d, start


def _narrow_copy_kernel(xp, self, dim, start, length):
    d, start = _narrowed(self.shape, dim, start, length)
    return self[(slice(None),) * d + (slice(start, start + length),)].copy()


def _narrow_copy_meta(self, dim, start, length):
    d, _ = _narrowed(self.shape, dim, start, length)
    return MetaArray(self.shape[:d] + (length,) + self.shape[d + 1:], self.dtype)


def _narrow_copy_grad(grad, self_shape, dim, start, length):
    d, start = _narrowed(tuple(self_shape), dim, start, length)
    return slice_backward(grad, list(self_shape), d, start, start + length, 1)


narrow_copy = defop(
    "narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
    supports_complex=True, kernel=_narrow_copy_kernel, meta=_narrow_copy_meta, grads={"self": _narrow_copy_grad},
    samples=lambda op: [SampleInput("(4,3) 0,1,2", make_arg((4, 3), key=(op, 0)), 0, 1, 2),
                        SampleInput("(4,3) -1,-2,2", make_arg((4, 3), key=(op, 1)), -1, -2, 2),
                        SampleInput("T (3,4) 1,0,0", make_arg((3, 4), key=(op, 2), transposed=True), 1, 0, 0)],
    torch="torch.narrow_copy",
    doc="self[..., start:start+length, ...] along dim, as a new tensor (NarrowCopyBackward0).")

def _detach_copy_not_implemented(grad):
    raise RuntimeError("derivative for aten::detach_copy is not implemented")


detach_copy = defop(
    "detach_copy(Tensor self) -> Tensor",
    kernel=lambda xp, self: self.copy(), meta=lambda self: MetaArray(self.shape, self.dtype), supports_complex=True,
    # derivatives.yaml leaves detach_copy out, so PyTorch records a NotImplemented node: the result
    # requires grad, and a backward through it raises
    grads={"self": _detach_copy_not_implemented}, backward_name="NotImplemented",
    differentiable=False, gradgrad=False,
    # (a sample without grad: a backward through it raises; test_ops_shape checks that it does)
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0), requires_grad=False))],
    torch="torch.detach_copy",
    doc="A copy of self; as in PyTorch its result records a node whose backward is not implemented.")
