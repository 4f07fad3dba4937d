"""Bad input, one row per public function and mistake: JAX's exception class and the key
words of its message, never a Numba typing traceback and never silent acceptance.

Each row's ``call(jax, jnp)`` makes the mistake with the library passed in, so the same
table runs on numjax here and on real JAX in tests/compat/test_bad_input_vs_jax.py, which
proves every row encodes what JAX 0.10.2 does (the class, and the key words where JAX's
own message has them: ``jax_match``, when given, is the pattern JAX's message matches
instead of ``match``). ``WARN_ROWS`` are JAX's truncation warnings for explicit 64-bit
dtype requests with x64 off (and the requests that must not warn); ``ACCEPT_ROWS`` are
inputs that look wrong but JAX accepts, with the shape of the result.
"""
import traceback
import warnings
from typing import Callable, NamedTuple, Optional

import numpy as np
import pytest

import numjax
import numjax.numpy as njnp


class Row(NamedTuple):
    id: str
    call: Callable
    exc: object         # an exception class, or the name of one in ``jax.errors``
    match: str
    jax_match: Optional[str] = None

    def exc_class(self, jax):
        return getattr(jax.errors, self.exc) if isinstance(self.exc, str) else self.exc


def _cvjp(jax, n_cotangents):
    @jax.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g,) * n_cotangents)
    return f


def _cvjp_bwd(jax, bwd):
    @jax.custom_vjp
    def f(x):
        return x * 2
    f.defvjp(lambda x: (x * 2, x), bwd)
    return f


def _cvjp_fwd(jax, fwd):
    @jax.custom_vjp
    def f(x):
        return x * 2
    f.defvjp(fwd, lambda res, g: (g,))
    return f


def _cjvp(jax, rule):
    @jax.custom_jvp
    def f(x):
        return x * 2
    f.defjvp(rule)
    return f


def _body(i, c):
    return c * 1.1


TYPE = "not a valid JAX (array )?type"
SHAPES = "Shapes must be 1D sequences of concrete values of integer type"
BROADCAST = "Incompatible shapes for broadcasting"
OOB = "axis {} is out of bounds for array of dimension {}"
NONSCALAR = "Gradient only defined for scalar-output functions"
KEY = "JAX encountered invalid PRNG key data"

