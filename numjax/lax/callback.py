"""Host callbacks as primitives: pure_callback, io_callback, debug_callback and debug_print.

Each primitive holds the Python function to call as a parameter.  Eager evaluation calls it
with Arrays; inside a jitted program the driver calls the very same ``call_host`` /
``call_debug`` at that point of the program (``lowering/driver_nodes.py``), so the compiled
program calls back into Python instead of falling back to eager evaluation.

io_callback, debug_callback and debug_print are run for their side effect: they are listed in
``partial_eval.effectful_primitives`` so dead-code elimination keeps them, and the driver runs
them in program order (numjax's driver is sequential, so every callback is "ordered").

A Python callback receives Arrays.  A Numba ``@njit`` function (a ``CPUDispatcher``) cannot
take Arrays: it receives read-only numpy arrays, as JAX hands callbacks read-only buffers, and
compiled programs call its compiled code directly (``lowering/host_calls.py``).

Differentiation: pure_callback and io_callback refuse (JAX's errors: wrap them in custom_jvp);
debug_callback and debug_print see the primal values only.  Under vmap pure_callback follows its
``vmap_method``, io_callback loops, and the debug primitives run once per batch element.
"""
import string
import sys
import traceback

import numpy as np

from .. import core, dtypes, tree_util
from ..array import Array
from ..errors import JaxRuntimeError
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..jaxpr import param_printers
from ._base import make_primitive


def _is_numba_cpu_function(fn):
    # Read from sys.modules, not imported: if Numba was never imported, fn is no njit function.
    registry = sys.modules.get("numba.core.registry")
    return registry is not None and isinstance(fn, registry.CPUDispatcher)


class FlatCallback:
    """The user's function seen through flat argument and result lists.  Equal for the same
    function and argument structure, so retracing gives equal jaxprs.  ``takes_numpy``: the
    function is Numba-compiled and gets read-only numpy arrays instead of Arrays."""
    __slots__ = ("callback_func", "in_tree", "takes_numpy")

    def __init__(self, callback_func, in_tree):
        self.callback_func, self.in_tree = callback_func, in_tree
        self.takes_numpy = _is_numba_cpu_function(callback_func)

    def __call__(self, *flat_args):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return tree_util.leaves_traced(self.callback_func(*args, **kwargs))

    def __eq__(self, other):
        return (type(other) is FlatCallback and self.callback_func is other.callback_func
                and self.in_tree == other.in_tree)

    def __hash__(self):
        return hash((id(self.callback_func), self.in_tree))

    def __repr__(self):
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree!r})"


def _host_array(x):
    """What a callback receives: an Array holding the value (drivers pass numpy scalars)."""
    if type(x) is Array:
        return x
    return Array(np.asarray(getattr(x, "_value", x)))


def readonly_numpy(x, dtype=None):
    """What a Numba callback receives: a read-only numpy array holding the value (rank-0
    values arrive as 0-d arrays), C-contiguous and aligned, so one compiled specialization
    serves every call of an equation."""
    a = np.asarray(getattr(x, "_value", x), dtype)
    if not (a.flags.c_contiguous and a.flags.aligned):
        a = np.array(a, order="C")
    a = a.view()              # the flag goes on a view: the program's own buffer stays writable
    a.flags.writeable = False
    return a


def callback_failed(err):
    # As JAX reports a failing host callback: the runtime's error, the callback's traceback inside.
    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return JaxRuntimeError(f"INTERNAL: CpuCallback error calling callback: {text}")


def call_host(callback, result_avals, args):
    """Calls ``callback`` (a FlatCallback) on ``args`` and checks what it returns against
    ``result_avals`` (count, shape, dtype after 64-bit narrowing), as JAX's runtime does.
    Returns numpy arrays."""
    convert = readonly_numpy if getattr(callback, "takes_numpy", False) else _host_array
    try:
        return checked_results(callback(*[convert(a) for a in args]), result_avals)
    except Exception as err:
        raise callback_failed(err) from err


def checked_results(outs, result_avals):
    """``outs`` (a callback's flat results) as numpy arrays, after JAX's runtime checks."""
    if len(outs) != len(result_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_avals)}, Actual: {len(outs)}")
    vals = []
    for i, (out, aval) in enumerate(zip(outs, result_avals)):
        val = np.asarray(getattr(out, "_value", out))
        if val.dtype != aval.dtype:     # equal dtypes are canonical already
            val = val.astype(dtypes.canonicalize_dtype(val.dtype), copy=False)
        if val.shape != aval.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {aval.shape}, Actual: {val.shape}")
        if val.dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {aval.dtype}, Actual: {val.dtype}")
        vals.append(val)
    return vals


def _result_avals(result_shape_dtypes):
    def aval(leaf):
        dt = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        return core.ShapedArray(tuple(leaf.shape), dt)
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    return tuple(aval(x) for x in leaves), tree


def _host_impl(*args, callback, result_avals, **_):
    return [Array(v) for v in call_host(callback, result_avals, args)]


def _host_abstract(*avals, result_avals, **_):
    return list(result_avals)


