"""numjax.experimental: the parts of ``jax.experimental`` numjax provides."""
from . import checkify  # noqa: F401
from ..lax.callback import io_callback  # noqa: F401
