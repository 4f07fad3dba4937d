"""Reductions over axes, argmin/argmax, and cumulative reductions."""
import numpy as np

from numjax.array import c_contiguous as _c_contiguous

from .. import dtypes
from ..array import Array, to_numpy
from ..core import ShapedArray, get_aval
from ..jaxpr import param_printers
from ._base import check_dtype_kind, make_primitive
from ._summation import ordered_reduce


def _reduce_abstract(name, kinds=None):
    def rule(x, *, axes, out_sharding=None):
        if kinds:
            check_dtype_kind(name, x, kinds, "bool")
        for a in axes:
            if not 0 <= a < x.ndim:
                raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension {x.ndim}")
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return rule


def _reduce_impl(np_fn):
    def impl(x, *, axes, out_sharding=None):
        v = to_numpy(x)
        with np.errstate(all="ignore"):
            out = np.asarray(np_fn(v, axis=axes))
        return Array(out.astype(v.dtype, copy=False), getattr(x, "weak_type", False))
    return impl


def _np_max(v, axis):
    if v.size == 0:
        return np.full([s for i, s in enumerate(v.shape) if i not in axis], _identity_max(v.dtype), v.dtype)
    return _signed_zeros(np.max(v, axis=axis), v, axis, True)


def _np_min(v, axis):
    if v.size == 0:
        return np.full([s for i, s in enumerate(v.shape) if i not in axis], _identity_min(v.dtype), v.dtype)
    return _signed_zeros(np.min(v, axis=axis), v, axis, False)


def _zeros_of_sign(v, negative):
    return (v == 0) & (np.signbit(v) if negative else ~np.signbit(v))


def _signed_zeros(out, v, axis, is_max):
    """XLA's signed zeros in a max (min) reduction: a zero result is +0 (-0) when any reduced
    zero is, whichever numpy happened to keep."""
    out = np.asarray(out)
    if dtypes.kind(v.dtype) != "f" or not (out == 0).any():
        return out
    wanted = np.any(_zeros_of_sign(v, not is_max), axis=axis)
    zero = np.zeros((), v.dtype) if is_max else np.negative(np.zeros((), v.dtype))
    return np.where((out == 0) & wanted, zero, out)


def _signed_zero_cumulative(out, v, axis, is_max):
    """The same for cummax (cummin): a zero running value is +0 (-0) once a +0 (-0) was seen."""
    if dtypes.kind(v.dtype) != "f" or not (out == 0).any():
        return out
    seen = np.logical_or.accumulate(_zeros_of_sign(v, not is_max), axis=axis)
    zero = np.zeros((), v.dtype) if is_max else np.negative(np.zeros((), v.dtype))
    return np.where((out == 0) & seen, zero, out)


def _identity_max(dt):
    return -np.inf if dtypes.kind(dt) == "f" else (False if dt == np.bool_ else np.iinfo(dt).min)


def _identity_min(dt):
    return np.inf if dtypes.kind(dt) == "f" else (True if dt == np.bool_ else np.iinfo(dt).max)


def _ordered(ufunc, identity, np_fn, kinds):
    # Floating sums and products in numjax's summation order (lax/_summation.py), the order
    # the compiled loops use, so eager and jitted results agree bit for bit.  (Complex
    # products are left to numpy: the compiled loops multiply real and imaginary parts with
    # their own formula.)
    def reduce(v, axis):
        if v.dtype == np.float16:
            # float32 accumulators, as the compiled loops hold half-precision values in
            # (lowering/low_precision.py; bfloat16 reaches here already widened).
            v = v.astype(np.float32)
        if dtypes.kind(v.dtype) in kinds:
            return ordered_reduce(ufunc, identity, v, axis)
        return np_fn(v, axis=axis)
    return reduce


reduce_sum_p = make_primitive("reduce_sum", _reduce_impl(_ordered(np.add, 0, np.sum, "fc")),
                              _reduce_abstract("reduce_sum"), reduction="sum")
