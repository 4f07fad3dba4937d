"""Persistent, content-addressed store for generated Numba modules.

Numba cannot cache functions created with ``exec`` (numba/numba#3501): its
cache locators need a real source file.  So every generated module is written
to ``<root>/<env-key>/<hint>_<hash>.py`` and imported from there; Numba's
``cache=True`` then keeps the object code in the ``__pycache__`` beside it
and a later process that loads the same source skips compilation.

Public API: ``cache_dir()``, ``load_module(source, name_hint)``, ``clear()``.
"""
import atexit
import contextlib
import functools
import hashlib
import importlib.abc
import importlib.util
import os
import pathlib
import platform
import re
import shutil
import stat
import sys
import tempfile
import threading
import types
import warnings

__all__ = ["cache_dir", "load_module", "clear", "CacheWarning"]

_PKG = "numjax._generated"          # sys.modules prefix of loaded modules
_KEY_DIR = re.compile(r"[0-9a-f]{16}")  # what clear() may delete under root
_MISSING = "missing"

_lock = threading.RLock()  # re-entrant: generated code may load modules
_modules = {}           # sha256 hex digest -> module (the in-process cache)
_checked_dirs = set()   # entry dirs already verified in this process
_private_root = None    # per-process temp dir used when persistence is off


class CacheWarning(UserWarning):
    """A cache entry was unusable (corrupt, foreign, unwritable) and redone."""


# --------------------------------------------------------------------------
# Where the cache lives
# --------------------------------------------------------------------------

def cache_dir() -> pathlib.Path | None:
    """Root of the persistent cache, or None when persistence is disabled."""
    return _user_root() if persistent_enabled() else None


