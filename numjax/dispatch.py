"""jit as a higher-order primitive, and the call path of jitted functions.

``jit_p`` holds a closed jaxpr; its implementation is a cached compile of that jaxpr
(``compiled_executable``, the single entry into a backend). Like every primitive it has
one rule per transformation, registered together under its definition: each rule
transforms the inner jaxpr (jvp, partial evaluation, transposition, batching) and binds
the result as a new ``jit_p``, so a jitted function stays one staged call under grad,
vmap and control flow, as in JAX (Autodidax's ``xla_call``).

Two caches: the *trace cache* (per function: input tree, leaf shapes/dtypes/weak types,
static args and config -> ``Program``: traced jaxpr, output tree, executable), with a
*fast path* for positional-Array calls seen before; and the backend's compile cache
(programs that lower to the same code share one compile). Jaxprs derived from a jit's
jaxpr by a transformation are memoized on it, so a repeated ``grad(jit(f))(x)`` reuses
their executables too.

Threads: each cache entry is made once. A thread that misses takes that entry's lock
(``KeyedLocks``), checks again and makes it; threads missing the same entry meanwhile
wait and reuse it, while different entries are traced concurrently. Backend compiles are
serialized (``_compile_lock``): the Python half of lowering is not thread-safe, and the
GIL leaves little to gain from running it in parallel.
"""
import contextlib
import logging
import os
import threading
import weakref

import numpy as np

from . import core, tree_util
from .array import Array
from .config import config, thread_flags
from .core import trace_state
from .interpreters import ad, batching
from .interpreters import partial_eval as pe
from .jaxpr import ClosedJaxpr, Jaxpr, Var, param_printers
from .lax._base import make_primitive

logger = logging.getLogger("numjax")


# ---------------------------------------------------------------- the primitive

def _jit_impl(*args, jaxpr, name):
    vals = [leaf_value(a, aval) for a, aval in zip(args, jaxpr.in_avals)]
    return compiled_executable(jaxpr, name).call_arrays(vals)


def _jit_abstract(*avals, jaxpr, name):
    return list(jaxpr.out_avals)


jit_p = make_primitive("jit", _jit_impl, _jit_abstract, multiple_results=True)
param_printers[jit_p] = lambda p: {"name": p["name"], "jaxpr": p["jaxpr"]}


def _jit_jvp(primals, tangents, *, jaxpr, name):
    tangent_avals = tuple(None if type(t) is ad.Zero else core.get_aval(t) for t in tangents)
    jvp_jaxpr, out_nonzero = _derived(jaxpr, ("jvp", tangent_avals),
                                      lambda: ad.jvp_closed_jaxpr(jaxpr, tangent_avals))
    outs = bind_jit(list(primals) + [t for t in tangents if type(t) is not ad.Zero], jvp_jaxpr, name)
    n, out_tangents = len(jaxpr.out_avals), iter(outs[len(jaxpr.out_avals):])
    return outs[:n], [next(out_tangents) if nz else ad.Zero(ad._tangent_aval(a))
                      for nz, a in zip(out_nonzero, jaxpr.out_avals)]


def _jit_partial_eval(trace, tracers, *, jaxpr, name):
    # The known part runs now (as its own jit), emitting residuals; the unknown part is staged.
    unknowns = tuple(not t.pval.is_known for t in tracers)
    known, unknown, out_unknowns, forwarded = _derived(jaxpr, ("partial_eval", unknowns),
                                                       lambda: _split_jit(jaxpr, unknowns))
    known_in = [t.pval.const for t in tracers if t.pval.is_known]
    known_outs = bind_jit(known_in, known, name)
    n_known = len(out_unknowns) - sum(out_unknowns)
    computed = iter(known_outs[n_known:])
    residuals = [trace.instantiate_const(trace.pure(known_in[f] if f is not None else next(computed)))
                 for f in forwarded]
    unknown_in = [trace.instantiate_const(t) for t in tracers if not t.pval.is_known]
    staged = trace.stage(jit_p, residuals + unknown_in, {"jaxpr": unknown, "name": name}) \
        if any(out_unknowns) else []
    known_it, staged_it = iter(known_outs[:n_known]), iter(staged)
    return [next(staged_it) if u else next(known_it) for u in out_unknowns]


