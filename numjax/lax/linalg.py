"""Contractions: dot_general (matmul, batched matmul, tensordot all lower to it)."""
import numpy as np

from numjax.array import c_contiguous as _c_contiguous

from .. import dtypes
from ..array import Array, to_numpy
from ..blas_threads import call_limited
from ..core import ShapedArray, get_aval
from ..jaxpr import param_printers
from ._base import make_primitive


def _dot_general_shape(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    for a, b in zip(lc, rc):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"dot_general requires contracting dimensions to have the same shape, "
                            f"got {tuple(lhs.shape[i] for i in lc)} and {tuple(rhs.shape[i] for i in rc)}.")
    for a, b in zip(lb, rb):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"dot_general requires lhs batch dimensions and rhs batch dimensions to "
                            f"have the same shape, got {tuple(lhs.shape[i] for i in lb)} and "
                            f"{tuple(rhs.shape[i] for i in rb)}.")
    batch = [lhs.shape[i] for i in lb]
    lfree = [s for i, s in enumerate(lhs.shape) if i not in lc and i not in lb]
    rfree = [s for i, s in enumerate(rhs.shape) if i not in rc and i not in rb]
    return tuple(batch + lfree + rfree)


def _dot_general_abstract(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                          out_sharding=None):
    shape = _dot_general_shape(lhs, rhs, dimension_numbers)
    if preferred_element_type is not None:
        dt = np.dtype(preferred_element_type)
    else:
        dt = _dot_result_dtype(lhs.dtype, rhs.dtype)
    return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)


def dot_general_numpy(lv, rv, dimension_numbers, out_dtype):
    (lc, rc), (lb, rb) = dimension_numbers
    lfree = [i for i in range(lv.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rv.ndim) if i not in rc and i not in rb]
    size = lambda v, dims: int(np.prod([v.shape[i] for i in dims], dtype=np.int64))  # noqa: E731
    # Explicit sizes, not -1: a zero-size operand leaves -1 undetermined.
    nb, nc = size(lv, lb), size(lv, lc)
    l2 = lv.transpose(list(lb) + lfree + list(lc)).reshape(nb, size(lv, lfree), nc)
    r2 = rv.transpose(list(rb) + list(rc) + rfree).reshape(nb, nc, size(rv, rfree))
    acc = np.result_type(lv.dtype, rv.dtype)
    # Infinities times zeros give NaNs, as in XLA, without numpy's RuntimeWarning.
    with np.errstate(all="ignore"):
        out = np.matmul(l2.astype(acc, copy=False), r2.astype(acc, copy=False))
        if out.dtype.kind in "fc":
            # XLA's sums start from +0, so a zero result is +0 (BLAS may give -0 from -0 terms)
            out += out.dtype.type(0)
    shape = [lv.shape[i] for i in lb] + [lv.shape[i] for i in lfree] + [rv.shape[i] for i in rfree]
    return out.reshape(shape).astype(out_dtype, copy=False)


def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                      out_sharding=None):
    lv, rv = to_numpy(lhs), to_numpy(rhs)
    dt = _dot_result_dtype(lv.dtype, rv.dtype) if preferred_element_type is None else np.dtype(preferred_element_type)
    out = call_limited(dot_general_numpy, lv, rv, dimension_numbers, dt)
    weak = getattr(lhs, "weak_type", False) and getattr(rhs, "weak_type", False)
    return Array(_c_contiguous(out), weak)


dot_general_p = make_primitive("dot_general", _dot_general_impl, _dot_general_abstract)


def _print_dot_general(p):
    (lc, rc), (lb, rb) = p["dimension_numbers"]
    # JAX prints each dimension group as a list inside the tuple structure.
    dn = (([*lc], [*rc]), ([*lb], [*rb]))
    out = {"dimension_numbers": dn}
    if p.get("precision") is not None:
        out["precision"] = p["precision"]
    out["preferred_element_type"] = p["preferred_element_type"]
    return out


