"""Tests for lowering.diskcache: the on-disk store of generated Numba modules."""
import json
import os
import pathlib
import stat
import subprocess
import sys
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
    monkeypatch.setattr(diskcache, "_modules", {})
    monkeypatch.setattr(diskcache, "_checked_dirs", set())
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
    """Make the next load_module go to disk, as a new process would."""
    monkeypatch.setattr(diskcache, "_modules", {})


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


@pytest.mark.parametrize("numba_cache_dir", [False, True], ids=["in-tree", "NUMBA_CACHE_DIR"])
def test_second_process_hits_numba_cache(root, tmp_path, numba_cache_dir):
    extra = {"NUMBA_CACHE_DIR": str(tmp_path / "nb")} if numba_cache_dir else {}
    assert _run_child(root, **extra) == [7, 0, 1]  # cold: one miss, compiled
    assert _run_child(root, **extra) == [7, 1, 0]  # warm: loaded, no compile
    index_files = list((tmp_path / "nb" if numba_cache_dir else root).rglob("*.nbi"))
    assert len(index_files) == 1


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


def test_foreign_owned_entry_is_not_imported(monkeypatch):
    path = _entry(diskcache.load_module(SRC, "t"))
    # Plant other code there; pretend another user owns it.
    path.write_text(SRC + "PLANTED = True\n")
    real_uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)
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
    monkeypatch.setattr(diskcache, "_checked_dirs", set())
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
