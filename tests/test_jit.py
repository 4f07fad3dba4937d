"""jit: caching, static arguments, pytrees, lowering inspection, config flags."""
import logging
import os
import re
import subprocess
import sys
import textwrap
from functools import partial

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def test_jit_matches_eager_selu():
    x = jnp.asarray(np.linspace(-5, 5, 1001, dtype=np.float32))
    out = jax.jit(selu)(x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(selu(x)), rtol=2e-6, atol=1e-7)
    assert out.dtype == jnp.float32 and out.shape == (1001,)


def test_decorator_call_and_partial_forms():
    @jax.jit
    def f(x):
        return x + 1

    @partial(jax.jit, static_argnames=["n"])
    def g(x, n):
        return x * n

    assert float(f(1.0)) == 2.0
    assert float(g(2.0, n=3)) == 6.0
    assert float(jax.jit(lambda x: x - 1)(1.0)) == 0.0


def test_cache_hits_and_misses():
    def f(x):
        return x * 2

    jf = jax.jit(f)
    jf(jnp.ones(3))
    jf(jnp.ones(3))
    jf(jnp.ones(4))
    assert jf._cache_size() == 2
    assert jf.stats.trace_misses == 2 and jf.stats.trace_hits >= 1


def test_same_function_rejitted_in_a_loop_hits_the_cache():
    def f(x):
        return x + 1

    for _ in range(3):
        jf = jax.jit(f)
        jf(1.0)
    assert jax.jit(f)._cache_size() == 1
    assert jf.stats.trace_misses == 0


def test_lambda_and_partial_recreated_per_iteration_miss():
    def f(x, y):
        return x + y

    sizes = []
    for _ in range(3):
        jp = jax.jit(partial(f, y=1.0))
        jp(1.0)
        sizes.append(jp.stats.trace_misses)
    assert sizes == [1, 1, 1]


def test_static_argnums_recompiles_per_value():
    def f(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    jf = jax.jit(f, static_argnums=1)
    assert int(jf(10, 20)) == 30
    assert int(jf(10, 5)) == 15
    assert jf._cache_size() == 2
    assert int(jax.jit(f, static_argnames=["n"])(10, n=20)) == 30


def test_unhashable_static_arg():
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        jax.jit(lambda x, y: x, static_argnums=1)(1.0, [1])


def test_python_control_flow_on_traced_value_raises():
    def f(x):
        return x if x > 0 else 2 * x

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jax.jit(f)(10)
    msg = str(info.value)
    assert msg.startswith("Attempted boolean conversion of traced array with shape bool[].")
    assert "depends on the value of the argument x" in msg
    assert isinstance(info.value, jax.errors.ConcretizationTypeError)
    assert isinstance(info.value, TypeError)
    assert int(jax.jit(f, static_argnums=0)(10)) == 10


@pytest.mark.parametrize("conv", [int, float])
def test_tracer_conversion_errors(conv):
    with pytest.raises(jax.errors.ConcretizationTypeError, match=f"`{conv.__name__}` function"):
        jax.jit(lambda x: conv(x))(1.0)


def test_pytrees_in_and_out():
    f = jax.jit(lambda d: {"a": d["x"] + 1, "b": [d["y"] * 2, None], "c": (d["x"],)})
    out = f({"x": jnp.ones(2), "y": 3.0})
    assert set(out) == {"a", "b", "c"}
    np.testing.assert_array_equal(np.asarray(out["a"]), [2.0, 2.0])
    assert float(out["b"][0]) == 6.0 and out["b"][1] is None
    assert out["b"][0].weak_type


def test_weak_types_survive_jit():
    out = jax.jit(lambda x: x * 2)(1.0)
    assert out.dtype == jnp.float32 and out.weak_type
    out = jax.jit(lambda x: jnp.arange(3) * x)(2.0)
    assert out.dtype == jnp.float32 and out.weak_type


def test_loop_body_jit_example():
    loop_body = jax.jit(lambda i: i + 1)
    i = 0
    while i < 20:
        i = loop_body(i)
    out = 10 + i
    assert repr(out) == "Array(30, dtype=int32, weak_type=True)"


def test_lower_as_text_is_the_generated_source():
    lowered = jax.jit(selu).lower(jnp.ones(8))
    text = lowered.as_text()
    assert "def numjax_selu" in text and "numba.njit" not in text
    # One fused loop: a single kernel (no parallel twin: chunks of one kernel run in
    # parallel), no intermediate arrays.
    kernels = text.split("# ---- kernel ")[1:]
    assert len(kernels) == 1 and kernels[0].count("for ") == 1 and "numba.prange" in kernels[0]
    # (A small call runs the kernel directly, a large one through run_chunked: one kernel.)
    assert len(set(re.findall(r"\bk_\w+", text.split("def numjax_selu(")[1]))) == 1
    compiled = lowered.compile()
    np.testing.assert_allclose(np.asarray(compiled(jnp.ones(8))), np.asarray(selu(jnp.ones(8))))


def test_new_size_same_rank_reuses_source():
    f = jax.jit(lambda x: jnp.exp(x) * 2)
    a = f.lower(jnp.ones(10)).as_text()
    b = f.lower(jnp.ones(17)).as_text()
    assert a == b


def test_log_compiles_gives_reason(caplog):
    jax.config.update("jax_log_compiles", True)
    try:
        f = jax.jit(lambda x: x + 1)
        with caplog.at_level(logging.WARNING, logger="numjax"):
            f(jnp.ones(3))
            f(jnp.ones(4))
    finally:
        jax.config.update("jax_log_compiles", False)
    messages = [r.getMessage() for r in caplog.records]
    assert any("first call" in m for m in messages)
    assert any("float32[3] to float32[4]" in m for m in messages)


def test_disable_jit_runs_python():
    seen = []

    @jax.jit
    def f(x):
        seen.append(type(x).__name__)
        return x + 1

    with jax.disable_jit():
        f(jnp.ones(2))
    assert seen == ["Array"]


def test_x64_is_part_of_the_cache_key():
    f = jax.jit(lambda x: x * 2)
    assert f(1.0).dtype == jnp.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert f(1.0).dtype == jnp.float64
        assert jnp.arange(3.0).dtype == jnp.float64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert f(1.0).dtype == jnp.float32


def test_nested_jit_inlines():
    inner = jax.jit(lambda x: jnp.exp(x))
    outer = jax.jit(lambda x: inner(x) + 1)
    text = outer.lower(jnp.ones(4)).as_text()
    program = text.split("def numjax__lambda_(")[1].split("return")[0]
    # exp and add fused into one kernel across the jit boundary
    assert len(set(re.findall(r"\bk_\w+", program))) == 1
    np.testing.assert_allclose(np.asarray(outer(jnp.zeros(4))), 2.0)
    assert "jit[" in str(jax.make_jaxpr(outer)(jnp.ones(4)))


def test_closure_constants_become_arguments():
    c = jnp.arange(4.0)
    f = jax.jit(lambda x: x + c)
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(4))), [1, 2, 3, 4])