def _split_jit(jaxpr, unknowns):
    """``pe.partial_eval_jaxpr`` of a jit's jaxpr, with residuals that are just known inputs
    forwarded (``forwarded[i]``: the known input that residual i is, or None) instead of
    returned by the known jit, as JAX forwards them. Both parts are closed jaxprs made once
    (memoized with this result), so what is derived from them is memoized too."""
    known, unknown, out_unknowns, num_res = pe.partial_eval_jaxpr(
        jaxpr.jaxpr, unknowns, [False] * len(jaxpr.out_avals), jaxpr.consts)
    kj = known.jaxpr
    n_out = len(kj.outvars) - num_res
    forwarded = [kj.invars.index(v) if type(v) is Var and v in kj.invars else None
                 for v in kj.outvars[n_out:]]
    outvars = kj.outvars[:n_out] + [v for v, f in zip(kj.outvars[n_out:], forwarded) if f is None]
    known = ClosedJaxpr(Jaxpr(kj.constvars, kj.invars, outvars, kj.eqns), known.consts)
    return known, ClosedJaxpr(unknown, []), out_unknowns, forwarded


def _jit_transpose(cts, *args, jaxpr, name):
    linear = tuple(ad.is_undefined(a) for a in args)
    cts = [ad.instantiate(c) for c in cts]
    ct_avals = tuple(core.get_aval(c) for c in cts)
    transposed = _derived(jaxpr, ("transpose", linear, ct_avals),
                          lambda: ad.transpose_closed_jaxpr(jaxpr, linear, ct_avals))
    outs = iter(bind_jit([a for a in args if not ad.is_undefined(a)] + cts, transposed, name))
    return [next(outs) if lin else None for lin in linear]


@batching.needs_axis
def _jit_batch(vals, dims, *, axis_data, jaxpr, name):
    key = ("vmap", axis_data.size, axis_data.name, tuple(dims))
    batched, out_dims = _derived(jaxpr, key, lambda: batching.batch_closed_jaxpr(jaxpr, axis_data, dims))
    return bind_jit(vals, batched, name), out_dims


ad.jvp_rules[jit_p] = _jit_jvp
pe.partial_eval_rules[jit_p] = _jit_partial_eval
ad.transpose_rules[jit_p] = _jit_transpose
batching.batch_rules[jit_p] = _jit_batch


def bind_jit(args, closed, name):
    """``jit_p`` applied to ``args``. The jaxpr's constants become leading operands (as JAX
    hoists them): transformations then see constants that are tracers of theirs, and a
    nested jaxpr holds no constants of its own."""
    if closed.consts:
        hoisted, consts = _derived(closed, ("hoisted",), lambda: _hoist_consts(closed))
        return jit_p.bind(*consts, *args, jaxpr=hoisted, name=name)
    return jit_p.bind(*args, jaxpr=closed, name=name)


def _hoist_consts(closed):
    jaxpr, consts = pe.closure_convert(closed)
    return ClosedJaxpr(jaxpr, []), consts


class KeyedLocks:
    """One re-entrant lock per key, alive while some thread holds or awaits it: work that
    must happen once per key runs under ``hold(key)``, after checking again that no other
    thread did it meanwhile."""

    def __init__(self):
        self._guard = threading.Lock()
        self._locks = {}   # key -> [lock, number of threads holding or awaiting it]

    @contextlib.contextmanager
    def hold(self, key):
        with self._guard:
            entry = self._locks.get(key)
            if entry is None:
                entry = self._locks[key] = [threading.RLock(), 0]
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._guard:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._locks[key]

    def __len__(self):
        return len(self._locks)


_deriving = KeyedLocks()   # (id of a jaxpr, derivation key)
_tracing = KeyedLocks()    # (id of a function's program table, trace cache key)
_compile_lock = threading.RLock()


