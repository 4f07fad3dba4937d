"""JAX's sharding API on 2 CPU devices: meshes, NamedSharding, device_put, jit's shardings,
with_sharding_constraint, reshard, set_mesh, shard_map (numjax/sharding.py, numjax/shmap.py).

The device count is read when numjax starts, so tests/sharding_program.py runs once in a
subprocess with ``NUMJAX_NUM_CPU_DEVICES=2`` (as a JAX script, through ``python -m numjax``)
and these tests check its record: values against NumPy, shardings against what JAX 0.10.2
reports (tests/compat/test_sharding_vs_jax.py compares the whole record with real JAX).
A few single-device checks run in this process.
"""
import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import numjax as jax
from numjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "sharding_program.py")

X = np.arange(8.0, dtype=np.float32).reshape(4, 2)
V8 = np.arange(8.0, dtype=np.float32)
EXPLICIT = "Mesh('x': 2, axis_types=(Explicit,))"
AUTO = "Mesh('x': 2, axis_types=(Auto,))"


def named(mesh, spec):
    return f"NamedSharding(mesh={mesh}, spec={spec}, memory_kind=device)"


@functools.lru_cache(maxsize=None)
def record():
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="2")
    proc = subprocess.run([sys.executable, "-m", "numjax", PROGRAM], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "EagerFallbackWarning" not in proc.stderr, proc.stderr[-4000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT-JSON ")][-1]
    return json.loads(line[len("RESULT-JSON "):])


def error_of(name):
    out = record()[name]
    assert isinstance(out, dict) and "error" in out, f"{name}: expected an error, got {out}"
    return out["error"], out["message"]


def test_meshes():
    r = record()
    assert r["device_count"] == 2
    assert r["mesh_str"] == EXPLICIT   # make_mesh: Explicit axes by default, as JAX 0.10
    assert r["mesh_repr"] == "Mesh(axis_sizes=(2,), axis_names=('x',), axis_types=(Auto,))"
    assert r["grid_str"] == "Mesh('x': 2, 'y': 1, axis_types=(Explicit, Explicit))"
    assert r["mesh_shape"] == {"x": 2, "y": 1}
    assert r["axis_types"] == ["Explicit", "Auto"]


def test_device_put_with_named_sharding():
    r = record()
    np.testing.assert_array_equal(r["put_value"], X)
    assert r["put_sharding"] == named(EXPLICIT, "P('x',)")
    assert r["put_replicated"] == named(EXPLICIT, "P()")
    assert r["pytree_put"] == [named(EXPLICIT, "P()")] * 3
    assert r["spec_eq"] == [True, True]


def test_addressable_shards():
    r = record()
    (d0, i0, rep0, data0), (d1, i1, rep1, data1) = r["shards"]
    assert (d0, d1, rep0, rep1) == (0, 1, 0, 0)
    assert i0 == str((slice(0, 2), slice(None))) and i1 == str((slice(2, 4), slice(None)))
    np.testing.assert_array_equal(data0, X[:2])
    np.testing.assert_array_equal(data1, X[2:])
    np.testing.assert_array_equal(r["addressable_data_1"], X[2:])
    assert r["replicated_shards"] == [[0, 0], [1, 1]]   # same block, replica ids 0 and 1
    assert r["is_fully_replicated"] == [False, True]
    assert r["is_fully_addressable"] is True
    assert r["shard_shape"] == [2, 2]


@pytest.mark.parametrize("name, spec", [
    ("jit_elementwise", named(EXPLICIT, "P('x', None)")),      # padded to the rank on Explicit
    ("jit_sum_sharded_axis", named(EXPLICIT, "P(None,)")),     # reducing the sharded axis
    ("jit_sum_other_axis", named(EXPLICIT, "P('x',)")),
    ("jit_sum_all", named(EXPLICIT, "P()")),
    ("jit_dot", named(EXPLICIT, "P('x', None)")),
    ("jit_transpose", named(EXPLICIT, "P(None, 'x')")),
    ("jit_argmax", named(EXPLICIT, "P('x',)")),
    ("jit_auto_elementwise", named(AUTO, "P('x',)")),          # trailing Nones dropped on Auto
    ("jit_auto_sum", named(AUTO, "P()")),
    ("jit_unsharded", "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"),
    ("jit_out_shardings", named(EXPLICIT, "P()")),
])
def test_jit_output_sharding(name, spec):
    assert record()[name] == spec


def test_jit_in_shardings():
    r = record()
    # A host value placed by in_shardings: specs as the compiler reports them (trailing Nones
    # dropped); an argument already carrying that sharding: as its type says (padded).
    assert r["jit_in_shardings"] == [named(EXPLICIT, s) for s in
                                     ("P('x',)", "P()", "P(None, 'x')", "P('x', None)", "P(None,)", "P(None, 'x')")]
    np.testing.assert_array_equal(r["jit_in_shardings_value"], X * 3)
    cls, msg = error_of("jit_in_shardings_mismatch")
    assert cls == "ValueError" and "does not match the sharding on the respective arg" in msg
    cls, msg = error_of("jit_in_shardings_indivisible")
    assert cls == "IndivisibleError" and "full shape: (3,)" in msg


def test_jit_values_and_grad_step_shardings():
    r = record()
    np.testing.assert_allclose(r["jit_elementwise_value"], np.tanh(X) * 2 + 1, rtol=1e-6)
    np.testing.assert_array_equal(r["jit_out_shardings_value"], X * 2)
    # A data-parallel step's parameters stay replicated: the batch dimension is contracted.
    assert r["jit_grad_step"] == [named(EXPLICIT, "P(None, None)"), named(EXPLICIT, "P(None,)")]


def test_errors_as_jax():
    cls, msg = error_of("err_indivisible_explicit")
    assert cls == "ValueError" and "partitioned 2 times, but does not evenly divide the dimension size 3" in msg
    cls, msg = error_of("err_indivisible_auto")
    assert cls == "IndivisibleError" and "(full shape: (3,), per-dimension tiling factors: [2]" in msg
    cls, msg = error_of("jit_out_shardings_indivisible")
    assert cls == "IndivisibleError" and "full shape: (3, 2)" in msg
    cls, msg = error_of("err_rank")
    assert cls == "ValueError" and "only valid for values of rank at least 2, but was applied to a value of " \
        "rank 1" in msg
    assert error_of("err_unknown_axis") == ("ValueError", "Resource axis: z of P('z',) is not found in mesh: ('x',).")
    cls, msg = error_of("err_duplicate_axis")
    assert cls == "DuplicateSpecError" and "duplicate entries for `x`" in msg
    assert error_of("err_make_mesh_too_big") == ("ValueError", "Number of devices 2 must be >= the product of "
                                                               "mesh_shape (3,)")
    cls, msg = error_of("err_mesh_ndim")
    assert cls == "ValueError" and "devices.ndim == 1 and len(axis_names) == 2" in msg
    cls, msg = error_of("err_reshard_no_mesh")
    assert cls == "ValueError" and "not under a mesh context" in msg
    cls, msg = error_of("err_wsc_explicit")
    assert cls == "ValueError" and "can only refer to Auto axes" in msg and "reshard" in msg
    cls, msg = error_of("smap_indivisible")
    assert cls == "ValueError" and "not evenly divisible by the corresponding mesh axis sizes" in msg
    cls, msg = error_of("smap_2d")
    assert cls == "ValueError" and "does not match the specs of the input: P(None, None)" in msg
    for name in ("smap_unreplicated_out", "smap_unreplicated_out_jit", "smap_unreplicated_2d",
                 "smap_all_gather_varies"):   # check_vma: a P() output must not vary over 'x'
        cls, msg = record()[name]
        assert cls == "ValueError" and "implies that the corresponding output value is replicated across mesh " \
            "axis 'x', but could not infer replication over any axes" in msg, name


def test_reshard_set_mesh_and_constraint():
    r = record()
    np.testing.assert_array_equal(r["wsc_auto"], X * 2)
    assert r["abstract_mesh_outside"] == "AbstractMesh((), axis_types=())"
    inside, resharded, after = r["set_mesh_context"]
    assert inside.startswith("AbstractMesh('x': 2, axis_types=(Explicit,)")
    assert resharded == named(EXPLICIT, "P('x', None)")
    assert after == "AbstractMesh((), axis_types=())"
    assert r["reshard_sharding"] == named(EXPLICIT, "P('x', None)")
    np.testing.assert_array_equal(r["reshard_value"], X)


def test_shard_map_collectives():
    r = record()
    assert r["smap_psum"] == V8.sum()
    assert r["smap_psum_sharding"] == named(AUTO, "P()")
    expected = V8 * np.repeat([0, 1], 4)
    np.testing.assert_array_equal(r["smap_axis_index"], expected)
    np.testing.assert_array_equal(r["smap_axis_index_jit"], expected)
    np.testing.assert_array_equal(r["smap_block_shape"], [2.0] * 4)   # each device sees 2 rows
    np.testing.assert_array_equal(r["smap_all_gather"], V8)
    np.testing.assert_array_equal(r["smap_ppermute"], np.concatenate([V8[4:], V8[:4]]))
    np.testing.assert_array_equal(r["smap_replicated_in"], 3 * V8)
    np.testing.assert_array_equal(r["smap_second_dim"], X + np.array([0, 1]))
    np.testing.assert_array_equal(r["smap_explicit_placed"], X * 2)
    np.testing.assert_array_equal(r["smap_vmap"], X.T.reshape(2, 2, 2).sum(1))
    total, doubled, biggest = r["smap_replicated_outputs"]
    np.testing.assert_array_equal(total, V8[:4] + V8[4:])
    np.testing.assert_array_equal(doubled, X * 2)
    np.testing.assert_array_equal(biggest, V8[4:])


def test_shard_map_two_dimensional_meshes():
    r = record()
    np.testing.assert_array_equal(r["smap_2d_auto"], X + np.array([[0], [0], [1], [1]]))
    np.testing.assert_array_equal(r["smap_2d_auto_jit"], X[:2] + X[2:])
    np.testing.assert_array_equal(r["smap_tuple_axes_auto"], V8 * np.repeat([1, 2], 4))


def test_shard_map_data_parallel_gradients():
    r = record()
    # d/dw sum((b w)^2) = 2 w sum(b^2), summed over the two devices' blocks.
    expected = 2 * 2.0 * np.sum(V8 ** 2)
    assert r["smap_grad_inside"] == r["smap_grad_inside_jit"] == r["grad_of_smap"] == expected


# -- in this process (one device unless the environment says otherwise)

def test_one_device_mesh_in_process():
    mesh = jax.make_mesh((1,), ("d",), axis_types=(AxisType.Auto,))
    x = jax.device_put(X, NamedSharding(mesh, P("d")))
    assert x.sharding == NamedSharding(mesh, P("d")) and x.is_fully_replicated
    y = jax.jit(lambda a: a + 1)(x)
    np.testing.assert_array_equal(y, X + 1)
    assert y.sharding.spec == P("d") and y.sharding.mesh is mesh
    assert isinstance(x.sharding, jax.sharding.Sharding)
    out = jax.shard_map(lambda a: jax.lax.psum(a, "d"), mesh=mesh, in_specs=P("d"), out_specs=P())(X)
    np.testing.assert_array_equal(out, X)


def test_set_mesh_as_statement_and_context():
    mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
    with jax.set_mesh(mesh):
        assert jax.sharding.get_abstract_mesh().axis_names == ("d",)
    assert jax.sharding.get_abstract_mesh().empty
    jax.set_mesh(mesh)
    try:
        assert jax.sharding.get_abstract_mesh().axis_names == ("d",)
    finally:
        jax.sharding._global_mesh[0] = None
    assert jax.sharding.get_abstract_mesh().empty


def test_shard_map_bad_specs():
    mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
    with pytest.raises(ValueError, match="Resource axis: z"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("z"), out_specs=P())(X)
    with pytest.raises(ValueError, match="rank 2"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P(None, None, "d"), out_specs=P())(X)
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        jax.shard_map(lambda a: a, in_specs=P(), out_specs=P())(X)


def test_experimental_shard_map_is_shard_map():
    from numjax.experimental.shard_map import shard_map
    mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
    np.testing.assert_array_equal(shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("d"), out_specs=P("d"))(X),
                                  X * 2)


# -- across processes: the same program under ``mpiexec -n 2``, one CPU device per process

MPI_LAUNCHER = """import runpy, sys
import numjax
numjax.distributed.initialize()
sys.stdout = open(f"rank{numjax.process_index()}.out", "w")
numjax.install_as_jax()
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
# What only a process's own devices answer (its shards), the rest must equal one process's.
PER_PROCESS = {"shards", "replicated_shards", "addressable_data_1", "is_fully_addressable", "jit_unsharded"}


def test_same_results_across_two_processes(tmp_path):
    sys.path.insert(0, HERE)
    import spmd_example
    if spmd_example.mpiexec() is None:
        pytest.skip("mpi4py/mpiexec not installed: tox -e mpi")
    (tmp_path / "launch.py").write_text(MPI_LAUNCHER)
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="1", NUMJAX_MPI_TIMEOUT="120")
    proc = subprocess.run([spmd_example.mpiexec(), "-n", "2", sys.executable, "launch.py", PROGRAM], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    alone = record()
    for rank in (0, 1):
        line = [ln for ln in (tmp_path / f"rank{rank}.out").read_text().splitlines()
                if ln.startswith("RESULT-JSON ")][-1]
        got = json.loads(line[len("RESULT-JSON "):])
        assert {k: v for k, v in got.items() if k not in PER_PROCESS} == \
            {k: v for k, v in alone.items() if k not in PER_PROCESS}
        assert got["shards"] == [alone["shards"][rank]]   # only its own device's block
        assert got["replicated_shards"] == [[rank, rank]]
        assert got["is_fully_addressable"] is False


GRID = "Mesh('x': 2, 'y': 1, axis_types=(Auto, Auto))"


def grid_specs(name):
    """The specs of the NamedShardings over the 2x1 Auto grid a record lists."""
    prefix, suffix = f"NamedSharding(mesh={GRID}, spec=", ", memory_kind=device)"
    out = record()[name]
    assert all(s.startswith(prefix) and s.endswith(suffix) for s in out), out
    return [s[len(prefix):-len(suffix)] for s in out]


def test_eager_ops_on_an_auto_mesh_place_results_as_jax():
    """An eager op on a value placed over an Auto mesh gives a result placed over that mesh
    where JAX's compiler puts it (what JAX 0.10.2 reports, tests/compat checks the record)."""
    assert grid_specs("auto_eager_elementwise") == ["P(None, 'x')"] * 5
    # sum/max/argmax over dim 0 keep dim 1's split; a sum over the split dim, a sort along it: replicated
    assert grid_specs("auto_eager_reductions") == ["P('x',)", "P()", "P()", "P('x',)", "P('x',)", "P('x',)", "P()"]
    # transpose moves the split; x[0] keeps it; slicing the split dim shorter drops it
    assert grid_specs("auto_eager_shapes") == ["P('x',)", "P('x',)", "P()", "P()", "P(None, None, 'x')",
                                               "P(None, 'x')", "P()"]
    # a contraction over the split dimension replicates; free dimensions keep their split
    assert grid_specs("auto_eager_dot") == ["P()", "P('x',)", "P(None, 'x')"]
    x44 = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    twice, dot, sorted_ = record()["auto_eager_values"]
    np.testing.assert_array_equal(twice, x44 * 2)
    np.testing.assert_allclose(dot, x44 @ x44, rtol=1e-6)
    np.testing.assert_array_equal(sorted_, np.arange(8.0))


def test_with_sharding_constraint_under_jit_is_an_equation():
    """Under a trace, with_sharding_constraint on Auto axes is JAX's sharding_constraint
    equation (its params printed as JAX's), and a jitted output reports the constraint."""
    value, sharding = record()["constraint_jit"]
    x44 = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    np.testing.assert_allclose(value, x44 @ x44.T * 2, rtol=1e-6)
    assert sharding == named(GRID, "P('x',)")
    text = record()["constraint_jaxpr"]
    assert "sharding_constraint[\n      context_mesh=Mesh()\n      layout=None\n" in text
    assert f"sharding=NamedSharding(mesh={GRID}, spec=P('x', None), memory_kind=device)" in text
    assert "unconstrained_dims=frozenset({})" in text
    vmapped = record()["constraint_vmap_jaxpr"]
    assert "spec=P(UNCONSTRAINED, 'x', None)" in vmapped and "unconstrained_dims=frozenset({0})" in vmapped
    in_mesh = record()["constraint_spec_jaxpr"]   # a bare spec under set_mesh: the abstract mesh
    assert "context_mesh=AbstractMesh('x': 2, 'y': 1, axis_types=(Auto, Auto)" in in_mesh
    assert "sharding=NamedSharding(mesh=AbstractMesh('x': 2, 'y': 1" in in_mesh and "spec=P(None, 'x'))" in in_mesh
    np.testing.assert_allclose(record()["constraint_grad"], 4 * np.ones((4, 4)) @ x44, rtol=1e-5)


def test_key_arrays_have_a_sharding():
    assert record()["key_sharding"] == ["SingleDeviceSharding"] * 2


DISAGREEING = """import numpy as np
import numjax as jax
from numjax.sharding import NamedSharding, PartitionSpec as P
jax.distributed.initialize()
rows = 4 + 2 * jax.process_index()
try:
    jax.device_put(np.ones((rows, 2), np.float32), NamedSharding(jax.make_mesh((2,), ("x",)), P("x")))
except ValueError as err:
    with open(f"rank{jax.process_index()}.out", "w") as f:
        f.write(f"ValueError: {err}")
"""


def test_processes_disagreeing_on_a_global_shape(tmp_path):
    sys.path.insert(0, HERE)
    import spmd_example
    if spmd_example.mpiexec() is None:
        pytest.skip("mpi4py/mpiexec not installed: tox -e mpi")
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="1", NUMJAX_MPI_TIMEOUT="60")
    proc = subprocess.run([spmd_example.mpiexec(), "-n", "2", sys.executable, "-c", DISAGREEING], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = [(tmp_path / f"rank{r}.out").read_text() for r in (0, 1)]   # both processes raise
    assert all(ln.startswith("ValueError: ") for ln in lines), lines
    assert all("process 0: float32[4, 2]; process 1: float32[6, 2]" in ln for ln in lines), lines
