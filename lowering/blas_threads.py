"""Which compiled programs call BLAS, and so run with its thread count limited.

The limit itself (``enter``, ``leave``, ``limited``) is ``numjax.blas_threads``, shared with
the eager matmuls of ``lax``: while a program that calls BLAS runs, BLAS gets
``numjax_blas_threads`` threads, or at most ``numjax_num_threads`` (numjax's thread budget), so
its spinning workers and numjax's thread team do not take each other's cores (that module has
the measurements).
"""
from numjax.blas_threads import enter, leave, limited  # noqa: F401  (this backend's entry points)


def calls_blas(jaxpr):
    """Whether a program over ``jaxpr`` (nested jaxprs included) may call BLAS: it holds a
    floating-point matmul or convolution.  Linear algebra factorizations call LAPACK, whose
    own BLAS calls are limited the same way, so they count too."""
    from numjax.jaxpr import _jaxprs_in_params
    from numjax.lax import convolution, linalg
    blas_primitives = {convolution.conv_general_dilated_p,
                       *(p for p in vars(linalg).values() if type(p) is type(linalg.dot_general_p))}
    stack = [jaxpr]
    while stack:
        for eqn in stack.pop().eqns:
            if eqn.primitive in blas_primitives:
                return True
            stack.extend(_jaxprs_in_params(eqn.params))
    return False
