"""numjax.random: JAX's counter-based PRNG (threefry2x32), bit for bit."""