ROWS = [
    # ---- strings, objects and None as arguments and outputs
    Row("jit returns str", lambda jax, jnp: jax.jit(lambda x: "hello")(1.0), TypeError,
        r"traced for jit returned a value of type <class 'str'>, which is not a valid JAX type"),
    Row("jit returns object", lambda jax, jnp: jax.jit(lambda x: object())(1.0), TypeError,
        r"traced for jit returned a value of type <class 'object'>"),
    Row("jit str argument", lambda jax, jnp: jax.jit(lambda x: x)("abc"), TypeError,
        r"(?s)Error interpreting argument to .* as an abstract array.*path x.*static_argnums"),
    Row("jit object argument", lambda jax, jnp: jax.jit(lambda x: x)(object()), TypeError,
        r"Error interpreting argument .*<class 'object'>"),
    Row("jit str in pytree argument", lambda jax, jnp: jax.jit(lambda d: d["a"])({"a": "s"}), TypeError,
        r"Error interpreting argument .*<class 'str'>"),
    Row("vmap returns str", lambda jax, jnp: jax.vmap(lambda x: "a")(jnp.ones(3)), TypeError,
        r"Output from batched function 'a' with type <class 'str'> is not a valid JAX type"),
    Row("vmap str argument", lambda jax, jnp: jax.vmap(lambda x: x)("abc"), TypeError,
        r"Argument 'abc' of type <class 'str'> is not a valid JAX type"),
    Row("vmap object argument", lambda jax, jnp: jax.vmap(lambda x: x)(object()), TypeError,
        r"of type '?<class 'object'>'? is not a valid JAX type"),
    Row("grad str argument", lambda jax, jnp: jax.grad(lambda x: x)("abc"), TypeError,
        r"Argument 'abc' of type <class 'str'> is not a valid JAX type"),
    Row("grad returns str", lambda jax, jnp: jax.grad(lambda x: "a")(1.0), TypeError, TYPE),
    Row("grad returns None", lambda jax, jnp: jax.grad(lambda x: None)(1.0), TypeError,
        NONSCALAR + r". Output was None"),
    Row("asarray str", lambda jax, jnp: jnp.asarray("abc"), TypeError,
        r"Value 'abc' with dtype <U3 is not a valid JAX array type. Only arrays of numeric types"),
    Row("array mixed list", lambda jax, jnp: jnp.array([1, "a"]), TypeError,
        r"Value 'a' with dtype <U1 is not a valid JAX array type"),
    Row("asarray object", lambda jax, jnp: jnp.asarray(object()), TypeError,
        r"with dtype object is not a valid JAX array type"),
    Row("array object ndarray", lambda jax, jnp: jnp.array(np.array([1, None], dtype=object)), TypeError,
        r"with dtype object is not a valid JAX array type",
        r"Error interpreting argument .* as a JAX value"),
    Row("asarray None", lambda jax, jnp: jnp.asarray(None), ValueError,
        r"None is not a valid value for jnp.array"),
    Row("array None in list", lambda jax, jnp: jnp.array([1.0, None]), ValueError,
        r"None is not a valid value for jnp.array"),
    Row("sin str", lambda jax, jnp: jnp.sin("abc"), TypeError, TYPE,
        r"Error interpreting argument to .*sin.* as an abstract array"),
    Row("sum str", lambda jax, jnp: jnp.sum("abc"), TypeError, TYPE, r"Error interpreting argument"),
    Row("add str", lambda jax, jnp: jnp.add(1.0, "a"), TypeError, TYPE, r"Error interpreting argument"),
    Row("sin None", lambda jax, jnp: jnp.sin(None), TypeError,
        r"sin requires ndarray or scalar arguments, got <class 'NoneType'> at position 0"),
    Row("sin object", lambda jax, jnp: jnp.sin(object()), TypeError, TYPE, r"Error interpreting argument"),
    Row("outer str", lambda jax, jnp: jnp.outer(jnp.ones(2), "a"), TypeError, TYPE,
        r"Error interpreting argument"),
    Row("clip str bound", lambda jax, jnp: jnp.clip(jnp.ones(2), "a", 1), TypeError, TYPE,
        r"Error interpreting argument"),
    Row("mean str where", lambda jax, jnp: jnp.mean(jnp.ones(3), where="a"), TypeError, TYPE,
        r"Error interpreting argument"),
    Row("zeros object dtype", lambda jax, jnp: jnp.zeros(3, object), TypeError,
        r"JAX only supports number, bool, and string dtypes, got dtype <class 'object'> in zeros"),
    Row("zeros str dtype", lambda jax, jnp: jnp.zeros(3, str), TypeError,
        r"JAX only supports number, bool, and string dtypes, got dtype <class 'str'> in zeros"),
    Row("array as dtype", lambda jax, jnp: jnp.zeros(3, jnp.ones(2)), ValueError,
        r"Passing an array as a dtype argument is no longer supported"),
    Row("cond str predicate", lambda jax, jnp: jax.lax.cond("a", lambda: 1.0, lambda: 2.0), TypeError,
        r"Pred must be a scalar, got a of type <class 'str'>"),
    Row("typed key to sin", lambda jax, jnp: jnp.sin(jax.random.key(0)), TypeError, r"key<fry>"),

    # ---- jit's static arguments
    Row("static_argnums out of range", lambda jax, jnp: jax.jit(lambda x: x, static_argnums=3), ValueError,
        r"Jitted function has static_argnums=\(3,\), but only accepts 1 positional arguments"),
    Row("static_argnums negative out of range",
        lambda jax, jnp: jax.jit(lambda x: x, static_argnums=-3), ValueError,
        r"Jitted function has static_argnums=\(-3,\), but only accepts 1 positional arguments"),
    Row("static_argnames unknown", lambda jax, jnp: jax.jit(lambda x: x, static_argnames="y"), ValueError,
        r"Jitted function has invalid argnames \{'y'\} in static_argnames. Function does not take these args"),
    Row("donate_argnums out of range", lambda jax, jnp: jax.jit(lambda x: x, donate_argnums=2), ValueError,
        r"Jitted function has donate_argnums=\(2,\), but only accepts 1 positional arguments"),
    Row("static list unhashable",
        lambda jax, jnp: jax.jit(lambda x, n: x, static_argnums=1)(1.0, [1, 2]), ValueError,
        r"Non-hashable static arguments are not supported.*<class 'list'>"),
    Row("static dict unhashable by name",
        lambda jax, jnp: jax.jit(lambda x, n: x, static_argnames="n")(1.0, n={"a": 1}), ValueError,
        r"Non-hashable static arguments are not supported.*<class 'dict'>"),
    Row("static array unhashable",
        lambda jax, jnp: jax.jit(lambda x, n: x, static_argnums=1)(1.0, jnp.ones(2)), ValueError,
        r"Non-hashable static arguments are not supported"),
    Row("jit of non-callable", lambda jax, jnp: jax.jit(3), TypeError, r"Expected a callable value, got 3"),
    Row("vmap of non-callable", lambda jax, jnp: jax.vmap(3), TypeError, r"Expected a callable value, got 3"),
    Row("grad of non-callable", lambda jax, jnp: jax.grad(3), TypeError, r"Expected a callable value, got 3"),

    # ---- sizes, shapes and axes given as the wrong type
    Row("eye float N", lambda jax, jnp: jnp.eye(2.5), TypeError, SHAPES + r", got \(2.5,\)"),
    Row("eye float M", lambda jax, jnp: jnp.eye(2, 2.5), TypeError, SHAPES + r", got \(2.5,\). argument 'M'"),
    Row("eye float k", lambda jax, jnp: jnp.eye(2, k=1.5), ValueError, r"k must be a scalar integer; got 1.5"),
    Row("identity float n", lambda jax, jnp: jnp.identity(2.5), TypeError, SHAPES),
    Row("tri float N", lambda jax, jnp: jnp.tri(2.5), TypeError, SHAPES),
    Row("tril float k", lambda jax, jnp: jnp.tril(jnp.ones((2, 2)), 1.5), TypeError,
        r"'float' object cannot be interpreted as an integer"),
    Row("one_hot float num_classes", lambda jax, jnp: jax.nn.one_hot(jnp.arange(3), 2.5), TypeError,
        r"num_classes.*2.5|'float' object cannot be interpreted as an integer",
        r"'float' object cannot be interpreted as an integer"),
    Row("one_hot negative num_classes", lambda jax, jnp: jax.nn.one_hot(jnp.arange(3), -1), TypeError,
        r"iota shape must have every element be nonnegative"),
    Row("one_hot traced num_classes",
        lambda jax, jnp: jax.jit(lambda n: jax.nn.one_hot(jnp.arange(3), n))(3),
        "ConcretizationTypeError",
        r"Abstract tracer value encountered.*\n.*jax.nn.one_hot argument `num_classes`"),
    Row("sum float axis", lambda jax, jnp: jnp.sum(jnp.ones((2, 3)), axis=1.5), TypeError,
        r"axis must be an integer.*got 1.5", r"'float' object is not iterable"),
    Row("mean float axis", lambda jax, jnp: jnp.mean(jnp.ones((2, 3)), axis=1.5), TypeError,
        r"axis must be an integer", r"'float' object is not iterable"),
    Row("sum float in axis tuple", lambda jax, jnp: jnp.sum(jnp.ones((2, 2)), axis=(0, 1.5)), TypeError,
        r"axis must be an integer", r"'float' object cannot be interpreted as an integer"),
    Row("concatenate float axis",
        lambda jax, jnp: jnp.concatenate([jnp.ones(2), jnp.ones(2)], axis=0.5), TypeError,
        r"axis must be an integer", r"'float' object cannot be interpreted as an integer"),
    Row("cumsum float axis", lambda jax, jnp: jnp.cumsum(jnp.ones(2), axis=0.5), TypeError,
        r"axis must be an integer", r"'float' object cannot be interpreted as an integer"),
    Row("argmax float axis", lambda jax, jnp: jnp.argmax(jnp.ones(2), axis=0.5), TypeError,
        r"axis must be an integer", r"'float' object cannot be interpreted as an integer"),
    Row("sort float axis", lambda jax, jnp: jnp.sort(jnp.ones(2), axis=0.5), TypeError,
        r"axis must be an integer", r"'float' object cannot be interpreted as an integer"),
    Row("take float axis", lambda jax, jnp: jnp.take(jnp.ones(2), 0, axis=0.5), TypeError,
        r"axis must be an integer", r"'float' object cannot be interpreted as an integer"),
    Row("repeat float repeats", lambda jax, jnp: jnp.repeat(jnp.ones(2), 1.5), TypeError,
        r"broadcast_in_dim shape must have every element be an integer type"),
    Row("ones float shape", lambda jax, jnp: jnp.ones(2.5), TypeError, SHAPES + r", got \(2.5,\)"),
    Row("zeros float in shape", lambda jax, jnp: jnp.zeros((2, 2.5)), TypeError, SHAPES),
    Row("zeros None shape", lambda jax, jnp: jnp.zeros(None), TypeError, SHAPES),
    Row("reshape float shape", lambda jax, jnp: jnp.reshape(jnp.ones(4), (2.0, 2)), TypeError, SHAPES),
    Row("broadcast_to float shape", lambda jax, jnp: jnp.broadcast_to(jnp.ones(2), (2.5,)), TypeError,
        SHAPES),
    Row("random normal float shape",
        lambda jax, jnp: jax.random.normal(jax.random.PRNGKey(0), (2.5,)), TypeError, SHAPES),
    Row("random choice int shape", lambda jax, jnp: jax.random.choice(jax.random.PRNGKey(0), 5, 3),
        TypeError, r"shape argument of jax.random.choice must be a sequence, got 3"),
    Row("split num float", lambda jax, jnp: jax.random.split(jax.random.PRNGKey(0), 2.5), TypeError,
        r"'float' object cannot be interpreted as an integer"),
    Row("pad float width", lambda jax, jnp: jnp.pad(jnp.ones(2), 1.5), TypeError,
        r"`pad_width` must be of integral type"),
    Row("take float indices", lambda jax, jnp: jnp.take(jnp.ones(3), jnp.array([0.5])), ValueError,
        r"indices must have an integer type"),
    Row("take float scalar index", lambda jax, jnp: jnp.take(jnp.ones(3), 1.0), ValueError,
        r"indices must have an integer type"),
    Row("index with float", lambda jax, jnp: jnp.ones(3)[1.5], TypeError,
        r"Indexer must have integer or boolean type, got indexer with type float"),
    Row("index with float array", lambda jax, jnp: jnp.ones(3)[jnp.array([0.5])], TypeError,
        r"Indexer must have integer or boolean type"),
    Row("index with str", lambda jax, jnp: jnp.ones(3)["a"], TypeError,
        r"JAX does not support string indexing; got idx='a'"),
    Row("too many indices", lambda jax, jnp: jnp.ones(3)[0, 0], IndexError,
        r"Too many indices: array is 1-dimensional, but 2 were indexed"),
    Row("switch float index", lambda jax, jnp: jax.lax.switch(1.5, [lambda: 1.0, lambda: 2.0]), TypeError,
        r"Index type must be an integer, got 1.5 as float32"),
    Row("fori_loop float and int bounds",
        lambda jax, jnp: jax.lax.fori_loop(0.0, 3, lambda i, c: c + 1, 0), TypeError,
        r"lower and upper arguments to fori_loop must have equal types, got float32 and int32"),

    # ---- negative and inconsistent sizes
    Row("reshape two unknown axes", lambda jax, jnp: jnp.reshape(jnp.ones(4), (-1, -1)), TypeError,
        r"can only specify one unknown axis size with a `-1` value, got \(-1, -1\)"),
    Row("reshape wrong size", lambda jax, jnp: jnp.reshape(jnp.ones(4), (3, 2)), TypeError,
        r"cannot reshape array of shape \(4,\) \(size 4\) into shape \(3, 2\) \(size 6\)"),
    Row("reshape bad order", lambda jax, jnp: jnp.reshape(jnp.ones(4), (2, 2), order="X"), ValueError,
        r"Unexpected value for 'order' argument: X"),
    Row("ones negative", lambda jax, jnp: jnp.ones(-1), TypeError,
        r"shape must have every element be nonnegative, got \(-1,\)"),
    Row("zeros negative in shape", lambda jax, jnp: jnp.zeros((2, -1)), TypeError,
        r"shape must have every element be nonnegative, got \(2, -1\)"),
    Row("full negative", lambda jax, jnp: jnp.full((-1,), 1.0), TypeError,
        r"shape must have every element be nonnegative"),
    Row("empty negative", lambda jax, jnp: jnp.empty(-2), TypeError,
        r"shape must have every element be nonnegative"),
    Row("eye negative", lambda jax, jnp: jnp.eye(-1), ValueError, r"negative dimensions are not allowed"),
    Row("linspace negative num", lambda jax, jnp: jnp.linspace(0, 1, -1), ValueError,
        r"Number of samples, -1, must be non-negative"),
    Row("bincount negative length", lambda jax, jnp: jnp.bincount(jnp.arange(3), length=-1), TypeError,
        r"shape must have every element be nonnegative"),
    Row("lax iota negative", lambda jax, jnp: jax.lax.iota(jnp.int32, -1), TypeError,
        r"iota shape must have every element be nonnegative, got \(-1,\)"),
    Row("resize negative", lambda jax, jnp: jnp.resize(jnp.ones(2), -1), ValueError,
        r"all elements of `new_shape` must be non-negative"),
    Row("pad negative width", lambda jax, jnp: jnp.pad(jnp.ones(2), -1), ValueError,
        r"index can't contain negative values"),
    Row("pad unknown mode", lambda jax, jnp: jnp.pad(jnp.ones(2), 1, mode="foo"), NotImplementedError,
        r"Unimplemented padding mode 'foo' for np.pad"),
    Row("split uneven", lambda jax, jnp: jnp.split(jnp.ones(5), 2), ValueError,
        r"array split does not result in an equal division: rest is 1"),
    Row("hsplit uneven", lambda jax, jnp: jnp.hsplit(jnp.ones((2, 5)), 2), ValueError,
        r"array split does not result in an equal division: rest is 1"),
    Row("split zero sections", lambda jax, jnp: jnp.split(jnp.ones(4), 0), ZeroDivisionError,
        r"number sections must be larger than 0", r"integer division or modulo by zero"),
    Row("array_split zero sections", lambda jax, jnp: jnp.array_split(jnp.ones(4), 0), ZeroDivisionError,
        r"number sections must be larger than 0", r"integer division or modulo by zero"),

    # ---- axis out of range
    Row("sum axis out of range", lambda jax, jnp: jnp.sum(jnp.ones((2, 3)), axis=2), ValueError,
        OOB.format(2, 2)),
    Row("sum negative axis out of range", lambda jax, jnp: jnp.sum(jnp.ones((2, 3)), axis=-3), ValueError,
        OOB.format(-3, 2)),
    Row("sum repeated axis", lambda jax, jnp: jnp.sum(jnp.ones((2, 3)), axis=(0, 0)), ValueError,
        r"duplicate value in 'axis': \(0, 0\)"),
    Row("max axis out of range", lambda jax, jnp: jnp.max(jnp.ones((2, 3)), axis=5), ValueError,
        OOB.format(5, 2)),
    Row("argmax axis out of range", lambda jax, jnp: jnp.argmax(jnp.ones((2, 3)), axis=5), IndexError,
        OOB.format(5, 2), r"tuple index out of range"),
    Row("cumsum axis out of range", lambda jax, jnp: jnp.cumsum(jnp.ones((2, 3)), axis=5), ValueError,
        OOB.format(5, 2)),
    Row("concatenate axis out of range",
        lambda jax, jnp: jnp.concatenate([jnp.ones(2), jnp.ones(2)], axis=1), ValueError, OOB.format(1, 1)),
    Row("stack axis out of range", lambda jax, jnp: jnp.stack([jnp.ones(2), jnp.ones(2)], axis=3),
        ValueError, OOB.format(3, 2)),
    Row("expand_dims axis out of range", lambda jax, jnp: jnp.expand_dims(jnp.ones(2), 3), ValueError,
        OOB.format(3, 2)),
    Row("expand_dims repeated axis", lambda jax, jnp: jnp.expand_dims(jnp.ones(2), (0, 0)), ValueError,
        r"repeated axis in lax.expand_dims: \(0, 0\)"),
    Row("squeeze axis out of range", lambda jax, jnp: jnp.squeeze(jnp.ones((1, 3)), axis=4), ValueError,
        OOB.format(4, 2)),
    Row("squeeze non-unit axis", lambda jax, jnp: jnp.squeeze(jnp.ones((2, 3)), axis=0), ValueError,
        r"cannot select an axis to squeeze out which has size not equal to one"),
    Row("moveaxis out of range", lambda jax, jnp: jnp.moveaxis(jnp.ones((2, 3)), 0, 5), ValueError,
        OOB.format(5, 2)),
    Row("moveaxis unequal lengths", lambda jax, jnp: jnp.moveaxis(jnp.ones((2, 3)), (0, 1), (0,)),
        ValueError, r"Inconsistent number of elements: 2 vs 1"),
    Row("swapaxes out of range", lambda jax, jnp: jnp.swapaxes(jnp.ones((2, 3)), 0, 5), IndexError,
        OOB.format(5, 2), r"index 5 is out of bounds"),
    Row("transpose repeated axes", lambda jax, jnp: jnp.transpose(jnp.ones((2, 3)), (0, 0)), TypeError,
        r"transpose permutation isn't a permutation of operand dimensions"),
    Row("transpose too few axes", lambda jax, jnp: jnp.transpose(jnp.ones((2, 3)), (0,)), TypeError,
        r"transpose permutation isn't a permutation of operand dimensions, got permutation \(0,\)"),
    Row("flip axis out of range", lambda jax, jnp: jnp.flip(jnp.ones(2), 3), ValueError, OOB.format(3, 1)),
    Row("roll axis out of range", lambda jax, jnp: jnp.roll(jnp.ones(2), 1, axis=3), ValueError,
        OOB.format(3, 1)),
    Row("take axis out of range", lambda jax, jnp: jnp.take(jnp.ones(2), 0, axis=3), ValueError,
        OOB.format(3, 1)),
    Row("sort axis out of range", lambda jax, jnp: jnp.sort(jnp.ones(2), axis=3), ValueError,
        OOB.format(3, 1)),
    Row("argsort axis out of range", lambda jax, jnp: jnp.argsort(jnp.ones(2), axis=3), ValueError,
        OOB.format(3, 1)),
    Row("diff axis out of range", lambda jax, jnp: jnp.diff(jnp.ones(2), axis=3), ValueError,
        OOB.format(3, 1)),
    Row("split axis out of range", lambda jax, jnp: jnp.split(jnp.ones(4), 2, axis=2), IndexError,
        OOB.format(2, 1), r"tuple index out of range"),
    Row("trace axis out of range", lambda jax, jnp: jnp.trace(jnp.ones((2, 2)), axis1=0, axis2=5),
        ValueError, OOB.format(5, 2)),
    Row("softmax axis out of range", lambda jax, jnp: jax.nn.softmax(jnp.ones(2), axis=3), ValueError,
        OOB.format(3, 1)),
    Row("logsumexp axis out of range", lambda jax, jnp: jax.nn.logsumexp(jnp.ones(2), axis=3), ValueError,
        OOB.format(3, 1)),
    Row("one_hot axis out of range", lambda jax, jnp: jax.nn.one_hot(jnp.arange(3), 3, axis=5), ValueError,
        OOB.format(5, 2)),
    Row("fft axis out of range", lambda jax, jnp: jnp.fft.fft(jnp.ones(3), axis=2), ValueError,
        OOB.format(2, 1)),
    Row("permutation axis out of range",
        lambda jax, jnp: jax.random.permutation(jax.random.PRNGKey(0), jnp.ones(3), axis=2), ValueError,
        OOB.format(2, 1)),
    Row("lax expand_dims out of range", lambda jax, jnp: jax.lax.expand_dims(jnp.ones(3), (3,)), ValueError,
        OOB.format(3, 2)),
    Row("lax cumsum axis out of range", lambda jax, jnp: jax.lax.cumsum(jnp.ones(3), axis=1), ValueError,
        r"axis 1 is out of bounds for array of shape \(3,\)"),
    Row("lax rev dimension out of range", lambda jax, jnp: jax.lax.rev(jnp.ones(3), (1,)), TypeError,
        r"rev dimensions must all be less than operand ndim"),
    Row("lax transpose short permutation", lambda jax, jnp: jax.lax.transpose(jnp.ones((2, 3)), (0,)),
        TypeError, r"transpose permutation isn't a permutation of operand dimensions"),
    Row("lax sort dimension out of range", lambda jax, jnp: jax.lax.sort(jnp.ones(3), dimension=1),
        ValueError, OOB.format(1, 1)),
    Row("vmap in_axes out of range", lambda jax, jnp: jax.vmap(lambda x: x, in_axes=1)(jnp.ones(3)),
        ValueError, r"vmap was requested to map its argument along axis 1, which implies that its rank "
                    r"should be at least 2, but is only 1 \(its shape is \(3,\)\)"),
    Row("vmap out_axes out of range", lambda jax, jnp: jax.vmap(lambda x: x, out_axes=2)(jnp.ones(3)),
        ValueError, OOB.format(2, 1)),
    Row("vmap float in_axes", lambda jax, jnp: jax.vmap(lambda x: x, in_axes=1.5)(jnp.ones(3)), TypeError,
        r"vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
        r"arguments passed to the function, but got 1.5"),
    Row("vmap in_axes length", lambda jax, jnp: jax.vmap(lambda x, y: x, in_axes=(0,))(jnp.ones(3), jnp.ones(3)),
        ValueError, r"len\(in_axes\)=1, len\(args\)=2"),
    Row("vmap over a scalar", lambda jax, jnp: jax.vmap(lambda x: x)(1.0), ValueError,
        r"vmap was requested to map its argument along axis 0.*but is only 0"),
    Row("vmap out_axes None on batched output",
        lambda jax, jnp: jax.vmap(lambda x: x, out_axes=None)(jnp.ones(3)), ValueError,
        r"at vmap out_axes, got axis spec None but output was batched on axis 0"),
    Row("vmap in_axes tree mismatch",
        lambda jax, jnp: jax.vmap(lambda x: x, in_axes=({"a": 0},))({"b": jnp.ones(3)}), ValueError,
        r"vmap in_axes specification must be a tree prefix of the corresponding value"),

    # ---- shapes that do not fit together
    Row("matmul shapes", lambda jax, jnp: jnp.matmul(jnp.ones((2, 3)), jnp.ones((4, 5))), TypeError,
        r"dot_general requires contracting dimensions to have the same shape, got \(3,\) and \(4,\)"),
    Row("matmul operator shapes", lambda jax, jnp: jnp.ones((2, 3)) @ jnp.ones((4, 5)), TypeError,
        r"dot_general requires contracting dimensions to have the same shape"),
    Row("matmul scalar operand", lambda jax, jnp: jnp.matmul(jnp.ones(3), 2.0), ValueError,
        r"matmul input operand 1 must have ndim at least 1, but it has ndim 0"),
    Row("dot shapes", lambda jax, jnp: jnp.dot(jnp.ones((2, 3)), jnp.ones((4, 5))), TypeError,
        r"dot_general requires contracting dimensions to have the same shape"),
    Row("dot vectors", lambda jax, jnp: jnp.dot(jnp.ones(3), jnp.ones(4)), TypeError,
        r"dot_general requires contracting dimensions to have the same shape"),
    Row("vdot sizes", lambda jax, jnp: jnp.vdot(jnp.ones(3), jnp.ones(4)), TypeError,
        r"dot_general requires contracting dimensions"),
    Row("inner sizes", lambda jax, jnp: jnp.inner(jnp.ones(3), jnp.ones(4)), TypeError,
        r"dot_general requires contracting dimensions"),
    Row("tensordot sizes", lambda jax, jnp: jnp.tensordot(jnp.ones((2, 3)), jnp.ones((4, 5)), axes=1),
        TypeError, r"dot_general requires contracting dimensions"),
    Row("tensordot bad axes", lambda jax, jnp: jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), axes=(0,)),
        TypeError, r"tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples"),
    Row("einsum label sizes",
        lambda jax, jnp: jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 5))), ValueError,
        r"Size of label 'j' for operand"),
    Row("dot_general contracting sizes",
        lambda jax, jnp: jax.lax.dot_general(jnp.ones((2, 3)), jnp.ones((4, 5)), (((1,), (0,)), ((), ()))),
        TypeError, r"dot_general requires contracting dimensions to have the same shape"),
    Row("dot_general batch sizes",
        lambda jax, jnp: jax.lax.dot_general(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5)),
                                             (((2,), (1,)), ((0,), (0,)))),
        TypeError, r"dot_general requires lhs batch dimensions and rhs batch dimensions to have the same"),
    Row("add broadcasting", lambda jax, jnp: jnp.add(jnp.ones(3), jnp.ones(4)), TypeError,
        r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)"),
    Row("operator broadcasting", lambda jax, jnp: jnp.ones((2, 3)) * jnp.ones((3, 2)), TypeError,
        r"mul got incompatible shapes for broadcasting: \(2, 3\), \(3, 2\)"),
    Row("where broadcasting", lambda jax, jnp: jnp.where(jnp.ones(3) > 0, jnp.ones(4), 0.0), ValueError,
        BROADCAST + r": shapes=\[\(3,\), \(4,\), \(\)\]"),
    Row("broadcast_to incompatible", lambda jax, jnp: jnp.broadcast_to(jnp.ones(3), (4,)), ValueError,
        r"Incompatible types for broadcasting: input type=float32\[3\] and requested type=float32\[4\]"),
    Row("broadcast_to fewer dims", lambda jax, jnp: jnp.broadcast_to(jnp.ones((2, 3)), (3,)), ValueError,
        r"Cannot broadcast to shape with fewer dimensions: arr_shape=\(2, 3\) shape=\(3,\)"),
    Row("broadcast_shapes", lambda jax, jnp: jnp.broadcast_shapes((3,), (4,)), ValueError,
        BROADCAST + r": shapes=\[\(3,\), \(4,\)\]"),
    Row("broadcast_arrays", lambda jax, jnp: jnp.broadcast_arrays(jnp.ones(3), jnp.ones(4)), ValueError,
        BROADCAST),
    Row("concatenate shapes", lambda jax, jnp: jnp.concatenate([jnp.ones((2, 2)), jnp.ones((3, 3))]),
        TypeError, r"Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                   r"being concatenated"),
    Row("concatenate ranks", lambda jax, jnp: jnp.concatenate([jnp.ones((2, 2)), jnp.ones(3)]), TypeError,
        r"Cannot concatenate arrays with different numbers of dimensions: got \(2, 2\), \(3,\)"),
    Row("concatenate nothing", lambda jax, jnp: jnp.concatenate([]), ValueError,
        r"Need at least one array to concatenate"),
    Row("concatenate scalars", lambda jax, jnp: jnp.concatenate([jnp.ones(()), jnp.ones(())]), ValueError,
        r"Zero-dimensional arrays cannot be concatenated"),
    Row("stack shapes", lambda jax, jnp: jnp.stack([jnp.ones(2), jnp.ones(3)]), ValueError,
        r"All input arrays must have the same shape. Got \(2,\), \(3,\)"),
    Row("stack nothing", lambda jax, jnp: jnp.stack([]), ValueError, r"Need at least one array to stack"),
    Row("lax add shapes", lambda jax, jnp: jax.lax.add(jnp.ones(3), jnp.ones(4)), TypeError,
        r"add got incompatible shapes for broadcasting"),
    Row("lax add dtypes", lambda jax, jnp: jax.lax.add(jnp.ones(3), jnp.ones(3, jnp.int32)), TypeError,
        r"lax.add requires arguments to have the same dtypes, got float32, int32"),
    Row("lax sin of int", lambda jax, jnp: jax.lax.sin(jnp.ones(3, jnp.int32)), TypeError,
        r"sin does not accept dtype int32"),
    Row("bitwise_and of floats", lambda jax, jnp: jnp.bitwise_and(jnp.ones(3), jnp.ones(3)), TypeError,
        r"and does not accept dtype float32"),
    Row("gcd of floats", lambda jax, jnp: jnp.gcd(jnp.ones(3), jnp.ones(3)), ValueError,
        r"Arguments to jax.numpy.gcd must be integers"),
    Row("lax pad config length",
        lambda jax, jnp: jax.lax.pad(jnp.ones(3), 0.0, [(1, 1, 0), (1, 1, 0)]), ValueError,
        r"length of padding_config must equal the number of axes of operand"),
    Row("lax pad value dtype", lambda jax, jnp: jax.lax.pad(jnp.ones(3), 0, [(1, 1, 0)]), TypeError,
        r"pad operand and padding_value must be same dtype: got float32 and int32"),
    Row("lax concatenate dtypes",
        lambda jax, jnp: jax.lax.concatenate([jnp.ones(3), jnp.ones(3, jnp.int32)], 0), TypeError,
        r"lax.concatenate requires arguments to have the same dtypes, got float32, int32"),
    Row("lax select predicate dtype",
        lambda jax, jnp: jax.lax.select(jnp.ones(3), jnp.ones(3), jnp.ones(3)), TypeError,
        r"`which` must be boolean or integer type, got float32"),
    Row("lax broadcast_in_dim sizes",
        lambda jax, jnp: jax.lax.broadcast_in_dim(jnp.ones(3), (4,), (0,)), TypeError,
        r"broadcast_in_dim operand dimension sizes must either be 1, or be equal"),
    Row("lax dynamic_slice index count",
        lambda jax, jnp: jax.lax.dynamic_slice(jnp.ones(3), (0, 0), (1, 1)), ValueError,
        r"Length of slice indices must match number of operand dimensions"),
    Row("lax dynamic_slice too large",
        lambda jax, jnp: jax.lax.dynamic_slice(jnp.ones(3), (0,), (5,)), TypeError,
        r"slice slice_sizes must be less than or equal to operand shape"),
    Row("lax dynamic_update_slice too large",
        lambda jax, jnp: jax.lax.dynamic_update_slice(jnp.ones(3), jnp.ones(5), (0,)), TypeError,
        r"dynamic_update_slice update shape must be smaller than operand shape"),
    Row("lax top_k negative", lambda jax, jnp: jax.lax.top_k(jnp.ones(3), -1), ValueError,
        r"k argument to top_k must be nonnegative, got -1"),
    Row("lax top_k too large", lambda jax, jnp: jax.lax.top_k(jnp.ones(3), 5), ValueError,
        r"k argument to top_k must be no larger than size along axis"),
    Row("lax squeeze non-unit", lambda jax, jnp: jax.lax.squeeze(jnp.ones((2, 3)), (0,)), ValueError,
        r"cannot select an axis to squeeze out which has size not equal to one"),
    Row("lax conv ranks",
        lambda jax, jnp: jax.lax.conv(jnp.ones((1, 1, 3)), jnp.ones((1, 1, 3, 3)), (1,), "SAME"), TypeError,
        r"convolution requires lhs and rhs ndim to be equal, got 3 and 4"),
    Row("linalg inv non-square", lambda jax, jnp: jnp.linalg.inv(jnp.ones((2, 3))), ValueError,
        r"Argument to inv must have shape \[..., n, n\], got \(2, 3\)"),
    Row("convolve 2d", lambda jax, jnp: jnp.convolve(jnp.ones((2, 2)), jnp.ones(2)), ValueError,
        r"convolve\(\) only support 1-dimensional inputs"),
    Row("sort kind", lambda jax, jnp: jnp.sort(jnp.ones(2), kind="stable"), TypeError,
        r"'kind' argument to sort is not supported.*Use stable=True or stable=False"),
    Row("argsort kind", lambda jax, jnp: jnp.argsort(jnp.ones(2), kind="quicksort"), TypeError,
        r"'kind' argument to argsort is not supported"),
    Row("tril of a vector", lambda jax, jnp: jnp.tril(jnp.ones(3)), ValueError,
        r"Argument to jax.numpy.tril must be at least 2D"),

    # ---- wrong rank
    Row("diag of a 3d array", lambda jax, jnp: jnp.diag(jnp.ones((2, 2, 2))), ValueError,
        r"diag input must be 1d or 2d"),
    Row("diagonal of a vector", lambda jax, jnp: jnp.diagonal(jnp.ones(3)), ValueError,
        r"diagonal requires an array of at least two dimensions"),
    Row("trace of a vector", lambda jax, jnp: jnp.trace(jnp.ones(3)), ValueError,
        r"diagonal requires an array of at least two dimensions", OOB.format(1, 1)),
    Row("triu of a vector", lambda jax, jnp: jnp.triu(jnp.ones(3)), ValueError,
        r"Argument to jax.numpy.triu must be at least 2D"),
    Row("fill_diagonal of a vector", lambda jax, jnp: jnp.fill_diagonal(jnp.ones(3), 0, inplace=False),
        ValueError, r"array must be at least 2-d"),
    Row("vander of a matrix", lambda jax, jnp: jnp.vander(jnp.ones((2, 2))), ValueError,
        r"x must be a one-dimensional array"),
    Row("interp of matrices", lambda jax, jnp: jnp.interp(jnp.ones(2), jnp.ones((2, 2)), jnp.ones((2, 2))),
        ValueError, r"xp and fp must be one-dimensional"),
    Row("searchsorted in a matrix", lambda jax, jnp: jnp.searchsorted(jnp.ones((2, 2)), 1.0), ValueError,
        r"a should be 1-dimensional"),
    Row("cross of 4-vectors", lambda jax, jnp: jnp.cross(jnp.ones(4), jnp.ones(4)), ValueError,
        r"Dimension must be either 2 or 3 for cross product"),
    Row("linalg inv of a vector", lambda jax, jnp: jnp.linalg.inv(jnp.ones(3)), ValueError,
        r"Argument to inv must have shape \[..., n, n\], got \(3,\)"),
    Row("einsum subscripts rank", lambda jax, jnp: jnp.einsum("ij->i", jnp.ones(3)), ValueError, r"'ij'"),
    Row("einsum operand count", lambda jax, jnp: jnp.einsum("ij,jk->ik", jnp.ones((2, 3))), ValueError,
        r"einsum: 2 input subscripts for 1 operands",
        r"Number of einsum subscripts, 2, must be equal to the number of operands, 1"),
    Row("matmul batch dimensions", lambda jax, jnp: jnp.matmul(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5))),
        ValueError, r"Incompatible types for matmul arguments: float32\[2,3,4\] and float32\[3,4,5\]"),
    Row("dot of matrices", lambda jax, jnp: jnp.dot(jnp.ones((2, 3)), jnp.ones((2, 3))), TypeError,
        r"dot_general requires contracting dimensions to have the same shape, got \(3,\) and \(2,\)"),
    Row("histogram weights shape", lambda jax, jnp: jnp.histogram(jnp.ones(3), weights=jnp.ones(2)),
        ValueError, r"weights should have the same shape as a"),
    Row("meshgrid indexing", lambda jax, jnp: jnp.meshgrid(jnp.ones(2), indexing="foo"), ValueError,
        r"Valid values for indexing are 'xy' and 'ij', got foo"),
    Row("max of empty", lambda jax, jnp: jnp.max(jnp.ones(0)), ValueError,
        r"zero-size array to reduction operation max which has no identity"),
    Row("min of empty axis", lambda jax, jnp: jnp.min(jnp.ones((0, 3)), axis=0), ValueError,
        r"zero-size array to reduction operation min which has no identity"),
    Row("argmax of empty", lambda jax, jnp: jnp.argmax(jnp.ones(0)), ValueError,
        r"attempt to get argmax of an empty sequence"),
    Row("nonzero of a scalar", lambda jax, jnp: jnp.nonzero(jnp.ones(())), ValueError,
        r"Calling nonzero on 0d arrays is not allowed"),
    Row("nonzero negative size", lambda jax, jnp: jnp.nonzero(jnp.ones(3), size=-1), TypeError,
        r"must be nonnegative", r"shape must have every element be nonnegative, got \(-1,\)"),
    Row("unique negative size", lambda jax, jnp: jnp.unique(jnp.ones(3), size=-1), TypeError,
        r"must be nonnegative", r"shape must have every element be nonnegative"),
    Row("argwhere float size", lambda jax, jnp: jnp.argwhere(jnp.ones(3), size=1.5), TypeError,
        r"size argument of jnp.nonzero must be an integer, got 1.5",
        r"'float' object cannot be interpreted as an integer"),
    Row("at set of a larger value", lambda jax, jnp: jnp.ones(3).at[0].set(jnp.ones(2)), ValueError,
        r"Cannot broadcast to shape with fewer dimensions: arr_shape=\(2,\) shape=\(\)"),
    Row("at add of a wrong shape", lambda jax, jnp: jnp.ones(3).at[:2].add(jnp.ones(3)), ValueError,
        r"Incompatible types for broadcasting: input type=float32\[3\] and requested type=float32\[2\]"),
    Row("at set of a str", lambda jax, jnp: jnp.ones(3).at[0].set("a"), TypeError,
        r"Value 'a' with dtype <U1 is not a valid JAX array type"),
    Row("at with a float index", lambda jax, jnp: jnp.ones(3).at[1.5].set(1.0), TypeError,
        r"Indexer must have integer or boolean type, got indexer with type float64"),
    Row("item of a vector", lambda jax, jnp: jnp.ones(3).item(), ValueError,
        r"can only convert an array of size 1 to a Python scalar"),
    Row("float of a vector", lambda jax, jnp: float(jnp.ones(3)), TypeError, r"(?i)only .*scalar"),
    Row("bool of a vector", lambda jax, jnp: bool(jnp.ones(3)), ValueError,
        r"The truth value of an array with more than one element is ambiguous"),
    Row("len of a scalar", lambda jax, jnp: len(jnp.ones(())), TypeError, r"len\(\) of unsized object"),
    Row("iterating a scalar", lambda jax, jnp: list(jnp.ones(())), TypeError, r"iteration over a 0-d array"),
    Row("vector as a list index", lambda jax, jnp: [1, 2, 3][jnp.array([1, 2])], TypeError,
        r"(?i)only .*scalar"),
    Row("hash of an array", lambda jax, jnp: hash(jnp.ones(3)), TypeError, r"unhashable type"),
    Row("item assignment", lambda jax, jnp: jnp.ones(3).__setitem__(0, 1.0), TypeError,
        r"JAX arrays are immutable and do not support in-place item assignment"),
    Row("reshape method float size", lambda jax, jnp: jnp.ones(4).reshape(2, 2.5), TypeError, SHAPES),

    # ---- wrong dtype
    Row("argmax of complex", lambda jax, jnp: jnp.argmax(jnp.ones(3, jnp.complex64)), TypeError,
        r"does not accept dtype complex64"),
    Row("subtract booleans", lambda jax, jnp: jnp.ones(2, bool) - jnp.ones(2, bool), TypeError,
        r"sub does not accept dtype bool"),
    Row("right_shift by floats", lambda jax, jnp: jnp.right_shift(jnp.ones(3, jnp.int32), jnp.ones(3)), TypeError,
        r"shift_right_arithmetic does not accept dtype float32"),
    Row("astype object", lambda jax, jnp: jnp.ones(3).astype(object), TypeError,
        r"JAX only supports number, bool, and string dtypes, got dtype <class 'object'> in astype"),
    Row("astype unknown name", lambda jax, jnp: jnp.ones(3).astype("foo"), TypeError,
        r"data type 'foo' not understood"),
    Row("power with a str exponent", lambda jax, jnp: jnp.power(jnp.ones(3), "a"), TypeError,
        r"Value 'a' with dtype .* is not a valid JAX array type"),
    Row("isclose with a str", lambda jax, jnp: jnp.isclose(jnp.ones(3), "a"), TypeError, TYPE,
        r"Error interpreting argument"),
    Row("kron with a str", lambda jax, jnp: jnp.kron(jnp.ones(2), "a"), TypeError, TYPE,
        r"Error interpreting argument"),
    Row("polyval with a str", lambda jax, jnp: jnp.polyval(jnp.ones(2), "a"), TypeError, TYPE,
        r"Error interpreting argument"),
    Row("relu of a str", lambda jax, jnp: jax.nn.relu("a"), TypeError, TYPE,
        r"Error interpreting argument to custom_jvp_call"),
    Row("stop_gradient of a str", lambda jax, jnp: jax.lax.stop_gradient("a"), TypeError,
        r"'a' of type <class 'str'> is not a valid JAX type"),
    Row("device_put of a str", lambda jax, jnp: jax.device_put("abc"), TypeError, TYPE),
    Row("lax dynamic_slice float index",
        lambda jax, jnp: jax.lax.dynamic_slice(jnp.ones(3), (jnp.array(0.5),), (1,)), TypeError,
        r"index arguments to dynamic_slice must be integers of the same type, got: float32"),
    Row("lax dynamic_index_in_dim float index",
        lambda jax, jnp: jax.lax.dynamic_index_in_dim(jnp.ones(3), 1.5), TypeError,
        r"index arguments to dynamic_slice must be integers"),
    Row("lax broadcast negative", lambda jax, jnp: jax.lax.broadcast(jnp.ones(2), (-1,)), TypeError,
        r"broadcast_in_dim shape must have every element be nonnegative, got \(-1, 2\)"),
    Row("lax reshape negative", lambda jax, jnp: jax.lax.reshape(jnp.ones(3), (-1,)), TypeError,
        r"reshape new_sizes must all be positive, got \(-1,\)"),
    Row("switch on an index vector", lambda jax, jnp: jax.lax.switch(jnp.array([0, 1]), [lambda: 1.0, lambda: 2.0]),
        TypeError, r"Branch index must be scalar, got \[0 1\] of shape \(2,\)"),
    Row("random permutation float axis",
        lambda jax, jnp: jax.random.permutation(jax.random.PRNGKey(0), jnp.ones(3), axis=0.5), TypeError,
        r"'float' object cannot be interpreted as an integer"),
    Row("random bits signed dtype", lambda jax, jnp: jax.random.bits(jax.random.PRNGKey(0), (2,), dtype=jnp.int32),
        ValueError, r"dtype argument to `bits` must be an unsigned int dtype, got int32"),
    Row("random bernoulli int p", lambda jax, jnp: jax.random.bernoulli(jax.random.PRNGKey(0), 1, (2,)),
        TypeError, r"bernoulli probability `p` must have a floating dtype, got int32"),
    Row("random key_data of floats", lambda jax, jnp: jax.random.key_data(jnp.ones(2)), TypeError,
        KEY + r": expected key_data.dtype = uint32; got dtype=float32"),
    Row("random fold_in an array", lambda jax, jnp: jax.random.fold_in(jax.random.PRNGKey(0), jnp.ones(2, jnp.int32)),
        TypeError, r"fold_in accepts a scalar, but was given an array"),
    Row("random permutation with batched key",
        lambda jax, jnp: jax.random.permutation(jnp.zeros((2, 2), jnp.uint32), 3), ValueError,
        r"permutation accepts a single key, but was given a key array of shape \(2, 2\) != \(\)"),
    Row("random gamma shape", lambda jax, jnp: jax.random.gamma(jax.random.PRNGKey(0), jnp.ones(3), (2,)),
        ValueError, BROADCAST + r": shapes=\[\(2,\), \(3,\)\]"),
    Row("random multivariate_normal cov shape", lambda jax, jnp: jax.random.multivariate_normal(
        jax.random.PRNGKey(0), jnp.zeros(2), jnp.eye(3)), ValueError,
        r"multivariate_normal requires cov.shape == \(..., n, n\) for n=2, but got cov.shape == \(3, 3\)"),
    Row("random choice axis", lambda jax, jnp: jax.random.choice(jax.random.PRNGKey(0), jnp.ones(3), (2,), axis=3),
        ValueError, OOB.format(3, 1)),
    Row("random normal None shape", lambda jax, jnp: jax.random.normal(jax.random.PRNGKey(0), None), TypeError,
        SHAPES + r", got None", r"'NoneType' object is not iterable"),

    # ---- transformations given non-arrays or the wrong arity
    Row("make_jaxpr str argument", lambda jax, jnp: jax.make_jaxpr(lambda x: x)("abc"), TypeError,
        r"(?s)Error interpreting argument to .* as an abstract array.*path x"),
    Row("make_jaxpr returns str", lambda jax, jnp: jax.make_jaxpr(lambda x: "a")(1.0), TypeError,
        r"traced for (make_jaxpr|jit) returned a value of type <class 'str'>, which is not a valid JAX type"),
    Row("eval_shape str argument", lambda jax, jnp: jax.eval_shape(lambda x: x, "abc"), TypeError,
        r"Error interpreting argument to .* as an abstract array"),
    Row("checkpoint str argument", lambda jax, jnp: jax.checkpoint(lambda x: x)("abc"), TypeError,
        r"Argument 'abc' of type <class 'str'> is not a valid JAX type"),
    Row("jit unknown keyword", lambda jax, jnp: jax.jit(lambda x: x)(y=1.0), TypeError,
        r"got an unexpected keyword argument 'y'"),
    Row("jit too many arguments", lambda jax, jnp: jax.jit(lambda x: x)(1.0, 2.0), TypeError,
        r"takes 1 positional argument but 2 were given"),
    Row("jit missing argument", lambda jax, jnp: jax.jit(lambda x, y: x)(1.0), TypeError,
        r"missing 1 required positional argument: 'y'"),
    Row("cond operands missing", lambda jax, jnp: jax.lax.cond(True, lambda x: x, lambda x: x), TypeError,
        r"missing 1 required positional argument: 'x'"),
    Row("while_loop body changes tree",
        lambda jax, jnp: jax.lax.while_loop(lambda c: c[0] < 3, lambda c: c[0] + 1, (0, 0)), TypeError,
        r"while_loop body function carry input and carry output must have the same pytree structure"),
    Row("fori_loop body changes tree", lambda jax, jnp: jax.lax.fori_loop(0, 3, lambda i, c: (c, c), 0.0),
        TypeError, r"scan body function carry input and carry output must have the same pytree structure"),
    Row("associative_scan lengths",
        lambda jax, jnp: jax.lax.associative_scan(jax.lax.add, (jnp.ones(3), jnp.ones(4))), ValueError,
        r"Array inputs to associative_scan must have the same first dimension"),
    Row("lax.map leading lengths", lambda jax, jnp: jax.lax.map(lambda xy: xy[0], (jnp.ones(3), jnp.ones(4))),
        ValueError, r"scan got values with different leading axis sizes: 3, 4"),
    Row("softmax where shape", lambda jax, jnp: jax.nn.softmax(jnp.ones(3), where=jnp.ones(4, bool)), ValueError,
        r"Incompatible (types|shapes) for broadcasting"),
    Row("tree_unflatten too few leaves",
        lambda jax, jnp: jax.tree_util.tree_unflatten(jax.tree_util.tree_structure((1, 2)), [1]), ValueError,
        r"Too few leaves for PyTreeDef; expected 2, got 1"),
    Row("tree_reduce of nothing", lambda jax, jnp: jax.tree_util.tree_reduce(lambda a, b: a + b, []), TypeError,
        r"reduce\(\) of empty iterable with no initial value"),

    # ---- tracers where a concrete value is needed
    Row("bool of tracer", lambda jax, jnp: jax.jit(lambda x: 1 if x > 0 else 2)(1.0), "TracerBoolConversionError",
        r"Attempted boolean conversion of traced array with shape bool\[\]"),
    Row("int of tracer", lambda jax, jnp: jax.jit(lambda x: int(x))(1.0), "ConcretizationTypeError",
        r"Abstract tracer value encountered where concrete value is expected.*\n"
        r"The problem arose with the `int` function"),
    Row("float of tracer", lambda jax, jnp: jax.jit(lambda x: float(x))(1.0), "ConcretizationTypeError",
        r"The problem arose with the `float` function"),
    Row("tracer as list index", lambda jax, jnp: jax.jit(lambda i: [1, 2, 3][i])(1), "TracerIntegerConversionError",
        r"The __index__\(\) method was called on traced array with shape int32\[\]"),
    Row("numpy function on tracer", lambda jax, jnp: jax.jit(lambda x: np.sin(x))(1.0),
        "TracerArrayConversionError",
        r"The numpy.ndarray conversion method __array__\(\) was called on traced array"),
    Row("arange of tracer", lambda jax, jnp: jax.jit(lambda n: jnp.arange(n))(3), "ConcretizationTypeError",
        r"Abstract tracer value encountered.*\nIt arose in the jnp.arange argument 'stop'"),
    Row("zeros of traced size", lambda jax, jnp: jax.jit(lambda n: jnp.zeros(n))(3), TypeError,
        SHAPES + r", got \(JitTracer.*\nIf using `jit`, try using `static_argnums`"),
    Row("reshape to traced size", lambda jax, jnp: jax.jit(lambda x, n: x.reshape(n))(jnp.ones(4), 4),
        TypeError, SHAPES),
    Row("boolean mask under jit", lambda jax, jnp: jax.jit(lambda x: x[x > 0])(jnp.ones(3)),
        "NonConcreteBooleanIndexError",
        r"Array boolean indices must be concrete; got bool\[3\]"),
    Row("nonzero under jit", lambda jax, jnp: jax.jit(lambda x: jnp.nonzero(x))(jnp.ones(2)),
        "ConcretizationTypeError",
        r"The size argument of jnp.nonzero must be statically specified"),
    Row("unique under jit", lambda jax, jnp: jax.jit(lambda x: jnp.unique(x))(jnp.ones(2)),
        "ConcretizationTypeError",
        r"jnp.unique\(\).*specify a concrete value for the size argument"),
    Row("bincount under jit", lambda jax, jnp: jax.jit(lambda x: jnp.bincount(x))(jnp.arange(3)),
        "ConcretizationTypeError",
        r"argument 'x' of jnp.bincount. To avoid this error, pass a static `length` argument"),

    # ---- differentiation
    Row("grad of non-scalar output", lambda jax, jnp: jax.grad(lambda x: x * 2)(jnp.ones(3)), TypeError,
        NONSCALAR + r". Output had shape: \(3,\)"),
    Row("value_and_grad of non-scalar", lambda jax, jnp: jax.value_and_grad(lambda x: x)(jnp.ones(2)),
        TypeError, NONSCALAR + r". Output had shape: \(2,\)"),
    Row("grad of tuple output", lambda jax, jnp: jax.grad(lambda x: (x, x))(1.0), TypeError,
        NONSCALAR + r". Output was \("),
    Row("grad w.r.t. int", lambda jax, jnp: jax.grad(lambda x: x * 2)(1), TypeError,
        r"grad requires real- or complex-valued inputs \(input dtype that is a sub-dtype of np.inexact\), "
        r"but got int32. If you want to use Boolean- or integer-valued inputs, use vjp or set allow_int"),
    Row("grad w.r.t. int array", lambda jax, jnp: jax.grad(jnp.sum)(jnp.arange(3)), TypeError,
        r"grad requires real- or complex-valued inputs.*but got int32"),
    Row("grad of int output", lambda jax, jnp: jax.grad(lambda x: x.astype(jnp.int32))(1.0), TypeError,
        r"grad requires real-valued outputs \(output dtype that is a sub-dtype of np.floating\), "
        r"but got int32"),
    Row("grad of complex output", lambda jax, jnp: jax.grad(lambda x: x * 1j)(1.0), TypeError,
        r"grad requires real-valued outputs.*but got complex64. For holomorphic differentiation, pass "
        r"holomorphic=True"),
    Row("holomorphic grad of real input", lambda jax, jnp: jax.grad(lambda x: x, holomorphic=True)(1.0),
        TypeError, r"grad with holomorphic=True requires inputs with complex dtype, but got float32"),
    Row("holomorphic grad of real output",
        lambda jax, jnp: jax.grad(lambda x: x.real, holomorphic=True)(1j), TypeError,
        r"grad with holomorphic=True requires outputs with complex dtype, but got float32"),
    Row("grad argnums out of range", lambda jax, jnp: jax.grad(lambda x: x, argnums=2)(1.0), TypeError,
        r"differentiating with respect to argnums=2 requires at least 3 positional arguments"),
    Row("jacrev w.r.t. int", lambda jax, jnp: jax.jacrev(lambda x: x)(jnp.arange(3)), TypeError,
        r"jacrev requires real- or complex-valued inputs.*but got int32"),
    Row("jacfwd w.r.t. int", lambda jax, jnp: jax.jacfwd(lambda x: x)(jnp.arange(3)), TypeError,
        r"jacfwd requires real-valued inputs \(input dtype that is a sub-dtype of np.floating\), "
        r"but got int32"),
    Row("hessian w.r.t. int", lambda jax, jnp: jax.hessian(jnp.sum)(jnp.arange(3)), TypeError,
        r"jacfwd requires real-valued inputs"),
    Row("jvp tangent dtype", lambda jax, jnp: jax.jvp(jnp.sin, (1.0,), (1,)), TypeError,
        r"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case of "
        r"int/bool primal dtype the tangent dtype must be float0. ?Got primal dtype float32 and so "
        r"expected tangent dtype float32, but got tangent dtype int32 instead"),
    Row("jvp tangent float16", lambda jax, jnp: jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(3, jnp.float16),)),
        TypeError, r"but got tangent dtype float16 instead"),
    Row("jvp tangent shape", lambda jax, jnp: jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),)), ValueError,
        r"jvp called with different primal and tangent shapes;Got primal shape \(3,\) and tangent shape as "
        r"\(2,\)"),
    Row("jvp tangent tree", lambda jax, jnp: jax.jvp(jnp.sin, (1.0,), (1.0, 2.0)), TypeError,
        r"primal and tangent arguments to jax.jvp must have the same tree structure"),
    Row("jvp tangent dict keys",
        lambda jax, jnp: jax.jvp(lambda a: a["x"], ({"x": 1.0},), ({"y": 1.0},)), TypeError,
        r"primal and tangent arguments to jax.jvp must have the same tree structure"),
    Row("jvp primals not a tuple", lambda jax, jnp: jax.jvp(jnp.sin, 1.0, 1.0), TypeError,
        r"primal and tangent arguments to jax.jvp must be tuples or lists; found float and float"),
    Row("vjp cotangent shape", lambda jax, jnp: jax.vjp(jnp.sin, jnp.ones(3))[1](jnp.ones(2)), ValueError,
        r"unexpected JAX type \(e.g. shape/dtype\) for argument to VJP function: got float32\[2\], but "
        r"expected float32\[3\]"),
    Row("vjp cotangent dtype", lambda jax, jnp: jax.vjp(jnp.sin, jnp.ones(3))[1](jnp.ones(3, jnp.int32)),
        ValueError, r"unexpected JAX type \(e.g. shape/dtype\) for argument to VJP function: got int32\[3\]"),
    Row("vjp cotangent tree",
        lambda jax, jnp: jax.vjp(jnp.sin, jnp.ones(3))[1]((jnp.ones(3), jnp.ones(3))), ValueError,
        r"unexpected tree structure"),
    Row("vjp function given two arguments",
        lambda jax, jnp: jax.vjp(jnp.sin, jnp.ones(3))[1](jnp.ones(3), jnp.ones(3)), TypeError,
        r"returned by `jax.vjp`.* called with 2 arguments"),
    Row("linearize tangent shape", lambda jax, jnp: jax.linearize(jnp.sin, jnp.ones(3))[1](jnp.ones(2)),
        ValueError, r"linearized function called on tangent values inconsistent with the original primal "
                    r"values:\nGot tangent aval float32\[2\] for primal aval float32\[3\]"),
    Row("linearize tangent dtype",
        lambda jax, jnp: jax.linearize(jnp.sin, jnp.ones(3))[1](jnp.ones(3, jnp.int32)), ValueError,
        r"Got tangent aval int32\[3\] for primal aval float32\[3\] but expected float32\[3\]"),
    Row("custom_vjp bwd too few cotangents", lambda jax, jnp: jax.grad(_cvjp(jax, 1))(1.0, 2.0), TypeError,
        r"Custom VJP bwd rule must produce an output with the same container \(pytree\) structure as the "
        r"args tuple of the primal function.*PyTreeDef\(\(\*,\)\) for primal input structure "
        r"PyTreeDef\(\(\*, \*\)\)"),
    Row("custom_vjp bwd too many cotangents", lambda jax, jnp: jax.grad(_cvjp(jax, 3))(1.0, 2.0), TypeError,
        r"Custom VJP bwd rule must produce an output with the same container \(pytree\) structure"),
    Row("custom_vjp bwd returns no tuple",
        lambda jax, jnp: jax.grad(_cvjp_bwd(jax, lambda res, g: g))(1.0), TypeError,
        r"bwd output structure PyTreeDef\(\*\) for primal input structure PyTreeDef\(\(\*,\)\)"),
    Row("custom_vjp bwd cotangent shape",
        lambda jax, jnp: jax.grad(_cvjp_bwd(jax, lambda res, g: (jnp.ones(3),)))(1.0), ValueError,
        r"Custom VJP bwd rule must produce an output with the same type as the args tuple of the primal "
        r"function, but at output\[0\] the bwd rule produced an output of type float32\[3\] corresponding "
        r"to an input of type float32\[\]"),
    Row("custom_vjp fwd returns no pair", lambda jax, jnp: jax.grad(_cvjp_fwd(jax, lambda x: x * 2))(1.0),
        TypeError, r"Custom VJP fwd rule <lambda> for function f must produce a pair \(list or tuple of "
                   r"length two\)"),
    Row("custom_vjp without defvjp", lambda jax, jnp: jax.custom_vjp(lambda x: x)(1.0), AttributeError,
        r"No VJP defined for custom_vjp function <lambda> using defvjp"),
    Row("custom_jvp tangent shape",
        lambda jax, jnp: jax.jvp(_cjvp(jax, lambda p, t: (p[0] * 2, jnp.ones(3))), (1.0,), (1.0,)),
        TypeError, r"Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
                   r"dtypes. Expected float32\[\] \(tangent type of float32\[\]\) but got float32\[3\]"),
    Row("custom_jvp tangent dtype",
        lambda jax, jnp: jax.jvp(_cjvp(jax, lambda p, t: (p[0] * 2, jnp.ones((), jnp.int32))), (1.0,), (1.0,)),
        TypeError, r"Expected float32\[\] \(tangent type of float32\[\]\) but got int32\[\]"),
    Row("custom_jvp rule returns no pair",
        lambda jax, jnp: jax.jvp(_cjvp(jax, lambda p, t: p[0] * 2), (1.0,), (1.0,)), TypeError,
        r"Custom JVP rule <lambda> for function f must produce a pair \(list or tuple of length two\) "
        r"representing primal and tangent outputs"),
    Row("custom_jvp without defjvp", lambda jax, jnp: jax.grad(jax.custom_jvp(lambda x: x * 2))(1.0),
        AttributeError, r"No JVP defined for custom_jvp function <lambda> using defjvp"),
    Row("fori_loop grad with traced bounds",
        lambda jax, jnp: jax.jit(jax.grad(lambda x, n: jax.lax.fori_loop(0, n, _body, x)))(1.0, 3),
        ValueError, r"Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
                    r"dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop"),
    Row("fori_loop vjp with traced lower bound",
        lambda jax, jnp: jax.jit(jax.grad(lambda x, n: jax.lax.fori_loop(n, 3, _body, x)))(1.0, 0),
        ValueError, r"Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop"),
    Row("while_loop grad", lambda jax, jnp: jax.grad(
        lambda x: jax.lax.while_loop(lambda c: c < 3, lambda c: c * 2, x))(1.0), ValueError,
        r"Reverse-mode differentiation does not work for lax.while_loop"),

    # ---- pytrees that do not match
    Row("tree_map lengths", lambda jax, jnp: jax.tree_util.tree_map(lambda a, b: a + b, (1, 2), (1, 2, 3)),
        ValueError, r"pytree structure error: different lengths of tuple at key path"),
    Row("tree_map dict keys", lambda jax, jnp: jax.tree_util.tree_map(lambda a, b: a + b, {"a": 1}, {"b": 1}),
        ValueError, r"pytree structure error: different pytree metadata at key path"),
    Row("tree_map node types", lambda jax, jnp: jax.tree_util.tree_map(lambda a, b: a + b, (1, 2), [1, 2]),
        ValueError, r"pytree structure error: different types at key path"),
    Row("scan carry dtype changes",
        lambda jax, jnp: jax.lax.scan(lambda c, x: (c.astype(jnp.int32), x), 0.0, jnp.ones(3)), TypeError,
        r"scan body function carry input and carry output must have equal types.*\n\n.*so the dtypes do "
        r"not match"),
    Row("scan carry shape changes",
        lambda jax, jnp: jax.lax.scan(lambda c, x: (jnp.ones(2) * c, x), 0.0, jnp.ones(3)), TypeError,
        r"so the shapes do not match"),
    Row("scan carry tree changes",
        lambda jax, jnp: jax.lax.scan(lambda c, x: ((c, c), x), 0.0, jnp.ones(3)), TypeError,
        r"scan body function carry input and carry output must have the same pytree structure"),
    Row("scan leading lengths",
        lambda jax, jnp: jax.lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4))), ValueError,
        r"scan got values with different leading axis sizes: 3, 4"),
    Row("scan length argument",
        lambda jax, jnp: jax.lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=4), ValueError,
        r"scan got `length` argument of 4 which disagrees with leading axis sizes \[3\]"),
    Row("scan nothing to scan", lambda jax, jnp: jax.lax.scan(lambda c, x: (c, x), 0.0, None), ValueError,
        r"scan got no values to scan over and `length` not provided"),
    Row("scan over a scalar", lambda jax, jnp: jax.lax.scan(lambda c, x: (c, x), 0.0, 1.0), ValueError,
        r"scan got value with no leading axis to scan over: 1.0"),
    Row("scan body returns no pair", lambda jax, jnp: jax.lax.scan(lambda c, x: c, 0.0, jnp.ones(3)),
        TypeError, r"scan body output must be a pair, got"),
    Row("map over a scalar", lambda jax, jnp: jax.lax.map(lambda x: x, 1.0), ValueError,
        r"scan got value with no leading axis to scan over"),
    Row("cond branch dtypes", lambda jax, jnp: jax.lax.cond(True, lambda: 1.0, lambda: 1), TypeError,
        r"cond branches must have equal output types but they differ.*\n(.*\n)*.*so the dtypes do not match"),
    Row("cond branch shapes", lambda jax, jnp: jax.lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(3)),
        TypeError, r"so the shapes do not match"),
    Row("cond branch trees", lambda jax, jnp: jax.lax.cond(True, lambda: (1.0, 1.0), lambda: 1.0), TypeError,
        r"cond branch outputs must have the same pytree structure"),
    Row("cond predicate shape",
        lambda jax, jnp: jax.lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0), TypeError,
        r"Pred must be a scalar, got \[ True False\] of shape \(2,\)"),
    Row("switch branch shapes", lambda jax, jnp: jax.lax.switch(0, [lambda: 1.0, lambda: jnp.ones(2)]),
        TypeError, r"switch branches must have equal output types"),
    Row("switch without branches", lambda jax, jnp: jax.lax.switch(0, []), ValueError,
        r"Empty branch sequence"),
    Row("while_loop carry shape",
        lambda jax, jnp: jax.lax.while_loop(lambda c: jnp.all(c < 3), lambda c: jnp.ones(2), 0.0), TypeError,
        r"while_loop body function carry input and carry output must have equal types"),
    Row("while_loop cond not scalar",
        lambda jax, jnp: jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1, jnp.zeros(2)), TypeError,
        r"cond_fun must return a boolean scalar, but got output type\(s\) \[ShapedArray\(bool\[2\]\)\]"),
    Row("while_loop cond float", lambda jax, jnp: jax.lax.while_loop(lambda c: c, lambda c: c + 1, 0.0),
        TypeError, r"cond_fun must return a boolean scalar"),
    Row("vmap inconsistent sizes", lambda jax, jnp: jax.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4)),
        ValueError, r"vmap got inconsistent sizes for array axes to be mapped:\n  \* one axis had size 3: "
                    r"axis 0 of argument x of type float32\[3\];\n  \* one axis had size 4"),
    Row("vmap without arguments", lambda jax, jnp: jax.vmap(lambda: 1.0)(), ValueError,
        r"vmap wrapped function must be passed at least one argument containing an array"),
    Row("vmap with every in_axes None", lambda jax, jnp: jax.vmap(lambda x: x, in_axes=None)(jnp.ones(3)),
        ValueError, r"vmap must have at least one non-None value in in_axes"),

    # ---- random keys and samplers
    Row("float as key", lambda jax, jnp: jax.random.normal(1.5, (2,)), TypeError,
        KEY + r": expected key_data to have ndim, shape, and dtype attributes. Got 1.5"),
    Row("int as key", lambda jax, jnp: jax.random.normal(0, (2,)), TypeError,
        KEY + r": expected key_data to have ndim, shape, and dtype attributes. Got 0"),
    Row("float array as key", lambda jax, jnp: jax.random.normal(jnp.ones(2), (2,)), TypeError,
        KEY + r": expected key_data.dtype = uint32; got dtype=float32"),
    Row("int32 array as key", lambda jax, jnp: jax.random.uniform(jnp.zeros(2, jnp.int32)), TypeError,
        KEY + r": expected key_data.dtype = uint32; got dtype=int32"),
    Row("key of wrong shape", lambda jax, jnp: jax.random.normal(jnp.zeros(3, jnp.uint32), (2,)), TypeError,
        KEY + r": expected key_data.shape to end with \(2,\); got shape=\(3,\)"),
    Row("split a float", lambda jax, jnp: jax.random.split(1.5), TypeError, KEY),
    Row("split a wrongly shaped key", lambda jax, jnp: jax.random.split(jnp.zeros(3, jnp.uint32)), TypeError,
        KEY + r": expected key_data.shape to end with \(2,\)"),
    Row("wrap_key_data wrong shape", lambda jax, jnp: jax.random.wrap_key_data(jnp.zeros(3, jnp.uint32)),
        TypeError, KEY),
    Row("PRNGKey float seed", lambda jax, jnp: jax.random.PRNGKey(1.5), TypeError,
        r"PRNG key seed must be an integer"),
    Row("key float seed", lambda jax, jnp: jax.random.key(1.5), TypeError, r"PRNG key seed must be an integer"),
    Row("PRNGKey array seed", lambda jax, jnp: jax.random.PRNGKey(jnp.ones(2)), TypeError,
        r"PRNGKey accepts a scalar seed, but was given an array of shape \(2,\) != \(\). Use jax.vmap"),
    Row("normal int dtype", lambda jax, jnp: jax.random.normal(jax.random.PRNGKey(0), (2,), dtype=jnp.int32),
        ValueError, r"dtype argument to `normal` must be a float or complex dtype, got int32"),
    Row("uniform int dtype", lambda jax, jnp: jax.random.uniform(jax.random.PRNGKey(0), (2,), dtype=jnp.int32),
        ValueError, r"dtype argument to `uniform` must be a float dtype, got int32"),
    Row("randint float dtype",
        lambda jax, jnp: jax.random.randint(jax.random.PRNGKey(0), (2,), 0, 5, dtype=jnp.float32), TypeError,
        r"randint only accepts integer dtypes, got float32"),
    Row("uniform minval shape",
        lambda jax, jnp: jax.random.uniform(jax.random.PRNGKey(0), (2,), minval=jnp.zeros(3)), TypeError,
        r"incompatible shapes for broadcasting"),
    Row("randint bounds shape",
        lambda jax, jnp: jax.random.randint(jax.random.PRNGKey(0), (2,), jnp.zeros(3, jnp.int32), 5),
        ValueError, BROADCAST + r": shapes=\[\(2,\), \(3,\)"),
    Row("bernoulli p shape",
        lambda jax, jnp: jax.random.bernoulli(jax.random.PRNGKey(0), jnp.ones(3) * 0.5, (2,)), ValueError,
        BROADCAST + r": shapes=\[\(2,\), \(3,\)\]"),
    Row("categorical shape", lambda jax, jnp: jax.random.categorical(
        jax.random.PRNGKey(0), jnp.zeros((2, 4)), shape=(3,)), ValueError, BROADCAST),
    Row("choice too many without replacement",
        lambda jax, jnp: jax.random.choice(jax.random.PRNGKey(0), 3, (5,), replace=False), ValueError,
        r"Cannot take a larger sample \(size 5\) than population \(size 3\) when 'replace=False'"),
    Row("choice p size", lambda jax, jnp: jax.random.choice(jax.random.PRNGKey(0), 3, (2,), p=jnp.ones(4) / 4),
        ValueError, r"p must be None or a 1D vector with the same size as a.shape\[axis\]"),
    Row("choice from nothing", lambda jax, jnp: jax.random.choice(jax.random.PRNGKey(0), 0, (2,)), ValueError,
        r"a must be greater than 0 unless no samples are taken"),
    Row("batched key to normal",
        lambda jax, jnp: jax.random.normal(jax.random.split(jax.random.key(0), 2), (2,)), ValueError,
        r"normal accepts a single key, but was given a key array of shape \(2,\) != \(\). Use jax.vmap"),
    Row("uniform float4", lambda jax, jnp: jax.random.uniform(jax.random.PRNGKey(0), (2,), dtype=jnp.float4_e2m1fn),
        TypeError, r"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes, got float4_e2m1fn",
        r"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes,? ?got float4_e2m1fn"),
    Row("normal float4", lambda jax, jnp: jax.random.normal(jax.random.PRNGKey(0), (2,), dtype=jnp.float4_e2m1fn),
        TypeError, r"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes, got float4_e2m1fn",
        r"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes,? ?got float4_e2m1fn"),
    Row("gumbel float4 under jit",
        lambda jax, jnp: jax.jit(lambda k: jax.random.gumbel(k, (2,), dtype=jnp.float4_e2m1fn))(jax.random.PRNGKey(0)),
        TypeError, r"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes, got float4_e2m1fn",
        r"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes,? ?got float4_e2m1fn"),
    Row("gumbel unknown mode", lambda jax, jnp: jax.random.gumbel(jax.random.PRNGKey(0), (2,), mode="higher"),
        ValueError, r"Must provide valid mode for gumbel got: higher"),
    # ---- dtypes of casts and bitcasts (issue 11)
    Row("convert_element_type object", lambda jax, jnp: jax.lax.convert_element_type(jnp.ones(2), object),
        TypeError, r"JAX only supports number, bool, and string dtypes, got dtype <class 'object'> in "
                   r"convert_element_type"),
    Row("convert_element_type str", lambda jax, jnp: jax.lax.convert_element_type(jnp.ones(2), str), TypeError,
        r"got dtype <class 'str'> in convert_element_type"),
    Row("convert_element_type str under jit",
        lambda jax, jnp: jax.jit(lambda x: jax.lax.convert_element_type(x, np.str_))(jnp.ones(2)), TypeError,
        r"got dtype <class 'numpy.str_'> in convert_element_type"),
    Row("view object", lambda jax, jnp: jnp.ones(2).view(object), TypeError,
        r"got dtype <class 'object'> in view"),
    Row("view 0d to another width", lambda jax, jnp: jnp.ones(()).view(jnp.uint8), ValueError,
        r"view\(\) of a 0d array is only supported if the itemsize is unchanged"),
    Row("view to a wider type, ragged", lambda jax, jnp: jnp.ones((2, 3), jnp.uint8).view(jnp.float32), ValueError,
        r"When changing to a larger dtype, its size must be a divisor of the total size in bytes of the last axis"),
    Row("bitcast_convert_type bool", lambda jax, jnp: jax.lax.bitcast_convert_type(jnp.ones(2, bool), jnp.uint8),
        TypeError, r"lax.bitcast_convert_type does not support bool or complex values unless the operand and "
                   r"destination types match. Got operand dtype=bool"),
    Row("bitcast_convert_type to complex",
        lambda jax, jnp: jax.lax.bitcast_convert_type(jnp.ones(2, jnp.int32), jnp.complex64), TypeError,
        r"does not support bool or complex values.*Consider using the arr.view\(\) method instead"),
    Row("bitcast_convert_type wider, ragged",
        lambda jax, jnp: jax.lax.bitcast_convert_type(jnp.ones((2, 3), jnp.uint8), jnp.float32), ValueError,
        r"Attempting to convert array of shape \(2, 3\) from uint8 of size 8 bits to float32 of size 32, bits "
        r"but 3 \* 8 != 32"),
    Row("bitcast_convert_type wider, ragged, under jit", lambda jax, jnp: jax.jit(
        lambda x: jax.lax.bitcast_convert_type(x, jnp.int32))(jnp.ones((5,), jnp.int16)), ValueError,
        r"from int16 of size 16 bits to int32 of size 32, bits but 5 \* 16 != 32"),
    # ---- lax arithmetic argument checks (issue 11)
    Row("integer_pow float exponent", lambda jax, jnp: jax.lax.integer_pow(jnp.ones(2), 1.5), TypeError,
        r"integer_pow requires an integer exponent y, got 1.5", r"unsupported operand type"),
    Row("integer_pow float exponent under jit",
        lambda jax, jnp: jax.jit(lambda x: jax.lax.integer_pow(x, 2.5))(jnp.ones(2)), TypeError,
        r"integer_pow requires an integer exponent y, got 2.5", r"unsupported operand type"),
    Row("integer_pow array exponent", lambda jax, jnp: jax.lax.integer_pow(jnp.ones(2), jnp.array(2)), TypeError,
        r"integer_pow requires an integer exponent y, got Array", r"unhashable type"),
    Row("lax.dot mismatched shapes", lambda jax, jnp: jax.lax.dot(jnp.ones((2, 3)), jnp.ones((4, 5))), ValueError,
        r"jax.lax.dot: dimension_numbers must be specified when not performing simple un-batched matrix-matrix, "
        r"matrix-vector, or vector-vector products; got lhs_shape=\(2, 3\) rhs_shape=\(4, 5\)"),
    Row("lax.dot vectors of two lengths", lambda jax, jnp: jax.lax.dot(jnp.ones(3), jnp.ones(4)), ValueError,
        r"jax.lax.dot: dimension_numbers must be specified.*lhs_shape=\(3,\) rhs_shape=\(4,\)"),
    Row("lax.dot rank 3 under jit",
        lambda jax, jnp: jax.jit(jax.lax.dot)(jnp.ones((2, 3, 4)), jnp.ones((4, 5))), ValueError,
        r"jax.lax.dot: dimension_numbers must be specified.*lhs_shape=\(2, 3, 4\) rhs_shape=\(4, 5\)"),
    Row("dot_general narrower preferred type", lambda jax, jnp: jax.lax.dot_general(
        jnp.ones((2, 3), jnp.int32), jnp.ones((3, 2), jnp.int32), (((1,), (0,)), ((), ())),
        preferred_element_type=jnp.int8), TypeError,
        r"`preferred_element_type` must not be narrower than the original type, got preferred_element_type of "
        r"int8 for result type of int32"),
    Row("lax.abs unsigned", lambda jax, jnp: jax.lax.abs(jnp.ones(2, jnp.uint32)), TypeError,
        r"abs does not accept dtype uint32. Accepted dtypes are subtypes of floating, complexfloating, signedinteger"),
    Row("abs int4", lambda jax, jnp: jnp.abs(jnp.array([1, -2], jnp.int4)), TypeError,
        r"abs does not accept dtype int4. Support for narrow-width integers is platform-dependent"),
    Row("abs int2 under jit", lambda jax, jnp: jax.jit(jax.lax.abs)(jnp.array([1, -2], jnp.int2)), TypeError,
        r"abs does not accept dtype int2. Support for narrow-width integers"),
    Row("lax.rem complex", lambda jax, jnp: jax.lax.rem(jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64)),
        TypeError, r"rem does not accept dtype complex64"),
    Row("fmod complex under jit",
        lambda jax, jnp: jax.jit(jnp.fmod)(jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64)), TypeError,
        r"rem does not accept dtype complex64"),
    Row("population_count float", lambda jax, jnp: jax.lax.population_count(jnp.ones(2)), TypeError,
        r"population_count does not accept dtype float32. Accepted dtypes are subtypes of integer"),
    Row("clz bool", lambda jax, jnp: jax.lax.clz(jnp.ones(2, bool)), TypeError,
        r"clz does not accept dtype bool. Accepted dtypes are subtypes of integer"),
    Row("lax.full array fill", lambda jax, jnp: jax.lax.full((2,), jnp.ones(2)), TypeError,
        r"full must be called with scalar fill_value, got fill_value.shape \(2,\)"),
    Row("lax.complex of ints", lambda jax, jnp: jax.lax.complex(jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int32)),
        TypeError, r"complex does not accept dtype int32 at position 0. Accepted dtypes at position 0 are subtypes "
                   r"of float32, float64"),
    Row("lax.real of a float", lambda jax, jnp: jax.lax.real(jnp.ones(2)), TypeError,
        r"real does not accept dtype float32. Accepted dtypes are subtypes of complexfloating"),
    Row("lax.reduce structures differ", lambda jax, jnp: jax.lax.reduce(
        (jnp.ones(2), jnp.ones(2)), 0.0, jax.lax.add, (0,)), ValueError,
        r"Operands must have the same tree structure as init_values"),
    # ---- jax.numpy functions of the wrong kind of number (issue 11)
    Row("hypot complex", lambda jax, jnp: jnp.hypot(jnp.ones(2, jnp.complex64), 1.0), ValueError,
        r"jnp.hypot is not well defined for complex-valued inputs. Please convert to real values first"),
    Row("hypot complex under jit", lambda jax, jnp: jax.jit(jnp.hypot)(jnp.ones(2, jnp.complex64), 1.0),
        ValueError, r"jnp.hypot is not well defined for complex-valued inputs"),
    Row("heaviside complex", lambda jax, jnp: jnp.heaviside(jnp.ones(2, jnp.complex64), 0.5), TypeError,
        r"lt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are subtypes of "
        r"integer, floating, bool"),
    Row("gcd of bools", lambda jax, jnp: jnp.gcd(jnp.array([True]), jnp.array([False])), ValueError,
        r"Arguments to jax.numpy.gcd must be integers"),
    Row("lcm of bools under jit", lambda jax, jnp: jax.jit(jnp.lcm)(jnp.array([True]), jnp.array([True])),
        ValueError, r"Arguments to jax.numpy.lcm must be integers"),
    Row("lcm of int4", lambda jax, jnp: jnp.lcm(jnp.array([2], jnp.int4), jnp.array([3], jnp.int4)), TypeError,
        r"abs does not accept dtype int4"),
    # ---- differential-fuzzer findings 18, 21, 22, 23 (issue 11)
    Row("lax pad crops past zero",
        lambda jax, jnp: jax.lax.pad(jnp.zeros((2, 3)), 0.0, ((-2, -1, 0), (0, 0, 0))), ValueError,
        r"Dimension size after padding is not at least 0, got result shape \(-1, 3\)"),
    Row("lax pad crops past zero under jit",
        lambda jax, jnp: jax.jit(lambda x: jax.lax.pad(x, 0.0, ((0, 0, 0), (-3, -1, 0))))(jnp.zeros((2, 3))),
        ValueError, r"Dimension size after padding is not at least 0, got result shape \(2, -1\)"),
    Row("lax pad negative interior",
        lambda jax, jnp: jax.lax.pad(jnp.zeros((2, 3)), 0.0, ((0, 0, -1), (0, 0, 0))), ValueError,
        r"interior padding in padding_config must be nonnegative"),
    Row("round of bools", lambda jax, jnp: jnp.round(jnp.array([True, False])), ValueError,
        r"jnp.round does not accept dtype bool", r"data type <class 'numpy.bool'> not inexact"),
    Row("round of bools with decimals", lambda jax, jnp: jnp.round(jnp.array([True]), 2), ValueError,
        r"jnp.round does not accept dtype bool", r"data type <class 'numpy.bool'> not inexact"),
    Row("round of ints to negative decimals", lambda jax, jnp: jnp.round(jnp.array([15, 25]), -1),
        NotImplementedError, r"not implemented for decimals < 0"),
    Row("mean axis out of range", lambda jax, jnp: jnp.mean(jnp.zeros(3), axis=-2), IndexError,
        r"axis -2 is out of bounds for array of dimension 1", r"tuple index out of range"),
    Row("var axis tuple out of range", lambda jax, jnp: jnp.var(jnp.zeros(3), axis=(0, 1)), IndexError,
        r"axis 1 is out of bounds for array of dimension 1", r"tuple index out of range"),
    Row("average axis out of range", lambda jax, jnp: jnp.average(jnp.zeros(3), axis=1), ValueError,
        r"axis 1 is out of bounds for array of dimension 1"),
    Row("lax round unknown method", lambda jax, jnp: jax.lax.round(jnp.float32(1.5), 7), ValueError,
        r"7 is not a valid RoundingMethod"),
]

