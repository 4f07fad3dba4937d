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