def _derived(closed, key, make):
    """``make()``, memoized on the jaxpr ``closed`` (what a transformation derives from a
    jaxpr depends only on the jaxpr and ``key``); it lives as long as ``closed`` does."""
    table = closed.__dict__.setdefault("_derived", {})
    hit = table.get(key)
    if hit is None:
        with _deriving.hold((id(closed), key)):
            hit = table.get(key)
            if hit is None:
                hit = table[key] = make()
    return hit


def compiled_executable(closed_jaxpr, name="fn"):
    """The backend's executable for ``closed_jaxpr`` (built once per jaxpr object and backend):
    an object with ``call_arrays(list of ndarrays) -> list of Array`` and ``source``."""
    backend = current_backend()
    if backend is not _CPU:
        return _accelerator_executable(closed_jaxpr, name, backend)
    exe = getattr(closed_jaxpr, "_executable", None)
    if exe is None:
        from .interpreters import mlir
        from .lowering import compile as lowering_compile
        # Primitives defined outside numjax with a lower_fun rule compile as that function.
        # Expanded before taking the lock: a rule may trace (and so wait for) other functions.
        expanded = mlir.expand_lowerings(closed_jaxpr)
        with _compile_lock:
            exe = getattr(closed_jaxpr, "_executable", None)
            if exe is None:
                exe = closed_jaxpr._executable = lowering_compile.compile_jaxpr(expanded, name)
    return exe


def jit_call_named(name, fun, *args):
    """Run ``fun`` as a nested ``jit[name=...]`` when staging, and directly otherwise.

    jnp functions that JAX implements as jitted helpers (``_where``, ``cumsum``) go
    through here so their jaxprs print like JAX's, while eager calls stay cheap.
    """
    if core._no_trace_active() or not isinstance(core.find_top_trace(args), pe.DynamicJaxprTrace):
        return fun(*args)
    avals = [core.get_aval(a) for a in args]
    closed = pe.trace_to_jaxpr(lambda *xs: [fun(*xs)], avals)
    return bind_jit(list(args), closed, name)[0]


# ---------------------------------------------------------------- the trace cache

class Program:
    """One traced signature of a jitted function: its jaxpr, its output tree and (built on
    first use) its executable."""
    __slots__ = ("closed", "out_tree", "out_avals", "single", "_executable", "_backend")

    def __init__(self, closed, out_tree):
        self.closed, self.out_tree, self.out_avals = closed, out_tree, closed.out_avals
        self.single = out_tree.node is None   # the function returned one array
        self._executable = self._backend = None

    def executable(self, name):
        backend = current_backend()   # ``jax.default_device`` may change it between calls
        if self._executable is None or self._backend != backend:
            self._executable = compiled_executable(self.closed, name)
            self._backend = backend
        return self._executable


_programs = weakref.WeakKeyDictionary()   # fun -> {cache key: Program}, shared by every jit(fun)
_programs_strong = {}                     # for callables that cannot be weakly referenced
_programs_lock = threading.Lock()

MISS = object()   # what ``JitCache.call_fast`` returns when the fast path does not apply
_jit_caches = weakref.WeakSet()           # every JitCache, for ``clear_caches``


def clear_caches():
    """``jax.clear_caches()``: forget every traced program (and the executable compiled for it)
    and every fast-path entry held in memory, so the next calls trace again; the disk cache
    stays, as JAX's persistent cache does."""
    with _programs_lock:
        for table in list(_programs.values()) + list(_programs_strong.values()):
            table.clear()
    for cache in list(_jit_caches):
        cache.fast.clear()
        cache.fast_one.clear()


def _programs_for(fun):
    with _programs_lock:
        try:
            return _programs.setdefault(fun, {})
        except TypeError:
            return _programs_strong.setdefault(fun, {})


class Stats:
    """numjax's own counters, alongside JAX's ``_cache_size()``. The fast path counts its
    hits without a lock (threads racing there may drop a few); the other counts are exact."""

    def __init__(self):
        self.trace_hits = self.trace_misses = 0
        self._lock = threading.Lock()

    def count(self, hit):
        with self._lock:
            if hit:
                self.trace_hits += 1
            else:
                self.trace_misses += 1

    def __repr__(self):
        return f"Stats(trace_hits={self.trace_hits}, trace_misses={self.trace_misses})"


