"""numjax.scipy: scipy's API over lax, as jax.scipy."""
