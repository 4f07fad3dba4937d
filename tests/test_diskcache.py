"""Tests for lowering.diskcache: byte entries, generated Numba modules, Numba's own cache
files, eviction, an unusable cache directory, and the cached-program crash of issue #9."""
import json
import os
import pathlib
import re
import stat
import subprocess
import sys
import time
import types

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]

# Installed, lowering/ is numjax.lowering (setup.cfg); in a bare checkout it
# is only importable as the top-level package `lowering`.
try:
    from numjax.lowering import diskcache
except ImportError:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from lowering import diskcache
CacheWarning = diskcache.CacheWarning

SRC = "import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x * 2 + 1\n"

# A child process: load SRC, call f once, report (result, hits, misses).
CHILD = f"""
import importlib, json, sys
diskcache = importlib.import_module({diskcache.__name__!r})
m = diskcache.load_module(sys.argv[1], "child")
r = m.f(3)
s = m.f.stats
print(json.dumps([r, sum(s.cache_hits.values()), sum(s.cache_misses.values())]))
"""


@pytest.fixture(autouse=True)
def root(tmp_path, monkeypatch):
    """A fresh cache root per test, and no state left from earlier tests."""
    path = tmp_path / "cache"
    monkeypatch.setenv("NUMJAX_CACHE_DIR", str(path))
    monkeypatch.delenv("NUMJAX_PERSISTENT_CACHE", raising=False)
    _set_config_flag(monkeypatch, True)
    monkeypatch.setattr(diskcache, "_proc", diskcache._ProcessState())
    return path


def _set_config_flag(monkeypatch, value):
    # numjax.config may be a module holding a Config object, or absent.
    try:
        from numjax import config
    except ImportError:
        config = types.ModuleType("numjax.config")
        monkeypatch.setitem(sys.modules, "numjax", types.ModuleType("numjax"))
        monkeypatch.setitem(sys.modules, "numjax.config", config)
        monkeypatch.setattr(sys.modules["numjax"], "config", config, raising=False)
    holder = getattr(config, "config", config)
    monkeypatch.setattr(holder, "numjax_persistent_cache", value, raising=False)


def _forget(monkeypatch):
    """Make the next load_module or read_entry go to disk, as a new process would."""
    monkeypatch.setattr(diskcache, "_proc", diskcache._ProcessState())


def _entry(module):
    return pathlib.Path(module.__file__)


def _child_env(root, **extra):
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(root))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    for name in ("NUMBA_CACHE_DIR", "NUMJAX_PERSISTENT_CACHE", "NUMBA_DISABLE_JIT"):
        env.pop(name, None)
    env.update(extra)
    return env


