"""shard_map(check_vma=True), JAX's default: grad inside the body with respect to a replicated
input (in_specs P()) of a device-varying computation is the sum over the devices of their
gradients (JAX's pvary transposes to psum), a psum's gradient is not multiplied by the axis size,
and out_specs P() is then allowed; with check_vma=False each device keeps its own gradient.
Checked against numpy on 2 CPU devices (this file, run as a script in a subprocess, computes the
numjax values); tests/compat/test_shard_map_vma_vs_jax.py compares many more cases with JAX."""
import functools
import json
import os
import subprocess
import sys

import numpy as np

N = 2
rng = np.random.default_rng(3)
W = rng.standard_normal((3, 2)).astype(np.float32)
X = rng.standard_normal((4, 3)).astype(np.float32)


def cases():
    """The numjax results, computed when this file runs as a script."""
    import numjax as jax
    import numjax.numpy as jnp
    from numjax import lax
    from numjax.sharding import AxisType, PartitionSpec as P
    mesh = jax.make_mesh((N,), ("x",), axis_types=(AxisType.Auto,))

    def sm(body, out_specs, vma=True):
        return jax.shard_map(body, mesh=mesh, in_specs=(P(), P("x")), out_specs=out_specs, check_vma=vma)

    def loss(w, x):
        return jnp.sum(jnp.sin(x @ w))
    grad_w = lambda w, x: jax.grad(loss)(w, x)  # noqa: E731
    grad_w_psum = lambda w, x: jax.grad(lambda w: lax.psum(loss(w, x), "x"))(w)  # noqa: E731
    grad_w_mixed = lambda w, x: jax.grad(lambda w: loss(w, x) + jnp.sum(w * w))(w)  # noqa: E731
    grad_w_scan_psum = lambda w, x: jax.grad(lambda w: lax.scan(  # noqa: E731
        lambda c, xi: (c + lax.psum(jnp.sum(jnp.sin(xi @ w)), "x"), None), 0.0, x)[0])(w)
    out = {}
    for name, fn in {
            "vma_rep": lambda: sm(grad_w, P())(W, X),
            "vma_x": lambda: sm(grad_w, P("x"))(W, X),
            "vma_jit": lambda: jax.jit(sm(grad_w, P()))(W, X),
            "novma_x": lambda: sm(grad_w, P("x"), False)(W, X),
            "vma_psum": lambda: sm(grad_w_psum, P())(W, X),
            "novma_psum": lambda: sm(grad_w_psum, P("x"), False)(W, X),
            "vma_mixed": lambda: sm(grad_w_mixed, P())(W, X),
            "vma_grad_x": lambda: sm(lambda w, x: jax.grad(loss, argnums=1)(w, x), P("x"))(W, X),
            "vma_no_grad_error": lambda: sm(lambda w, x: x @ w, P())(W, X),
            "novma_rep": lambda: sm(grad_w, P(), False)(W, X),
            "vma_scan_psum": lambda: jax.jit(sm(grad_w_scan_psum, P("x")))(W, X),
            "novma_scan_psum": lambda: sm(grad_w_scan_psum, P("x"), False)(W, X),
            "vma_scan_psum_rep": lambda: sm(grad_w_scan_psum, P())(W, X)}.items():
        try:
            out[name] = np.asarray(fn()).tolist()
        except ValueError as e:
            out[name] = "ValueError: " + str(e)
    return out


@functools.lru_cache(maxsize=None)
def results():
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(N))
    proc = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT-JSON ")][-1]
    return json.loads(line[len("RESULT-JSON "):])


def device_grads():
    """Each device's gradient of sum(sin(x_i @ w)) with respect to w."""
    return [x.T @ np.cos(x @ W) for x in np.split(X, N)]


def test_replicated_input_gradient_is_summed_over_devices():
    r, g = results(), device_grads()
    np.testing.assert_allclose(r["vma_rep"], sum(g), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["vma_jit"], sum(g), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["vma_x"], np.concatenate([sum(g)] * N), rtol=1e-5, atol=1e-5)


def test_without_check_vma_each_device_keeps_its_gradient():
    r, g = results(), device_grads()
    np.testing.assert_allclose(r["novma_x"], np.concatenate(g), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["novma_rep"], g[0], rtol=1e-5, atol=1e-5)    # device 0's, unchecked


def test_psum_gradient_is_not_scaled_by_the_axis_size():
    r, g = results(), device_grads()
    np.testing.assert_allclose(r["vma_psum"], sum(g), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["novma_psum"], np.concatenate([N * gi for gi in g]), rtol=1e-5, atol=1e-5)


def test_psum_inside_a_scan_body_transposes_to_pvary():
    r, g = results(), device_grads()
    np.testing.assert_allclose(r["vma_scan_psum"], np.concatenate([sum(g)] * N), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["vma_scan_psum_rep"], sum(g), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["novma_scan_psum"], np.concatenate([N * gi for gi in g]), rtol=1e-5, atol=1e-5)


def test_invariant_term_added_to_a_varying_loss_is_counted_per_device():
    # sum(w * w) is invariant; added to the varying loss it is pvary'd, so its gradient is
    # summed over the devices too (as JAX gives).
    r, g = results(), device_grads()
    np.testing.assert_allclose(r["vma_mixed"], sum(g) + N * 2 * W, rtol=1e-5, atol=1e-5)


def test_sharded_input_gradient_stays_local():
    r = results()
    want = np.concatenate([np.cos(x @ W) @ W.T for x in np.split(X, N)])
    np.testing.assert_allclose(r["vma_grad_x"], want, rtol=1e-5, atol=1e-5)


def test_varying_output_with_replicated_out_specs_is_an_error():
    msg = results()["vma_no_grad_error"]
    assert msg.startswith("ValueError: shard_map applied to the function '<lambda>' was given out_specs "
                          "which require replication"), msg
    assert "check_vma=False" in msg


if __name__ == "__main__":
    print("RESULT-JSON " + json.dumps(cases()))
