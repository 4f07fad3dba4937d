"""Persistent cache of compiled code: verified before it is loaded, bounded in size.

Everything lives under one root (``cache_dir()``: ``NUMJAX_CACHE_DIR``, else the user's
cache directory), in directories private to the user (mode 0700):

* **byte entries** (``read_entry``/``write_entry``): opaque payloads such as object code,
  ``<root>/entries/<kind>/<key>.bin``, each behind a header (magic, format, payload length,
  sha256 of the payload) that is checked, with the file's owner and mode, on every read.
* **generated Numba modules** (``load_module``): Numba cannot cache functions created with
  ``exec`` (numba/numba#3501), its cache locators need a real source file.  So each
  generated module is written to ``<root>/<env-key>/<hint>_<hash>.py`` and imported from
  there; Numba's ``cache=True`` keeps its object code in the ``__pycache__`` beside it.
* **Numba's cache of numjax's own modules** (``kernels``, ``vmath``, ...): a cache locator
  registered with Numba (``numba_cache.route_numba_caches``) sends it to
  ``<root>/<env-key>/numba/``, so nothing is written to ``~/.cache/numba`` or next to the
  installed sources.  ``numba_cache`` also checks what Numba loads from these caches.

Trust: every file is checked before it is loaded (byte entries, generated modules, and
Numba's index and data files through ``numba_cache``): a regular file owned by this user,
not writable by group or others, in a directory that is ours and private.  A file that fails
is ignored and replaced by a fresh compile.  A directory of ours found writable by others is
tightened to 0700 and emptied (its files could have been swapped while it was open).  A
directory owned by another user cannot be repaired: the process moves to its own
``<root>/user-<uid>`` and keeps caching there.  Each kind of trust problem is reported with
one ``CacheWarning`` per process, however many files it affects.

Writes are atomic (a 0600 temp file, fsync, rename).  The total size is bounded by
``numjax.config.numjax_cache_max_bytes``: least-recently-used entries are evicted
(``_evict``).  An unusable root gives one ``CacheWarning`` and an in-memory cache.

Public API: ``cache_dir()``, ``read_entry``, ``write_entry``, ``load_module``, ``clear()``.
"""
import atexit
import contextlib
import functools
import hashlib
import os
import pathlib
import platform
import re
import shutil
import stat
import struct
import sys
import tempfile
import threading
import time
import types
import warnings

__all__ = ["cache_dir", "read_entry", "write_entry", "load_module", "clear", "CacheWarning"]

_PKG = "numjax._generated"              # sys.modules prefix of loaded modules
_KEY_DIR = re.compile(r"[0-9a-f]{16}")  # environment-key directories under root
_FALLBACK_DIR = re.compile(r"user-[0-9]+")  # a user's own base when root holds foreign dirs
_ENTRIES = "entries"                    # byte entries: <root>/entries/<kind>/<key>.bin
_LIBRARY = "numba"                      # <root>/<env-key>/numba: Numba's cache of our modules
_KIND = re.compile(r"[a-z][a-z0-9_]{0,31}")
_KEY = re.compile(r"[0-9a-f]{16,128}")
_MISSING = "missing"
# Bumped when entries written by an older numjax must never be loaded: 2 = programs saved
# before numjax restored Numba's reload_init (see _restore_reload_init).
_LAYOUT_VERSION = 2
_DEFAULT_MAX_BYTES = 1 << 30

_lock = threading.RLock()  # re-entrant: generated code may load modules
_private_root = None       # per-process temp dir (persistence off, or root unusable)


class CacheWarning(UserWarning):
    """A cache entry or directory was unusable (corrupt, foreign, unwritable)."""


class _ProcessState:
    """What this process remembers about the cache (tests replace it to act as a new process)."""

    def __init__(self):
        self.modules = {}          # sha256 hex digest -> generated module
        self.checked_dirs = set()  # directories verified private in this process
        self.unusable = False      # the root failed once: warned, memory only from now on
        self.memory_entries = {}   # (kind, key) -> payload, when nothing goes to disk
        self.touched = set()       # entries whose mtime this process already refreshed
        self.size_estimate = None  # bytes under root; None until this process scans
        self.writes_since_scan = 0
        self.base = None           # <root>/user-<uid> once a foreign directory was met
        self.warned = set()        # kinds of trust problem already reported


_proc = _ProcessState()


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
    return bool(_config_value("numjax_persistent_cache", True))


def _config_value(name, default):
    # Imported lazily: numjax.config may import things that import us.
    try:
        from numjax import config
    except ImportError:
        return default
    # ``config`` is either the module or the Config object it exports.
    holder = getattr(config, "config", config)
    return getattr(holder, name, default)


