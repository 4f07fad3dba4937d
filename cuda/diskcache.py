"""Disk cache of compiled CUDA kernels: a later process launches them without compiling.

Kernels are ``exec``'d from generated source strings, so numba-cuda's own file-based cache
(``cache=True``, located from the function's source file) cannot find them.  Instead each
kernel dispatcher made by ``compiler.compile_kernel`` gets a ``KernelCache`` as its
``_cache``: numba-cuda's ``CUDADispatcher.compile`` asks it (``load_overload``) before it
compiles a signature and hands it the freshly compiled, linked kernel (``save_overload``).

* **What is stored**: the kernel's ``_Kernel._reduce_states()`` (what numba-cuda's own cache
  stores): its ``CUDACodeLibrary`` with the NVVM IR, the PTX and the linked cubin, each per
  compute capability, plus signature and launch flags; pickled behind a small header
  naming the entry's key.  A load rebuilds it with ``_Kernel._rebuild`` and launches the
  stored cubin: no NVVM, no linker.
* **Key** (``source_key`` then ``entry_key``): sha256 of the kernel source, the source keys of
  the kernels/device functions it calls (``extra``), the files whose code is compiled into
  every kernel (``device_math``, the CPU helpers it reuses, ``compiler``), the argument
  types, the dispatcher's options, the compute capability, and the versions of numjax,
  numba, numba-cuda, Python, the CUDA driver, runtime and NVVM.
* **Storage and trust**: the byte entries of ``numjax.lowering.diskcache`` (kind
  ``cuda_kernel``), so the CPU cache's rules hold unchanged: one root (``NUMJAX_CACHE_DIR``),
  private 0700 directories, every file checked before it is read (a regular file of this
  user, not writable by group/others, in a private directory; header, length and sha256 of
  the payload), atomic writes (0600 temp file, fsync, rename), the ``user-<uid>`` fallback
  when a directory belongs to someone else, one ``CacheWarning`` per kind of trust problem,
  LRU eviction.  A rejected entry is removed; the kernel is compiled and stored again.
  Nothing is unpickled before those checks pass; after unpickling, the entry must name its
  own key, the requested argument types and a cubin for this device, else it is a miss
  (one warning) and is overwritten.
* **Off** on numba-cuda's simulator (it has no PTX or cubin to store), when
  ``NUMJAX_PERSISTENT_CACHE=0`` or ``numjax.config.numjax_persistent_cache`` is false, and
  when the cache directory cannot be written (the diskcache's one warning; nothing stored).

The key/store/load/verify functions take plain bytes and explicit versions so that they
are tested on the simulator with fake payloads (tests/cuda/test_cuda_diskcache.py).
"""
import functools
import hashlib
import logging
import pathlib
import pickle
import struct
import sys
import threading
import time
import warnings

from numjax.lowering import diskcache as _dc

KIND = "cuda_kernel"            # <root>/entries/cuda_kernel/<key>.bin
_MAGIC = b"NJCK"
_FORMAT = 1                     # bump when the payload layout changes
_HEADER = struct.Struct("<4sH64s")   # magic, format, the entry's own key (hex)
# Modules whose code is compiled into every kernel (device functions, helper source): an edit
# to any of them must not load kernels built from the old code.
_NAMESPACE_MODULES = ("numjax.cuda.device_math", "numjax.cuda.compiler",
                      "numjax.lowering.scalar_helpers", "numjax.lowering.vmath")

logger = logging.getLogger("numjax")
_lock = threading.Lock()
_counts = {"compiled": 0, "loaded": 0}


CacheWarning = _dc.CacheWarning    # one warning class for every numjax cache

# --------------------------------------------------------------------------
# Keys
# --------------------------------------------------------------------------

def _sha256(*parts):
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))  # length-prefixed: no ambiguous joins
        digest.update(data)
    return digest.hexdigest()


def source_key(source, extra_keys=(), namespace=None):
    """What a kernel's source decides: the source, the source keys of what it calls
    (``extra_keys``: (name, key) pairs), and the code every kernel is compiled with."""
    namespace = namespace_version() if namespace is None else namespace
    return _sha256("source", source, namespace, *(f"{n}={k}" for n, k in sorted(extra_keys)))


def entry_key(src_key, argtypes, options, compute_capability, toolchain):
    """The cache key of one compiled signature of a kernel: its source key, the argument
    types, the dispatcher's options, the device's compute capability and the toolchain."""
    types_text = "\n".join(f"{t!s}\t{t!r}" for t in argtypes)
    options_text = repr(sorted((k, repr(v)) for k, v in dict(options).items()))
    return _sha256("entry", _FORMAT, src_key, types_text, options_text,
                   tuple(compute_capability), *toolchain)


@functools.lru_cache(maxsize=None)
def namespace_version():
    """sha256 of the modules compiled into every kernel (read once per process)."""
    import importlib.util
    digest = hashlib.sha256()
    for name in _NAMESPACE_MODULES:
        origin = importlib.util.find_spec(name).origin
        digest.update(name.encode() + b"\0" + pathlib.Path(origin).read_bytes())
    return digest.hexdigest()


def toolchain_versions():
    """Everything besides the source and the device that decides a cubin: numjax, numba,
    numba-cuda, Python, and the CUDA driver, runtime and NVVM versions.  GPU only."""
    import numba
    import numba_cuda
    from numba.cuda.cudadrv import nvvm
    from numba.cuda.cudadrv.driver import driver
    from numba.cuda.cudadrv.runtime import runtime
    from numjax import __version__ as numjax_version
    return (f"numjax {numjax_version}", f"numba {numba.__version__}",
            f"numba-cuda {numba_cuda.__version__}", f"python {sys.version}",
            f"driver {driver.get_version()}", f"runtime {runtime.get_version()}",
            f"nvvm {nvvm.NVVM().get_version()}")


# --------------------------------------------------------------------------
# Storing and loading verified payloads
# --------------------------------------------------------------------------

def enabled(simulator):
    """Whether kernels go to the disk cache: never on the simulator (no PTX or cubin)."""
    return not simulator and _dc.persistent_enabled()


def store(key, payload):
    """Write ``payload`` under ``key`` atomically; False (after the diskcache's one warning)
    where the cache directory cannot be used: then nothing is kept at all."""
    if _dc._kind_dir(KIND) is None:
        return False
    _dc.write_entry(KIND, key, _HEADER.pack(_MAGIC, _FORMAT, key.encode("ascii")) + payload)
    return True


def load(key):
    """The payload stored under ``key``, or None: a miss, or an entry rejected by the
    diskcache's checks (owner, mode, directory, length, sha256; removed with a
    ``CacheWarning``), or one whose header names another key or format (removed, warned)."""
    if _dc._kind_dir(KIND) is None:
        return None
    try:
        blob = _dc.read_entry(KIND, key)
    except OSError as exc:     # e.g. EIO while reading: a miss, never an error
        logger.debug("numjax: CUDA kernel cache entry %s unreadable (%r)", key[:16], exc)
        return None
    if blob is None:
        return None
    if len(blob) >= _HEADER.size:
        magic, version, named = _HEADER.unpack_from(blob)
        if magic == _MAGIC and version == _FORMAT and named == key.encode("ascii"):
            return blob[_HEADER.size:]
        why = f"names key {named[:16]!r}..., format {version}" if magic == _MAGIC else "has no header"
    else:
        why = "is too short for its header"
    discard(key, f"{why} (not an entry of this kernel)")
    return None


def discard(key, why):
    """Warn about and remove the entry ``key`` (verified bytes that are still unusable)."""
    warnings.warn(f"numjax: CUDA kernel cache entry {key[:16]}... {why}; ignoring it and "
                  "recompiling", CacheWarning, stacklevel=3)
    directory = _dc._kind_dir(KIND)
    if directory is not None:
        try:
            (directory / f"{key}.bin").unlink()
        except OSError:
            pass


# --------------------------------------------------------------------------
# Kernels: serialize, rebuild, and the cache a dispatcher asks
# --------------------------------------------------------------------------

def cubin_cc(compute_capability):
    """How numba-cuda's CUDACodeLibrary keys its cubins for a device (its ``_ensure_cc``)."""
    major, minor = compute_capability[:2]
    return (major, minor, "a" if (major, minor) >= (9, 0) else "")


def kernel_states(kernel):
    """The picklable states of a compiled ``_Kernel``, or None for one that must not be
    cached (launch-config sensitive, or linked with files/setup code a load would lose)."""
    library = kernel.library
    if (getattr(kernel, "launch_config_sensitive", False) or library._linking_files
            or library._setup_functions or library._teardown_functions):
        return None
    return kernel._reduce_states()


