"""The public transformations. This layer only flattens pytrees, checks arguments and
calls interpreters (``interpreters/``) and dispatch (``dispatch.py``)."""
import abc
import contextlib
import functools
import inspect
import weakref

import numpy as np

from . import core, dispatch, tree_util
from .array import Array
from .errors import out_of_memory
from .config import config, scoped as config_scoped
from .api_util import flatten_fun_nokwargs
from .interpreters import partial_eval as pe
from .numpy._util import asarray_leaf


# set (by numjax/sharding.py) once an Array carries a NamedSharding: jit then reports its
# outputs' shardings; until then jitted calls take no extra step.
_sharding_placed = [False]
_MISS = dispatch.MISS


# ---------------------------------------------------------------- devices

class CpuDevice:
    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id, process_index=0):  # noqa: A002
        self.id, self.process_index = id, process_index

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"cpu:{self.id}"


class Device(abc.ABC):
    """``jax.Device``: ``isinstance(d, jax.Device)`` holds for CPU and CUDA devices."""


Device.register(CpuDevice)


class SingleDeviceSharding:
    """Where an Array lives: one device (a CPU's, or a CUDA GPU's for ``CudaArray``s)."""

    memory_kind = "device"

    def __init__(self, device, memory_kind="device"):
        self.device, self.memory_kind = device, memory_kind

    @property
    def device_set(self):
        return {self.device}

    is_fully_replicated = is_fully_addressable = True
    addressable_devices = device_set
    num_devices = 1

    def devices_indices_map(self, global_shape):
        return {self.device: (slice(None),) * len(global_shape)}

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and (self.device, self.memory_kind) == \
            (other.device, other.memory_kind)

    def __hash__(self):
        return hash((self.device.id, self.memory_kind))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device!r}, memory_kind={self.memory_kind})"


def _device_count_from_env():
    """CPU "devices" for pmap: ``NUMJAX_NUM_CPU_DEVICES``, or XLA's
    ``--xla_force_host_platform_device_count=N`` in ``XLA_FLAGS`` (what chex's
    ``set_n_cpu_devices`` and JAX's docs set)."""
    import os
    import re
    if config.jax_num_cpu_devices >= 0:
        return max(1, config.jax_num_cpu_devices)
    n = os.environ.get("NUMJAX_NUM_CPU_DEVICES")
    if n is None:
        found = re.search(r"--xla_force_host_platform_device_count=(\d+)",
                          os.environ.get("XLA_FLAGS", ""))
        n = found.group(1) if found else "1"
    return max(1, int(n))


_DEVICES = []     # every process's CPU devices, made on first use (JAX reads XLA_FLAGS then)


def _all_devices():
    """CPU devices of all processes: process p's local device i has id p * local_count + i."""
    if not _DEVICES:
        from . import distributed
        distributed.warn_if_uninitialized_launch()
        local = distributed.local_device_count()
        _DEVICES.extend(CpuDevice(p * local + i, p) for p in range(distributed.process_count())
                        for i in range(local))
        from ._src import xla_bridge
        xla_bridge._started()
    return _DEVICES


def _devices():
    """This process's CPU devices."""
    me = process_index()
    return [d for d in _all_devices() if d.process_index == me]


def _check_backend(backend):
    """``None``, ``"cpu"`` or ``"gpu"`` for a backend argument (a name or a device)."""
    name = getattr(backend, "platform", backend)
    if name in (None, "cpu"):
        return name
    gpus = dispatch.cuda_devices()
    if name in ("gpu", "cuda") and gpus:
        return "gpu"
    present = "cpu, gpu" if gpus else "cpu"
    raise RuntimeError(f"Unknown backend: '{name}' requested, but no platforms that are "
                       f"instances of {name} are present. Platforms present are: {present}")


def _backend_devices(backend, process=None):
    """The backend's devices: all processes' (``process`` None) or that process's."""
    which = _check_backend(backend)
    if which == "gpu" or (which is None and dispatch.platform_backend()[0] == "cuda"):
        return dispatch.cuda_devices()
    return [d for d in _all_devices() if process is None or d.process_index == process]


