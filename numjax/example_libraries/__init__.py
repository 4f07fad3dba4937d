"""``jax.example_libraries``: JAX's small reference libraries, written for numjax from their
documented API: ``optimizers`` and the ``stax`` layer library."""