reduce_prod_p = make_primitive("reduce_prod", _reduce_impl(_ordered(np.multiply, 1, np.prod, "f")),
                               _reduce_abstract("reduce_prod"), reduction="prod")
reduce_max_p = make_primitive("reduce_max", _reduce_impl(_np_max), _reduce_abstract("reduce_max"),
                              reduction="max")
reduce_min_p = make_primitive("reduce_min", _reduce_impl(_np_min), _reduce_abstract("reduce_min"),
                              reduction="min")
reduce_and_p = make_primitive("reduce_and", _reduce_impl(np.all), _reduce_abstract("reduce_and", "b"),
                              reduction="and")
reduce_or_p = make_primitive("reduce_or", _reduce_impl(np.any), _reduce_abstract("reduce_or", "b"),
                             reduction="or")
# JAX only prints out_sharding on the reductions that carry it.
for _p in (reduce_max_p, reduce_min_p, reduce_prod_p, reduce_and_p, reduce_or_p):
    param_printers[_p] = lambda p: {"axes": p["axes"]}


def _reducer(prim):
    def fn(operand, axes):
        return prim.bind(operand, axes=tuple(int(a) for a in axes), out_sharding=None)
    return fn


reduce_sum = _reducer(reduce_sum_p)
reduce_prod = _reducer(reduce_prod_p)
reduce_max = _reducer(reduce_max_p)
reduce_min = _reducer(reduce_min_p)
reduce_and = _reducer(reduce_and_p)
reduce_or = _reducer(reduce_or_p)


# ---------------------------------------------------------------- argmin / argmax

def _arg_abstract(name):
    def rule(x, *, axes, index_dtype):
        if len(axes) != 1:
            raise ValueError(f"{name} only supports a single axis, got {axes}")
        if x.shape[axes[0]] == 0:
            raise ValueError(f"{name} of an empty axis")
        shape = tuple(s for i, s in enumerate(x.shape) if i != axes[0])
        return ShapedArray(shape, index_dtype, False)
    return rule


def _arg_impl(np_fn):
    def impl(x, *, axes, index_dtype):
        # numpy already returns the first index of the extremum and treats NaN as extreme, like XLA.
        return Array(np.asarray(np_fn(to_numpy(x), axis=axes[0])).astype(index_dtype), False)
    return impl


argmax_p = make_primitive("argmax", _arg_impl(np.argmax), _arg_abstract("argmax"), reduction="argmax")
argmin_p = make_primitive("argmin", _arg_impl(np.argmin), _arg_abstract("argmin"), reduction="argmin")


def argmax(operand, axis, index_dtype):
    return argmax_p.bind(operand, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    return argmin_p.bind(operand, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype))


# ---------------------------------------------------------------- cumulative

def _cum_impl(np_accumulate, from_zero=False):
    """``from_zero``: XLA's cumulative sum starts from +0 along an axis longer than one (a
    prefix of -0.0 sums to +0.0; a length-1 axis is copied as it is, -0.0 included)."""
    def impl(x, *, axis, reverse):
        v = to_numpy(x)
        if reverse:
            v = np.flip(v, axis)
        # float16 accumulates in float32, as the compiled loops do (see _ordered above).
        wide = v.astype(np.float32) if v.dtype == np.float16 else v
        with np.errstate(all="ignore"):     # inf - inf, past float16's range: silent, as in JAX
            out = np_accumulate(wide, axis=axis)
            if from_zero and v.ndim and v.shape[axis] > 1 and np.issubdtype(out.dtype, np.inexact):
                out = out + out.dtype.type(0)
            out = out.astype(v.dtype)
        if reverse:
            out = np.flip(out, axis)
        return Array(_c_contiguous(out), getattr(x, "weak_type", False))
    return impl


def _cum_abstract(x, *, axis, reverse):
    if not 0 <= axis < max(x.ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    return x


cumsum_p = make_primitive("cumsum", _cum_impl(np.cumsum, from_zero=True), _cum_abstract)
cumprod_p = make_primitive("cumprod", _cum_impl(np.cumprod), _cum_abstract)
cummax_p = make_primitive("cummax", _cum_impl(
    lambda v, axis: _signed_zero_cumulative(np.maximum.accumulate(v, axis=axis), v, axis, True)), _cum_abstract)
cummin_p = make_primitive("cummin", _cum_impl(
    lambda v, axis: _signed_zero_cumulative(np.minimum.accumulate(v, axis=axis), v, axis, False)), _cum_abstract)


def _cumulative(prim):
    def fn(operand, axis=0, reverse=False):
        aval = get_aval(operand)
        if not -aval.ndim <= axis < max(aval.ndim, 1):
            raise ValueError(f"axis {axis} is out of bounds for array of shape {aval.shape}: lax.{prim} "
                             f"takes an axis in [-{aval.ndim}, {aval.ndim}).")
        return prim.bind(operand, axis=int(axis) % max(aval.ndim, 1), reverse=bool(reverse))
    return fn


cumsum = _cumulative(cumsum_p)
cumprod = _cumulative(cumprod_p)
cummax = _cumulative(cummax_p)
cummin = _cumulative(cummin_p)


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad  # noqa: E402


def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    from .shape import broadcast_in_dim
    shape = x.aval.shape
    kept = [d for d in range(len(shape)) if d not in axes]
    return [broadcast_in_dim(ct, shape, kept)]


ad.deflinear2(reduce_sum_p, _reduce_sum_transpose)


def _reduce_chooser_jvp(prim):
    # The tangent at the extremum's locations, averaged over ties (as JAX does).
    def rule(primals, tangents, *, axes, out_sharding=None):
        from . import elementwise as ew
        from .shape import broadcast_in_dim
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes, out_sharding=out_sharding)
        shape = get_aval(x).shape
        kept = [d for d in range(len(shape)) if d not in axes]
        mask = ew.convert_element_type(ew.eq(x, broadcast_in_dim(ans, shape, kept)), get_aval(t).dtype)
        num = reduce_sum(ew.mul(t, mask), axes)
        return ans, ew.div(num, reduce_sum(mask, axes))
    return rule


ad.jvp_rules[reduce_max_p] = _reduce_chooser_jvp(reduce_max_p)
ad.jvp_rules[reduce_min_p] = _reduce_chooser_jvp(reduce_min_p)


def _reduce_prod_jvp(primals, tangents, *, axes, out_sharding=None):
    # d prod = sum_i t_i * prod_{j != i} x_j; the product of the others is computed from
    # exclusive cumulative products so zeros in x are handled exactly.
    from . import elementwise as ew
    from .shape import reshape, transpose
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes, out_sharding=out_sharding)
    shape = get_aval(x).shape
    kept = [d for d in range(len(shape)) if d not in axes]
    perm = tuple(kept) + tuple(axes)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    kept_shape = [shape[d] for d in kept]
    xs = reshape(transpose(x, perm), kept_shape + [n])
    ts = reshape(transpose(ad.instantiate(t), perm), kept_shape + [n])
    last = len(kept_shape)
    left = _exclusive_cumprod(xs, last, False)
    right = _exclusive_cumprod(xs, last, True)
    others = ew.mul(left, right)
    return ans, reduce_sum(ew.mul(ts, others), (last,))


def _exclusive_cumprod(x, axis, reverse):
    from . import elementwise as ew
    from .shape import concatenate, pad
    from .indexing import slice as lax_slice
    aval = get_aval(x)
    inc = cumprod(x, axis, reverse)
    one = Array(np.ones((), aval.dtype), False)
    lo = [0] * aval.ndim
    hi = list(aval.shape)
    cfg = [(0, 0, 0)] * aval.ndim
    if reverse:
        lo[axis] = 1
        cfg[axis] = (0, 1, 0)
    else:
        hi[axis] -= 1
        cfg[axis] = (1, 0, 0)
    return pad(lax_slice(inc, lo, hi), one, cfg)


ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp
for _p in (argmax_p, argmin_p, reduce_and_p, reduce_or_p):
    ad.defjvp_zero(_p)

