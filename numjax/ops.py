"""jax.ops: segment reductions, each one scatter of ``data`` rows into ``num_segments`` rows.

Segment ids out of range (negative included) are dropped under the default mode, as JAX's
FILL_OR_DROP scatter drops them; empty segments hold the reduction's identity.  With
``bucket_size`` the rows are scattered in buckets of that many and the buckets combined, as JAX
does (the order of float additions follows).
"""
import numpy as np

from . import lax
from . import numpy as jnp
from .lax.indexing import GatherScatterMode, ScatterDimensionNumbers

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "sum":
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if dtype == np.bool_:
        return np.array(kind == "min")
    if dtype.kind == "f":
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if kind == "max" else info.max, dtype)


_SCATTERS = {"sum": lax.scatter_add, "prod": lax.scatter_mul, "max": lax.scatter_max,
             "min": lax.scatter_min}
_COMBINE_BUCKETS = {"sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min}


def _segment_reduce(kind, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode):
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if segment_ids.ndim != 1:
        raise ValueError(f"segment_ids must be 1D, got shape {segment_ids.shape}")
    if num_segments is None:
        # Needs the ids' value: under jit this raises ConcretizationTypeError, as in JAX.
        num_segments = int(jnp.max(segment_ids)) + 1
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    dnums = ScatterDimensionNumbers(update_window_dims=tuple(range(1, data.ndim)),
                                    inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    init = jnp.full((num_segments,) + data.shape[1:], _identity(kind, data.dtype), data.dtype)

    def scatter(rows, ids):
        return _SCATTERS[kind](init, ids[:, None], rows, dnums, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)
    if bucket_size is None:
        return scatter(data, segment_ids)
    n = segment_ids.shape[0]
    buckets = [scatter(data[i:i + bucket_size], segment_ids[i:i + bucket_size])
               for i in range(0, n, bucket_size)]
    return _COMBINE_BUCKETS[kind](jnp.stack(buckets), axis=0)


def _segment_fn(kind):
    def reduce(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
               bucket_size=None, mode=None, out_sharding=None):
        return _segment_reduce(kind, data, segment_ids, num_segments, indices_are_sorted,
                               unique_indices, bucket_size, mode)
    reduce.__name__ = reduce.__qualname__ = f"segment_{kind}"
    reduce.__doc__ = (f"The {kind} of the rows of ``data`` sharing a segment id: row i of the "
                      f"result reduces the rows ``j`` with ``segment_ids[j] == i``.")
    return reduce


segment_sum = _segment_fn("sum")
segment_prod = _segment_fn("prod")
segment_max = _segment_fn("max")
segment_min = _segment_fn("min")
