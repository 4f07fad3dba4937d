"""``jax.example_libraries.stax``: a tiny neural-network library of (init_fun, apply_fun) pairs.

A *layer* is a pair of functions:

* ``init_fun(rng, input_shape) -> (output_shape, params)`` builds the parameters for inputs of
  ``input_shape`` (``-1`` may stand for an unknown batch size) from the PRNG key ``rng``;
* ``apply_fun(params, inputs, **kwargs) -> outputs`` runs the layer. ``rng=`` is the only keyword
  a layer looks at (Dropout needs it); combinators pass every keyword on to their children.

Layer *constructors* (``Dense(512)``, ``Conv(32, (3, 3))``) return a layer; layers without
options (``Relu``, ``Flatten``, ``Identity``, ``FanInSum``) are layers already. Combinators
(``serial``, ``parallel``, ``shape_dependent``) build layers out of layers.

Parameters are drawn with the same key splits and initializers as JAX's stax, so the same key
gives the same parameters on numjax and on JAX.
"""
import functools
import math

import numjax.numpy as jnp
from numjax import lax, random
from numjax.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                       softplus, standardize)
from numjax.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "parallel", "serial",
    "shape_dependent",
    # The activations and initializers stax re-exports under its own (older) names.
    "elu", "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax",
    "normal", "ones", "randn", "relu", "selu", "sigmoid", "softmax", "softplus", "standardize",
    "zeros",
]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


# ---------------------------------------------------------------- layers with parameters

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: ``inputs @ W + b`` with ``W`` of shape (in_dim, out_dim)."""
    def init_fun(rng, input_shape):
        w_key, b_key = random.split(rng)
        W = W_init(w_key, (input_shape[-1], out_dim))
        b = b_init(b_key, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape):
    """The kernel's shape in ``rhs_spec`` order: 'O' is out_chan, 'I' the input's channel
    count, and the spatial letters take ``filter_shape`` in order."""
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return [out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec]


def _conv_layer(shape_rule, apply_conv, dimension_numbers, out_chan, filter_shape, strides,
                padding, W_init, b_init):
    """The part GeneralConv and GeneralConvTranspose share: kernel and bias shapes, the
    default initializer (glorot over the kernel's I and O axes), the key split."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    if W_init is None:
        W_init = glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape)
        output_shape = shape_rule(input_shape, kernel_shape, strides, padding, dimension_numbers)
        # The bias broadcasts against the output: out_chan on its channel axis, 1 elsewhere.
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        w_key, b_key = random.split(rng)
        return output_shape, (W_init(w_key, kernel_shape), b_init(b_key, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return apply_conv(inputs, W, strides, padding) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer; ``dimension_numbers`` is a (lhs, rhs, out) triple of layout strings
    such as ``('NHWC', 'HWIO', 'NHWC')``."""
    no_dilation = (1,) * len(filter_shape)

    def convolve(inputs, W, strides, padding):
        return lax.conv_general_dilated(inputs, W, strides, padding, no_dilation, no_dilation,
                                        dimension_numbers=dimension_numbers)
    return _conv_layer(lax.conv_general_shape_tuple, convolve, dimension_numbers, out_chan,
                       filter_shape, strides, padding, W_init, b_init)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed-convolution layer (``lax.conv_transpose``), laid out as in GeneralConv."""
    def convolve(inputs, W, strides, padding):
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers)
    return _conv_layer(lax.conv_transpose_shape_tuple, convolve, dimension_numbers, out_chan,
                       filter_shape, strides, padding, W_init, b_init)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Standardize over ``axis`` (statistics of the batch at hand; no running averages), then
    scale by ``gamma`` and shift by ``beta``, both shaped like the axes that are kept. A
    disabled ``center`` or ``scale`` leaves ``()`` in its place in the parameters."""
    axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        kept_shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        beta_key, gamma_key = random.split(rng)
        beta = beta_init(beta_key, kept_shape) if center else ()
        gamma = gamma_init(gamma_key, kept_shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        # Index that re-inserts the reduced axes so beta and gamma broadcast against x.
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z
    return init_fun, apply_fun


# ---------------------------------------------------------------- parameter-free layers

def elementwise(fun, **fun_kwargs):
    """A layer applying ``fun(inputs, **fun_kwargs)``; it has no parameters (``()``)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _with_unit_axes(spatial, non_spatial_axes):
    """Insert 1 at each non-spatial axis (batch, channel) of a spatial window or stride tuple."""
    full = tuple(spatial)
    for i in sorted(non_spatial_axes):
        full = full[:i] + (1,) + full[i:]
    return full


def _non_spatial_axes(spec, ndim):
    # Without a spec the layout is batch first, channels last (NHWC-like).
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _pooling_layer(reducer, init_value, average=False):
    """Make a pooling-layer constructor reducing windows with ``reducer`` from ``init_value``;
    ``average`` divides each output by the number of input elements its window covered
    (padding excluded)."""
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        spatial_window = tuple(window_shape)
        spatial_strides = tuple(strides or (1,) * len(spatial_window))
        non_spatial = _non_spatial_axes(spec, len(spatial_window) + 2)
        full_window = _with_unit_axes(spatial_window, non_spatial)
        full_strides = _with_unit_axes(spatial_strides, non_spatial)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
            unit = (1,) * len(full_window)
            return lax.reduce_window_shape_tuple(input_shape, full_window, full_strides, pads,
                                                 unit, unit), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_value, reducer, full_window, full_strides,
                                    padding)
            if not average:
                return out
            axes = _non_spatial_axes(spec, inputs.ndim)
            spatial_shape = tuple(d for i, d in enumerate(inputs.shape) if i not in axes)
            counts = lax.reduce_window(jnp.ones(spatial_shape, inputs.dtype), 0., lax.add,
                                       spatial_window, spatial_strides, padding)
            for i in sorted(axes):
                counts = jnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)