def _max_bytes():
    env = os.environ.get("NUMJAX_CACHE_MAX_BYTES")
    return int(_config_value("numjax_cache_max_bytes", int(env) if env else _DEFAULT_MAX_BYTES))


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
    """Everything besides the source that decides the compiled code of a Numba module.

    Object code from another numba/llvmlite/Python or another CPU must never
    be picked up, so these go into both the file hash and the directory.
    """
    import llvmlite
    import numba
    try:
        from numjax import __version__ as numjax_version
    except ImportError:
        numjax_version = "0"
    parts = [numjax_version, numba.__version__, llvmlite.__version__, _LAYOUT_VERSION,
             sys.version, sys.implementation.cache_tag, _cpu_key(), _helpers_key()]
    return "\n".join(str(p) for p in parts)


def _helpers_key():
    """Generated code calls Numba functions of these modules, whose object code is linked
    into each cached entry: an edit to them must not load entries built from the old code."""
    here = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in ("vmath.py", "vmath_sincos.py", "scalar_helpers.py", "special_helpers.py", "kernels.py",
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


# --------------------------------------------------------------------------
# Private directories, and the fallback when the root is unusable
# --------------------------------------------------------------------------

class _ForeignDirectory(PermissionError):
    """A directory of the cache layout that belongs to another user (or is not a directory)."""


def _base():
    """Where our directories live: the root, or this user's ``<root>/user-<uid>`` after a
    directory of ours under the root turned out to belong to someone else."""
    return _proc.base or _user_root()


def _env_dirname():
    return hashlib.sha256(_env_key().encode()).hexdigest()[:16]


def _entry_dir():
    """The directory generated Numba modules go to, created and checked on first use."""
    if not persistent_enabled() or _proc.unusable:
        return _temp_root()
    return _private_dir(_env_dirname()) or _temp_root()


def _private_dir(*parts):
    """``<base>/<parts>`` created private and writable, or None after the one warning.

    A foreign directory on the way moves this process to its fallback base (one warning)
    and is tried again there; anything else unusable keeps the process in memory."""
    for _ in range(2):
        path = _base().joinpath(*parts)
        if path in _proc.checked_dirs and path.is_dir():
            return path
        try:
            _make_private_dirs(path)
            tempfile.TemporaryFile(dir=path).close()  # mode bits say nothing to e.g. a read-only mount
        except _ForeignDirectory as exc:
            if _proc.base is None and _use_fallback(exc):
                continue
            _mark_unusable(exc)
            return None
        except OSError as exc:
            _mark_unusable(exc)
            return None
        _proc.checked_dirs.add(path)
        return path
    return None


def _use_fallback(exc):
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return False
    with _lock:
        _proc.base = _user_root() / f"user-{getuid()}"
        _proc.checked_dirs.clear()
        _proc.size_estimate = None
    _warn_once("foreign-dir", f"numjax: {exc}; this process caches compiled code in "
               f"{_proc.base} instead", stacklevel=5)
    return True


def _make_private_dirs(path):
    # These dirs hold code this process will load, so nobody else may write there.  The
    # root itself may be shared (NUMJAX_CACHE_DIR=/tmp): created private, never chmod-ed.
    root = _user_root()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        _make_private_dir(current)


def _make_private_dir(path):
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    _check_private(path)


def _check_private(path):
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or not _owned_by_me(st):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "a symlink or file"
        raise _ForeignDirectory(f"cache directory {path} is {what} owned by uid {st.st_uid}, "
                                "not a directory of this user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        _secure_open_dir(path, st)
    elif stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def _secure_open_dir(path, st):
    """A directory of ours that others could write: tighten it, then drop its files (any of
    them may have been swapped for another, or planted, while it was open)."""
    os.chmod(path, 0o700)
    with contextlib.suppress(OSError), os.scandir(path) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    _warn_once("open-dir", f"numjax: cache directory {path} was writable by group or others "
               f"(mode {stat.S_IMODE(st.st_mode):04o}); its files were not trusted and are "
               "recompiled, and its mode is back to 0700", stacklevel=5)


def _dir_trusted(path):
    """Checked before each load from ``path``: a directory of ours that nobody else can
    write (one that could is repaired and emptied first).  False: load nothing from it."""
    try:
        _check_private(path)
    except _ForeignDirectory as exc:
        _warn_once("foreign-dir", f"numjax: {exc}; nothing is loaded from it", stacklevel=4)
        return False
    except OSError:
        return False
    return True


def _warn_once(kind, message, stacklevel=3):
    """One ``CacheWarning`` per process for each kind of trust problem: a cache with a
    hundred foreign or open files says so once, not a hundred times."""
    with _lock:
        if kind in _proc.warned:
            return
        _proc.warned.add(kind)
    warnings.warn(message + " (further cache files with this problem are handled without "
                  "another warning in this process)", CacheWarning, stacklevel=stacklevel)


def _mark_unusable(exc):
    """Warn once per process, then keep everything in memory (and a private temp dir)."""
    with _lock:
        if _proc.unusable:
            return
        _proc.unusable = True
    reason = exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)
    warnings.warn(f"numjax: cache directory {_user_root()} is not writable ({reason}); "
                  "compiled code is kept in memory only for this process",
                  CacheWarning, stacklevel=4)


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


def _write_atomic(path, data):
    with open_private_for_write(path) as f:
        f.write(data)


@contextlib.contextmanager
def open_private_for_write(path):
    """A file object whose contents replace ``path`` (mode 0600) when the block ends.

    Readers see the old file or the complete new one, never a prefix; two processes racing
    write identical bytes, so either replace() wins.  A process killed here leaves only the
    *.tmp file, which no reader opens and eviction removes later."""
    path = pathlib.Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _touch_once(path):
    """Record a use for LRU eviction: one utime per entry and process."""
    if path not in _proc.touched:
        _proc.touched.add(path)
        with contextlib.suppress(OSError):
            os.utime(path)


# --------------------------------------------------------------------------
# Byte entries
# --------------------------------------------------------------------------

_MAGIC = b"NJXC"
_FORMAT = 1
# magic, format, reserved, payload length, sha256(payload)
_HEADER = struct.Struct("<4sHHQ32s")


class _Rejected(Exception):
    """An entry that exists but must not be used; the message says why.  ``untrusted``:
    who may have written it is in doubt (owner, mode, symlink), rather than its bytes."""

    def __init__(self, message, untrusted=False):
        super().__init__(message)
        self.untrusted = untrusted


def read_entry(kind: str, key: str) -> bytes | None:
    """The payload stored under (kind, key), verified; None on a miss or a rejected entry.

    A rejected entry (corrupt, truncated, foreign, writable by others) is removed with a
    ``CacheWarning`` (one per process for the untrusted ones); the caller recompiles and
    writes it again.
    """
    _check_names(kind, key)
    directory = _kind_dir(kind)
    if directory is None:
        return _proc.memory_entries.get((kind, key))
    path = directory / f"{key}.bin"
    if not _dir_trusted(directory):
        return _proc.memory_entries.get((kind, key))
    try:
        payload = _read_verified(path)
    except FileNotFoundError:
        return None
    except _Rejected as exc:
        _reject(path, exc)
        return None
    _touch_once(path)
    return payload


def write_entry(kind: str, key: str, payload: bytes) -> None:
    """Store ``payload`` under (kind, key), atomically; evict old entries past the limit."""
    _check_names(kind, key)
    payload = bytes(payload)
    directory = _kind_dir(kind)
    if directory is not None and _dir_trusted(directory):
        path = directory / f"{key}.bin"
        blob = _HEADER.pack(_MAGIC, _FORMAT, 0, len(payload), hashlib.sha256(payload).digest())
        try:
            _write_atomic(path, blob + payload)
        except OSError as exc:
            _mark_unusable(exc)
        else:
            _proc.touched.add(path)  # just written: its mtime is fresh
            _note_write(len(blob) + len(payload))
            return
    _proc.memory_entries[(kind, key)] = payload


def _check_names(kind, key):
    # Both become path components: nothing that could climb out of the cache.
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise ValueError(f"cache entry kind must match {_KIND.pattern}, got {kind!r}")
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"cache entry key must be a lowercase hex digest, got {key!r}")


def _kind_dir(kind):
    """``<base>/entries/<kind>``, or None when entries stay in memory."""
    if not persistent_enabled() or _proc.unusable:
        return None
    return _private_dir(_ENTRIES, kind)


def _read_verified(path):
    # O_NOFOLLOW: a planted symlink fails to open; O_NONBLOCK: a planted FIFO cannot hang us.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _Rejected(f"cannot be opened ({exc.strerror})", untrusted=True) from None
    with os.fdopen(fd, "rb") as f:
        problem = _file_problem(os.fstat(f.fileno()))
        if problem:
            raise _Rejected(problem, untrusted=True)
        return _unpack(f.read())


def _file_problem(st):
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if not _owned_by_me(st):
        return f"is owned by uid {st.st_uid}, not by this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "is writable by group or others"
    return None


def _unpack(blob):
    if len(blob) < _HEADER.size:
        raise _Rejected("is truncated (incomplete header)")
    magic, version, _, length, digest = _HEADER.unpack_from(blob)
    if magic != _MAGIC:
        raise _Rejected("has no numjax cache header")
    if version != _FORMAT:
        raise _Rejected(f"has format {version}, expected {_FORMAT}")
    payload = blob[_HEADER.size:]
    if len(payload) != length:
        raise _Rejected(f"is truncated or padded ({len(payload)} payload bytes, "
                        f"header says {length})")
    if hashlib.sha256(payload).digest() != digest:
        raise _Rejected("fails its sha256 check (corrupt)")
    return payload