param_printers[dot_general_p] = _print_dot_general


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    la, ra = get_aval(lhs), get_aval(rhs)
    result = _dot_result_dtype(la.dtype, ra.dtype)
    if preferred_element_type is not None:
        preferred = np.dtype(dtypes.check_user_dtype(preferred_element_type, "dot"))
        result = _upcast(result, preferred)
    if out_sharding is not None:
        from ..sharding_types import requested_sharding
        out_sharding = requested_sharding(out_sharding)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                              preferred_element_type=result, out_sharding=out_sharding)


def _precision_rank(dt):
    """XLA's order of operand types (HigherPrecisionType): complex, then exponent range, then
    mantissa bits, then width, then signed over unsigned.  The higher one is a mixed product's
    result type."""
    real = np.dtype(dtypes.finfo(dt).dtype) if dtypes.kind(dt) == "c" else np.dtype(dt)
    floating = dtypes.kind(real) == "f"
    info = dtypes.finfo(real) if floating else None
    width = 1 if real == np.bool_ else dtypes.itemsize_bits(real)
    return (dtypes.kind(dt) == "c", info.maxexp if floating else -1, info.nmant if floating else -1,
            width, dtypes.kind(real) != "u")


def _dot_result_dtype(lhs_dtype, rhs_dtype):
    lr, rr = _precision_rank(lhs_dtype), _precision_rank(rhs_dtype)
    if lr == rr and lhs_dtype != rhs_dtype:
        raise TypeError(f"lax.dot_general argument type error: {np.dtype(lhs_dtype).name}, "
                        f"{np.dtype(rhs_dtype).name}: neither type holds the other's values; cast one "
                        "operand to the other's dtype first.")
    return np.dtype(lhs_dtype if lr >= rr else rhs_dtype)


def _upcast(result, preferred):
    # preferred_element_type may widen an integer result, never narrow it (floats may go either way)
    width = lambda dt: _precision_rank(dt)[3]   # noqa: E731
    if preferred != result and dtypes.kind(result) != "f" and width(preferred) < width(result):
        raise TypeError("`preferred_element_type` must not be narrower than the original type, got "
                        f"preferred_element_type of {preferred.name} for result type of {result.name}.")
    return preferred


