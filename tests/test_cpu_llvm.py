"""The LLVM backend: pyir's translation of the math library and of region kernels, the
driver, chunked parallel calls, the debug (pure Python) mode and warm starts without LLVM."""
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.lowering import cpu_llvm, scalar_helpers, vmath

_SPECIALS_F32 = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 20.0, -20.0,
                          88.7, 88.8, -87.3, -104.0, 1e10, -1e10, np.inf, -np.inf, np.nan], np.float32)


def _values(dtype, n=600, seed=0):
    rng = np.random.default_rng(seed)
    wide = rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))
    vals = np.concatenate([_SPECIALS_F32.astype(dtype), wide.astype(dtype)])
    return vals


def _compiled_unary(fname, dtype):
    """A one-kernel program mapping vm.<fname> over a 1-d array, compiled by pyir."""
    dt = np.dtype(dtype).name
    src = textwrap.dedent(f"""
        def kern(d0, x0):
            o0 = np.empty((d0, ), np.{dt})
            for i in range(d0):
                o0[i] = vm.{fname}(x0[i])
            return (o0, )
        """)
    spec = cpu_llvm.KernelSpec("kern", src, [("dim",), ("array", dt, ("d0",))], [(dt, ("d0",))], False)
    return _build([spec])["kern"]


def _build(specs):
    from numjax.lowering import cpu_llvm_build, objload
    data = cpu_llvm_build.compile_object(cpu_llvm_build.build_module(specs))
    obj = objload.load(data, {})
    cpu_llvm_build._check_layout()
    _keep.append(obj)
    return {s.name: cpu_llvm_build._ctypes_function(obj.address(s.name), s) for s in specs}


_keep = []

def _numba_reference(fname, x):
    """The same function compiled by Numba (the other backend), elementwise over ``x``.
    (Plain Python is no reference: once vmath is jitted, a plain function's callees are
    Numba dispatchers returning Python floats.)"""
    import numba
    vmath.ensure_jitted()
    fn = getattr(vmath, fname)

    @numba.njit
    def loop(a, out):
        for i in range(a.size):
            out[i] = fn(a[i])
    out = np.empty_like(x)
    loop(x, out)
    return out


_F32_FUNCS = ["exp_f32", "log_f32", "log1p_f32", "expm1_f32", "tanh_f32", "logistic_f32", "erf_f32",
              "erf_inv_f32", "sin_f32", "cos_f32", "tan_f32", "atan_f32"]
_F64_FUNCS = ["exp_f64", "log_f64", "log1p_f64", "expm1_f64", "tanh_f64", "logistic_f64", "sin_f64",
              "cos_f64", "erf_f64"]


@pytest.mark.parametrize("fname", _F32_FUNCS + _F64_FUNCS)
def test_math_library_translates_bit_exactly(fname):
    """pyir compiles vmath's Python source to the same bits the source computes in Python."""
    dtype = np.float32 if fname.endswith("f32") else np.float64
    x = _values(dtype)
    if fname.startswith("erf_inv"):
        x = np.clip(x, -1, 1) * dtype(0.999)
    kern = _compiled_unary(fname, dtype)
    out = np.empty_like(x)
    kern(0, 1, x.size, x, out)
    want = _numba_reference(fname, x)
    bad = ~((out == want) | (np.isnan(out) & np.isnan(want)))
    assert not bad.any(), f"{fname}: x={x[bad][:5]} got={out[bad][:5]} want={want[bad][:5]}"


def _prog(f, *args):
    closed = jax.make_jaxpr(f)(*args)
    exe = cpu_llvm.compile_program(closed, "t")
    return exe, exe.call_arrays([np.asarray(a) for a in args])


def _eager(f, *args):
    with jax.disable_jit():
        return jax.tree_util.tree_leaves(f(*args))


