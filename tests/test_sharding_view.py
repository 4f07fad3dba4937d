"""jax.debug.visualize_array_sharding: the table real JAX 0.10.2 prints for an (8, 4) array
on a 2x2 mesh (recorded from JAX; tests/compat/test_sharding_view_vs_jax.py compares many
more cases live), its errors, and the SingleDeviceSharding case."""
import os
import subprocess
import sys
import textwrap

import pytest

import numjax

pytest.importorskip("rich", reason="rich is in the test extra; visualize_sharding needs it")

JAX_2x2 = """\
┌───────┬───────┐
│       │       │
│ CPU 0 │ CPU 1 │
│       │       │
│       │       │
├───────┼───────┤
│       │       │
│ CPU 2 │ CPU 3 │
│       │       │
│       │       │
└───────┴───────┘

"""

JAX_1D = """\
┌───────┬───────┐
│CPU 0,1│CPU 2,3│
└───────┴───────┘

"""

_PROGRAM = textwrap.dedent("""
    import numjax as jax, numjax.numpy as jnp
    P, NS = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    jax.debug.visualize_array_sharding(jax.device_put(jnp.zeros((8, 4)), NS(mesh, P("x", "y"))))
    print("--")
    jax.debug.visualize_array_sharding(jax.device_put(jnp.zeros(8), NS(mesh, P("x"))))
""")


def test_tables_as_jax_draws_them():
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="4")
    env.pop("FORCE_COLOR", None)
    proc = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    two_d, one_d = proc.stdout.split("--\n")
    # Blank lines after a table vary with rich's version (JAX's output does too).
    assert two_d.rstrip("\n") == JAX_2x2.rstrip("\n")
    assert one_d.rstrip("\n") == JAX_1D.rstrip("\n")


def test_single_device_array(capsys):
    numjax.debug.visualize_array_sharding(numjax.numpy.ones((4, 4)))
    out = capsys.readouterr().out
    assert "CPU 0" in out and out.count("┌") == 1


@pytest.mark.parametrize("shape", [(), (2, 2, 2)])
def test_rank_errors(shape):
    with pytest.raises(ValueError, match="1 and 2 dimensions"):
        numjax.debug.visualize_sharding(shape, numjax.numpy.ones(4).sharding)


def test_tracer_is_rejected():
    with pytest.raises(TypeError, match="concrete Array"):
        numjax.jit(lambda x: numjax.debug.visualize_array_sharding(x))(numjax.numpy.ones(3))
