"""CPU lowering of sort and top_k (see nodes.py for the rule signature).

Every rule moves the working axis last and views the operands as (rows, n) rows, which the
kernels of sort_kernels.py (``sk`` in generated code) loop over.
"""
import numpy as np

from numjax.lax.sorting import sort_p, top_k_p

from .nodes import NODE_RULES, transposed_src


# ---------------------------------------------------------------- code generation

def _prod_src(gen, sizes):
    return " * ".join(gen.dim(s) for s in sizes) or "1"


def _to_rows(gen, v, axis, lines):
    """Source of a contiguous (rows, n) view of ``v`` with ``axis`` last."""
    shape, nd = v.aval.shape, v.aval.ndim
    src = gen.name(v)
    if axis != nd - 1:
        perm = tuple(d for d in range(nd) if d != axis) + (axis,)
        src = transposed_src(src, perm)
    rows = _prod_src(gen, [s for d, s in enumerate(shape) if d != axis])
    t = gen.tmp("rows")
    lines.append(f"{t} = np.ascontiguousarray({src}).reshape(({rows}, {gen.dim(shape[axis])}))")
    return t


def _from_rows(gen, res, out, axis, lines):
    """Assigns ``out`` from (rows, k) source ``res`` with the last axis moved back to ``axis``."""
    shape, nd = out.aval.shape, out.aval.ndim
    moved = tuple(s for d, s in enumerate(shape) if d != axis) + (shape[axis],)
    src = f"{res}.reshape({gen.shape_src(moved)})"
    if axis != nd - 1:
        perm = tuple(d for d in range(nd) if d != axis) + (axis,)
        inv = tuple(int(i) for i in np.argsort(perm))
        src = transposed_src(src, inv)
    lines.append(f"{gen.name(out)} = {src}")


def _key_call(dtype, rows):
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.float64):
        return f"sk.sort_key_float({rows}, {rows}.view(np.int{8 * dtype.itemsize})"
    if dtype == np.bool_:
        return f"sk.sort_key_int({rows}.astype(np.uint8)"
    if dtype.kind in "iu":
        return f"sk.sort_key_int({rows}"
    raise NotImplementedError(f"sorting {dtype.name} keys has no Numba CPU lowering")


def _keys(gen, rows, v, canonical, descending, lines):
    """Source of the integer keys of ``rows``, and the (signed, bits) arguments sorting them."""
    dt = v.aval.dtype
    k = gen.tmp("key")
    lines.append(f"{k} = {_key_call(dt, rows)}, {canonical}, {descending})")
    return k, f"{dt.kind not in 'ub'}, {32 if dt.itemsize <= 4 else 64}"


def _permutation(gen, rows, keyvars, canonical, descending, lines):
    """Source of the stable (rows, n) permutation ordering rows by the keys, first key first."""
    keys = [_keys(gen, r, v, canonical, descending, lines) for r, v in zip(rows, keyvars)]
    perm = gen.tmp("perm")
    k, flags = keys[-1]
    lines.append(f"{perm} = sk.sort_argsort_rows({k}, {flags})")
    for k, flags in reversed(keys[:-1]):
        lines.append(f"{perm} = sk.sort_refine_rows({k}, {perm}, {flags})")
    return perm


def _sort(gen, eqn):
    axis, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
    lines = []
    rows = [_to_rows(gen, v, axis, lines) for v in eqn.invars]
    perm = _permutation(gen, rows[:num_keys], eqn.invars[:num_keys], True, False, lines)
    for r, out in zip(rows, eqn.outvars):
        t = gen.tmp("sorted")
        lines.append(f"{t} = sk.sort_take_rows({r}, {perm})")
        _from_rows(gen, t, out, axis, lines)
    return lines


def _top_k(gen, eqn):
    x = eqn.invars[0]
    k, axis = eqn.params["k"], eqn.params["axis"]
    values, indices = eqn.outvars
    lines = []
    rows = _to_rows(gen, x, axis, lines)
    perm = _permutation(gen, [rows], [x], False, True, lines)
    first = gen.tmp("topk")
    lines.append(f"{first} = np.ascontiguousarray({perm}[:, :{k}])")
    vals = gen.tmp("topv")
    lines.append(f"{vals} = sk.sort_take_rows({rows}, {first})")
    _from_rows(gen, vals, values, axis, lines)
    _from_rows(gen, f"{first}.astype(np.int32)", indices, axis, lines)
    return lines


NODE_RULES.update({sort_p: _sort, top_k_p: _top_k})
