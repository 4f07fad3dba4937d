"""pmap on NUMJAX_NUM_CPU_DEVICES CPU devices (shards on threads, collectives between segments).

The device count is read when numjax is imported, so each device count runs in
its own subprocess: one per count, running every check and printing JSON
(Numba compiles dominate; the persistent cache is shared with this process via
NUMJAX_CACHE_DIR, and per-shard shapes are equal for 1 and 2 devices, so the
second subprocess mostly reuses the first one's compiled segments).

``PMAP_EXPECTED``: what real JAX 0.10.2 returns for the same functions and inputs
on 1 and 2 (forced host platform) devices, committed as data.
"""
import functools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

SCRIPT = textwrap.dedent(r'''
    import json
    import numpy as np
    import numjax as jax
    import numjax.numpy as jnp
    from numjax import lax

    n = jax.local_device_count()

    def conv(v):
        return jax.tree_util.tree_map(lambda a: (np.asarray(a).tolist(), str(np.asarray(a).dtype)), v)

    def convolve(x, w):
        output = []
        for i in range(1, len(x) - 1):
            output.append(jnp.dot(x[i - 1:i + 2], w))
        return jnp.array(output)

    w = np.array([2., 3., 4.])
    xs = np.arange(5 * n).reshape(-1, 5)
    ws = np.stack([w] * n)
    X = np.arange(1.0, 1.0 + 2 * n, dtype=np.float32).reshape(n, 2)
    SH = [(j, (j + 1) % n) for j in range(n)]
    res = {"n_devices": n, "n_devices_list": len(jax.devices())}

    def rec(name, thunk):
        try:
            res[name] = conv(thunk())
        except Exception as e:
            res[name] = ["ERROR", type(e).__name__, str(e)]

    rec("convolve", lambda: jax.pmap(convolve)(xs, ws))
    rec("convolve_vmap", lambda: jax.vmap(convolve)(xs, ws))
    rec("psum", lambda: jax.pmap(lambda v: v / lax.psum(v, 'i'), axis_name='i')(X))
    rec("pmean", lambda: jax.pmap(lambda v: v - lax.pmean(v, 'i'), axis_name='i')(X))
    rec("pmax_pmin", lambda: jax.pmap(lambda v: (lax.pmax(v * jnp.array([1., -1.]), 'i'),
                                                 lax.pmin(v * jnp.array([1., -1.]), 'i')), axis_name='i')(X))
    rec("all_gather", lambda: jax.pmap(lambda v: lax.all_gather(v, 'i'), axis_name='i')(X))
    rec("all_gather_axis1", lambda: jax.pmap(lambda v: lax.all_gather(v, 'i', axis=1),
                                             axis_name='i')(X.reshape(n, 2, 1)))
    rec("all_gather_tiled", lambda: jax.pmap(lambda v: lax.all_gather(v, 'i', tiled=True), axis_name='i')(X))
    rec("ppermute", lambda: jax.pmap(lambda v: lax.ppermute(v, 'i', SH), axis_name='i')(X))
    rec("ppermute_partial", lambda: jax.pmap(lambda v: lax.ppermute(v, 'i', [(0, n - 1)]), axis_name='i')(X))
    rec("axis_index", lambda: jax.pmap(lambda v: v * lax.axis_index('i'), axis_name='i')(X))
    rec("in_axes_none", lambda: jax.pmap(lambda v, s: v * s, in_axes=(0, None))(X, np.float32(3.0)))
    rec("in_axes_1", lambda: jax.pmap(lambda v: jnp.sum(v), in_axes=1)(X.T.copy()))
    rec("out_axes_1", lambda: jax.pmap(lambda v: v * 2.0, out_axes=1)(X))
    rec("out_axes_none", lambda: jax.pmap(lambda v: lax.psum(v, 'i'), axis_name='i', out_axes=None)(X))
    rec("static_broadcasted", lambda: jax.pmap(lambda v, k: v ** k, static_broadcasted_argnums=1)(X, 2))
    rec("grad_psum", lambda: jax.pmap(jax.grad(lambda v: jnp.sum(v * lax.psum(v, 'i'))), axis_name='i')(X))
    rec("pmap_of_vmap_psum", lambda: jax.pmap(jax.vmap(lambda v: lax.psum(v, 'i'), axis_name='j'),
                                              axis_name='i')(X))
    rec("pmap_scan", lambda: jax.pmap(lambda v: lax.scan(lambda c, x: (c + x, c * x), 0.0, v), axis_name='i')(X))
    rec("pmap_dict", lambda: jax.pmap(lambda d: {"s": d["a"] + d["b"], "m": lax.pmean(d["a"], "i")},
                                      axis_name="i")({"a": X, "b": X * 10}))
    g = jax.jit(lambda x: x * 3.0 + 1.0)
    hh = jax.jit(lambda v: lax.psum(v, 'i') * 2.0)
    rec("repeated_jit_helper", lambda: jax.pmap(lambda v: (g(v) - g(v * 2.0), hh(v) + hh(v + 1.0)),
                                                axis_name='i')(X))
    rec("scan_psum", lambda: jax.pmap(lambda v: lax.scan(lambda c, x: (c + lax.psum(x, 'i'), c), 0., v),
                                      axis_name='i')(X))
    rec("scan_reverse_gather", lambda: jax.pmap(lambda v: lax.scan(
        lambda c, x: (c * 0.5 + lax.pmean(x, 'i'), lax.all_gather(c, 'i')), 1., v, reverse=True), axis_name='i')(X))
    rec("fori_psum", lambda: jax.pmap(lambda v: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(c, 'i') * 0.1, v),
                                      axis_name='i')(X))
    rec("while_psum", lambda: jax.pmap(lambda v: lax.while_loop(
        lambda c: lax.psum(c[1], 'i') < 4 * n, lambda c: (c[0] + lax.psum(c[0], 'i'), c[1] + 1), (v, 0))[0],
        axis_name='i')(X))
    rec("cond_psum", lambda: jax.pmap(lambda v: lax.cond(lax.psum(v[0], 'i') > 1, lambda u: lax.psum(u, 'i'),
                                                         lambda u: u, v), axis_name='i')(X))
    rec("kwargs", lambda: jax.pmap(lambda x, y: x + lax.psum(y, 'i'), axis_name='i')(X, y=X * 10))
    rec("vmap_of_pmap", lambda: jax.vmap(jax.pmap(lambda x: x * 2 + lax.axis_index('i'), axis_name='i'))(
        np.stack([X, X + 1])))
    rec("jit_of_pmap", lambda: jax.jit(jax.pmap(lambda x: x / lax.psum(x, 'i'), axis_name='i'))(X))
    rec("grad_of_pmap", lambda: jax.grad(lambda w: jnp.sum(jax.pmap(lambda x: jnp.sin(x * w) * lax.psum(x, 'i'),
                                                                    axis_name='i')(X)))(np.float32(0.5)))
    rec("divergent_while", lambda: jax.pmap(lambda v: lax.while_loop(
        lambda c: c[1] < lax.axis_index('i') + 2, lambda c: (c[0] + lax.psum(c[0], 'i'), c[1] + 1), (v, 0))[0],
        axis_name='i')(X))
    rec("too_many", lambda: jax.pmap(lambda v: v)(np.ones((n + 1, 2), np.float32)))
    rec("inconsistent", lambda: jax.pmap(lambda a, b: a + b)(np.ones((n, 2)), np.ones((n + 1, 2))))
    print("RESULT-JSON " + json.dumps(res))
''')


