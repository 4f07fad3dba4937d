"""numjax.lax: the primitive operations, one module per family."""
from .elementwise import *  # noqa: F401,F403
from .elementwise import (abs, add, atan2, bitcast_convert_type, clamp, convert_element_type,  # noqa: F401
                          div, integer_pow, logistic, max, min, pow, round, RoundingMethod,
                          select, select_n, square, _convert_element_type)
from .shape import (broadcast, broadcast_in_dim, broadcast_to_rank, broadcasted_iota,  # noqa: F401
                    concatenate, expand_dims, iota, pad, reshape, rev, squeeze, transpose)
from .reductions import (argmax, argmin, cummax, cummin, cumprod, cumsum, reduce_and,  # noqa: F401
                         reduce_max, reduce_min, reduce_or, reduce_prod, reduce_sum)
from .indexing import (dynamic_index_in_dim, dynamic_slice, dynamic_update_slice,  # noqa: F401
                       slice, gather, GatherDimensionNumbers, GatherScatterMode, scatter,
                       scatter_add, scatter_sub, scatter_mul, scatter_min, scatter_max,
                       scatter_apply, ScatterDimensionNumbers)
from .linalg import dot, dot_general  # noqa: F401
from .bits import (bitcast_convert_type_p, clz, clz_p, population_count, population_count_p,  # noqa: F401
                   reduce_precision, reduce_precision_p)
from .slicing_in_dim import (dynamic_index_in_dim, dynamic_slice_in_dim,  # noqa: F401,F811
                             dynamic_update_index_in_dim, dynamic_update_slice_in_dim,
                             index_in_dim, slice_in_dim)
from .reductions import associative_scan, reduce  # noqa: F401,A004
from .composed import (batch_matmul, collapse, complex, conj, cumlogsumexp, dtype, full,  # noqa: F401,A004
                       full_like, imag, optimization_barrier, real, reciprocal, split)
from ._precision import Precision  # noqa: F401
from .elementwise import stop_gradient  # noqa: F401
from .control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401,A004
from .sorting import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .random_bits import *  # noqa: F401,F403
from .fft import *  # noqa: F401,F403
from .convolution import *  # noqa: F401,F403
from .windowed_reductions import *  # noqa: F401,F403
from . import low_precision  # noqa: F401
from . import eager_kernels  # noqa: F401
from .parallel import (all_gather, all_to_all, axis_index, axis_size, pcast, pmax, pmean,  # noqa: F401
                       pmin, ppermute, psum, psum_scatter, pswapaxes)
# The primitives under JAX's names (for code that inspects jaxpr equations).
from .reductions import (argmax_p, argmin_p, cummax_p, cummin_p, cumprod_p, cumsum_p,  # noqa: F401,E402
                         reduce_and_p, reduce_max_p, reduce_min_p, reduce_or_p, reduce_prod_p, reduce_sum_p)
from .shape import (broadcast_in_dim_p, concatenate_p, iota_p, pad_p, reshape_p, rev_p,  # noqa: F401,E402
                    squeeze_p, transpose_p)
from .indexing import (dynamic_slice_p, dynamic_update_slice_p, gather_p, scatter_add_p,  # noqa: F401,E402
                       scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p, scatter_sub_p, slice_p)
from .linalg import dot_general_p  # noqa: F401,E402
from .control_flow import cond_p, scan_p, while_p  # noqa: F401,E402
from .parallel import all_gather_p, axis_index_p, pmax_p, pmin_p, ppermute_p, psum_p  # noqa: F401,E402


def _check_eager_applications():
    from . import _base, bits, elementwise, indexing, linalg, reductions, shape
    from ..core import Primitive
    _base.check_eagerly(*(v for m in (elementwise, bits, shape, reductions, indexing, linalg)
                          for v in vars(m).values() if isinstance(v, Primitive)))


_check_eager_applications()


def broadcast_shapes(*shapes):
    """``lax.broadcast_shapes``: NumPy's broadcast of ``shapes`` (tuples of ints), with JAX's
    ValueError when there is none.  (``_base.broadcast_shapes`` is the primitives' own,
    stricter rule; the star imports above would otherwise export it under this name.)"""
    import numpy as np
    shapes = [tuple(s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def with_sharding_constraint(x, shardings):
    """``jax.lax.with_sharding_constraint``: see numjax/sharding.py (imported on use: the
    sharding module sits above lax)."""
    from ..sharding import with_sharding_constraint as constrain
    return constrain(x, shardings)
