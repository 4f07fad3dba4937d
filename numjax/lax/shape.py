"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, concatenate, iota, rev, pad."""
import numpy as np

from numjax.array import c_contiguous as _c_contiguous

from .. import dtypes
from ..array import Array, to_numpy
from ..core import ShapedArray, Tracer, get_aval
from ..jaxpr import param_printers
from ._base import check_same_dtypes, make_primitive


def _weak(x):
    return getattr(x, "weak_type", False)


# ---------------------------------------------------------------- broadcast_in_dim

def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding=None):
    v = to_numpy(x)
    expanded = v.reshape([shape[d] if d in broadcast_dimensions and v.shape[broadcast_dimensions.index(d)] != 1
                          else 1 for d in range(len(shape))]) if v.ndim else v
    # Materialized (not a stride-0 view) so jit calls can pass it to Numba without a copy.
    return Array(np.array(np.broadcast_to(expanded, shape)), _weak(x))


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions, sharding=None):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to operand "
                        f"ndim; got broadcast_dimensions {broadcast_dimensions} for operand ndim {x.ndim}.")
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim operand dimension sizes must either be 1, or be equal "
                            f"to their corresponding dimensions in the target broadcast shape; got "
                            f"operand of shape {x.shape}, target broadcast shape {shape}, "
                            f"broadcast_dimensions {broadcast_dimensions} ")
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                        f"got broadcast_dimensions {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


broadcast_in_dim_p = make_primitive("broadcast_in_dim", _broadcast_in_dim_impl, _broadcast_in_dim_abstract,
                                    is_load=True)
# JAX prints neither the target shape (it is the result's type) nor an empty dimension list.
param_printers[broadcast_in_dim_p] = lambda p: (
    {"broadcast_dimensions": p["broadcast_dimensions"]} if p["broadcast_dimensions"] else {})


def _static_dims(dims, prim, what="shape"):
    """``dims`` as Python ints, with JAX's TypeError for a non-integer or a negative size."""
    import operator
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"{prim} {what} must have every element be an integer type, got "
                        f"{tuple(type(d) for d in dims)}.") from None
    if any(d < 0 for d in dims):
        raise TypeError(f"{prim} {what} must have every element be nonnegative, got {dims}.")
    return dims


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    shape = _static_dims(shape, "broadcast_in_dim")
    bdims = tuple(int(d) for d in broadcast_dimensions)
    aval = get_aval(operand)
    if aval.shape == shape and bdims == tuple(range(len(shape))) and isinstance(operand, (Array, Tracer)):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=bdims, sharding=None)


def broadcast(operand, sizes):
    aval = get_aval(operand)
    shape = tuple(sizes) + aval.shape
    return broadcast_in_dim(operand, shape, range(len(sizes), len(shape)))


def broadcast_to_rank(x, rank):
    aval = get_aval(x)
    return x if aval.ndim >= rank else broadcast(x, (1,) * (rank - aval.ndim))


def expand_dims(operand, dimensions):
    aval = get_aval(operand)
    ndim_out = aval.ndim + len(dimensions)
    for d in dimensions:
        if not -ndim_out <= d < ndim_out:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim_out}")
    dims = sorted(d % ndim_out for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(dimensions)}")
    shape = list(aval.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(ndim_out) if i not in dims]
    return broadcast_in_dim(operand, shape, kept)


# ---------------------------------------------------------------- reshape

def _reshape_impl(x, *, new_sizes, dimensions=None, sharding=None):
    v = to_numpy(x)
    if dimensions is not None:
        v = v.transpose(dimensions)
    return Array(v.reshape(new_sizes), _weak(x))


def _reshape_abstract(x, *, new_sizes, dimensions=None, sharding=None):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"(of total size {int(np.prod(new_sizes))}) for shape {x.shape} "
                        f"(of total size {x.size}).")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = make_primitive("reshape", _reshape_impl, _reshape_abstract)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    new_sizes = tuple(int(d) for d in new_sizes)
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}. lax.reshape takes no -1 "
                        "(unknown) sizes; jnp.reshape does.")
    aval = get_aval(operand)
    if aval.shape == new_sizes and dimensions is None and out_sharding is None:
        return operand
    if out_sharding is not None:
        from ..sharding_types import requested_sharding
        out_sharding = requested_sharding(out_sharding)
    return reshape_p.bind(operand, new_sizes=new_sizes,
                          dimensions=None if dimensions is None else tuple(dimensions), sharding=out_sharding)


# ---------------------------------------------------------------- transpose, squeeze, rev

def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = make_primitive(
    "transpose", lambda x, *, permutation: Array(to_numpy(x).transpose(permutation), _weak(x)),
    _transpose_abstract)


