"""Loops run in strips and speculatively (lowering/pyir_strips.py) against real JAX, bit for bit:
sin, cos and log1p on arrays whose strips need every tier (small, fast and large arguments,
nan/inf, both sides of log1p's select), in 1-D and narrow/wide 2-D regions, and the 8-op chain
of benchmarks/ (whose stages pass values through strip arrays)."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")
STRIP = 512


def _mixed(n_strips=48, tail=77, seed=0):
    rng = np.random.default_rng(seed)
    kinds = rng.choice(["small", "fast", "large", "special", "log_small", "log_big"], n_strips)
    parts = []
    for k in kinds:
        v = {"small": rng.uniform(-0.7, 0.7, STRIP), "fast": rng.normal(0, 20, STRIP),
             "large": rng.uniform(-1e5, 1e5, STRIP), "special": rng.normal(0, 3, STRIP),
             "log_small": rng.uniform(-0.4, 0.4, STRIP), "log_big": rng.uniform(0.5, 1e3, STRIP)}[k]
        if k == "special":
            v[:4] = [np.nan, np.inf, -np.inf, -0.0]
        parts.append(v)
    parts.append(rng.normal(0, 50, tail))
    return np.concatenate(parts).astype(np.float32)


def chain(np_, x):
    return np_.cos(np_.log1p(np_.tanh(np_.exp(np_.sin(x) * 0.5 + 0.25)))) * 2.0 - 1.0


PROGRAMS = {
    "sin": lambda N, x: N.sin(x),
    "cos": lambda N, x: N.cos(x),
    "log1p": lambda N, x: N.log1p(x),
    "cos_of_sin": lambda N, x: N.cos(N.sin(x) * 300.0),
    "chain": chain,
}


@pytest.mark.parametrize("shape", [None, (24, 1100), (600, 41)])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_bits_match_jax(name, shape):
    x = _mixed()
    if shape is not None:
        x = np.resize(x, shape)
    want = np.asarray(jax.jit(lambda v: PROGRAMS[name](jjnp, v))(x))
    got = np.asarray(nj.jit(lambda v: PROGRAMS[name](njnp, v))(x))
    # nan payloads aside: XLA's log1p gives 0xffffffff for every nan, numjax 0x7fc00000 (as
    # before strips; README "Missing")
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (name, x.reshape(-1)[~same.reshape(-1)][:5], got[~same][:5], want[~same][:5])