def _reject(path, exc):
    message = f"numjax: cache entry {path} {exc}; ignoring it and recompiling"
    if exc.untrusted:
        _warn_once("untrusted-file", message, stacklevel=4)
    else:
        warnings.warn(message, CacheWarning, stacklevel=3)
    with contextlib.suppress(OSError):
        os.unlink(path)


def file_problem(path):
    """Why the existing file ``path`` must not be loaded (it or its directory is not private
    to this user), or None; a missing file is None too (a plain miss).  A file that fails
    is removed where the directory is ours, so the fresh compile takes its place."""
    if not os.path.lexists(path):
        return None
    if not _dir_trusted(os.path.dirname(path)):
        return "is in a directory that is not private to this user"
    try:
        st = os.lstat(path)  # after the directory check: an open directory was emptied
    except FileNotFoundError:
        return "was in a directory others could write"
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    problem = _file_problem(st)
    if problem:
        _warn_once("untrusted-file", f"numjax: cache file {path} {problem}; ignoring it and "
                   "recompiling", stacklevel=4)
        with contextlib.suppress(OSError):
            os.unlink(path)
    return problem


def ensure_private_path(path):
    """Numba's cache directory ``path`` (under the base or the temp root) made private;
    False where it cannot be (then nothing is saved there)."""
    path = pathlib.Path(path)
    if _private_root is not None and (path == _private_root or _private_root in path.parents):
        with contextlib.suppress(OSError):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return _dir_trusted(path)
    try:
        parts = path.relative_to(_base()).parts
    except ValueError:
        return False  # under a base this process has left
    return _private_dir(*parts) == path


# --------------------------------------------------------------------------
# Generated Numba modules
# --------------------------------------------------------------------------

def load_module(source: str, name_hint: str = "prog") -> types.ModuleType:
    """Import ``source`` from the cache, writing it there first if needed.

    The same source always yields the same module object in a process.
    """
    data = source.encode("utf-8")
    digest = hashlib.sha256(data + _env_key().encode()).hexdigest()
    with _lock:
        module = _proc.modules.get(digest)
        if module is None:
            stem = f"{_clean_hint(name_hint)}_{digest[:20]}"
            module = _load_fresh(data, stem)
            _proc.modules[digest] = module
    return module


def _clean_hint(name_hint):
    return re.sub(r"\W", "_", name_hint, flags=re.ASCII)[:48] or "prog"


def _module_dir():
    """The directory of generated modules, with the ``__pycache__`` for Numba's files made
    private here first (Numba would create it with the umask's mode).  Checking it may
    move this process to its fallback base, or to memory: then the directory is asked again."""
    while True:
        directory = _entry_dir()
        if directory == _private_root:
            return directory
        if _private_dir(directory.name, "__pycache__") == directory / "__pycache__":
            return directory


def _load_fresh(data, stem):
    path = _module_dir() / f"{stem}.py"
    persistent = path.parent != _private_root
    try:
        _ensure_entry(path, data)
    except OSError as exc:
        if not persistent:
            raise
        _mark_unusable(exc)
        path, persistent = _temp_root() / path.name, False
        _ensure_entry(path, data)
    module = _import(path, data, f"{_PKG}.{stem}")
    from .numba_cache import adjust_numba_caches
    adjust_numba_caches(module, persistent)
    return module


def _ensure_entry(path, data):
    """Make ``path`` hold exactly ``data``; leave good files untouched.

    Untouched matters: older Numbas stamp their cache with the source file's
    mtime and size, so rewriting it needlessly would invalidate the object code.
    """
    problem = _entry_problem(path, data)
    if problem is None:
        return
    if problem == _CORRUPT:
        warnings.warn(f"numjax cache entry {path} {problem}; rewriting it",
                      CacheWarning, stacklevel=4)
    elif problem != _MISSING:
        _warn_once("untrusted-file", f"numjax cache entry {path} {problem}; rewriting it",
                   stacklevel=5)
    _write_atomic(path, data)
    if path.parent != _private_root:
        _note_write(len(data))


