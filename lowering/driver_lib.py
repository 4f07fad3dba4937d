"""numpy implementations of the ``kn.*`` helpers that node rules emit, for programs run by the
LLVM backend's Python driver (the Numba backend uses ``lowering/kernels.py`` instead).

Each is numpy code calling compiled C (BLAS for the matmuls, numpy's sorts, scipy's LAPACK for
the factorizations), so a driver program reaches no Numba at all."""
import numpy as np

from numjax._fp_quiet import quiet, quietly  # noqa: F401  (numpy arithmetic: no FP warnings, as XLA)
from numjax.lax.convolution import conv_numpy as _conv_numpy
from numjax.lax.windowed_reductions import reduce_window_numpy as _reduce_window_numpy

# convolutions (im2col + BLAS) and window reductions: the eager code, inf * 0 and overflow silent
conv_numpy = quietly(_conv_numpy)
reduce_window_numpy = quietly(_reduce_window_numpy)
# The factorizations: LAPACK through scipy, the very functions eager evaluation runs (the
# layouts and workspace sizes of Numba's np.linalg), so all three give the same bits.
from numjax.lax.linalg_lapack import cholesky, eigh, qr, svd  # noqa: F401


def transposed(x, perm):
    return np.ascontiguousarray(np.transpose(x, perm))


def as3(x, perm, b, m, k):
    """``x`` transposed by ``perm`` and viewed as (batch, rows, cols), contiguous."""
    return np.ascontiguousarray(np.transpose(x, perm)).reshape((b, m, k))


@quietly
def batched_matmul_blas(a, b, zero):
    return np.matmul(a, b)


@quietly
def batched_matmul_loop(a, b, zero):
    # Integer matmul wraps like XLA's; bool accumulates as or-of-ands.
    if a.dtype == np.bool_:
        return np.matmul(a.astype(np.int64), b.astype(np.int64)) != 0
    return np.matmul(a, b).astype(a.dtype, copy=False)


# ---------------------------------------------------------------- small Cholesky
# Cholesky of small real matrices, one source for both backends: the LLVM backend's driver
# compiles it as a kernel (driver_nodes.py, the size a constant), the Numba backend runs it
# (linalg_kernels.cholesky_small); with no reassociation or fused multiply-add in either, the
# two agree bit for bit.  LAPACK's potrf through scipy costs microseconds per matrix at these
# sizes.  This loop works on the factor's transpose (row j holds column j of L), so every
# update is a contiguous row operation that vectorizes: u[p, :] -= u[j, p] * row, where row
# is u[j, :] with zeros up to j.  Rows run their full length, a constant (the triangular
# lengths are too short for LLVM's vector loop); what lands below the diagonal is never read
# (the transpose at the end overwrites it).  A pivot that is not positive (or NaN) fails the
# matrix as potrf does: NaN everywhere, as before.  Above 48 LAPACK's blocking wins.
CHOLESKY_MAX_N = 48
CHOLESKY_SOURCE = """\
def KERNEL(nb, a):
    n = {n}
    o = np.empty((nb, {n}, {n}), {dtype})
    row = np.empty(({n}, ), {dtype})
    for q in numba.prange(nb):
        for j in range(n):
            for i in range(n):
                o[q, j, i] = a[q, i, j] if i >= j else 0.0
        ok = True
        for j in range(n):
            if ok:
                d = o[q, j, j]
                if d > 0:
                    r = np.sqrt(d)
                    o[q, j, j] = r
                    for i in range(n):
                        row[i] = o[q, j, i] / r if i > j else 0.0
                    for i in range(j + 1, n):
                        o[q, j, i] = row[i]
                    for p in range(j + 1, n):
                        f = row[p]
                        for i in range(n):
                            o[q, p, i] = o[q, p, i] - f * row[i]
                else:
                    ok = False
        if ok:
            for i in range(n):
                for j in range(i + 1, n):
                    o[q, j, i] = o[q, i, j]
                    o[q, i, j] = 0.0
        else:
            for i in range(n):
                for j in range(n):
                    o[q, i, j] = np.nan
    return (o, )
"""


