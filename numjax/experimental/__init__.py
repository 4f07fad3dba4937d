"""numjax.experimental: the parts of ``jax.experimental`` numjax provides."""
from . import checkify  # noqa: F401
