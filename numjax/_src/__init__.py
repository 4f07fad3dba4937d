"""Private-module names that JAX libraries import directly (``jax._src.compiler``)."""
