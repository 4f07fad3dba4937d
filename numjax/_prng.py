"""Threefry key derivations (seed, split, fold_in, random bits) and typed key arrays.

Raw keys are uint32 arrays whose last axis holds the two key words.  Typed keys
(``random.key``) wrap that array in ``PRNGKeyArray``: a pytree leaf, as in JAX, that the
transformations look through (``tree_util.flatten_traced``), so jit, vmap, grad and the
control-flow primitives trace its raw data and hand keys back out.

The derivations follow JAX 0.10.2 bit for bit in both settings of
``jax_threefry_partitionable``: partitionable mode hashes each element's 64-bit position
with the key (split, random bits); the original mode hashes a flat counter sequence split
into two halves.  fold_in is the same in both.
"""
import operator

import numpy as np

from . import core, dtypes, lax
from .array import Array
from .config import config
from .lax.random_bits import iota_2x32_shape, threefry2x32, threefry2x32_xor
from .tree_util import register_traced_node

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}
KEY_SHAPE = (2,)


def _u32(value):
    return Array(np.asarray(value, np.uint32))


def _key_words(key):
    """The two uint32 words of a (2,) key as rank-0 values."""
    return [lax.reshape(lax.slice(key, (i,), (i + 1,)), ()) for i in range(2)]


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


# ---------------------------------------------------------------- the hash over counters

def threefry_2x32(key, count):
    """Hash every uint32 of ``count`` with ``key``: the flat counts are split into a first and
    a second half (padded with one zero when odd), which form the cipher's two words."""
    k1, k2 = _key_words(key)
    shape = core.get_aval(count).shape
    n = _size(shape)
    flat = lax.reshape(count, (n,))
    odd = n % 2
    if odd:
        flat = lax.concatenate([flat, Array(np.zeros(1, np.uint32))], 0)
    half = (n + odd) // 2
    x0 = lax.slice(flat, (0,), (half,))
    x1 = lax.slice(flat, (half,), (2 * half,))
    y0, y1 = threefry2x32(k1, k2, x0, x1)
    out = lax.concatenate([y0, y1], 0)
    if odd:
        out = lax.slice(out, (0,), (n,))
    return lax.reshape(out, shape)


def threefry_seed(seed):
    """Raw key of an integer seed: (high word, low word).  In 32-bit mode the high word is
    always zero (a logical shift by the full width), and the low word is the seed's bits."""
    aval = core.get_aval(seed)
    if aval.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if dtypes.kind(aval.dtype) not in "iu":
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if aval.dtype.itemsize > 4:
        hi = lax.convert_element_type(lax.shift_right_logical(seed, lax._convert_element_type(
            Array(np.asarray(32)), aval.dtype, False)), np.uint32)
    else:
        hi = _u32(0)
    lo = lax.convert_element_type(seed, np.uint32)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def threefry_split(key, shape):
    shape = tuple(operator.index(d) for d in shape)
    if config.jax_threefry_partitionable:
        k1, k2 = _key_words(key)
        hi, lo = iota_2x32_shape(shape)
        b1, b2 = threefry2x32(k1, k2, hi, lo)
        return lax.concatenate([lax.expand_dims(b1, (len(shape),)),
                                lax.expand_dims(b2, (len(shape),))], len(shape))
    num = _size(shape)
    counts = lax.iota(np.uint32, num * 2)
    return lax.reshape(threefry_2x32(key, counts), (*shape, 2))


def threefry_fold_in(key, data):
    return threefry_2x32(key, threefry_seed(data))


def _low_counts(shape):
    """Row-major positions as uint32 from fusible iotas (the low counter word while the size
    is below 2**32, when the high word is zero)."""
    if not shape:
        return _u32(0)
    count, stride = None, 1
    for d in range(len(shape) - 1, -1, -1):
        term = lax.broadcasted_iota(np.uint32, shape, d)
        if stride != 1:
            term = lax.mul(term, _u32(stride))
        count = term if count is None else lax.add(term, count)
        stride *= shape[d]
    return count