def dot(lhs, rhs, precision=None, preferred_element_type=None, *, dimension_numbers=None, out_sharding=None):
    la, ra = get_aval(lhs), get_aval(rhs)
    if dimension_numbers is None:
        if not (la.ndim in (1, 2) and ra.ndim in (1, 2) and la.shape[-1] == ra.shape[0]):
            raise ValueError("jax.lax.dot: dimension_numbers must be specified when not performing simple "
                             "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                             f"lhs_shape={la.shape} rhs_shape={ra.shape}. The last axis of lhs must match the "
                             "first axis of rhs: use jnp.dot/jnp.matmul for broadcasting products, or pass "
                             "dimension_numbers (as lax.dot_general takes them).")
        dimension_numbers = (((la.ndim - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad  # noqa: E402


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers, precision=None,
                           preferred_element_type=None, out_sharding=None):
    from .shape import transpose
    (lc, rc), (lb, rb) = dimension_numbers
    if type(ct) is ad.Zero:
        return [None, None]
    lhs_aval = lhs.aval if ad.is_undefined(lhs) else get_aval(lhs)
    rhs_aval = rhs.aval if ad.is_undefined(rhs) else get_aval(rhs)
    nb = len(lb)
    lfree = [i for i in range(lhs_aval.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rhs_aval.ndim) if i not in rc and i not in rb]
    ct_b = tuple(range(nb))
    ct_lf = tuple(range(nb, nb + len(lfree)))
    ct_rf = tuple(range(nb + len(lfree), nb + len(lfree) + len(rfree)))
    kw = dict(precision=precision, preferred_element_type=preferred_element_type, out_sharding=out_sharding)
    outs = [None, None]
    if ad.is_undefined(lhs):
        rc_sorted = sorted(range(len(rc)), key=lambda k: rc[k])
        order = list(lb) + lfree + [lc[k] for k in rc_sorted]
        res = _dot_or_scale(ct, rhs, ((ct_rf, tuple(rfree)), (ct_b, tuple(rb))), _typed_like(kw, lhs_aval, order, _mesh(ct), _mesh(rhs_aval)))
        res = transpose(res, tuple(int(i) for i in np.argsort(order)))
        outs[0] = _cast(res, lhs_aval.dtype)
    if ad.is_undefined(rhs):
        lc_sorted = sorted(range(len(lc)), key=lambda k: lc[k])
        order = list(rb) + [rc[k] for k in lc_sorted] + rfree
        res = _dot_or_scale(lhs, ct, ((tuple(lfree), ct_lf), (tuple(lb), ct_b)), _typed_like(kw, rhs_aval, order, _mesh(ct), _mesh(lhs_aval)))
        res = transpose(res, tuple(int(i) for i in np.argsort(order)))
        outs[1] = _cast(res, rhs_aval.dtype)
    return outs


def _typed_like(kw, aval, order, *meshes):
    """``kw`` asking, when the operand's type carries a sharding, for the cotangent to have it
    (before the transpose by ``order``), as JAX's transpose rule does: a contraction over a
    sharded dimension would otherwise be ambiguous."""
    s = aval._sharding
    from ..sharding import NamedSharding, PartitionSpec
    if s is None:   # replicated, when the other operands are typed (then the mesh is theirs)
        mesh = next((m for m in meshes if m is not None), None)
        if mesh is None:
            return kw
        s = NamedSharding(mesh, PartitionSpec())
    spec = tuple(s.spec) + (None,) * (aval.ndim - len(s.spec))
    return dict(kw, out_sharding=NamedSharding(s.mesh, PartitionSpec(*(spec[d] for d in order))))


def _mesh(x):
    s = (x if isinstance(x, ShapedArray) else get_aval(x))._sharding
    return None if s is None else s.mesh


def _dot_or_scale(a, b, dimension_numbers, kw):
    # The transpose of a full contraction (vector . vector) is a scalar times a vector: JAX
    # emits a dot_general with a rank-0 operand there, which numjax's Numba lowering cannot
    # compile yet, so that case is emitted as the (numerically identical) broadcast product.
    from .elementwise import mul
    from .shape import broadcast
    (ca, _), (ba, _) = dimension_numbers
    a_aval, b_aval = get_aval(a), get_aval(b)
    if ca or ba or (a_aval.ndim and b_aval.ndim):
        return dot_general_p.bind(a, b, dimension_numbers=dimension_numbers, **kw)
    dt = np.dtype(kw.get("preferred_element_type") or a_aval.dtype)
    a, b = _cast(a, dt), _cast(b, dt)
    if not a_aval.ndim:
        return mul(broadcast(a, b_aval.shape), b) if b_aval.ndim else mul(a, b)
    return mul(a, broadcast(b, a_aval.shape))


def _cast(x, dtype):
    from .elementwise import convert_element_type
    return x if get_aval(x).dtype == dtype else convert_element_type(x, dtype)


ad.defbilinear(dot_general_p)
ad.transpose_rules[dot_general_p] = _dot_general_transpose


# ---------------------------------------------------------------- batching rules
from ..interpreters import batching  # noqa: E402


def _dot_general_batch(vals, dims, *, dimension_numbers, **params):
    # One batched matmul: a batched operand's batch axis becomes a dot_general batch
    # dimension (both batched) or an extra free dimension (one batched).
    (lhs, rhs), (ld, rd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
    if ld is not batching.not_mapped and rd is not batching.not_mapped:
        lhs, rhs = batching.moveaxis(lhs, ld, 0), batching.moveaxis(rhs, rd, 0)
        dn = ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb)))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), 0
    if ld is not batching.not_mapped:
        lhs = batching.moveaxis(lhs, ld, 0)
        dn = ((shift(lc), rc), (shift(lb), rb))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), len(lb)
    rhs = batching.moveaxis(rhs, rd, 0)
    dn = ((lc, shift(rc)), (lb, shift(rb)))
    n_lfree = get_aval(lhs).ndim - len(lc) - len(lb)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), len(lb) + n_lfree


batching.batch_rules[dot_general_p] = _dot_general_batch


# ================================================================ factorizations (jax.lax.linalg)
# Each primitive takes (..., m, n) operands with any leading batch dimensions.  Eager
# implementations run LAPACK through linalg_lapack, one matrix at a time: JAX's routines, so
# a failed factorization gives NaNs and a singular one infinities, never an exception.