def _entry_problem(path, data):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _MISSING
    problem = _file_problem(st)
    if problem:
        return problem
    with open(path, "rb") as f:
        on_disk = f.read(len(data) + 1)  # +1 so a longer file is caught too
    if on_disk != data:
        return _CORRUPT
    return None


_CORRUPT = "does not match the generated source (truncated or corrupt)"


class _VerifiedSourceLoader:
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
    import importlib.util   # not at module level: the LLVM backend's warm path needs none of it
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
# Size limit: least-recently-used eviction
# --------------------------------------------------------------------------

_RESCAN_EVERY = 64          # writes between two scans of the tree
_EVICT_TO = 0.9             # evict down to this fraction of the limit
_STALE_TEMP_SECONDS = 3600  # a temp file this old belongs to a dead writer


def _note_write(nbytes):
    """Count a write; scan and evict at the first write of a process, every
    ``_RESCAN_EVERY`` writes, or when the running estimate passes the limit."""
    with _lock:
        limit = _max_bytes()
        _proc.writes_since_scan += 1
        if _proc.size_estimate is not None:
            _proc.size_estimate += nbytes
            if _proc.writes_since_scan < _RESCAN_EVERY and _proc.size_estimate <= limit:
                return
        _proc.size_estimate = _evict(_base(), limit)
        _proc.writes_since_scan = 0


def _evict(root, limit, now=None):
    """Delete stale temp files, then least-recently-used entries while the total under
    ``root`` exceeds ``limit``, down to ``_EVICT_TO * limit``.  Returns the total left."""
    now = time.time() if now is None else now
    groups, kept = {}, 0
    for path, st in _cache_files(root):
        if ".tmp" in path.name:  # ours (name.XXXX.tmp) and Numba's (name.tmp.XXXX)
            if now - st.st_mtime > _STALE_TEMP_SECONDS:
                with contextlib.suppress(OSError):
                    path.unlink()
            else:
                kept += st.st_size
            continue
        group = _eviction_group(root, path)
        if group is None:  # the numerics library: always needed
            kept += st.st_size
            continue
        mtime, size, paths = groups.get(group, (0.0, 0, []))
        groups[group] = (max(mtime, st.st_mtime), size + st.st_size, paths + [path])
    total = kept + sum(size for _, size, _ in groups.values())
    if total <= limit:
        return total
    for mtime, size, paths in sorted(groups.values(), key=lambda g: g[0]):
        if total <= _EVICT_TO * limit:
            break
        for path in paths:
            with contextlib.suppress(OSError):
                path.unlink()
        total -= size
    return total


def _cache_files(root):
    """(path, stat) of every file in our directories under root; symlinks not followed."""
    try:
        tops = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)
                and (_KEY_DIR.fullmatch(e.name) or e.name == _ENTRIES)]
    except OSError:
        return
    stack = [pathlib.Path(e.path) for e in tops]
    while stack:
        directory = stack.pop()
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(pathlib.Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        yield pathlib.Path(entry.path), entry.stat(follow_symlinks=False)


def _eviction_group(root, path):
    """Files evicted together: a byte entry alone; a generated module's .py with its
    ``__pycache__`` files (same stem).  None for what is never evicted."""
    parts = path.relative_to(root).parts
    if parts[0] == _ENTRIES:
        return parts
    if len(parts) >= 2 and parts[1] == _LIBRARY:
        return None
    return parts[0], path.name.split(".")[0]


# --------------------------------------------------------------------------
# Maintenance
# --------------------------------------------------------------------------

def clear() -> None:
    """Forget loaded modules and entries; delete our directories under root.

    Only directories named like ours (environment keys, ``entries``) are removed, so a
    root pointed at a shared directory by NUMJAX_CACHE_DIR is never wiped.
    """
    global _private_root, _proc
    with _lock:
        _proc = _ProcessState()
        root = _user_root()
        if root.is_dir():
            for child in root.iterdir():
                ours = (_KEY_DIR.fullmatch(child.name) or child.name == _ENTRIES
                        or _FALLBACK_DIR.fullmatch(child.name))
                if ours and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
            with contextlib.suppress(OSError):
                root.rmdir()  # only succeeds if nothing else is left
        if _private_root is not None:
            shutil.rmtree(_private_root, ignore_errors=True)
            _private_root = None
