"""The lowering plan (lowering/fusion.py): regions with explicit signatures, decided from the
primitives' properties, with no backend imported."""
import subprocess
import sys

import numjax as jax
import numjax.numpy as jnp
from numjax.lax import elementwise as ew, linalg, reductions, shape
from numjax.lowering import fusion


def _plan(fun, *args):
    jaxpr = jax.make_jaxpr(fun)(*args).jaxpr
    return jaxpr, fusion.Planner().plan(jaxpr)


def test_primitive_properties_drive_fusion():
    assert ew.add_p.elementwise and ew.exp_p.elementwise and not linalg.dot_general_p.elementwise
    assert reductions.reduce_sum_p.reduction == "sum" and reductions.argmax_p.reduction == "argmax"
    assert ew.exp_p.reduction is None and not reductions.reduce_sum_p.elementwise
    assert shape.broadcast_in_dim_p.is_load and shape.iota_p.is_load and not shape.reshape_p.is_load


def test_region_signature():
    x, y, s = jnp.ones((3, 4)), jnp.ones(4), jnp.float32(2)
    jaxpr, items = _plan(lambda x, y, s: (jnp.sum(jnp.exp(x) * s, axis=0), x + y[None, :],
                                          jnp.argmax(x, axis=1)), x, y, s)
    a, b, c = jaxpr.invars
    f, h, i = jaxpr.outvars
    fused, lone = items
    assert fused.inputs == [a, c, b]              # first use: exp a, mul _ c, broadcast b
    assert fused.outputs == [h, f]                # materialized values, then reduction results
    assert fused.shape == (3, 4)
    assert [(d.size, d.source) for d in fused.dims] == [(3, (0, 0)), (4, (0, 1))]
    (red,) = fused.reductions
    assert (red.primitive, red.axes, red.result) == (reductions.reduce_sum_p, (0,), f)
    assert lone.inputs == [a] and lone.outputs == [i]
    assert [(r.primitive, r.axes, r.operand) for r in lone.reductions] == [(reductions.argmax_p, (1,), a)]


def test_dims_without_an_input_are_constants():
    _, items = _plan(lambda: shape.broadcasted_iota(jnp.int32, (2, 5), 1) * 3)
    (region,) = items
    assert region.inputs == []
    assert [(d.size, d.source) for d in region.dims] == [(2, None), (5, None)]


def test_planner_imports_no_compiler():
    code = ("import sys, numjax.lowering.fusion\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')\n"
            "       or m.startswith(('numjax.lowering.scalar', 'numjax.lowering.vmath'))]\n"
            "assert not bad, bad\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
