"""Entry points to ``vmath`` for generated kernels: ordinary (not Numba-inlined) functions,
compiled once and kept in Numba's disk cache.

Numba-level ``inline='always'`` re-typed and re-lowered a vmath body inside every kernel
that used it (about 0.4 s of compile per use, measured); called as plain functions they
are compiled once, and LLVM still inlines and vectorizes them when it links a kernel
(run time unchanged, measured on selu).
"""
import numba

from . import vmath

for _name in vmath.__all__:
    globals()[_name] = numba.njit(cache=True, nogil=True, error_model="numpy")(getattr(vmath, _name).py_func)

__all__ = list(vmath.__all__)
