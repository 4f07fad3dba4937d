"""Value ranges of a fused region's floating-point values: an interval and whether the value may
be NaN, for each value the region computes, from its operations alone (inputs and values from
outside the region may be anything).

Why: the vector math functions carry clamps, checks and selects for arguments that a chain of
operations often rules out (``exp(sin(x) * 0.5 + 0.25)`` never sees |x| > 80, ``cos(log1p(..))``
there never needs an argument reduction).  A backend asks ``region_ranges`` for its arguments'
ranges and calls a function's variant for that range (``scalar.expression``); the variants give
the function's results on their domain.

Sound, not tight: every bound is computed in float64 and, but for operations that round
nothing (max, neg, a clip's exact bounds, ...), widened outward by ``_SLACK`` (relative, many ulps
of float32, so the rounding of the computed values never leaves the interval) and absolutely by
the dtype's smallest normal (subnormal results round coarsely, or flush); subnormal arguments
count as zero too (XLA reads them so); bounds past the dtype's largest finite value become
infinite, and what no rule covers is ``FULL``.  Backend-neutral: it imports no compiler.
"""
import math
from typing import NamedTuple

import numpy as np

from numjax.jaxpr import Literal
from numjax.lax import elementwise as ew
from numjax.lax import reductions as red
from numjax.lax import shape as lax_shape

from . import fusion

INF = math.inf
_SLACK = 2.0 ** -18          # relative widening per operation (64 float32 ulps)


class Range(NamedTuple):
    lo: float
    hi: float
    nan: bool       # the value may be NaN

    def within(self, lo, hi):
        """Whether every non-NaN value lies in [lo, hi]."""
        return lo <= self.lo and self.hi <= hi

    @property
    def magnitude(self):
        """The largest |value| (inf when unbounded)."""
        return max(-self.lo, self.hi)


FULL = Range(-INF, INF, True)


def region_ranges(eqns, known=None):
    """{var: Range} for the floating-point results of ``eqns`` (in order), given the ranges
    ``known`` of values made before them (a program's, for a region's equations)."""
    env = dict(known or {})
    for eqn in eqns:
        rule = RULES.get(eqn.primitive)
        if rule is None or len(eqn.outvars) != 1:
            continue
        out = eqn.outvars[0]
        if np.dtype(out.aval.dtype).kind != "f":
            continue
        env[out] = apply(eqn.primitive, [_range_of(v, env) for v in eqn.invars], out.aval.dtype, eqn.params)
    return env


def apply(prim, args, dtype, params):
    """The range of ``prim``'s result (of ``dtype``) for arguments in the ranges ``args``."""
    tiny = float(np.finfo(dtype).tiny)
    try:
        got = RULES[prim](*[_with_zero_for_subnormals(a, tiny) for a in args], **params)
    except (OverflowError, ValueError, ZeroDivisionError):
        return FULL
    return _finish(got, dtype, exact=prim in _EXACT or _exact_conversion(prim, got, dtype))


def _exact_conversion(prim, r, dtype):
    """A conversion whose bounds the dtype holds exactly (a literal clip bound, say)."""
    return prim is ew.convert_element_type_p and all(
        math.isinf(b) or float(np.asarray(b, dtype)) == b for b in (r.lo, r.hi))


def _range_of(v, env):
    if type(v) is Literal:
        val = np.asarray(v.val)
        if val.ndim == 0 and val.dtype.kind in "fiub":
            x = float(val)
            return Range(-INF, INF, True) if math.isnan(x) else Range(x, x, False)
        return FULL
    return env.get(v, FULL)


def _with_zero_for_subnormals(a, tiny):
    """``a`` with 0 added where it holds subnormals: XLA's CPU code reads them as zero (DAZ),
    so log(1e-40) is -inf."""
    lo = 0.0 if 0.0 < a.lo < tiny else a.lo
    hi = 0.0 if -tiny < a.hi < 0.0 else a.hi
    return a if (lo, hi) == (a.lo, a.hi) else Range(lo, hi, a.nan)


def _finish(r, dtype, exact=False):
    """``r`` widened outward (unless ``exact``: the operation rounds nothing), its bounds past
    the dtype's range infinite."""
    if r.lo > r.hi or math.isnan(r.lo) or math.isnan(r.hi):
        return FULL
    info = np.finfo(dtype)
    big, tiny = float(info.max), float(info.tiny)
    lo, hi = r.lo, r.hi
    if not exact:
        lo, hi = lo - abs(lo) * _SLACK - tiny, hi + abs(hi) * _SLACK + tiny
    return Range(-INF if lo < -big else lo, INF if hi > big else hi, r.nan)


def _monotone(f, lo_domain=-INF):
    """The rule of an increasing function defined on [lo_domain, inf) (NaN below it)."""
    def rule(a, **params):
        lo, hi = max(a.lo, lo_domain), a.hi
        if hi < lo_domain:
            return Range(-INF, INF, True)
        return Range(_call(f, lo, -INF), _call(f, hi, INF), a.nan or a.lo < lo_domain)
    return rule


def _call(f, x, overflow):
    try:
        y = f(x)
    except OverflowError:
        return overflow
    except ValueError:           # at the domain's edge (log(0)): the limit
        return -INF
    return overflow if math.isnan(y) else y


def _add(a, b, **params):
    nan = a.nan or b.nan or (a.hi == INF and b.lo == -INF) or (a.lo == -INF and b.hi == INF)
    lo, hi = a.lo + b.lo, a.hi + b.hi
    return Range(-INF if math.isnan(lo) else lo, INF if math.isnan(hi) else hi, nan)


def _neg(a, **params):
    return Range(-a.hi, -a.lo, a.nan)


def _sub(a, b, **params):
    return _add(a, _neg(b))


def _mul(a, b, **params):
    products = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    zero_times_inf = any(math.isnan(p) for p in products)
    products = [p for p in products if not math.isnan(p)] + ([0.0] if zero_times_inf else [])
    return Range(min(products), max(products), a.nan or b.nan or zero_times_inf)


def _div(a, b, **params):
    if b.lo <= 0.0 <= b.hi:
        nan = a.nan or b.nan or a.lo <= 0.0 <= a.hi or math.isinf(a.magnitude)
        return Range(-INF, INF, nan)
    quotients = [x / y if not (math.isinf(x) and math.isinf(y)) else math.nan
                 for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    inf_over_inf = any(math.isnan(q) for q in quotients)
    quotients = [q for q in quotients if not math.isnan(q)]
    if inf_over_inf or not quotients:
        return Range(-INF, INF, True)
    return Range(min(quotients), max(quotients), a.nan or b.nan)


def _max(a, b, **params):
    return Range(max(a.lo, b.lo), max(a.hi, b.hi), a.nan or b.nan)


def _min(a, b, **params):
    return Range(min(a.lo, b.lo), min(a.hi, b.hi), a.nan or b.nan)


def _abs(a, **params):
    if a.lo >= 0.0:
        return a
    if a.hi <= 0.0:
        return _neg(a)
    return Range(0.0, a.magnitude, a.nan)


def _periodic(a, **params):
    """sin, cos: [-1, 1]; NaN from NaN or an infinite argument."""
    return Range(-1.0, 1.0, a.nan or math.isinf(a.magnitude))


def _sin(a, **params):
    if a.within(-math.pi / 2, math.pi / 2):
        return Range(math.sin(a.lo), math.sin(a.hi), a.nan)
    return _periodic(a)


def _integer_pow(a, *, y, **params):
    if y < 0:
        return FULL
    if y % 2:
        return Range(_call(lambda x: x ** y, a.lo, -INF), _call(lambda x: x ** y, a.hi, INF), a.nan)
    m = _abs(a)
    return Range(_call(lambda x: x ** y, m.lo, INF), _call(lambda x: x ** y, m.hi, INF), a.nan)


def _convert(a, *, new_dtype, **params):
    return a        # (float -> float: the rounding is within the slack; an int value has no range but a literal's)


def _select_n(which, *cases, **params):
    return Range(min(c.lo for c in cases), max(c.hi for c in cases), any(c.nan for c in cases))


def _clamp(lo, x, hi, **params):
    return _min(_max(x, lo), hi)


def _same(a, **params):
    return a


def _concatenate(*parts, **params):
    return _select_n(None, *parts)


def _pad(a, value, **params):
    return _select_n(None, a, value)


def _reduce_max(a, **params):
    return Range(-INF, a.hi, a.nan)      # (-inf: the maximum of no elements)


def _reduce_min(a, **params):
    return Range(a.lo, INF, a.nan)


def _logistic(x):
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


# (their results are among their arguments' values, or negations of them: nothing rounds)
_EXACT = {ew.neg_p, ew.abs_p, ew.max_p, ew.min_p, ew.select_n_p, ew.clamp_p, ew.stop_gradient_p,
          fusion.identity_load_p, lax_shape.broadcast_in_dim_p, lax_shape.reshape_p,
          lax_shape.transpose_p, lax_shape.squeeze_p, lax_shape.rev_p, lax_shape.concatenate_p,
          lax_shape.pad_p, red.reduce_max_p, red.reduce_min_p}

RULES = {
    ew.add_p: _add, ew.add_any_p: _add, ew.sub_p: _sub, ew.mul_p: _mul, ew.div_p: _div,
    ew.neg_p: _neg, ew.abs_p: _abs, ew.max_p: _max, ew.min_p: _min,
    ew.exp_p: _monotone(math.exp), ew.expm1_p: _monotone(math.expm1),
    ew.log_p: _monotone(math.log, 0.0), ew.log1p_p: _monotone(math.log1p, -1.0),
    ew.sqrt_p: _monotone(math.sqrt, 0.0), ew.tanh_p: _monotone(math.tanh),
    ew.logistic_p: _monotone(_logistic), ew.erf_p: _monotone(math.erf),
    ew.sin_p: _sin, ew.cos_p: _periodic,
    ew.integer_pow_p: _integer_pow, ew.convert_element_type_p: _convert,
    ew.select_n_p: _select_n, ew.clamp_p: _clamp, ew.stop_gradient_p: _same,
    fusion.identity_load_p: _same, lax_shape.broadcast_in_dim_p: _same, lax_shape.reshape_p: _same,
    lax_shape.transpose_p: _same, lax_shape.squeeze_p: _same, lax_shape.rev_p: _same,
    lax_shape.concatenate_p: _concatenate, lax_shape.pad_p: _pad, red.reduce_max_p: _reduce_max, red.reduce_min_p: _reduce_min,
}
