"""pure_callback, io_callback, jax.debug.callback/print/breakpoint: eagerly, under jit (the
compiled driver calls back into Python: no eager fallback, which the suite turns into an error),
under vmap and grad, with JAX's errors."""
import io

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.errors import JaxRuntimeError
from numjax.experimental import io_callback


def _sds(shape, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype)


def test_pure_callback_eager_and_jit_call_the_function():
    calls = []

    def host(x):
        calls.append(type(x).__name__)
        return np.sin(np.asarray(x)) * 2

    f = lambda x: jax.pure_callback(host, _sds(x.shape), x) + 1   # noqa: E731
    x = jnp.arange(4.0)
    expected = np.sin(np.arange(4.0, dtype=np.float32)) * 2 + 1
    np.testing.assert_allclose(f(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(x + 1), np.sin(np.arange(1.0, 5.0, dtype=np.float32)) * 2 + 1,
                               rtol=1e-6)
    assert calls == ["Array"] * 3     # callbacks receive Arrays, each run calls again
    assert "host_callback0(" in jax.jit(f).lower(x).as_text()


def test_pure_callback_pytree_results_and_kwargs():
    f = lambda x: jax.pure_callback(lambda a, b: (a * b, (a > 1).astype(np.int32)),   # noqa: E731
                                    (_sds((3,)), _sds((3,), jnp.int32)), x, b=2.0)
    for fn in (f, jax.jit(f)):
        prod, flags = fn(jnp.array([0.5, 1.0, 2.0]))
        np.testing.assert_array_equal(prod, [1.0, 2.0, 4.0])
        assert flags.dtype == np.int32 and flags.tolist() == [0, 0, 1]


@pytest.mark.parametrize("result, message", [
    (lambda x: np.zeros((2,), np.float32), "Incorrect output shape for return value #0: Expected: (3,), Actual: (2,)"),
    (lambda x: np.zeros((3,), np.int32), "Incorrect output dtype for return value #0: Expected: float32, Actual: int32"),
    (lambda x: (x, x), "Mismatched number of outputs from callback. Expected: 1, Actual: 2"),
])
def test_pure_callback_result_checks(result, message):
    f = lambda x: jax.pure_callback(result, _sds((3,)), x)   # noqa: E731
    for fn in (f, jax.jit(f)):
        with pytest.raises(JaxRuntimeError, match="CpuCallback error") as info:
            fn(jnp.ones(3))
        assert str(info.value).strip().splitlines()[-1] == "RuntimeError: " + message


def test_pure_callback_float64_result_is_narrowed():
    out = jax.jit(lambda x: jax.pure_callback(lambda v: np.ones(3), _sds((3,)), x))(jnp.ones(3))
    assert out.dtype == np.float32


def test_pure_callback_argument_errors():
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        jax.pure_callback(np.sin, _sds((3,)), jnp.ones(3), vmap_method="vectorized")
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        jax.pure_callback(np.sin, _sds((3,), np.float64), jnp.ones(3))


def test_pure_callback_is_not_differentiable():
    f = lambda x: jax.pure_callback(np.sin, _sds((3,)), x).sum()   # noqa: E731
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(f)(jnp.ones(3))
    # A callback on values that carry no tangent is fine.
    g = lambda x, y: x * jax.pure_callback(np.cos, _sds(()), y)   # noqa: E731
    assert float(jax.grad(g)(2.0, 0.0)) == 1.0


@pytest.mark.parametrize("method, seen", [("sequential", [(3,), (3,)]), ("sequential_unrolled", [(3,), (3,)]),
                                          ("expand_dims", [(2, 3), (1, 3)]), ("broadcast_all", [(2, 3), (2, 3)]),
                                          ("legacy_vectorized", [(2, 3), (3,)])])
@pytest.mark.parametrize("jit", [False, True])
def test_pure_callback_vmap_methods(method, seen, jit):
    shapes = []

    def host(a, b):
        shapes.append((a.shape, b.shape))
        return np.asarray(a) + np.asarray(b)
    f = lambda a, b: jax.pure_callback(host, _sds(a.shape), a, b, vmap_method=method)   # noqa: E731
    vf = jax.vmap(f, in_axes=(1, None))
    vf = jax.jit(vf) if jit else vf
    out = vf(jnp.arange(6.0).reshape(3, 2), jnp.ones(3))
    np.testing.assert_array_equal(out, np.arange(6.0).reshape(3, 2).T + 1)
    if method.startswith("sequential"):
        assert shapes == [((3,), (3,))] * 2
    else:
        assert shapes == [tuple(seen)]


def test_pure_callback_vmap_without_method_raises():
    f = lambda x: jax.pure_callback(np.sin, _sds(x.shape), x)   # noqa: E731
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(f)(jnp.ones((2, 3)))


def test_io_callback_runs_in_program_order_and_is_kept():
    log = []

    def record(v):
        log.append(float(v))
        return np.float32(len(log))

    def f(x):
        first = io_callback(record, _sds(()), x, ordered=True)
        io_callback(record, _sds(()), x + 1, ordered=True)   # result unused: still runs
        return first
    assert float(f(1.0)) == 1.0
    assert float(jax.jit(f)(10.0)) == 3.0
    assert log == [1.0, 2.0, 10.0, 11.0]
    out = jax.vmap(lambda v: io_callback(record, _sds(()), v))(jnp.arange(3.0))
    assert out.tolist() == [5.0, 6.0, 7.0] and log[-3:] == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.vmap(f)(jnp.arange(2.0))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        jax.grad(f)(1.0)


def test_debug_print_formats_as_numpy(capsys):
    x = jnp.array([1.5, 2.25, 3.0])
    jax.debug.print("x={x} s={s:.2f} i={}", jnp.int32(3), x=x, s=x.sum())
    jax.jit(lambda v: jax.debug.print("jit {} {}", v, v[0]))(x)
    jax.debug.print("no placeholders", x, skip_format_check=True)
    assert capsys.readouterr().out == ("x=[1.5  2.25 3.  ] s=6.75 i=3\njit [1.5  2.25 3.  ] 1.5\n"
                                       "no placeholders [1.5  2.25 3.  ]\n")


def test_debug_print_format_errors():
    x = jnp.ones(2)
    with pytest.raises(ValueError, match="Unused positional arguments"):
        jax.debug.print("{}", x, x)
    with pytest.raises(ValueError, match="Unused keyword arguments to `jax.debug.print`: \\['y'\\]"):
        jax.debug.print("{x}", x=x, y=x)
    with pytest.raises(KeyError):
        jax.debug.print("{x}", y=x)


def test_debug_print_under_transformations(capsys):
    f = lambda v: (jax.debug.print("v {}", v, ordered=True), v ** 2)[1].sum()   # noqa: E731
    x = jnp.array([1.0, 2.0])
    for g in (jax.grad(f), jax.jit(jax.grad(f)), jax.grad(jax.jit(f))):
        np.testing.assert_array_equal(g(x), [2.0, 4.0])
    jax.jit(jax.vmap(lambda r: jax.debug.print("r {}", r)))(jnp.arange(4.0).reshape(2, 2))
    assert capsys.readouterr().out == "v [1. 2.]\n" * 3 + "r [0. 1.]\nr [2. 3.]\n"


def test_debug_print_in_loops_runs_each_iteration(capsys):
    def body(c, t):
        jax.debug.print("step {} {}", t, c, ordered=True)
        return c + t, c
    jax.jit(lambda c: jax.lax.scan(body, c, jnp.arange(3.0)))(1.0)
    assert capsys.readouterr().out == "step 0.0 1.0\nstep 1.0 1.0\nstep 2.0 2.0\n"


def test_debug_callback_receives_arrays_and_static_args():
    seen = []
    f = lambda v: jax.debug.callback(lambda a, tag: seen.append((tag, a.tolist())), v, tag="t")   # noqa: E731
    f(jnp.ones(2))
    jax.jit(f)(jnp.zeros(2))
    assert seen == [("t", [1.0, 1.0]), ("t", [0.0, 0.0])]
    with pytest.raises(TypeError, match="must be callable"):
        jax.debug.callback(3, jnp.ones(2))


def test_debug_primitives_print_without_binder():
    text = str(jax.make_jaxpr(lambda v: jax.debug.print("{}", v))(1.0))
    assert text.splitlines()[1].strip() == "debug_print["
    assert "0xXXXXXXXXXXXX" in str(jax.make_jaxpr(lambda v: jax.debug.callback(print, v))(1.0))


def test_breakpoint_opens_pdb_on_runtime_values(capsys):
    def f(x):
        y = x * 2
        jax.debug.breakpoint(stdin=io.StringIO("p y\nc\n"))
        return y
    jax.jit(f)(jnp.array([1.0, 2.0]))
    out = capsys.readouterr().out
    assert "Entering numjax debugger" in out and "Array([2., 4.], dtype=float32)" in out


# ---------------------------------------------------------------- Numba @njit callbacks
# A Numba function gets read-only numpy arrays (JAX hands callbacks read-only buffers); a
# compiled program calls its compiled specialization directly (lowering/host_calls.py).

import numba  # noqa: E402  (a dependency of numjax)


@numba.njit
def _nb_sin2(x):
    return np.sin(x) * np.float32(2.0)


def _py_sin2(x):
    return np.sin(np.asarray(x)) * np.float32(2.0)


@numba.njit
def _nb_add(a, b):
    return a + b


@numba.njit
def _nb_scalar_step(c):
    return c[()] * np.float32(0.5) + np.float32(1.0)    # a Numba float32: a Python float back


def _calls_native(f, *args):
    """Whether jit(f)'s program calls the Numba function through NjitCall."""
    from numjax.lowering import host_calls
    eqns = [e for e in jax.make_jaxpr(f)(*args).jaxpr.eqns if e.primitive.name == "pure_callback"]
    return bool(eqns) and all(isinstance(host_calls.host_function(e), host_calls.NjitCall) for e in eqns)


def test_njit_callback_matches_the_python_one_eagerly_and_under_jit():
    x = jnp.linspace(-2.0, 2.0, 7)
    nb = lambda v: jax.pure_callback(_nb_sin2, _sds(v.shape), v) + 1   # noqa: E731
    py = lambda v: jax.pure_callback(_py_sin2, _sds(v.shape), v) + 1   # noqa: E731
    want = py(x)
    np.testing.assert_array_equal(nb(x), want)
    np.testing.assert_array_equal(jax.jit(nb)(x), want)
    np.testing.assert_array_equal(jax.jit(py)(x), want)
    assert _calls_native(nb, x) and not _calls_native(py, x)
    # Every specialization Numba made takes read-only C-contiguous arrays.
    assert all(not t.mutable and t.layout == "C" for sig in _nb_sin2.overloads for t in sig)


def test_njit_callback_operands_are_read_only():
    @numba.njit
    def scribble(x):
        x[0] = 1.0
        return x
    for fn in (lambda v: jax.pure_callback(scribble, _sds((3,)), v),
               jax.jit(lambda v: jax.pure_callback(scribble, _sds((3,)), v))):
        with pytest.raises(JaxRuntimeError, match="readonly"):
            fn(jnp.zeros(3))


def test_njit_callback_scalar_results_and_narrowing():
    f = jax.jit(lambda c: jax.pure_callback(_nb_scalar_step, _sds(()), c))
    out = f(jnp.float32(3.0))
    assert out.dtype == np.float32 and float(out) == 2.5
    as_f64 = numba.njit(lambda c: np.float64(c[()]) * 2.0)     # narrowed to float32, as for Python
    assert float(jax.jit(lambda c: jax.pure_callback(as_f64, _sds(()), c))(jnp.float32(3.0))) == 6.0


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all", "legacy_vectorized"])
def test_njit_callback_under_vmap(method):
    f = lambda a, b: jax.pure_callback(_nb_add, _sds(a.shape), a, b, vmap_method=method)   # noqa: E731
    a, b = jnp.arange(6.0).reshape(3, 2), jnp.ones(3)
    want = np.arange(6.0).reshape(3, 2).T + 1
    np.testing.assert_array_equal(jax.vmap(f, in_axes=(1, None))(a, b), want)
    np.testing.assert_array_equal(jax.jit(jax.vmap(f, in_axes=(1, None)))(a, b), want)


def test_njit_callback_inside_scan_and_fori_loop():
    def body(c, t):
        return jax.pure_callback(_nb_add, _sds(c.shape), c, t), c
    xs = jnp.arange(12.0).reshape(4, 3)
    carry, ys = jax.jit(lambda c: jax.lax.scan(body, c, xs))(jnp.zeros(3))
    np.testing.assert_array_equal(carry, np.arange(12.0).reshape(4, 3).sum(0))
    np.testing.assert_array_equal(ys[-1], np.arange(9.0).reshape(3, 3).sum(0))
    loop = jax.jit(lambda c: jax.lax.fori_loop(
        0, 5, lambda i, v: jax.pure_callback(_nb_scalar_step, _sds(()), v), c))
    want = 0.0
    for _ in range(5):
        want = want * 0.5 + 1.0
    assert float(loop(jnp.float32(0.0))) == want


@pytest.mark.parametrize("result, message", [
    (lambda x: np.zeros((2,), np.float32), "Incorrect output shape for return value #0: Expected: (3,), Actual: (2,)"),
    (lambda x: np.zeros((3,), np.int32), "Incorrect output dtype for return value #0: Expected: float32, Actual: int32"),
    (lambda x: (x, x), "Mismatched number of outputs from callback. Expected: 1, Actual: 2"),
    (lambda x: x.sum() > 0, "Incorrect output shape for return value #0: Expected: (3,), Actual: ()"),
])
def test_njit_callback_result_checks(result, message):
    f = lambda x: jax.pure_callback(numba.njit(result), _sds((3,)), x)   # noqa: E731
    for fn in (f, jax.jit(f)):
        for _ in range(2):    # the first call specializes, the second runs the specialization
            with pytest.raises(JaxRuntimeError, match="CpuCallback error") as info:
                fn(jnp.ones(3))
            assert str(info.value).strip().splitlines()[-1] == "RuntimeError: " + message


def test_njit_callback_with_pytree_operands_takes_the_python_path():
    # Keyword arguments are not positional arrays: the callback goes through FlatCallback.
    f = lambda x: jax.pure_callback(_nb_add, _sds((3,)), x, b=x)   # noqa: E731
    np.testing.assert_array_equal(jax.jit(f)(jnp.ones(3)), np.full(3, 2.0))
    assert not _calls_native(f, jnp.ones(3))