from .. import core as _core  # noqa: E402
from . import linalg_lapack as lapack  # noqa: E402


def _check_matrix(name, aval, square=False):
    if aval.ndim < 2:
        raise ValueError(f"Argument to {name} must have shape [..., m, n], got {aval.shape}.")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {aval.shape}.")
    if dtypes.kind(aval.dtype) not in "fc":
        raise TypeError(f"{name} requires a floating or complex operand, got {aval.dtype.name}.")


LAPACK_DTYPES = tuple(map(np.dtype, (np.float32, np.float64, np.complex64, np.complex128)))


def _real_dtype(dtype):
    return np.finfo(dtype).dtype


def _on_stacks(fn, operands, out_avals, *args):
    """``fn`` (linalg_lapack: (batch, m, n) stacks -> arrays) over the operands' leading batch
    dims flattened to one, its results reshaped to ``out_avals``; an empty batch or empty
    matrices go through ``fn`` too (it returns empty or identity-padded results)."""
    values = [to_numpy(x) for x in operands]
    if values[0].dtype not in LAPACK_DTYPES:
        # float16 (and the other narrow floats): computed in float32 and rounded back, as the
        # jit backends compute them (lowering/low_precision.py).
        values = [v.astype(np.float32) for v in values]
    nb = int(np.prod(values[0].shape[:-2], dtype=np.int64))
    stacks = [np.ascontiguousarray(v).reshape((nb,) + v.shape[-2:]) for v in values]
    outs = fn(*stacks, *args)
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [Array(_c_contiguous(np.asarray(o).reshape(av.shape).astype(av.dtype, copy=False)), False)
            for o, av in zip(outs, out_avals)]


# ---------------------------------------------------------------- cholesky

def _cholesky_impl(x):
    return _on_stacks(lapack.cholesky, [x], [_cholesky_abstract(get_aval(x))])[0]


def _cholesky_abstract(x):
    _check_matrix("cholesky", x, square=True)
    return ShapedArray(x.shape, x.dtype)


cholesky_p = make_primitive("cholesky", _cholesky_impl, _cholesky_abstract)


# ---------------------------------------------------------------- lu

def _lu_impl(x):
    return _on_stacks(lapack.lu, [x], _lu_abstract(get_aval(x)))


def _lu_abstract(x):
    _check_matrix("lu", x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    return [ShapedArray(x.shape, x.dtype), ShapedArray(batch + (min(m, n),), np.int32),
            ShapedArray(batch + (m,), np.int32)]


lu_p = make_primitive("lu", _lu_impl, _lu_abstract, multiple_results=True)


# ---------------------------------------------------------------- qr

def _qr_impl(x, *, pivoting=False, full_matrices=True, use_magma=None):
    avals = _qr_abstract(get_aval(x), pivoting=pivoting, full_matrices=full_matrices)
    return _on_stacks(lapack.qr, [x], avals, bool(full_matrices))


def _qr_abstract(x, *, pivoting=False, full_matrices=True, use_magma=None):
    _check_matrix("qr", x)
    if pivoting:
        raise NotImplementedError("qr with pivoting=True")
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]


qr_p = make_primitive("qr", _qr_impl, _qr_abstract, multiple_results=True)


# ---------------------------------------------------------------- svd

def _svd_impl(x, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    avals = _svd_abstract(get_aval(x), full_matrices=full_matrices, compute_uv=True,
                          subset_by_index=subset_by_index)
    outs = _on_stacks(lapack.svd, [x], avals, bool(full_matrices), avals[0].dtype)
    return outs if compute_uv else outs[:1]


def _svd_abstract(x, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    _check_matrix("svd", x)
    if subset_by_index is not None:
        raise NotImplementedError("svd with subset_by_index")
    *batch, m, n = x.shape
    k = min(m, n)
    s = ShapedArray((*batch, k), _real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    um, vn = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, um), x.dtype), ShapedArray((*batch, vn, n), x.dtype)]


svd_p = make_primitive("svd", _svd_impl, _svd_abstract, multiple_results=True)


# ---------------------------------------------------------------- eigh

