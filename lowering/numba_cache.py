"""Numba's own cache files, kept under numjax's cache directory and checked on load.

Three jobs, all for ``diskcache``:

* ``route_numba_caches``: a cache locator registered with Numba sends the cache of
  numjax's own ``@njit(cache=True)`` modules (``kernels``, ``vmath``, ...) to
  ``<root>/<env-key>/numba/`` and that of generated modules beside their source, so
  nothing lands in ``~/.cache/numba`` or next to the installed sources.
* the same hook puts numjax's checks into Numba's index/data file reader for every file
  under numjax's cache: an index (``.nbi``) or data file (``.nbc``, both pickles) is read
  only when it and its directory pass ``diskcache.file_problem`` (ours, private), else it is
  a miss; files are written 0600 and atomically; a failed read or write is a miss, never an
  error.
* ``adjust_numba_caches``: what Numba loads from the cache of a generated module is
  checked first: unreadable files, and object code that needs a symbol this process does
  not define, become a miss (one warning, recompiled) instead of an error or a crash.
"""
import contextlib
import functools
import importlib.abc
import importlib.util
import os
import sys
import warnings

from . import diskcache as _dc
from .diskcache import CacheWarning

# A Numba cache data file is about this large; counted per save between rescans.
_NUMBA_SAVE_ESTIMATE = 64 << 10


def adjust_numba_caches(module, persistent):
    """Make the Numba caches of a generated module safe to load.

    When persistence is off, they are disabled so nothing is saved at all.
    """
    if "numba" not in sys.modules:
        return
    from numba.core.caching import Cache
    from numba.core.dispatcher import Dispatcher
    for obj in list(vars(module).values()):
        cache = getattr(obj, "_cache", None)
        if not isinstance(obj, Dispatcher) or not isinstance(cache, Cache):
            continue
        if not persistent:
            cache.disable()
            continue
        cache.load_overload = functools.partial(_tolerant_load, cache, cache.load_overload)
        cache.save_overload = functools.partial(_counted_save, cache.save_overload)
        impl = getattr(cache, "_impl", None)
        if impl is not None:
            impl.rebuild = functools.partial(_checked_rebuild, cache, impl.rebuild)
        index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        if index and os.path.exists(index):
            _dc._touch_once(index)  # the .py is left alone (see _ensure_entry)


def _tolerant_load(cache, load, sig, target_context):
    """``Cache.load_overload`` that reports a miss instead of raising.

    Numba unpickles ``__pycache__/*.nbi``/``*.nbc`` without catching errors, so a
    truncated file would raise on every call.
    """
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


def _counted_save(save, sig, data):
    save(sig, data)
    _dc._note_write(_NUMBA_SAVE_ESTIMATE)


def _checked_rebuild(cache, rebuild, target_context, payload):
    """Numba's ``CompileResult`` rebuild, refused when the object code needs a symbol
    this process does not define (it would jump to a null address when called)."""
    missing = _unresolved_symbols(target_context, payload)
    if missing:
        shown = ", ".join(missing[:4]) + (", ..." if len(missing) > 4 else "")
        warnings.warn(f"numjax: Numba cache entry in {cache.cache_path} needs symbols this "
                      f"process does not define ({shown}); recompiling",
                      CacheWarning, stacklevel=2)
        return None  # a miss: Numba compiles and overwrites the entry
    cres = rebuild(target_context, payload)
    _restore_reload_init(cres)
    return cres


def _restore_reload_init(cres):
    """Give a library loaded from the cache back the initialisers it needs.

    Numba runs ``reload_init`` (e.g. starting the prange thread pool, which defines
    ``numba_parallel_for``) when it loads an entry, but does not put it back on the
    rebuilt library.  A program compiled later in the same process links that library
    and inherits only the library's set, so it is saved without the initialiser; loaded
    alone in a third process it then calls into a thread pool nobody started: SIGSEGV
    (issue #9).  With the set restored, the program's entry records it too.
    """
    library = getattr(cres, "library", None)
    inits = getattr(library, "_reload_init", None)
    if isinstance(inits, set):
        inits.update(getattr(cres, "reload_init", None) or ())


def _unresolved_symbols(target_context, payload):
    """External functions and globals the cached object code uses but nothing defines."""
    # Numba's payload: (libdata, fndesc, env, signature, objectmode, lifted, typeann,
    # reload_init, referenced_envs); libdata = (name, 'object', (object code, bitcode)).
    try:
        (_, kind, data), reload_init = payload[0], payload[7]
    except (TypeError, ValueError, IndexError):
        return []  # another Numba's layout: nothing to check against
    if kind != "object":
        return []
    for init in reload_init or ():
        init()  # what Numba runs on load anyway; they define symbols we check for
    import llvmlite.binding as llvm
    module = llvm.parse_bitcode(data[1])
    engine = target_context.codegen()._engine
    declared = [*module.functions, *module.global_variables]
    return [g.name for g in declared
            if g.is_declaration and not g.name.startswith("llvm.")
            and not engine.is_symbol_defined(g.name) and not llvm.address_of_symbol(g.name)]