def transpose(operand, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(get_aval(operand).ndim)):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def _squeeze_abstract(x, *, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                             f"one, got shape={x.shape} and dimensions={dimensions}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype, x.weak_type)


squeeze_p = make_primitive(
    "squeeze", lambda x, *, dimensions: Array(np.squeeze(to_numpy(x), dimensions), _weak(x)),
    _squeeze_abstract)


def squeeze(array, dimensions):
    ndim = get_aval(array).ndim
    dims = tuple(sorted(int(d) % ndim for d in dimensions)) if ndim else ()
    if not dims:
        return array
    return squeeze_p.bind(array, dimensions=dims)


rev_p = make_primitive(
    "rev", lambda x, *, dimensions: Array(np.flip(to_numpy(x), dimensions), _weak(x)),
    lambda x, *, dimensions: x)


def rev(operand, dimensions):
    ndim = get_aval(operand).ndim
    if any(not 0 <= d < ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must all be less than operand ndim and unique, got dimensions "
                        f"{tuple(dimensions)} for operand ndim {ndim}.")
    return rev_p.bind(operand, dimensions=tuple(dimensions))


# ---------------------------------------------------------------- concatenate, pad, iota

def _concatenate_abstract(*xs, dimension):
    check_same_dtypes("concatenate", xs)
    shape = list(xs[0].shape)
    if len({x.ndim for x in xs}) > 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(x.shape) for x in xs)}.")
    for x in xs[1:]:
        if x.ndim != len(shape) or any(a != b for i, (a, b) in enumerate(zip(x.shape, shape)) if i != dimension):
            raise TypeError(f"Cannot concatenate arrays with shapes that differ in dimensions other "
                            f"than the one being concatenated: concatenating along dimension "
                            f"{dimension} for shapes {', '.join(str(x.shape) for x in xs)}.")
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))


concatenate_p = make_primitive(
    "concatenate",
    lambda *xs, dimension: Array(np.concatenate([to_numpy(x) for x in xs], dimension),
                                 all(_weak(x) for x in xs)),
    _concatenate_abstract)


def concatenate(operands, dimension):
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _pad_impl(x, padval, *, padding_config):
    v, pv = to_numpy(x), to_numpy(padval)
    out = v
    for axis, (lo, hi, interior) in enumerate(padding_config):
        out = _pad_axis(out, pv, axis, lo, hi, interior)
    return Array(_c_contiguous(out), _weak(x))


def _pad_axis(v, pv, axis, lo, hi, interior):
    n = v.shape[axis]
    size = n + max(n - 1, 0) * interior
    shape = list(v.shape)
    shape[axis] = size
    full = np.full(shape, pv, dtype=v.dtype)
    idx = [slice(None)] * v.ndim
    idx[axis] = slice(0, size, interior + 1)
    full[tuple(idx)] = v
    before = [(0, 0)] * v.ndim
    before[axis] = (max(lo, 0), max(hi, 0))
    full = np.pad(full, before, constant_values=pv)
    crop = [slice(None)] * v.ndim
    crop[axis] = slice(-min(lo, 0), full.shape[axis] + min(hi, 0))
    return full[tuple(crop)]


def _pad_abstract(x, padval, *, padding_config):
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(f"interior padding in padding_config must be nonnegative, got padding_config "
                         f"{padding_config}: use negative low/high padding to crop instead.")
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        shape.append(lo + hi + n + max(n - 1, 0) * interior)
    if any(d < 0 for d in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{tuple(shape)}, for padding_config {padding_config} and operand shape "
                         f"{x.shape}: negative low/high padding may crop at most a dimension's size.")
    return ShapedArray(shape, x.dtype, x.weak_type)


pad_p = make_primitive("pad", _pad_impl, _pad_abstract)


def pad(operand, padding_value, padding_config):
    aval, pad_aval = get_aval(operand), get_aval(padding_value)
    if len(padding_config) != aval.ndim:
        raise ValueError("length of padding_config must equal the number of axes of operand, got "
                         f"padding_config {tuple(map(tuple, padding_config))} for operand shape {aval.shape}")
    if aval.dtype != pad_aval.dtype:
        raise TypeError(f"pad operand and padding_value must be same dtype: got {aval.dtype} and "
                        f"{pad_aval.dtype}. Cast the padding value, e.g. jnp.asarray(v, x.dtype).")
    return pad_p.bind(operand, padding_value,
                      padding_config=tuple(tuple(int(c) for c in cfg) for cfg in padding_config))


def _iota_impl(*, dtype, shape, dimension, sharding=None):
    idx = np.arange(shape[dimension], dtype=dtype)
    view = idx.reshape([shape[dimension] if i == dimension else 1 for i in range(len(shape))])
    return Array(_c_contiguous(np.broadcast_to(view, shape)), False)


