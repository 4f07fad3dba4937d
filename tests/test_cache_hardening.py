"""The compile cache against files and directories it must not trust.

Every file loaded from the cache (object code entries, generated modules, Numba's index and
data pickles in ``__pycache__`` and ``numba/``) must be owned by this user and not writable
by group or others, in a directory that is likewise private; anything else is ignored and
recompiled.  A directory of ours left open to others is tightened and emptied; a directory
of another user moves the process to its own ``<root>/user-<uid>`` with one warning, where
it keeps caching.  Each kind of problem is reported once per process, and the cache never
raises.  "Another process" is simulated by forgetting the in-process state; "another user"
by chown as root, else by telling the ownership test about the inodes (tests cannot chown).
"""
import hashlib
import os
import pathlib
import stat
import sys
import types
import warnings

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
try:
    from numjax.lowering import diskcache, numba_cache
except ImportError:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from lowering import diskcache, numba_cache
CacheWarning = diskcache.CacheWarning

SRC = "import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x * 2 + 1\n"
KEY = "cd" * 32
PAYLOAD = b"\x7fELF object code " * 50


@pytest.fixture(autouse=True)
def root(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("NUMJAX_CACHE_DIR", str(path))
    monkeypatch.delenv("NUMJAX_PERSISTENT_CACHE", raising=False)
    try:
        from numjax import config
    except ImportError:
        config = types.SimpleNamespace()
    monkeypatch.setattr(getattr(config, "config", config), "numjax_persistent_cache", True, raising=False)
    monkeypatch.setattr(diskcache, "_proc", diskcache._ProcessState())
    return path


def _new_process(monkeypatch):
    monkeypatch.setattr(diskcache, "_proc", diskcache._ProcessState())


def _module():
    """Load SRC and call f: (module, Numba cache hits, misses)."""
    module = diskcache.load_module(SRC, "t")
    assert module.f(3) == 7
    stats = module.f.stats
    return module, sum(stats.cache_hits.values()), sum(stats.cache_misses.values())


def _entry(key=KEY):
    """The backend's use of byte entries: (payload, compiled?)."""
    cached = diskcache.read_entry("obj", key)
    if cached is not None:
        return cached, False
    diskcache.write_entry("obj", key, PAYLOAD)
    return PAYLOAD, True


def _pycache(module):
    return pathlib.Path(module.__file__).parent / "__pycache__"


class _Recorded:
    """Every CacheWarning of the block, and no other warning turned into an error."""

    def __enter__(self):
        self._ctx = warnings.catch_warnings(record=True)
        self.records = self._ctx.__enter__()
        warnings.simplefilter("always", CacheWarning)
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)

    @property
    def messages(self):
        return [str(r.message) for r in self.records if issubclass(r.category, CacheWarning)]


def _modes(path):
    return {p: stat.S_IMODE(os.lstat(p).st_mode) for p in [path, *path.rglob("*")]}


def _populate(monkeypatch):
    _module()
    _entry()
    _new_process(monkeypatch)


# --------------------------------------------------------------------------
# chmod -R 777
# --------------------------------------------------------------------------

def test_open_cache_is_repaired_and_nothing_open_is_loaded(root, monkeypatch):
    _populate(monkeypatch)
    planted = {}
    for path in root.rglob("*"):
        os.chmod(path, 0o777)
        if path.suffix in (".nbc", ".bin"):
            planted[path] = path.read_bytes()
    assert any(p.suffix == ".nbc" for p in planted)
    with _Recorded() as rec:
        _, hits, misses = _module()
        payload, compiled = _entry()
    assert (hits, misses) == (0, 1) and compiled       # recompiled, nothing loaded
    assert len(rec.messages) == 1 and "writable by group or others" in rec.messages[0]
    modes = _modes(root)
    for path, mode in modes.items():
        if path == root:
            continue                                     # may be shared: never chmod-ed
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    _new_process(monkeypatch)
    with _Recorded() as rec:
        _, hits, misses = _module()
        _, compiled = _entry()
    assert (hits, misses, compiled, rec.messages) == (1, 0, False, [])