class JitCache:
    """The programs of one jitted function and the path of a call through them."""

    def __init__(self, fun, name):
        self.name = name
        self.programs = _programs_for(fun)
        _jit_caches.add(self)
        self.fast = {}        # ``_fast_key`` of positional Arrays -> FastEntry
        # Shape of one contiguous Array -> the FastEntry last made for it with one output of a
        # native entry point: the commonest call, checked (``FastEntry.one_array``) before the
        # full key is hashed.
        self.fast_one = {}
        self.stats = Stats()

    def clear(self):
        self.programs.clear()
        self.fast.clear()
        self.fast_one.clear()

    def program(self, leaves, in_tree, statics, trace, arg_names):
        """The Program for these flat arguments; on a miss ``trace(avals)`` gives its
        (closed jaxpr, output tree). A jaxpr that closes over tracers is not kept: it
        belongs to the transformation that is running."""
        sigs = tuple(map(leaf_signature, leaves))
        key = (in_tree, sigs, statics, config._epoch)
        program = self.programs.get(key)
        if program is None:
            with _tracing.hold((id(self.programs), key)):
                program = self.programs.get(key)   # another thread may have traced it
                if program is None:
                    return self._trace(key, sigs, trace, arg_names)
        self.stats.count(hit=True)
        return program

    def _trace(self, key, sigs, trace, arg_names):
        self.stats.count(hit=False)
        avals = [core.ShapedArray(*s) for s in sigs]
        log_compile(self.name, avals, describe_miss(key, list(self.programs), arg_names))
        program = Program(*trace(avals))
        if not any(isinstance(c, core.Tracer) for c in program.closed.consts):
            self.programs[key] = program
        return program

    def call(self, program, leaves, fast_args=None):
        """Run ``program`` (or stage it as a ``jit`` equation under a transformation);
        ``fast_args``: the positional arguments, when later calls may take the fast path."""
        if not core._no_trace_active():
            outs = bind_jit(list(leaves), program.closed, self.name)
        else:
            vals = [leaf_value(x, a) for x, a in zip(leaves, program.closed.in_avals)]
            outs = list(program.executable(self.name).call_arrays(vals))
            copied = _unshare(outs, vals, leaves)
            if fast_args is not None:
                self._remember_fast(fast_args, program, copied)
        return tree_util.tree_unflatten(program.out_tree, outs)

    def call_fast(self, args):
        """The common call (positional Arrays, nothing traced, a signature seen before)
        without pytree flattening; ``MISS`` otherwise. One contiguous Array in, one output of
        a native entry point out -- the commonest call -- takes the shortest path: its shape
        finds the entry, whose input dtype and weak type must match."""
        if len(args) == 1 and type(args[0]) is Array and trace_state.idle \
                and not thread_flags.jax_disable_jit:
            x = args[0]
            v = x._value
            if v.flags.c_contiguous:
                entry = self.fast_one.get(v.shape)
                if entry is not None and entry.in_dtype is v.dtype and entry.in_weak is x.weak_type \
                        and entry.epoch == config._epoch and not default_device_scoped:
                    self.stats.trace_hits += 1
                    out = _new_array(Array)    # (Array(value, weak) without __init__'s frame)
                    out._value, out.weak_type = entry.native(v)[0], entry.out_weak
                    return out
        elif not trace_state.idle or thread_flags.jax_disable_jit:
            return MISS
        return self._call_keyed(args)

    def _call_keyed(self, args):
        key, vals = _fast_key(args)
        entry = self.fast.get(key) if key is not None else None
        if entry is None or entry.epoch != config._epoch or \
                (default_device_scoped and entry.device != thread_flags.jax_default_device):
            return MISS    # unseen, or made under other flags or for another default device
        self.stats.trace_hits += 1
        program, native = entry.program, entry.native
        if entry.convert:
            vals = _converted(vals, entry.convert)
        if native is None:
            outs = program.executable(self.name).call_arrays(list(vals))
        elif program.single and not entry.copy_out:
            return Array(native(*vals)[0], entry.out_weak)
        else:
            outs = [Array(o, a.weak_type) for o, a in zip(native(*vals), program.out_avals)]
        _copy_outputs(outs, entry.copy_out)
        return outs[0] if program.single else tree_util.tree_unflatten(program.out_tree, outs)

    def _remember_fast(self, args, program, copy_out=()):
        key, vals = _fast_key(args)
        if key is None:
            return
        convert = tuple((i, a.dtype) for i, (v, a) in enumerate(zip(vals, program.closed.in_avals))
                        if v.dtype != a.dtype)
        if convert:
            vals = _converted(vals, convert)
        # A backend may offer an entry point specialized to these argument types.
        specialize = getattr(program.executable(self.name), "specialize", None)
        native = specialize(vals) if specialize else None
        device = thread_flags.jax_default_device if default_device_scoped else None
        entry = FastEntry(program, native, device, args)
        entry.convert, entry.copy_out = convert, tuple(copy_out)
        self.fast[key] = entry
        if entry.one_array:
            self.fast_one[args[0]._value.shape] = entry