# Calls JAX answers with the truncation UserWarning (``match``), or with no warning (None).
_TRUNCATED = "Explicitly requested dtype {} .*not available, and will be truncated to dtype {}"
_F64, _I64 = _TRUNCATED.format("float64", "float32"), _TRUNCATED.format("int64", "int32")


class WarnRow(NamedTuple):
    id: str
    call: Callable
    match: Optional[str]


WARN_ROWS = [
    WarnRow("array float64", lambda jax, jnp: jnp.array([1.0], dtype=jnp.float64), _F64 + ".*jax_enable_x64"),
    WarnRow("array numpy float64", lambda jax, jnp: jnp.array([1.0], dtype=np.float64), _F64),
    WarnRow("array 'float64'", lambda jax, jnp: jnp.array([1.0], dtype="float64"), _F64),
    WarnRow("asarray float64", lambda jax, jnp: jnp.asarray([1.0], dtype=jnp.float64),
            r"float64 requested in asarray"),
    WarnRow("asarray int64 of int64 data",
            lambda jax, jnp: jnp.asarray(np.ones(2, np.int64), dtype=np.int64), _I64),
    WarnRow("zeros int64", lambda jax, jnp: jnp.zeros(3, jnp.int64), r"int64 requested in zeros"),
    WarnRow("ones float64", lambda jax, jnp: jnp.ones(3, jnp.float64), r"float64 requested in ones"),
    WarnRow("full float64", lambda jax, jnp: jnp.full(3, 1.0, jnp.float64), r"float64 requested in full"),
    WarnRow("empty float64", lambda jax, jnp: jnp.empty(3, jnp.float64), r"float64 requested in empty"),
    WarnRow("zeros_like float64", lambda jax, jnp: jnp.zeros_like(jnp.ones(3), dtype=jnp.float64),
            r"float64 requested in zeros_like"),
    WarnRow("full_like float64", lambda jax, jnp: jnp.full_like(jnp.ones(3), 2.0, dtype=jnp.float64),
            r"float64 requested in full_like"),
    WarnRow("arange float64", lambda jax, jnp: jnp.arange(3, dtype=jnp.float64), r"float64 requested in arange"),
    WarnRow("linspace float64", lambda jax, jnp: jnp.linspace(0, 1, 3, dtype=jnp.float64),
            r"float64 requested in linspace"),
    WarnRow("eye float64", lambda jax, jnp: jnp.eye(2, dtype=jnp.float64), r"float64 requested in eye"),
    WarnRow("identity float64", lambda jax, jnp: jnp.identity(2, dtype=jnp.float64),
            r"float64 requested in identity"),
    WarnRow("tri float64", lambda jax, jnp: jnp.tri(2, dtype=jnp.float64), r"float64 requested in tri"),
    WarnRow("astype float64", lambda jax, jnp: jnp.ones(3).astype(jnp.float64), r"float64 requested in astype"),
    WarnRow("jnp.astype complex128", lambda jax, jnp: jnp.astype(jnp.ones(3), jnp.complex128),
            _TRUNCATED.format("complex128", "complex64")),
    WarnRow("astype uint64", lambda jax, jnp: jnp.ones(3).astype(jnp.uint64),
            _TRUNCATED.format("uint64", "uint32")),
    WarnRow("sum dtype float64", lambda jax, jnp: jnp.sum(jnp.ones(3), dtype=jnp.float64),
            r"float64 requested in sum"),
    WarnRow("cumsum dtype float64", lambda jax, jnp: jnp.cumsum(jnp.ones(3), dtype=jnp.float64),
            r"float64 requested in cumsum"),
    WarnRow("mean dtype float64", lambda jax, jnp: jnp.mean(jnp.ones(3), dtype=jnp.float64),
            r"float64 requested in mean"),
    WarnRow("argsort dtype int64", lambda jax, jnp: jnp.argsort(jnp.ones(2), dtype=jnp.int64),
            r"int64 requested in argsort"),
    WarnRow("jnp.float64 scalar", lambda jax, jnp: jnp.float64(1.0), r"float64 requested in asarray"),
    WarnRow("jnp.int64 scalar", lambda jax, jnp: jnp.int64(1), _I64),
    WarnRow("random normal float64",
            lambda jax, jnp: jax.random.normal(jax.random.PRNGKey(0), (2,), dtype=jnp.float64), _F64),
    WarnRow("random uniform float64",
            lambda jax, jnp: jax.random.uniform(jax.random.PRNGKey(0), (2,), dtype=jnp.float64), _F64),
    WarnRow("random randint int64",
            lambda jax, jnp: jax.random.randint(jax.random.PRNGKey(0), (2,), 0, 3, dtype=jnp.int64), _I64),
    WarnRow("random bits uint64",
            lambda jax, jnp: jax.random.bits(jax.random.PRNGKey(0), (2,), dtype=jnp.uint64),
            _TRUNCATED.format("uint64", "uint32")),
    WarnRow("one_hot float64", lambda jax, jnp: jax.nn.one_hot(jnp.arange(2), 2, dtype=jnp.float64), _F64),
    WarnRow("zeros float64 under jit", lambda jax, jnp: jax.jit(lambda: jnp.zeros(2, jnp.float64))(), _F64),
    WarnRow("convert_element_type float64", lambda jax, jnp: jax.lax.convert_element_type(jnp.ones(2), jnp.float64),
            r"float64 requested in convert_element_type"),
    WarnRow("convert_element_type int64 under jit", lambda jax, jnp: jax.jit(
        lambda x: jax.lax.convert_element_type(x, jnp.int64))(jnp.ones(2)), r"int64 requested in convert_element_type"),
    WarnRow("convert_element_type uint64", lambda jax, jnp: jax.lax.convert_element_type(jnp.ones(2), jnp.uint64),
            _TRUNCATED.format("uint64", "uint32")),
    WarnRow("view float64", lambda jax, jnp: jnp.ones(4).view(jnp.float64), r"float64 requested in view"),
    WarnRow("view int64 under jit", lambda jax, jnp: jax.jit(lambda x: x.view(jnp.int64))(jnp.ones(4)),
            r"int64 requested in view"),
    WarnRow("bitcast_convert_type float64", lambda jax, jnp: jax.lax.bitcast_convert_type(jnp.ones(2), jnp.float64),
            r"float64 requested in bitcast_convert_type"),
    WarnRow("lax.full float64", lambda jax, jnp: jax.lax.full((2,), 1.0, jnp.float64), r"float64 requested in full"),
    WarnRow("dot_general preferred float64", lambda jax, jnp: jax.lax.dot_general(
        jnp.ones((2, 2)), jnp.ones((2, 2)), (((1,), (0,)), ((), ())), preferred_element_type=jnp.float64),
        r"float64 requested in dot"),
    # No warning: nothing 64-bit was asked for by name.
    WarnRow("convert_element_type float", lambda jax, jnp: jax.lax.convert_element_type(jnp.ones(2), float), None),
    WarnRow("convert_element_type 'float32'", lambda jax, jnp: jax.lax.convert_element_type(jnp.ones(2), "float32"),
            None),
    WarnRow("array of float64 data", lambda jax, jnp: jnp.array(np.ones(2)), None),
    WarnRow("array dtype=float", lambda jax, jnp: jnp.array([1.0], dtype=float), None),
    WarnRow("array dtype=int", lambda jax, jnp: jnp.array([1], dtype=int), None),
    WarnRow("zeros float32", lambda jax, jnp: jnp.zeros(3, jnp.float32), None),
    WarnRow("array int8", lambda jax, jnp: jnp.array([1], dtype=jnp.int8), None),
    WarnRow("ones_like float64 data", lambda jax, jnp: jnp.ones_like(np.ones(3)), None),
    WarnRow("full_like float64 data", lambda jax, jnp: jnp.full_like(np.ones(3), 2.0), None),
    WarnRow("result_type float64", lambda jax, jnp: jnp.result_type(jnp.float64), None),
    WarnRow("sin of float64 data", lambda jax, jnp: jnp.sin(np.ones(2)), None),
]