ad.deflinear2(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])


def _slice_in_dim(x, start, limit, stride, axis):
    from .indexing import slice as lax_slice
    shape = get_aval(x).shape
    n = shape[axis]
    start = start + n if start < 0 else start
    limit = n if limit is None else (limit + n if limit < 0 else limit)
    lo, hi, st = [0] * len(shape), list(shape), [1] * len(shape)
    lo[axis], hi[axis], st[axis] = start, max(limit, start), stride
    return lax_slice(x, lo, hi, st)


def _interleave(a, b, axis):
    from . import elementwise as ew
    from .shape import pad
    na, nb = get_aval(a).shape[axis], get_aval(b).shape[axis]
    a_pad = [(0, 0, 0)] * get_aval(a).ndim
    b_pad = [(0, 0, 0)] * get_aval(b).ndim
    a_pad[axis] = (0, 1 if na == nb else 0, 1)
    b_pad[axis] = (1, 0 if na == nb else 1, 1)
    zero = Array(np.zeros((), get_aval(a).dtype), False)
    return ew.add(pad(a, zero, a_pad), pad(b, zero, b_pad))


def _associative_scan(fn, x, axis, reverse):
    """JAX's parallel prefix scan (lax.associative_scan) over one array, from slices and pads."""
    from .shape import concatenate, rev

    def scan(elems):
        n = get_aval(elems).shape[axis]
        if n < 2:
            return elems
        reduced = fn(_slice_in_dim(elems, 0, -1, 2, axis), _slice_in_dim(elems, 1, None, 2, axis))
        odd = scan(reduced)
        if n % 2 == 0:
            even = fn(_slice_in_dim(odd, 0, -1, 1, axis), _slice_in_dim(elems, 2, None, 2, axis))
        else:
            even = fn(odd, _slice_in_dim(elems, 2, None, 2, axis))
        even = concatenate([_slice_in_dim(elems, 0, 1, 1, axis), even], axis)
        return _interleave(even, odd, axis)
    if reverse:
        x = rev(x, (axis,))
    out = scan(x)
    return rev(out, (axis,)) if reverse else out


def associative_scan(fn, elems, reverse=False, axis=0):
    """Prefix scan of ``elems`` (a pytree of arrays of equal length along ``axis``) with the
    associative ``fn(a, b)`` on pytrees of that structure, in JAX's parallel order of
    combination (so rounding matches)."""
    from .. import tree_util
    leaves, tree = tree_util.flatten_traced(elems)
    if not leaves:
        return elems
    ndim = get_aval(leaves[0]).ndim
    axis = axis + ndim if axis < 0 else axis
    if len({get_aval(x).shape[axis] for x in leaves}) != 1:
        raise ValueError("Array inputs to associative_scan must have the same "
                         f"first dimension. (saw: {[get_aval(x).shape for x in leaves]})")

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_leaves, out_tree = tree_util.flatten_traced(out)
        if out_tree != tree:
            raise ValueError("The result of `fn` must have the same structure as the elements: "
                             f"{out_tree} vs {tree}")
        return out_leaves
    out = _associative_scan_leaves(combine, leaves, axis, reverse)
    return tree_util.tree_unflatten(tree, out)