# --------------------------------------------------------------------------
# Numba's index and data files
# --------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
@pytest.mark.parametrize("how", ["foreign", "group-writable", "world-writable", "symlink"])
def test_untrusted_numba_file_is_not_loaded(root, monkeypatch, make_foreign, suffix, how):
    module, _, _ = _module()
    (path,) = _pycache(module).glob(f"*{suffix}")
    if how == "foreign":
        make_foreign(path)
    elif how == "symlink":
        target = path.with_name("elsewhere")
        path.rename(target)
        path.symlink_to(target)
    else:
        os.chmod(path, 0o620 if how == "group-writable" else 0o602)
    _new_process(monkeypatch)
    with _Recorded() as rec:
        _, hits, misses = _module()
    assert (hits, misses) == (0, 1)
    assert len(rec.messages) == 1 and str(path) in rec.messages[0]
    st = os.lstat(path)                                  # replaced by the recompiled file
    assert stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()
    assert stat.S_IMODE(st.st_mode) == 0o600
    _new_process(monkeypatch)
    with _Recorded() as rec:
        assert _module()[1:] == (1, 0) and rec.messages == []


def test_many_untrusted_files_give_one_warning(root, monkeypatch, make_foreign):
    sources = [SRC + f"\nY = {i}\n" for i in range(4)]
    for src in sources:
        assert diskcache.load_module(src, "t").f(1) == 3
        diskcache.write_entry("obj", f"{len(src):064x}", PAYLOAD)
    for path in root.rglob("*"):
        if path.is_file():
            make_foreign(path)
    _new_process(monkeypatch)
    with _Recorded() as rec:
        for src in sources:
            module = diskcache.load_module(src, "t")
            assert module.f(1) == 3 and sum(module.f.stats.cache_misses.values()) == 1
            assert diskcache.read_entry("obj", f"{len(src):064x}") is None
    assert len(rec.messages) == 1, rec.messages


def test_numba_files_are_private_whatever_the_umask(root):
    old = os.umask(0o002)
    try:
        module, _, _ = _module()
    finally:
        os.umask(old)
    pycache = _pycache(module)
    assert stat.S_IMODE(os.stat(pycache).st_mode) == 0o700
    files = list(pycache.iterdir())
    assert {p.suffix for p in files} == {".nbi", ".nbc"}
    assert all(stat.S_IMODE(os.stat(p).st_mode) == 0o600 for p in files)


def _numba_file(cache_path):
    """Numba's index/data file object for a cache under ``cache_path`` (numba/ or __pycache__)."""
    from numba.core import caching
    numba_cache.route_numba_caches()   # installs numjax's checks into Numba's reader
    return caching.IndexDataCacheFile(cache_path=str(cache_path), filename_base="g-1.py311",
                                      source_stamp=(1.0, 10))


def test_library_cache_files_are_checked_too(root, monkeypatch, make_foreign):
    # numjax's own kernels (numba/ under the entry directory) go through the same reader.
    library = numba_cache._library_cache_dir()
    cache_file = _numba_file(library)
    cache_file.save("key", ("compiled", 42))
    assert cache_file.load("key") == ("compiled", 42)
    (data,) = library.glob("g-1.py311.*.nbc")
    make_foreign(data)
    _new_process(monkeypatch)
    with _Recorded() as rec:
        assert _numba_file(library).load("key") is None
    assert len(rec.messages) == 1 and str(data) in rec.messages[0]
    index = library / "g-1.py311.nbi"
    index.write_bytes(index.read_bytes()[:7])            # truncated pickle: a miss, no error
    with _Recorded() as rec:
        assert _numba_file(library).load("key") is None
    assert len(rec.messages) == 1 and "unreadable Numba cache" in rec.messages[0]


