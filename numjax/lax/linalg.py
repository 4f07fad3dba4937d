"""Contractions: dot_general (matmul, batched matmul, tensordot all lower to it)."""
import numpy as np

from numjax.array import c_contiguous as _c_contiguous

from .. import dtypes
from ..array import Array, to_numpy
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
        dt = lhs.dtype
    return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)


def dot_general_numpy(lv, rv, dimension_numbers, out_dtype):
    (lc, rc), (lb, rb) = dimension_numbers
    lfree = [i for i in range(lv.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rv.ndim) if i not in rc and i not in rb]
    nb = int(np.prod([lv.shape[i] for i in lb], dtype=np.int64))
    nc = int(np.prod([lv.shape[i] for i in lc], dtype=np.int64))
    l2 = lv.transpose(list(lb) + lfree + list(lc)).reshape(nb, -1, nc)
    r2 = rv.transpose(list(rb) + list(rc) + rfree).reshape(nb, nc, -1)
    acc = np.result_type(lv.dtype, rv.dtype)
    out = np.matmul(l2.astype(acc, copy=False), r2.astype(acc, copy=False))
    shape = [lv.shape[i] for i in lb] + [lv.shape[i] for i in lfree] + [rv.shape[i] for i in rfree]
    return out.reshape(shape).astype(out_dtype, copy=False)


def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                      out_sharding=None):
    lv, rv = to_numpy(lhs), to_numpy(rhs)
    dt = lv.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    out = dot_general_numpy(lv, rv, dimension_numbers, dt)
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


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    la, ra = get_aval(lhs), get_aval(rhs)
    if la.dtype != ra.dtype:
        raise TypeError(f"dot_general requires operands of the same dtype, got {la.dtype.name} "
                        f"and {ra.dtype.name}.")
    pet = dtypes.canonicalize_dtype(preferred_element_type or la.dtype)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                              preferred_element_type=pet, out_sharding=None)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    la, ra = get_aval(lhs), get_aval(rhs)
    if la.ndim in (1, 2) and ra.ndim in (1, 2) and la.shape[-1] == ra.shape[0]:
        return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)
    raise TypeError(f"Incompatible shapes for dot: got {la.shape} and {ra.shape}.")


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad  # noqa: E402


def _dot_general_jvp(primals, tangents, **params):
    lhs, rhs = primals
    tl, tr = tangents
    out = dot_general_p.bind(lhs, rhs, **params)
    t_out = ad.Zero(get_aval(out))
    if type(tl) is not ad.Zero:
        t_out = ad.add_tangents(t_out, dot_general_p.bind(tl, rhs, **params))
    if type(tr) is not ad.Zero:
        t_out = ad.add_tangents(t_out, dot_general_p.bind(lhs, tr, **params))
    return out, t_out


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
        res = _dot_or_scale(ct, rhs, ((ct_rf, tuple(rfree)), (ct_b, tuple(rb))), kw)
        rc_sorted = sorted(range(len(rc)), key=lambda k: rc[k])
        order = list(lb) + lfree + [lc[k] for k in rc_sorted]
        res = transpose(res, tuple(int(i) for i in np.argsort(order)))
        outs[0] = _cast(res, lhs_aval.dtype)
    if ad.is_undefined(rhs):
        res = _dot_or_scale(lhs, ct, ((tuple(lfree), ct_lf), (tuple(lb), ct_b)), kw)
        lc_sorted = sorted(range(len(lc)), key=lambda k: lc[k])
        order = list(rb) + [rc[k] for k in lc_sorted] + rfree
        res = transpose(res, tuple(int(i) for i in np.argsort(order)))
        outs[1] = _cast(res, rhs_aval.dtype)
    return outs


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


ad.jvp_rules[dot_general_p] = _dot_general_jvp
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
