"""The public transformations. This layer only flattens pytrees, checks arguments and
calls interpreters (``interpreters/``) and dispatch (``dispatch.py``)."""
import contextlib
import functools
import inspect
import weakref

import numpy as np

from . import core, dtypes, tree_util
from .array import Array
from .config import config
from .dispatch import Stats, compiled_executable, describe_miss, jit_p, log_compile
from .api_util import flatten_fun_nokwargs
from .interpreters import partial_eval as pe
from .numpy._util import asarray_leaf


# ---------------------------------------------------------------- devices

class CpuDevice:
    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id):  # noqa: A002
        self.id = id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"


class SingleDeviceSharding:
    """Where an Array lives: numjax's arrays all live on the first CPU device."""

    memory_kind = "device"

    def __init__(self, device, memory_kind="device"):
        self.device, self.memory_kind = device, memory_kind

    @property
    def device_set(self):
        return {self.device}

    is_fully_replicated = is_fully_addressable = True

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and (self.device, self.memory_kind) == \
            (other.device, other.memory_kind)

    def __hash__(self):
        return hash((self.device.id, self.memory_kind))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device!r}, memory_kind={self.memory_kind})"


def _device_count_from_env():
    import os
    # Like XLA's --xla_force_host_platform_device_count: several CPU "devices" for pmap.
    return max(1, int(os.environ.get("NUMJAX_NUM_CPU_DEVICES", "1")))


_DEVICES = [CpuDevice(i) for i in range(_device_count_from_env())]


def devices(backend=None):
    return list(_DEVICES)


local_devices = devices


def device_count():
    return len(_DEVICES)


local_device_count = device_count


def default_backend():
    return "cpu"


def device_put(x, device=None):
    return tree_util.tree_map(_to_array, x)


def _to_array(x):
    if isinstance(x, (Array, core.Tracer)):
        return x
    return asarray_leaf(x)


def block_until_ready(x):
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


@contextlib.contextmanager
def disable_jit(disable=True):
    prev = config.jax_disable_jit
    config.jax_disable_jit = disable
    try:
        yield
    finally:
        config.jax_disable_jit = prev


# ---------------------------------------------------------------- argument handling

def _normalize_static(fun, static_argnums, static_argnames):
    nums = () if static_argnums is None else (
        (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums))
    names = () if static_argnames is None else (
        (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames))
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names, None
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # JAX infers the matching name for each static position and vice versa.
    nums = tuple(n if n >= 0 else len(positional) + n for n in nums)
    names = tuple(dict.fromkeys(names + tuple(positional[n] for n in nums if n < len(positional))))
    nums = tuple(dict.fromkeys(nums + tuple(positional.index(n) for n in names if n in positional)))
    return nums, names, positional


def _hashable_static(val):
    try:
        hash(val)
    except TypeError as err:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying to hash "
            f"an object of type {type(val)}, {val}. The error was:\nTypeError: {err}") from None
    return val


def _leaf_sig(x):
    t = type(x)
    if t is Array:
        v = x._value
        return (v.shape, v.dtype, x.weak_type)
    if t in (int, float, complex):
        return ((), dtypes.python_scalar_dtype(x), True)
    if t is bool:
        return ((), dtypes.bool_, False)
    if isinstance(x, core.Tracer):
        a = x.aval
        return (a.shape, a.dtype, a.weak_type)
    try:
        aval = core.get_aval(x)
    except TypeError:
        raise TypeError(f"Argument '{x!r}' of type {type(x)} is not a valid JAX type") from None
    return (aval.shape, aval.dtype, aval.weak_type)


def _leaf_value(x, sig):
    """numpy value for a jit input leaf, in its JAX dtype."""
    if type(x) is Array:
        return x._value
    return np.asarray(x._value if isinstance(x, Array) else x, dtype=sig[1])


# ---------------------------------------------------------------- jit

def _under_transformation(args, kwargs):
    if core._no_trace_active():
        return False
    leaves = tree_util.tree_leaves((args, kwargs))
    return not isinstance(core.find_top_trace(leaves), pe.DynamicJaxprTrace)


class _CacheEntry:
    __slots__ = ("closed", "out_tree", "executable", "out_avals", "single")

    def __init__(self, closed, out_tree):
        self.closed, self.out_tree = closed, out_tree
        self.executable = None
        self.out_avals = closed.out_avals
        self.single = out_tree.node is None   # the function returned one array


_trace_caches = weakref.WeakKeyDictionary()   # fun -> {key: _CacheEntry}
_strong_caches = {}                           # for callables that cannot be weakly referenced


