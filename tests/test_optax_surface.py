"""The JAX surface optax and chex use, tested directly (no optax, no jax imported here).

Found by running optax unmodified with ``jax`` resolved to numjax
(tests/compat/jax_shim.py, tests/compat/test_optax_vs_jax.py).  Expected values and
messages are JAX 0.10.2's, taken from real JAX and committed as literals.
"""
import os
import subprocess
import sys
import textwrap
import typing

import numpy as np
import pytest
from helpers import jit_compiled

import numjax
import numjax.numpy as jnp
from numjax import lax


# ---------------------------------------------------------------- jax.Array / jnp.ndarray

def test_array_is_abstract_and_tracers_are_instances():
    # optax's numerics.abs_sq and inject_hyperparams test isinstance(x, jnp.ndarray /
    # jax.Array) on traced values; in JAX tracers are instances.
    assert jnp.ndarray is numjax.Array
    assert isinstance(jnp.ones(2), numjax.Array)
    assert not isinstance(np.ones(2), numjax.Array) and not isinstance(1.0, numjax.Array)
    seen = []

    def f(x):
        seen.append((isinstance(x, numjax.Array), isinstance(x, jnp.ndarray)))
        return x * 2
    numjax.jit(f)(jnp.ones(2))
    numjax.grad(lambda x: f(x).sum())(jnp.ones(2))
    numjax.vmap(f)(jnp.ones((3, 2)))
    assert seen == [(True, True)] * 3
    assert numjax.Array.__name__ == "Array"


# ---------------------------------------------------------------- typing, Device, device_get, typeof

def test_typing_aliases():
    arraylike = typing.get_args(numjax.typing.ArrayLike)
    for t in (numjax.Array, np.ndarray, np.bool_, np.number, bool, int, float, complex):
        assert t in arraylike, t
    dtypelike = typing.get_args(numjax.typing.DTypeLike)
    assert str in dtypelike and np.dtype in dtypelike


def test_device_get_and_device_class():
    tree = {"a": jnp.arange(3), "b": (jnp.float32(2.5), "static")}
    got = numjax.device_get(tree)
    assert type(got["a"]) is np.ndarray and got["a"].dtype == np.int32
    np.testing.assert_array_equal(got["a"], [0, 1, 2])
    assert float(got["b"][0]) == 2.5 and got["b"][1] == "static"
    assert all(isinstance(d, numjax.Device) for d in numjax.devices())


@pytest.mark.parametrize("value, shape, dtype, weak", [
    (jnp.ones((2, 3)), (2, 3), np.float32, False),
    (1.0, (), np.float32, True),
    (np.arange(3, dtype=np.int64), (3,), np.int32, False),
])
def test_typeof(value, shape, dtype, weak):
    aval = numjax.typeof(value)
    assert (aval.shape, aval.dtype, aval.weak_type) == (shape, np.dtype(dtype), weak)
    # JAX 0.10.2: NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))
    sharding = aval.sharding
    assert isinstance(sharding, numjax.sharding.NamedSharding)
    assert isinstance(sharding, numjax.sharding.Sharding)
    assert tuple(sharding.spec) == (None,) * len(shape)
    assert sharding.mesh.empty and not sharding.mesh.are_all_axes_explicit
    assert sharding.mesh.axis_names == () and dict(sharding.mesh.shape) == {}


def test_sharding_names():
    assert numjax.P is numjax.sharding.PartitionSpec
    assert numjax.NamedSharding is numjax.sharding.NamedSharding
    assert tuple(numjax.P("x", None)) == ("x", None)
    assert isinstance(jnp.ones(2).sharding, numjax.sharding.Sharding)
    mesh = numjax.sharding.Mesh(np.array(numjax.devices()), ("d",))
    assert mesh.shape == {"d": len(numjax.devices())} and not mesh.empty
    explicit = numjax.sharding.Mesh(np.array(numjax.devices()), ("d",),
                                    axis_types=(numjax.sharding.AxisType.Explicit,))
    assert explicit.are_all_axes_explicit
    with pytest.raises(ValueError, match="axis_names"):
        numjax.sharding.Mesh(np.array(numjax.devices()), ("a", "b"))


def test_private_compiler_module_exists_for_chex():
    # chex imports jax._src.compiler at import time (restrict_backends patches it).
    from numjax._src import compiler
    assert callable(compiler.backend_compile)


# ---------------------------------------------------------------- lax.Precision