def devices(backend=None):
    return _backend_devices(backend)


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices of ``process_index`` (default: this process)."""
    which = process_index if process_index is not None else host_id
    return _backend_devices(backend, _current_process() if which is None else which)


def device_count(backend=None):
    return len(_backend_devices(backend))


def local_device_count(backend=None):
    return len(local_devices(backend=backend))


def _current_process():
    from . import distributed
    return distributed.process_index()


def process_index(backend=None):
    """This process's index: its MPI rank after ``numjax.distributed.initialize()``, else 0."""
    return _current_process()


def process_count(backend=None):
    from . import distributed
    return distributed.process_count()


def process_indices(backend=None):
    """Every process's index: ``list(range(process_count()))``."""
    return list(range(process_count(backend)))


def default_backend():
    """``"gpu"`` when compiled programs run on a CUDA GPU (JAX's name), else ``"cpu"``."""
    return "gpu" if dispatch.platform_backend()[0] == "cuda" else "cpu"


class _DefaultDevice:
    """``jax.default_device(device)``: a context manager making ``device`` (a Device or a
    platform name, ``"cpu"``/``"gpu"``; None: the platform's first device) the device that
    jitted programs run on and ``device_put(x)`` puts on, in this thread, for the block.
    ``config.update('jax_default_device', device)`` sets it for every thread."""

    def __call__(self, device):
        if device is not None and not isinstance(device, (str, Device)):
            raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                             "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                             f"'gpu', got: {device!r}")
        dispatch.default_device_scoped = True
        return config_scoped("jax_default_device", device)

    @property
    def value(self):
        return config.jax_default_device

    def __repr__(self):
        return "<numjax.default_device>"


default_device = _DefaultDevice()


def _default_device():
    """The device a value without one goes to: ``jax.default_device``'s, else the first of
    the platform's devices."""
    device = config.jax_default_device
    if device is None:
        return local_devices()[0]
    if isinstance(device, str):
        return local_devices(backend=device)[0]
    return device


_on_cpu = weakref.WeakValueDictionary()   # id -> Array put on a CpuDevice by device_put


def _host_array_device(x):
    """Where a host Array lives: the CPU when ``device_put`` put it there, else (like JAX's
    uncommitted arrays) the default device, which numjax copies it to when a program needs."""
    return _devices()[0] if _on_cpu.get(id(x)) is x else _default_device()


def clear_caches():
    """Clear every compilation and staging cache held in memory (not the disk cache)."""
    dispatch.clear_caches()


def print_environment_info(return_string=False):
    """Versions and devices, as ``jax.print_environment_info`` reports them."""
    import platform
    import sys
    import numba
    import numjax
    text = (f"numjax:    {numjax.__version__} (JAX {'.'.join(map(str, numjax.__version_info__))}'s API)\n"
            f"numba:     {numba.__version__}\nnumpy:     {np.__version__}\n"
            f"python:    {sys.version.replace(chr(10), ' ')}\ndevice info: {devices()[0].device_kind}-"
            f"{device_count()}, {local_device_count()} local devices\nprocess_count: {process_count()}\n"
            f"platform: {platform.uname()}\n")
    if return_string:
        return text
    print(text)
    return None


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """``x``'s array leaves on ``device`` (a Device, a single-device Sharding, a pytree of
    them matching a prefix of ``x``, or None: the default device; Arrays already placed stay
    as they are).  Tracers pass through."""
    from . import sharding
    if isinstance(device, sharding.PartitionSpec):   # a spec over the mesh of ``set_mesh``
        device = sharding._as_sharding(device, "device_put")
    if isinstance(device, (list, tuple, dict)):
        return tree_util.tree_map(lambda d, sub: device_put(sub, d), device, x,
                                  is_leaf=lambda d: not isinstance(d, (list, tuple, dict)) or
                                  isinstance(d, sharding.PartitionSpec))
    if isinstance(device, sharding.NamedSharding) and not device.mesh.empty:   # whole value, recording it
        return tree_util.map_traced(lambda leaf: sharding._constrain(leaf, device, "device_put"), x)
    target = _placement(device)
    return tree_util.map_traced(lambda leaf: _put(leaf, target), x)


