"""JAX's sharding in types (numjax/sharding_types.py): tests/sharding_types_program.py run in a
fresh process with 8 CPU devices; the expected lines are what JAX 0.10.2 prints for the same
probes (tests/compat/test_sharding_types_vs_jax.py compares the whole output with real JAX)."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import numjax
from numjax import core
from numjax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P

PROGRAM = pathlib.Path(__file__).resolve().parent / "sharding_types_program.py"


@pytest.fixture(scope="module")
def lines():
    proc = subprocess.run([sys.executable, str(PROGRAM)], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NUMJAX_NUM_CPU_DEVICES="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out, name = {"stdout": proc.stdout}, None
    for line in proc.stdout.splitlines():
        head, sep, rest = line.partition(": ")
        if sep and head.isidentifier():
            name, out[head] = head, rest
        elif name is not None and line.startswith((" ", "}")):   # a jaxpr's further lines
            out[name] += "\n" + line
    return out


@pytest.mark.parametrize("name, expected", [
    ("typeof", "float32[8@X,4@Y]"), ("repr", "ShapedArray(float32[8@X,4@Y])"),
    ("sin_T", "float32[4@Y,8@X]"), ("mul_scalar", "float32[8@X,4@Y]"), ("add_numpy", "float32[8@X,4@Y]"),
    ("sum0", "float32[4@Y]"), ("sum_all", "float32[]"), ("argmax1", "int32[8@X]"),
    ("reshape_merge", "float32[32@(X,Y)]"), ("expand", "float32[1,8@X,4@Y]"),
    ("broadcast", "float32[8@X,3,4@Y]"), ("concat1", "float32[8@X,8@Y]"), ("concat0", "float32[16@X,4@Y]"),
    ("astype", "int32[8@X,4@Y]"), ("where", "float32[8@X,4@Y]"), ("softmax", "float32[8@X,4@Y]"),
    ("matmul_right", "float32[8@X,3]"), ("matmul_left", "float32[3,4@Y]"), ("random", "float32[8@X,4@Y]"),
    ("random_bits_equal", "True"), ("outer_add", "int32[4@X,8@Y]"), ("dot_out_sharding", "float32[8@X,16]"),
    ("dot_value", "True"), ("auto_axes", "int32[4@X,4]"), ("use_abstract_mesh", "float32[8@A,4]"),
    ("grad_replicated_param", "float32[4,3]"), ("explicit_axes", "(4, 4)"),
    ("zeros_out_sharding", "float32[8@X,4]"), ("full_out_sharding", "~float32[8,4@Y]"),
    ("reshape_out_sharding", "float32[2,4@X,4@Y]"), ("reshape_out_sharding_jit", "float32[2,4@X,4@Y]"),
    ("einsum_out_sharding", "float32[8@X,8]"), ("einsum_out_sharding_transposed", "float32[8,8@X]"),
    ("einsum_no_contraction", "float32[4@X,8]"), ("axis_size", "8.0"), ("einsum_out_sharding_value", "61824.0"),
    ("pcast_scan", "[[0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]"),
    # pcast's transpose sums the four devices' cotangents (1 + axis_index: 1 + 2 + 3 + 4)
    ("pcast_grad", "[10.0, 10.0, 10.0]"),
    ("pcast_bad_to", "ValueError: Got unexpected `to` value. Allowed `to` values are: "
                     "['reduced', 'unreduced', 'varying']"),
    ("pcast_set", "TypeError: axis_name={'X'} must be a tuple or a str. Got {'X'}"),
])
def test_types_as_jax_prints_them(lines, name, expected):
    assert lines[name] == expected


@pytest.mark.parametrize("name, start", [
    ("reshape_bad", "ShardingTypeError: This reshape is not supported."),
    ("cumsum", "ShardingTypeError: Input should be unsharded over the axis being reduced. Got input "
               "type=float32[8@X,4@Y] and axis=1"),
    ("sort", "ShardingTypeError: Arguments to sort must be unsharded over the sorting dimension."),
    ("illegal", "ShardingTypeError: add operation with inputs: i32[4@X,4], i32[4,4@X] produces an illegally "
                "sharded result: i32[4@X,4@X]"),
    ("incompatible", "ShardingTypeError: add got incompatible shardings for broadcasting"),
    ("dot_ambiguous", "ShardingTypeError: Contracting dimensions are sharded and it is ambiguous"),
    ("einsum_ambiguous", "ShardingTypeError: Contracting dimensions are sharded and it is ambiguous"),
])
def test_errors_as_jax_raises_them(lines, name, start):
    assert lines[name].startswith(start)


def test_jit_output_and_jaxpr(lines):
    assert "float32[8@X,4@Y]" in lines["jit"] and "spec=P('X', 'Y')" in lines["jit"]
    assert "c:f32[4@Y] = reduce_sum[axes=(0,) out_sharding=None] b" in lines["jaxpr"]


def test_meshes_switched_by_auto_and_explicit_axes(lines):
    out = lines["stdout"]
    assert "auto mesh: AbstractMesh('X': 4, 'Y': 2, axis_types=(Auto, Auto)" in out
    assert "explicit mesh: AbstractMesh('X': 4, 'Y': 2, axis_types=(Explicit, Explicit)" in out
    assert "typeof inside: ShapedArray(float32[4@X,4@Y])" in out


def test_unsharded_avals_unchanged():
    a = core.ShapedArray((2, 3), np.float32)
    assert a._sharding is None and str(a) == "float32[2,3]" and a == core.ShapedArray((2, 3), np.float32)
    assert repr(a.sharding) == "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))"


def test_typed_avals_compare_by_sharding():
    mesh = AbstractMesh((2,), ("x",), (AxisType.Explicit,))
    s = NamedSharding(mesh, P("x", None))
    a, b = core.ShapedArray((4, 3), np.float32, False, s), core.ShapedArray((4, 3), np.float32)
    assert a != b and hash(a) != hash(b) and a.str_short(True) == "f32[4@x,3]"
    assert a.update(dtype=np.int32)._sharding == s and a.update(shape=(12,))._sharding is None


def test_partition_spec_unreduced_repr_and_pickle():
    import pickle
    spec = P("X", None, unreduced={"Y"})
    assert repr(spec) == "P('X', None, unreduced={'Y'})" and spec != P("X", None)
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_num_cpu_devices_fixed_after_start():
    numjax.devices()
    with pytest.raises(RuntimeError, match="before backends are initialized"):
        numjax.config.update("jax_num_cpu_devices", numjax.device_count() + 3)
