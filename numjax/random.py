"""numjax.random: JAX's counter-based PRNG (threefry2x32), bit for bit.

Every sampler derives its values from ``random_bits`` exactly as JAX 0.10.2 does (same
splits, same bit manipulations, same float operations), so float32 results equal JAX's
bits for ``bits``/``uniform``/``randint``/... and agree to float32 rounding where a
transcendental function is involved.  Samplers are plain compositions of lax operations:
they run eagerly, under jit, vmap (over keys or parameters) and autodiff.
"""
import math
import operator
from collections.abc import Sequence

import numpy as np

from . import core, dtypes, lax
from . import numpy as jnp
from ._prng import (UINT_DTYPES, PRNGKeyArray, check_key_data, check_prng_key, key_dtype_fry,
                    random_seed, return_keys, threefry_fold_in, threefry_random_bits,
                    threefry_split)
from .array import Array
from .lax.random_bits import mul_add

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in", "bits",
    "uniform", "normal", "randint", "bernoulli", "categorical", "choice", "permutation",
    "shuffle", "truncated_normal", "exponential", "gamma", "loggamma", "beta", "dirichlet",
    "poisson", "laplace", "logistic", "gumbel", "cauchy", "t", "lognormal",
    "multivariate_normal", "orthogonal", "rademacher", "maxwell", "pareto", "weibull_min",
    "chisquare", "f", "binomial", "geometric", "generalized_normal", "ball",
    "double_sided_maxwell", "triangular", "rayleigh", "wald", "PRNGKeyArray", "key_dtype", "clone",
]


# ---------------------------------------------------------------- helpers

def _canonical_shape(shape):
    """A sampler's ``shape``: a sequence of ints, or one int (as JAX's canonicalize_shape)."""
    try:
        dims = (operator.index(shape),)
    except TypeError:
        try:
            dims = tuple(operator.index(d) for d in shape)
        except TypeError:
            raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got "
                            f"{shape}. Pass the sample shape as a tuple of Python ints, e.g. "
                            "shape=(3,).") from None
    if any(d < 0 for d in dims):
        raise TypeError(f"random sample shape must have every element be nonnegative, got {dims}.")
    return dims


def _user_dtype(name, dtype, default):
    """``dtype`` as the sampler gets it: the default when None, else JAX's checked request."""
    return default if dtype is None else dtypes.check_user_dtype(dtype, name)


def _float_dtype(name, dtype):
    dt = _user_dtype(name, dtype, dtypes.default_float_dtype())
    if dtypes.kind(dt) != "f":
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt



def _out_sharding_kw(sampler):
    """JAX's ``out_sharding=`` keyword of a sampler: the samples placed (or typed) so; the bits
    are the same whatever the sharding."""
    import functools

    @functools.wraps(sampler)
    def sample(*args, out_sharding=None, **kwargs):
        out = sampler(*args, **kwargs)
        if out_sharding is None:
            return out
        from .sharding import reshard
        return reshard(out, out_sharding)
    return sample


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        merged = jnp.broadcast_shapes(tuple(shape), *map(tuple, param_shapes))
        if tuple(merged) != tuple(shape):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal the "
                             f"shape argument, but got result {tuple(merged)} for shape argument "
                             f"{tuple(shape)}.")


def _broadcast_shapes(name, shape, *args):
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return tuple(jnp.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shape = _canonical_shape(shape)
    _check_shape(name, shape, *arg_shapes)
    return shape


def _const(like, value):
    """``value`` as a strong constant of ``like``'s dtype."""
    return Array(np.asarray(value, core.get_aval(like).dtype))


def _c(value, dtype):
    return Array(np.asarray(value, dtype))


def _full_like(x, value, dtype=None):
    aval = core.get_aval(x)
    return jnp.full(aval.shape, value, aval.dtype if dtype is None else dtype)


def _split(base, num=2):
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return threefry_split(base, shape)


def _split2(base, num=2):
    keys = _split(base, num)
    return [lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,)) for i in range(num)]


def _random_bits(base, bit_width, shape):
    return threefry_random_bits(base, bit_width, shape)


def _as_float(x, dtype):
    return lax.convert_element_type(jnp.asarray(x), dtype)


# ---------------------------------------------------------------- keys

def PRNGKey(seed, *, impl=None):
    """A legacy raw key: uint32[2] holding (seed >> 32, seed & 0xFFFFFFFF)."""
    _check_impl(impl)
    return random_seed("PRNGKey", seed)


def key(seed, *, impl=None, dtype=None):
    """A typed scalar key (dtype ``key<fry>``)."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    _check_impl(impl if impl is not None else dtype)
    return PRNGKeyArray(random_seed("key", seed))


def _check_impl(impl):
    if impl is not None and not (impl == "threefry2x32" or impl == key_dtype_fry):
        raise ValueError(f"unrecognized PRNG implementation {impl!r}: numjax provides threefry2x32")


def key_dtype(impl=None):
    """The dtype of typed keys (``key<fry>``): numjax has threefry2x32 only."""
    _check_impl(impl)
    return key_dtype_fry


def clone(key):
    """The key itself, for reuse: JAX's key-reuse checker (which numjax has not) is told of
    the reuse; the bits are the same."""
    return key


def key_data(keys):
    base, _ = check_prng_key("key_data", keys, allow_batched=True)
    return base


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
    _check_impl(impl if impl is not None else dtype)
    data = key_bits_array
    if isinstance(data, (np.ndarray, np.generic, list, tuple)):
        data = Array(np.asarray(data))
    check_key_data(data)
    return PRNGKeyArray(data)


def key_impl(keys):
    check_prng_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def split(key, num=2):
    """``num`` new keys (an int, or a shape tuple) along new leading axes."""
    base, raw = check_prng_key("split", key)
    return return_keys(raw, _split(base, num))


def fold_in(key, data):
    """A new key derived from ``key`` and the 32-bit integer ``data``."""
    base, raw = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    return return_keys(raw, threefry_fold_in(base, jnp.asarray(data, dtype=np.uint32)))


@_out_sharding_kw
def bits(key, shape=(), dtype=None):
    base, _ = check_prng_key("bits", key)
    dt = _user_dtype("bits", dtype, dtypes.uint32)
    if dtypes.kind(dt) != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return _random_bits(base, dt.itemsize * 8, _canonical_shape(shape))


# ---------------------------------------------------------------- continuous samplers

@_out_sharding_kw
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    base, _ = check_prng_key("uniform", key)
    return _uniform(base, _canonical_shape(shape), _float_dtype("uniform", dtype), minval, maxval)


def _uniform(base, shape, dtype, minval=0.0, maxval=1.0):
    """Random mantissa bits under the exponent of 1.0, giving [1, 2), shifted and scaled."""
    _check_shape("uniform", shape)
    minval, maxval = _as_float(minval, dtype), _as_float(maxval, dtype)
    for arg, bound in (("minval", minval), ("maxval", maxval)):
        bound_shape = core.get_aval(bound).shape
        if len(bound_shape) > len(shape) or any(
                b not in (1, d) for b, d in zip(bound_shape[::-1], tuple(shape)[::-1])):
            raise TypeError(f"uniform got incompatible shapes for broadcasting: {arg} of shape "
                            f"{bound_shape} does not broadcast to the sample shape {tuple(shape)}; "
                            f"give {arg} a shape that broadcasts to it, or a scalar.")
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes, got {np.dtype(dtype).name}: "
                        "sample a wider float (jnp.float8_e4m3fn, jnp.bfloat16, ...) and convert.")
    rng_bits = 8 if nmant < 8 else nbits
    uint = UINT_DTYPES[nbits]
    rbits = _random_bits(base, rng_bits, shape)
    if rng_bits != nbits:
        rbits = lax.convert_element_type(rbits, uint)
    float_bits = lax.bitwise_or(lax.shift_right_logical(rbits, _c(rng_bits - nmant, uint)),
                                _c(np.array(1.0, dtype).view(uint), uint))
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), _c(1.0, dtype))
    span = lax.sub(maxval, minval)
    # XLA contracts the float32 form into one FMA; bfloat16's float32 detour rounds in between.
    scaled = (lax.add(lax.mul(floats, span), minval) if dtypes.is_low_precision_float(dtype)
              else mul_add(floats, span, minval))
    return lax.max(minval, lax.reshape(scaled, shape))


@_out_sharding_kw
def normal(key, shape=(), dtype=None):
    base, _ = check_prng_key("normal", key)
    shape = _canonical_shape(shape)
    dt = _user_dtype("normal", dtype, dtypes.default_float_dtype())
    if dtypes.kind(dt) not in "fc":
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dt}")
    if dtypes.kind(dt) == "c":
        real = np.zeros((), dt).real.dtype
        k_re, k_im = _split2(base)
        re = lax.convert_element_type(_normal_real(k_re, shape, real), dt)
        im = lax.convert_element_type(_normal_real(k_im, shape, real), dt)
        return lax.div(lax.add(re, lax.mul(_c(1j, dt), im)), _c(np.sqrt(2), dt))
    return _normal_real(base, shape, dt)


def _normal_real(base, shape, dtype):
    """sqrt(2) * erf_inv(u) with u uniform on (-1, 1)."""
    _check_shape("normal", shape)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = _uniform(base, shape, dtype, Array(lo), Array(np.array(1.0, dtype)))
    return lax.mul(_c(np.sqrt(2), dtype), lax.erf_inv(u))


@_out_sharding_kw
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    base, _ = check_prng_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    shape = _broadcast_shapes("truncated_normal", None if shape is None else shape, lower, upper)
    sqrt2 = _c(np.sqrt(2), dtype)
    lower = _as_float(lower, dtype)
    upper = _as_float(upper, dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = _uniform(base, shape, dtype, a, b)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    lo = lax.nextafter(lax.stop_gradient(lower), _c(np.inf, dtype))
    hi = lax.nextafter(lax.stop_gradient(upper), _c(-np.inf, dtype))
    return jnp.clip(out, lo, hi)


@_out_sharding_kw
def bernoulli(key, p=np.float32(0.5), shape=None, mode="low"):
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    base, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype_and_weak(p)[0] if not hasattr(p, "dtype") else p.dtype
    dtype = dtypes.canonicalize_dtype(dtype)
    if dtypes.kind(dtype) != "f":
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(jnp.asarray(p), dtype)
    shape = np.shape(p) if shape is None else _canonical_shape(shape)
    _check_shape("bernoulli", shape, np.shape(p))
    if mode == "high":
        both = _uniform(base, (2, *shape), dtype)
        u1, u2 = both[0], both[1]
        u2 = u2 * _c(2.0 ** -dtypes.finfo(dtype).nmant, dtype)
        return lax.lt(u2, lax.sub(p, u1)) if np.shape(p) == shape else u2 < p - u1
    return _uniform(base, shape, dtype) < p


def exponential(key, shape=(), dtype=None):
    base, _ = check_prng_key("exponential", key)
    return _exponential(base, _canonical_shape(shape), _float_dtype("exponential", dtype))


def _exponential(base, shape, dtype):
    u = _uniform(base, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None):
    base, _ = check_prng_key("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    u = _uniform(base, _canonical_shape(shape), dtype,
                 -1.0 + float(dtypes.finfo(dtype).epsneg), 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None):
    base, _ = check_prng_key("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    x = _uniform(base, _canonical_shape(shape), dtype, float(dtypes.finfo(dtype).tiny), 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def gumbel(key, shape=(), dtype=None, mode=None):
    base, _ = check_prng_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(base, _canonical_shape(shape), dtype, mode)


def _gumbel(base, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest(base, shape)
    if mode in ("high", "highest"):
        both = _uniform(base, (2, *shape), dtype, 0.0, 1.0)
        high, low = both[0], both[1]
        # Below 1/2, a second draw refines the low bits; the floor keeps x off 0 (JAX's values).
        floor = max(2.0 ** -(2 * info.nmant + 1), float(info.tiny))
        x = jnp.where(high >= 0.5, high, high + 2 ** (-info.nmant) * low + floor)
        return -jnp.log(-jnp.log1p(-x))
    return -jnp.log(-jnp.log(_uniform(base, shape, dtype, float(info.tiny), 1.0)))


def _gumbel_highest(base, shape):
    """float32 Gumbel samples from 64 random bits each, as JAX's mode="highest": the bits are a
    binary fraction u in (0, 1); below 1/2 the sample is -log(-log1p(-u)), above it is
    -log(-log(1 - u)), with u or 1 - u (the 64-bit two's complement) rounded down to float32
    from all 64 bits, so tails down to 2**-64 are reached."""
    u32 = np.dtype(np.uint32)
    bits = _random_bits(base, 32, (2, *shape))
    hi, lo = bits[0], bits[1]
    # 1 - u in 64-bit fixed point: ~u + 1, the carry out of the low word into the high one.
    carry = lax.convert_element_type(lax.eq(lax.bitwise_not(lo), _c(0xFFFFFFFF, u32)), u32)
    neg_hi = lax.add(lax.bitwise_not(hi), carry)
    neg_lo = lax.add(lax.bitwise_not(lo), _c(1, u32))
    below_half = lax.lt(hi, _c(1 << 31, u32))
    x = _fraction_to_float32(jnp.where(below_half, hi, neg_hi), jnp.where(below_half, lo, neg_lo))
    return jnp.where(below_half, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


def _fraction_to_float32(hi, lo):
    """The 64-bit binary fraction hi:lo (nonzero) as a float32, truncated: the leading one moves
    to the top (clz gives the distance), the next 23 bits are the mantissa, and the exponent is
    that of 2**-(leading zeros + 1)."""
    u32 = np.dtype(np.uint32)
    hi_zeros, lo_zeros = lax.clz(hi), lax.clz(lo)
    hi_empty = lax.eq(hi_zeros, _c(32, u32))
    # (shifts by 32 give 0, as XLA's do: an empty high word contributes nothing)
    top = lax.bitwise_or(lax.shift_left(hi, hi_zeros),
                         jnp.where(hi_empty, lax.shift_left(lo, lo_zeros),
                                   lax.shift_right_logical(lo, lax.sub(_c(32, u32), hi_zeros))))
    mantissa = lax.bitwise_and(lax.shift_right_logical(top, _c(8, u32)), _c((1 << 23) - 1, u32))
    leading = jnp.where(hi_empty, lax.add(lo_zeros, _c(32, u32)), hi_zeros)
    exponent = lax.shift_left(lax.sub(_c(126, u32), leading), _c(23, u32))
    exponent = lax.bitwise_and(exponent, _c((1 << 30) - (1 << 22), u32))
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


def cauchy(key, shape=(), dtype=None):
    base, _ = check_prng_key("cauchy", key)
    dtype = _float_dtype("cauchy", dtype)
    u = _uniform(base, _canonical_shape(shape), dtype, float(dtypes.finfo(dtype).eps), 1.0)
    return lax.tan(lax.mul(_const(u, np.pi), lax.sub(u, _const(u, 0.5))))


def rayleigh(key, scale, shape=None, dtype=None):
    base, _ = check_prng_key("rayleigh", key)
    dtype = _float_dtype("rayleigh", dtype)
    shape = _broadcast_shapes("rayleigh", shape, scale)
    u = _uniform(base, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), _const(scale, -2))))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    base, _ = check_prng_key("lognormal", key)
    dtype = _float_dtype("lognormal", dtype)
    shape = _broadcast_shapes("lognormal", shape, sigma)
    sigma = lax.convert_element_type(jnp.asarray(sigma), dtype)
    return lax.exp(_normal_real(base, shape, dtype) * sigma)


def pareto(key, b, shape=None, dtype=None):
    base, _ = check_prng_key("pareto", key)
    dtype = _float_dtype("pareto", dtype)
    shape = _broadcast_shapes("pareto", shape, b)
    b = lax.convert_element_type(jnp.asarray(b), dtype)
    return lax.exp(_exponential(base, shape, dtype) / b)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    base, _ = check_prng_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    u = _uniform(base, _canonical_shape(shape), dtype, 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / jnp.asarray(concentration)) * scale


def triangular(key, left, mode, right, shape=None, dtype=None):
    base, _ = check_prng_key("triangular", key)
    dtype = _float_dtype("triangular", dtype)
    shape = _broadcast_shapes("triangular", shape, left, mode, right)
    left, right, mode = (jnp.broadcast_to(_as_float(v, dtype), shape) for v in (left, right, mode))
    fc = (mode - left) / (right - left)
    u = _uniform(base, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def wald(key, mean, shape=None, dtype=None):
    base, _ = check_prng_key("wald", key)
    dtype = _float_dtype("wald", dtype)
    shape = _broadcast_shapes("wald", shape, mean)
    k1, k2 = _split2(base)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = _normal_real(k1, shape, dtype)
    z = _uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def geometric(key, p, shape=None, dtype=None):
    base, _ = check_prng_key("geometric", key)
    dtype = _user_dtype("geometric", dtype, dtypes.default_int_dtype())
    if dtypes.kind(dtype) not in "iu":
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = _broadcast_shapes("geometric", shape, p)
    p = jnp.asarray(p)
    if dtypes.kind(p.dtype) != "f":
        p = p.astype(dtypes.default_float_dtype())
    u = _uniform(base, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)


def rademacher(key, shape=(), dtype=None):
    base, _ = check_prng_key("rademacher", key)
    dtype = _user_dtype("rademacher", dtype, dtypes.default_int_dtype())
    return _rademacher(base, _canonical_shape(shape), dtype)


def _rademacher(base, shape, dtype):
    samples = bernoulli(base, 0.5, shape).astype(dtype)
    return (2 * samples - 1).astype(dtype)


def maxwell(key, shape=(), dtype=None):
    base, _ = check_prng_key("maxwell", key)
    dtype = _float_dtype("maxwell", dtype)
    return _maxwell(base, _canonical_shape(shape), dtype)


def _maxwell(base, shape, dtype):
    z = _normal_real(base, (*shape, 3), dtype)
    return jnp.sqrt(jnp.sum(z * z, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    base, _ = check_prng_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    shape = _canonical_shape(shape)
    params_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = (shape or params_shape) + params_shape
    k_maxwell, k_sign = _split2(base)
    rvs = _maxwell(k_maxwell, shape, dtype)
    sign = _rademacher(k_sign, shape, dtype)
    return sign * rvs * scale + loc


# ---------------------------------------------------------------- discrete samplers

def _clip_to(val, dtype):
    """Integer ``val`` converted to integer ``dtype``, clipped to its range (not wrapped)."""
    src = core.get_aval(val).dtype
    if src == dtype:
        return val
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    src_info = np.iinfo(src)
    if src_info.min < lo or src_info.max > hi:
        val = jnp.clip(val, max(lo, src_info.min), min(hi, src_info.max))
    return lax.convert_element_type(val, dtype)


@_out_sharding_kw
def randint(key, shape, minval, maxval, dtype=None):
    base, _ = check_prng_key("randint", key)
    dtype = _user_dtype("randint", dtype, dtypes.default_int_dtype())
    if dtypes.kind(dtype) not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = _canonical_shape(shape)
    info = dtypes.iinfo(dtype)     # (int4 and the other sub-byte ints too: sampled in 32 bits)
    sample_dtype = dtype
    if info.bits < 32:
        sample_dtype = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min), int(info.max) + 1)
    return _randint(base, minval, maxval, shape, sample_dtype).astype(dtype)


def _randint(base, minval, maxval, shape, dtype):
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if dtypes.kind(minval.dtype) not in "iu":
        minval = minval.astype(dtypes.default_int_dtype())
    if dtypes.kind(maxval.dtype) not in "iu":
        maxval = maxval.astype(dtypes.default_int_dtype())
    maxval_out_of_range = lax.gt(maxval, _clip_to(_c(np.iinfo(dtype).max, dtype), maxval.dtype))
    minval = lax.broadcast_to_rank(_clip_to(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(_clip_to(maxval, dtype), len(shape))
    nbits = np.iinfo(dtype).bits
    k1, k2 = _split2(base)
    higher = _random_bits(k1, nbits, shape)
    lower = _random_bits(k2, nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned)
    # Empty ranges give minval; a maxval past the dtype's range includes the top value.
    span = lax.select(maxval <= minval, _full_like(span, 1), span)
    span = lax.select(maxval_out_of_range & (maxval > minval), lax.add(span, _const(span, 1)), span)
    multiplier = lax.rem(_const(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def _shuffle(base, x, axis):
    """Sort by random 32-bit keys, repeated until collisions are unlikely (JAX's rounds)."""
    size = int(np.prod(np.shape(x), dtype=np.int64))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        base, sub = _split2(base)
        sort_keys = _random_bits(sub, 32, np.shape(x))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def permutation(key, x, axis=0, independent=False):
    base, _ = check_prng_key("permutation", key)
    axis = _canonical_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if dtypes.kind(dtypes.dtype_and_weak(x)[0] if not hasattr(x, "dtype") else x.dtype) not in "iu":
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = core.concrete_or_error(int, x, "argument x of jax.random.permutation()") \
            if hasattr(core, "concrete_or_error") else int(x)
        return _shuffle(base, jnp.arange(n), axis)
    x = jnp.asarray(x)
    if independent or x.ndim == 1:
        return _shuffle(base, x, axis)
    ind = _shuffle(base, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis)


def shuffle(key, x, axis=0):
    import warnings
    warnings.warn("jax.random.shuffle is deprecated and will be removed in a future release. "
                  "Use jax.random.permutation with independent=True.", FutureWarning)
    base, _ = check_prng_key("shuffle", key)
    return _shuffle(base, jnp.asarray(x), _canonical_axis(axis, max(np.ndim(x), 1)))


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    base, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(base, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            perm = permutation(base, n_inputs if arr.ndim == 0 else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=axis) if hasattr(lax, "slice_in_dim") \
                else perm[(slice(None),) * axis + (slice(n_draws),)]
    else:
        p_arr = jnp.asarray(p)
        if dtypes.kind(p_arr.dtype) != "f":
            p_arr = p_arr.astype(dtypes.default_float_dtype())
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - _uniform(base, tuple(shape), p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            g = _gumbel(base, (n_inputs,), p_arr.dtype, mode or "low") + jnp.log(p_arr)
            ind = lax.top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    out_shape = tuple(shape) if arr.ndim == 0 else arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:]
    return result.reshape(out_shape)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    base, _ = check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonical_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    mode = mode or "low"
    if replace:
        if axis >= 0:
            axis -= logits.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits.ndim, logits.shape[axis])
        g = _gumbel(base, (*prefix, *logits_shape), logits.dtype, mode)
        return jnp.argmax(g + lax.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
    logits = logits + _gumbel(base, logits.shape, logits.dtype, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                         f"categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
    dims = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dims)


# ---------------------------------------------------------------- gamma family

def _gamma_one(base, alpha, log_space):
    """Marsaglia-Tsang for one alpha (boosted by U**(1/alpha) when alpha < 1), as JAX."""
    dtype = core.get_aval(alpha).dtype
    zero, one, minus_one, two = (_const(alpha, v) for v in (0, 1, -1, 2))
    half, third, squeeze = _const(alpha, 0.5), _const(alpha, 1.0 / 3.0), _const(alpha, 0.0331)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, third)
    c = lax.div(third, lax.sqrt(d))

    def cond_fn(state):
        _, X, V, U = state
        return lax.bitwise_and(
            lax.ge(U, lax.sub(one, lax.mul(squeeze, lax.mul(X, X)))),
            lax.ge(lax.log(U), lax.add(lax.mul(X, half),
                                       lax.mul(d, lax.add(lax.sub(one, V), lax.log(V))))))

    def body_fn(state):
        def next_kxv(kxv):
            k, sub = _split2(kxv[0])
            x = _normal_real(sub, (), dtype)
            return k, x, lax.add(one, lax.mul(x, c))

        k, x_key, u_key = _split2(state[0], 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv, (x_key, zero, minus_one))
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), _uniform(u_key, (), dtype)

    k, sub = _split2(base)
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (k, zero, one, two))
    if log_space:
        log_samples = lax.neg(_exponential(sub, (), dtype))
        log_boost = lax.select(boost_mask | (log_samples == 0), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = 1 - _uniform(sub, (), dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _gamma_samples(base, a, log_space):
    from .vmap_api import vmap
    shape = np.shape(a)
    n = math.prod(shape)
    keys = _split(base, n)
    flat = lax.reshape(a, (n,))
    samples = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, flat)
    return lax.reshape(samples, shape)


def _gamma_grad(sample, a, log_space):
    """d sample / d alpha by implicit differentiation of the CDF (lax.random_gamma_grad)."""
    if log_space:
        x = lax.exp(sample)
        x = lax.select(lax.eq(x, _const(x, 0)), _full_like(x, dtypes.finfo(x.dtype).tiny), x)
        return lax.random_gamma_grad(a, x) / x
    return lax.random_gamma_grad(a, sample)


def _make_gamma(log_space):
    from .custom_derivatives import custom_jvp

    @custom_jvp
    def sample(base, a):
        return _gamma_samples(base, a, log_space)

    @sample.defjvp
    def sample_jvp(primals, tangents):
        base, a = primals
        ans = sample(base, a)
        return ans, tangents[1] * _gamma_grad(ans, a, log_space)
    return sample


_gamma_sample = _make_gamma(False)
_loggamma_sample = _make_gamma(True)


def _gamma(base, a, shape, dtype, log_space=False):
    if shape is None:
        shape = np.shape(a)
    else:
        _check_shape("gamma", shape, np.shape(a))
    a = _as_float(a, dtype)
    if np.shape(a) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    return (_loggamma_sample if log_space else _gamma_sample)(base, a)


def gamma(key, a, shape=None, dtype=None):
    base, _ = check_prng_key("gamma", key)
    dtype = _float_dtype("gamma", dtype)
    return _gamma(base, a, None if shape is None else _canonical_shape(shape), dtype)


def loggamma(key, a, shape=None, dtype=None):
    base, _ = check_prng_key("loggamma", key)
    dtype = _float_dtype("gamma", dtype)
    return _gamma(base, a, None if shape is None else _canonical_shape(shape), dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    base, _ = check_prng_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    shape = _broadcast_shapes("beta", shape, a, b)
    a, b = _as_float(a, dtype), _as_float(b, dtype)
    key_a, key_b = _split2(base)
    a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
    log_a = _gamma(key_a, a, shape, dtype, True)
    log_b = _gamma(key_b, b, shape, dtype, True)
    log_max = lax.max(log_a, log_b)
    ga, gb = jnp.exp(log_a - log_max), jnp.exp(log_b - log_max)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    base, _ = check_prng_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    if shape is None:
        shape = np.shape(alpha)[:-1]
    else:
        shape = _canonical_shape(shape)
        _check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    alpha = _as_float(alpha, dtype)
    log_g = _gamma(base, alpha, tuple(shape) + np.shape(alpha)[-1:], dtype, True)
    # softmax over the last axis, as jax.nn.softmax computes it
    unnormalized = jnp.exp(log_g - lax.stop_gradient(jnp.max(log_g, axis=-1, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, axis=-1, keepdims=True)


def t(key, df, shape=None, dtype=None):
    base, _ = check_prng_key("t", key)
    dtype = _float_dtype("t", dtype)
    shape = _broadcast_shapes("t", shape, df)
    df = _as_float(df, dtype)
    key_n, key_g = _split2(base)
    n = _normal_real(key_n, shape, dtype)
    half_df = lax.div(df, _const(n, 2))
    g = _gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


def _chisquare(base, df, shape, dtype):
    df = _as_float(df, dtype)
    half_df = lax.div(df, _const(df, 2))
    log_g = _gamma(base, half_df, shape, dtype, True)
    return lax.mul(jnp.exp(log_g), _const(df, 2))


def chisquare(key, df, shape=None, dtype=None):
    base, _ = check_prng_key("chisquare", key)
    dtype = _float_dtype("chisquare", dtype)
    return _chisquare(base, df, _broadcast_shapes("chisquare", shape, df), dtype)


def f(key, dfnum, dfden, shape=None, dtype=None):
    base, _ = check_prng_key("f", key)
    dtype = _float_dtype("f", dtype)
    shape = _broadcast_shapes("f", shape, dfnum, dfden)
    dfden, dfnum = _as_float(dfden, dtype), _as_float(dfnum, dtype)
    key_dfd, key_dfn = _split2(base)
    num = lax.div(_chisquare(key_dfn, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_dfd, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def generalized_normal(key, p, shape=(), dtype=None):
    base, _ = check_prng_key("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    return _generalized_normal(base, p, _canonical_shape(shape), dtype)


def _generalized_normal(base, p, shape, dtype):
    k0, k1 = _split2(base)
    g = _gamma(k0, 1 / jnp.asarray(p), shape, dtype)
    r = _rademacher(k1, shape, dtype)
    return r * g ** (1 / jnp.asarray(p))


def ball(key, d, p=2, shape=(), dtype=None):
    base, _ = check_prng_key("ball", key)
    dtype = _float_dtype("ball", dtype)
    shape = _canonical_shape(shape)
    d = operator.index(d)
    k1, k2 = _split2(base)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / jnp.asarray(p)))[..., None]


# ---------------------------------------------------------------- poisson, binomial

def _poisson_knuth(base, lam, shape, dtype, max_iters):
    def body_fn(carry):
        i, k, rng, log_prod = carry
        rng, sub = _split2(rng)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(sub, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.any(log_prod > -lam) & (i < max_iters)

    init = (jnp.asarray(0), jnp.zeros(shape, dtype), base, jnp.zeros(shape, np.float32))
    k = lax.while_loop(cond_fn, body_fn, init)[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(base, lam, shape, dtype, max_iters):
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry):
        i, k_out, accepted, rng = carry
        rng, k0, k1 = _split2(rng, 3)
        u = _uniform(k0, shape, lam.dtype) - 0.5
        v = _uniform(k1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t_ = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | (u_shifted < 0.013) & (v > u_shifted)
        accept = accept1 | ~reject & (s <= t_)
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    def cond_fn(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    init = (jnp.asarray(0), jnp.full(shape, -1, lam.dtype), jnp.full(shape, False), base)
    k = lax.while_loop(cond_fn, body_fn, init)[1]
    return k.astype(dtype)


def poisson(key, lam, shape=None, dtype=None):
    base, _ = check_prng_key("poisson", key)
    dtype = _user_dtype("poisson", dtype, dtypes.default_int_dtype())
    shape = np.shape(lam) if shape is None else _canonical_shape(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), np.float32)
    use_knuth = lax.ne(lam, lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, _full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, _full_like(lam, 100000.0), lam)
    max_iters = np.iinfo(dtype).max
    result = lax.select(use_knuth, _poisson_knuth(base, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(base, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.010411265261972,
                  0.00925546218271273, 0.00833056343336287]


def _stirling_approx_tail(k):
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_table = k <= 9
    k = lax.clamp(_const(k, 0.0), k, _const(k, 9.0))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_table, table[jnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(base, count, prob, shape, dtype, max_iters):
    log1minusprob = jnp.log1p(-prob)

    def body_fn(carry):
        i, num_geom, geom_sum, rng = carry
        sub, rng = _split2(rng)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(sub, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, rng

    def cond_fn(carry):
        i, geom_sum = carry[0], carry[2]
        return jnp.any(geom_sum <= count) & (i < max_iters)

    init = (jnp.asarray(0), jnp.zeros(shape, prob.dtype), jnp.zeros(shape, prob.dtype), base)
    k = lax.while_loop(cond_fn, body_fn, init)[1]
    return (k - 1).astype(dtype)


def _btrs(base, count, prob, shape, dtype, max_iters):
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)
    tail = _stirling_approx_tail

    def body_fn(carry):
        i, k_out, accepted, rng = carry
        rng, k0, k1 = _split2(rng, 3)
        u = _uniform(k0, shape, prob.dtype)
        v = _uniform(k1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + tail(m) + tail(count - m) - tail(k) - tail(count - k))
        accept = accept1 | ~reject & (v <= ub)
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    def cond_fn(carry):
        i, accepted = carry[0], carry[2]
        return jnp.any(~accepted) & (i < max_iters)

    init = (jnp.asarray(0), jnp.full(shape, -1, prob.dtype), jnp.full(shape, False), base)
    return lax.while_loop(cond_fn, body_fn, init)[1].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    base, _ = check_prng_key("binomial", key)
    dtype = _float_dtype("binomial", dtype)
    count, prob = jnp.asarray(n), jnp.asarray(p)
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        shape = _canonical_shape(shape)
        _check_shape("binomial", shape, np.shape(count), np.shape(prob))
    if dtypes.kind(prob.dtype) != "f":
        prob = prob.astype(dtypes.default_float_dtype())
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = lax.ne(count, count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = lax.ne(q, q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, _full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, _full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, _full_like(count, 10000.0), count)
    q_btrs = lax.select(use_inversion, _full_like(q, 0.5), q)
    max_iters = dtypes.finfo(dtype).max
    samples = lax.select(use_inversion,
                         _binomial_inversion(base, count_inv, q, shape, dtype, max_iters),
                         _btrs(base, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dtype) - samples)


# ---------------------------------------------------------------- linear algebra samplers

def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    base, _ = check_prng_key("multivariate_normal", key)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    if dtypes.kind(mean.dtype) != "f" or dtypes.kind(cov.dtype) != "f":
        common = dtypes.promote_types(mean.dtype, cov.dtype)
        common = common if dtypes.kind(common) == "f" else dtypes.default_float_dtype()
        mean, cov = mean.astype(common), cov.astype(common)
    elif mean.dtype != cov.dtype:
        common = dtypes.promote_types(mean.dtype, cov.dtype)
        mean, cov = mean.astype(common), cov.astype(common)
    dtype = mean.dtype if dtype is None else _float_dtype("multivariate_normal", dtype)
    if not mean.ndim >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if not cov.ndim >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        shape = _canonical_shape(shape)
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = _normal_real(base, shape + mean.shape[-1:], dtype)
    return mean + jnp.matmul(factor, z[..., None])[..., 0]


def orthogonal(key, n, shape=(), dtype=None, m=None):
    base, _ = check_prng_key("orthogonal", key)
    dtype = _float_dtype("orthogonal", dtype)
    shape = _canonical_shape(shape)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = _normal_real(base, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x
