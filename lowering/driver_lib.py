"""numpy implementations of the ``kn.*`` helpers that node rules emit, for programs run by the
LLVM backend's Python driver (the Numba backend uses ``lowering/kernels.py`` instead).

Each is one numpy call into compiled C (BLAS for the matmuls), so a driver program reaches no
Numba at all."""
import numpy as np


def transposed(x, perm):
    return np.ascontiguousarray(np.transpose(x, perm))


def as3(x, perm, b, m, k):
    """``x`` transposed by ``perm`` and viewed as (batch, rows, cols), contiguous."""
    return np.ascontiguousarray(np.transpose(x, perm)).reshape((b, m, k))


def batched_matmul_blas(a, b, zero):
    return np.matmul(a, b)


def batched_matmul_loop(a, b, zero):
    # Integer matmul wraps like XLA's; bool accumulates as or-of-ands.
    if a.dtype == np.bool_:
        return np.matmul(a.astype(np.int64), b.astype(np.int64)) != 0
    return np.matmul(a, b).astype(a.dtype, copy=False)