def _associative_scan_leaves(fn, xs, axis, reverse):
    """``_associative_scan`` over a list of arrays combined together by ``fn`` (lists)."""
    from .shape import concatenate, rev

    def cut(elems, start, limit, stride):
        return [_slice_in_dim(e, start, limit, stride, axis) for e in elems]

    def scan(elems):
        n = get_aval(elems[0]).shape[axis]
        if n < 2:
            return elems
        odd = scan(fn(cut(elems, 0, -1, 2), cut(elems, 1, None, 2)))
        even = fn(cut(odd, 0, -1, 1) if n % 2 == 0 else odd, cut(elems, 2, None, 2))
        even = [concatenate([e0, e], axis) for e0, e in zip(cut(elems, 0, 1, 1), even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]
    if reverse:
        xs = [rev(x, (axis,)) for x in xs]
    out = scan(xs)
    return [rev(o, (axis,)) for o in out] if reverse else out


def _cumulative_jvp(combine_name):
    # As JAX: the JVP of the parallel prefix scan of the combining primitive (so zeros in
    # cumprod and ties in cummax/cummin get exactly JAX's derivatives).
    def rule(primals, tangents, *, axis, reverse):
        from . import elementwise as ew
        combine = getattr(ew, combine_name)
        (x,), (t,) = primals, tangents
        outs, t_outs = ad.jvp_flat(lambda v: [_associative_scan(combine, v, axis, reverse)],
                                   [x], [ad.instantiate(t)])
        return outs[0], t_outs[0]
    return rule


ad.jvp_rules[cumprod_p] = _cumulative_jvp("mul")
ad.jvp_rules[cummax_p] = _cumulative_jvp("max")
ad.jvp_rules[cummin_p] = _cumulative_jvp("min")


# ---------------------------------------------------------------- batching rules
from ..interpreters import batching  # noqa: E402


def _reduce_batch(prim):
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        x = batching.moveaxis(x, d, 0)
        params = dict(params, axes=tuple(a + 1 for a in params["axes"]))
        return prim.bind(x, **params), 0
    return rule


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
           argmax_p, argmin_p):
    batching.batch_rules[_p] = _reduce_batch(_p)


def _cumulative_batch(prim):
    def rule(vals, dims, *, axis, reverse):
        (x,), (d,) = vals, dims
        x = batching.moveaxis(x, d, 0)
        return prim.bind(x, axis=axis + 1, reverse=reverse), 0
    return rule


for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    batching.batch_rules[_p] = _cumulative_batch(_p)


# ---------------------------------------------------------------- lax.reduce

def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """XLA's Reduce: ``operands`` (a pytree of arrays of one shape) reduced over ``dimensions``
    with ``computation`` from ``init_values`` (a matching pytree of scalars).  A computation
    that is a known monoid from its identity (lax.add from 0, lax.max from -inf, ...) is that
    reduction primitive, as in JAX; any other is folded over the reduced elements in order,
    one scalar application per output element, as XLA's CPU backend evaluates it."""
    from .. import tree_util
    from . import elementwise as ew
    flat_ops, tree = tree_util.tree_flatten(operands)
    flat_init, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")
    if len(flat_ops) != len(flat_init):
        raise ValueError(f"Must have same total number of operands as init_values: {len(flat_ops)} vs. "
                         f"{len(flat_init)}")
    flat_ops = [x if hasattr(x, "aval") else Array(np.asarray(x, dtypes.dtype_and_weak(x)[0]),
                                                    dtypes.dtype_and_weak(x)[1]) for x in flat_ops]
    dims = tuple(int(d) for d in dimensions)
    monoid = _monoid_reducer(computation, flat_init)
    if monoid is not None:
        weak = all(dtypes.dtype_and_weak(x)[1] for x in flat_ops + flat_init)
        out = monoid(flat_ops[0], dims)
        return ew._convert_element_type(out, get_aval(out).dtype, weak)
    return tree_util.tree_unflatten(tree, _fold(computation, tree, flat_ops, flat_init, dims))


def _concrete_scalar(x):
    from ..core import Tracer
    if isinstance(x, Tracer):
        x = x._concrete_value()
        if x is None:
            return None
    v = np.asarray(to_numpy(x) if isinstance(x, Array) else x)
    return v if v.shape == () else None


