"""Windowed reductions: reduce_window_sum / max / min and the generic ``lax.reduce_window``.

A window reduction pads the operand (``base_dilation - 1`` identity elements between its
elements, then ``padding``), slides a window of ``window_dimensions`` (its taps
``window_dilation`` apart) by ``window_strides``, and reduces each window with a monoid.

``reduce_window_sum`` is linear; its transpose is again a window sum, over the cotangent
dilated by the forward strides (every input element collects the windows that read it).
``reduce_window_max/min`` differentiate by selection: the tangent of a window is the tangent
of its first extremal element, computed over the window's taps as strided slices.
A ``reduce_window`` with a computation other than add/max/min from their identity is
expanded into those slices too, folded with the computation.
"""
import itertools

import numpy as np

from numjax.array import c_contiguous as _c_contiguous

from .. import core, dtypes
from ..array import Array, to_numpy
from ..core import ShapedArray, get_aval
from ..tree_util import tree_flatten, tree_unflatten
from ._base import check_eagerly, make_primitive
from .convolution import _dilated, pad_numpy, padtype_to_pads, window_view

__all__ = ["reduce_window", "reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
           "reduce_window_shape_tuple"]


def _window_out_size(size, lo, hi, window, stride):
    padded = size + lo + hi
    return (padded - window) // stride + 1 if padded >= window else 0


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    nd = len(operand_shape)
    base_dilation = base_dilation or (1,) * nd
    window_dilation = window_dilation or (1,) * nd
    return tuple(_window_out_size(_dilated(n, bd), lo, hi, _dilated(w, wd), s) for n, w, s, (lo, hi), bd, wd
                 in zip(operand_shape, window_dimensions, window_strides, padding, base_dilation,
                        window_dilation))


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "sum":
        return dtype.type(0)
    if dtype == np.bool_:
        return np.bool_(kind == "min")
    if dtypes.kind(dtype) in "fc":     # (bfloat16 and the float8s too: numpy says kind "V")
        big = np.inf if np.isinf(np.asarray(np.inf, dtype)) else float(dtypes.finfo(dtype).max)
        return dtype.type(-big if kind == "max" else big)
    info = dtypes.iinfo(dtype)
    return dtype.type(info.min if kind == "max" else info.max)