def route_numba_caches() -> None:
    """Send Numba's cache of numjax's own modules to ``<root>/<env-key>/numba/``.

    Called by ``numjax.lowering``'s ``__init__``, before any of its modules imports Numba,
    so the locator is in place when their ``@njit(cache=True)`` decorators run, and
    without importing Numba itself (a warm run may not need it).

    A user's NUMBA_CACHE_DIR is deliberately not followed for numjax's modules: all
    compiled artefacts of numjax live under numjax's cache directory (one place to
    size-limit and clear).  The user's own functions keep Numba's usual locations.
    """
    if "numba.core.caching" in sys.modules or "numba" in sys.modules:
        _install_numba_locator()
    elif not any(isinstance(f, _RunAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RunAfterImport("numba", _install_numba_locator))


class _RunAfterImport(importlib.abc.MetaPathFinder):
    """Runs ``callback`` right after the module ``name`` is first imported, once."""

    def __init__(self, name, callback):
        self._name, self._callback = name, callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self._name:
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # the finders after us
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_callback(module):
            exec_module(module)
            self._callback()
        loader.exec_module = exec_then_callback
        return spec


def _install_numba_locator():
    try:
        from numba.core import caching
        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
        if not any(getattr(c, "numjax_locator", False) for c in impl._locator_classes):
            _check_numba_files(caching.IndexDataCacheFile)
            impl._locator_classes.insert(0, _locator_class(caching))
    except Exception as exc:  # an unexpected Numba: its default locations still work
        warnings.warn(f"numjax: cannot route Numba's cache under numjax's ({exc!r})",
                      CacheWarning, stacklevel=2)


def _check_numba_files(file_class):
    """Numba's reader and writer of cache files, checked for the files under numjax's cache
    (a user's own Numba caches are left as Numba handles them)."""
    if getattr(file_class, "numjax_checked", False):
        return
    load_index, load_data, save = file_class._load_index, file_class._load_data, file_class.save
    open_for_write = file_class._open_for_write

    def _load_index(self):
        if _is_numjax_cache(self._cache_path):
            if _dc.file_problem(self._index_path):
                return {}            # as if absent: a miss; the save replaces the file
            try:
                return load_index(self)
            except Exception as exc:  # noqa: BLE001  (a truncated or corrupt pickle)
                _unreadable(self._cache_path, exc, self._index_path)
                return {}
        return load_index(self)

    def _load_data(self, name):
        path = self._data_path(name)
        if not _is_numjax_cache(self._cache_path):
            return load_data(self, name)
        if _dc.file_problem(path):
            raise FileNotFoundError(path)    # Numba's load reads an OSError as a miss
        try:
            return load_data(self, name)
        except OSError:
            raise
        except Exception as exc:  # noqa: BLE001  (a truncated or corrupt pickle)
            _unreadable(self._cache_path, exc, path)
            raise FileNotFoundError(path) from None

    def _save(self, key, data):
        if not _is_numjax_cache(self._cache_path):
            return save(self, key, data)
        if not _dc._dir_trusted(self._cache_path):
            return None              # another user's directory: nothing goes there
        try:
            return save(self, key, data)
        except OSError as exc:       # the cache stays usable without this entry
            _dc._warn_once("numba-save", f"numjax: cannot save a Numba cache entry in "
                           f"{self._cache_path} ({exc}); it is compiled again next time")
            return None

    def _open_for_write(self, filepath):
        if _is_numjax_cache(self._cache_path):
            return _dc.open_private_for_write(filepath)
        return open_for_write(self, filepath)

    file_class._load_index, file_class._load_data, file_class.save = _load_index, _load_data, _save
    file_class._open_for_write = _open_for_write
    file_class.numjax_checked = True


def _unreadable(cache_path, exc, path):
    warnings.warn(f"numjax: unreadable Numba cache entry in {cache_path} ({exc!r}); recompiling",
                  CacheWarning, stacklevel=4)
    with contextlib.suppress(OSError):
        os.unlink(path)   # the recompiled entry is saved in its place


def _is_numjax_cache(path):
    roots = [_dc._user_root()] + ([_dc._private_root] if _dc._private_root else [])
    path = os.path.abspath(path)
    return any(path == str(r) or _is_under(path, str(r)) for r in roots)


def _locator_class(caching):
    class NumjaxCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numjax's modules: ``<root>/<env-key>/numba``; generated ones: beside their file."""
        numjax_locator = True

        def __init__(self, py_func, py_file, cache_path):
            self._py_file, self._cache_path = py_file, cache_path
            self._lineno = py_func.__code__.co_firstlineno

        def get_cache_path(self):
            return self._cache_path

        def ensure_cache_path(self):
            # Numba would makedirs with the umask's mode: made (or found) private instead;
            # where it cannot be, the save that follows skips it.
            _dc.ensure_private_path(self._cache_path)

        @classmethod
        def from_function(cls, py_func, py_file):
            cache_path = _numba_cache_path(py_file)
            return None if cache_path is None else cls(py_func, py_file, cache_path)

    return NumjaxCacheLocator


def _numba_cache_path(py_file):
    """Where Numba caches functions of ``py_file``; None for files that are not numjax's."""
    path = os.path.abspath(py_file)
    if any(_is_under(path, d) for d in _own_source_dirs()):
        return str(_library_cache_dir())
    generated_roots = [_dc._user_root()] + ([_dc._private_root] if _dc._private_root else [])
    if any(_is_under(path, str(d)) for d in generated_roots):
        return os.path.join(os.path.dirname(path), "__pycache__")
    return None


@functools.lru_cache(maxsize=None)
def _own_source_dirs():
    dirs = {os.path.dirname(os.path.abspath(__file__))}
    numjax = sys.modules.get("numjax")
    dirs.update(os.path.abspath(p) for p in getattr(numjax, "__path__", ()))
    return tuple(dirs)


def _is_under(path, directory):
    return path.startswith(directory.rstrip(os.sep) + os.sep)


def _library_cache_dir():
    with _dc._lock:
        directory = _dc._entry_dir()
        if directory != _dc._private_root:
            library = _dc._private_dir(directory.name, _dc._LIBRARY)
            if library is not None:
                return library
        library = _dc._temp_root() / _dc._LIBRARY
        library.mkdir(mode=0o700, exist_ok=True)
        return library