def _eigh_impl(x, *, lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None):
    avals = _eigh_abstract(get_aval(x), subset_by_index=subset_by_index)
    return _on_stacks(lapack.eigh, [x], avals, bool(lower), avals[1].dtype)


def _eigh_abstract(x, *, lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None):
    _check_matrix("eigh", x, square=True)
    if subset_by_index is not None:
        raise NotImplementedError("eigh with subset_by_index")
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1], _real_dtype(x.dtype))]


eigh_p = make_primitive("eigh", _eigh_impl, _eigh_abstract, multiple_results=True)


# ---------------------------------------------------------------- triangular_solve

def _triangular_solve_impl(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                           unit_diagonal=False):
    aval = _triangular_solve_abstract(get_aval(a), get_aval(b), left_side=left_side)
    return _on_stacks(lapack.triangular_solve, [a, b], [aval], bool(left_side),
                      bool(lower), bool(transpose_a), bool(conjugate_a), bool(unit_diagonal))[0]


def _triangular_solve_abstract(a, b, *, left_side=False, lower=False, transpose_a=False,
                               conjugate_a=False, unit_diagonal=False):
    _check_matrix("triangular_solve", a, square=True)
    if b.ndim < 2:
        raise TypeError(f"triangular_solve requires b to have rank at least 2, got shape {b.shape}.")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve requires a and b to have the same dtype, got "
                        f"{a.dtype.name} and {b.dtype.name}.")
    if a.shape[:-2] != b.shape[:-2]:
        raise TypeError(f"triangular_solve requires both arguments to have the same batch "
                        f"dimensions, got {a.shape} and {b.shape}.")
    common = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != common:
        side = "left" if left_side else "right"
        raise TypeError(f"triangular_solve with {side}_side={left_side} requires a of shape "
                        f"[..., {common}, {common}] for b of shape {b.shape}, got {a.shape}.")
    return ShapedArray(b.shape, b.dtype)


triangular_solve_p = make_primitive("triangular_solve", _triangular_solve_impl,
                                    _triangular_solve_abstract)


# ---------------------------------------------------------------- public functions

def cholesky(x, *, symmetrize_input=True):
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