def test_precision_enum_matches_jax():
    P = lax.Precision
    assert [p.name for p in P] == ["DEFAULT", "HIGH", "HIGHEST"]
    assert P.HIGHEST.value == 2 and str(P.DEFAULT) == "DEFAULT"
    # JAX 0.10.2's string spellings.
    for name, want in [("highest", P.HIGHEST), ("float32", P.HIGHEST), ("bfloat16", P.DEFAULT),
                       ("tensorfloat32", P.HIGH), ("fastest", P.DEFAULT), ("high", P.HIGH)]:
        assert P(name) is want, name
    with pytest.raises(ValueError):
        P("no-such-precision")
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(jnp.dot(jnp.asarray(x), jnp.asarray(x.T), precision=P.HIGHEST), x @ x.T)


# ---------------------------------------------------------------- jnp.vdot, *_like of ShapeDtypeStruct

@pytest.mark.parametrize("a, b", [
    ([1 + 2j, 3j], [1j, 2.0]),              # JAX: (2-5j), the first argument conjugated
    (np.ones((2, 2)), np.arange(4.0).reshape(2, 2)),
    ([1, 2, 3], [4, 5, 6]),
])
def test_vdot_conjugates_and_takes_precision(a, b):
    got = jnp.vdot(jnp.asarray(a), jnp.asarray(b), precision=lax.Precision.HIGHEST)
    want = np.vdot(np.asarray(a), np.asarray(b))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    out = jnp.vdot(jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int32), preferred_element_type=jnp.float32)
    assert out.dtype == np.float32   # as JAX


def test_vdot_grad_and_jit():
    a, b = jnp.arange(3.0), jnp.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(numjax.grad(jnp.vdot)(a, b), b)
    np.testing.assert_allclose(jit_compiled(lambda x, y: jnp.vdot(x, y, precision="highest"), a, b),
                               np.vdot(np.arange(3.0), [1.0, -2.0, 0.5]))


def test_like_functions_accept_shape_dtype_struct():
    # optax.MultiSteps calls jnp.zeros_like on jax.eval_shape's ShapeDtypeStructs.
    s = numjax.ShapeDtypeStruct((2,), jnp.int32)
    z = jnp.zeros_like(s)
    assert (z.shape, z.dtype, z.weak_type) == ((2,), np.int32, False)
    np.testing.assert_array_equal(z, [0, 0])
    o = jnp.ones_like(s, dtype=jnp.float32)
    assert o.dtype == np.float32
    np.testing.assert_array_equal(o, [1.0, 1.0])
    np.testing.assert_array_equal(jnp.full_like(s, 3, shape=(3,)), [3, 3, 3])
    shapes = numjax.eval_shape(lambda x: {"y": x * 2}, jnp.ones((2, 2)))
    assert numjax.tree.map(jnp.zeros_like, shapes)["y"].shape == (2, 2)


# ---------------------------------------------------------------- lax.cond(operand=...)

def test_cond_operand_keyword():
    # optax.apply_if_finite uses the single-operand spelling cond(p, f, g, operand=x).
    def f(p, x):
        return lax.cond(p, lambda v: v + 1, lambda v: v - 1, operand=x)
    assert int(f(True, 1)) == 2 and int(f(False, 1)) == 0
    assert float(jit_compiled(f, jnp.bool_(True), jnp.float32(1.0))) == 2.0
    assert float(jit_compiled(f, jnp.bool_(False), jnp.float32(1.0))) == 0.0
    want = (r"if 'operand' keyword is passed then no positional operands can be passed, "
            r"got operand=1 and positional operands \(2,\)")
    with pytest.raises(TypeError, match=want):
        lax.cond(True, lambda x: x + 1, lambda x: x - 1, 2, operand=1)


# ---------------------------------------------------------------- experimental.checkify

def test_checkify_concrete_checks():
    from numjax.experimental import checkify
    with pytest.raises(checkify.JaxRuntimeError, match=r"^bad 3 \(`check` failed\)$"):
        checkify.check(jnp.array(False), "bad {x}", x=jnp.array(3))
    assert issubclass(checkify.JaxRuntimeError, ValueError)   # as JAX's checkify

    def f(x):
        checkify.check(x > 0, "x must be positive, got {}", x)
        return x * 2
    err, out = checkify.checkify(f)(jnp.float32(-1.0))
    assert err.get() == "x must be positive, got -1.0 (`check` failed)" and float(out) == -2.0
    with pytest.raises(checkify.JaxRuntimeError):
        checkify.check_error(err)
    err, out = checkify.checkify(f)(jnp.float32(1.0))
    assert err.get() is None and float(out) == 2.0
    checkify.check_error(err)
    assert checkify.all_checks == checkify.user_checks | checkify.automatic_checks
    assert checkify.FailedCheckError in checkify.user_checks
    assert not checkify.user_checks & checkify.automatic_checks