iota_p = make_primitive(
    "iota", _iota_impl,
    lambda *, dtype, shape, dimension, sharding=None: ShapedArray(shape, dtype, False), is_load=True)


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=_static_dims(shape, "iota"),
                       dimension=int(dimension), sharding=None)


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad  # noqa: E402


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding=None):
    from .reductions import reduce_sum
    in_shape = x.aval.shape
    summed = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    expanded = tuple(broadcast_dimensions[i] for i, n in enumerate(in_shape) if n == 1 and shape[broadcast_dimensions[i]] != 1)
    out = reduce_sum(ct, summed + expanded) if summed or expanded else ct
    return [reshape(out, in_shape)]


ad.deflinear2(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _reshape_transpose(ct, x, *, new_sizes, dimensions=None, sharding=None):
    if dimensions is not None:
        inv = tuple(int(i) for i in np.argsort(dimensions))
        return [transpose(reshape(ct, [x.aval.shape[d] for d in dimensions]), inv)]
    return [reshape(ct, x.aval.shape)]


ad.deflinear2(reshape_p, _reshape_transpose)
ad.deflinear2(transpose_p, lambda ct, x, *, permutation: [
    transpose(ct, tuple(int(i) for i in np.argsort(permutation)))])
ad.deflinear2(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])
ad.deflinear2(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


def _concatenate_transpose(ct, *xs, dimension):
    from .indexing import slice as lax_slice
    outs, start = [], 0
    for x in xs:
        n = (x.aval if ad.is_undefined(x) else get_aval(x)).shape[dimension]
        if ad.is_undefined(x):
            lo = [0] * len(x.aval.shape)
            hi = list(x.aval.shape)
            lo[dimension], hi[dimension] = start, start + n
            outs.append(lax_slice(ct, lo, hi))
        else:
            outs.append(None)
        start += n
    return outs


ad.deflinear2(concatenate_p, _concatenate_transpose)


def _pad_transpose(ct, x, padval, *, padding_config):
    from .indexing import slice as lax_slice
    from .reductions import reduce_sum
    # Undo the negative padding first by padding ct with zeros, then slice the operand back out.
    unpad_cfg = tuple((max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in padding_config)
    zero = Array(np.zeros((), get_aval(ct).dtype), False)
    full = pad(ct, zero, unpad_cfg) if any(lo or hi for lo, hi, _ in unpad_cfg) else ct
    starts = [max(lo, 0) for lo, _, _ in padding_config]
    shape = get_aval(full).shape
    limits = [n - max(hi, 0) for n, (_, hi, _) in zip(shape, padding_config)]
    strides = [it + 1 for _, _, it in padding_config]
    x_ct = lax_slice(full, starts, limits, strides)
    outs = [x_ct if ad.is_undefined(x) else None]
    if ad.is_undefined(padval):
        total = reduce_sum(ct, tuple(range(len(shape))))
        outs.append(total - reduce_sum(x_ct, tuple(range(len(shape)))))
    else:
        outs.append(None)
    return outs


ad.deflinear2(pad_p, _pad_transpose)
ad.defjvp_zero(iota_p)


# ---------------------------------------------------------------- batching rules
from ..interpreters import batching  # noqa: E402


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions, sharding=None):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    size = get_aval(x).shape[0]
    return broadcast_in_dim_p.bind(x, shape=(size,) + tuple(shape),
                                   broadcast_dimensions=(0,) + tuple(b + 1 for b in broadcast_dimensions),
                                   sharding=sharding), 0


def _reshape_batch(vals, dims, *, new_sizes, dimensions=None, sharding=None):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    if dimensions is not None:
        x = transpose(x, (0,) + tuple(p + 1 for p in dimensions))
    size = get_aval(x).shape[0]
    return reshape_p.bind(x, new_sizes=(size,) + tuple(new_sizes), dimensions=None, sharding=sharding), 0


def _transpose_batch(vals, dims, *, permutation):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return transpose_p.bind(x, permutation=(0,) + tuple(p + 1 for p in permutation)), 0


def _shifted_dims_rule(prim, key):
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        x = batching.moveaxis(x, d, 0)
        params = dict(params, **{key: tuple(a + 1 for a in params[key])})
        return prim.bind(x, **params), 0
    return rule


def _concatenate_batch(vals, dims, *, dimension):
    size = batching.axis_size_of(vals, dims)
    xs = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


def _pad_batch(vals, dims, *, padding_config):
    (x, pv), (xd, pd) = vals, dims
    if pd is not batching.not_mapped:
        raise NotImplementedError("vmap of pad with a batched padding value")
    x = batching.moveaxis(x, xd, 0)
    return pad_p.bind(x, pv, padding_config=((0, 0, 0),) + tuple(padding_config)), 0


batching.batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch
batching.batch_rules[reshape_p] = _reshape_batch
batching.batch_rules[transpose_p] = _transpose_batch
batching.batch_rules[squeeze_p] = _shifted_dims_rule(squeeze_p, "dimensions")
batching.batch_rules[rev_p] = _shifted_dims_rule(rev_p, "dimensions")
batching.batch_rules[concatenate_p] = _concatenate_batch
batching.batch_rules[pad_p] = _pad_batch