def rebuild_kernel(key, payload, argtypes, compute_capability):
    """The ``_Kernel`` stored in a verified ``payload``, or None (warned, entry removed) when
    it is not a kernel for these argument types with a cubin for this device."""
    from numba.cuda.dispatcher import _Kernel
    try:
        states = pickle.loads(payload)
        library = states["codelibrary"]
        problem = None
        if tuple(states["signature"].args) != tuple(argtypes):
            problem = f"is for argument types {states['signature'].args}"
        elif states.get("launch_config_sensitive"):
            problem = "is launch-config sensitive"
        elif not library._cubin_cache.get(cubin_cc(compute_capability)):
            problem = f"holds no cubin for compute capability {tuple(compute_capability)}"
        if problem is None:
            return _Kernel._rebuild(**states)
    except Exception as exc:   # noqa: BLE001  (another layout: a miss, never an error)
        problem = f"cannot be rebuilt ({exc!r})"
    discard(key, problem)
    return None


def _count(what):
    with _lock:
        _counts[what] += 1


def counts():
    """{"compiled": n, "loaded": n}: kernels (signatures) compiled and loaded from disk by
    this process through the cache (the GPU test reads these in a child process)."""
    with _lock:
        return dict(_counts)


def _log(name, how):
    from numjax.config import config
    log = logger.warning if getattr(config, "jax_log_compiles", False) else logger.debug
    log("numjax: CUDA kernel %s %s", name, how)


def kernel_cache_class():
    """``KernelCache``, defined on first use (its base class is numba-cuda's)."""
    global _KernelCache
    if _KernelCache is None:
        from numba.cuda.core.caching import _Cache

        class KernelCache(_Cache):
            """What ``CUDADispatcher.compile`` asks before compiling a signature
            (``load_overload``) and tells after (``save_overload``)."""

            def __init__(self, name, src_key, options, compute_capability, toolchain):
                self._name, self._src_key, self._options = name, src_key, dict(options)
                self._cc, self._toolchain = tuple(compute_capability), tuple(toolchain)
                self._enabled = True
                self._started = time.perf_counter()

            def _key(self, sig):
                return entry_key(self._src_key, _argtypes(sig), self._options, self._cc,
                                 self._toolchain)

            @property
            def cache_path(self):
                return str(_dc._base() / _dc._ENTRIES / KIND)

            def load_overload(self, sig, target_context):
                self._started = time.perf_counter()    # a miss is compiled next
                if not self._enabled:
                    return None
                key = self._key(sig)
                payload = load(key)
                kernel = None if payload is None else rebuild_kernel(
                    key, payload, _argtypes(sig), self._cc)
                if kernel is not None:
                    _count("loaded")
                    _log(self._name, "loaded from the disk cache")
                return kernel

            def save_overload(self, sig, kernel):
                elapsed = time.perf_counter() - self._started
                _count("compiled")
                _log(self._name, f"compiled in {elapsed * 1e3:.1f} ms")
                if not self._enabled:
                    return
                from numba.cuda import serialize    # numba-cuda's own cache pickles with it
                try:
                    states = kernel_states(kernel)
                    payload = None if states is None else serialize.dumps(states)
                except Exception as exc:  # noqa: BLE001  (not cachable: it still runs)
                    logger.debug("numjax: CUDA kernel %s not cached (%r)", self._name, exc)
                    return
                if payload is not None and not store(self._key(sig), payload):
                    self._enabled = False     # the directory is unusable (warned once)

            def enable(self):
                self._enabled = True

            def disable(self):
                self._enabled = False

            def flush(self):
                pass     # entries are keyed by content: a recompile writes the same key

        _KernelCache = KernelCache
    return _KernelCache


_KernelCache = None


def _argtypes(sig):
    from numba.core import sigutils
    argtypes, _ = sigutils.normalize_signature(sig)
    return tuple(argtypes)


def install(dispatcher, name, src_key, compute_capability):
    """Give the kernel ``dispatcher`` the disk cache; False (nothing changed) for a device
    function, or when the toolchain cannot be queried."""
    options = getattr(dispatcher, "targetoptions", None)
    if options is None or options.get("device"):
        return False
    try:
        toolchain = _toolchain()
    except Exception as exc:  # noqa: BLE001  (no cache rather than no kernel)
        logger.debug("numjax: CUDA kernel cache off (%r)", exc)
        return False
    dispatcher._cache = kernel_cache_class()(name, src_key, options, compute_capability, toolchain)
    return True


@functools.lru_cache(maxsize=None)
def _toolchain():
    return toolchain_versions()