def _placement(device):
    if device is None or isinstance(device, Device):
        return device
    devs = getattr(device, "device_set", None)
    if devs:   # a Sharding: numjax keeps a value whole, on one device (a GPU's if any)
        return min(devs, key=lambda d: (d.platform == "cpu", d.id))
    raise ValueError("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, "
                     f"or a pytree of these values. Received invalid value: {device!r}")


def _put(x, target):
    if isinstance(x, core.Tracer):
        return x
    if target is None:
        if isinstance(x, Array):
            return x
        target = _default_device()
    if target.platform == "cpu":   # a new Array (as JAX's): ``x`` itself stays uncommitted
        x = Array(x._value, x.weak_type) if isinstance(x, Array) else asarray_leaf(x)
        _on_cpu[id(x)] = x
        return x
    if not isinstance(x, Array):
        x = asarray_leaf(x)
    return dispatch.put_on_device(x, target)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """``jax.make_mesh``: see numjax/sharding.py."""
    from .sharding import make_mesh as make
    return make(axis_shapes, axis_names, axis_types, devices=devices)


def set_mesh(mesh):
    """``jax.set_mesh``: a statement and a context manager; see numjax/sharding.py."""
    from .sharding import set_mesh as setter
    return setter(mesh)


class InferFromArgs:
    """shard_map's default ``in_specs``: each argument's spec read from its sharding type (all
    manual mesh axes must then be Explicit), as JAX 0.10's ``Infer``."""
    __slots__ = ()

    def __repr__(self):
        return "jax.sharding.Infer"


Infer = InferFromArgs()


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None):
    """``jax.shard_map``: see numjax/shmap.py."""
    from .shmap import shard_map as smap
    return smap(f, out_specs=out_specs, in_specs=in_specs, mesh=mesh, axis_names=axis_names,
                check_vma=check_vma, check_rep=check_rep)


def block_until_ready(x):
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def disable_jit(disable=True):
    """Run jitted functions op by op inside the block, in this thread (as JAX's)."""
    return config_scoped("jax_disable_jit", bool(disable))


def checking_leaks():
    """JAX's leak checker as a context (``jax_check_tracer_leaks``); numjax records the flag."""
    return config_scoped("jax_check_tracer_leaks", True)


# ---------------------------------------------------------------- argument handling

def _as_tuple(spec, single):
    return () if spec is None else (spec,) if isinstance(spec, single) else tuple(spec)


def _normalize_static(fun, static_argnums, static_argnames, donate_argnums=None, donate_argnames=None):
    nums, names = _as_tuple(static_argnums, int), _as_tuple(static_argnames, str)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names, None
    _validate_argnums(params, nums, "static_argnums")
    _validate_argnames(params, names, "static_argnames")
    _validate_argnums(params, _as_tuple(donate_argnums, int), "donate_argnums")
    _validate_argnames(params, _as_tuple(donate_argnames, str), "donate_argnames")
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # JAX infers the matching name for each static position and vice versa.
    nums = tuple(n if n >= 0 else len(positional) + n for n in nums)
    names = tuple(dict.fromkeys(names + tuple(positional[n] for n in nums if n < len(positional))))
    nums = tuple(dict.fromkeys(nums + tuple(positional.index(n) for n in names if n in positional)))
    return nums, names, positional


def _validate_argnums(params, nums, what):
    """JAX's check, when jit is applied, that each static (or donated) position exists."""
    if any(p.kind == p.VAR_POSITIONAL for p in params) or not nums:
        return
    n_pos = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    if -min(nums) > n_pos or max(nums) >= n_pos:
        raise ValueError(f"Jitted function has {what}={nums}, but only accepts {n_pos} positional "
                         f"arguments. Name positions in [-{n_pos}, {n_pos}), or drop the others from {what}.")


