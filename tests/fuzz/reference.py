"""numpy implementations of JAX 0.10.2's semantics, where numpy's own rules differ.

Everything here takes numpy arrays already in the operation's dtype (the caller promotes
with :func:`cast`) and returns a numpy array in the result dtype.  The primitives follow
XLA's CPU semantics, which JAX documents and exposes unchanged:

* integer division by zero gives -1 (all bits set: the unsigned maximum), the remainder by
  zero is the dividend, and ``MIN // -1`` wraps to ``MIN``;
* a shift by an amount outside ``[0, bits)`` (compared as unsigned) gives 0, or the sign
  fill for an arithmetic right shift;
* float -> integer conversion saturates (NaN -> 0, out-of-range -> the nearest limit);
* ``max``/``min`` propagate NaN and order -0.0 below +0.0;
* sorting is stable, with -0.0 == +0.0 and every NaN last.

The ``jnp`` functions built from these primitives (floor_divide, remainder, power of
integers, ...) repeat JAX's formulas step for step, so the expected result of a corner case
is JAX's, not numpy's.  Float results are computed in a wider type (float64, or long double
for sums) and rounded once to the result dtype.
"""
import contextlib

import numpy as np

from jax_types import bits, kind, np_dtype

WIDE = np.longdouble


@contextlib.contextmanager
def quiet():
    with np.errstate(all="ignore"):
        yield


def cast(x, dtype):
    """JAX's ``convert_element_type`` to ``dtype`` (a name)."""
    dt = np_dtype(dtype)
    x = np.asarray(x)
    src = x.dtype
    if dt == src:
        return x.copy()
    with quiet():
        if dtype == "bool":
            return x != 0
        if src.kind == "f" or src == np_dtype("bfloat16") or src.kind == "V":
            if kind(dtype) in "iu":
                return _float_to_int(x.astype(np.float64), dtype)
            return _to_float(x.astype(np.float64) if src.itemsize < 8 else x, dtype)
        if kind(dtype) == "f":
            return _to_float(x, dtype)
        if src == np.bool_:
            return x.astype(dt)
        return x.astype(dt)   # integer -> integer wraps, as in XLA


def _to_float(x, dtype):
    # One rounding, from the source type (XLA converts directly, not via float32).
    return np.asarray(x).astype(np_dtype(dtype))


def _float_to_int(x, dtype):
    info = np.iinfo(np_dtype(dtype))
    out = np.zeros(x.shape, np_dtype(dtype))
    lo, hi = float(info.min), float(info.max)
    t = np.trunc(x)
    ok = ~np.isnan(x) & (t >= lo) & (t < hi + 1.0)
    out[ok] = t[ok].astype(np_dtype(dtype)) if dtype not in ("int64", "uint64") else \
        np.array([int(v) for v in t[ok]], dtype=np_dtype(dtype)).reshape(-1)
    out[~np.isnan(x) & (t >= hi + 1.0)] = info.max
    out[~np.isnan(x) & (t < lo)] = info.min
    return out


# ---------------------------------------------------------------- integer arithmetic


def is_float(dtype):
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == np_dtype("bfloat16")


def _as_unsigned(x):
    return x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind == "i" else x


def lax_div(x, y):
    """``lax.div``: truncating for integers, with XLA's results for y == 0 and MIN / -1."""
    if is_float(x.dtype):
        return _float_op(np.true_divide, x, y)
    zero = y == 0
    safe_y = np.where(zero, 1, y).astype(x.dtype)
    if x.dtype.kind == "i":
        overflow = (x == np.iinfo(x.dtype).min) & (safe_y == -1)
        safe_y = np.where(overflow, 1, safe_y).astype(x.dtype)
        q = _trunc_div(x, safe_y)
        q = np.where(overflow, x, q)
        return np.where(zero, np.array(-1, x.dtype), q).astype(x.dtype)
    q = x // safe_y
    return np.where(zero, np.array(np.iinfo(x.dtype).max, x.dtype), q).astype(x.dtype)


def _trunc_div(x, y):
    # Python integers avoid int64 overflow for |MIN|; small arrays, so object math is fine.
    xo, yo = x.astype(object), y.astype(object)
    q = np.vectorize(lambda a, b: abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1),
                     otypes=[object])(xo, yo) if x.size else np.zeros(x.shape, object)
    return q.astype(x.dtype)


def lax_rem(x, y):
    """``lax.rem``: the C remainder (sign of the dividend); x % 0 == x; MIN % -1 == 0."""
    if is_float(x.dtype):
        return _float_op(np.fmod, x, y)
    zero = y == 0
    safe_y = np.where(zero, 1, y).astype(x.dtype)
    if x.dtype.kind == "i":
        overflow = (x == np.iinfo(x.dtype).min) & (safe_y == -1)
        safe_y = np.where(overflow, 1, safe_y).astype(x.dtype)
        r = np.fmod(x, safe_y)
        r = np.where(overflow, 0, r)
    else:
        r = x % safe_y
    return np.where(zero, x, r).astype(x.dtype)