AvgPool = _pooling_layer(lax.add, 0., average=True)


def _flatten_layer():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


# Flatten keeps the leading (batch) axis and merges the rest.
Flatten = _flatten_layer()
Identity = elementwise(lambda x: x)


def FanOut(num):
    """A layer that hands its input on ``num`` times, as a list."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum_layer():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


# FanInSum adds up a sequence of same-shaped inputs (the outputs of a ``parallel``).
FanInSum = _fan_in_sum_layer()


def FanInConcat(axis=-1):
    """A layer concatenating a sequence of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        first = tuple(input_shape[0])
        ax = axis % len(first)
        joined = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (joined,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout in which ``rate`` is the probability of *keeping* an element (as in JAX's stax);
    kept elements are divided by ``rate``. ``mode`` other than 'train' passes inputs through.
    ``apply_fun`` must be given ``rng=`` in either mode."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument: "
                "call it as `apply_fun(params, inputs, rng=key)` with a key from "
                "`jax.random.key`.")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# ---------------------------------------------------------------- combinators

def _child_keys(rng, count):
    """One key per child layer for apply_fun, or None for each when no ``rng`` was given."""
    return random.split(rng, count) if rng is not None else (None,) * count


def serial(*layers):
    """Compose layers one after the other. ``init_fun`` splits its key once per layer (the
    layer gets the second half); ``apply_fun`` splits ``rng`` into one key per layer."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for layer_init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, layer_params = layer_init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        keys = _child_keys(kwargs.pop("rng", None), len(layers))
        for layer_apply, layer_params, key in zip(apply_funs, params, keys):
            inputs = layer_apply(layer_params, inputs, rng=key, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Apply the i-th layer to the i-th of a sequence of inputs (often between FanOut and
    FanInSum/FanInConcat). Shapes and parameters are tuples, outputs a list, as in JAX."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        keys = random.split(rng, len(layers))
        results = [layer_init(key, shape)
                   for layer_init, key, shape in zip(init_funs, keys, input_shape)]
        return tuple(shape for shape, _ in results), tuple(params for _, params in results)

    def apply_fun(params, inputs, **kwargs):
        keys = _child_keys(kwargs.pop("rng", None), len(layers))
        return [layer_apply(p, x, rng=key, **kwargs)
                for layer_apply, p, x, key in zip(apply_funs, params, inputs, keys)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by ``make_layer(input_shape)`` once the input's shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