def reduce_window_numpy(x, kind, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """The window reduction of numpy array ``x``: one vectorized combine per window tap."""
    cfg = [(lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation)]
    if any(lo or hi or it for lo, hi, it in cfg):
        x = pad_numpy(x, _identity(kind, x.dtype), cfg)
    nd = x.ndim
    view = window_view(x, range(nd), window_dimensions, window_strides, window_dilation)
    out_shape = view.shape[:nd]
    if 0 in window_dimensions or 0 in out_shape:
        return np.full(out_shape, _identity(kind, x.dtype), x.dtype)
    combine = {"sum": np.add, "max": np.maximum, "min": np.minimum}[kind]
    taps = itertools.product(*[range(w) for w in window_dimensions])
    out = np.array(view[(Ellipsis,) + next(taps)], dtype=x.dtype)
    # XLA's max (min) of +0 and -0 is +0 (-0) in either order; numpy keeps either.
    signed = kind != "sum" and np.dtype(x.dtype).kind == "f"
    zero = np.zeros((), x.dtype) if kind == "max" else np.negative(np.zeros((), x.dtype))
    with np.errstate(all="ignore"):     # inf + -inf, overflow: silent, as XLA
        for tap in taps:
            v = view[(Ellipsis,) + tap]
            # (for max: a zero result is +0 where either side was +0; for min, -0 likewise)
            wanted = (((out == 0) & (np.signbit(out) == (kind == "min"))) |
                      ((v == 0) & (np.signbit(v) == (kind == "min")))) if signed else None
            combine(out, v, out=out)
            if signed:
                np.copyto(out, zero, where=(out == 0) & wanted)
    return out


def _rw_abstract(name):
    def rule(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        if len(window_dimensions) != x.ndim:
            raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got operand "
                            f"shape {x.shape} with window_dimensions {tuple(window_dimensions)}.")
        for label, vals in (("window_strides", window_strides), ("padding", padding),
                            ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
            if len(vals) != x.ndim:
                raise TypeError(f"{name} got the wrong number of {label} for operand: got operand shape "
                                f"{x.shape} with {label} {tuple(vals)}.")
        shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides, padding,
                                          base_dilation, window_dilation)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return rule


def _rw_impl(kind):
    def impl(x, **params):
        v = to_numpy(x)
        out = reduce_window_numpy(v, kind, **params)
        return Array(_c_contiguous(out), getattr(x, "weak_type", False))
    return impl


reduce_window_sum_p = make_primitive("reduce_window_sum", _rw_impl("sum"), _rw_abstract("reduce_window_sum"))
reduce_window_max_p = make_primitive("reduce_window_max", _rw_impl("max"), _rw_abstract("reduce_window_max"))
reduce_window_min_p = make_primitive("reduce_window_min", _rw_impl("min"), _rw_abstract("reduce_window_min"))
WINDOW_REDUCTIONS = {reduce_window_sum_p: "sum", reduce_window_max_p: "max", reduce_window_min_p: "min"}
check_eagerly(*WINDOW_REDUCTIONS)


# ---------------------------------------------------------------- window taps as slices

def _window_taps(x, pad_value, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """One strided slice of the padded, dilated ``x`` per window tap, each of the output's shape."""
    from .indexing import slice as lax_slice
    from .shape import pad
    cfg = [(lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation)]
    if any(lo or hi or it for lo, hi, it in cfg):
        x = pad(x, pad_value, cfg)
    shape = get_aval(x).shape
    out = [_window_out_size(n, 0, 0, _dilated(w, wd), s)
           for n, w, s, wd in zip(shape, window_dimensions, window_strides, window_dilation)]
    taps = []
    for tap in itertools.product(*[range(w) for w in window_dimensions]):
        start = [t * wd for t, wd in zip(tap, window_dilation)]
        limit = [st + (m - 1) * s + 1 if m else st for st, m, s in zip(start, out, window_strides)]
        taps.append(lax_slice(x, start, limit, tuple(window_strides)))
    return taps


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad, batching  # noqa: E402


def _rw_sum_transpose(ct, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    if type(ct) is ad.Zero:
        return [None]
    in_shape, ct_shape = x.aval.shape, get_aval(ct).shape
    pads = []
    for n, w, s, (lo, _), bd, wd, y in zip(in_shape, window_dimensions, window_strides, padding,
                                            base_dilation, window_dilation, ct_shape):
        span = _dilated(w, wd)
        new_lo = span - 1 - lo
        pads.append((new_lo, (n - 1) * bd + span - _dilated(y, s) - new_lo))
    out = reduce_window_sum_p.bind(ct, window_dimensions=tuple(window_dimensions), window_strides=tuple(base_dilation),
                                   padding=tuple(pads), base_dilation=tuple(window_strides),
                                   window_dilation=tuple(window_dilation))
    return [out]


def _rw_sum_jvp(primals, tangents, **params):
    return reduce_window_sum_p.bind(*primals, **params), reduce_window_sum_p.bind(*tangents, **params)


ad.jvp_rules[reduce_window_sum_p] = _rw_sum_jvp
ad.transpose_rules[reduce_window_sum_p] = _rw_sum_transpose


def _rw_chooser_jvp(prim):
    def rule(primals, tangents, **params):
        from .elementwise import eq, select
        x, = primals
        t, = tangents
        out = prim.bind(x, **params)
        kind = WINDOW_REDUCTIONS[prim]
        x_dtype = get_aval(x).dtype
        x_taps = _window_taps(x, Array(np.asarray(_identity(kind, x_dtype)), False), **params)
        t_taps = _window_taps(ad.instantiate(t), Array(np.zeros((), get_aval(t).dtype), False), **params)
        # The first tap holding the extremum wins (select_and_scatter's tie rule).
        t_out = t_taps[-1]
        for xt, tt in zip(reversed(x_taps[:-1]), reversed(t_taps[:-1])):
            t_out = select(eq(xt, out), tt, t_out)
        return out, t_out
    ad.jvp_rules[prim] = rule


_rw_chooser_jvp(reduce_window_max_p)
_rw_chooser_jvp(reduce_window_min_p)


def _rw_batch_rule(prim):
    def rule(vals, dims, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        x, = vals
        d, = dims
        out = prim.bind(x, window_dimensions=_insert(window_dimensions, d, 1),
                        window_strides=_insert(window_strides, d, 1), padding=_insert(padding, d, (0, 0)),
                        base_dilation=_insert(base_dilation, d, 1), window_dilation=_insert(window_dilation, d, 1))
        return out, d
    batching.batch_rules[prim] = rule


def _insert(values, at, item):
    values = tuple(values)
    return values[:at] + (item,) + values[at:]


for _p in WINDOW_REDUCTIONS:
    _rw_batch_rule(_p)


# ---------------------------------------------------------------- lax.reduce_window

def _monoid(computation, init, aval):
    """'sum', 'max' or 'min' when ``computation`` from ``init`` is that monoid from its identity."""
    from . import elementwise as el
    kind = {el.add: "sum", el.max: "max", el.min: "min"}.get(computation)
    if kind is None:
        return None
    if isinstance(init, core.Tracer):    # a traced init value is not known to be the identity
        return None
    value = np.asarray(to_numpy(init) if isinstance(init, Array) else init)
    if value.shape != () or not np.array_equal(value, _identity(kind, aval.dtype)):
        return None
    return kind


def _window_params(name, shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    nd = len(shape)
    window_dimensions = tuple(int(w) for w in window_dimensions)
    if len(window_dimensions) != nd:
        raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got operand "
                        f"shape {tuple(shape)} with window_dimensions {window_dimensions}.")
    window_strides = tuple(int(s) for s in window_strides)
    base_dilation = tuple(int(b) for b in base_dilation) if base_dilation is not None else (1,) * nd
    window_dilation = tuple(int(b) for b in window_dilation) if window_dilation is not None else (1,) * nd
    for label, vals in (("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        if len(vals) != nd:
            raise TypeError(f"{name} got the wrong number of {label} for operand: got operand shape "
                            f"{tuple(shape)} with {label} {vals}.")
        if any(v < 1 for v in vals):
            raise ValueError(f"{name} {label} must be positive, got {vals}.")
    if isinstance(padding, str) or hasattr(padding, "name"):
        dilated_shape = [_dilated(n, b) for n, b in zip(shape, base_dilation)]
        windows = [_dilated(w, d) for w, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(dilated_shape, windows, window_strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(padding) != nd:
        raise TypeError(f"{name} got the wrong number of padding pairs for operand: got operand shape "
                        f"{tuple(shape)} with padding {padding}.")
    return dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                base_dilation=base_dilation, window_dilation=window_dilation)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """Reduces every window of ``operand`` (a pytree of arrays of one shape) with ``computation``
    from ``init_value`` (a matching pytree of scalars); also the padding value."""
    from . import elementwise as el
    from .shape import broadcast
    flat_ops, tree = tree_flatten(operand)
    flat_init, init_tree = tree_flatten(init_value)
    if tree != init_tree:
        raise TypeError(f"reduce_window: operand and init_value must have the same tree structure, got "
                        f"{tree} and {init_tree}.")
    flat_ops = [x if isinstance(x, (core.Tracer, Array)) else Array(np.asarray(x), False) for x in flat_ops]
    avals = [get_aval(x) for x in flat_ops]
    if len({a.shape for a in avals}) > 1:
        raise TypeError(f"reduce_window: operands must have the same shape, got {[a.shape for a in avals]}.")
    params = _window_params("reduce_window", avals[0].shape, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation)
    if len(flat_ops) == 1:
        kind = _monoid(computation, flat_init[0], avals[0])
        if kind is not None:
            prim = {"sum": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p}[kind]
            return tree_unflatten(tree, [prim.bind(flat_ops[0], **params)])
    inits = [el.convert_element_type(i, a.dtype) if get_aval(i).dtype != a.dtype else i
             for i, a in zip([i if isinstance(i, (core.Tracer, Array)) else Array(np.asarray(i, a.dtype), False)
                              for i, a in zip(flat_init, avals)], avals)]
    taps = [_window_taps(x, i, **params) for x, i in zip(flat_ops, inits)]
    out_shape = reduce_window_shape_tuple(avals[0].shape, **params)
    acc = [broadcast(i, out_shape) for i in inits]
    for k in range(len(taps[0])):
        res = computation(tree_unflatten(tree, acc), tree_unflatten(tree, [t[k] for t in taps]))
        acc, res_tree = tree_flatten(res)
        if res_tree != tree:
            raise TypeError(f"reduce_window: computation must return the operand's tree structure "
                            f"{tree}, got {res_tree}.")
    return tree_unflatten(tree, acc)