def lax_sign(x):
    if x.dtype.kind == "u":
        return (x != 0).astype(x.dtype)
    if x.dtype.kind == "i":
        return np.sign(x).astype(x.dtype)
    with quiet():
        w = x.astype(np.float64)
        out = np.where(np.isnan(w), w, np.where(w == 0, w, np.sign(w)))
    return out.astype(x.dtype)


def shift_left(x, s):
    n = bits(x.dtype.name) if x.dtype.name != "bfloat16" else 16
    big = _as_unsigned(s).astype(np.uint64) >= n
    amount = np.where(big, 0, s).astype(x.dtype)
    with quiet():
        out = np.left_shift(x, amount)
    return np.where(big, np.zeros((), x.dtype), out).astype(x.dtype)


def shift_right_logical(x, s):
    n = 8 * x.dtype.itemsize
    big = _as_unsigned(s).astype(np.uint64) >= n
    amount = np.where(big, 0, s).astype(x.dtype)
    out = np.asarray(np.right_shift(_as_unsigned(x), _as_unsigned(amount))).view(x.dtype)
    return np.where(big, np.zeros((), x.dtype), out).astype(x.dtype)


def shift_right_arithmetic(x, s):
    n = 8 * x.dtype.itemsize
    big = _as_unsigned(s).astype(np.uint64) >= n
    if x.dtype.kind == "u":
        # An arithmetic shift of an unsigned value replicates the top bit.
        signed = x.view(np.dtype(f"i{x.dtype.itemsize}"))
        return shift_right_arithmetic(signed, s.view(signed.dtype)).view(x.dtype)
    amount = np.where(big, n - 1, s).astype(x.dtype)
    return np.right_shift(x, amount).astype(x.dtype)


# ---------------------------------------------------------------- float helpers


def compute_dtype(dtype):
    """The type XLA's CPU backend computes a float op in: float32 for the 16-bit floats."""
    return np.dtype(np.float32) if np.dtype(dtype).itemsize == 2 else np.dtype(dtype)


def _float_op(fn, *args):
    """An IEEE operation the way XLA runs it: in :func:`compute_dtype`, rounded to the dtype."""
    out_dtype = args[0].dtype
    with quiet():
        return np.asarray(fn(*[a.astype(compute_dtype(out_dtype)) for a in args])).astype(out_dtype)


def lax_max(x, y):
    return _minmax(x, y, True)


def lax_min(x, y):
    return _minmax(x, y, False)


def _minmax(x, y, is_max):
    if x.dtype.kind in "iub":
        return (np.maximum if is_max else np.minimum)(x, y).astype(x.dtype)
    with quiet():
        a, b = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
        pick_a = (a > b) if is_max else (a < b)
        # Equal values: only +-0 differ; max prefers +0, min prefers -0.
        tie = a == b
        pick_a = pick_a | (tie & (np.signbit(b) if is_max else np.signbit(a)))
        out = np.where(pick_a, a, b)
        out = np.where(np.isnan(a) | np.isnan(b), np.nan, out)
    return out.astype(x.dtype)


def integer_pow(x, n):
    """``lax.integer_pow``: binary exponentiation in the dtype (wrapping for integers)."""
    if n == 0:
        return np.ones_like(x)
    acc = None
    base = x.copy()
    m = abs(n)
    with quiet():
        while m:
            if m & 1:
                acc = base if acc is None else _mul(acc, base)
            m >>= 1
            if m:
                base = _mul(base, base)
        if n < 0:
            acc = _float_op(np.true_divide, np.ones_like(acc), acc)
    return acc


def _mul(a, b):
    if a.dtype.kind in "iub":
        return (a * b).astype(a.dtype)
    return _float_op(np.multiply, a, b)


def wrap(fn, x, *rest):
    """An integer operation with wrapping (numpy wraps arrays silently under errstate)."""
    with quiet():
        return np.asarray(fn(x, *rest)).astype(x.dtype)


# ---------------------------------------------------------------- jnp formulas


def floor_divide(x, y):
    if x.dtype.kind == "u":
        return lax_div(x, y)
    if x.dtype.kind == "i":
        q = lax_div(x, y)
        fix = (lax_sign(x) != lax_sign(y)) & (lax_rem(x, y) != 0)
        return np.where(fix, wrap(np.subtract, q, np.ones((), x.dtype)), q).astype(x.dtype)
    return float_divmod(x, y)[0]