class AcceptRow(NamedTuple):
    id: str
    call: Callable
    shape: tuple


def _sampler_rows():
    """Every jax.random sampler takes an int ``shape`` (as JAX's canonicalize_shape)."""
    k = "jax.random.PRNGKey(0)"
    calls = {
        "uniform": f"uniform({k}, 3)", "normal": f"normal({k}, 3)", "randint": f"randint({k}, 3, 0, 5)",
        "bernoulli": f"bernoulli({k}, 0.5, 3)", "truncated_normal": f"truncated_normal({k}, -1., 1., 3)",
        "gamma": f"gamma({k}, 1.0, 3)", "beta": f"beta({k}, 1.0, 1.0, 3)",
        "exponential": f"exponential({k}, 3)", "laplace": f"laplace({k}, 3)",
        "logistic": f"logistic({k}, 3)", "gumbel": f"gumbel({k}, 3)", "cauchy": f"cauchy({k}, 3)",
        "poisson": f"poisson({k}, 1.0, 3)", "categorical": f"categorical({k}, jnp.zeros(4), shape=3)",
        "bits": f"bits({k}, 3)", "rademacher": f"rademacher({k}, 3)",
        "chisquare": f"chisquare({k}, 2.0, 3)", "t": f"t({k}, 2.0, 3)", "pareto": f"pareto({k}, 2.0, 3)",
        "weibull_min": f"weibull_min({k}, 1.0, 1.0, 3)", "maxwell": f"maxwell({k}, 3)",
        "loggamma": f"loggamma({k}, 1.0, 3)", "binomial": f"binomial({k}, 5, 0.5, 3)",
        "geometric": f"geometric({k}, 0.5, 3)", "rayleigh": f"rayleigh({k}, 1.0, 3)",
        "lognormal": f"lognormal({k}, 1.0, 3)", "f": f"f({k}, 1.0, 2.0, 3)",
        "triangular": f"triangular({k}, 0.0, 0.5, 1.0, 3)", "wald": f"wald({k}, 1.0, 3)",
        "double_sided_maxwell": f"double_sided_maxwell({k}, 0.0, 1.0, 3)",
        "generalized_normal": f"generalized_normal({k}, 2.0, 3)",
    }
    rows = [AcceptRow(f"random {name} int shape",
                      lambda jax, jnp, src=src: eval("jax.random." + src, {"jax": jax, "jnp": jnp}), (3,))
            for name, src in calls.items()]
    rows += [
        AcceptRow("random dirichlet int shape",
                  lambda jax, jnp: jax.random.dirichlet(jax.random.PRNGKey(0), jnp.ones(2), 3), (3, 2)),
        AcceptRow("random ball int shape", lambda jax, jnp: jax.random.ball(jax.random.PRNGKey(0), 2, shape=3),
                  (3, 2)),
        AcceptRow("random orthogonal int shape",
                  lambda jax, jnp: jax.random.orthogonal(jax.random.PRNGKey(0), 2, shape=3), (3, 2, 2)),
        AcceptRow("random multivariate_normal int shape", lambda jax, jnp: jax.random.multivariate_normal(
            jax.random.PRNGKey(0), jnp.zeros(2), jnp.eye(2), 3), (3, 2)),
    ]
    return rows