def _cache_for(fun):
    try:
        return _trace_caches.setdefault(fun, {})
    except TypeError:
        return _strong_caches.setdefault(fun, {})


class Jitted:
    """What ``jit(f)`` returns: calls trace once per signature, compile once, then run."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, keep_unused, inline):
        functools.update_wrapper(self, fun, updated=())
        if not hasattr(self, "__name__"):   # functools.partial and other callables without a name
            self.__name__ = getattr(getattr(fun, "func", None), "__name__", type(fun).__name__)
        self._fun = fun
        self._static_nums, self._static_names, self._positional = _normalize_static(
            fun, static_argnums, static_argnames)
        self._cache = _cache_for(fun)
        self._fast = {}   # positional-Arrays-only calls: leaf signature -> entry
        self.stats = Stats()
        self._inline = inline

    def __repr__(self):
        return f"<PjitFunction of {self._fun!r}>"   # JAX's wording

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    # -- the call path
    def __call__(self, *args, **kwargs):
        if not kwargs and core._no_trace_active():
            # The common call: positional Arrays, no statics. Skips pytree flattening.
            try:
                vals = [a._value for a in args]
                sig = (tuple([(v.shape, v.dtype.char, v.flags.c_contiguous) for v in vals]),
                       tuple([a.weak_type for a in args]), config._epoch)
            except AttributeError:
                sig = None
            fast = self._fast.get(sig) if sig is not None else None
            if fast is not None and not config.jax_disable_jit:
                entry, native = fast
                self.stats.trace_hits += 1
                if native is not None:
                    outs = native(*vals)
                    if entry.single:
                        return Array(outs[0], entry.out_avals[0].weak_type)
                    outs = [Array(o, a.weak_type) for o, a in zip(outs, entry.out_avals)]
                else:
                    outs = entry.executable.call_arrays(vals)
                return outs[0] if entry.single else tree_util.tree_unflatten(entry.out_tree, outs)
            result = self._call_general(args, kwargs)
            if sig is not None:
                self._remember_fast(sig, args, vals, kwargs)
            return result
        return self._call_general(args, kwargs)

    def _remember_fast(self, sig, args, vals, kwargs):
        if self._static_nums or self._static_names or config.jax_disable_jit:
            return
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        key = (in_tree, tuple(map(_leaf_sig, leaves)), (), config._epoch)
        entry = self._cache.get(key)
        if entry is not None and entry.executable is not None:
            self._fast[sig] = (entry, entry.executable.specialize(vals))

    def _call_general(self, args, kwargs):
        if config.jax_disable_jit or _under_transformation(args, kwargs):
            # Under grad/jvp (and later vmap) the function is inlined into the enclosing
            # transformation; an enclosing jit then compiles the whole result at once.
            return self._fun(*args, **kwargs)
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        sigs = tuple(map(_leaf_sig, leaves))
        key = (in_tree, sigs, statics, config._epoch)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(key, dyn_args, dyn_kwargs, statics, leaves, in_tree, sigs)
        else:
            self.stats.trace_hits += 1
        if core._no_trace_active():
            outs = self._execute(entry, leaves, sigs)
        else:
            outs = jit_p.bind(*leaves, jaxpr=entry.closed, name=self.__name__)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _execute(self, entry, leaves, sigs):
        exe = entry.executable
        if exe is None:
            exe = entry.executable = compiled_executable(entry.closed, self.__name__)
        vals = [_leaf_value(x, s) for x, s in zip(leaves, sigs)]
        return exe.call_arrays(vals)

    def _split(self, args, kwargs):
        if not self._static_nums and not self._static_names:
            return args, kwargs, ()
        statics = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self._static_nums:
                statics.append((i, _hashable_static(a)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self._static_names:
                statics.append((k, _hashable_static(v)))
            else:
                dyn_kwargs[k] = v
        return tuple(dyn_args), dyn_kwargs, tuple(statics)

    def _trace(self, key, dyn_args, dyn_kwargs, statics, leaves, in_tree, sigs):
        self.stats.trace_misses += 1
        flat_fun, out_tree_box = self._flat_fun(dyn_args, dyn_kwargs, statics, in_tree)
        avals = [core.ShapedArray(*s) for s in sigs]
        names = self._leaf_names(len(dyn_args), dyn_kwargs, in_tree, leaves)
        info = pe.debug_info(self._fun, "jit", names)
        log_compile(self.__name__, avals, describe_miss(key, list(self._cache), names))
        closed = pe.trace_to_jaxpr(flat_fun, avals, info)
        entry = _CacheEntry(closed, out_tree_box[0])
        self._cache[key] = entry
        return entry

    def _flat_fun(self, dyn_args, dyn_kwargs, statics, in_tree):
        static_pos = {k: v for k, v in statics if isinstance(k, int)}
        static_kw = {k: v for k, v in statics if isinstance(k, str)}

        def with_statics(a, kw):
            full = list(a)
            for i in sorted(static_pos):
                full.insert(i, static_pos[i])
            return self._fun(*full, **kw, **static_kw)
        return flatten_fun_nokwargs(with_statics, in_tree)

    def _leaf_names(self, n_dyn, dyn_kwargs, in_tree, leaves):
        positional = self._positional or []
        dyn_positions = [i for i in range(n_dyn + len(self._static_nums)) if i not in self._static_nums]
        names = []
        arg_trees = in_tree.children()[0].children() if in_tree.children() else ()
        for pos, sub in zip(dyn_positions, arg_trees):
            base = positional[pos] if pos < len(positional) else f"args[{pos}]"
            names.extend([base] * sub.num_leaves)
        for k in sorted(dyn_kwargs):
            names.extend([k] * tree_util.tree_structure(dyn_kwargs[k]).num_leaves)
        return names

    # -- JAX's inspection API
    def _cache_size(self):
        return len(self._cache)

    def clear_cache(self):
        self._cache.clear()
        self._fast.clear()

    def trace(self, *args, **kwargs):
        return Traced(self, args, kwargs)

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info


class Traced:
    def __init__(self, jitted, args, kwargs):
        dyn_args, dyn_kwargs, statics = jitted._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        sigs = tuple(map(_leaf_sig, leaves))
        key = (in_tree, sigs, statics, config._epoch)
        entry = jitted._cache.get(key) or jitted._trace(key, dyn_args, dyn_kwargs, statics, leaves, in_tree, sigs)
        self._jitted, self._entry = jitted, entry
        self.jaxpr = entry.closed

    @property
    def out_info(self):
        from .api import ShapeDtypeStruct
        return tree_util.tree_unflatten(
            self._entry.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in self._entry.out_avals])

    def lower(self):
        return Lowered(self._jitted, self._entry)


class Lowered:
    def __init__(self, jitted, entry):
        self._jitted, self._entry = jitted, entry
        from .lowering import compile as lowering_compile
        self._lowered = lowering_compile.lower_jaxpr(entry.closed, jitted.__name__)

    def as_text(self):
        return self._lowered.text

    def compile(self):
        if self._entry.executable is None:
            self._entry.executable = compiled_executable(self._entry.closed, self._jitted.__name__)
        self._entry.executable.ensure_compiled()
        return Compiled(self._jitted, self._entry)


class Compiled:
    def __init__(self, jitted, entry):
        self._jitted, self._entry = jitted, entry

    def as_text(self):
        return self._entry.executable.source

    def __call__(self, *args, **kwargs):
        return self._jitted(*args, **kwargs)


class ShapeDtypeStruct:
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.weak_type, self.sharding = weak_type, sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    @property
    def aval(self):
        return core.ShapedArray(self.shape, self.dtype, self.weak_type)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, keep_unused=False, device=None, backend=None, inline=False):
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 keep_unused=keep_unused, inline=inline)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    return Jitted(fun, static_argnums, static_argnames, donate_argnums, keep_unused, inline)


# ---------------------------------------------------------------- make_jaxpr

def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_util.tree_flatten((tuple(dyn), kwargs))
        avals = [_abstractify(x) for x in leaves]

        def with_statics(a, kw):
            it = iter(a)
            return fun(*[args[i] if i in static else next(it) for i in range(len(args))], **kw)
        flat_fun, out_tree = flatten_fun_nokwargs(with_statics, in_tree)
        names = pe.arg_names_of(fun, len(args))
        closed = pe.trace_to_jaxpr(flat_fun, avals, pe.debug_info(fun, "make_jaxpr", names))
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
            return closed, tree_util.tree_unflatten(out_tree[0], shapes)
        return closed
    return make


def _abstractify(x):
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    return core.ShapedArray(*_leaf_sig(x))


def eval_shape(fun, *args, **kwargs):
    closed, shapes = make_jaxpr(fun, return_shape=True)(*args, **kwargs)
    return shapes


# ---------------------------------------------------------------- jax.Device, device_get, typeof

Device = CpuDevice  # numjax's only kind of device; ``isinstance(d, jax.Device)`` holds


def device_get(x):
    """Copy every array leaf of ``x`` to a NumPy array (non-array leaves pass through)."""
    return tree_util.tree_map(lambda v: np.asarray(v) if isinstance(v, Array) else v, x)


def typeof(x):
    """The abstract value (shape, dtype, weak type) of ``x``."""
    return core.get_aval(x)