def float_divmod(x, y):
    """JAX's ``_float_divmod`` (CPython's float_divmod), each step rounded to the dtype."""
    x, y = np.broadcast_arrays(x, y)
    mod = lax_rem(x, y)
    x_fixed = np.where(y == 0, x, _float_op(np.subtract, x, mod)).astype(x.dtype)
    div = _float_op(np.true_divide, x_fixed, y)
    ind = (mod != 0) & (lax_sign(y) != lax_sign(mod))
    mod = np.where(ind, _float_op(np.add, mod, y), mod).astype(x.dtype)
    div = np.where(ind, _float_op(np.subtract, div, np.ones((), x.dtype)), div).astype(x.dtype)
    return lax_round_even_away(div), mod


def lax_round_even_away(x):
    """``lax.round`` with its default rounding method (half away from zero)."""
    with quiet():
        w = x.astype(np.float64)
        out = np.where(np.isfinite(w), np.copysign(np.floor(np.abs(w) + 0.5), w), w)
        # floor(|w| + 0.5) is wrong when |w| + 0.5 rounds up (w = 0.49999999999999994).
        out = np.where(np.abs(out - w) > 0.5, out - np.copysign(1.0, w), out)
    return out.astype(x.dtype)


def remainder(x, y):
    x, y = np.broadcast_arrays(x, y)
    if x.dtype.kind in "iu":
        y = np.where(y == 0, np.ones((), y.dtype), y).astype(y.dtype)
    trunc = lax_rem(x, y)
    zero = np.zeros((), x.dtype)
    do_plus = ((trunc < zero) != (y < zero)) & (trunc != zero)
    plus = wrap(np.add, trunc, y) if x.dtype.kind in "iu" else _float_op(np.add, trunc, y)
    return np.where(do_plus, plus, trunc).astype(x.dtype)


def fmod(x, y, guard=True):
    x, y = np.broadcast_arrays(x, y)
    if x.dtype.kind in "iu" and guard:
        y = np.where(y == 0, np.ones((), y.dtype), y).astype(y.dtype)
    return lax_rem(x, y)


def pow_int_int(x, y):
    """JAX's integer ``power`` with an array exponent: six rounds of binary exponentiation
    (only the low six bits of the exponent count; a negative one is read as unsigned)."""
    x, y = np.broadcast_arrays(x, y)
    one, zero = np.ones((), y.dtype), np.zeros((), y.dtype)
    acc = np.where((x == 0) & (y != 0), zero, one).astype(x.dtype)
    base, e = x.astype(x.dtype), y.astype(y.dtype)
    for _ in range(6):
        acc = np.where((e & one) != 0, wrap(np.multiply, acc, base), acc).astype(x.dtype)
        base = wrap(np.multiply, base, base)
        e = shift_right_logical(e, np.ones(e.shape, e.dtype))
    return acc


def jnp_sort(x, axis):
    if x.dtype.kind in "iub":
        return np.sort(x, axis=axis, kind="stable")
    return np.take_along_axis(x, jnp_argsort(x, axis), axis=axis)


def jnp_argsort(x, axis):
    if x.dtype.kind in "iub":
        return np.argsort(x, axis=axis, kind="stable")
    w = x.astype(np.float64)
    w = np.where(w == 0, 0.0, w)                 # -0.0 sorts with +0.0
    return np.argsort(w, axis=axis, kind="stable")   # numpy puts every NaN last, stably


def argmax(x, axis, is_max):
    """First index of the extremum; NaN counts as the extremum (its first occurrence)."""
    if x.dtype.kind in "iub":
        return (np.argmax if is_max else np.argmin)(x, axis=axis)
    w = x.astype(np.float64)
    nan = np.isnan(w)
    w = np.where(nan, np.inf if is_max else -np.inf, w)
    idx = (np.argmax if is_max else np.argmin)(w, axis=axis)
    has_nan = nan.any(axis=axis)
    first_nan = np.argmax(nan, axis=axis)
    return np.where(has_nan, first_nan, idx)


def reduce_max(x, axis, keepdims, is_max):
    if x.dtype.kind in "iub":
        return (np.max if is_max else np.min)(x, axis=axis, keepdims=keepdims)
    w = x.astype(np.float64)
    with quiet():
        m = (np.max if is_max else np.min)(w, axis=axis, keepdims=True)
        # +-0 ties: max prefers +0.0, min prefers -0.0.
        zero = m == 0
        signed = np.signbit(w) & (w == 0)
        any_neg_zero = np.any(signed, axis=axis, keepdims=True)
        any_pos_zero = np.any((w == 0) & ~np.signbit(w), axis=axis, keepdims=True)
        if is_max:
            m = np.where(zero & any_pos_zero, 0.0, np.where(zero, -0.0, m))
        else:
            m = np.where(zero & any_neg_zero, -0.0, np.where(zero, 0.0, m))
    if not keepdims:
        m = np.squeeze(m, axis=axis) if axis is not None else m.reshape(())
    return m.astype(x.dtype)