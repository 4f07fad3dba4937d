"""Kernel entry points of the LLVM backend: each compiled kernel is a builtin function
(METH_FASTCALL, emitted in LLVM IR) that checks and converts its arguments, raises on bad
ones instead of crashing, releases the GIL around large calls, runs chunks on the native
runner, and keeps its code mapped; plus ``run_chunked``'s Python worker team."""
import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.config import config
from numjax.lowering import cpu_llvm, cpu_runtime


def _run_script(script, cache_dir, *flags, timeout=300, **env):
    """stdout of ``python *flags -c script`` in a fresh process with its own disk cache; the
    process must exit 0."""
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(cache_dir), **env)
    proc = subprocess.run([sys.executable, *flags, "-c", script], capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)


def _selu_np(x):
    return (1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)).astype(np.float32)


def _only_kernel(f, *args):
    """The executable of ``f`` at ``args`` and its one kernel function."""
    exe = cpu_llvm.compile_program(jax.make_jaxpr(f)(*args), "entry")
    (kernel,) = exe._obj.funcs.values()
    return exe, kernel


@pytest.fixture(scope="module")
def axpb():
    """``k(lo, hi, d0, d1, x: f32[d0, d1], a: f32, out: f32[d0, d1])``."""
    exe, k = _only_kernel(lambda x, a: x * a + 1.0, jnp.ones((4, 3), jnp.float32), jnp.float32(2))
    return exe, k


def _good_args():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    return [0, 4, 4, 3, x, 2.0, np.empty((4, 3), np.float32)]


def test_kernel_is_a_builtin_function_and_computes(axpb):
    _, k = axpb
    assert type(k).__name__ == "builtin_function_or_method"
    args = _good_args()
    assert k(*args) is None
    np.testing.assert_array_equal(args[-1], args[4] * 2 + 1)
    args = _good_args()
    args[2], args[3] = np.int64(4), np.int32(3)          # anything with __index__
    args[5] = np.float32(2.0)
    k(*args)
    np.testing.assert_array_equal(args[-1], args[4] * 2 + 1)


def _with(i, value):
    args = _good_args()
    args[i] = value(args[i]) if callable(value) else value
    return args


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


_BAD = {
    "too few": (_good_args()[:-1], TypeError, r"takes 7 arguments \(lo, hi, d0, d1, x0, x1, out0\); 6 given"),
    "too many": (_good_args() + [None], TypeError, "takes 7 arguments"),
    "float for a dim": (_with(2, 4.0), TypeError, r"argument 2 \(d0\) must be an integer, not float"),
    "None for lo": (_with(0, None), TypeError, "must be an integer"),
    "str for a float": (_with(5, "2"), TypeError, r"argument 5 \(x1\) must be a real number, not str"),
    "int for an array": (_with(4, 7), TypeError, r"argument 4 \(x0\) must be a numpy array, not int"),
    "list for an array": (_with(4, [[1.0] * 3] * 4), TypeError, "must be a numpy array"),
    "float64 array": (_with(4, lambda x: x.astype(np.float64)), TypeError, "dtype float32"),
    "wrong rank": (_with(4, lambda x: x.reshape(12)), TypeError, "rank 2, not 1"),
    "not contiguous": (_with(4, lambda x: np.asfortranarray(x)), TypeError, "C-contiguous"),
    "byte-swapped": (_with(4, lambda x: x.astype(">f4")), TypeError, "native byte order"),
    "strided output": (_with(6, lambda o: np.empty((4, 6), np.float32)[:, ::2]), TypeError, "C-contiguous"),
    "read-only output": (_with(6, _read_only), ValueError, r"argument 6 \(out0\) must be writable"),
    "wrong size": (_with(3, 2), ValueError, r"argument 4 \(x0\) must have shape \(d0, d1\) = \(4, 2\)"),
    "small output": (_with(6, lambda o: np.empty((4, 2), np.float32)), ValueError, r"argument 6 \(out0\)"),
}


@pytest.mark.parametrize("case", sorted(_BAD))
def test_bad_arguments_raise_instead_of_crashing(axpb, case):
    _, k = axpb
    args, error, message = _BAD[case]
    with pytest.raises(error, match=message):
        k(*args)
    args = _good_args()                 # and the kernel still works afterwards
    k(*args)
    np.testing.assert_array_equal(args[-1], args[4] * 2 + 1)


def test_keywords_are_refused_and_other_arguments_converted(axpb):
    _, k = axpb
    args = _good_args()
    with pytest.raises(TypeError, match="keyword"):
        k(*args[:-1], out=args[-1])

    class Sub(np.ndarray):
        pass
    k(*args[:4], args[4].view(Sub), *args[5:])
    np.testing.assert_array_equal(args[-1], args[4] * 2 + 1)
    out = np.zeros((4, 3), np.float32)        # numpy scalars, an int for a float
    k(np.int64(0), np.int32(4), np.int64(4), np.uint8(3), args[4], 2, out)
    np.testing.assert_array_equal(out, args[4] * 2 + 1)
    out[:] = 0
    k(0, 4, 4, 3, args[4], np.float32(2), out.view(Sub))
    np.testing.assert_array_equal(out, args[4] * 2 + 1)


def test_functions_keep_their_code_mapped():
    exe, k = _only_kernel(lambda x: x * 3.0, jnp.ones(5, jnp.float32))
    obj = weakref.ref(exe._obj.obj)
    del exe
    gc.collect()
    x, out = np.ones(5, np.float32), np.empty(5, np.float32)
    k(0, 5, 5, x, out)                 # the builtin alone holds the code
    np.testing.assert_array_equal(out, 3.0)
    assert obj() is not None and not obj().released
    del k
    gc.collect()
    assert obj() is None               # ... and releases it


# The garbage collector clears a dead cycle's objects one by one before they are freed; a
# weak reference's callback on an untracked object (an ndarray) in the cycle runs in the
# middle of that, after the older objects (the kernel's own) were cleared and before the
# kernel function is deallocated -- when CPython reads its PyMethodDef.  There the callback
# refills freed memory of the def's size and reads the def through the function.
_DEF_DURING_GC = textwrap.dedent("""
    import ctypes, gc, weakref, numpy as np
    import numjax as jax, numjax.numpy as jnp
    from numjax.lowering import cpu_llvm, cpu_llvm_build, kernel_entry
    lowered = cpu_llvm.lower_program(jax.make_jaxpr(lambda x: x * 2.0 + 1.0)(jnp.ones(8)))
    loaded = cpu_llvm_build.load_kernels(lowered)
    (k,) = kernel_entry.kernel_functions(loaded.obj, lowered.specs).values()
    at = ctypes.c_void_p.from_address(id(k) + 16).value      # PyCFunctionObject.m_ml
    before = ctypes.string_at(at, 32)
    gc.collect()                       # k's objects now precede the cycle in the collector's list
    malloc = ctypes.pythonapi.PyMem_Malloc
    malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    seen, blocks = [], []
    def refill(_):
        for size in (32, len(before) + 8):
            for _ in range(20000):
                blocks.append(malloc(size))
                ctypes.memset(blocks[-1], 0xAB, size)
        seen.append(ctypes.string_at(at, 32))
    arr = np.zeros(1)
    ref = weakref.ref(arr, refill)
    cycle = [k, arr]
    cycle.append(cycle)
    del k, arr, cycle
    gc.collect()
    print(len(seen), seen == [before])
""")


_DEBUG_MALLOC = textwrap.dedent("""
    import numpy as np, numjax as jax, numjax.numpy as jnp
    from numjax.lowering import cpu_llvm_build
    x = np.linspace(-2, 2, 50_000, dtype=np.float32)
    y = np.asarray(jax.jit(lambda v: jnp.sin(v) * 2.0 + 1.0)(x))
    assert np.allclose(y, np.sin(x) * 2 + 1, atol=1e-6)
    print(len(cpu_llvm_build._loaded))
""")


def test_llvm_backend_runs_under_the_debug_allocator(tmp_path):
    """PYTHONMALLOC=debug fills freed memory with 0xDD: the entry points' layout check and
    calls must read only live objects there (check_layout once read a freed view)."""
    out = _run_script(_DEBUG_MALLOC, tmp_path, "-W", "error::numjax.errors.EagerFallbackWarning",
                      PYTHONMALLOC="debug")
    assert int(out.split()[-1]) >= 1, out     # compiled by the LLVM backend


def test_method_def_outlives_its_function_in_a_collected_cycle(tmp_path):
    out = _run_script(_DEF_DURING_GC, tmp_path)
    assert out.split() == ["1", "True"], out


def test_many_threads_call_one_jitted_function(monkeypatch):
    monkeypatch.setattr(config, "numjax_parallel_threshold", 5000)   # chunked, team shared
    monkeypatch.setattr(config, "numjax_num_threads", 3)
    f = jax.jit(_selu)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(n).astype(np.float32) for n in (1, 7, 1000, 6000, 50_000)]
    want = [np.asarray(f(x)) for x in inputs]
    for x, w in zip(inputs, want):
        np.testing.assert_allclose(w, _selu_np(x), rtol=2e-6, atol=1e-6)
    errors = []

    def hammer(seed):
        try:
            order = np.random.default_rng(seed).integers(0, len(inputs), 60)
            for i in order:
                got = np.asarray(f(inputs[i]))
                if not np.array_equal(got, want[i]):
                    errors.append(f"thread {seed}: wrong result for input {i}")
        except Exception as err:   # noqa: BLE001
            errors.append(repr(err))
    threads = [threading.Thread(target=hammer, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]


def _long_kernel():
    """A kernel that runs for tens of milliseconds in one call."""
    def heavy(x):
        for _ in range(12):
            x = jnp.sin(x) * 1.0001 + jnp.cos(x) * 0.5
        return x
    x = np.random.default_rng(1).standard_normal(1 << 22).astype(np.float32)
    exe, k = _only_kernel(heavy, x)
    out = np.empty_like(x)
    return exe, (lambda: k(0, x.size, x.size, x, out))


def test_gil_is_released_during_large_calls():
    exe, call = _long_kernel()
    call()
    window = {}

    def run():
        window["start"] = time.perf_counter()
        call()
        window["end"] = time.perf_counter()
    ticks = []
    t = threading.Thread(target=run)
    t.start()
    while t.is_alive():                  # Python code in this thread, meanwhile
        ticks.append(time.perf_counter())
    t.join()
    start, end = window["start"], window["end"]
    inside = [start] + [s for s in ticks if start < s < end] + [end]
    longest = max(b - a for a, b in zip(inside, inside[1:]))
    # Holding the GIL, this thread would stall for the whole call (bar a switch interval
    # before it); released, it stalls for a switch interval at most.
    assert end - start > 0.02
    assert longest < 0.5 * (end - start), (longest, end - start)


def test_run_chunked_propagates_errors_and_recovers(monkeypatch):
    monkeypatch.setattr(config, "numjax_parallel_threshold", 1)
    monkeypatch.setattr(config, "numjax_num_threads", 3)
    seen = []

    def kernel(lo, hi, fail_at):
        seen.append((lo, hi))
        if lo == fail_at:
            raise ValueError(f"chunk {lo}")
    for fail_at in (0, 4):               # the caller's chunk, then a worker's
        with pytest.raises(ValueError, match=f"chunk {fail_at}"):
            cpu_runtime.run_chunked(kernel, 10, 10, (fail_at,))
    seen.clear()
    cpu_runtime.run_chunked(kernel, 10, 10, (-1,))
    assert sorted(seen) == [(0, 4), (4, 8), (8, 10)]
    monkeypatch.setattr(config, "numjax_num_threads", 2)   # a new team for a new setting
    seen.clear()
    cpu_runtime.run_chunked(kernel, 10, 10, (-1,))
    assert sorted(seen) == [(0, 5), (5, 10)]


def test_native_chunks_equal_one_call(monkeypatch):
    """``k(-n, hi, ...)`` runs [0, hi) in n chunks on the native runner (libgomp), or in one
    call when none is installed; drivers' chunked calls give the same bits either way."""
    x = np.random.default_rng(3).standard_normal((301, 7)).astype(np.float32)
    exe, k = _only_kernel(lambda m: jnp.tanh(m) * 2.0 - m, x)
    want = np.empty_like(x)
    k(0, 301, 301, 7, x, want)
    installed = cpu_runtime._install_runner()
    for chunks in (2, 3, 301, 10**9):
        out = np.zeros_like(x)
        k(-chunks, 301, 301, 7, x, out)
        np.testing.assert_array_equal(out, want)
    monkeypatch.setattr(cpu_runtime._runner_cell, "value", None)
    out = np.zeros_like(x)
    k(-3, 301, 301, 7, x, out)
    np.testing.assert_array_equal(out, want)
    monkeypatch.undo()
    monkeypatch.setattr(config, "numjax_parallel_threshold", 1)
    monkeypatch.setattr(config, "numjax_num_threads", 4)
    for runner in (installed, False):     # the native runner, then the Python team
        monkeypatch.setattr(cpu_runtime, "_runner_state", runner)
        (got,) = exe.call_arrays([x])
        np.testing.assert_array_equal(np.asarray(got), want)


_FORK = """
import os, numpy as np
from numjax.config import config
from numjax.lowering import cpu_runtime
config.numjax_parallel_threshold, config.numjax_num_threads = 1, 2
out = np.zeros(8)
def kernel(lo, hi, o):
    o[lo:hi] += 1
cpu_runtime.run_chunked(kernel, 8, 8, (out,))
pid = os.fork()
if pid == 0:
    cpu_runtime.run_chunked(kernel, 8, 8, (out,))   # no workers in the child: a new team
    os._exit(0 if (out == 2).all() else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), (out == 1).all())
"""


_FORK_NATIVE = """
import os, numpy as np, numjax as jax, numjax.numpy as jnp
from numjax.config import config
config.numjax_parallel_threshold, config.numjax_num_threads = 1, 2
f = jax.jit(lambda x: jnp.exp(x) + 1.0)
x = np.linspace(-2, 2, 100_000, dtype=np.float32)
want = np.asarray(f(x))                 # libgomp's threads run in the parent
pid = os.fork()
if pid == 0:                            # they do not exist in the child
    os._exit(0 if np.array_equal(np.asarray(f(x)), want) else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("script", [_FORK, _FORK_NATIVE], ids=["python-team", "native"])
def test_chunked_calls_work_in_a_forked_child(script, tmp_path):
    assert _run_script(script, tmp_path, timeout=120).split()[0] == "0"


_CACHED = textwrap.dedent("""
    import json, sys, numpy as np
    import numjax as jax, numjax.numpy as jnp
    from numjax.lowering import cpu_llvm
    f = lambda x, s: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67) * s
    x = np.linspace(-3, 3, 300_001, dtype=np.float32)
    y = np.asarray(jax.jit(f)(x, np.float32(2.0)))
    exe = cpu_llvm.compile_program(jax.make_jaxpr(f)(x, np.float32(2.0)), "cached")
    k = next(iter(exe._obj.funcs.values()))
    try:
        k(0, 1, "x")
        error = None
    except TypeError as err:
        error = str(err)
    print(json.dumps({"origin": exe._obj.origin, "sum": float(y.astype(np.float64).sum()),
                      "first": float(y[0]), "error": error, "ndarray": id(np.ndarray),
                      "llvm": "llvmlite.binding" in sys.modules}))
""")


def test_program_from_the_disk_cache_runs_in_a_fresh_process(tmp_path):
    runs = [json.loads(_run_script(_CACHED, tmp_path).strip().splitlines()[-1]) for _ in range(2)]
    first, second = runs
    assert first["origin"] == "compiled" and second["origin"] == "disk cache"
    assert first["llvm"] and not second["llvm"]
    assert second["sum"] == first["sum"] and second["first"] == first["first"]
    want = _selu_np(np.linspace(-3, 3, 300_001, dtype=np.float32)) * np.float32(2)
    np.testing.assert_allclose(second["sum"], want.astype(np.float64).sum(), rtol=1e-5)
    assert second["error"] and "takes" in second["error"]   # exception types bound at load
    # The writer's addresses (here: its ndarray type) are not in the cached object.
    address = first["ndarray"].to_bytes(8, "little")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and not any(address in p.read_bytes() for p in files)


def test_define_symbol_binds_process_addresses_at_load():
    """Objects name what they need (here a C callback); ``define_symbol`` binds it in every
    load after the caller's own symbols."""
    import ctypes
    from numjax.lowering import cpu_llvm_build, objload
    module = textwrap.dedent("""
        declare double @numjax_test_callback(double)
        define double @twice_callback(double %x) {
          %y = call double @numjax_test_callback(double %x)
          %z = fmul double %y, 2.0
          ret double %z
        }""")
    llvm, tm = cpu_llvm_build._target_machine()
    mod = llvm.parse_assembly(module)
    mod.triple = tm.triple
    data = tm.emit_object(mod)
    proto = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)
    plus_one, minus_one = proto(lambda x: x + 1), proto(lambda x: x - 1)
    objload.define_symbol("numjax_test_callback", ctypes.cast(plus_one, ctypes.c_void_p).value)
    try:
        obj = objload.load(data, {})
        assert proto(obj.address("twice_callback"))(3.0) == 8.0
        obj = objload.load(data, {"numjax_test_callback": ctypes.cast(minus_one, ctypes.c_void_p).value})
        assert proto(obj.address("twice_callback"))(3.0) == 4.0
    finally:
        objload._defined.pop("numjax_test_callback")    # the callback dies with this test
