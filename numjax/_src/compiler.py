"""``jax._src.compiler``: chex imports it to patch ``backend_compile`` (restrict_backends).

numjax compiles through Numba, not through a backend object, so this hook is never
called by numjax itself; it exists so that patching it is harmless.
"""


def backend_compile(backend, *args, **kwargs):
    raise NotImplementedError("numjax compiles with Numba; it has no XLA backend_compile")


backend_compile_and_load = backend_compile
