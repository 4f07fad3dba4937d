"""Edge-value cases shared by tests/test_edge_values.py (numjax against rules written here) and
tests/compat/test_edge_values_vs_jax.py (numjax against real JAX 0.10.2, bit for bit).

Each case is ``fn(jax, jnp, lax) -> array or tuple of arrays`` over inputs it builds itself, so
the same entry runs on either library, eagerly and under jit (a case whose inputs must be
arguments for jit takes them from ``INPUTS``).  The rules:

* XLA's max and min propagate NaN and order signed zeros: max(+0, -0) and max(-0, +0) are +0,
  min of them -0 -- elementwise, in reductions, cumulative and windowed reductions, scatters
  and clamp;
* a bitcast between widths reads the bits little-endian, lowest first, along a new trailing axis
  (narrowing) or from a consumed one (widening); sub-byte types pack the same way;
* population_count and clz count the bits of the element's own width (XLA counts an int4's
  population in its int8 sign extension, and JAX 0.10.2 gives that);
* exp2(x) is exp(ln 2 * x) with the constant and the product in x's dtype (XLA's lowering).
"""
import numpy as np

ZEROS_A = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.0, -np.inf, np.nan], np.float32)
ZEROS_B = np.array([-0.0, 0.0, 0.0, -0.0, 1.0, np.nan, np.inf, np.nan], np.float32)
ZEROS_2D = np.array([[0.0, -0.0, -0.0], [-0.0, 0.0, -0.0], [-0.0, -0.0, -0.0]], np.float32)
FLOAT_DTYPES = ("float32", "float16", "bfloat16")


def _as(jnp, x, dt):
    return jnp.asarray(x).astype(getattr(jnp, dt))


def signed_zero_cases(dt):
    """name -> (fn(jax, jnp, lax, a, b, m), rule(a, b, m) -> expected float64 values)."""
    def pairwise(op):
        return lambda jax, jnp, lax, a, b, m: op(jnp, lax)(a, b)

    def mx(x, y):
        return np.nan if np.isnan(x) or np.isnan(y) else (x + y if x == y == 0 else max(x, y))

    def mn(x, y):
        return np.nan if np.isnan(x) or np.isnan(y) else (-((-x) + (-y)) if x == y == 0 else min(x, y))

    def elementwise(rule):
        return lambda a, b, m: [rule(x, y) for x, y in zip(a.tolist(), b.tolist())]

    def columns(rule):
        def fold(col):
            acc = col[0]
            for v in col[1:]:
                acc = rule(acc, v)
            return acc
        return lambda a, b, m: [fold(list(m[:, j])) for j in range(m.shape[1])]

    def running(rule):
        def scan(col):
            acc, out = col[0], [col[0]]
            for v in col[1:]:
                acc = rule(acc, v)
                out.append(acc)
            return out
        return lambda a, b, m: [v for j in range(m.shape[1]) for v in scan(list(m[:, j]))]

    return {
        "lax.max": (pairwise(lambda jnp, lax: lax.max), elementwise(mx)),
        "lax.min": (pairwise(lambda jnp, lax: lax.min), elementwise(mn)),
        "jnp.maximum": (pairwise(lambda jnp, lax: jnp.maximum), elementwise(mx)),
        "jnp.minimum": (pairwise(lambda jnp, lax: jnp.minimum), elementwise(mn)),
        "jnp.max axis 0": (lambda jax, jnp, lax, a, b, m: jnp.max(m, axis=0), columns(mx)),
        "jnp.min axis 0": (lambda jax, jnp, lax, a, b, m: jnp.min(m, axis=0), columns(mn)),
        "lax.reduce_max": (lambda jax, jnp, lax, a, b, m: lax.reduce_max(m, (0,)), columns(mx)),
        "lax.cummax": (lambda jax, jnp, lax, a, b, m: lax.cummax(m, 0).T.reshape(-1), running(mx)),
        "lax.cummin": (lambda jax, jnp, lax, a, b, m: lax.cummin(m, 0).T.reshape(-1), running(mn)),
        "lax.clamp": (lambda jax, jnp, lax, a, b, m: lax.clamp(jnp.zeros((), a.dtype), a, jnp.ones((), a.dtype)),
                      lambda a, b, m: [mn(mx(x, 0.0), 1.0) for x in a.tolist()]),
        "reduce_window max": (lambda jax, jnp, lax, a, b, m: lax.reduce_window(
            m, -np.inf, lax.max, (2, 1), (1, 1), "VALID").reshape(-1),
            lambda a, b, m: [mx(m[i, j], m[i + 1, j]) for i in range(m.shape[0] - 1) for j in range(m.shape[1])]),
        "at[].max": (lambda jax, jnp, lax, a, b, m: m[0].at[jnp.array([0, 0, 1, 1])].max(m[1:].reshape(-1)[:4]),
                     lambda a, b, m: [mx(mx(m[0, 0], m[1, 0]), m[1, 1]), mx(mx(m[0, 1], m[1, 2]), m[2, 0]), m[0, 2]]),
        "at[].min": (lambda jax, jnp, lax, a, b, m: m[0].at[jnp.array([0, 0, 1, 1])].min(m[1:].reshape(-1)[:4]),
                     lambda a, b, m: [mn(mn(m[0, 0], m[1, 0]), m[1, 1]), mn(mn(m[0, 1], m[1, 2]), m[2, 0]), m[0, 2]]),
    }


