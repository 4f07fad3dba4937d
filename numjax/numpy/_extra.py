"""Part of numjax.numpy (re-exported by numjax/numpy/__init__.py via __all__): dtype helpers,
scalar-type aliases, print options, logic helpers, vectorize/ufunc and file I/O wrappers."""
import builtins
import contextlib
import functools
import warnings

import numpy as np

from .. import core, dtypes, lax
from ..array import Array
from ..core import get_aval
from . import (_scalar_type, _to_bool, all as _all, array, asarray, broadcast_arrays, equal, float32,
               float64, int32, int64, uint32, uint64, complex64, complex128, shape)
from ._util import asarray_leaf, check_arraylike, promote_args_inexact

__all__ = [
    "can_cast", "isdtype", "iterable", "isscalar", "ComplexWarning", "printoptions",
    "get_printoptions", "set_printoptions", "array_repr", "array_str", "int_", "uint", "float_",
    "complex_", "double", "single", "cdouble", "csingle", "character", "flexible", "generic",
    "object_", "array_equiv", "array_equal", "allclose", "isclose", "vectorize", "ufunc",
    "frompyfunc", "load", "save", "savez", "fromfile", "from_dlpack", "packbits", "unpackbits",
]

ComplexWarning = np.exceptions.ComplexWarning
character, flexible, generic, object_ = np.character, np.flexible, np.generic, np.object_
# The aliases name 64-bit types, which canonicalize to 32 bits with x64 disabled, as in JAX.
int_, uint, float_, complex_ = int64, uint64, float64, complex128
double, single, cdouble, csingle = float64, float32, complex128, complex64


def _to_np_dtype(x):
    if isinstance(x, (core.Tracer, Array)):
        return get_aval(x).dtype
    if hasattr(x, "dtype") and isinstance(getattr(x, "dtype"), np.dtype):
        return x.dtype
    return np.dtype(x)


def can_cast(from_, to, casting="safe"):
    if isinstance(from_, (core.Tracer, Array)):
        from_ = get_aval(from_).dtype
    return bool(np.can_cast(_to_np_dtype(from_), _to_np_dtype(to), casting=casting))


_KIND_NAMES = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype, kind):
    dt = _to_np_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KIND_NAMES:
                raise ValueError(f"Unrecognized {k=!r}")
            if _KIND_NAMES[k](dt):
                return True
        elif _to_np_dtype(k) == dt:
            return True
    return False


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


def isscalar(element):
    if hasattr(element, "__jax_array__"):
        element = element.__jax_array__()
    if isinstance(element, (Array, core.Tracer, np.ndarray)):
        return get_aval(element).ndim == 0 if not isinstance(element, np.ndarray) else element.ndim == 0
    if isinstance(element, (bool, int, float, complex, np.generic)):
        return True
    return False


printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return repr(asarray(arr))


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


# ---------------------------------------------------------------- logic

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = promote_args_inexact("isclose", a, b)
    from . import abs as _abs, isinf, isnan, logical_and, logical_or, where
    dt = get_aval(a).dtype
    rtol_c = lax._convert_element_type(asarray_leaf(rtol), _real_dtype(dt), False)
    atol_c = lax._convert_element_type(asarray_leaf(atol), _real_dtype(dt), False)
    close = lax.le(_abs(lax.sub(a, b)), lax.add(atol_c, lax.mul(rtol_c, _abs(b))))
    # Infinities are close only to themselves; NaNs to nothing unless equal_nan.
    inf_a, inf_b = isinf(a), isinf(b)
    any_inf = logical_or(inf_a, inf_b)
    close = where(any_inf, lax.eq(a, b), close)
    nan_a, nan_b = isnan(a), isnan(b)
    close = logical_and(close, lax.bitwise_not(logical_or(nan_a, nan_b)))
    if equal_nan:
        close = logical_or(close, logical_and(nan_a, nan_b))
    return close


def _real_dtype(dt):
    return np.dtype(np.finfo(dt).dtype) if dtypes.kind(dt) == "c" else dt


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_arraylike("allclose", a, b)
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    from .._prng import PRNGKeyArray
    if isinstance(a1, PRNGKeyArray) and isinstance(a2, PRNGKeyArray):
        # Keys compare by their data (a key has no NaN).
        return asarray(False) if a1.shape != a2.shape else _all(a1 == a2)
    a1, a2 = asarray_leaf(a1), asarray_leaf(a2)
    if shape(a1) != shape(a2):
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan and get_aval(eq).ndim >= 0:
        from . import isnan, logical_and, logical_or
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return _all(eq)


def array_equiv(a1, a2):
    a1, a2 = asarray_leaf(a1), asarray_leaf(a2)
    try:
        a1, a2 = broadcast_arrays(a1, a2)
    except ValueError:
        return asarray(False)
    return _all(equal(a1, a2))


# ---------------------------------------------------------------- vectorize and ufuncs

def _parse_gufunc_signature(signature):
    import re
    inputs, outputs = signature.replace(" ", "").split("->")
    dims = lambda s: [tuple(d for d in grp.split(",") if d) for grp in re.findall(r"\((.*?)\)", s)]  # noqa: E731
    return dims(inputs), dims(outputs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """np.vectorize through vmap: one vmap per broadcast (loop) dimension."""
    from .. import vmap
    excluded = set(excluded)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        if dyn_kw:
            raise NotImplementedError("numjax's vectorize takes non-excluded arguments positionally")
        static_pos = {i: a for i, a in enumerate(args) if i in excluded}
        dyn = [asarray_leaf(a) for i, a in enumerate(args) if i not in excluded]

        def call(*dyn_args):
            it = iter(dyn_args)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(len(args))]
            return pyfunc(*full, **static_kw)
        if signature is None:
            core_dims = [()] * len(dyn)
        else:
            core_dims, _ = _parse_gufunc_signature(signature)
            if len(core_dims) != len(dyn):
                raise TypeError(f"wrong number of positional arguments: expected {len(core_dims)}, got {len(dyn)}")
        loop_shapes = []
        for a, cd in zip(dyn, core_dims):
            nd = get_aval(a).ndim - len(cd)
            if nd < 0:
                raise ValueError(f"input with shape {get_aval(a).shape} does not have enough dimensions "
                                 f"for core dimensions {cd}")
            loop_shapes.append(get_aval(a).shape[:nd])
        loop_shape = np.broadcast_shapes(*loop_shapes) if loop_shapes else ()
        from . import broadcast_to
        dyn = [broadcast_to(a, loop_shape + get_aval(a).shape[len(ls):]) if ls != loop_shape else a
               for a, ls in zip(dyn, loop_shapes)]
        fn = call
        for _ in loop_shape:
            fn = vmap(fn)
        out = fn(*dyn)
        return out
    return wrapped


class ufunc:
    """A jax.numpy-style ufunc around an elementwise function: call, outer, reduce, accumulate."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None,
                 reduce=None, accumulate=None, at=None, reduceat=None):
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = nargs or self.nin
        self.identity = identity
        self._call, self._reduce, self._accumulate = call, reduce, accumulate

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return (self._call or self._func)(*args)

    def outer(self, A, B, /):
        if self.nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        A, B = asarray_leaf(A), asarray_leaf(B)
        nb = get_aval(B).ndim
        from . import reshape
        A = reshape(A, get_aval(A).shape + (1,) * nb)
        return self(A, B)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        if self._reduce is not None and where is None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims,
                                **({} if initial is None else {"initial": initial}))
        if self.nin != 2 or self.nout != 1:
            raise ValueError("reduce only supported for binary ufuncs with one output")
        a = asarray_leaf(a)
        from . import moveaxis, expand_dims
        if axis is None:
            from . import ravel
            a, axis = ravel(a), 0
        from ._util import canonicalize_axis
        ax = canonicalize_axis(axis, get_aval(a).ndim)
        x = moveaxis(a, ax, 0)
        n = get_aval(x).shape[0]
        if initial is None:
            if n == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            acc, start = x[0], 1
        else:
            acc, start = lax._convert_element_type(asarray_leaf(initial), get_aval(x).dtype, False), 0
        for i in range(start, n):
            nxt = self(acc, x[i])
            if where is not None:
                from . import where as _where
                nxt = _where(moveaxis(asarray_leaf(where), ax, 0)[i], nxt, acc) if get_aval(asarray_leaf(where)).ndim else nxt
            acc = nxt
        return expand_dims(acc, ax) if keepdims else acc

    def accumulate(self, a, axis=0, dtype=None, out=None):
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        a = asarray_leaf(a)
        from . import moveaxis, stack
        from ._util import canonicalize_axis
        ax = canonicalize_axis(axis, get_aval(a).ndim)
        x = moveaxis(a, ax, 0)
        outs = []
        acc = None
        for i in range(get_aval(x).shape[0]):
            acc = x[i] if acc is None else self(acc, x[i])
            outs.append(acc)
        return moveaxis(stack(outs), 0, ax)


def frompyfunc(func, /, nin, nout, *, identity=None):
    return ufunc(vectorize(func), nin, nout, identity=identity, name=getattr(func, "__name__", None))


# ---------------------------------------------------------------- I/O (through numpy)

def load(file, *args, **kwargs):
    out = np.load(file, *args, **kwargs)
    return asarray(out) if isinstance(out, np.ndarray) and out.dtype != object else out


def save(file, arr, *args, **kwargs):
    return np.save(file, np.asarray(arr), *args, **kwargs)


def savez(file, *args, **kwds):
    return np.savez(file, *(np.asarray(a) for a in args), **{k: np.asarray(v) for k, v in kwds.items()})


def fromfile(*args, **kwargs):
    raise NotImplementedError("jnp.fromfile() is not implemented because it may be non-pure and "
                              "thus unsafe for use with JIT and other JAX transformations. Consider "
                              "using jnp.asarray(np.fromfile(...)) instead.")


def from_dlpack(x, /, *, device=None, copy=None):
    return asarray(np.from_dlpack(x))


def packbits(a, axis=None, bitorder="big"):
    from . import moveaxis, ravel, reshape, sum as _sum
    from ._shape_ops import pad
    a = asarray_leaf(a)
    if dtypes.kind(get_aval(a).dtype) not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = lax._convert_element_type(_to_bool(a), np.uint8, False)
    if axis is None:
        bits, axis = ravel(bits), 0
    bits = moveaxis(bits, axis, -1)
    n = get_aval(bits).shape[-1]
    rem = (-n) % 8
    if rem:
        bits = pad(bits, [(0, 0)] * (get_aval(bits).ndim - 1) + [(0, rem)])
    bits = reshape(bits, get_aval(bits).shape[:-1] + (-1, 8))
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1]
    from . import left_shift
    weighted = left_shift(bits, Array(np.ascontiguousarray(shifts), False))
    packed = _sum(weighted, axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    from . import moveaxis, ravel, reshape
    a = asarray_leaf(a)
    if get_aval(a).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1]
    from . import right_shift, bitwise_and
    bits = bitwise_and(right_shift(lax.expand_dims(a, (get_aval(a).ndim,)), Array(np.ascontiguousarray(shifts), False)),
                       Array(np.asarray(1, np.uint8), False))
    if axis is None:
        bits, axis = ravel(bits), 0
        if count is not None:
            from ._shape_ops import _take_slice
            bits = _take_slice(bits, 0, count, 0)
        return bits
    from ._util import canonicalize_axis
    ax = canonicalize_axis(axis, get_aval(a).ndim)
    shape = list(get_aval(a).shape)
    shape[ax] *= 8
    out = reshape(moveaxis(bits, -1, ax + 1), tuple(shape))
    if count is not None:
        from ._shape_ops import _take_slice
        out = _take_slice(out, 0, count, ax)
    return out
