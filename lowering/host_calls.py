"""What a compiled program calls for a host callback equation (the driver rule is in
``driver_nodes.py``).

A Python callback goes through ``lax/callback.py``'s ``host_function``: the flat operands
become Arrays, the user's pytrees are rebuilt, the results are checked.  A ``pure_callback`` or
``io_callback`` given a Numba ``@njit`` function taking its operands as positional arrays is
called more directly (``NjitCall``): the operands go over as read-only numpy arrays of fixed
types, so the function's compiled specialization is looked up once, on the first call, and
every later call enters its native wrapper straight away, with no Numba type dispatch, no
pytree handling and no Array wrapping.  The results are checked as for any callback.
"""
import numpy as np

from numjax import tree_util
from numjax.lax import callback as host


class NjitCall:
    """Calls the Numba function ``dispatcher`` on an equation's operands (of dtypes
    ``in_dtypes``); returns its results checked against ``result_avals``."""

    def __init__(self, dispatcher, in_dtypes, result_avals):
        self.dispatcher, self.in_dtypes, self.result_avals = dispatcher, in_dtypes, result_avals
        self.entry = None
        self.convert = None   # the results' checks, when the compiled return type decides them

    def __call__(self, *args):
        try:
            arrays = [host.readonly_numpy(a, dt) for a, dt in zip(args, self.in_dtypes)]
            out = (self.entry or self._specialize(arrays))(*arrays)
            if self.convert is not None:
                return self.convert(out)
            outs = list(out) if type(out) is tuple else [out]
            if any(type(o) is tuple for o in outs):     # nested tuples: the result pytree's leaves
                outs = tree_util.tree_leaves(out)
            return host.checked_results(outs, self.result_avals)
        except Exception as err:
            raise host.callback_failed(err) from err

    def _specialize(self, arrays):
        """The compiled wrapper for these operand types (they are the same on every call of
        the equation: readonly_numpy fixes dtype, rank, layout and flags)."""
        import numba
        sig = tuple(numba.typeof(a) for a in arrays)
        try:
            self.dispatcher.compile(sig)
            compiled = self.dispatcher.overloads[sig]
        except Exception:
            # No specialization for these types (a fixed signature that does not take read-only
            # arrays, a typing error): the dispatcher itself reports why when called.
            self.entry = self.dispatcher
            return self.entry
        self.entry = compiled.entry_point
        self.convert = _static_checks(compiled.signature.return_type, self.result_avals)
        return self.entry

    def __repr__(self):
        return f"NjitCall({getattr(self.dispatcher, '__name__', self.dispatcher)})"


def _static_checks(return_type, result_avals):
    """A function turning the compiled function's return value into the checked results when
    its Numba type already settles count and dtypes (only shapes are left to check), else
    None (``checked_results`` then checks, and reports, as for a Python callback)."""
    from numba.core import types
    from numba.np.numpy_support import as_dtype
    from numjax import dtypes
    # The dtypes Numba's Python scalar results read as (this module imports no Numba until a
    # Numba callback is in use).
    boxed = {types.Float: np.dtype(np.float64), types.Integer: np.dtype(np.int64),
             types.Boolean: np.dtype(np.bool_)}
    many = isinstance(return_type, types.BaseTuple)
    parts = list(return_type.types) if many else [return_type]
    if len(parts) != len(result_avals):
        return None
    for t, aval in zip(parts, result_avals):
        if isinstance(t, types.Array):
            if not (t.ndim == len(aval.shape) and as_dtype(t.dtype) == aval.dtype):
                return None
        elif aval.shape == () and type(t) in boxed and not (
                isinstance(t, types.Integer) and not t.signed):
            # Numba returns Python scalars: they read as float64/int64/bool, then are narrowed.
            if dtypes.canonicalize_dtype(boxed[type(t)]) != aval.dtype:
                return None
        else:
            return None
    makers = [aval.dtype.type if aval.shape == () else None for aval in result_avals]

    def convert(out):
        outs = out if many else (out,)
        vals = []
        for i, (o, make, aval) in enumerate(zip(outs, makers, result_avals)):
            if make is not None:
                vals.append(make(o))
            elif o.shape != aval.shape:
                raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                   f"Expected: {aval.shape}, Actual: {o.shape}")
            else:
                vals.append(o)
        return vals
    return convert


def _takes_flat_positional(callback, n_args):
    """The callback was called as ``f(*arrays)``: no keyword arguments, no pytree operands."""
    return callback.in_tree == tree_util.tree_structure(((0,) * n_args, {}))


def host_function(eqn):
    """The function of the operand values (numpy) the program calls for callback ``eqn``."""
    callback = eqn.params.get("callback")
    if (eqn.primitive in (host.pure_callback_p, host.io_callback_p)
            and getattr(callback, "takes_numpy", False)
            and _takes_flat_positional(callback, len(eqn.invars))):
        return NjitCall(callback.callback_func, [np.dtype(v.aval.dtype) for v in eqn.invars],
                        eqn.params["result_avals"])
    return host.host_function(eqn.primitive, eqn.params)