def _monoid_reducer(computation, inits):
    """The reduction primitive's function when ``computation`` from ``inits`` is its monoid."""
    from . import elementwise as ew
    if len(inits) != 1:
        return None
    val = _concrete_scalar(inits[0])
    if val is None:
        return None
    dt = dtypes.dtype_and_weak(inits[0])[0]
    bool_like = dt == np.bool_
    with np.errstate(all="ignore"):
        candidates = {
            ew.add: (reduce_sum, 0), ew.mul: (reduce_prod, 1),
            ew.max: (reduce_max, _identity_max(dt) if dtypes.kind(dt) != "f" else -_largest(dt)),
            ew.min: (reduce_min, _identity_min(dt) if dtypes.kind(dt) != "f" else _largest(dt)),
            ew.bitwise_or: (reduce_or, False) if bool_like else None,     # (numjax's reduce_or/and
            ew.bitwise_and: (reduce_and, True) if bool_like else None,    #  are boolean only)
        }
        found = candidates.get(computation)
        return found[0] if found is not None and np.equal(val, found[1]) else None


def _largest(dt):
    # inf, or the largest finite value of a float type without infinities (float8_e4m3fn, ...)
    info = dtypes.finfo(dt)
    return np.inf if np.isinf(np.asarray(np.inf, dt)) else float(info.max)


def _fold(computation, tree, ops, inits, dims):
    from ..vmap_api import vmap
    from .control_flow import scan
    from .shape import broadcast, reshape, transpose
    avals = [get_aval(x) for x in ops]
    if len({a.shape for a in avals}) != 1:
        raise ValueError(f"reduce operands must all have the same shape, got {[a.shape for a in avals]}")
    shape = avals[0].shape
    for d in dims:
        if not 0 <= d < len(shape):
            raise ValueError(f"reduce: axis {d} is out of bounds for array of dimension {len(shape)}")
    if not dims:
        return ops     # nothing reduced: XLA returns the operands
    inits = [_init_like(i, a) for i, a in zip(inits, avals)]
    kept = [d for d in range(len(shape)) if d not in dims]
    n = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    size = int(np.prod([shape[d] for d in kept], dtype=np.int64))
    out_shape = tuple(shape[d] for d in kept)
    # Each operand as (reduced elements, output elements); the computation applies to scalars.
    xs = [reshape(transpose(x, dims + tuple(kept)), (n, size)) for x in ops]
    step = vmap(lambda c, x: _apply(computation, tree, c, x, avals))

    def body(carry, x):
        return step(carry, x), None
    carry, _ = scan(body, [broadcast(i, (size,)) for i in inits], xs, length=n)
    return [reshape(c, out_shape) for c in carry]


def _init_like(init, aval):
    from . import elementwise as ew
    if type(init) in (int, float, complex, bool):
        return Array(np.asarray(init, aval.dtype), False)
    init = init if hasattr(init, "aval") or isinstance(init, Array) else Array(np.asarray(init), False)
    ia = get_aval(init)
    if ia.shape != ():
        raise ValueError(f"reduce init_values must be scalars, got shape {ia.shape}")
    if ia.dtype != aval.dtype:
        if not ia.weak_type:
            raise TypeError(f"reduce operand dtypes should match corresponding initial value dtypes, got "
                            f"operand {aval.dtype.name} and initial value {ia.dtype.name}.")
        init = ew._convert_element_type(init, aval.dtype, False)
    return init


def _apply(computation, tree, acc, x, avals):
    from .. import tree_util
    out = computation(tree_util.tree_unflatten(tree, list(acc)), tree_util.tree_unflatten(tree, list(x)))
    leaves, out_tree = tree_util.tree_flatten(out)
    if out_tree != tree:
        raise TypeError(f"reduce computation must return the structure of its inputs {tree}, got {out_tree}")
    for v, a in zip(leaves, avals):
        va = get_aval(v)
        if va.shape != () or va.dtype != a.dtype:
            raise TypeError(f"reduce computation must return scalars of the operand dtypes "
                            f"{[b.dtype.name for b in avals]}, got {va.str_short()}")
    return leaves