# ---------------------------------------------------------------- bitcasts between widths

# (source dtype, values or None for a ramp, target dtype)
BITCASTS = [
    ("float32", [1.0, -2.5, 0.0, np.inf], "uint8"), ("uint8", None, "float32"), ("float32", [1.0, -2.5], "uint16"),
    ("uint16", None, "float32"), ("int8", None, "int32"), ("float16", [1.5, -2.5], "int8"),
    ("bfloat16", [1.0, -3.0], "uint8"), ("uint8", None, "bfloat16"), ("int4", [1, -2, 7, -8], "uint8"),
    ("uint8", [0x21, 0xF3], "int4"), ("uint8", [0x21, 0xF3], "uint2"), ("float32", [1.0, -2.5], "int4"),
    ("float8_e4m3fn", [1.0, 2.0], "float4_e2m1fn"), ("int4", [1, 2, 3, 4, 5, 6, 7, -8], "bfloat16"),
]


def bitcast_input(jnp, src, values, dst):
    """The operand of a BITCASTS row: a ramp shaped so a widening bitcast consumes its last axis."""
    from numjax import dtypes as ndt
    src_dt, dst_dt = np.dtype(getattr(jnp, src)), np.dtype(getattr(jnp, dst))
    ratio = max(1, ndt.itemsize_bits(dst_dt) // ndt.itemsize_bits(src_dt))
    if values is None:
        values = np.arange(3 * ratio) % 256
    x = np.asarray(values).astype(src_dt)
    return x.reshape(-1, ratio) if ratio > 1 else x


def bits_of(x):
    """Each element of a numpy array as its unsigned bit pattern (a sub-byte type's low bits)."""
    from numjax import dtypes as ndt
    width = ndt.itemsize_bits(x.dtype)
    raw = np.ascontiguousarray(x).view(np.dtype(f"uint{8 * x.dtype.itemsize}")).astype(np.uint64)
    return raw & np.uint64((1 << width) - 1)


def bitcast_rule(x, dst_dt):
    """The expected bit patterns of ``x`` bitcast to ``dst_dt``, from Python integers."""
    from numjax import dtypes as ndt
    src_bits, dst_bits = ndt.itemsize_bits(x.dtype), ndt.itemsize_bits(dst_dt)
    words = [int(w) for w in bits_of(x).reshape(-1)]
    if src_bits >= dst_bits:
        k = src_bits // dst_bits
        parts = [(w >> (dst_bits * i)) & ((1 << dst_bits) - 1) for w in words for i in range(k)]
        return np.array(parts, np.uint64).reshape(x.shape + ((k,) if k > 1 else ()))
    k = dst_bits // src_bits
    rows = np.array(words, dtype=object).reshape(-1, k)
    return np.array([sum(int(p) << (src_bits * i) for i, p in enumerate(r)) for r in rows],
                    np.uint64).reshape(x.shape[:-1])


# ---------------------------------------------------------------- population_count, clz

BIT_COUNT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int4", "uint4", "int2", "uint2")


def bit_count_operands(dt):
    import ml_dtypes
    info = ml_dtypes.iinfo(dt) if dt in ("int4", "uint4", "int2", "uint2") else np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    vals = {lo, hi, 0, 1, 2, 3, hi - 1, lo + 1} | ({-1, -2} if lo < 0 else set())
    return sorted(v for v in vals if lo <= v <= hi)


def popcount_rule(v, dt, width):
    bits = 8 if dt == "int4" else width     # (int4: counted in its int8 sign extension)
    return bin(v & ((1 << bits) - 1)).count("1")


def clz_rule(v, dt, width):
    return width - (v & ((1 << width) - 1)).bit_length()


def wrap(v, dt, width):
    """A count wrapped to the result dtype (a count of 2 is -2 in int2)."""
    v &= (1 << width) - 1
    return v - (1 << width) if dt.startswith("int") and v >= 1 << (width - 1) else v