@functools.lru_cache(maxsize=None)
def run_checks(n_devices):
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(n_devices))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT-JSON ")][-1]
    return json.loads(line[len("RESULT-JSON "):])


def _is_leaf(t):
    return isinstance(t, list) and len(t) == 2 and isinstance(t[1], str) and t[1] not in ("ERROR",)


def _leaves(t):
    if _is_leaf(t):
        return [t]
    if isinstance(t, dict):
        return [x for k in sorted(t) for x in _leaves(t[k])]
    return [x for c in t for x in _leaves(c)]


def assert_same(got, want, what):
    assert not (isinstance(got, list) and got and got[0] == "ERROR"), f"{what}: {got}"
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), what
    for (gv, gd), (wv, wd) in zip(g, w):
        assert gd == wd, f"{what}: dtype {gd} != {wd}"
        assert np.shape(gv) == np.shape(wv), f"{what}: shape {np.shape(gv)} != {np.shape(wv)}"
        np.testing.assert_allclose(np.asarray(gv), np.asarray(wv), rtol=1e-6, err_msg=what)


PMAP_EXPECTED = {
    1: {
        'convolve': [[[11.0, 20.0, 29.0]], "float32"],
        'psum': [[[1.0, 1.0]], "float32"],
        'pmean': [[[0.0, 0.0]], "float32"],
        'pmax_pmin': [[[[1.0, -2.0]], "float32"], [[[1.0, -2.0]], "float32"]],
        'all_gather': [[[[1.0, 2.0]]], "float32"],
        'all_gather_axis1': [[[[[1.0]], [[2.0]]]], "float32"],
        'all_gather_tiled': [[[1.0, 2.0]], "float32"],
        'ppermute': [[[1.0, 2.0]], "float32"],
        'ppermute_partial': [[[1.0, 2.0]], "float32"],
        'axis_index': [[[0.0, 0.0]], "float32"],
        'in_axes_none': [[[3.0, 6.0]], "float32"],
        'in_axes_1': [[3.0], "float32"],
        'out_axes_1': [[[2.0], [4.0]], "float32"],
        'out_axes_none': [[1.0, 2.0], "float32"],
        'static_broadcasted': [[[1.0, 4.0]], "float32"],
        'grad_psum': [[[2.0, 4.0]], "float32"],
        'pmap_of_vmap_psum': [[[1.0, 2.0]], "float32"],
        'pmap_scan': [[[3.0], "float32"], [[[0.0, 2.0]], "float32"]],
        'pmap_dict': {"m": [[[1.0, 2.0]], "float32"], "s": [[[11.0, 22.0]], "float32"]},
        'repeated_jit_helper': [[[[-3.0, -6.0]], "float32"], [[[6.0, 10.0]], "float32"]],
        'scan_psum': [[[3.0], "float32"], [[[0.0, 1.0]], "float32"]],
        'scan_reverse_gather': [[[2.25], "float32"], [[[[2.5], [1.0]]], "float32"]],
        'fori_psum': [[[1.3310000896453857, 2.6620001792907715]], "float32"],
        'while_psum': [[[16.0, 32.0]], "float32"],
        'cond_psum': [[[1.0, 2.0]], "float32"],
        'kwargs': [[[11.0, 22.0]], "float32"],
        'vmap_of_pmap': [[[[2.0, 4.0]], [[4.0, 6.0]]], "float32"],
        'jit_of_pmap': [[[1.0, 1.0]], "float32"],
        'grad_of_pmap': [3.0387916564941406, "float32"],
    },
    2: {
        'convolve': [[[11.0, 20.0, 29.0], [56.0, 65.0, 74.0]], "float32"],
        'psum': [[[0.25, 0.3333333432674408], [0.75, 0.6666666865348816]], "float32"],
        'pmean': [[[-1.0, -1.0], [1.0, 1.0]], "float32"],
        'pmax_pmin': [[[[3.0, -2.0], [3.0, -2.0]], "float32"], [[[1.0, -4.0], [1.0, -4.0]], "float32"]],
        'all_gather': [[[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]], "float32"],
        'all_gather_axis1': [[[[[1.0], [3.0]], [[2.0], [4.0]]], [[[1.0], [3.0]], [[2.0], [4.0]]]], "float32"],
        'all_gather_tiled': [[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]], "float32"],
        'ppermute': [[[3.0, 4.0], [1.0, 2.0]], "float32"],
        'ppermute_partial': [[[0.0, 0.0], [1.0, 2.0]], "float32"],
        'axis_index': [[[0.0, 0.0], [3.0, 4.0]], "float32"],
        'in_axes_none': [[[3.0, 6.0], [9.0, 12.0]], "float32"],
        'in_axes_1': [[3.0, 7.0], "float32"],
        'out_axes_1': [[[2.0, 6.0], [4.0, 8.0]], "float32"],
        'out_axes_none': [[4.0, 6.0], "float32"],
        'static_broadcasted': [[[1.0, 4.0], [9.0, 16.0]], "float32"],
        'grad_psum': [[[8.0, 12.0], [8.0, 12.0]], "float32"],
        'pmap_of_vmap_psum': [[[4.0, 6.0], [4.0, 6.0]], "float32"],
        'pmap_scan': [[[3.0, 7.0], "float32"], [[[0.0, 2.0], [0.0, 12.0]], "float32"]],
        'pmap_dict': {"m": [[[2.0, 3.0], [2.0, 3.0]], "float32"], "s": [[[11.0, 22.0], [33.0, 44.0]], "float32"]},
        'repeated_jit_helper': [[[[-3.0, -6.0], [-9.0, -12.0]], "float32"], [[[20.0, 28.0], [20.0, 28.0]], "float32"]],
        'scan_psum': [[[10.0, 10.0], "float32"], [[[0.0, 4.0], [0.0, 4.0]], "float32"]],
        'scan_reverse_gather': [[[3.75, 3.75], "float32"], [[[[3.5, 3.5], [1.0, 1.0]], [[3.5, 3.5], [1.0, 1.0]]], "float32"]],
        'fori_psum': [[[2.4560000896453857, 4.184000015258789], [4.456000328063965, 6.183999538421631]], "float32"],
        'while_psum': [[[161.0, 242.0], [163.0, 244.0]], "float32"],
        'cond_psum': [[[4.0, 6.0], [4.0, 6.0]], "float32"],
        'kwargs': [[[41.0, 62.0], [43.0, 64.0]], "float32"],
        'vmap_of_pmap': [[[[2.0, 4.0], [7.0, 9.0]], [[4.0, 6.0], [9.0, 11.0]]], "float32"],
        'jit_of_pmap': [[[0.25, 0.3333333432674408], [0.75, 0.6666666865348816]], "float32"],
        'grad_of_pmap': [0.8552799224853516, "float32"],
    },
}