class FastEntry:
    """What a call with a remembered ``_fast_key`` runs: its program, the backend's entry
    point specialized to its arguments (or None), the config epoch and default device it
    was made under (a call under others misses), and -- for one contiguous Array in and one
    output made by the entry point (``one_array``) -- that input's dtype and weak type."""
    __slots__ = ("program", "native", "epoch", "device", "out_weak", "one_array", "in_dtype", "in_weak",
                 "convert", "copy_out")

    def __init__(self, program, native, device, args):
        self.program, self.native, self.epoch, self.device = program, native, config._epoch, device
        self.out_weak = program.out_avals[0].weak_type if program.single else None
        self.one_array = native is not None and program.single and len(args) == 1 \
            and type(args[0]) is Array and args[0]._value.flags.c_contiguous
        one = args[0] if self.one_array else None
        self.in_dtype = one._value.dtype if one is not None else None
        self.in_weak = bool(one.weak_type) if one is not None else None


_new_array = Array.__new__


def _fast_key(args):
    """The fast path's key of positional arguments (None unless all are Arrays or numpy
    arrays), and their values. The config epoch and default device are checked on the entry,
    not keyed: a call under other ones misses, traces (or finds its program) and is remembered
    again. Contiguity is part of the key: the specialized entry point takes contiguous arrays
    only. A numpy array keys with its own dtype (the entry converts it to the program's,
    float64 to float32 without x64) and weak type None, apart from an Array of its signature:
    its entry copies outputs that would share the caller's memory. A device-resident Array
    (numjax.cuda.arrays.CudaArray) passes itself on (``_jit_operand``) and its
    ``flags.c_contiguous`` sets its signatures apart."""
    try:
        vals = [a._value if type(a) is Array else _host_operand(a) for a in args]
        key = (tuple([(v.shape, v.dtype, v.flags.c_contiguous) for v in vals]),
               tuple([a.weak_type if type(a) is Array else getattr(a, "weak_type", None) for a in args]))
    except AttributeError:   # not all Arrays
        return None, None
    return key, vals


def _host_operand(a):
    return a if type(a) is np.ndarray else a._jit_operand


def _converted(vals, convert):
    vals = list(vals)
    for i, dtype in convert:
        vals[i] = np.asarray(vals[i], dtype=dtype)
    return vals


def _unshare(outs, vals, leaves):
    """Indices of the outputs (Arrays, replaced here by copies) that share memory with a
    caller's numpy argument: a jitted identity, reshape or slice gives a view of its input,
    and the caller may write that array afterwards (JAX's outputs are its own buffers)."""
    user = [v for v, x in zip(vals, leaves)
            if not isinstance(x, Array) and type(v) is np.ndarray and (v is x or v.base is not None)]
    if not user:
        return ()
    shared = [j for j, o in enumerate(outs)
              if type(o) is Array and any(np.may_share_memory(o._value, v) for v in user)]
    _copy_outputs(outs, shared)
    return shared


