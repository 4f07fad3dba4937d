"""Hand-written Numba kernels the generated code calls for non-fusible ops.

They live in a real module with ``cache=True`` so every program and process
reuses one compiled copy per type signature.
"""
import numba
import numpy as np

from .vmath import erf_inv_f32

_njit = numba.njit(cache=True, nogil=True, error_model="numpy")


@_njit
def as3(x, perm, b, m, k):
    """``x`` transposed by ``perm`` and viewed as (batch, rows, cols), contiguous."""
    return np.ascontiguousarray(x.transpose(perm)).reshape((b, m, k))


@_njit
def batched_matmul_blas(a, b, zero):
    # Float and complex matmuls go to BLAS through Numba's np.dot.
    nb, m, _ = a.shape
    n = b.shape[2]
    out = np.empty((nb, m, n), dtype=a.dtype)
    for i in range(nb):
        np.dot(a[i], b[i], out[i])
    return out


@_njit
def batched_matmul_loop(a, b, zero):
    # Integer and bool matmuls: BLAS has none; an i-p-j loop keeps the inner loop contiguous.
    nb, m, k = a.shape
    n = b.shape[2]
    out = np.zeros((nb, m, n), dtype=a.dtype)
    for bi in range(nb):
        for i in range(m):
            for p in range(k):
                aip = a[bi, i, p]
                for j in range(n):
                    out[bi, i, j] += aip * b[bi, p, j]
    return out


@_njit
def cumulative_last(x, kind, reverse):
    """Cumulative sum/prod/max/min (kind 0..3) along the last axis of a 2-D array."""
    rows, n = x.shape
    out = np.empty_like(x)
    for r in range(rows):
        for t in range(n):
            j = n - 1 - t if reverse else t
            v = x[r, j]
            if t > 0:
                prev = out[r, j + 1] if reverse else out[r, j - 1]
                if kind == 0:
                    v = prev + v
                elif kind == 1:
                    v = prev * v
                elif kind == 2:
                    v = prev if (prev > v or prev != prev) else v
                else:
                    v = prev if (prev < v or prev != prev) else v
            out[r, j] = v
    return out


@_njit
def erf_inv_f32_flat(x):
    """Eager float32 erf_inv with the compiled path's formula, so eager and jit agree bitwise."""
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = erf_inv_f32(x[i])
    return out