def _validate_argnames(params, names, what):
    """JAX's check, when jit is applied, that each static (or donated) name is a parameter
    that can be passed by keyword."""
    positional_only = {p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
    if bad := positional_only & set(names):
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. These are "
                         "positional-only: name them in static_argnums instead.")
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return
    keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if bad := set(names) - keyword:
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. Function does not "
                         f"take these args; its parameters are {sorted(keyword)}.")


def _check_jit_args(fun, leaves, names):
    """JAX's TypeError for a non-array argument (a string, an object, ...) not marked static."""
    from .api_util import is_jax_value
    for i, x in enumerate(leaves):
        if type(x) is not Array and not is_jax_value(x):
            path = names[i] if i < len(names) else f"args[{i}]"
            raise TypeError(f"Error interpreting argument to {fun} as an abstract array. The problematic "
                            f"value is of type {type(x)} and was passed to the function at path {path}.\n"
                            "This typically means that a jit-wrapped function was called with a non-array "
                            "argument, and this argument was not marked as static using the static_argnums "
                            "or static_argnames parameters of jax.jit.")


def _hashable_static(val):
    try:
        hash(val)
    except TypeError as err:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying to hash "
            f"an object of type {type(val)}, {val}. The error was:\nTypeError: {err}") from None
    return val


# ---------------------------------------------------------------- jit

class PjitFunction:
    """What ``jit(f)`` returns. Argument handling lives here (statics, pytrees, names for
    error messages); tracing, the caches and running live in ``dispatch.JitCache``.
    Named as JAX's type is: libraries tell jitted functions by ``type(f).__name__``
    (chex's ``assert_max_traces`` refuses to wrap one)."""

    @property
    def __signature__(self):
        # The wrapped function's, even where inspect does not follow __wrapped__ (chex's
        # fake_pmap asks with follow_wrapped=False), as JAX's jitted functions answer.
        return inspect.signature(self._fun)

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, keep_unused, inline,
                 donate_argnames=None, in_shardings=None, out_shardings=None):
        functools.update_wrapper(self, fun, updated=())
        if not hasattr(self, "__name__"):   # functools.partial and other callables without a name
            self.__name__ = getattr(getattr(fun, "func", None), "__name__", type(fun).__name__)
        self._fun = fun
        self._static_nums, self._static_names, self._positional = _normalize_static(
            fun, static_argnums, static_argnames, donate_argnums, donate_argnames)
        self._dispatch = dispatch.JitCache(fun, self.__name__)
        self._call_fast = self._dispatch.call_fast
        self._inline = inline
        self._shardings = None if in_shardings is None and out_shardings is None else \
            (in_shardings, out_shardings)

    stats = property(lambda self: self._dispatch.stats)

    def __repr__(self):
        return f"<PjitFunction of {self._fun!r}>"   # JAX's wording

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        try:
            if self._shardings is not None or _sharding_placed[0]:
                return self._call_sharded(args, kwargs)
            if not kwargs:
                out = self._call_fast(args)    # a call seen before, without flattening
                if out is not _MISS:
                    return out
            return self._call_traced(args, kwargs)
        except MemoryError as err:
            raise out_of_memory(err) from None

    def _call_sharded(self, args, kwargs):
        from . import sharding_rules
        in_shardings, out_shardings = self._shardings or (None, None)
        placed = False
        if in_shardings is not None:
            args, placed = sharding_rules.apply_in_shardings(args, in_shardings)
        return sharding_rules.place_outputs(self, args, kwargs, self._call(args, kwargs), out_shardings, placed)

    def _call(self, args, kwargs):
        if not kwargs:
            out = self._call_fast(args)
            if out is not _MISS:
                return out
        return self._call_traced(args, kwargs)

    def _call_traced(self, args, kwargs):
        if config.jax_disable_jit or (self._inline and not core._no_trace_active()):
            return self._fun(*args, **kwargs)
        program, leaves = self._program(args, kwargs)
        fast_args = None if kwargs or self._static_nums or self._static_names else args
        return self._dispatch.call(program, leaves, fast_args)

    def _program(self, args, kwargs):
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_util.flatten_traced((dyn_args, dyn_kwargs))
        names = self._leaf_names(len(dyn_args), dyn_kwargs, in_tree)
        _check_jit_args(self._fun, leaves, names)

        def trace(avals):
            flat_fun, out_tree = self._flat_fun(statics, in_tree)
            closed = pe.trace_to_jaxpr(flat_fun, avals, pe.debug_info(self._fun, "jit", names))
            return closed, out_tree[0]
        return self._dispatch.program(leaves, in_tree, statics, trace, names), leaves

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

    def _flat_fun(self, statics, in_tree):
        static_pos = {k: v for k, v in statics if isinstance(k, int)}
        static_kw = {k: v for k, v in statics if isinstance(k, str)}

        def with_statics(a, kw):
            full = list(a)
            for i in sorted(static_pos):
                full.insert(i, static_pos[i])
            return self._fun(*full, **kw, **static_kw)
        return flatten_fun_nokwargs(with_statics, in_tree, traced_for=(self._fun, "jit"))

    def _leaf_names(self, n_dyn, dyn_kwargs, in_tree):
        positional = self._positional or []
        dyn_positions = [i for i in range(n_dyn + len(self._static_nums)) if i not in self._static_nums]
        names = []
        arg_trees = in_tree.children()[0].children() if in_tree.children() else ()
        for pos, sub in zip(dyn_positions, arg_trees):
            base = positional[pos] if pos < len(positional) else f"args[{pos}]"
            names.extend([base] * sub.num_leaves)
        for k in sorted(dyn_kwargs):
            names.extend([k] * tree_util.structure_traced(dyn_kwargs[k]).num_leaves)
        return names

    # -- JAX's inspection API
    def _cache_size(self):
        return len(self._dispatch.programs)

    def clear_cache(self):
        self._dispatch.clear()

    def trace(self, *args, **kwargs):
        return Traced(self, self._program(args, kwargs)[0])

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info


