"""CPU lowering of sort and top_k (see nodes.py for the rule signature).

Every rule moves the working axis last and views the operands as (rows, n) rows; the Numba
kernels below loop over rows. Keys become integers in JAX's total order (floats by their IEEE
bits), so one stable integer argsort (a radix sort) orders any dtype, NaNs and signed zeros
included. The kernels are attached to ``numjax.lowering.kernels`` (``kn`` in generated code).
"""
import numba
import numpy as np

from . import kernels as _kernels_module
from .nodes import NODE_RULES, transposed_src

_njit = numba.njit(cache=True, nogil=True, error_model="numpy")


# ---------------------------------------------------------------- kernels

@_njit
def sort_key_float(x, bits, canonical, descending):
    """Integer keys, of the type of ``bits`` (the IEEE bits of contiguous float ``x``: int32
    for float32, int64 for float64), in total order (``canonical``: -0.0 == 0.0 and all NaNs
    equal, as sort; otherwise the raw IEEE order, as top_k)."""
    single = bits.itemsize == 4
    nan_bits = np.int64(0x7FC00000) if single else np.int64(0x7FF8000000000000)
    magnitude = np.int64(0x7FFFFFFF) if single else np.int64(0x7FFFFFFFFFFFFFFF)
    flat, flat_bits = x.reshape(-1), bits.reshape(-1)
    out = np.empty(flat.size, bits.dtype)
    for i in range(flat.size):
        v = flat[i]
        if canonical and v != v:
            b = nan_bits
        elif canonical and v == 0:
            b = np.int64(0)
        else:
            b = np.int64(flat_bits[i])
            if b < 0:
                b = b ^ magnitude
        out[i] = ~b if descending else b
    return out.reshape(x.shape)


@_njit
def sort_key_int(x, canonical, descending):
    """Integer keys: the values themselves, bit-inverted for a descending order."""
    return np.invert(x) if descending else x.copy()


@_njit
def _radix_argsort(key, signed, bits):
    """Stable argsort of integer keys of ``bits`` (32 or 64) bits: LSD radix sort on 11-bit
    digits (about 4x faster than a mergesort on a million keys, and much cheaper for Numba
    to compile)."""
    n = key.size
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - bits)
    flip = np.uint64(1) << np.uint64(bits - 1) if signed else np.uint64(0)
    passes = (bits + 10) // 11
    u = np.empty(n, np.uint64)
    count = np.zeros((passes, 2049), np.int64)
    for i in range(n):
        v = (np.uint64(np.int64(key[i])) & mask) ^ flip
        u[i] = v
        for p in range(passes):
            count[p, int((v >> np.uint64(11 * p)) & np.uint64(2047)) + 1] += 1
    idx = np.arange(n)
    u2 = np.empty(n, np.uint64)
    idx2 = np.empty(n, np.int64)
    for p in range(passes):
        shift = np.uint64(11 * p)
        c = count[p]
        if c.max() == n:
            continue   # every key has the same digit here: this pass would not move anything
        for d in range(2048):
            c[d + 1] += c[d]
        for i in range(n):
            d = int((u[i] >> shift) & np.uint64(2047))
            j = c[d]
            c[d] = j + 1
            u2[j] = u[i]
            idx2[j] = idx[i]
        u, u2 = u2, u
        idx, idx2 = idx2, idx
    return idx


@_njit
def sort_argsort_rows(key, signed, bits):
    rows, n = key.shape
    perm = np.empty((rows, n), np.int64)
    for r in range(rows):
        perm[r] = _radix_argsort(key[r], signed, bits)
    return perm


@_njit
def sort_refine_rows(key, perm, signed, bits):
    """Stable re-sort of ``perm`` by a more significant key (least significant key first)."""
    rows, n = key.shape
    out = np.empty((rows, n), np.int64)
    for r in range(rows):
        p = perm[r]
        k = np.empty(n, key.dtype)
        for j in range(n):
            k[j] = key[r, p[j]]
        order = _radix_argsort(k, signed, bits)
        for j in range(n):
            out[r, j] = p[order[j]]
    return out


@_njit
def sort_take_rows(x, idx):
    """out[r, j] = x[r, idx[r, j]]."""
    rows, k = idx.shape
    out = np.empty((rows, k), x.dtype)
    for r in range(rows):
        for j in range(k):
            out[r, j] = x[r, idx[r, j]]
    return out


for _name, _fn in list(globals().items()):
    if _name.startswith("sort_") and isinstance(_fn, numba.core.registry.CPUDispatcher):
        setattr(_kernels_module, _name, _fn)


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
        return f"kn.sort_key_float({rows}, {rows}.view(np.int{8 * dtype.itemsize})"
    if dtype == np.bool_:
        return f"kn.sort_key_int({rows}.astype(np.uint8)"
    if dtype.kind in "iu":
        return f"kn.sort_key_int({rows}"
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
    lines.append(f"{perm} = kn.sort_argsort_rows({k}, {flags})")
    for k, flags in reversed(keys[:-1]):
        lines.append(f"{perm} = kn.sort_refine_rows({k}, {perm}, {flags})")
    return perm


def _sort(gen, eqn):
    axis, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
    lines = []
    rows = [_to_rows(gen, v, axis, lines) for v in eqn.invars]
    perm = _permutation(gen, rows[:num_keys], eqn.invars[:num_keys], True, False, lines)
    for r, out in zip(rows, eqn.outvars):
        t = gen.tmp("sorted")
        lines.append(f"{t} = kn.sort_take_rows({r}, {perm})")
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
    lines.append(f"{vals} = kn.sort_take_rows({rows}, {first})")
    _from_rows(gen, vals, values, axis, lines)
    _from_rows(gen, f"{first}.astype(np.int32)", indices, axis, lines)
    return lines


NODE_RULES.update({"sort": _sort, "top_k": _top_k})
