"""Polynomials, convolutions, interpolation, finite differences, statistics and windows."""
import builtins
import operator

import numpy as np

from .. import core, dtypes, lax
from ..array import Array
from ..core import get_aval
from . import (abs as _abs, arange, concatenate, cos, dot, exp, isfinite, matmul, mean as _mean,
               moveaxis, multiply, ravel, reshape, sqrt, sum as _sum, true_divide, where, zeros,
               zeros_like, clip, outer)
from ._shape_ops import _take_slice, atleast_1d, atleast_2d, flip
from ._util import (asarray_leaf, canonicalize_axis, promote_args_inexact, promote_dtypes,
                    promote_dtypes_inexact, to_inexact_dtype)

__all__ = ["polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "poly",
           "polyfit", "roots", "convolve", "correlate", "interp", "trapezoid", "diff", "ediff1d",
           "gradient", "cov", "corrcoef", "bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _const(v, like):
    return Array(np.asarray(v, get_aval(like).dtype), False)


def _check_1d(name, *args):
    for a in args:
        if get_aval(a).ndim != 1:
            raise ValueError(f"{name}: input arrays must be 1D, got shape {get_aval(a).shape}")


# ---------------------------------------------------------------- convolution

def _promote_inexact(a, v):
    """The common inexact dtype of ``a`` and ``v`` (dtypes only: their lengths need not broadcast)."""
    dt, weak = dtypes.promote(dtypes.dtype_and_weak(a), dtypes.dtype_and_weak(v))
    dt = to_inexact_dtype(dt)
    return [lax._convert_element_type(x, dt, weak) for x in (a, v)]


def _conv(name, a, v, mode, precision, preferred_element_type):
    """numpy's convolution of 1-D ``a`` and ``v`` as one conv_general_dilated: the longer input
    is the lhs (convolution commutes), the shorter one flipped is the kernel, and the mode
    decides the padding."""
    a, v = asarray_leaf(a), asarray_leaf(v)
    if get_aval(a).ndim != 1 or get_aval(v).ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    a, v = _promote_inexact(a, v)
    n, m = get_aval(a).shape[0], get_aval(v).shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {get_aval(a).shape} and {get_aval(v).shape}.")
    if m > n:
        a, v, n, m = v, a, m, n
    if mode == "full":
        pads = (m - 1, m - 1)
    elif mode == "same":
        pads = (m // 2, m - 1 - m // 2)
    elif mode == "valid":
        pads = (0, 0)
    else:
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    lhs = lax.broadcast_in_dim(a, (1, 1, n), (2,))
    rhs = lax.broadcast_in_dim(flip(v, 0), (1, 1, m), (2,))
    out = lax.conv_general_dilated(lhs, rhs, (1,), [pads], precision=precision,
                                   preferred_element_type=preferred_element_type)
    return lax.squeeze(out, (0, 1))


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    from ._elementwise import conj
    v = asarray_leaf(v)
    if get_aval(v).ndim != 1:
        raise ValueError("correlate() only support 1-dimensional inputs.")
    n, m = get_aval(asarray_leaf(a)).shape[0], get_aval(v).shape[0]
    out = _conv("correlate", a, flip(conj(v), 0), mode, precision, preferred_element_type)
    if mode == "same" and m > n and (builtins.min(n, m) % 2 == 0):
        # numpy centres 'same' on the longer input; with the roles swapped the window shifts by one.
        full = _conv("correlate", a, flip(conj(v), 0), "full", precision, preferred_element_type)
        start = builtins.min(n, m) // 2
        out = _take_slice(full, start, start + m, 0)
    return out


# ---------------------------------------------------------------- polynomials

def polyval(p, x, *, unroll=16):
    p, x = promote_dtypes(asarray_leaf(p), asarray_leaf(x))
    if get_aval(p).ndim != 1:
        raise ValueError("polyval: p must be 1-dimensional")
    shape = get_aval(x).shape
    y = lax.broadcast(_const(0, x), shape) if shape else _const(0, x)
    for i in range(get_aval(p).shape[0]):
        c = lax.squeeze(_take_slice(p, i, i + 1, 0), (0,))
        y = lax.add(lax.mul(y, x), c)
    return y


def _pad_front(a, n):
    return lax.pad(a, _const(0, a), [(n, 0, 0)]) if n else a


def polyadd(a1, a2):
    a1, a2 = promote_dtypes(asarray_leaf(a1), asarray_leaf(a2))
    _check_1d("polyadd", a1, a2)
    n1, n2 = get_aval(a1).shape[0], get_aval(a2).shape[0]
    return lax.add(_pad_front(a1, builtins.max(n2 - n1, 0)), _pad_front(a2, builtins.max(n1 - n2, 0)))


def polysub(a1, a2):
    a1, a2 = promote_dtypes(asarray_leaf(a1), asarray_leaf(a2))
    return polyadd(a1, lax.neg(a2))


def _trim_leading_zeros(a, name):
    if isinstance(a, core.Tracer):
        from ..errors import ConcretizationTypeError
        raise ConcretizationTypeError(a, f"jnp.{name} with trim_leading_zeros=True needs concrete "
                                      "coefficients")
    v = np.asarray(a)
    nz = np.nonzero(v)[0]
    start = int(nz[0]) if nz.size else v.shape[0] - 1
    return _take_slice(a, start, None, 0)


def polymul(a1, a2, *, trim_leading_zeros=False):
    a1, a2 = promote_dtypes(atleast_1d(asarray_leaf(a1)), atleast_1d(asarray_leaf(a2)))
    if trim_leading_zeros:
        a1, a2 = _trim_leading_zeros(a1, "polymul"), _trim_leading_zeros(a2, "polymul")
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    u, v = promote_dtypes_inexact(asarray_leaf(u), asarray_leaf(v))   # not broadcast together
    n, m = get_aval(u).shape[0], get_aval(v).shape[0]
    scale = lax.div(_const(1, v), lax.squeeze(_take_slice(v, 0, 1, 0), (0,)))
    q_len = builtins.max(n - m + 1, 1)
    q = [None] * q_len
    rem = u
    for k in range(0, n - m + 1):
        d = lax.mul(scale, lax.squeeze(_take_slice(rem, k, k + 1, 0), (0,)))
        q[k] = d
        update = lax.mul(d, v)
        rem = lax.sub(rem, lax.pad(update, _const(0, update), [(k, n - m - k, 0)]))
    if n - m + 1 <= 0:
        quotient = zeros((1,), get_aval(u).dtype)
    else:
        from . import stack
        quotient = stack(q)
    if trim_leading_zeros:
        rem = _trim_leading_zeros(rem, "polydiv")
    return quotient, rem


def polyder(p, m=1):
    p = asarray_leaf(p)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    for _ in range(m):
        n = get_aval(p).shape[0]
        if n <= 1:
            return zeros((0,), get_aval(p).dtype) if n == 0 else _take_slice(p, 0, 0, 0)
        coeff = Array(np.arange(n - 1, 0, -1).astype(get_aval(p).dtype), False)
        p = lax.mul(_take_slice(p, 0, n - 1, 0), coeff)
    return p


def polyint(p, m=1, k=None):
    p = asarray_leaf(p)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    (p,) = promote_args_inexact("polyint", p)
    if k is None:
        k = zeros((m,), get_aval(p).dtype)
    k = atleast_1d(lax._convert_element_type(asarray_leaf(k), get_aval(p).dtype, False))
    if get_aval(k).shape[0] == 1 and m > 1:
        k = lax.broadcast(lax.squeeze(k, (0,)), (m,))
    if get_aval(k).shape[0] != m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    for i in range(m):
        n = get_aval(p).shape[0]
        div = Array(np.arange(n, 0, -1).astype(get_aval(p).dtype), False)
        p = concatenate([lax.div(p, div), _take_slice(k, i, i + 1, 0)])
    return p


def poly(seq_of_zeros):
    a = asarray_leaf(seq_of_zeros)
    nd = get_aval(a).ndim
    if nd == 2 and get_aval(a).shape[0] == get_aval(a).shape[1] and get_aval(a).shape[0] > 0:
        from . import linalg
        a = linalg.eigvals(a)
    elif nd != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if dtypes.kind(get_aval(a).dtype) in "iub":
        a = lax._convert_element_type(a, to_inexact_dtype(get_aval(a).dtype), False)
    n = get_aval(a).shape[0]
    out = Array(np.ones((1,), get_aval(a).dtype), False)
    for i in range(n):
        r = _take_slice(a, i, i + 1, 0)
        out = convolve(out, concatenate([Array(np.ones((1,), get_aval(a).dtype), False), lax.neg(r)]))
    return out


def roots(p, *, strip_zeros=True):
    from . import linalg
    p = atleast_1d(asarray_leaf(p))
    (p,) = promote_args_inexact("roots", p)
    if strip_zeros:
        if isinstance(p, core.Tracer):
            from ..errors import ConcretizationTypeError
            raise ConcretizationTypeError(p, "jnp.roots with strip_zeros=True needs concrete "
                                          "coefficients; pass strip_zeros=False under jit")
        v = np.asarray(p)
        nz = np.nonzero(v)[0]
        if nz.size == 0:
            return zeros((0,), get_aval(p).dtype)
        trailing = v.shape[0] - 1 - int(nz[-1])
        p = _take_slice(p, int(nz[0]), int(nz[-1]) + 1, 0)
    else:
        trailing = 0
    n = get_aval(p).shape[0]
    if n < 2:
        out = zeros((0,), get_aval(p).dtype)
    else:
        lead = lax.squeeze(_take_slice(p, 0, 1, 0), (0,))
        first_row = lax.neg(lax.div(_take_slice(p, 1, None, 0), lead))
        eye = lax._convert_element_type(lax.eq(lax.broadcasted_iota(np.int32, (n - 2, n - 1), 0),
                                               lax.broadcasted_iota(np.int32, (n - 2, n - 1), 1)),
                                        get_aval(p).dtype, False)
        companion = concatenate([reshape(first_row, (1, n - 1)), eye], 0)
        out = linalg.eigvals(companion)
    if trailing:
        out = concatenate([out, zeros((trailing,), get_aval(out).dtype)])
    return out


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    from . import linalg
    from ._shape_ops import vander
    x, y = promote_args_inexact("polyfit", asarray_leaf(x), asarray_leaf(y))
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    order = deg + 1
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = asarray_leaf(w)
        lhs = multiply(lhs, lax.expand_dims(w, (1,)))
        rhs = multiply(rhs, w if get_aval(rhs).ndim == 1 else lax.expand_dims(w, (1,)))
    if rcond is None:
        rcond = get_aval(x).shape[0] * float(np.finfo(get_aval(x).dtype).eps)
    scale = sqrt(_sum(lax.mul(lhs, lhs), axis=0))
    lhs = true_divide(lhs, scale)
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = true_divide(c, scale if get_aval(c).ndim == 1 else lax.expand_dims(scale, (1,)))
    if full:
        return c, resids, rank, s, Array(np.asarray(rcond, get_aval(x).dtype), False)
    if cov:
        raise NotImplementedError("jnp.polyfit(cov=True) is not supported by numjax")
    return c


# ---------------------------------------------------------------- differences and integrals

def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = asarray_leaf(a)
    n = operator.index(n)
    nd = get_aval(a).ndim
    if nd == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    axis = canonicalize_axis(axis, nd)
    if n == 0:
        return a
    parts = []
    for extra in (prepend, a, append) if (prepend is not None or append is not None) else (a,):
        if extra is None:
            continue
        e = asarray_leaf(extra)
        if get_aval(e).ndim == 0:
            shape = list(get_aval(a).shape)
            shape[axis] = 1
            from . import broadcast_to
            e = broadcast_to(e, tuple(shape))
        parts.append(e)
    if len(parts) > 1:
        a = concatenate(parts, axis)
    for _ in range(n):
        length = get_aval(a).shape[axis]
        if length == 0:
            break
        hi, lo = _take_slice(a, 1, None, axis), _take_slice(a, 0, length - 1, axis)
        a = lax.ne(hi, lo) if get_aval(a).dtype == np.bool_ else lax.sub(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    a = ravel(asarray_leaf(ary))
    out = lax.sub(_take_slice(a, 1, None, 0), _take_slice(a, 0, get_aval(a).shape[0] - 1, 0)) \
        if get_aval(a).shape[0] else a
    parts = []
    if to_begin is not None:
        parts.append(lax._convert_element_type(ravel(asarray_leaf(to_begin)), get_aval(out).dtype, False))
    parts.append(out)
    if to_end is not None:
        parts.append(lax._convert_element_type(ravel(asarray_leaf(to_end)), get_aval(out).dtype, False))
    return concatenate(parts) if len(parts) > 1 else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = asarray_leaf(y)
    if x is None:
        (y,) = promote_args_inexact("trapezoid", y)
        y = moveaxis(y, axis, -1)
        n = get_aval(y).shape[-1]
        total = lax.add(_take_slice(y, 1, None, get_aval(y).ndim - 1), _take_slice(y, 0, n - 1, get_aval(y).ndim - 1))
        half_dx = lax.mul(lax._convert_element_type(asarray_leaf(dx), get_aval(y).dtype, False), _const(0.5, y))
        return lax.mul(_sum(total, axis=-1), half_dx)
    y, x = promote_args_inexact("trapezoid", y, asarray_leaf(x))
    y = moveaxis(y, axis, -1)
    if get_aval(x).ndim == 1:
        dxs = diff(x)
    else:
        dxs = diff(moveaxis(x, axis, -1), axis=-1)
    n = get_aval(y).shape[-1]
    last = get_aval(y).ndim - 1
    total = lax.add(_take_slice(y, 1, None, last), _take_slice(y, 0, n - 1, last))
    return lax.mul(_sum(multiply(dxs, total), axis=-1), _const(0.5, y))


def gradient(f, *varargs, axis=None, edge_order=None):
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    f = asarray_leaf(f)
    (f,) = promote_args_inexact("gradient", f)
    nd = get_aval(f).ndim
    axes = tuple(range(nd)) if axis is None else tuple(
        canonicalize_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments")
    out = []
    for ax, h in zip(axes, spacings):
        n = get_aval(f).shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least 2 elements are required.")
        if np.ndim(h) == 0:
            h = lax._convert_element_type(asarray_leaf(h), get_aval(f).dtype, False)
            inner = lax.div(lax.sub(_take_slice(f, 2, None, ax), _take_slice(f, 0, n - 2, ax)),
                            lax.mul(_const(2, f), h))
            first = lax.div(lax.sub(_take_slice(f, 1, 2, ax), _take_slice(f, 0, 1, ax)), h)
            last = lax.div(lax.sub(_take_slice(f, n - 1, n, ax), _take_slice(f, n - 2, n - 1, ax)), h)
        else:
            x = lax._convert_element_type(asarray_leaf(h), get_aval(f).dtype, False)
            d = diff(x)
            shape = [1] * nd
            shape[ax] = n - 1
            d = reshape(d, shape)
            h1, h2 = _take_slice(d, 0, n - 2, ax), _take_slice(d, 1, None, ax)
            f0, f1, f2 = _take_slice(f, 0, n - 2, ax), _take_slice(f, 1, n - 1, ax), _take_slice(f, 2, None, ax)
            # Second-order accurate interior differences for uneven spacing (numpy's formula).
            denom = lax.mul(lax.mul(h1, h2), lax.add(h1, h2))
            inner = lax.div(lax.add(lax.sub(lax.mul(lax.mul(h1, h1), f2), lax.mul(lax.mul(h2, h2), f0)),
                                    lax.mul(lax.sub(lax.mul(h2, h2), lax.mul(h1, h1)), f1)), denom)
            first = lax.div(lax.sub(_take_slice(f, 1, 2, ax), _take_slice(f, 0, 1, ax)), _take_slice(d, 0, 1, ax))
            last = lax.div(lax.sub(_take_slice(f, n - 1, n, ax), _take_slice(f, n - 2, n - 1, ax)),
                           _take_slice(d, n - 2, n - 1, ax))
        out.append(concatenate([first, inner, last], ax))
    return out[0] if len(out) == 1 else out


# ---------------------------------------------------------------- interpolation

def _gather_1d(table, idx):
    """table[idx] for a 1-D table by a one-hot select and sum (exact, gather-free)."""
    n = get_aval(table).shape[0]
    shape = get_aval(idx).shape
    flat = ravel(idx)
    k = get_aval(flat).shape[0]
    hit = lax.eq(lax.broadcast_in_dim(flat, (k, n), (0,)), lax.broadcasted_iota(get_aval(flat).dtype, (k, n), 1))
    vals = lax.broadcast_in_dim(table, (k, n), (1,))
    picked = lax.reduce_sum(lax.select(hit, vals, zeros_like(vals)), (1,))
    return reshape(picked, shape)


def interp(x, xp, fp, left=None, right=None, period=None):
    x, xp, fp = (asarray_leaf(v) for v in (x, xp, fp))
    if get_aval(xp).ndim != 1 or get_aval(fp).ndim != 1:
        raise ValueError("xp and fp must be one-dimensional")
    if get_aval(xp).shape[0] != get_aval(fp).shape[0]:
        raise ValueError("xp and fp must have the same length")
    x, xp = promote_dtypes_inexact(x, xp)   # not broadcast together
    (fp,) = promote_args_inexact("interp", fp)
    if period is not None:
        from . import argsort
        period = _abs(asarray_leaf(period))
        x = lax.rem(lax.add(lax.rem(x, lax._convert_element_type(period, get_aval(x).dtype, False)),
                            lax._convert_element_type(period, get_aval(x).dtype, False)),
                    lax._convert_element_type(period, get_aval(x).dtype, False))
        p = lax._convert_element_type(period, get_aval(xp).dtype, False)
        xp = lax.rem(lax.add(lax.rem(xp, p), p), p)
        order = argsort(xp)
        from . import take
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([lax.sub(_take_slice(xp, -1, None, 0), p), xp, lax.add(_take_slice(xp, 0, 1, 0), p)])
        fp = concatenate([_take_slice(fp, -1, None, 0), fp, _take_slice(fp, 0, 1, 0)])
    n = get_aval(xp).shape[0]
    xs = ravel(x)
    k = get_aval(xs).shape[0]
    i = lax.reduce_sum(lax._convert_element_type(
        lax.le(lax.broadcast_in_dim(xp, (k, n), (1,)), lax.broadcast_in_dim(xs, (k, n), (0,))),
        np.int32, False), (1,))
    i = reshape(lax.clamp(Array(np.asarray(1, np.int32)), i, Array(np.asarray(builtins.max(n - 1, 1), np.int32))),
                get_aval(x).shape)
    im1 = lax.sub(i, Array(np.asarray(1, np.int32)))
    xp_i, xp_im1 = _gather_1d(xp, i), _gather_1d(xp, im1)
    fp_i, fp_im1 = _gather_1d(fp, i), _gather_1d(fp, im1)
    df = lax.sub(fp_i, fp_im1)
    dx = lax.sub(xp_i, xp_im1)
    delta = lax.sub(x, xp_im1)
    eps = np.spacing(np.finfo(get_aval(xp).dtype).eps)
    dx0 = lax.le(lax.abs(dx), _const(eps, dx))
    safe_dx = where(dx0, _const(1, dx), dx)
    frac = lax.div(delta, safe_dx)
    if get_aval(fp).dtype != get_aval(frac).dtype:
        frac, df, fp_im1 = promote_dtypes(frac, df, fp_im1)
    f = where(dx0, fp_im1, lax.add(fp_im1, lax.mul(frac, df)))
    if period is None:
        first_f, last_f = _take_slice(fp, 0, 1, 0), _take_slice(fp, n - 1, n, 0)
        lo_val = lax.squeeze(first_f, (0,)) if left is None else left
        hi_val = lax.squeeze(last_f, (0,)) if right is None else right
        f = where(lax.lt(x, lax.squeeze(_take_slice(xp, 0, 1, 0), (0,))), lo_val, f)
        f = where(lax.gt(x, lax.squeeze(_take_slice(xp, n - 1, n, 0), (0,))), hi_val, f)
    return lax._convert_element_type(f, get_aval(fp_i).dtype if dtypes.kind(get_aval(fp).dtype) == "c"
                                     else get_aval(f).dtype, False)


# ---------------------------------------------------------------- statistics

def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    if y is not None:
        m, y = promote_args_inexact("cov", asarray_leaf(m), asarray_leaf(y))
        if get_aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_args_inexact("cov", asarray_leaf(m))
    if get_aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    X = atleast_2d(m)
    if not rowvar and get_aval(X).shape[0] != 1:
        X = X.T
    if get_aval(X).shape[0] == 0:
        return zeros((0, 0), get_aval(X).dtype)
    if y is not None:
        yy = atleast_2d(y)
        if not rowvar and get_aval(yy).shape[0] != 1:
            yy = yy.T
        X = concatenate([X, yy], 0)
    if ddof is None:
        ddof = 1 if not bias else 0
    n_obs = get_aval(X).shape[1]
    w = None
    if fweights is not None:
        w = lax._convert_element_type(asarray_leaf(fweights), get_aval(X).dtype, False)
    if aweights is not None:
        aw = lax._convert_element_type(asarray_leaf(aweights), get_aval(X).dtype, False)
        w = aw if w is None else lax.mul(w, aw)
    if w is None:
        avg = _mean(X, axis=1)
        w_sum = _const(n_obs, X)
        fact = lax.sub(w_sum, _const(ddof, X))
    else:
        w_sum = _sum(w)
        avg = lax.div(_sum(multiply(X, w), axis=1), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = lax.sub(w_sum, _const(ddof, X))
        else:
            aw = lax._convert_element_type(asarray_leaf(aweights), get_aval(X).dtype, False)
            fact = lax.sub(w_sum, lax.div(lax.mul(_const(ddof, X), _sum(multiply(w, aw))), w_sum))
    X = lax.sub(X, lax.expand_dims(avg, (1,)))
    X_T = X.T if w is None else multiply(X, w).T
    from ._elementwise import conj
    c = dot(X, conj(X_T))
    out = lax.div(c, fact)
    return lax.squeeze(out, tuple(i for i, s in enumerate(get_aval(out).shape) if s == 1)) \
        if builtins.any(s == 1 for s in get_aval(out).shape) else out


def corrcoef(x, y=None, rowvar=True):
    from ._elementwise import real
    c = cov(x, y, rowvar)
    if get_aval(c).ndim == 0:
        return lax.div(c, c)
    d = _diag_vec(c)
    stddev = sqrt(real(d))
    c = lax.div(c, lax.broadcast_in_dim(stddev, get_aval(c).shape, (0,)))
    c = lax.div(c, lax.broadcast_in_dim(stddev, get_aval(c).shape, (1,)))
    if dtypes.kind(get_aval(c).dtype) != "c":
        c = clip(c, -1, 1)
    return c


def _diag_vec(c):
    from ._shape_ops import diagonal
    return diagonal(c)


# ---------------------------------------------------------------- windows

def _window(M, fn):
    M = operator.index(M)
    dt = dtypes.default_float_dtype()
    if M <= 0:
        return zeros((0,), dt)
    if M == 1:
        return Array(np.ones((1,), dt), False)
    n = lax._convert_element_type(lax.iota(np.int32, M), dt, False)
    return fn(n, M, dt)


def bartlett(M):
    return _window(M, lambda n, M, dt: lax.sub(Array(np.asarray(1, dt)), _abs(
        lax.div(lax.sub(lax.mul(Array(np.asarray(2, dt)), n), Array(np.asarray(M - 1, dt))),
                Array(np.asarray(M - 1, dt))))))


def _cosine_window(coeffs):
    def fn(n, M, dt):
        out = Array(np.asarray(coeffs[0], dt))
        for k, c in enumerate(coeffs[1:], start=1):
            arg = lax.div(lax.mul(Array(np.asarray(2 * np.pi * k, dt)), n), Array(np.asarray(M - 1, dt)))
            out = lax.add(out, lax.mul(Array(np.asarray(c, dt)), cos(arg)))
        return out
    return fn


def blackman(M):
    return _window(M, _cosine_window((0.42, -0.5, 0.08)))


def hamming(M):
    return _window(M, _cosine_window((0.54, -0.46)))


def hanning(M):
    return _window(M, _cosine_window((0.5, -0.5)))


def kaiser(M, beta):
    from ._elementwise import i0

    def fn(n, M, dt):
        alpha = (M - 1) / 2.0
        b = lax._convert_element_type(asarray_leaf(beta), dt, False)
        r = lax.div(lax.sub(n, Array(np.asarray(alpha, dt))), Array(np.asarray(alpha, dt)))
        return lax.div(i0(lax.mul(b, sqrt(lax.sub(Array(np.asarray(1, dt)), lax.mul(r, r))))), i0(b))
    return _window(M, fn)
