"""numjax.nn: activation functions and initializers, as jax.nn."""
