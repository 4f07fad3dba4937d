"""``jax._src.api_util``: numjax's helpers for the transformation wrappers."""
from ..api_util import *  # noqa: F401,F403
from ..api_util import as_leaf, flatten_fun, flatten_fun_nokwargs  # noqa: F401
