"""Global flags, read like JAX's: ``numjax.config.update('jax_enable_x64', True)``.

Flags are plain attributes so hot paths read them without a lookup function. The few
that context managers set (``log_compiles``, ``disable_jit``, ``checking_leaks``) are set
for the calling thread only, as in JAX.
``_epoch`` changes on every update; caches that depend on flags key on it.
"""
import contextlib
import os
import threading


def _env_flag(*names, default=False):
    for name in names:
        val = os.environ.get(name)
        if val is not None:
            return val.strip().lower() in ("1", "true", "yes", "on")
    return default


class _ThreadFlags(threading.local):
    """The scoped flags as the current thread sees them: a class attribute holds the value
    every thread sees, an instance attribute (one per thread) a context manager's setting.
    Hot paths read it directly (``thread_flags.jax_disable_jit``): one attribute lookup."""


thread_flags = _ThreadFlags()


class _ScopedFlag:
    """A flag whose context managers set it for the current thread only, as JAX's do; assigning
    it or ``config.update`` sets the value every thread sees outside such a block. Only flags
    that do not change what a trace produces are scoped: traces are cached on ``_epoch``,
    which a scope does not change."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(thread_flags, self.name)

    def __set__(self, obj, value):
        setattr(_ThreadFlags, self.name, value)


class Config:
    jax_disable_jit = _ScopedFlag()
    jax_log_compiles = _ScopedFlag()
    jax_check_tracer_leaks = _ScopedFlag()
    # ``jax.default_device``: a Device or platform name, or None (the platform's first device).
    jax_default_device = _ScopedFlag()

    def __init__(self):
        self.jax_enable_x64 = _env_flag("JAX_ENABLE_X64", "NUMJAX_ENABLE_X64")
        self.jax_log_compiles = _env_flag("JAX_LOG_COMPILES")
        self.jax_disable_jit = _env_flag("JAX_DISABLE_JIT")
        # JAX 0.10.2's default; False selects the original split/random-bits derivations.
        self.jax_threefry_partitionable = _env_flag("JAX_THREEFRY_PARTITIONABLE", default=True)
        # Accepted so that scripts pinning JAX to the CPU run; numjax only has the CPU.
        self.jax_platform_name = os.environ.get("JAX_PLATFORM_NAME", "")
        self.jax_platforms = os.environ.get("JAX_PLATFORMS")
        self.jax_default_device = None
        self.numjax_persistent_cache = _env_flag("NUMJAX_PERSISTENT_CACHE", default=True)
        # Size limit of the disk cache; least-recently-used entries are evicted past it.
        self.numjax_cache_max_bytes = int(os.environ.get("NUMJAX_CACHE_MAX_BYTES", 1 << 30))
        # Elementwise loops at least this large run with prange; 0 disables.
        self.numjax_parallel_threshold = int(os.environ.get("NUMJAX_PARALLEL_THRESHOLD", 1 << 18))
        # Threads that run numjax's parallel kernels (lowering/cpu_runtime.py), read on every
        # call; also the most BLAS may use while numjax calls it (numjax/blas_threads.py).
        # 0: one per core this process may run on, and BLAS's own setting.
        self.numjax_num_threads = int(os.environ.get("NUMJAX_NUM_THREADS", 0))
        # Idle bytes numjax keeps of the large buffers compiled programs allocate, for the
        # next calls to reuse instead of page-faulting fresh memory in (lowering/buffer_pool.py);
        # 0 turns the pool off.
        self.numjax_buffer_pool_bytes = int(os.environ.get("NUMJAX_BUFFER_POOL_BYTES", 1 << 28))
        # BLAS threads while a compiled program or an eager matmul runs (numjax/blas_threads.py);
        # 0 (the default): BLAS's own; 1 helps on an oversubscribed machine.
        self.numjax_blas_threads = int(os.environ.get("NUMJAX_BLAS_THREADS", 0))
        # Run the LLVM backend's kernels as plain Python (for stepping through them).
        self.numjax_debug_python = _env_flag("NUMJAX_DEBUG_PYTHON")
        # JAX options that libraries and tests set, accepted and recorded; numjax does not act
        # on them (README, "Missing": no NaN/inf checking, no leak checker, rank promotion
        # always allowed).
        self.jax_check_tracer_leaks = _env_flag("JAX_CHECK_TRACER_LEAKS")
        self.jax_debug_nans = _env_flag("JAX_DEBUG_NANS")
        self.jax_debug_infs = _env_flag("JAX_DEBUG_INFS")
        self.jax_numpy_rank_promotion = os.environ.get("JAX_NUMPY_RANK_PROMOTION", "allow")
        self.jax_numpy_dtype_promotion = os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard")
        self.jax_default_matmul_precision = os.environ.get("JAX_DEFAULT_MATMUL_PRECISION")
        self.jax_traceback_filtering = os.environ.get("JAX_TRACEBACK_FILTERING", "auto")
        self.jax_default_prng_impl = os.environ.get("JAX_DEFAULT_PRNG_IMPL", "threefry2x32")
        self.jax_compilation_cache_dir = os.environ.get("JAX_COMPILATION_CACHE_DIR")
        # CPU devices (JAX's flag; -1: NUMJAX_NUM_CPU_DEVICES or XLA_FLAGS decide), fixed once
        # devices are first made.
        self.jax_num_cpu_devices = int(os.environ.get("JAX_NUM_CPU_DEVICES", -1))
        self._epoch = 0

    def update(self, name, value):
        if not hasattr(self, name) or name.startswith("_"):
            raise AttributeError(f"Unrecognized config option: {name}")
        if name in _BEFORE_BACKENDS and getattr(self, name) != value:
            from ._src import xla_bridge
            if xla_bridge._backends:
                raise RuntimeError(f"{name} config should be updated before backends are initialized i.e. before "
                                   "any JAX operation is executed. You should initialize this config immediately "
                                   "after `import jax`.")
        setattr(self, name, value)
        self._epoch += 1

    def read(self, name):
        return getattr(self, name)

    @property
    def x64_enabled(self):
        return self.jax_enable_x64


# Flags read once, when the devices are made.
_BEFORE_BACKENDS = ("jax_num_cpu_devices",)

config = Config()


class scoped(contextlib.ContextDecorator):
    """``with scoped(name, value):`` sets flag ``name`` to ``value`` in this thread for the
    block (other threads keep theirs), as JAX's configuration context managers do; also
    usable as a decorator."""

    def __init__(self, name, value):
        if not isinstance(getattr(Config, name, None), _ScopedFlag):
            raise AttributeError(f"{name} is not a flag that can be set for a block")
        self.name, self.value = name, value

    def _recreate_cm(self):
        return scoped(self.name, self.value)   # a decorated function may be re-entered

    def __enter__(self):
        self.saved = thread_flags.__dict__.get(self.name, _UNSET)   # this thread's setting
        setattr(thread_flags, self.name, self.value)
        return self

    def __exit__(self, *exc):
        if self.saved is _UNSET:
            delattr(thread_flags, self.name)
        else:
            setattr(thread_flags, self.name, self.saved)
        return False


_UNSET = object()



_MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "ANY_F8_ANY_F8_F32",
    "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16",
    "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")


def _check_enum(choices, allow_none=False):
    def check(value):
        if (value is None and allow_none) or value in choices:
            return value
        none = "None or " if allow_none else ""
        raise ValueError(f"new enum value must be {none}in {list(choices)}, got {value} of type {type(value)}.")
    return check


def _check_dtype_promotion(value):
    if value not in ("standard", "strict"):
        raise ValueError(f"{value!r} is not a valid NumpyDtypePromotion")
    return value


class State:
    """JAX's configuration states at the top of the package (``jax.enable_x64``,
    ``jax.numpy_dtype_promotion``, ...): ``.value`` reads the option; calling one gives a context
    manager (also a decorator) that sets it for a block and restores it after. numjax's setting
    holds for the process during the block (JAX's for the calling thread), except for the
    flags that numjax scopes per thread (``_ScopedFlag``)."""

    def __init__(self, name, check=bool):
        self._name, self._check = "jax_" + name, check

    @property
    def value(self):
        return getattr(config, self._name)

    def __call__(self, new_val=True):
        new_val = self._check(new_val)
        if isinstance(getattr(Config, self._name, None), _ScopedFlag):
            return scoped(self._name, new_val)
        return _ProcessSetting(self._name, new_val)


class _ProcessSetting(contextlib.ContextDecorator):
    def __init__(self, name, value):
        self.name, self.value = name, value

    def _recreate_cm(self):
        return _ProcessSetting(self.name, self.value)

    def __enter__(self):
        self.saved = getattr(config, self.name)
        config.update(self.name, self.value)     # (a new epoch: traces made outside do not apply)
        return self

    def __exit__(self, *exc):
        config.update(self.name, self.saved)
        return False


log_compiles = State("log_compiles")
enable_x64 = State("enable_x64")
threefry_partitionable = State("threefry_partitionable")
check_tracer_leaks = State("check_tracer_leaks")
# Accepted and recorded, not acted on (README, "Missing"):
debug_nans = State("debug_nans")
debug_infs = State("debug_infs")
numpy_rank_promotion = State("numpy_rank_promotion", _check_enum(("allow", "warn", "raise")))
numpy_dtype_promotion = State("numpy_dtype_promotion", _check_dtype_promotion)
default_matmul_precision = State("default_matmul_precision", _check_enum(_MATMUL_PRECISIONS, allow_none=True))
default_prng_impl = State("default_prng_impl", _check_enum(("threefry2x32", "rbg", "unsafe_rbg")))
