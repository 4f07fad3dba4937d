"""``jax.experimental.shard_map``: the older home of ``jax.shard_map`` (numjax/shmap.py)."""
from ..shmap import shard_map  # noqa: F401