def _copy_outputs(outs, indices):
    for j in indices:
        outs[j] = Array(outs[j]._value.copy(), outs[j].weak_type)


default_device_scoped = False   # set once ``jax.default_device(...)`` is first used


def leaf_signature(x):
    """(shape, dtype, weak type) of a jit argument leaf: the trace cache's key per leaf."""
    t = type(x)
    if t is Array:
        v = x._value
        return (v.shape, v.dtype, x.weak_type)
    try:
        aval = core.get_aval(x)
    except TypeError:
        raise TypeError(f"Argument '{x!r}' of type {type(x)} is not a valid JAX type") from None
    if aval._sharding is not None:   # sharding in types: traced (and cached) per sharding
        return (aval.shape, aval.dtype, aval.weak_type, aval._sharding)
    return (aval.shape, aval.dtype, aval.weak_type)


def leaf_value(x, aval):
    """numpy value for a jit input leaf, in its JAX dtype; a device-resident Array as itself
    (the executable reads it where it is, or its ``_value``)."""
    if type(x) is Array:
        return x._value
    if isinstance(x, Array):
        return x if x._on_device else np.asarray(x._value, dtype=aval.dtype)
    return np.asarray(x, dtype=aval.dtype)


# ---------------------------------------------------------------- compile logging

def describe_miss(key, previous_keys, arg_names):
    """Why a jit cache missed: the first argument whose shape, dtype or static value differs."""
    if not previous_keys:
        return "first call"
    treedef, sigs, statics, epoch = key
    best = previous_keys[-1]
    if best[3] != epoch:
        return "a config option changed (e.g. jax_enable_x64)"
    if best[0] != treedef:
        return f"the input tree structure changed from {best[0]} to {treedef}"
    if best[2] != statics:
        return f"a static argument changed from {best[2]} to {statics}"
    for i, (old, new) in enumerate(zip(best[1], sigs)):
        if old != new:
            which = arg_names[i] if i < len(arg_names) else f"leaf {i}"
            return f"argument {which} changed from {_sig_str(old)} to {_sig_str(new)}"
    return "unknown"


def _sig_str(sig):
    shape, dtype, weak = sig[:3]
    text = core.ShapedArray(*sig).str_short() if len(sig) > 3 else f"{np.dtype(dtype).name}{list(shape)}"
    return ("~" if weak else "") + text


def log_compile(fun_name, avals, reason):
    if config.jax_log_compiles:
        logger.warning("Compiling %s with global shapes and types %s (reason: %s)",
                       fun_name, avals, reason)


__all__ = ["jit_p", "bind_jit", "compiled_executable", "jit_call_named", "JitCache", "Program"]


# ---------------------------------------------------------------- the backend, for other modules
# Only this module imports a backend (tests/test_import_directions.py); the rest of numjax
# reaches it through this.

def cpu_library(module_name):
    """A module of the CPU numerics library (``numjax.lowering.<module_name>``), for the eager
    paths that reuse its compiled kernels so eager and jitted results agree bit for bit.
    (Eager ops call this per op: a dict lookup once the module is loaded.)"""
    module = _cpu_libraries.get(module_name)
    if module is None:
        import importlib
        module = _cpu_libraries[module_name] = importlib.import_module(f"numjax.lowering.{module_name}")
    return module


_cpu_libraries = {}


# ---------------------------------------------------------------- choosing a backend
# The CPU backend always exists; the CUDA backend (numjax.cuda) is chosen when a CUDA GPU is
# present, unless JAX_PLATFORMS / NUMJAX_PLATFORMS / ``config.update('jax_platforms', ...)``
# says otherwise.  The choice is remade when the configuration changes (its epoch); looking
# it up costs one comparison, so the CPU's call path stays as fast as before.

_CPU = ("cpu", None)
_choice = [None, _CPU]       # [config epoch it was made in, (backend name, cache key part)]
_warned_unsupported = set()


def requested_platforms():
    """The platforms asked for, in order of preference (empty: choose automatically)."""
    text = config.jax_platforms or os.environ.get("NUMJAX_PLATFORMS") or ""
    return [p.strip().lower() for p in text.split(",") if p.strip()]