def test_numba_files_outside_the_cache_are_left_to_numba(tmp_path):
    # A user's own Numba cache is not numjax's business: same reader, no checks.
    elsewhere = tmp_path / "user-numba"
    elsewhere.mkdir()
    cache_file = _numba_file(elsewhere)
    cache_file.save("key", ("compiled", 1))
    os.chmod(next(elsewhere.glob("*.nbc")), 0o666)
    with _Recorded() as rec:
        assert cache_file.load("key") == ("compiled", 1)
    assert rec.messages == []


# --------------------------------------------------------------------------
# Directories of another user
# --------------------------------------------------------------------------

def _entry_dir_name():
    """The environment-key directory generated modules go to."""
    return hashlib.sha256(diskcache._env_key().encode()).hexdigest()[:16]


@pytest.mark.parametrize("which", ["entry-dir", "pycache", "entries", "entries-kind", "library"])
def test_foreign_directory_moves_the_process_to_its_own_fallback(root, monkeypatch, make_foreign, which):
    _populate(monkeypatch)
    target = {"entry-dir": root / _entry_dir_name(),
              "pycache": root / _entry_dir_name() / "__pycache__",
              "entries": root / "entries", "entries-kind": root / "entries" / "obj",
              "library": root / _entry_dir_name() / "numba"}[which]
    if not target.exists():
        target.mkdir(mode=0o700)
    make_foreign(target)
    fallback = root / f"user-{os.getuid()}"
    for process in range(2):
        _new_process(monkeypatch)
        with _Recorded() as rec:
            for _ in range(6):    # many loads, one warning
                _, hits, misses = _module()
                _, compiled = _entry()
            numba_cache._library_cache_dir()
        assert len(rec.messages) == 1, rec.messages
        assert str(target) in rec.messages[0] and str(fallback) in rec.messages[0]
        assert diskcache._base() == fallback
        if process == 1:          # the fallback persists: the second process compiles nothing
            assert (hits, misses, compiled) == (1, 0, False)
    # What lived in the foreign directory now lives under the fallback.
    moved = {"entry-dir": "*/__pycache__/t_*.nbi", "pycache": "*/__pycache__/t_*.nbi",
             "entries": f"entries/obj/{KEY}.bin", "entries-kind": f"entries/obj/{KEY}.bin",
             "library": "*/numba"}[which]
    assert list(fallback.glob(moved))


def test_foreign_pycache_is_never_read(root, monkeypatch, make_foreign):
    module, _, _ = _module()
    pycache = _pycache(module)
    before = {p: p.read_bytes() for p in pycache.iterdir()}
    make_foreign(pycache)
    _new_process(monkeypatch)
    with _Recorded():
        _, hits, misses = _module()
    assert (hits, misses) == (0, 1)
    assert {p: p.read_bytes() for p in pycache.iterdir()} == before   # and nothing written there


def test_foreign_fallback_too_keeps_code_in_memory(root, monkeypatch, make_foreign):
    _populate(monkeypatch)
    make_foreign(root / "entries")
    fallback = root / f"user-{os.getuid()}"
    fallback.mkdir(mode=0o700)
    make_foreign(fallback)
    _new_process(monkeypatch)
    with _Recorded() as rec:
        for _ in range(3):
            _, compiled = _entry()
    assert [compiled] == [False]          # compiled once, then found in memory
    assert len(rec.messages) == 2 and "kept in memory only" in rec.messages[1]
    assert not list(fallback.iterdir())


def test_clear_removes_the_fallback(root, monkeypatch, make_foreign):
    _populate(monkeypatch)
    make_foreign(root / "entries")
    with _Recorded():
        _entry()
    assert (root / f"user-{os.getuid()}").is_dir()
    os.chown(root / "entries", os.getuid(), -1) if os.getuid() == 0 else None
    diskcache.clear()
    assert not root.exists() or not any(root.iterdir())