def test_second_process_hits_disk_cache(tmp_path):
    script = textwrap.dedent("""
        import numjax, numjax.numpy as jnp
        f = numjax.jit(lambda x: jnp.tanh(x) * 3 + 1)
        f(jnp.ones(5))
        exe = f.lower(jnp.ones(5)).compile().executable
        print(exe._obj.origin.replace(" ", "_"))
    """)
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout.split() == ["compiled"]
    assert second.stdout.split() == ["disk_cache"]


def test_equal_regions_share_one_kernel_across_programs():
    f = jax.jit(lambda x, b: jnp.maximum(x + b, 0.0))
    g = jax.jit(lambda x, b, w: jnp.maximum(x + b, 0.0) @ w)
    x, b, w = jnp.ones((4, 3)), jnp.ones(3), jnp.ones((3, 2))
    kernels_f = {k.split("\n")[0] for k in f.lower(x, b).as_text().split("# ---- kernel ")[1:]}
    kernels_g = {k.split("\n")[0] for k in g.lower(jnp.ones((7, 5)), jnp.ones(5), jnp.ones((5, 2)))
                 .as_text().split("# ---- kernel ")[1:]}
    assert kernels_f & kernels_g, (kernels_f, kernels_g)
    np.testing.assert_allclose(np.asarray(g(x, b, w)), np.full((4, 2), 6.0))


def test_reductions_over_no_axes_compile():
    # jnp.sum of a 0-d value is reduce_sum[axes=()]; it once reached Numba as a 0-d array
    # where a scalar was expected (optax.zero_nans under jit).
    import warnings
    x = jnp.float32(2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(jax.jit(lambda p: jnp.sum(p) + jnp.max(p))(x)) == 5.0
        assert bool(jax.jit(lambda p: jnp.any(jnp.isnan(p)))(x)) is False
        out = jax.jit(lambda p: jax.lax.cond(p > 0, lambda q: jnp.sum(q), lambda q: -q, p))(x)
    assert float(out) == 2.5


def test_training_loop_steps_compile_once():
    # The shape of JAX's example training loops (mnist_vae.py, mnist_classifier.py): a fresh
    # typed key each epoch, a Python int step counter, the optimizer state fed back, an eager
    # float32 batch from numpy, and the state's leaves passed back as committed Arrays. None of
    # these may change the trace-cache key after the first call.
    from numjax.example_libraries import optimizers
    opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)

    @jax.jit
    def run_epoch(key, i, opt_state, data):
        def body(j, state):
            noise = jax.random.normal(jax.random.fold_in(key, j), data.shape)
            grads = jax.grad(lambda p: jnp.sum((data + noise) @ p["w"]) + p["b"])(get_params(state))
            return opt_update(i + j, grads, state)
        return jax.lax.fori_loop(0, 2, body, opt_state)

    state = opt_init({"w": jnp.ones((3, 2)), "b": jnp.float32(0.5)})
    rng = np.random.default_rng(0)
    for epoch in range(4):
        data = rng.standard_normal((4, 3)).astype(np.float32)
        state = run_epoch(jax.random.key(epoch), epoch * 2, state, data)
    assert run_epoch._cache_size() == 1
    assert run_epoch.stats.trace_misses == 1 and run_epoch.stats.trace_hits == 3