def threefry_random_bits(key, bit_width, shape):
    if bit_width not in (8, 16, 32, 64):
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    shape = tuple(shape)
    dtype = UINT_DTYPES[bit_width]
    if config.jax_threefry_partitionable:
        k1, k2 = _key_words(key)
        if bit_width != 64 and _size(shape) < 2 ** 32:
            bits = threefry2x32_xor(k1, k2, _u32(0), _low_counts(shape))
            return bits if bit_width == 32 else lax.convert_element_type(bits, dtype)
        hi, lo = iota_2x32_shape(shape)
        b1, b2 = threefry2x32(k1, k2, hi, lo)
        if bit_width == 64:
            return lax.bitwise_or(lax.shift_left(lax.convert_element_type(b1, dtype),
                                                 Array(np.asarray(32, dtype))),
                                  lax.convert_element_type(b2, dtype))
        bits = lax.bitwise_xor(b1, b2)
        return bits if bit_width == 32 else lax.convert_element_type(bits, dtype)
    return _random_bits_original(key, bit_width, shape, dtype)


def _random_bits_original(key, bit_width, shape, dtype):
    size = _size(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= np.iinfo(np.uint32).max:
        raise NotImplementedError("random bits over 2**32 words in the original threefry mode")
    bits = threefry_2x32(key, lax.iota(np.uint32, max_count))
    if bit_width == 64:
        half = max_count // 2
        hi = lax.convert_element_type(lax.slice(bits, (0,), (half,)), dtype)
        lo = lax.convert_element_type(lax.slice(bits, (half,), (max_count,)), dtype)
        bits = lax.bitwise_or(lax.shift_left(hi, Array(np.asarray(32, dtype))), lo)
    elif bit_width in (8, 16):
        # Each word split into its 32/bit_width fields, least significant first.
        per = 32 // bit_width
        words = lax.broadcast_in_dim(bits, (max_count, per), (0,))
        shifts = lax.mul(_u32(bit_width), lax.broadcasted_iota(np.uint32, (max_count, per), 1))
        fields = lax.bitwise_and(lax.shift_right_logical(words, shifts),
                                 _u32(np.iinfo(dtype).max))
        fields = lax.convert_element_type(lax.reshape(fields, (max_count * per,)), dtype)
        bits = lax.slice(fields, (0,), (size,))
    return lax.reshape(bits, shape)


# ---------------------------------------------------------------- typed key arrays

class KeyDtype:
    """dtype of typed threefry keys; prints as JAX's ``key<fry>``."""
    name = "key<fry>"
    impl_name = "threefry2x32"
    itemsize = 8
    kind = "V"

    def __repr__(self):
        return "key<fry>"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDtype) or other in ("key<fry>", "threefry2x32")

    def __hash__(self):
        return hash("key<fry>")


key_dtype_fry = KeyDtype()