def current_backend():
    """``("cpu", None)`` or ``("cuda", compute capability)`` (None on the simulator): the
    backend compiled programs run on now -- the default device's (``jax.default_device``),
    else the platform's -- and what of it the compile cache is keyed by."""
    device = thread_flags.jax_default_device
    if device is not None:
        return _device_backend(device)
    return platform_backend()


def platform_backend():
    """The backend of the configured platform (``jax_platforms``; by default the GPU when
    present), whatever the default device: ``jax.devices()`` lists its devices."""
    if _choice[0] != config._epoch:
        _choice[1] = _choose_backend()
        _choice[0] = config._epoch
    return _choice[1]


def _device_backend(device):
    """The backend running programs on ``device`` (a Device, or a platform name)."""
    key = (config._epoch, device)
    backend = _device_choice.get(key)
    if backend is None:
        platform = getattr(device, "platform", device)
        found = cuda_devices() if platform in ("gpu", "cuda") else []
        backend = _CPU if platform == "cpu" else \
            ("cuda", found[0].compute_capability) if found else platform_backend()
        if len(_device_choice) > 64:
            _device_choice.clear()
        _device_choice[key] = backend
    return backend


_device_choice = {}   # (config epoch, default device) -> backend


def _choose_backend():
    from numjax.cuda import devices as cuda_devices
    requested = requested_platforms()
    if not requested:
        found = cuda_devices.available_devices(explicit=False)
        return ("cuda", found[0].compute_capability) if found else _CPU
    for platform in requested:
        if platform == "cpu":
            return _CPU
        if platform in ("cuda", "gpu"):
            found = cuda_devices.available_devices(explicit=True)
            if found:
                return ("cuda", found[0].compute_capability)
    raise RuntimeError(
        f"Unable to initialize backend for platforms {','.join(requested)!r}: no CUDA GPU was found "
        "(numba-cuda installed and a CUDA driver present), and the CUDA simulator runs only with "
        "NUMBA_ENABLE_CUDASIM=1. Set JAX_PLATFORMS=cpu (or NUMJAX_PLATFORMS=cpu) to use the CPU.")


def cuda_devices():
    """The CUDA devices programs can run on now ([] when the backend is the CPU and no GPU is
    present; the simulator's device when it was asked for by name)."""
    from numjax.cuda import devices as cuda_devices_module
    explicit = any(p in ("cuda", "gpu") for p in requested_platforms())
    found = cuda_devices_module.available_devices(explicit=explicit)
    if found and not _registered_device_class:
        from .api import Device
        Device.register(cuda_devices_module.CudaDevice)   # isinstance(d, jax.Device)
        _registered_device_class.append(True)
    return found


_registered_device_class = []


def put_on_device(x, device):
    """The Array ``x`` on the CUDA device ``device`` (copied there now, unless it is there)."""
    from numjax.cuda import arrays as cuda_arrays
    return cuda_arrays.put(x, x.weak_type, device)


def _accelerator_executable(closed_jaxpr, name, backend):
    """The CUDA executable of ``closed_jaxpr``, cached per (backend, compute capability); a
    program the CUDA backend does not lower yet runs whole on the CPU backend (logged once
    per reason)."""
    table = closed_jaxpr.__dict__.setdefault("_executables", {})
    exe = table.get(backend)
    if exe is None:
        from .interpreters import mlir
        from .lowering import compile as lowering_compile
        from numjax.cuda import backend as cuda_backend
        expanded = mlir.expand_lowerings(closed_jaxpr)
        with _compile_lock:
            exe = table.get(backend)
            if exe is None:
                try:
                    exe = cuda_backend.compile_program(expanded, name)
                except NotImplementedError as err:
                    if str(err) not in _warned_unsupported:
                        _warned_unsupported.add(str(err))
                        logger.warning("numjax: %s runs on the CPU: %s", name, err)
                    exe = lowering_compile.compile_jaxpr(expanded, name)
                table[backend] = exe
    return exe
