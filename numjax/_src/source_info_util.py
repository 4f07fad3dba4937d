"""``jax._src.source_info_util`` is ``jax.extend.source_info_util``."""
from ..extend.source_info_util import *  # noqa: F401,F403
from ..extend.source_info_util import _excluded_paths  # noqa: F401