class PRNGKeyArray:
    """An array of threefry keys: shape excludes the trailing key words."""
    __slots__ = ("_base",)

    def __init__(self, base):
        self._base = base

    dtype = property(lambda self: key_dtype_fry)
    shape = property(lambda self: tuple(core.get_aval(self._base).shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: _size(self.shape))

    @property
    def sharding(self):
        """The key data's sharding, over the key array's dimensions (not the key words')."""
        s = self._base.sharding
        spec = getattr(s, "spec", None)
        if spec is None or len(spec) <= self.ndim:
            return s
        return s.with_spec(type(spec)(*tuple(spec)[:self.ndim], unreduced=spec.unreduced))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        return PRNGKeyArray(self._base[idx + (Ellipsis, slice(None))] if Ellipsis not in idx
                            else self._base[idx + (slice(None),)])

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return PRNGKeyArray(lax.reshape(self._base, (*_resolve_shape(shape, self.size), 2)))

    def ravel(self):
        return self.reshape(-1)

    @property
    def T(self):
        perm = tuple(range(self.ndim))[::-1] + (self.ndim,)
        return PRNGKeyArray(lax.transpose(self._base, perm))

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        from . import numpy as jnp
        return jnp.all(lax.eq(self._base, other._base), axis=-1)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else lax.not_(eq)

    __hash__ = None

    def __repr__(self):
        if isinstance(self._base, core.Tracer):
            return f"Traced<key<fry>[{','.join(map(str, self.shape))}]>"
        data = np.asarray(self._base._value if isinstance(self._base, Array) else self._base)
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{data}"

    __str__ = __repr__

    def block_until_ready(self):
        return self


def _key_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def stack_keys(keys, axis=0):
    """``jnp.stack`` of typed key arrays: their data stacked before the key-word axis."""
    shapes = {k.shape for k in keys}
    if len(shapes) > 1:
        raise ValueError(f"All input arrays must have the same shape. Got {', '.join(str(k.shape) for k in keys)}.")
    ax = _key_axis(axis, keys[0].ndim + 1)
    return PRNGKeyArray(lax.concatenate([lax.expand_dims(k._base, (ax,)) for k in keys], ax))


def concatenate_keys(keys, axis=0):
    if keys[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    return PRNGKeyArray(lax.concatenate([k._base for k in keys], _key_axis(axis, keys[0].ndim)))


def array_of_keys(keys, dtype=None):
    """``jnp.array`` of a key array (itself) or of a list of equally shaped key arrays."""
    if dtype is not None and dtype != key_dtype_fry:
        raise TypeError(f"cannot convert a key<fry> array to dtype {dtype}; use jax.random.key_data")
    return keys if isinstance(keys, PRNGKeyArray) else stack_keys(list(keys))


def _resolve_shape(shape, size):
    shape = list(shape)
    if -1 in shape:
        known = _size([d for d in shape if d != -1])
        shape[shape.index(-1)] = size // known if known else 0
    return tuple(shape)


register_traced_node(PRNGKeyArray, lambda k: ((k._base,), None),
                     lambda _, children: PRNGKeyArray(children[0]))


def _is_arraylike(x):
    return isinstance(x, (Array, core.Tracer, np.ndarray, np.generic))


def check_key_data(data):
    aval = core.get_aval(data)
    if aval.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={aval.ndim}")
    if aval.shape[-1:] != KEY_SHAPE:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {KEY_SHAPE}; got shape={aval.shape} for impl=threefry2x32")
    if aval.dtype != np.uint32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                        f"got dtype={aval.dtype}")


def check_prng_key(name, key, allow_batched=False):
    """(raw uint32 key data, whether the caller passed raw data)."""
    if isinstance(key, PRNGKeyArray):
        base, raw = key._base, False
    elif _is_arraylike(key):
        base = key if not isinstance(key, (np.ndarray, np.generic)) else Array(np.asarray(key))
        check_key_data(base)
        raw = True
    else:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, "
                        f"and dtype attributes. Got {key!r} (of type {type(key).__name__}) as the key of "
                        f"jax.random.{name}: pass a key from jax.random.key(seed) or PRNGKey(seed).")
    keys_shape = core.get_aval(base).shape[:-1]
    if not allow_batched and keys_shape:
        shown = core.get_aval(base).shape if raw else keys_shape
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shown} != (). Use jax.vmap for batching.")
    return base, raw


def return_keys(raw, base):
    return base if raw else PRNGKeyArray(base)


def seed_array(ctor_name, seed):
    """The integer seed as an array, as JAX converts it (Python ints via int64, then to the
    canonical 32-bit type, wrapping)."""
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not isinstance(seed, core.Tracer) else seed.ndim:
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed) if not isinstance(seed, core.Tracer) else seed.shape} != (). "
                        "Use jax.vmap for batching")
    if isinstance(seed, bool):
        return Array(np.asarray(seed))
    if isinstance(seed, int):
        if not -2**63 <= seed < 2**63:
            raise OverflowError("Python int too large to convert to C long")
        return Array(np.asarray(np.int64(seed)).astype(np.int32))
    if isinstance(seed, float):
        return Array(np.asarray(seed, np.float32), True)
    if isinstance(seed, (np.ndarray, np.generic)):
        dt = dtypes.canonicalize_dtype(seed.dtype)
        return Array(np.asarray(seed).astype(dt))
    return seed


def random_seed(ctor_name, seed):
    return threefry_seed(seed_array(ctor_name, seed))


# Typed key arrays are jax.Array instances in JAX (optax tests isinstance(key, jax.Array)).
from .array import ArrayType as _ArrayType  # noqa: E402
_ArrayType.register(PRNGKeyArray)
