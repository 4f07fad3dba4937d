"""The disk cache of compiled CUDA kernels (numjax/cuda/diskcache.py).

On the simulator there is no PTX or cubin, so the cache is off there; its parts are tested
with fake payloads: key composition, the verified store/load round trip, rejection of
corrupt, truncated, tampered, foreign or open entries (one warning), an unusable directory
(one warning, nothing stored), concurrent writers.  numba-cuda's real classes (dispatcher,
``_Kernel``, ``CUDACodeLibrary``) import without a GPU when the simulator is off, so a child
process checks that a dispatcher given the cache takes a stored kernel instead of compiling.
The same with real kernels on a real GPU: tests/gpu/test_gpu_device.py.
"""
import json
import os
import pathlib
import stat
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import numjax.numpy as jnp
from numjax.cuda import compiler, diskcache
from numjax.lowering import diskcache as dc

from helpers_cuda import cuda_executable

REPO = pathlib.Path(__file__).resolve().parents[2]
TOOLCHAIN = ("numjax 0.1.0", "numba 0.68.1", "numba-cuda 0.30.4", "driver 12080")


@pytest.fixture(autouse=True)
def root(tmp_path, monkeypatch):
    """A fresh cache root per test, seen as a new process by the diskcache."""
    path = tmp_path / "cache"
    monkeypatch.setenv("NUMJAX_CACHE_DIR", str(path))
    monkeypatch.delenv("NUMJAX_PERSISTENT_CACHE", raising=False)
    monkeypatch.setattr(dc, "_proc", dc._ProcessState())
    return path


def _entry_path(root, key):
    return root / "entries" / diskcache.KIND / f"{key}.bin"


def _key(text="k"):
    return diskcache.entry_key(diskcache.source_key(text), ("float32[::1]",), {}, (8, 0), TOOLCHAIN)


def _cache_warnings(record):
    return [w for w in record if issubclass(w.category, dc.CacheWarning)]


# --------------------------------------------------------------------------
# Keys
# --------------------------------------------------------------------------

def test_key_changes_with_source_device_toolchain_types_and_callees():
    src = diskcache.source_key("@cuda.jit\ndef k(x):\n    x[0] = 1\n")
    base = diskcache.entry_key(src, ("array(float32, 1d, C)",), {"opt": True}, (8, 0), TOOLCHAIN)
    assert len(base) == 64 and int(base, 16) >= 0
    assert base == diskcache.entry_key(src, ("array(float32, 1d, C)",), {"opt": True}, (8, 0), TOOLCHAIN)
    other_src = diskcache.source_key("@cuda.jit\ndef k(x):\n    x[0] = 2\n")
    newer_cuda = TOOLCHAIN[:2] + ("numba-cuda 0.31.0",) + TOOLCHAIN[3:]
    variants = [
        diskcache.entry_key(other_src, ("array(float32, 1d, C)",), {"opt": True}, (8, 0), TOOLCHAIN),
        diskcache.entry_key(src, ("array(float32, 1d, C)",), {"opt": True}, (9, 0), TOOLCHAIN),
        diskcache.entry_key(src, ("array(float32, 1d, C)",), {"opt": True}, (8, 6), TOOLCHAIN),
        diskcache.entry_key(src, ("array(float32, 1d, C)",), {"opt": True}, (8, 0), newer_cuda),
        diskcache.entry_key(src, ("array(float64, 1d, C)",), {"opt": True}, (8, 0), TOOLCHAIN),
        diskcache.entry_key(src, ("array(float32, 1d, C)",), {"opt": False}, (8, 0), TOOLCHAIN),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_source_key_covers_callees_and_the_device_namespace():
    text = "@cuda.jit\ndef k(x):\n    x[0] = elem_1(x[0])\n"
    plain = diskcache.source_key(text, [("elem_1", "a" * 64)])
    assert plain == diskcache.source_key(text, [("elem_1", "a" * 64)])
    assert plain != diskcache.source_key(text, [("elem_1", "b" * 64)])    # callee edited
    assert plain != diskcache.source_key(text, [("elem_1", "a" * 64)], namespace="edited device_math")
    assert diskcache.namespace_version() == diskcache.namespace_version() != "edited device_math"
    # Length-prefixed parts: moving text between the source and a callee changes the key.
    assert diskcache.source_key("ab", [("c", "d")]) != diskcache.source_key("a", [("bc", "d")])


# --------------------------------------------------------------------------
# Store and verified load
# --------------------------------------------------------------------------

def test_store_then_load_round_trip_is_private_and_atomic(root):
    key, payload = _key(), bytes(range(256)) * 40
    assert diskcache.load(key) is None                     # a miss
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert diskcache.store(key, payload)
        assert diskcache.load(key) == payload
    path = _entry_path(root, key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]   # no temp file left
    dc._proc = dc._ProcessState()                           # a later process reads it too
    assert diskcache.load(key) == payload


@pytest.mark.parametrize("damage", ["flip a payload byte", "truncate", "empty", "append"])
def test_corrupt_entry_is_rejected_with_a_warning_then_rewritten(root, damage):
    key, payload = _key(), b"cubin" * 100
    diskcache.store(key, payload)
    path = _entry_path(root, key)
    blob = bytearray(path.read_bytes())
    if damage == "flip a payload byte":
        blob[-7] ^= 0x40
    elif damage == "truncate":
        blob = blob[:len(blob) // 2]
    elif damage == "empty":
        blob = b""
    else:
        blob += b"x"
    path.write_bytes(bytes(blob))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert diskcache.load(key) is None
    assert len(_cache_warnings(record)) == 1
    assert not path.exists()                               # removed: the recompile replaces it
    diskcache.store(key, payload)
    assert diskcache.load(key) == payload


def test_entry_naming_another_key_is_rejected(root):
    """Verified bytes copied to another entry's name are not that kernel."""
    key_a, key_b = _key("a"), _key("b")
    diskcache.store(key_a, b"kernel a")
    path_b = _entry_path(root, key_b)
    path_b.write_bytes(_entry_path(root, key_a).read_bytes())
    os.chmod(path_b, 0o600)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert diskcache.load(key_b) is None
    assert len(_cache_warnings(record)) == 1 and "not an entry of this kernel" in str(record[0].message)
    assert not path_b.exists() and diskcache.load(key_a) == b"kernel a"


def test_foreign_and_world_writable_entries_are_never_loaded_one_warning(root, make_foreign):
    keys = [_key(str(k)) for k in range(3)]
    for key in keys:
        diskcache.store(key, b"trusted payload")
    make_foreign(_entry_path(root, keys[0]))
    os.chmod(_entry_path(root, keys[1]), 0o666)
    os.chmod(_entry_path(root, keys[2]), 0o620)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert [diskcache.load(key) for key in keys] == [None, None, None]
    found = _cache_warnings(record)
    assert len(found) == 1 and "owned by uid" in str(found[0].message)
    for key in keys:                                       # recompiled and stored again
        diskcache.store(key, b"fresh")
        assert diskcache.load(key) == b"fresh"


def test_open_entry_directory_is_not_trusted(root):
    key = _key()
    diskcache.store(key, b"payload")
    os.chmod(_entry_path(root, key).parent, 0o777)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert diskcache.load(key) is None
    assert len(_cache_warnings(record)) == 1 and "writable by group or others" in str(record[0].message)
    assert stat.S_IMODE(_entry_path(root, key).parent.stat().st_mode) == 0o700


def test_unusable_directory_warns_once_and_keeps_nothing(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("NUMJAX_CACHE_DIR", str(blocker / "cache"))   # fails even for root
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert not diskcache.store(_key("a"), b"payload a")
        assert not diskcache.store(_key("b"), b"payload b")
        assert diskcache.load(_key("a")) is None
    found = _cache_warnings(record)
    assert len(found) == 1 and "is not writable" in str(found[0].message)
    assert blocker.read_text() == "not a directory" and not dc._proc.memory_entries


def test_persistence_switched_off_stores_nothing(root, monkeypatch):
    monkeypatch.setenv("NUMJAX_PERSISTENT_CACHE", "0")
    assert not diskcache.enabled(simulator=False)
    assert diskcache.enabled(simulator=True) is False


def test_concurrent_writers_threads_end_with_one_valid_entry(root):
    key = _key()
    payloads = [bytes([k]) * (1000 + 997 * k) for k in range(6)]
    errors = []

    def writer(payload):
        try:
            for _ in range(15):
                diskcache.store(key, payload)
                got = diskcache.load(key)
                assert got is None or got in payloads      # a reader never sees a mix
        except Exception as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and not _cache_warnings(record)
    assert diskcache.load(key) in payloads
    assert [p.name for p in _entry_path(root, key).parent.iterdir()] == [f"{key}.bin"]


WRITER = """
import sys
from numjax.cuda import diskcache
key, fill, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for _ in range(40):
    diskcache.store(key, bytes([fill]) * size)
print("ok")
"""


def test_concurrent_writer_processes_end_with_one_valid_entry(root):
    key = _key()
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(root))
    procs = [subprocess.Popen([sys.executable, "-W", "error::UserWarning", "-c", WRITER, key,
                               str(fill), str(size)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for fill, size in ((1, 70_000), (2, 130_001))]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "ok", err
    assert diskcache.load(key) in (b"\x01" * 70_000, b"\x02" * 130_001)
    assert [p.name for p in _entry_path(root, key).parent.iterdir()] == [f"{key}.bin"]


# --------------------------------------------------------------------------
# numba-cuda's real classes (no GPU needed), and the simulator
# --------------------------------------------------------------------------

DISPATCHER_CHILD = """
import json, sys, warnings
from numba import cuda
from numba.core import types, typing
from numba.cuda import codegen, dispatcher as cuda_dispatcher
from numjax.cuda import diskcache
from numjax.lowering import diskcache as dc

diskcache._toolchain = lambda: ("test toolchain",)   # no driver here to ask
SRC = "@cuda.jit\\ndef kern(x):\\n    x[0] = 1\\n"
ARGTYPES = (types.float32[::1],)
CC = (8, 6)


def fresh_dispatcher():
    namespace = {"cuda": cuda}
    exec(SRC, namespace)
    fn = namespace["kern"]
    assert diskcache.install(fn, "kern", diskcache.source_key(SRC), CC)
    return fn


def fake_kernel(cubin_cc, argtypes=ARGTYPES):
    lib = codegen.CUDACodeLibrary._rebuild(
        None, "kern", "kern_entry", ["ir"], {cubin_cc: ["ptx"]}, {cubin_cc: b"cubin bytes"},
        {}, None, {}, False, False, False, False)
    return cuda_dispatcher._Kernel._rebuild(
        cooperative=False, name="kern_entry", signature=typing.signature(types.void, *argtypes),
        codelibrary=lib, debug=False, lineinfo=False, call_helper=None, extensions=[])


case = sys.argv[1]
report = {}
with warnings.catch_warnings(record=True) as record:
    warnings.simplefilter("always")
    first = fresh_dispatcher()
    report["cold"] = first._cache.load_overload(ARGTYPES, first.targetctx) is None
    stored = {"good": fake_kernel((8, 6, "")), "other-device": fake_kernel((9, 0, "a")),
              "other-types": fake_kernel((8, 6, ""), (types.float64[::1],))}[case]
    first._cache.save_overload(ARGTYPES, stored)      # what compile() does after compiling
    dc._proc = dc._ProcessState()                     # as a new process
    second = fresh_dispatcher()
    if case == "good":
        kernel = second.compile(ARGTYPES)             # would need a GPU if it compiled
        report["cubin"] = kernel.library._cubin_cache[(8, 6, "")].decode()
        report["entry"] = kernel.entry_name
        report["hits"] = sum(second._cache_hits.values())
    else:
        report["loaded"] = second._cache.load_overload(ARGTYPES, second.targetctx) is not None
report["counts"] = diskcache.counts()
report["warnings"] = [str(w.message) for w in record]
print(json.dumps(report))
"""


def _dispatcher_child(root, case):
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(root), NUMBA_ENABLE_CUDASIM="0")
    proc = subprocess.run([sys.executable, "-c", DISPATCHER_CHILD, case], env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_dispatcher_takes_the_stored_kernel_instead_of_compiling(root):
    report = _dispatcher_child(root, "good")
    assert report == {"cold": True, "cubin": "cubin bytes", "entry": "kern_entry", "hits": 1,
                      "counts": {"compiled": 1, "loaded": 1}, "warnings": []}


@pytest.mark.parametrize("case, why", [("other-device", "no cubin for compute capability (8, 6)"),
                                       ("other-types", "is for argument types")])
def test_stored_kernel_for_another_device_or_types_is_a_miss(root, case, why):
    report = _dispatcher_child(root, case)
    assert report["loaded"] is False and report["counts"] == {"compiled": 1, "loaded": 0}
    assert len(report["warnings"]) == 1 and why in report["warnings"][0]
    assert not list((root / "entries" / diskcache.KIND).iterdir())   # removed for the rewrite


ELEM = "@device_function\ndef {name}(v):\n    return v * {factor}\n"
KERNEL = "@cuda.jit\ndef {name}(x):\n    x[0] = {callee}(x[0])\n"


def test_compile_kernel_keys_kernels_by_their_callees(monkeypatch):
    """Where the cache is on (a GPU), a kernel's key covers the source of the device
    functions it is given; a callee compile_kernel did not make leaves it uncached."""
    installed = {}      # kernel name -> the source key it was installed with

    def record_install(fn, name, key, cc):
        installed[name] = key
        return False    # simulator dispatchers take no numba-cuda cache
    monkeypatch.setattr(compiler, "_compiled", {})
    monkeypatch.setattr(compiler, "_source_keys", {})
    monkeypatch.setattr(diskcache, "enabled", lambda simulator: True)
    monkeypatch.setattr(diskcache, "install", record_install)
    keys = []
    for factor in (2, 3):
        elem = compiler.compile_kernel(f"elem_{factor}", ELEM.format(name=f"elem_{factor}", factor=factor))
        name = f"kern_{factor}"
        compiler.compile_kernel(name, KERNEL.format(name=name, callee="elem"), {"elem": elem})
        keys.append(installed[name])
    assert keys[0] != keys[1]            # same kernel text, different callee source
    assert installed["elem_2"] != installed["elem_3"]
    foreign = compiler.device_function(lambda v: v + 1)
    compiler.compile_kernel("kern_foreign", KERNEL.format(name="kern_foreign", callee="elem"),
                            {"elem": foreign})
    assert "kern_foreign" not in installed and "kern_foreign" in {n for _, n in compiler._compiled}


def test_simulator_runs_without_the_disk_cache(root):
    """The simulator has no PTX: kernels get no disk cache and nothing is written."""
    assert compiler.is_simulator() and not diskcache.enabled(compiler.is_simulator())
    x = np.arange(12, dtype=np.float32)
    exe, outs = cuda_executable(lambda v: jnp.tanh(v) * 2 + v.sum(), x)
    assert exe.backend == "cuda"
    np.testing.assert_allclose(outs[0], np.tanh(x) * 2 + x.sum(), rtol=2e-6)
    assert not (root / "entries" / diskcache.KIND).exists()
    assert compiler._compiled and not compiler._source_keys     # compiled, never keyed
