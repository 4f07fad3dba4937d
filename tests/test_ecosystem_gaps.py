"""Gaps optax's and chex's own test suites found (tests/ecosystem/run_suite.py), each as JAX
behaves."""
import os
import subprocess
import sys

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax


def test_jitted_function_type_is_named_as_jax():
    # chex's assert_max_traces tells a jitted function by its type's name.
    assert type(jax.jit(lambda x: x)).__name__ == "PjitFunction"


def test_lax_broadcast_shapes_is_numpy_broadcasting():
    assert lax.broadcast_shapes((1, 2, 1, 3), (2, 1, 4, 3)) == (2, 2, 4, 3)
    assert lax.broadcast_shapes((3,), (2, 1)) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        lax.broadcast_shapes((2, 3), (3, 2))


def test_indexing_an_empty_axis_with_empty_arrays():
    x, i = jnp.zeros((0, 4)), jnp.zeros((0,), jnp.int32)
    assert x[i, i].shape == (0,)
    assert jax.jit(lambda x, i: x[i, i])(x, i).shape == (0,)
    assert jnp.zeros((3, 0))[jnp.array([0, 1])].shape == (2, 0)


def test_vmap_of_dynamic_indexing_over_an_empty_batch():
    f = jax.vmap(lambda x, i: x.at[i].get(mode="clip"))
    assert f(jnp.zeros((0, 3)), jnp.zeros((0,), jnp.int32)).shape == (0,)
    g = jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))
    assert g(jnp.zeros((0, 5)), jnp.zeros((0,), jnp.int32)).shape == (0, 2)


def test_uint64_max_literal_compiles():
    jax.config.update("jax_enable_x64", True)
    try:
        top = jnp.iinfo(jnp.uint64).max

        def inc(c):
            m = jnp.array(top, dtype=jnp.uint64)
            return jnp.where(c < m, c + 1, m)
        f = jax.jit(inc)
        assert int(f(jnp.asarray(3, jnp.uint64))) == 4
        assert int(f(jnp.asarray(top, jnp.uint64))) == top
    finally:
        jax.config.update("jax_enable_x64", False)


def test_compiler_ir_text_equal_for_equal_programs():
    x = jnp.array([4.0, 5.2])
    texts = {jax.jit(f).lower(x).compiler_ir(dialect="hlo").as_hlo_text()
             .split("ENTRY", 1)[1] for f in (lambda x: x ** 2, lambda x: x * x, jnp.square)}
    assert len(texts) == 1
    text = jax.jit(lambda x: x * x).lower(x).compiler_ir("hlo").as_hlo_text()
    assert text.startswith("HloModule jit_") and "multiply(Arg_0.1, Arg_0.1)" in text
    assert "ROOT tuple" in text
    z = jnp.array([4 + 1j])
    assert (jax.jit(lambda x: x * x).lower(z).compiler_ir("hlo").as_hlo_text()
            != jax.jit(lambda x: (x.conj() * x).real).lower(z).compiler_ir("hlo").as_hlo_text())
    with pytest.raises(ValueError):
        jax.jit(lambda x: x).lower(x).compiler_ir("tpu")


def test_checking_leaks_and_accepted_flags():
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks
    assert not jax.config.jax_check_tracer_leaks
    jax.config.update("jax_numpy_rank_promotion", "allow")
    assert jax.device_count("cpu") == jax.local_device_count() >= 1
    assert jax.process_index() == 0 and jax.process_count() == 1


def test_xla_flags_device_count_read_when_devices_start():
    # chex's set_n_cpu_devices sets XLA_FLAGS after `import jax`, before any device is used,
    # and reads jax._src.xla_bridge._backends to know whether the backend started.
    code = ("import os, numjax as jax\n"
            "assert jax._src.xla_bridge._backends == {}\n"
            "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=3'\n"
            "print(jax.device_count(), sorted(jax._src.xla_bridge._backends))\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMJAX_NUM_CPU_DEVICES"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["3", "['cpu']"]


def test_jitted_function_signature_without_following_wrapped():
    import inspect

    def foo(x, y=1, *, z=2):
        return x
    sig = inspect.signature(jax.jit(foo), follow_wrapped=False)   # chex's fake_pmap asks so
    assert str(sig) == "(x, y=1, *, z=2)"


def test_pmap_of_a_scalar_is_a_value_error():
    with pytest.raises(ValueError, match="rank should be at least 1"):
        jax.pmap(lambda x, y: x + y)(jnp.ones(1), 100)


def test_kernels_of_equal_source_over_other_types_are_distinct():
    # A weak int and a float scalar converted to float32 give the same kernel text; optax's
    # sigmoid_focal_loss(gamma=2, alpha=0.5) met this under jit.
    def f(x, gamma=2.0, alpha=0.25):
        return x ** gamma * alpha
    x = jnp.ones(3) * 3
    np.testing.assert_allclose(jax.jit(f)(x, gamma=2, alpha=0.5), [4.5, 4.5, 4.5])


def test_where_and_astype_on_typed_keys():
    # optax's MultiSteps selects between optimizer states holding typed keys.
    k, k2 = jax.random.key(0), jax.random.key(1)
    picked = jax.jit(lambda c, a, b: jnp.astype(jnp.where(c, a, b), a.dtype))(False, k, k2)
    np.testing.assert_array_equal(jax.random.key_data(picked), jax.random.key_data(k2))
    a, b = jax.random.split(k), jax.random.split(k2)
    both = jnp.where(jnp.array([True, False]), a, b)
    np.testing.assert_array_equal(jax.random.key_data(both),
                                  np.stack([jax.random.key_data(a)[0], jax.random.key_data(b)[1]]))


def test_asking_for_a_backend_numjax_lacks_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu'"):
        jax.device_count("gpu")
    with pytest.raises(RuntimeError, match="Unknown backend: 'tpu'"):
        jax.devices("tpu")
    assert jax.devices("cpu") == jax.devices()
