"""Gaps real programs found (see tests/compat/test_api_gaps_vs_jax.py for the checks against
JAX): tracer printing, abs of complex values, Array methods on tracers, list arguments,
order='F', broadcasting errors."""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp


def _printed(transform, x):
    seen = []

    def f(v):
        seen.append(repr(v))
        return jnp.sum(v)
    transform(f)(x)
    return seen[0]


def test_tracers_print_as_jax_does():
    assert _printed(jax.jit, 1.0) == "JitTracer(~float32[])"
    assert _printed(jax.grad, 1.0) == "GradTracer(primal=1.0, typeof(tangent)=f32[])"
    assert _printed(jax.vmap, jnp.ones((2, 3))) == "VmapTracer(aval=float32[3], batched=float32[2,3])"
    assert _printed(lambda f: lambda x: jax.jvp(f, (x,), (x,)), jnp.arange(3.0)) == \
        "JVPTracer(primal=[0. 1. 2.], tangent=[0. 1. 2.])"
    assert _printed(lambda f: jax.jit(jax.grad(f)), 1.0) == \
        "GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[])"


def test_abs_of_complex_is_real_and_differentiable():
    z = jnp.array([3 + 4j, 0j], dtype=jnp.complex64)
    for out in (jnp.abs(z), jax.jit(jnp.abs)(z), jnp.absolute(z)):
        assert out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), [5.0, 0.0])
    g = jax.grad(lambda v: jnp.abs(v).sum())(z)
    np.testing.assert_allclose(np.asarray(g), [0.6 - 0.8j, 0.0], rtol=1e-6)
    assert bool(jnp.allclose(z, z))


@pytest.mark.parametrize("transform", [jax.jit, jax.grad, jax.vmap])
def test_var_and_other_methods_on_tracers(transform):
    def f(x):
        out = x.var(-1, keepdims=True).sum() + x.std() + x.copy().sum() + x.ptp()
        return out + x.itemsize + x.nbytes
    x = jnp.arange(1.0, 7.0).reshape(2, 3)
    transform(f)(x if transform is not jax.vmap else jnp.stack([x, x]))


def test_order_f():
    x = jnp.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(jnp.ravel(x, order="F")), np.ravel(np.asarray(x), order="F"))
    np.testing.assert_array_equal(np.asarray(x.flatten("F")), np.asarray(x).flatten("F"))
    np.testing.assert_array_equal(np.asarray(x.reshape((3, 2), order="F")),
                                  np.asarray(x).reshape((3, 2), order="F"))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v.reshape(3, 2, order="F"))(x)),
                                  np.asarray(x).reshape((3, 2), order="F"))
    with pytest.raises(NotImplementedError):
        jnp.ravel(x, order="K")
    with pytest.raises(ValueError, match="Unexpected value for 'order' argument: f"):
        jnp.reshape(x, (6,), order="f")


def test_lists_are_rejected():
    with pytest.raises(TypeError, match=r"^sum requires ndarray or scalar arguments, got <class 'list'> "
                                        r"at position 0\.$"):
        jnp.sum([1, 2, 3])
    with pytest.raises(TypeError, match="add requires ndarray or scalar arguments, got <class 'list'> at position 1"):
        jnp.add(jnp.ones(3), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="sin requires"):
        jnp.sin([1.0])
    assert jnp.array([1, 2]).shape == (2,)


def test_incompatible_broadcasting_is_a_value_error():
    with pytest.raises(ValueError, match=r"^Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(4,\)\]$"):
        jnp.ones((2, 3)) + jnp.ones(4)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jax.jit(jnp.multiply)(jnp.ones((2, 3)), jnp.ones(4))
    # Equal ranks reach lax, whose TypeError names the primitive (as JAX's does).
    with pytest.raises(TypeError, match=r"^mul got incompatible shapes for broadcasting: \(3,\), \(4,\)\.$"):
        jnp.ones(3) * jnp.ones(4)