ACCEPT_ROWS = _sampler_rows() + [
    AcceptRow("static index past the end clamps", lambda jax, jnp: jnp.ones(3)[5], ()),
    AcceptRow("static negative index past the start clamps", lambda jax, jnp: jnp.ones(3)[-5], ()),
    AcceptRow("at[] set past the end is dropped", lambda jax, jnp: jnp.ones(3).at[5].set(1.0), (3,)),
    AcceptRow("cond with a float predicate", lambda jax, jnp: jax.lax.cond(1.5, lambda: 1.0, lambda: 2.0), ()),
    AcceptRow("take with bool indices", lambda jax, jnp: jnp.take(jnp.ones(3), jnp.array([True])), (1,)),
    AcceptRow("split with an integral float", lambda jax, jnp: jnp.split(jnp.ones(4), 2.0)[0], (2,)),
    AcceptRow("eye with an integer array k", lambda jax, jnp: jnp.eye(2, k=jnp.array(1)), (2, 2)),
    AcceptRow("one_hot with an array num_classes",
              lambda jax, jnp: jax.nn.one_hot(jnp.arange(3), jnp.array(3)), (3, 3)),
    AcceptRow("jvp with float64 numpy tangent",
              lambda jax, jnp: jax.jvp(jnp.sin, (jnp.ones(2),), (np.ones(2),))[1], (2,)),
    AcceptRow("jit returning None", lambda jax, jnp: jax.jit(lambda x: (x, None))(1.0)[0], ()),
    AcceptRow("round of complex", lambda jax, jnp: jnp.round(jnp.array([1.5 + 2.5j])), (1,)),
    AcceptRow("lax round with a RoundingMethod",
              lambda jax, jnp: jax.lax.round(jnp.ones(2), jax.lax.RoundingMethod.TO_NEAREST_EVEN), (2,)),
    AcceptRow("lax pad cropping to zero", lambda jax, jnp: jax.lax.pad(jnp.zeros((2, 3)), 0.0,
                                                                   ((-3, 0, 1), (0, 0, 0))), (0, 3)),
    AcceptRow("rint of complex", lambda jax, jnp: jnp.rint(jnp.array([1.5 + 2.5j])), (1,)),
    AcceptRow("isfinite of complex", lambda jax, jnp: jnp.isfinite(jnp.array([1.5 + 2.5j])), (1,)),
    AcceptRow("randint with float bounds",
              lambda jax, jnp: jax.random.randint(jax.random.PRNGKey(0), (2,), 0.5, 3.5), (2,)),
    AcceptRow("eval_shape of a ShapeDtypeStruct",
              lambda jax, jnp: jax.eval_shape(jnp.sin, jax.ShapeDtypeStruct((2,), jnp.float32)), (2,)),
    AcceptRow("checkpoint with an int static_argnums", lambda jax, jnp: jax.grad(
        jax.checkpoint(lambda x, n: x * n, static_argnums=1))(1.0, 3), ()),
    AcceptRow("fori_loop grad with static bounds",
              lambda jax, jnp: jax.grad(lambda x: jax.lax.fori_loop(0, 3, _body, x))(1.0), ()),
    AcceptRow("integer_pow with an integral float exponent", lambda jax, jnp: jax.lax.integer_pow(jnp.ones(3), 2.0),
              (3,)),
    AcceptRow("integer_pow with a numpy int exponent",
              lambda jax, jnp: jax.lax.integer_pow(jnp.ones(3), np.int32(3)), (3,)),
    AcceptRow("dot_general float32 x bfloat16", lambda jax, jnp: jax.lax.dot_general(
        jnp.ones((2, 3)), jnp.ones((3, 2), jnp.bfloat16), (((1,), (0,)), ((), ()))), (2, 2)),
    AcceptRow("dot_general int8 x uint8 into int32", lambda jax, jnp: jax.lax.dot_general(
        jnp.ones((2, 3), jnp.int8), jnp.ones((3, 4), jnp.uint8), (((1,), (0,)), ((), ())),
        preferred_element_type=jnp.int32), (2, 4)),
    AcceptRow("lax.dot with dimension_numbers", lambda jax, jnp: jax.lax.dot(
        jnp.ones((2, 3, 4)), jnp.ones((4, 5)), dimension_numbers=(((2,), (0,)), ((), ()))), (2, 3, 5)),
    AcceptRow("bitcast float32 to uint8 adds an axis",
              lambda jax, jnp: jax.lax.bitcast_convert_type(jnp.ones(2), jnp.uint8), (2, 4)),
    AcceptRow("bitcast uint8 pairs to uint16",
              lambda jax, jnp: jax.lax.bitcast_convert_type(jnp.ones((3, 2), jnp.uint8), jnp.uint16), (3,)),
    AcceptRow("view float32 as uint8", lambda jax, jnp: jnp.ones((2, 3)).view(jnp.uint8), (2, 12)),
    AcceptRow("logaddexp of complex", lambda jax, jnp: jnp.logaddexp(jnp.ones(2, jnp.complex64), 1j), (2,)),
    AcceptRow("gcd of a bool and an int", lambda jax, jnp: jnp.gcd(jnp.array([True]), 4), (1,)),
    AcceptRow("randint int4", lambda jax, jnp: jax.random.randint(jax.random.PRNGKey(0), (3,), 0, 3,
                                                                 dtype=jnp.int4), (3,)),
    AcceptRow("gumbel mode highest", lambda jax, jnp: jax.random.gumbel(jax.random.PRNGKey(0), (3,),
                                                                       mode="highest"), (3,)),
    AcceptRow("lax.reduce with any computation", lambda jax, jnp: jax.lax.reduce(
        jnp.ones((2, 3)), 0.0, lambda a, b: a + 2 * b, (1,)), (2,)),
    AcceptRow("fori_loop jvp with traced bounds", lambda jax, jnp: jax.jit(
        lambda x, n: jax.jvp(lambda y: jax.lax.fori_loop(0, n, _body, y), (x,), (1.0,))[1])(1.0, 3), ()),
]


