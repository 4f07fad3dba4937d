"""tests/int_semantics_table.py's operations on numjax (eager and jit) against real JAX 0.10.2
(jit), element for element: integer division and remainders by 0 and -1, INT_MIN, shifts
by any amount, wrapping arithmetic, float floor division and remainders at signed zeros,
infinities, NaN and huge values, saturating float -> int conversion.

    .venv-jax/bin/python -m pytest tests/compat/test_int_semantics_vs_jax.py

Float results that are subnormal on either side are left out: XLA's CPU code flushes
subnormal results to zero (a difference of every float operation, not of these).
"""
import os
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import numjax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import lax as nlax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from int_semantics_table import (FLOAT64_DTYPES, FLOAT_BINARY, FLOAT_DTYPES, FLOAT_UNARY,  # noqa: E402
                                 INT64_DTYPES, INT_BINARY, INT_DTYPES, INT_UNARY, float_operands,
                                 float_pairs, int_operands, int_pairs)


@pytest.fixture(autouse=True)
def _x64_matching(request):
    """Both libraries in the x64 mode the dtype needs, restored afterwards."""
    dt = request.node.callspec.params.get("dt", "") if hasattr(request.node, "callspec") else ""
    name = request.node.callspec.params.get("name", "") if hasattr(request.node, "callspec") else ""
    want = dt in INT64_DTYPES + FLOAT64_DTYPES or name.endswith("64)")
    old = (jax.config.jax_enable_x64, numjax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", want)
    numjax.config.update("jax_enable_x64", want)
    yield
    jax.config.update("jax_enable_x64", old[0])
    numjax.config.update("jax_enable_x64", old[1])


def _results(fn, args):
    """(JAX jit, numjax eager, numjax jit) of ``fn(jnp, lax, *args)``."""
    want = np.asarray(jax.jit(lambda *a: fn(jjnp, jlax, *a))(*[jjnp.asarray(a) for a in args]))
    eager = np.asarray(fn(njnp, nlax, *[njnp.asarray(a) for a in args]))
    jitted = np.asarray(numjax.jit(lambda *a: fn(njnp, nlax, *a))(*args))
    return want, eager, jitted


def _subnormal(v):
    v = np.asarray(v)
    if v.dtype.kind != "f":
        return np.zeros(v.shape, bool)
    return (v != 0) & (np.abs(v.astype(np.float64)) < float(np.finfo(v.dtype).tiny))


def _assert_same(label, got, want, args):
    assert got.dtype == want.dtype, f"{label}: dtype {got.dtype}, JAX {want.dtype}"
    if want.dtype.kind == "f":
        bits = f"u{want.dtype.itemsize}"
        same = (got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))
        same |= _subnormal(got) | _subnormal(want)
    else:
        same = got == want
    where = np.nonzero(~same)[0][:6]
    assert same.all(), (f"{label}: at operands {[a[where].tolist() for a in args]} numjax gives "
                        f"{got[where].tolist()}, JAX {want[where].tolist()}")


def _check(name, fn, args):
    want, eager, jitted = _results(fn, args)
    _assert_same(f"eager {name}", eager, want, args)
    _assert_same(f"jit {name}", jitted, want, args)


@pytest.mark.parametrize("dt", INT_DTYPES + INT64_DTYPES)
@pytest.mark.parametrize("name", sorted(INT_BINARY))
def test_int_binary_vs_jax(name, dt):
    xs, ys = int_pairs(dt)
    _check(name, INT_BINARY[name][0], (np.array(xs, dt), np.array(ys, dt)))


@pytest.mark.parametrize("dt", INT_DTYPES + INT64_DTYPES)
@pytest.mark.parametrize("name", sorted(INT_UNARY))
def test_int_unary_vs_jax(name, dt):
    _check(name, INT_UNARY[name][0], (np.array(int_operands(dt), dt),))


@pytest.mark.parametrize("dt", FLOAT_DTYPES + FLOAT64_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
def test_float_binary_vs_jax(name, dt):
    xs, ys = float_pairs(dt)
    _check(name, FLOAT_BINARY[name][0], (np.array(xs, dt), np.array(ys, dt)))


@pytest.mark.parametrize("dt", FLOAT_DTYPES + FLOAT64_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary_vs_jax(name, dt):
    _check(name, FLOAT_UNARY[name][0], (np.array(float_operands(dt), dt),))


# ---------------------------------------------------------------- half-precision reductions

_HALF_CASES = {
    "sum": lambda m, a: m.sum(a),
    "mean": lambda m, a: m.mean(a),
    "var": lambda m, a: m.var(a),
    "mean_axis": lambda m, a: m.mean(a.reshape(16, -1), axis=1),
    "cumsum_last": lambda m, a: m.cumsum(a)[-1],
}
# bfloat16's cumsum is left out: XLA rewrites it into a tree of bfloat16 additions (rounding
# each partial sum), numjax keeps a float32 running sum (rounding each output once), so the
# two round differently; float16's overflows to inf in both.
_HALF_PARAMS = [(name, dt) for dt in ("float16", "bfloat16") for name in sorted(_HALF_CASES)
                if (name, dt) != ("cumsum_last", "bfloat16")]


@pytest.mark.parametrize("name,dt", _HALF_PARAMS)
def test_half_precision_reductions_accumulate_wide(name, dt):
    """jnp's reductions of half-precision values accumulate in float32, as JAX's do: the
    mean of 4096 values of 60000 is 60000 (a float16 running sum would overflow)."""
    fn = _HALF_CASES[name]
    x = np.full(4096, 60000.0, np.float32)
    want = np.asarray(jax.jit(lambda a: fn(jjnp, a))(jjnp.asarray(x).astype(dt))).astype(np.float64)
    nx = njnp.asarray(x).astype(dt)
    for got in (fn(njnp, nx), numjax.jit(lambda a: fn(njnp, a))(nx)):
        np.testing.assert_array_equal(np.asarray(got).astype(np.float64), want)