def _sequential(prim, vals, dims, params):
    """The callback once per batch element, in a loop (lax.map over the batched operands)."""
    from .control_flow import map as lax_map
    batched = [d is not batching.not_mapped for d in dims]
    moved = [batching.moveaxis(v, d, 0) for v, d in zip(vals, dims) if d is not batching.not_mapped]
    fixed = [v for v, b in zip(vals, batched) if not b]

    def one(xs):
        it_b, it_f = iter(xs), iter(fixed)
        return prim.bind(*[next(it_b) if b else next(it_f) for b in batched], **params)
    outs = lax_map(one, moved)
    return list(outs), [0] * len(outs)


# ---------------------------------------------------------------- pure_callback

pure_callback_p = make_primitive("pure_callback", _host_impl, _host_abstract, multiple_results=True)

VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None]


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. "
                     "Please use `jax.custom_jvp` to use callbacks while taking gradients.")


def _pure_callback_transpose(cts, *args, **params):
    raise ValueError("Pure callbacks do not support transpose. "
                     "Please use `jax.custom_vjp` to use callbacks while taking gradients.")


def _pure_callback_batch(vals, dims, *, callback, result_avals, sharding, vmap_method):
    from .shape import broadcast
    params = dict(callback=callback, result_avals=result_avals, sharding=sharding, vmap_method=vmap_method)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(pure_callback_p, vals, dims, params)
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    size = batching.axis_size_of(vals, dims)
    # The callback sees the batch axis first; unbatched operands stay as they are
    # (legacy_vectorized), gain an axis of size 1 (expand_dims) or are tiled (broadcast_all).
    new = []
    for v, d in zip(vals, dims):
        if d is not batching.not_mapped:
            new.append(batching.moveaxis(v, d, 0))
        elif vmap_method == "legacy_vectorized":
            new.append(v)
        else:
            new.append(broadcast(v, (size if vmap_method == "broadcast_all" else 1,)))
    params["result_avals"] = tuple(a.update(shape=(size,) + a.shape) for a in result_avals)
    outs = pure_callback_p.bind(*new, **params)
    return outs, [0] * len(outs)


ad.jvp_rules[pure_callback_p] = _pure_callback_jvp
ad.transpose_rules[pure_callback_p] = _pure_callback_transpose
batching.batch_rules[pure_callback_p] = _pure_callback_batch


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Calls the pure Python function ``callback`` on ``args``: eagerly, or at this point of a
    compiled program.  Its results must match ``result_shape_dtypes`` (a pytree of objects with
    ``shape`` and ``dtype``)."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_util.flatten_traced((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                                result_avals=result_avals, sharding=sharding, vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------- io_callback

io_callback_p = make_primitive("io_callback", _host_impl, _host_abstract, multiple_results=True)


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(cts, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


def _io_callback_batch(vals, dims, *, callback, result_avals, sharding, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, vals, dims, dict(callback=callback, result_avals=result_avals,
                                                       sharding=sharding, ordered=False))


ad.jvp_rules[io_callback_p] = _io_callback_jvp
ad.transpose_rules[io_callback_p] = _io_callback_transpose
batching.batch_rules[io_callback_p] = _io_callback_batch


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Calls the impure Python function ``callback``; never dropped as dead code, and with
    ``ordered=True`` run in program order relative to other ordered effects."""
    flat_args, in_tree = tree_util.flatten_traced((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                              result_avals=result_avals, sharding=sharding, ordered=ordered)
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------- debug_callback, debug_print

class DebugEffect:
    """The ``effect`` parameter: prints as JAX's (``Debug`` / ``OrderedDebug``)."""
    __slots__ = ("ordered",)

    def __init__(self, ordered):
        self.ordered = ordered

    def __eq__(self, other):
        return type(other) is DebugEffect and other.ordered == self.ordered

    def __hash__(self):
        return hash(("debug", self.ordered))

    def __repr__(self):
        return "OrderedDebug" if self.ordered else "Debug"


def call_debug(callback, args):
    """Runs a debug callback (returns nothing)."""
    callback(*[_host_array(a) for a in args])
    return []


def _debug_callback_impl(*args, callback, effect, partitioned):
    return call_debug(callback, args)


def _no_outputs(*avals, **_):
    return []


debug_callback_p = make_primitive("debug_callback", _debug_callback_impl, _no_outputs,
                                  multiple_results=True)


def _split_static(args, kwargs):
    """Flat leaves of (args, kwargs): those with an abstract value travel as operands; the
    rest (strings, None, objects) are kept aside and merged back when the callback runs."""
    leaves, in_tree = tree_util.flatten_traced((args, kwargs))
    static, dynamic = {}, []
    for i, leaf in enumerate(leaves):
        try:
            core.get_aval(leaf)
            dynamic.append(leaf)
        except TypeError:
            static[i] = leaf
    return in_tree, dynamic, static


def _merged_caller(fn, in_tree, static):
    def call(*dynamic):
        it = iter(dynamic)
        n = len(static) + len(dynamic)
        leaves = [static[i] if i in static else next(it) for i in range(n)]
        args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
        fn(*args, **kwargs)
        return ()
    return call


def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` for its side effect, with array values, eagerly or
    at this point of a compiled program.  ``debug_callback(ordered=...)`` (no callback)
    returns the function taking the callback, JAX's two-call form."""
    def staged(fn, *c_args, **c_kwargs):
        if not callable(fn):
            raise TypeError("first argument to jax.debug.callback must be callable, "
                            f"but got an object of type {type(fn)}")
        in_tree, dynamic, static = _split_static(c_args, c_kwargs)
        debug_callback_p.bind(*dynamic, callback=_merged_caller(fn, in_tree, static),
                              effect=DebugEffect(ordered), partitioned=partitioned)
    return _one_or_two_calls("debug_callback", staged, callback, args, kwargs)


def _one_or_two_calls(name, staged, first, args, kwargs):
    """JAX's debug functions take their function (or format) and arguments in one call, or
    the function first and the arguments in a second call."""
    if first is not None:
        staged(first, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"{name} received unexpected arguments in the two-call form:"
                        f" args={args!r} kwargs={kwargs!r}")
    return staged


def _print_message(fmt, np_printoptions, has_placeholders, args, kwargs):
    if has_placeholders:
        with np.printoptions(**dict(np_printoptions)):
            return fmt.format(*args, **kwargs)
    return " ".join([fmt] + [str(a) for a in args])


def _debug_print_caller(fmt, in_tree, static_args, np_printoptions, has_placeholders):
    def emit(*args, **kwargs):
        sys.stdout.write(_print_message(fmt, np_printoptions, has_placeholders, args, kwargs) + "\n")
    return _merged_caller(emit, in_tree, dict(static_args))


def _debug_print_impl(*args, fmt, ordered, partitioned, in_tree, static_args, np_printoptions,
                      has_placeholders, logging_record):
    return call_debug(_debug_print_caller(fmt, in_tree, static_args, np_printoptions, has_placeholders),
                      args)


debug_print_p = make_primitive("debug_print", _debug_print_impl, _no_outputs, multiple_results=True)


class _FormatChecker(string.Formatter):
    """Checks that a format string uses every argument it is given (formats nothing)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused_kw:
            raise ValueError(f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. "
                             "You may be passing an f-string (i.e, `f\"{x}\"`) into "
                             "`jax.debug.print` and instead should pass in a regular string.")


