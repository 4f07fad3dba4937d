"""numjax.scipy: scipy's API over lax, as jax.scipy."""
from . import linalg, optimize, special, stats  # noqa: F401
