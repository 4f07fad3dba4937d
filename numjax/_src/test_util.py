"""``jax._src.test_util``: JAX's private test helpers; numjax has the public ones
(``check_grads``, ``check_jvp``, ``check_vjp``) of ``jax.test_util``."""
from ..test_util import check_grads, check_jvp, check_vjp  # noqa: F401