# ---------------------------------------------------------------- checks

_NUMBA_WORDS = ("numba", "failed in nopython mode", "typingerror")


def assert_not_numba_error(exc):
    """The error (and every error it was raised from) says nothing of Numba's typing."""
    while exc is not None:
        text = "".join(traceback.format_exception_only(type(exc), exc)).lower()
        assert not any(w in text for w in _NUMBA_WORDS), f"a Numba error reached the user: {text}"
        assert "numba" not in type(exc).__module__.lower(), f"a Numba exception class: {type(exc)}"
        exc = exc.__cause__ or (exc.__context__ if not exc.__suppress_context__ else None)


def run_row(row, jax, jnp, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(row.exc_class(jax), match=match) as info:
            row.call(jax, jnp)
    return info.value


def run_warn_row(row, jax, jnp):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        row.call(jax, jnp)
    found = [str(w.message) for w in seen if issubclass(w.category, UserWarning)
             and "Explicitly requested dtype" in str(w.message)]
    if row.match is None:
        assert not found, f"{row.id}: unexpected warnings {found}"
    else:
        import re
        assert any(re.search(row.match, m) for m in found), f"{row.id}: no warning matching {row.match!r} in {found}"


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_input(row):
    exc = run_row(row, numjax, njnp, row.match)
    assert_not_numba_error(exc)


@pytest.mark.parametrize("row", WARN_ROWS, ids=[r.id for r in WARN_ROWS])
def test_explicit_dtype_warning(row):
    run_warn_row(row, numjax, njnp)


@pytest.mark.parametrize("row", ACCEPT_ROWS, ids=[r.id for r in ACCEPT_ROWS])
def test_accepted(row):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        out = row.call(numjax, njnp)
    assert np.shape(out) == row.shape


def test_table_is_wide():
    # One row per public function and mistake: the table must not quietly shrink.
    assert len(ROWS) >= 120
    assert len({r.id for r in ROWS + WARN_ROWS + ACCEPT_ROWS}) == len(ROWS) + len(WARN_ROWS) + len(ACCEPT_ROWS)


def test_numba_typing_errors_are_recognised():
    # The guard itself: a typing error's text (here, one raised from) fails it.
    err = ValueError("bad")
    err.__cause__ = TypeError("Failed in nopython mode pipeline (step: nopython frontend)")
    with pytest.raises(AssertionError, match="Numba"):
        assert_not_numba_error(err)
