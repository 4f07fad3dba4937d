"""Private-module names that JAX libraries import directly (``jax._src.compiler``)."""

from . import xla_bridge  # noqa: F401,E402  (read as an attribute: ``jax._src.xla_bridge._backends``)