def _run_child(root, **extra):
    proc = subprocess.run([sys.executable, "-c", CHILD, SRC], env=_child_env(root, **extra),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_same_source_same_module_different_source_different_file(root):
    a = diskcache.load_module(SRC, "t")
    assert diskcache.load_module(SRC, "t") is a
    b = diskcache.load_module(SRC + "\nY = 1\n", "t")
    assert b is not a and _entry(b) != _entry(a)
    assert _entry(a).read_text() == SRC
    assert _entry(a).name.startswith("t_") and _entry(a).parent.parent == root
    assert diskcache.cache_dir() == root
    assert a.f(3) == 7 and a.__name__.startswith("numjax._generated.")


@pytest.mark.parametrize("numba_cache_dir", [False, True], ids=["plain", "NUMBA_CACHE_DIR"])
def test_second_process_hits_numba_cache(root, tmp_path, numba_cache_dir):
    # A user's NUMBA_CACHE_DIR does not pull numjax's object code out of numjax's cache.
    extra = {"NUMBA_CACHE_DIR": str(tmp_path / "nb")} if numba_cache_dir else {}
    assert _run_child(root, **extra) == [7, 0, 1]  # cold: one miss, compiled
    assert _run_child(root, **extra) == [7, 1, 0]  # warm: loaded, no compile
    assert len(list(root.glob("*/__pycache__/child_*.nbi"))) == 1
    assert not list(tmp_path.glob("nb/**/*.nbi"))


def test_truncated_source_entry_is_rewritten(monkeypatch):
    path = _entry(diskcache.load_module(SRC, "t"))
    path.write_bytes(SRC.encode()[:20])
    _forget(monkeypatch)
    with pytest.warns(CacheWarning, match="truncated or corrupt"):
        module = diskcache.load_module(SRC, "t")
    assert path.read_text() == SRC and module.f(3) == 7


def test_good_entry_is_left_untouched(monkeypatch):
    # Numba's cache stamps come from this file: rewriting it must not happen.
    path = _entry(diskcache.load_module(SRC, "t"))
    before = os.stat(path)
    _forget(monkeypatch)
    diskcache.load_module(SRC, "t")
    after = os.stat(path)
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
@pytest.mark.parametrize("keep", [0, 40])
def test_corrupt_numba_cache_file_recompiles(monkeypatch, suffix, keep):
    module = diskcache.load_module(SRC, "t")
    assert module.f(3) == 7  # compiles and saves the .nbi/.nbc pair
    (cached,) = _entry(module).parent.glob(f"__pycache__/*{suffix}")
    cached.write_bytes(cached.read_bytes()[:keep])
    _forget(monkeypatch)
    module = diskcache.load_module(SRC, "t")
    with pytest.warns(CacheWarning, match="unreadable Numba cache"):
        assert module.f(3) == 7
    assert sum(module.f.stats.cache_misses.values()) == 1
    _forget(monkeypatch)  # the recompile rewrote the entry: now it loads
    module = diskcache.load_module(SRC, "t")
    assert module.f(3) == 7 and sum(module.f.stats.cache_hits.values()) == 1


def test_foreign_owned_entry_is_not_imported(monkeypatch, make_foreign):
    path = _entry(diskcache.load_module(SRC, "t"))
    # Plant other code there; another user owns it.
    path.write_text(SRC + "PLANTED = True\n")
    make_foreign(path)
    _forget(monkeypatch)
    with pytest.warns(CacheWarning, match="owned by uid"):
        module = diskcache.load_module(SRC, "t")
    assert not hasattr(module, "PLANTED")
    assert path.read_text() == SRC


def test_directories_are_private(root, monkeypatch):
    key_dir = _entry(diskcache.load_module(SRC, "t")).parent
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(key_dir).st_mode) == 0o700
    # A pre-existing, too-open entry dir is tightened on first use.
    os.chmod(key_dir, 0o755)
    _forget(monkeypatch)
    diskcache.load_module(SRC + "\nY = 2\n", "t")
    assert stat.S_IMODE(os.stat(key_dir).st_mode) == 0o700


@pytest.mark.parametrize("how", ["env", "config"])
def test_disabled_persistence_writes_nothing_under_root(root, monkeypatch, how):
    if how == "env":
        monkeypatch.setenv("NUMJAX_PERSISTENT_CACHE", "0")
    else:
        _set_config_flag(monkeypatch, False)
    monkeypatch.setattr(diskcache, "_private_root", None)
    assert diskcache.cache_dir() is None
    module = diskcache.load_module(SRC, "t")
    assert module.f(3) == 7
    assert not root.exists()
    private = _entry(module).parent
    assert private == diskcache._private_root and private.is_dir()
    assert not list(private.rglob("*.nb[ic]"))  # Numba's cache was switched off
    diskcache.clear()
    assert not private.exists()


def test_clear_only_removes_our_directories(root):
    diskcache.load_module(SRC, "t")
    (root / "keep.txt").write_text("not ours")
    diskcache.clear()
    assert [p.name for p in root.iterdir()] == ["keep.txt"]
    (root / "keep.txt").unlink()
    diskcache.clear()
    assert not root.exists()


# Hammers _write_atomic on one path while checking every read is complete.
WRITER = f"""
import importlib, pathlib, sys
diskcache = importlib.import_module({diskcache.__name__!r})
path = pathlib.Path(sys.argv[1])
data = b"x = 1\\n" * 100_000
for _ in range(40):
    diskcache._write_atomic(path, data)
    assert path.read_bytes() == data
"""


def test_concurrent_atomic_writes_never_expose_partial_files(tmp_path):
    path = tmp_path / "entry.py"
    env = _child_env(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path)], env=env,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert path.read_bytes() == b"x = 1\n" * 100_000
    assert [p.name for p in tmp_path.iterdir()] == ["entry.py"]  # no temp leftovers


def test_concurrent_processes_loading_same_entry(root):
    env = _child_env(root, PYTHONWARNINGS="error::UserWarning")
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, SRC], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out)[0] == 7
    assert _run_child(root) == [7, 1, 0]


# --------------------------------------------------------------------------
# Byte entries
# --------------------------------------------------------------------------