class Traced:
    def __init__(self, jitted, program):
        self._jitted, self._program = jitted, program
        self.jaxpr = program.closed

    @property
    def out_info(self):
        return _shape_structs(self._program.out_tree, self._program.out_avals)

    def lower(self):
        return Lowered(self._jitted, self._program)


class Lowered:
    """``jit(f).lower(...)``: the program as the backend lowers it (``as_text``)."""

    def __init__(self, jitted, program):
        self._jitted, self._program = jitted, program

    def as_text(self):
        return self._program.executable(self._jitted.__name__).source

    def compiler_ir(self, dialect=None):
        """The program as HLO-shaped text (numjax has no MLIR; see numjax/hlo_text.py): equal
        programs give equal text, ``.as_hlo_text()`` and ``str()`` give it."""
        if dialect not in (None, "stablehlo", "hlo"):
            raise ValueError(f"unknown dialect: {dialect}")
        from .hlo_text import CompilerIR, hlo_text
        return CompilerIR(hlo_text(self._program.closed, self._jitted.__name__))

    def compile(self):
        return Compiled(self._jitted, self._program)


class Compiled:
    def __init__(self, jitted, program):
        self._jitted, self._program = jitted, program
        self.executable = program.executable(jitted.__name__)

    def as_text(self):
        return self.executable.source

    def __call__(self, *args, **kwargs):
        return self._jitted(*args, **kwargs)