def persistent_enabled() -> bool:
    """False if NUMJAX_PERSISTENT_CACHE=0 or numjax.config says so."""
    env = os.environ.get("NUMJAX_PERSISTENT_CACHE", "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return False
    return bool(_config_flag())


def _config_flag():
    # Imported lazily: numjax.config may import things that import us.
    try:
        from numjax import config
    except ImportError:
        return True
    # ``config`` is either the module or the Config object it exports.
    holder = getattr(config, "config", config)
    return getattr(holder, "numjax_persistent_cache", True)


def _user_root():
    # Absolute, because Numba's locator checks os.path.exists(co_filename).
    return pathlib.Path(os.path.abspath(_configured_root()))


def _configured_root():
    env = os.environ.get("NUMJAX_CACHE_DIR")
    if env:
        return pathlib.Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return pathlib.Path(xdg) / "numjax"
    try:
        import platformdirs
    except ImportError:
        return pathlib.Path.home() / ".cache" / "numjax"
    return pathlib.Path(platformdirs.user_cache_dir("numjax"))


@functools.lru_cache(maxsize=None)
def _env_key():
    """Everything besides the source that decides the compiled code.

    Object code from another numba/llvmlite/Python or another CPU must never
    be picked up, so these go into both the file hash and the directory.
    """
    import llvmlite
    import numba
    try:
        from numjax import __version__ as numjax_version
    except ImportError:
        numjax_version = "0"
    parts = [numjax_version, numba.__version__, llvmlite.__version__,
             sys.version, sys.implementation.cache_tag, _cpu_key(), _helpers_key()]
    return "\n".join(str(p) for p in parts)


def _helpers_key():
    """Generated code calls Numba functions of these modules, whose object code is linked
    into each cached entry: an edit to them must not load entries built from the old code."""
    here = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in ("vmath.py", "scalar_helpers.py", "special_helpers.py", "kernels.py",
                 "linalg_kernels.py", "sort_kernels.py"):
        path = here / name
        if path.exists():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cpu_key():
    # llvmlite.binding is already imported by numba and these two calls cost
    # well under a millisecond (measured), so no need to avoid them.
    from numba.core import config
    try:
        import llvmlite.binding as llvm
        name = config.CPU_NAME or llvm.get_host_cpu_name()
        features = config.CPU_FEATURES or llvm.get_host_cpu_features().flatten()
    except Exception:  # exotic platform without host queries
        name, features = platform.machine(), ""
    return f"{name}|{features}"


def _entry_dir():
    """The directory new entries go to, created and checked on first use."""
    if not persistent_enabled():
        return _temp_root()
    key_hash = hashlib.sha256(_env_key().encode()).hexdigest()[:16]
    path = _user_root() / key_hash
    if path in _checked_dirs and path.is_dir():
        return path
    try:
        _make_private_dir(path)
    except OSError as exc:
        warnings.warn(f"numjax cache dir {path} unusable ({exc}); "
                      "using a temporary one", CacheWarning, stacklevel=4)
        return _temp_root()
    _checked_dirs.add(path)
    return path


def _make_private_dir(path):
    # The dir holds pickles Numba will load, so nobody else may write there.
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or not _owned_by_me(st):
        raise PermissionError(f"{path} is not a directory owned by this user")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def _temp_root():
    # Still real files (Numba needs them), but gone when the process exits.
    global _private_root
    if _private_root is None:
        _private_root = pathlib.Path(tempfile.mkdtemp(prefix="numjax-"))
        atexit.register(shutil.rmtree, _private_root, ignore_errors=True)
    return _private_root


def _owned_by_me(st):
    getuid = getattr(os, "getuid", None)  # absent on Windows
    return getuid is None or st.st_uid == getuid()


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------

def load_module(source: str, name_hint: str = "prog") -> types.ModuleType:
    """Import ``source`` from the cache, writing it there first if needed.

    The same source always yields the same module object in a process.
    """
    data = source.encode("utf-8")
    digest = hashlib.sha256(data + _env_key().encode()).hexdigest()
    with _lock:
        module = _modules.get(digest)
        if module is None:
            stem = f"{_clean_hint(name_hint)}_{digest[:20]}"
            module = _load_fresh(data, stem)
            _modules[digest] = module
    return module


def _clean_hint(name_hint):
    return re.sub(r"\W", "_", name_hint, flags=re.ASCII)[:48] or "prog"


def _load_fresh(data, stem):
    directory = _entry_dir()
    persistent = directory != _private_root
    path = directory / f"{stem}.py"
    try:
        _ensure_entry(path, data)
    except OSError as exc:
        if not persistent:
            raise
        warnings.warn(f"numjax cache: cannot write {path} ({exc}); using a "
                      "temporary copy", CacheWarning, stacklevel=3)
        path, persistent = _temp_root() / path.name, False
        _ensure_entry(path, data)
    module = _import(path, data, f"{_PKG}.{stem}")
    _adjust_numba_caches(module, persistent)
    return module


def _ensure_entry(path, data):
    """Make ``path`` hold exactly ``data``; leave good files untouched.

    Untouched matters: Numba's cache stamps (mtime/size or content) come from
    this file, so rewriting it needlessly could invalidate the object code.
    """
    problem = _entry_problem(path, data)
    if problem is None:
        return
    if problem != _MISSING:
        warnings.warn(f"numjax cache entry {path} {problem}; rewriting it",
                      CacheWarning, stacklevel=4)
    _write_atomic(path, data)


def _entry_problem(path, data):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _MISSING
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if not _owned_by_me(st):
        return f"is owned by uid {st.st_uid}, not by this user"
    with open(path, "rb") as f:
        on_disk = f.read(len(data) + 1)  # +1 so a longer file is caught too
    if on_disk != data:
        return "does not match the generated source (truncated or corrupt)"
    return None


def _write_atomic(path, data):
    # Readers see the old file or the complete new one, never a prefix; two
    # processes racing write identical bytes, so either replace() wins.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _VerifiedSourceLoader(importlib.abc.Loader):
    """Executes the bytes we just verified, not whatever the file holds now.

    That closes the gap between checking the file and reading it again, and
    skips the .pyc layer (whose mtime+size check could in principle accept
    bytecode from an earlier, corrupt version of the file).  ``co_filename``
    is still the real path, which is what Numba's cache locator needs.
    """

    def __init__(self, path, data):
        self._path, self._data = path, data

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code = compile(self._data, self._path, "exec", dont_inherit=True)
        exec(code, module.__dict__)

    def get_source(self, fullname):
        return self._data.decode("utf-8")


def _import(path, data, name):
    loader = _VerifiedSourceLoader(str(path), data)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    # Numba rebuilds cached environments with importlib.import_module(
    # __name__), which finds the module here without importing parents.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


# --------------------------------------------------------------------------
# Numba's own cache files
# --------------------------------------------------------------------------

def _adjust_numba_caches(module, persistent):
    """Make corrupt Numba cache files recompile instead of crash.

    Numba unpickles ``__pycache__/*.nbi``/``*.nbc`` without catching
    errors, so a truncated file raises on every call.  When persistence is
    off, the cache is disabled so nothing is saved at all.
    """
    if "numba" not in sys.modules:
        return
    from numba.core.caching import Cache
    from numba.core.dispatcher import Dispatcher
    for obj in list(vars(module).values()):
        cache = getattr(obj, "_cache", None)
        if not isinstance(obj, Dispatcher) or not isinstance(cache, Cache):
            continue
        if persistent:
            cache.load_overload = functools.partial(
                _tolerant_load, cache, cache.load_overload)
        else:
            cache.disable()


def _tolerant_load(cache, load, sig, target_context):
    """``Cache.load_overload`` that reports a miss instead of raising."""
    try:
        return load(sig, target_context)
    except Exception as exc:
        warnings.warn(f"numjax: unreadable Numba cache entry in "
                      f"{cache.cache_path} ({exc!r}); recompiling",
                      CacheWarning, stacklevel=2)
        _reset_numba_cache(cache)
        return None  # Numba compiles, then saves a fresh entry


def _reset_numba_cache(cache):
    # Numba's save re-reads the index first, so a corrupt index would make
    # the save after recompiling raise too: replace it with an empty one.
    # The recompiled data file then overwrites a corrupt .nbc.
    try:
        cache.flush()
    except OSError:
        cache.disable()


# --------------------------------------------------------------------------
# Maintenance
# --------------------------------------------------------------------------

def clear() -> None:
    """Forget loaded modules and delete our entry directories under root.

    Only directories named like our environment keys are removed, so a root
    pointed at a shared directory by NUMJAX_CACHE_DIR is never wiped.
    """
    global _private_root
    with _lock:
        _modules.clear()
        _checked_dirs.clear()
        root = _user_root()
        if root.is_dir():
            for child in root.iterdir():
                if _KEY_DIR.fullmatch(child.name) and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
            with contextlib.suppress(OSError):
                root.rmdir()  # only succeeds if nothing else is left
        if _private_root is not None:
            shutil.rmtree(_private_root, ignore_errors=True)
            _private_root = None