# ---------------------------------------------------------------- sorting
# Results equal to the Numba backend's stable radix sorts bit for bit: numpy's (SIMD) sorts
# on keys made unique by packing each 32-bit order key with its index, else stable sorts.

def sort(x, axis):
    """``x`` sorted along ``axis`` in JAX's order (NaNs last, -0.0 == 0.0) and stably: equal
    floats have equal bits except signed zeros and NaNs, which are put back in input order."""
    out = np.ascontiguousarray(np.sort(x, axis=axis))
    if x.dtype.kind == "f":
        xm, om = np.moveaxis(x, axis, -1), np.moveaxis(out, axis, -1)
        for tie in (lambda v: v == 0, np.isnan):
            mask = tie(xm)
            if mask.any():        # each row keeps its count: rows match up in C order
                om[tie(om)] = xm[mask]
    return out


def _key32(x, canonical):
    """uint64 keys below 2**32 ordering ``x`` (of at most 32 bits) as JAX's total order does
    (``canonical``: -0.0 == 0.0, all NaNs equal; else the raw IEEE order, as top_k)."""
    if x.dtype == np.float32:
        b = x.view(np.int32)
        key = b ^ ((b >> 31) & np.int32(0x7FFFFFFF))
        if canonical:
            key = np.where(x == 0, np.int32(0), key)
            key = np.where(x != x, np.int32(0x7FC00000), key)
        return (key.view(np.uint32) ^ np.uint32(0x80000000)).astype(np.uint64)
    if x.dtype.kind == "i":
        return (x.astype(np.int64) - np.iinfo(x.dtype).min).astype(np.uint64)
    return x.astype(np.uint64)


def _packed(key):
    """(key << 32) | position along the last axis: distinct values in the stable order."""
    return (key << np.uint64(32)) | np.arange(key.shape[-1], dtype=np.uint64)


def _unpacked(packed):
    return (packed & np.uint64(0xFFFFFFFF)).astype(np.int64)


def _packable(x):
    return x.dtype.itemsize <= 4 and x.dtype.kind in "biuf" and x.shape[-1] < 2 ** 32


def sort_permutation(keys, axis):
    """The stable permutation ordering ``keys`` lexicographically (first key first) along axis."""
    if len(keys) == 1 and _packable(np.moveaxis(keys[0], axis, -1)):
        key = _key32(np.moveaxis(keys[0], axis, -1), True)
        return np.moveaxis(_unpacked(np.sort(_packed(key), axis=-1)), -1, axis)
    perm = np.argsort(keys[-1], axis=axis, kind="stable")   # numpy's order is JAX's
    for key in reversed(keys[:-1]):
        order = np.argsort(np.take_along_axis(key, perm, axis), axis=axis, kind="stable")
        perm = np.take_along_axis(perm, order, axis)
    return perm


def take_along(x, perm, axis):
    return np.ascontiguousarray(np.take_along_axis(x, perm, axis))


def top_k(x, k, axis):
    """The ``k`` largest along ``axis`` in descending raw IEEE order (NaN largest, -0.0 below
    0.0, ties lowest index first) and their int32 indices."""
    x = np.moveaxis(x, axis, -1)
    if _packable(x):
        packed = _packed(np.uint64(0xFFFFFFFF) - _key32(x, False))
        if 0 < k < x.shape[-1]:
            packed = np.partition(packed, k - 1, axis=-1)[..., :k]
        perm = _unpacked(np.sort(packed, axis=-1)[..., :k])
    else:
        key = x
        if x.dtype.kind == "f":
            ity = np.dtype(f"i{x.dtype.itemsize}")
            bits = x.view(ity)
            key = np.where(bits < 0, bits ^ np.iinfo(ity).max, bits)
        perm = np.argsort(~key, axis=-1, kind="stable")[..., :k]
    vals = np.take_along_axis(x, perm, -1)
    return (np.ascontiguousarray(np.moveaxis(vals, -1, axis)),
            np.ascontiguousarray(np.moveaxis(perm.astype(np.int32), -1, axis)))