CASES = [(n, name) for n in (1, 2) for name in PMAP_EXPECTED[n]]


@pytest.mark.parametrize("n_devices,name", CASES, ids=[f"{n}dev-{name}" for n, name in CASES])
def test_pmap_matches_jax(n_devices, name):
    assert_same(run_checks(n_devices)[name], PMAP_EXPECTED[n_devices][name], f"{name} on {n_devices} devices")


@pytest.mark.parametrize("n_devices", [1, 2])
def test_device_count_from_environment(n_devices):
    res = run_checks(n_devices)
    assert res["n_devices"] == n_devices and res["n_devices_list"] == n_devices


@pytest.mark.parametrize("n_devices", [1, 2])
def test_seed_pmap_convolve_equals_vmap(n_devices):
    res = run_checks(n_devices)
    assert res["convolve"] == res["convolve_vmap"]
    rows = [[11.0, 20.0, 29.0], [56.0, 65.0, 74.0]][:n_devices]   # the tutorial's rows for xs = arange(5n)
    assert res["convolve"] == [rows, "float32"]


@pytest.mark.parametrize("n_devices", [1, 2])
def test_mapped_axis_larger_than_device_count(n_devices):
    # JAX 0.10.2's shard_map-based pmap fails here with a sharding error; numjax keeps the
    # message of JAX's classic pmap.
    kind, err, msg = run_checks(n_devices)["too_many"]
    assert (kind, err) == ("ERROR", "ValueError")
    assert msg == (f"compiling computation that requires {n_devices + 1} logical devices, but only "
                   f"{n_devices} XLA devices are available (num_replicas={n_devices + 1})")


def test_loop_with_collective_must_agree_across_devices():
    # one device: a single trip count, fine; two devices: device-dependent trip counts with a
    # collective in the body (JAX deadlocks here; numjax raises)
    assert run_checks(1)["divergent_while"] == [[[4.0, 8.0]], "float32"]   # two doublings
    kind, err, msg = run_checks(2)["divergent_while"]
    assert (kind, err) == ("ERROR", "NotImplementedError")
    assert "must run the same number of iterations on every device" in msg


@pytest.mark.parametrize("n_devices", [1, 2])
def test_inconsistent_mapped_sizes(n_devices):
    kind, err, msg = run_checks(n_devices)["inconsistent"]
    assert (kind, err) == ("ERROR", "ValueError")
    assert msg.startswith("pmap got inconsistent sizes for array axes to be mapped")


def test_default_is_one_device():
    env = {k: v for k, v in os.environ.items() if k != "NUMJAX_NUM_CPU_DEVICES"}
    out = subprocess.run([sys.executable, "-c", "import numjax; print(numjax.local_device_count())"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr
