"""checkify's automatic checks: rules of ``error_checks`` that add failures of their own.

``nan_checks``: a floating-point primitive that can make a NaN made one (any NaN in its
output counts, as in JAX, even one that came in). ``div_checks``: ``div`` by an operand with
a zero. ``index_checks``: ``gather``/``dynamic_slice``/``dynamic_update_slice``/``scatter*``
with a start index out of bounds (these primitives clamp or drop such indices; the check
reports the first offending index, its axis and the axis size).
Each rule binds its primitive unchanged, then updates the error with ``assert_func``.
"""
import sys

import numpy as np

from .. import core
from ..array import Array
from .checkify_errors import DivisionByZeroError, NaNError, OOBError, assert_func
from .checkify_interpreter import automatic_checks_of, error_checks


def _jnp():
    from .. import numpy as jnp
    return jnp


# ---------------------------------------------------------------- NaN

def _any_nan(x):
    jnp = _jnp()
    if np.dtype(core.get_aval(x).dtype).kind not in "fc":
        return Array(np.zeros((), np.bool_), False)
    return jnp.any(jnp.isnan(x))


def _check_nans(prim, error, enabled_errors, out):
    if NaNError not in enabled_errors:
        return error
    jnp = _jnp()
    failed = jnp.any(jnp.stack([_any_nan(x) for x in out])) if prim.multiple_results else _any_nan(out)
    return assert_func(error, failed, NaNError(None, prim.name))


def _nan_rule(prim):
    def rule(error, enabled_errors, *args, **params):
        out = prim.bind(*args, **params)
        return _check_nans(prim, error, enabled_errors, out), out
    return rule


def _div_rule(prim):
    def rule(error, enabled_errors, x, y):
        jnp = _jnp()
        if DivisionByZeroError in enabled_errors:
            error = assert_func(error, jnp.any(jnp.equal(y, 0)), DivisionByZeroError(None))
        return _nan_rule(prim)(error, enabled_errors, x, y)
    return rule


# The primitives JAX's checkify NaN-checks, by name (those numjax has).
NAN_PRIMITIVE_NAMES = frozenset("""
    acos acosh add asin asinh atan2 atan atanh bessel_i0e bessel_i1e cbrt conv_general_dilated cos
    cosh cumlogsumexp cummax cummin cumprod cumsum digamma dot_general erf_inv erf erfc exp expm1
    fft igamma_grad_a igamma igammac integer_pow lgamma linear_solve log1p log logistic mul pad pow
    psum reduce reduce_prod reduce_sum reduce_window reduce_window_sum regularized_incomplete_beta
    rem rng_uniform rsqrt sin sinh sqrt sub tan tanh""".split())


# ---------------------------------------------------------------- out-of-bounds indices

def _oob_payload(oob_mask, indices, dims_map, operand_shape):
    """int32[3]: the first out-of-bounds index, the operand axis it indexes, that axis' size."""
    jnp = _jnp()
    flat = jnp.argmin(jnp.ravel(jnp.logical_not(oob_mask)))
    position = flat % jnp.shape(indices)[-1]          # which entry of the index vector
    axis = jnp.asarray(np.asarray(dims_map, np.int32))[position]
    size = jnp.asarray(np.asarray(operand_shape, np.int32))[axis]
    index = jnp.ravel(indices)[flat].astype(np.int32)
    return jnp.stack([index, axis, size]).astype(np.int32)


def _assert_in_bounds(error, oob_mask, indices, dims_map, operand_shape, prim_name):
    jnp = _jnp()
    payload = _oob_payload(oob_mask, indices, dims_map, operand_shape)
    return assert_func(error, jnp.any(oob_mask), OOBError(None, prim_name, operand_shape, payload))


def _starts_vector(starts):
    jnp = _jnp()
    return jnp.stack([jnp.asarray(s) for s in starts])


def _dynamic_slice_rule(prim):
    def rule(error, enabled_errors, operand, *starts, slice_sizes):
        out = prim.bind(operand, *starts, slice_sizes=slice_sizes)
        shape = core.get_aval(operand).shape
        if OOBError not in enabled_errors or not starts:
            return error, out
        s = _starts_vector(starts)
        limit = np.asarray(shape, np.int64) - np.asarray(slice_sizes, np.int64)
        mask = (s < 0) | (s > limit.astype(s.dtype))
        return _assert_in_bounds(error, mask, s, range(len(shape)), shape, "dynamic_slice"), out
    return rule


def _dynamic_update_slice_rule(prim):
    def rule(error, enabled_errors, operand, update, *starts):
        out = prim.bind(operand, update, *starts)
        shape = core.get_aval(operand).shape
        if OOBError not in enabled_errors or not starts:
            return error, out
        s = _starts_vector(starts)
        limit = np.asarray(shape, np.int64) - np.asarray(core.get_aval(update).shape, np.int64)
        mask = (s < 0) | (s > limit.astype(s.dtype))
        return _assert_in_bounds(error, mask, s, range(len(shape)), shape, "dynamic_update_slice"), out
    return rule


def _gather_rule(prim):
    def rule(error, enabled_errors, operand, indices, *, dimension_numbers, slice_sizes, **params):
        out = prim.bind(operand, indices, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes,
                        **params)
        shape, idx_shape = core.get_aval(operand).shape, core.get_aval(indices).shape
        smap = tuple(dimension_numbers.start_index_map)
        if OOBError not in enabled_errors or not smap or 0 in idx_shape:
            return error, out
        upper = np.asarray([shape[d] - slice_sizes[d] for d in smap], np.int64)
        mask = (indices < 0) | (indices > upper.astype(core.get_aval(indices).dtype))
        return _assert_in_bounds(error, mask, indices, smap, shape, "gather"), out
    return rule


def _scatter_rule(prim):
    def rule(error, enabled_errors, operand, indices, updates, *, dimension_numbers, **params):
        out = prim.bind(operand, indices, updates, dimension_numbers=dimension_numbers, **params)
        shape, idx_shape = core.get_aval(operand).shape, core.get_aval(indices).shape
        dn = dimension_numbers
        smap = tuple(dn.scatter_dims_to_operand_dims)
        if OOBError in enabled_errors and smap and 0 not in idx_shape:
            # The window each index starts: size 1 on inserted axes, else the update's extent.
            window, pos = [], 0
            upd_shape = core.get_aval(updates).shape
            for d in range(len(shape)):
                if d in dn.inserted_window_dims or d in tuple(getattr(dn, "operand_batching_dims", ())):
                    window.append(1)
                else:
                    window.append(upd_shape[dn.update_window_dims[pos]])
                    pos += 1
            idx_dtype = core.get_aval(indices).dtype
            upper = np.minimum(np.asarray([shape[d] - window[d] for d in smap], np.int64),
                               np.iinfo(idx_dtype).max)
            mask = (indices < 0) | (indices > upper.astype(idx_dtype))
            error = _assert_in_bounds(error, mask, indices, smap, shape, prim.name)
        return _check_nans(prim, error, enabled_errors, out), out
    return rule


# ---------------------------------------------------------------- registration

def _numjax_primitives():
    """numjax's primitives by name, from the lax family modules that define them."""
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("numjax.lax."):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, core.Primitive):
                found.setdefault(value.name, value)
    return found


def _register():
    from .. import lax  # noqa: F401  (loads every primitive family)
    prims = _numjax_primitives()
    for name in NAN_PRIMITIVE_NAMES & set(prims):
        error_checks[prims[name]] = _nan_rule(prims[name])
        automatic_checks_of[prims[name]] = frozenset({NaNError})
    table = {"div": (_div_rule, {DivisionByZeroError, NaNError}),
             "dynamic_slice": (_dynamic_slice_rule, {OOBError}),
             "dynamic_update_slice": (_dynamic_update_slice_rule, {OOBError}),
             "gather": (_gather_rule, {OOBError})}
    for name in ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"):
        table[name] = (_scatter_rule, {OOBError, NaNError})
    for name, (make_rule, kinds) in table.items():
        if name in prims:
            error_checks[prims[name]] = make_rule(prims[name])
            automatic_checks_of[prims[name]] = frozenset(kinds)


_register()
