"""Global flags, read like JAX's: ``numjax.config.update('jax_enable_x64', True)``.

Flags are plain attributes so hot paths read them without a lookup function.
``_epoch`` changes on every update; caches that depend on flags key on it.
"""
import os


def _env_flag(*names, default=False):
    for name in names:
        val = os.environ.get(name)
        if val is not None:
            return val.strip().lower() in ("1", "true", "yes", "on")
    return default


class Config:
    def __init__(self):
        self.jax_enable_x64 = _env_flag("JAX_ENABLE_X64", "NUMJAX_ENABLE_X64")
        self.jax_log_compiles = _env_flag("JAX_LOG_COMPILES")
        self.jax_disable_jit = _env_flag("JAX_DISABLE_JIT")
        # JAX 0.10.2's default; False selects the original split/random-bits derivations.
        self.jax_threefry_partitionable = _env_flag("JAX_THREEFRY_PARTITIONABLE", default=True)
        # Accepted so that scripts pinning JAX to the CPU run; numjax only has the CPU.
        self.jax_platform_name = os.environ.get("JAX_PLATFORM_NAME", "")
        self.jax_platforms = os.environ.get("JAX_PLATFORMS")
        self.numjax_persistent_cache = _env_flag("NUMJAX_PERSISTENT_CACHE", default=True)
        # Size limit of the disk cache; least-recently-used entries are evicted past it.
        self.numjax_cache_max_bytes = int(os.environ.get("NUMJAX_CACHE_MAX_BYTES", 1 << 30))
        # Elementwise loops at least this large run with prange; 0 disables.
        self.numjax_parallel_threshold = int(os.environ.get("NUMJAX_PARALLEL_THRESHOLD", 1 << 18))
        self.numjax_num_threads = int(os.environ.get("NUMJAX_NUM_THREADS", 0))
        # Run the LLVM backend's kernels as plain Python (for stepping through them).
        self.numjax_debug_python = _env_flag("NUMJAX_DEBUG_PYTHON")
        self._epoch = 0

    def update(self, name, value):
        if not hasattr(self, name) or name.startswith("_"):
            raise AttributeError(f"Unrecognized config option: {name}")
        setattr(self, name, value)
        self._epoch += 1

    def read(self, name):
        return getattr(self, name)

    @property
    def x64_enabled(self):
        return self.jax_enable_x64


config = Config()