KEY = "ab" * 32


def _key(n):
    return f"{n:064x}"


def _bin_path(root, key=KEY, kind="obj"):
    return root / "entries" / kind / f"{key}.bin"


class _Compiler:
    """A caller of the store as the backend uses it: read, else compile and write."""

    def __init__(self):
        self.compiles = 0

    def __call__(self, key, payload=b"\x7fELF object code " * 100):
        cached = diskcache.read_entry("obj", key)
        if cached is not None:
            return cached
        self.compiles += 1
        diskcache.write_entry("obj", key, payload)
        return payload


def test_byte_entry_round_trip(root, monkeypatch):
    assert diskcache.read_entry("obj", KEY) is None
    payload = bytes(range(256)) * 1000
    diskcache.write_entry("obj", KEY, payload)
    _forget(monkeypatch)
    assert diskcache.read_entry("obj", KEY) == payload
    path = _bin_path(root)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    for directory in (path.parent, path.parent.parent):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    diskcache.write_entry("obj", _key(1), b"")  # empty payloads are entries too
    assert diskcache.read_entry("obj", _key(1)) == b""
    assert [p.name for p in path.parent.iterdir()].count(path.name) == 1  # no temp files left


@pytest.mark.parametrize("kind, key", [("obj", "../" + KEY), ("obj", KEY.upper()), ("obj", "ab"),
                                       ("../x", KEY), ("", KEY)])
def test_byte_entry_names_cannot_leave_the_cache(kind, key):
    with pytest.raises(ValueError):
        diskcache.read_entry(kind, key)
    with pytest.raises(ValueError):
        diskcache.write_entry(kind, key, b"x")


def _flip_payload_byte(path):
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1
    path.write_bytes(bytes(blob))


def _corrupt_magic(path):
    path.write_bytes(b"XXXX" + path.read_bytes()[4:])


def _truncate(path):
    path.write_bytes(path.read_bytes()[:-10])


def _truncate_header(path):
    path.write_bytes(path.read_bytes()[:20])


def _pad(path):
    path.write_bytes(path.read_bytes() + b"\0")


def _group_writable(path):
    os.chmod(path, 0o620)


def _symlink(path):
    target = path.with_name("elsewhere")
    path.rename(target)
    path.symlink_to(target)


@pytest.mark.parametrize("damage, reason", [
    (_flip_payload_byte, "sha256"), (_corrupt_magic, "no numjax cache header"),
    (_truncate, "truncated"), (_truncate_header, "incomplete header"), (_pad, "padded"),
    (_group_writable, "writable by group or others"), (_symlink, "cannot be opened"),
])
def test_damaged_byte_entry_is_rejected_once_and_recompiled(root, monkeypatch, damage, reason):
    compile_or_load = _Compiler()
    good = compile_or_load(KEY)
    damage(_bin_path(root))
    _forget(monkeypatch)
    with pytest.warns(CacheWarning, match=reason) as record:
        assert compile_or_load(KEY) == good
    assert len(record) == 1 and str(_bin_path(root)) in str(record[0].message)
    assert compile_or_load.compiles == 2
    _forget(monkeypatch)
    with _no_cache_warnings():
        assert compile_or_load(KEY) == good  # the rewritten entry verifies
    assert compile_or_load.compiles == 2


def test_foreign_owned_byte_entry_is_rejected(root, monkeypatch, make_foreign):
    compile_or_load = _Compiler()
    good = compile_or_load(KEY)
    make_foreign(_bin_path(root))
    _forget(monkeypatch)
    with pytest.warns(CacheWarning, match="owned by uid") as record:
        assert compile_or_load(KEY) == good
    assert len(record) == 1 and compile_or_load.compiles == 2


class _no_cache_warnings:
    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error", CacheWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


# Writes and reads back entries in a loop; same keys as its sibling, and its own keys.
ENTRY_WRITER = f"""
import hashlib, importlib, sys, warnings
diskcache = importlib.import_module({diskcache.__name__!r})
warnings.simplefilter("error")
me = sys.argv[1]
def payload(key):
    return hashlib.sha256(key.encode()).digest() * 20_000
for i in range(30):
    for key in (f"{{i % 5:064x}}", hashlib.sha256(f"{{me}}{{i}}".encode()).hexdigest()):
        diskcache.write_entry("obj", key, payload(key))
        got = diskcache.read_entry("obj", key)
        assert got == payload(key), key
"""


def test_concurrent_writers_leave_only_verified_entries(root, monkeypatch):
    env = _child_env(root)
    procs = [subprocess.Popen([sys.executable, "-c", ENTRY_WRITER, name], env=env,
                              stderr=subprocess.PIPE, text=True) for name in "ab"]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    paths = list((root / "entries" / "obj").iterdir())
    assert len(paths) == 5 + 2 * 30 and all(p.suffix == ".bin" for p in paths)
    _forget(monkeypatch)
    import hashlib
    with _no_cache_warnings():
        for path in paths:
            assert diskcache.read_entry("obj", path.stem) == \
                hashlib.sha256(path.stem.encode()).digest() * 20_000


# Writes a large entry, but stops for good inside fsync (after the data, before the rename).
KILLED_WRITER = f"""
import importlib, os, sys, time
diskcache = importlib.import_module({diskcache.__name__!r})
def stall(fd):
    print("writing", flush=True)
    time.sleep(600)
os.fsync = stall
diskcache.write_entry("obj", sys.argv[1], b"new" * 20_000_000)
"""


@pytest.mark.parametrize("existing", [False, True], ids=["new-entry", "overwrite"])
def test_writer_killed_mid_write_leaves_nothing_loadable(root, monkeypatch, existing):
    if existing:
        diskcache.write_entry("obj", KEY, b"old")
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, KEY], env=_child_env(root),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "writing\n", proc.stderr.read()
    finally:
        proc.kill()
        proc.wait(timeout=60)
    (temp,) = [p for p in (root / "entries" / "obj").iterdir() if p.suffix == ".tmp"]
    assert temp.stat().st_size > 0
    _forget(monkeypatch)
    with _no_cache_warnings():
        assert diskcache.read_entry("obj", KEY) == (b"old" if existing else None)
    # The dead writer's temp file goes with the next eviction once it is stale.
    diskcache._evict(root, 1 << 40, now=temp.stat().st_mtime + 2 * 3600)
    assert not temp.exists()
    assert _bin_path(root).exists() == existing


# --------------------------------------------------------------------------
# An unusable cache directory
# --------------------------------------------------------------------------

def _make_unusable(root, how):
    if how == "under-a-file":
        root.parent.mkdir(parents=True, exist_ok=True)
        blocker = root.parent / "a-file"
        blocker.write_text("")
        return blocker / "cache"
    root.mkdir(mode=0o700)
    os.chmod(root, 0o500)     # read-only
    return root


# A directory of another user is not unusable: the process moves to its own fallback
# (tests/test_cache_hardening.py).
_IS_ROOT = os.getuid() == 0
UNUSABLE = [pytest.param("under-a-file"),
            pytest.param("read-only",
                         marks=pytest.mark.skipif(_IS_ROOT, reason="root writes anyway"))]


def _files_under(path):
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []


@pytest.mark.parametrize("how", UNUSABLE)
def test_unusable_dir_warns_once_and_keeps_entries_in_memory(root, monkeypatch, how):
    cache = _make_unusable(root, how)
    monkeypatch.setenv("NUMJAX_CACHE_DIR", str(cache))
    compile_or_load = _Compiler()
    with pytest.warns(CacheWarning) as record:
        for _ in range(3):
            assert compile_or_load(KEY) and compile_or_load(_key(7))
        module = diskcache.load_module(SRC, "t")
        assert module.f(3) == 7 and diskcache.load_module(SRC, "t") is module
        assert diskcache.load_module(SRC + "\nY = 1\n", "t").f(3) == 7
    assert len(record) == 1, [str(r.message) for r in record]
    assert re.search(r"cache directory .* is not writable \(.+\); compiled code is kept in "
                     r"memory only for this process", str(record[0].message))
    assert compile_or_load.compiles == 2  # each program compiled once, then found in memory
    assert not any(p.suffix in (".bin", ".py", ".nbi", ".nbc") for p in _files_under(cache))
    if how == "read-only":
        os.chmod(cache, 0o700)


JIT_CHILD = """
import warnings
import numpy as np
import numjax as jax
import numjax.numpy as jnp
from numjax.lowering.diskcache import CacheWarning
x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
with warnings.catch_warnings(record=True) as record:
    warnings.simplefilter("always", CacheWarning)
    for _ in range(2):
        f = jax.jit(lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67))
        r = np.asarray(f(x))
        expected = 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)
        assert np.allclose(r, expected, rtol=1e-5, atol=1e-6)
        assert float(jax.jit(lambda a: jnp.sort(a)[0])(x)) == x.min()
print(sum(issubclass(w.category, CacheWarning) for w in record))
print(str(record[0].message) if record else "")
"""


@pytest.mark.parametrize("how", UNUSABLE)
def test_unusable_dir_in_a_fresh_process_warns_once(root, tmp_path, how):
    cache = _make_unusable(root, how)
    before = _files_under(cache)
    env = _child_env(cache, HOME=str(tmp_path / "home"))
    env.pop("XDG_CACHE_HOME", None)
    proc = subprocess.run([sys.executable, "-c", JIT_CHILD], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    count, message = proc.stdout.strip().splitlines()[-2:]
    assert count == "1" and "is not writable" in message
    assert _files_under(cache) == before
    assert not (tmp_path / "home" / ".cache" / "numba").exists()
    if how == "read-only":
        os.chmod(cache, 0o700)


# --------------------------------------------------------------------------
# Size limit
# --------------------------------------------------------------------------

def _age(paths, seconds_ago):
    t = time.time() - seconds_ago
    for path in paths:
        os.utime(path, (t, t))


def test_eviction_removes_least_recently_used_first(root, monkeypatch):
    for n in range(10):
        diskcache.write_entry("obj", _key(n), bytes(10_000))
        _age([_bin_path(root, _key(n))], 1000 - n)  # entry 0 is the oldest
    _forget(monkeypatch)
    assert diskcache.read_entry("obj", _key(0)) is not None  # a read makes 0 the newest
    total = diskcache._evict(root, limit=60_000)
    assert total <= 0.9 * 60_000
    kept = sorted(int(p.stem, 16) for p in (root / "entries" / "obj").iterdir())
    assert kept == [0, 6, 7, 8, 9]


def test_writes_keep_the_total_under_the_limit(root, monkeypatch):
    from numjax.config import config
    monkeypatch.setattr(config, "numjax_cache_max_bytes", 100_000)
    sizes = []
    for n in range(100):  # more writes than _RESCAN_EVERY: scans come from the estimate too
        diskcache.write_entry("obj", _key(n), bytes(7_000))
        sizes.append(sum(p.stat().st_size for p in _files_under(root)))
    assert max(sizes) <= 100_000
    assert diskcache.read_entry("obj", _key(99)) is not None  # the newest survive
    assert diskcache.read_entry("obj", _key(0)) is None


def test_eviction_treats_a_module_and_its_numba_files_as_one_entry(root, monkeypatch):
    old = diskcache.load_module(SRC, "old")
    assert old.f(3) == 7  # writes __pycache__/old_*.nbi/.nbc
    new = diskcache.load_module(SRC + "\nY = 1\n", "new")
    assert new.f(3) == 7
    key_dir = _entry(old).parent
    old_files = [_entry(old), *key_dir.glob(f"__pycache__/{_entry(old).stem}.*")]
    assert len(old_files) == 3
    _age(old_files, 500)
    _age([_entry(new)], 1000)  # its .py is older, but its object code was used just now
    library = key_dir / "numba" / "lib.nbc"
    library.parent.mkdir(exist_ok=True)
    library.write_bytes(bytes(1000))
    _age([library], 5000)
    unrelated = root / "keep.txt"
    unrelated.write_bytes(bytes(10_000_000))
    total = sum(p.stat().st_size for p in _files_under(key_dir))
    diskcache._evict(root, limit=total - 1)
    assert not any(p.exists() for p in old_files)
    assert _entry(new).exists() and list(key_dir.glob(f"__pycache__/{_entry(new).stem}.*"))
    assert library.exists() and unrelated.exists()  # numerics library; not ours


def test_fresh_temp_files_are_counted_not_deleted(root):
    diskcache.write_entry("obj", KEY, b"x")
    temp = _bin_path(root).with_name("in-progress.bin.abc.tmp")
    temp.write_bytes(bytes(5000))
    assert diskcache._evict(root, limit=1 << 20) >= 5000 and temp.exists()


# --------------------------------------------------------------------------
# Where Numba's files go
# --------------------------------------------------------------------------

NUMBA_PLACES_CHILD = """
import sys
import time
import numba
import numpy as np
import numjax as jax
import numjax.numpy as jnp
import user_mod
x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
# Complex values still compile through the Numba backend (a program module and its kernels).
assert np.allclose(jax.jit(lambda a: jnp.abs(jnp.fft.fft(a)).sum())(x), np.abs(np.fft.fft(x)).sum(), rtol=1e-4)
assert np.allclose(jax.jit(lambda a: a @ a)(x), x @ x, rtol=1e-4)
assert user_mod.g(2) == 5
"""


def _numba_files(path):
    return {p: p.stat().st_mtime_ns for p in path.rglob("*.nb[ic]")} if path.is_dir() else {}


def test_numba_artefacts_live_under_the_numjax_cache(root, tmp_path):
    home, user_cache = tmp_path / "home", tmp_path / "user-numba"
    (tmp_path / "user_mod.py").write_text(
        "import numba\n\n@numba.njit(cache=True)\ndef g(x):\n    return x * 2 + 1\n")
    installed = pathlib.Path(diskcache.__file__).parent
    before = _numba_files(installed)
    env = _child_env(root, HOME=str(home), NUMBA_CACHE_DIR=str(user_cache))
    env.pop("XDG_CACHE_HOME", None)
    env["PYTHONPATH"] += os.pathsep + str(tmp_path)
    proc = subprocess.run([sys.executable, "-c", NUMBA_PLACES_CHILD], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert _numba_files(installed) == before  # nothing next to the installed sources
    assert not (home / ".cache").exists()
    assert list(root.glob("*/__pycache__/prog_*.nbi"))
    # The user's own functions still follow the user's NUMBA_CACHE_DIR.
    assert [p.name.split(".")[0] for p in user_cache.rglob("*.nbi")] == ["user_mod"]


# --------------------------------------------------------------------------
# Issue #9: a program compiled against cached kernels, then loaded from the cache
# --------------------------------------------------------------------------

# The program of issue #9 on the Numba path (where the crash was; jit may now pick the
# LLVM backend for it, so the child asks Numba's lowering for it directly), then under jit.
SELU_CHILD = """
import sys, warnings
import numpy as np
import numjax as jax
import numjax.numpy as jnp
from numjax.lowering import compile as numba_lowering, diskcache, numba_cache
if sys.argv[1] == "drop-reload-init":  # what Numba alone does: the entry saved is unsafe
    numba_cache._restore_reload_init = lambda cres: None
selu = lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)
x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
expected = 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)
with warnings.catch_warnings(record=True) as record:
    warnings.simplefilter("always" if sys.argv[1] == "expect-warning" else "error",
                          diskcache.CacheWarning)
    program = numba_lowering.Executable(numba_lowering.lower_jaxpr(jax.make_jaxpr(selu)(x)))
    assert program._has_par  # the prange twin and its kernel are what crashed
    (r,) = program.call_arrays([x])
    assert np.allclose(np.asarray(r), expected, rtol=1e-5, atol=1e-6)
    assert np.allclose(np.asarray(jax.jit(selu)(x)), expected, rtol=1e-5, atol=1e-6)
print(len(record), str(record[0].message) if record else "")
"""


def _run_selu(root, mode="plain"):
    env = _child_env(root)
    env.pop("NUMJAX_PARALLEL_THRESHOLD", None)  # the default: 1M elements take the prange twin
    proc = subprocess.run([sys.executable, "-c", SELU_CHILD, mode], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"rc={proc.returncode} (-11 is SIGSEGV)\n{proc.stderr}"
    count, _, message = proc.stdout.strip().splitlines()[-1].partition(" ")
    return int(count), message


def _drop_cached_programs(root):
    programs = list(root.glob("*/__pycache__/prog_*"))
    assert programs
    for path in programs:
        path.unlink()


def test_program_loaded_after_compiling_against_cached_kernels_runs(root):
    _run_selu(root)                   # run 1: kernels and program compiled and saved
    _drop_cached_programs(root)
    _run_selu(root)                   # run 2: program compiled against cached kernels
    assert _run_selu(root) == (0, "")  # run 3: program loaded from the cache (crashed)


def test_cached_program_missing_a_symbol_is_recompiled_not_called(root):
    # An entry written the way Numba alone writes it (reload_init lost) must be refused
    # on load, with one warning, instead of jumping into a thread pool nobody started.
    _run_selu(root)
    _drop_cached_programs(root)
    _run_selu(root, "drop-reload-init")
    count, message = _run_selu(root, "expect-warning")
    assert count == 1 and "needs symbols this process does not define" in message
    assert _run_selu(root) == (0, "")  # the recompiled entry is sound
