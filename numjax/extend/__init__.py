"""``jax.extend``: the internals that libraries building on JAX use (JEP 15856), as numjax
has them: ``core`` (primitives, jaxprs), ``linear_util``, ``source_info_util``, ``backend``."""
from . import backend, core, linear_util, source_info_util  # noqa: F401
from ..interpreters import mlir  # noqa: F401
