"""numjax.nn: activation functions, softmax and friends, as ``jax.nn``.

Each function is the same composition of jax.numpy/lax operations as in JAX, so
values, dtypes (weak types included) and gradients agree; relu, relu6, log1mexp
and softmax carry JAX's custom JVP rules. They are not wrapped in ``jit`` (JAX's
are): here that would compile a kernel per shape for every eager call, while
under an enclosing jit/grad/vmap the result is the same.
"""
import warnings

import numpy as np

from .. import dtypes as _dtypes, lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ..numpy._util import asarray_leaf, canonicalize_axis, promote_args_inexact
from . import initializers  # noqa: F401

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
    "initializers", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp",
    "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus",
    "sparse_plus", "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh",
]


def __getattr__(name):
    # logsumexp lives in numjax.scipy.special; importing it lazily keeps nn importable on its own.
    if name == "logsumexp":
        from ..scipy.special import logsumexp
        return logsumexp
    raise AttributeError(f"module 'numjax.nn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"logsumexp"})


def identity(x):
    return asarray_leaf(x)


def _zero_unless(mask, g):
    return lax.select(mask, g, jnp.zeros_like(g))


@custom_jvp
def relu(x):
    """max(x, 0); its derivative at 0 is 0, as in JAX."""
    return jnp.maximum(asarray_leaf(x), 0)


relu.defjvps(lambda g, ans, x: _zero_unless(x > 0, g))


@custom_jvp
def relu6(x):
    return jnp.minimum(jnp.maximum(asarray_leaf(x), 0), 6.)


relu6.defjvps(lambda g, ans, x: _zero_unless((x > 0) & (x < 6), g))


def squareplus(x, b=4):
    x, b = asarray_leaf(x), asarray_leaf(b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def softplus(x):
    """log(1 + exp(x)), through logaddexp(x, 0) and so its custom JVP (sigmoid(x))."""
    return jnp.logaddexp(asarray_leaf(x), 0)


def sparse_plus(x):
    x = asarray_leaf(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def soft_sign(x):
    x = asarray_leaf(x)
    return x / (jnp.abs(x) + 1)


def sigmoid(x):
    return lax.logistic(asarray_leaf(x))


def sparse_sigmoid(x):
    return 0.5 * jnp.clip(asarray_leaf(x) + 1.0, 0.0, 2.0)


def silu(x):
    x = asarray_leaf(x)
    return x * sigmoid(x)


swish = silu


def mish(x):
    x = asarray_leaf(x)
    return x * jnp.tanh(softplus(x))


def log_sigmoid(x):
    return -softplus(-asarray_leaf(x))


def elu(x, alpha=1.0):
    x = asarray_leaf(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


def leaky_relu(x, negative_slope=1e-2):
    x = asarray_leaf(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    x = asarray_leaf(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def celu(x, alpha=1.0):
    x = asarray_leaf(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x, approximate=True):
    """x * Phi(x): the tanh approximation by default, the exact erf form when approximate=False."""
    [x] = promote_args_inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return jnp.asarray(0.5 * x * lax.erfc(-x * sqrt_half), dtype=x.dtype)


def glu(x, axis=-1):
    """First half of ``x`` along ``axis`` gated by the sigmoid of the second half."""
    x = asarray_leaf(x)
    size = x.shape[axis]
    if size % 2:
        raise AssertionError("axis size must be divisible by 2")
    axis = canonicalize_axis(axis, x.ndim)
    lead = (slice(None),) * axis
    x1, x2 = x[lead + (slice(0, size // 2),)], x[lead + (slice(size // 2, size),)]
    return x1 * sigmoid(x2)


def tanh(x):
    return jnp.tanh(asarray_leaf(x))


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, accurate on both sides of log(2)."""
    x = asarray_leaf(x)
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def _reduced_max(x, axis, where, initial):
    return jnp.max(x, axis, where=where, initial=initial, keepdims=True)


def log_softmax(x, axis=-1, where=None):
    x = asarray_leaf(x)
    x_max = _reduced_max(x, axis, where, -np.inf)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    result = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    return result if where is None else jnp.where(where, result, -np.inf)


def _softmax_value(x, axis, where, initial):
    x_max = _reduced_max(x, axis, where, initial)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    return result if where is None else jnp.where(where, result, 0)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along ``axis``, with JAX's custom JVP y * (dx - sum(y * dx))."""
    @custom_jvp
    def _softmax(x):
        return _softmax_value(x, axis, where, -np.inf)

    @_softmax.defjvp
    def _softmax_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        y = _softmax(x)
        return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))

    return _softmax(asarray_leaf(x))


def _count(x, axis, where, keepdims, dtype):
    ones = jnp.ones(np.shape(x), dtype=dtype)
    return jnp.sum(ones, axis, where=where, keepdims=keepdims)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along ``axis``."""
    from ..scipy.special import logsumexp
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    return lse - jnp.log(_count(x, axis, where, keepdims, lse.dtype))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon), statistics taken along ``axis`` unless given."""
    x = asarray_leaf(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """``x[..., None] == arange(num_classes)`` as ``dtype`` (float32 by default), the new axis at ``axis``."""
    num_classes = _num_classes(num_classes)
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = _dtypes.float32 if dtype is None else _dtypes.check_user_dtype(dtype, "one_hot")
    out_axis = canonicalize_axis(axis, x.ndim + 1)
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, rhs_shape, out_axis)
    return (lhs == rhs).astype(dtype)


def _num_classes(n):
    """one_hot's ``num_classes`` as a Python int: a traced value cannot size the new axis."""
    import operator
    from ..core import Tracer
    from ..errors import ConcretizationTypeError
    try:
        n = operator.index(n)
    except TypeError:
        if isinstance(n, Tracer):
            raise ConcretizationTypeError(n, "The error arose in jax.nn.one_hot argument `num_classes`.") \
                from None
        raise TypeError("The error arose in jax.nn.one_hot argument `num_classes`: it must be a concrete "
                        f"integer, got {n!r}. Pass the number of classes as a Python int.") from None
    if n < 0:
        raise TypeError(f"jax.nn.one_hot num_classes must be nonnegative, got {n}: iota shape must have "
                        "every element be nonnegative.")
    return n


def hard_sigmoid(x):
    return relu6(asarray_leaf(x) + 3.) / 6.


def hard_silu(x):
    x = asarray_leaf(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu
