"""numjax.flatten_util: ravel a pytree of arrays into one 1-D array, as ``jax.flatten_util``."""
import functools

import numpy as np

from . import dtypes, lax
from .numpy._util import asarray_leaf
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """``(flat, unravel)``: the leaves' values concatenated into a 1-D array of their promoted
    dtype, and the function that maps such an array back to a pytree of the original
    structure, shapes and dtypes. No leaves give an empty float32 array."""
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef, unravel_list, flat):
    return tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(leaves):
    if not leaves:
        return asarray_leaf(np.zeros((0,), np.float32)), lambda _: []
    leaves = [asarray_leaf(x) for x in leaves]
    from_dtypes = tuple(dtypes.dtype_and_weak(x)[0] for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(np.shape(x) for x in leaves)
    if all(dt == to_dtype for dt in from_dtypes):
        # Same dtype: no conversion, so a Python-scalar-only tree keeps its weak type.
        raveled = lax.concatenate([lax.reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return raveled, functools.partial(_unravel_single_dtype, sizes, shapes)
    raveled = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (n,))
                               for x, n in zip(leaves, sizes)], 0)
    return raveled, functools.partial(_unravel_list, sizes, shapes, from_dtypes, to_dtype)


def _split(flat, sizes):
    offsets = np.cumsum((0,) + sizes)
    return [lax.slice(flat, (int(a),), (int(b),)) for a, b in zip(offsets[:-1], offsets[1:])]


def _unravel_single_dtype(sizes, shapes, flat):
    return [lax.reshape(chunk, shape) for chunk, shape in zip(_split(flat, sizes), shapes)]


def _unravel_list(sizes, shapes, from_dtypes, to_dtype, flat):
    flat_dtype = dtypes.dtype_and_weak(flat)[0]
    if flat_dtype != to_dtype:
        raise TypeError(f"unravel function given array of dtype {flat_dtype}, but expected dtype {to_dtype}")
    return [lax._convert_element_type(lax.reshape(chunk, shape), dtype, warn_on_complex_to_real_cast=False)
            for chunk, shape, dtype in zip(_split(flat, sizes), shapes, from_dtypes)]