class ShapeDtypeStruct:
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        from .dtypes import _is_key_dtype   # key<fry> is no NumPy dtype
        self.shape, self.dtype = tuple(shape), dtype if _is_key_dtype(dtype) else np.dtype(dtype)
        self.weak_type, self.sharding = weak_type, sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    @property
    def aval(self):
        return core.ShapedArray(self.shape, self.dtype, self.weak_type)

    @classmethod
    def like(cls, x):
        """The shape, dtype and weak type of ``x`` (an array, tracer, scalar or struct)."""
        if isinstance(x, ShapeDtypeStruct):
            return cls(x.shape, x.dtype, x.weak_type, x.sharding)
        if isinstance(x, (list, tuple, dict)) or not (hasattr(x, "dtype") or np.isscalar(x)):
            raise TypeError(f"Cannot interpret value of type {type(x)} as an abstract array; it "
                            "does not have a dtype attribute")
        aval = core.get_aval(x)
        return cls(aval.shape, aval.dtype, aval.weak_type)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def jit(fun=None, *, in_shardings=None, out_shardings=None, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, keep_unused=False, device=None, backend=None,
        inline=False):
    if fun is None:
        return functools.partial(jit, in_shardings=in_shardings, out_shardings=out_shardings,
                                 static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 keep_unused=keep_unused, inline=inline)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    return PjitFunction(fun, static_argnums, static_argnames, donate_argnums, keep_unused, inline,
                        donate_argnames, in_shardings, out_shardings)


# ---------------------------------------------------------------- make_jaxpr

def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_util.flatten_traced(_key_structs_as_data((tuple(dyn), kwargs)))
        names = pe.arg_names_of(fun, len(args))
        leaf_names = [names[i] if i < len(names) else f"args[{i}]" for i, a in enumerate(args)
                      if i not in static for _ in tree_util.leaves_traced(a)]
        _check_jit_args(fun, [x if not isinstance(x, ShapeDtypeStruct) else 0.0 for x in leaves], leaf_names)
        avals = [_abstractify(x) for x in leaves]

        def with_statics(a, kw):
            it = iter(a)
            return fun(*[args[i] if i in static else next(it) for i in range(len(args))], **kw)
        flat_fun, out_tree = flatten_fun_nokwargs(with_statics, in_tree, traced_for=(fun, "make_jaxpr"))
        with contextlib.ExitStack() as bound:      # axis_env: names collectives may use
            from .lax.parallel import bind_pmap_axis
            for axis_name, axis_size in axis_env or ():
                bound.enter_context(bind_pmap_axis(axis_name, axis_size))
            closed = pe.trace_to_jaxpr(flat_fun, avals, pe.debug_info(fun, "make_jaxpr", names))
        if return_shape:
            return closed, _shape_structs(out_tree[0], closed.out_avals)
        return closed
    return make


def _shape_structs(out_tree, avals):
    """The ShapeDtypeStructs of traced outputs; a typed key's data becomes a key struct."""
    from ._prng import PRNGKeyArray, key_dtype_fry
    shapes = tree_util.tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                                 for a in avals])
    return tree_util.tree_map(lambda s: ShapeDtypeStruct(s._base.shape[:-1], key_dtype_fry)
                              if isinstance(s, PRNGKeyArray) else s, shapes)


def _key_structs_as_data(tree):
    """ShapeDtypeStructs of key dtype (what eval_shape returns for keys) as keys over a uint32
    data struct, so they trace as typed keys do."""
    from ._prng import KeyDtype, PRNGKeyArray
    return tree_util.tree_map(
        lambda s: PRNGKeyArray(ShapeDtypeStruct((*s.shape, 2), np.uint32))
        if isinstance(s, ShapeDtypeStruct) and isinstance(s.dtype, KeyDtype) else s, tree)


def _abstractify(x):
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    return core.ShapedArray(*dispatch.leaf_signature(x))


def eval_shape(fun, *args, **kwargs):
    closed, shapes = make_jaxpr(fun, return_shape=True)(*args, **kwargs)
    return shapes


# ---------------------------------------------------------------- jax.Device, device_get, typeof

def device_get(x):
    """Copy every array leaf of ``x`` to a NumPy array (non-array leaves pass through)."""
    return tree_util.tree_map(lambda v: np.asarray(v) if isinstance(v, Array) else v, x)


def typeof(x):
    """The abstract value (shape, dtype, weak type) of ``x``."""
    return core.get_aval(x)
