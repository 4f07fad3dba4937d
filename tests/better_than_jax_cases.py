"""Behaviours where numjax deliberately does better than JAX 0.10.2 (README, "Where numjax
deliberately differs from JAX").  Each case is a function of a JAX-like module pair
(``jax``, ``jnp``) returning a numpy array; ``tests/test_better_than_jax.py`` checks numjax
gives ``ours`` and ``tests/compat/test_better_than_jax_vs_jax.py`` that real JAX still gives
``jaxs`` (so the README's claim stays true)."""
import ml_dtypes
import numpy as np

F32_MAX = np.finfo(np.float32).max
TINY = np.float32(1e-38)


def _reciprocal_of_max(jax, jnp):
    return jax.jit(lambda x: 1.0 / x)(jnp.asarray(F32_MAX))


def _denormal_product_eager(jax, jnp):
    return jnp.asarray(TINY) * np.float32(0.01)


def _denormal_product_jit(jax, jnp):
    return jax.jit(lambda x: x * 0.01)(jnp.asarray(TINY))


def _sum_of_denormals(jax, jnp):
    return jax.jit(jnp.sum)(jnp.full(4, np.float32(1e-40)))


def _float4_six_to_int8(jax, jnp):
    six = jnp.asarray(np.array([6.0], ml_dtypes.float4_e2m1fn))
    return jax.jit(lambda x: x.astype(jnp.int8))(six)


def _float16_inverse(jax, jnp):
    try:
        return jnp.linalg.inv(jnp.asarray([[2.0, 1.0], [1.0, 3.0]], jnp.float16))
    except NotImplementedError:
        return None


# name: (case, numjax's result, JAX 0.10.2's result on CPU; None: raises NotImplementedError)
CASES = {
    # XLA's CPU code flushes float32 subnormals to zero; numjax keeps IEEE gradual underflow.
    "reciprocal_of_max_is_subnormal": (_reciprocal_of_max, np.float32(1.0) / F32_MAX, np.float32(0)),
    "subnormal_product_eager": (_denormal_product_eager, TINY * np.float32(0.01), np.float32(0)),
    "subnormal_product_jit": (_denormal_product_jit, TINY * np.float32(0.01), np.float32(0)),
    "sum_of_subnormals": (_sum_of_denormals, np.float32(1e-40) * np.float32(4), np.float32(0)),
    # float4_e2m1fn's 6.0 is exactly representable in int8; XLA saturates it to 127.
    "float4_six_converts_to_six": (_float4_six_to_int8, np.array([6], np.int8), np.array([127], np.int8)),
    # LAPACK has no half precision: numjax factorizes float16 in float32 and rounds back;
    # JAX raises NotImplementedError ("Unsupported dtype float16").
    "float16_linalg_inverse": (_float16_inverse,
                               np.linalg.inv(np.array([[2, 1], [1, 3]], np.float32)).astype(np.float16),
                               None),
}