def lu(x):
    lu_, pivots, permutation = lu_p.bind(x)
    return lu_, pivots, permutation


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    q, r = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    return q, r


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    out = svd_p.bind(x, full_matrices=full_matrices, compute_uv=compute_uv,
                     subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv:
        s, u, vt = out
        return u, s, vt
    return out[0]


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None):
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=lower, sort_eigenvalues=sort_eigenvalues,
                       subset_by_index=subset_by_index, algorithm=None)
    return v, w


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    conjugate_a = conjugate_a and dtypes.kind(get_aval(a).dtype) == "c"
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation (int32) that the row swaps ``pivots`` describe."""
    if isinstance(pivots, _core.Tracer):
        from ..scipy.linalg import _pivots_to_permutation
        return _pivots_to_permutation(pivots, permutation_size)
    v = to_numpy(pivots)
    flat = v.reshape(int(np.prod(v.shape[:-1], dtype=np.int64)), v.shape[-1]) if v.ndim else v.reshape(1, 0)
    out = np.stack([lapack.pivots_to_permutation(p, permutation_size) for p in flat]) if len(flat) else \
        np.zeros((0, permutation_size), np.int32)
    return Array(out.reshape(v.shape[:-1] + (permutation_size,)), False)


# ---------------------------------------------------------------- matrix helpers over lax

def _T(x):
    nd = get_aval(x).ndim
    from .shape import transpose
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _conj(x):
    if dtypes.kind(get_aval(x).dtype) != "c":
        return x
    from ..numpy._elementwise import conj_p
    return conj_p.bind(x)


def _H(x):
    return _conj(_T(x))


def symmetrize(x):
    from .elementwise import add, div
    from .shape import broadcast
    aval = get_aval(x)
    two = Array(np.asarray(2, aval.dtype), False)
    return div(add(x, _H(x)), broadcast(two, aval.shape))


def _matmul(a, b):
    """(..., m, k) @ (..., k, n) with equal batch dims."""
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _mask(shape, k, lower):
    from .elementwise import add, ge, le
    from .shape import broadcasted_iota
    rows = broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = broadcasted_iota(np.int32, shape, len(shape) - 1)
    shifted = add(rows, Array(np.asarray(k, np.int32), False)) if k else rows
    return ge(shifted, cols) if lower else le(shifted, cols)


def _zeros(aval):
    from .shape import broadcast
    z = Array(np.zeros((), aval.dtype), False)
    return broadcast(z, aval.shape) if aval.shape else z


def _tril(x, k=0):
    from .elementwise import select
    aval = get_aval(x)
    return select(_mask(aval.shape, k, True), x, _zeros(aval))


def _triu(x, k=0):
    from .elementwise import select
    aval = get_aval(x)
    return select(_mask(aval.shape, k, False), x, _zeros(aval))


def _eye(dtype, shape):
    """Identity matrices of ``shape`` (..., n, m) in ``dtype``."""
    from .elementwise import convert_element_type, eq
    from .shape import broadcasted_iota
    nd = len(shape)
    same = eq(broadcasted_iota(np.int32, shape, nd - 2), broadcasted_iota(np.int32, shape, nd - 1))
    return convert_element_type(same, dtype)


def _diagonal(x):
    """The main diagonals of (..., n, n) matrices, as (..., n)."""
    from .elementwise import mul
    from .reductions import reduce_sum
    aval = get_aval(x)
    return reduce_sum(mul(x, _eye(aval.dtype, aval.shape)), (aval.ndim - 1,))


def _const_like(x, value):
    from .shape import broadcast
    aval = get_aval(x)
    c = Array(np.asarray(value, aval.dtype), False)
    return broadcast(c, aval.shape) if aval.shape else c


def _permutation_matrix(permutation, dtype):
    """One-hot rows: P[..., i, j] = (permutation[..., i] == j), so P @ x == x[..., permutation, :]."""
    from .elementwise import convert_element_type, eq
    from .shape import broadcast_in_dim, broadcasted_iota
    aval = get_aval(permutation)
    n = aval.shape[-1]
    shape = aval.shape + (n,)
    rows = broadcast_in_dim(permutation, shape, tuple(range(aval.ndim)))
    return convert_element_type(eq(rows, broadcasted_iota(np.int32, shape, aval.ndim)), dtype)


def _pad_last2(x, rows, cols):
    from .shape import pad
    aval = get_aval(x)
    cfg = [(0, 0, 0)] * (aval.ndim - 2) + [(0, rows, 0), (0, cols, 0)]
    return pad(x, Array(np.zeros((), aval.dtype), False), cfg)


def _slice_last2(x, rows, cols):
    from .indexing import slice as lax_slice
    aval = get_aval(x)
    return lax_slice(x, (0,) * aval.ndim, aval.shape[:-2] + (rows, cols))


# ---------------------------------------------------------------- differentiation rules
# The formulas are JAX's (jax/_src/lax/linalg.py), written over numjax.lax.

def _cholesky_jvp(primals, tangents):
    from .elementwise import add, div
    x, = primals
    sigma_dot, = tangents
    L = _tril(cholesky_p.bind(x))
    sigma_dot = ad.instantiate(sigma_dot)
    sigma_dot = div(add(sigma_dot, _H(sigma_dot)), _const_like(sigma_dot, 2))
    # phi(X) = tril(X) with the diagonal halved
    tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
    aval = get_aval(inner)
    phi = div(_tril(inner), add(_const_like(inner, 1), _eye(aval.dtype, aval.shape)))
    return L, _matmul(L, phi)


def _lu_jvp(primals, tangents):
    from .elementwise import add
    a, = primals
    a_dot, = tangents
    lu_, pivots, permutation = lu_p.bind(a)
    aval = get_aval(a)
    *batch, m, n = aval.shape
    k = min(m, n)
    dt = aval.dtype
    x = _matmul(_permutation_matrix(permutation, dt), ad.instantiate(a_dot))
    l = _pad_last2(_tril(_slice_last2(lu_, m, k), -1), 0, m - k)
    l = add(l, _eye(dt, (*batch, m, m)))
    u = _pad_last2(_triu(_slice_last2(lu_, k, n)), n - k, 0)
    if n > k:
        from .shape import pad
        u_eye = pad(_eye(dt, (n - k, n - k)), Array(np.zeros((), dt), False), ((k, 0, 0), (k, 0, 0)))
        from .shape import broadcast
        u = add(u, broadcast(u_eye, tuple(batch)) if batch else u_eye)
    la = triangular_solve(l, x, left_side=True, transpose_a=False, lower=True, unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, transpose_a=False, lower=False)
    lu_dot = add(_matmul(l, _tril(lau, -1)), _matmul(_triu(lau), u))
    zero = lambda v: ad.Zero(ad._tangent_aval(get_aval(v)))  # noqa: E731
    return [lu_, pivots, permutation], [_slice_last2(lu_dot, m, n), zero(pivots), zero(permutation)]


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    from .elementwise import add, sub
    x, = primals
    dx = ad.instantiate(tangents[0])
    q, r = qr_p.bind(x, pivoting=pivoting, full_matrices=False, use_magma=use_magma)
    *_, m, n = get_aval(x).shape
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative")
    dx_rinv = triangular_solve(r, dx)     # dx @ inv(r)
    qt_dx_rinv = _matmul(_H(q), dx_rinv)
    lower = _tril(qt_dx_rinv, -1)
    do = sub(lower, _H(lower))            # skew-symmetric
    if dtypes.kind(get_aval(x).dtype) == "c":
        aval = get_aval(qt_dx_rinv)
        imag_diag = sub(qt_dx_rinv, _as_dtype(_real_part(qt_dx_rinv), aval.dtype))
        from .elementwise import mul
        do = add(do, mul(_eye(aval.dtype, aval.shape), imag_diag))
    dq = add(_matmul(q, sub(do, qt_dx_rinv)), dx_rinv)
    dr = _matmul(sub(qt_dx_rinv, do), r)
    return [q, r], [dq, dr]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    from .elementwise import add, convert_element_type, div, eq, mul, sub
    from .shape import broadcast_in_dim
    A, = primals
    dA = ad.instantiate(tangents[0])
    s, U, Vt = svd_p.bind(A, full_matrices=False, compute_uv=True, subset_by_index=subset_by_index,
                          algorithm=algorithm)
    if compute_uv and full_matrices:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    aval = get_aval(A)
    dt = aval.dtype
    Ut, V = _H(U), _H(Vt)
    s_aval = get_aval(s)
    k = s_aval.shape[-1]
    mat = s_aval.shape[:-1] + (k, k)
    s_row = broadcast_in_dim(s, mat, tuple(range(s_aval.ndim - 1)) + (s_aval.ndim,))   # s[..., None, :]
    s_col = _T(s_row)
    dS = _matmul(_matmul(Ut, dA), V)
    ds = _diagonal(_real_part(dS))
    if not compute_uv:
        return [s], [ds]
    eye_k = _eye(s_aval.dtype, mat)
    s_diffs = mul(add(s_row, s_col), sub(s_row, s_col))
    F = sub(div(_const_like(s_diffs, 1), add(s_diffs, eye_k)), eye_k)
    s_row_c = _as_dtype(s_row, dt)
    dSS = mul(s_row_c, dS)
    SdS = mul(_T(s_row_c), dS)
    s_zeros = convert_element_type(eq(s, _const_like(s, 0)), s_aval.dtype)
    s_inv = sub(div(_const_like(s, 1), add(s, s_zeros)), s_zeros)
    s_inv_mat = mul(broadcast_in_dim(s_inv, mat, tuple(range(s_aval.ndim - 1)) + (s_aval.ndim,)), eye_k)
    half = _const_like(dS, 0.5)
    dUdV_diag = mul(mul(half, sub(dS, _H(dS))), _as_dtype(s_inv_mat, dt))
    Fc = _as_dtype(F, dt)
    dU = _matmul(U, add(mul(Fc, add(dSS, _H(dSS))), dUdV_diag))
    dV = _matmul(V, mul(Fc, add(SdS, _H(SdS))))
    m, n = aval.shape[-2:]
    s_div = _as_dtype(broadcast_in_dim(s, s_aval.shape[:-1] + (max(m, n), k),
                                       tuple(range(s_aval.ndim - 1)) + (s_aval.ndim,)), dt)
    if m > n:
        dAV = _matmul(dA, V)
        dU = add(dU, div(sub(dAV, _matmul(U, _matmul(Ut, dAV))), s_div))
    if n > m:
        dAHU = _matmul(_H(dA), U)
        dV = add(dV, div(sub(dAHU, _matmul(V, _matmul(Vt, dAHU))), s_div))
    return [s, U, Vt], [ds, dU, _H(dV)]


def _as_dtype(x, dtype):
    from .elementwise import convert_element_type
    return x if get_aval(x).dtype == dtype else convert_element_type(x, dtype)


def _real_part(x):
    if dtypes.kind(get_aval(x).dtype) != "c":
        return x
    from ..numpy._elementwise import real_p
    return real_p.bind(x)


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index=None, algorithm=None):
    from .elementwise import add, integer_pow, mul, sub
    from .shape import broadcast_in_dim
    a, = primals
    a_dot = ad.instantiate(tangents[0])
    v, w_real = eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    aval = get_aval(a)
    w = _as_dtype(w_real, aval.dtype)
    eye_n = _eye(aval.dtype, aval.shape)
    nb = aval.ndim - 2
    w_row = broadcast_in_dim(w, aval.shape, tuple(range(nb)) + (nb + 1,))   # w[..., None, :]
    w_col = broadcast_in_dim(w, aval.shape, tuple(range(nb)) + (nb,))       # w[..., :, None]
    Fmat = sub(integer_pow(add(eye_n, sub(w_row, w_col)), -1), eye_n)
    vdag_adot_v = _matmul(_matmul(_H(v), a_dot), v)
    dv = _matmul(v, mul(Fmat, vdag_adot_v))
    dw = _real_part(_diagonal(vdag_adot_v))
    return [v, w_real], [dv, dw]


def _triangular_solve_jvp_a(g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    from .elementwise import neg
    m, n = get_aval(b).shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = _tril(g_a, -k) if lower else _triu(g_a, k)
    g_a = neg(g_a)
    g_a = _T(g_a) if transpose_a else g_a
    g_a = _conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs):
        return triangular_solve(a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    if left_side:
        return a_inverse(_matmul(g_a, ans)) if m > n else _matmul(a_inverse(g_a), ans)
    return a_inverse(_matmul(ans, g_a)) if m < n else _matmul(ans, a_inverse(g_a))


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    ta, tb = tangents
    ans = triangular_solve_p.bind(a, b, **params)
    out = ad.Zero(get_aval(ans))
    if type(ta) is not ad.Zero:
        out = ad.add_tangents(out, _triangular_solve_jvp_a(ta, ans, a, b, **params))
    if type(tb) is not ad.Zero:
        out = ad.add_tangents(out, triangular_solve_p.bind(a, tb, **params))
    return ans, out


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    # Linear in b only (as div is in its numerator).
    assert not ad.is_undefined(a) and ad.is_undefined(b)
    if type(ct) is ad.Zero:
        return [None, None]
    ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                                   conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return [None, ct_b]


ad.jvp_rules[cholesky_p] = _cholesky_jvp
ad.jvp_rules[lu_p] = _lu_jvp
ad.jvp_rules[qr_p] = _qr_jvp
ad.jvp_rules[svd_p] = _svd_jvp
ad.jvp_rules[eigh_p] = _eigh_jvp
ad.jvp_rules[triangular_solve_p] = _triangular_solve_jvp
ad.transpose_rules[triangular_solve_p] = _triangular_solve_transpose


# ---------------------------------------------------------------- batching rules
# Every factorization already takes leading batch dimensions: the vmapped axis moves to the front.

def _front_batch_rule(prim):
    def rule(vals, dims, **params):
        size = batching.axis_size_of(vals, dims)
        vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        out = prim.bind(*vals, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    batching.batch_rules[prim] = rule


for _prim in (cholesky_p, lu_p, qr_p, svd_p, eigh_p, triangular_solve_p):
    _front_batch_rule(_prim)
