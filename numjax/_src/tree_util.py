"""``jax._src.tree_util``: numjax's pytree registry."""
from ..tree_util import *  # noqa: F401,F403