def debug_print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False, **kwargs):
    """Prints ``fmt.format(*args, **kwargs)`` with the values the arrays have when the program
    runs (numpy's print options of the moment of the call apply)."""
    def staged(fmt, *c_args, **c_kwargs):
        if not skip_format_check:
            _FormatChecker().format(fmt, *c_args, **c_kwargs)
        has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
        in_tree, dynamic, static = _split_static(c_args, c_kwargs)
        debug_print_p.bind(*dynamic, fmt=fmt, ordered=ordered, partitioned=partitioned, in_tree=in_tree,
                           static_args=tuple(static.items()),
                           np_printoptions=tuple(np.get_printoptions().items()),
                           has_placeholders=has_placeholders, logging_record=None)
    return _one_or_two_calls("debug_print", staged, fmt, args, kwargs)


def _debug_jvp(prim):
    def rule(primals, tangents, **params):
        prim.bind(*primals, **params)
        return [], []
    return rule


def _debug_transpose(cts, *args, **params):
    return [None] * len(args)


def _debug_batch(prim):
    """Unrolled: the callback runs once per batch element, with that element."""
    def rule(vals, dims, **params):
        from .slicing_in_dim import index_in_dim
        size = batching.axis_size_of(vals, dims)
        for i in range(size):
            prim.bind(*[v if d is batching.not_mapped else index_in_dim(v, i, d, keepdims=False)
                        for v, d in zip(vals, dims)], **params)
        return [], []
    return rule


for _prim in (debug_callback_p, debug_print_p):
    ad.jvp_rules[_prim] = _debug_jvp(_prim)
    ad.transpose_rules[_prim] = _debug_transpose
    batching.batch_rules[_prim] = _debug_batch(_prim)

pe.effectful_primitives.update([io_callback_p, debug_callback_p, debug_print_p])


def host_function(primitive, params):
    """What a compiled program calls for an equation of a callback primitive: a function of
    the operand values (numpy) returning the results (numpy arrays, none for the debug ones)."""
    if primitive is debug_callback_p:
        return lambda *args: call_debug(params["callback"], args)
    if primitive is debug_print_p:
        caller = _debug_print_caller(params["fmt"], params["in_tree"], params["static_args"],
                                     params["np_printoptions"], params["has_placeholders"])
        return lambda *args: call_debug(caller, args)
    return lambda *args: call_host(params["callback"], params["result_avals"], args)


CALLBACK_PRIMITIVES = (pure_callback_p, io_callback_p, debug_callback_p, debug_print_p)


class _ReprParam:
    """A parameter printed as Python prints it (strings quoted inside tuples, as JAX shows
    debug_print's print options)."""

    def __init__(self, value):
        self.value = value

    def __str__(self):
        return repr(self.value)


param_printers[debug_print_p] = lambda params: {
    k: _ReprParam(params[k]) if k in ("np_printoptions", "static_args") else params[k]
    for k in sorted(params)}