PROGRAMS = {
    "selu": (lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67), [(1000,)]),
    "softmax": (lambda m: jax.nn.softmax(m, axis=-1), [(33, 70)]),
    "argmax0": (lambda m: jnp.argmax(m, axis=0), [(17, 9)]),
    "argmin1": (lambda m: jnp.argmin(m, axis=1), [(17, 9)]),
    "sum_all": (lambda x: jnp.sum(x * x), [(1001,)]),
    "minmax_axis0": (lambda m: jnp.max(m, axis=0) + jnp.min(m, axis=0), [(31, 12)]),
    "broadcast_iota": (lambda m: m * jnp.arange(12, dtype=jnp.float32) + m[:, :1], [(5, 12)]),
    "matmul_bias_relu": (lambda a, b: jnp.maximum(a @ b + 1.0, 0.0), [(8, 16), (16, 4)]),
    "casts": (lambda x: (x * 1e3).astype(jnp.int32) // 7 + (x > 0).astype(jnp.int32), [(300,)]),
    "int_ops": (lambda x: jnp.remainder(jnp.arange(20) - 10, 3) * (x[:20] > 0), [(40,)]),
    "scalar_chain": (lambda s: jnp.tanh(s) * 2.0 + 1.0, [()]),
    "mean_var": (lambda m: (jnp.mean(m, axis=1), jnp.var(m, axis=0)), [(10, 30)]),
    "transcendental_mix": (lambda x: jnp.sin(x) * jnp.cos(x) + jnp.log1p(jnp.abs(x)) - jnp.expm1(-jnp.abs(x)),
                           [(257,)]),
    # Reductions over all axes of transcendental values (a summed log-likelihood and its
    # gradient: elementwise outputs beside the sum); 37 leaves a tail after 8-wide partials.
    "logaddexp_sum_all": (lambda m: -jnp.sum(jnp.logaddexp(0., m)), [(13, 37)]),
    "logaddexp_value_and_grad": (jax.value_and_grad(lambda m: jnp.sum(jnp.logaddexp(0., 2.0 * m))),
                                 [(13, 37)]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_match_eager(name):
    f, shapes = PROGRAMS[name]
    rng = np.random.default_rng(1)
    args = [jnp.asarray(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    exe, got = _prog(f, *args)
    assert isinstance(exe, cpu_llvm.Executable)
    want = _eager(f, *args)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def test_chunked_parallel_calls_equal_serial(monkeypatch):
    from numjax.config import config
    f, shapes = PROGRAMS["softmax"]
    m = jnp.asarray(np.random.default_rng(2).standard_normal((257, 64)).astype(np.float32))
    _, serial = _prog(f, m)
    monkeypatch.setattr(config, "numjax_parallel_threshold", 1)
    monkeypatch.setattr(config, "numjax_num_threads", 3)
    _, chunked = _prog(f, m)
    np.testing.assert_array_equal(np.asarray(serial[0]), np.asarray(chunked[0]))


def test_program_is_compiled_once_without_a_parallel_twin():
    f = lambda x: jnp.exp(x) * 2.0  # noqa: E731
    closed = jax.make_jaxpr(f)(jnp.ones(10, jnp.float32))
    low = cpu_llvm.lower_program(closed, "once")
    assert len(low.specs) == 1 and "numba.prange" in next(iter(low.specs.values())).source
    assert not re.search(r"_par\b", low.driver)    # no parallel twin function


def test_debug_python_mode_runs_kernels_as_python(monkeypatch):
    from numjax.config import config
    f, shapes = PROGRAMS["selu"]
    x = jnp.asarray(np.random.default_rng(3).standard_normal(50).astype(np.float32))
    _, compiled = _prog(f, x)
    monkeypatch.setattr(config, "numjax_debug_python", True, raising=False)
    exe, stepped = _prog(f, x)
    assert exe._obj is None
    np.testing.assert_array_equal(np.asarray(compiled[0]), np.asarray(stepped[0]))


def test_full_reduction_of_transcendentals_fills_a_block_buffer_first():
    # With the accumulator in the loop of exp/log1p LLVM does not vectorize the transcendentals
    # (sum(logaddexp(0, x)) over 32x784 ran 14x slower); each block of 16 values goes to a
    # small buffer in a loop of its own, and is then added to the 8 partial sums.
    closed = jax.make_jaxpr(lambda m: jnp.sum(jnp.logaddexp(0., m)))(jnp.ones((4, 9), jnp.float32))
    (spec,) = cpu_llvm.lower_program(closed, "lae").specs.values()
    block = re.search(r"(blk\d+) = np.empty\(16, ", spec.source).group(1)
    values = re.search(rf"for (k\d+) in range\(16\):\n(.*\n)*? +{block}\[\1\] = ", spec.source)
    assert values and "acc" not in values.group(0)
    assert re.search(rf"acc\d+_7 = np.float32\(acc\d+_7 \+ {block}\[15\]\)", spec.source)


def test_lowered_text_shows_kernels_driver_and_ir():
    closed = jax.make_jaxpr(lambda x: jnp.sum(jnp.exp(x)))(jnp.ones(8, jnp.float32))
    low = cpu_llvm.lower_program(closed, "txt")
    assert "# ---- kernel k_" in low.text and "def numjax_txt(" in low.text
    assert re.search(r'define void @"?k_[0-9a-f]{16}"?\(', low.llvm_ir())


_WARM = """
import sys, json, numpy as np
import numjax as jax, numjax.numpy as jnp
f = jax.jit(lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67))
y = np.asarray(f(np.linspace(-3, 3, 1000, dtype=np.float32)))
print(json.dumps({"sum": float(y.sum()), "numba": "numba" in sys.modules,
                  "llvm": "llvmlite.binding" in sys.modules}))
"""


def test_warm_start_loads_no_llvm_and_no_numba(tmp_path):
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", _WARM], env=env, capture_output=True,
                                      text=True, check=True).stdout) for _ in range(2)]
    assert runs[0]["llvm"] and not runs[0]["numba"]
    assert not runs[1]["llvm"] and not runs[1]["numba"]
    assert runs[0]["sum"] == runs[1]["sum"]


def test_descending_and_large_constant_loops_are_real_loops():
    # Loops too large to unroll (trips x body cost over pyir.UNROLL_BUDGET) stay loops, and a
    # loop counting down (range(n - 1, -1, -1)) stops at its bound.
    from numjax.lowering import pyir
    src = textwrap.dedent("""
        def kern(d0, x0):
            o0 = np.empty((d0, ), np.float64)
            acc = 0.0
            for i in range(d0 - 1, -1, -1):
                acc = acc * 0.5 + x0[i]
                o0[i] = acc
            for k in range(12):
                acc = vm.exp_f64(vm.log_f64(acc + 1.0)) + vm.tanh_f64(acc) * 0.0
            o0[0] = acc
            return (o0, )
        """)
    assert 12 * pyir._unroll_cost(__import__("ast").parse(src).body[0].body[3].body) > pyir.UNROLL_BUDGET
    spec = cpu_llvm.KernelSpec("kern", src, [("dim",), ("array", "float64", ("d0",))],
                               [("float64", ("d0",))], False)
    fn = _build([spec])["kern"]
    x = np.arange(1.0, 6.0)
    out = np.empty(5)
    fn(0, 1, 5, x, out)
    acc, want = 0.0, np.empty(5)
    for i in range(4, -1, -1):
        acc = acc * 0.5 + x[i]
        want[i] = acc
    for _ in range(12):
        acc = np.exp(np.log(acc + 1.0))
    want[0] = acc
    np.testing.assert_allclose(out, want, rtol=1e-12)