def test_checkify_traced_predicate_is_refused_not_ignored():
    # A check staged by jit without checkify cannot run in the compiled program: JAX's
    # ValueError at lowering, whatever the predicate's value (see tests/test_checkify.py).
    from numjax.experimental import checkify
    with pytest.raises(ValueError, match="Cannot abstractly evaluate a checkify.check which was not functionalized"):
        numjax.jit(lambda x: checkify.check(x > 0, "positive") or x)(jnp.float32(1.0))


def test_errors_jax_runtime_error():
    assert issubclass(numjax.errors.JaxRuntimeError, RuntimeError)


# ---------------------------------------------------------------- the import shim itself

def test_jax_shim_aliases_modules_to_numjax():
    # A subprocess: the shim takes over the name ``jax`` for the whole interpreter.
    compat = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compat")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {compat!r})
        import jax_shim
        jax_shim.install()
        import jax, jax.numpy as jnp, numjax, numjax.numpy
        from jax import lax, tree_util, random, nn, scipy
        from jax.experimental import checkify
        import jax.scipy.special
        assert jax is numjax and jnp is numjax.numpy and lax is numjax.lax
        assert jax.tree is numjax.tree and checkify is numjax.experimental.checkify
        assert numjax.numpy.__spec__.name == "numjax.numpy"
        try:
            import jax.no_such_module
        except ModuleNotFoundError as e:
            assert "numjax.no_such_module" in str(e), e
        else:
            raise AssertionError("missing submodule imported")
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


# ---------------------------------------------------------------- dtypes.prng_key / extended

def test_prng_key_dtype_hierarchy():
    # optax._src.utils: isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    key = numjax.random.key(0)
    assert isinstance(key, numjax.Array)
    d = numjax.dtypes
    # JAX 0.10.2: True True False False True
    assert d.issubdtype(key.dtype, d.prng_key) and d.issubdtype(key.dtype, d.extended)
    assert not d.issubdtype(key.dtype, jnp.integer)
    assert not d.issubdtype(jnp.uint32, d.prng_key)
    assert issubclass(d.prng_key, d.extended)
    assert jnp.issubdtype(key.dtype, d.prng_key)
    assert jnp.issubdtype(jnp.float32, jnp.floating) and not jnp.issubdtype("int32", jnp.floating)
    raw = numjax.random.PRNGKey(0)
    assert isinstance(raw, numjax.Array) and not jnp.issubdtype(raw.dtype, d.prng_key)


# ---------------------------------------------------------------- lax.all_to_all / pswapaxes

_X = np.arange(2 * 2 * 3.0, dtype=np.float32).reshape(2, 2, 3)
_Y = np.arange(2 * 4 * 3.0, dtype=np.float32).reshape(2, 4, 3)


@pytest.mark.parametrize("fn, x, want", [   # expected values: JAX 0.10.2 under vmap(axis_name="i")
    (lambda v: lax.all_to_all(v, "i", 0, 1), _X,
     [[[0, 6], [1, 7], [2, 8]], [[3, 9], [4, 10], [5, 11]]]),
    (lambda v: lax.all_to_all(v, "i", 0, 0), _X,
     [[[0, 1, 2], [6, 7, 8]], [[3, 4, 5], [9, 10, 11]]]),
    (lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), _Y,
     [[[0, 1, 2, 12, 13, 14], [3, 4, 5, 15, 16, 17]], [[6, 7, 8, 18, 19, 20], [9, 10, 11, 21, 22, 23]]]),
    (lambda v: lax.pswapaxes(v, "i", 0), _X,
     [[[0, 1, 2], [6, 7, 8]], [[3, 4, 5], [9, 10, 11]]]),
])
def test_all_to_all_under_vmap(fn, x, want):
    got = numjax.vmap(fn, axis_name="i")(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want, np.float32))


def test_all_to_all_errors():
    with pytest.raises(ValueError, match="all_to_all requires the size of the mapped axis axis_name to equal "
                                         "x.shape\\[split_axis\\], but they are 2 and 3 respectively"):
        numjax.vmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")(jnp.asarray(_X))
    with pytest.raises(NameError, match="unbound axis name: j"):
        lax.all_to_all(jnp.ones(2), "j", 0, 0)
