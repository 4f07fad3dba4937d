"""What JAX's shard_map tutorial shows of ``jax.shard_map``: an eager shard_map prints each value
of its body per device, the body is traced once per call, and in_specs left out are read from
the arguments' sharding types on an Explicit mesh. tests/shard_map_tutorial_program.py runs as
`import jax` on numjax (python -m numjax) in a fresh process with 8 CPU devices; the expected
text is what JAX 0.10.2 prints for it (tests/compat/test_shard_map_tutorial_vs_jax.py compares
the whole output with real JAX)."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

PROGRAM = pathlib.Path(__file__).resolve().parent / "shard_map_tutorial_program.py"


@pytest.fixture(scope="module")
def cases():
    proc = subprocess.run([sys.executable, "-m", "numjax", str(PROGRAM)], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, NUMJAX_NUM_CPU_DEVICES="8"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out, name = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith("== "):
            name = line[3:]
            out[name] = []
        else:
            out[name].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def per_device(axis_names, blocks):
    """JAX's text of a value inside an eager shard_map: each device's block, in mesh order
    (``blocks`` maps the mesh coordinates to the block's numpy text)."""
    names = f"({', '.join(axis_names)},)"
    return "\n".join(f"On cpu:{k} at mesh coordinates {names} = {idx}:\n{text}\n"
                     for k, (idx, text) in enumerate(blocks.items()))


def test_eager_values_print_per_device(cases):
    block = per_device("i", {(0,): "[3 1]", (1,): "[4 1]", (2,): "[5 9]", (3,): "[2 6]"})
    total = per_device("i", {(k,): "[14 17]" for k in range(4)})
    assert cases["eager_print_1d"] == f"block {block}\nsum {total}\nout [14 17]"


def test_two_dimensional_mesh_and_invariant_values(cases):
    coords = [(0, 0), (0, 1), (1, 0), (1, 1)]
    text = cases["eager_print_2d"]
    x = per_device("ij", dict(zip(coords, ["[[0. 1.]]", "[[2. 3.]]", "[[4. 5.]]", "[[6. 7.]]"])))
    y = per_device("ij", {c: "[0 1]" for c in coords})     # P(): the same block everywhere
    summed = per_device("ij", dict(zip(coords, ["[[4. 6.]]", "[[ 8. 10.]]"] * 2)))
    scalar = per_device("ij", dict(zip(coords, ["1.0", "5.0", "9.0", "13.0"])))
    compare = per_device("ij", {c: "[False  True]" for c in coords})
    assert text == f"x {x}\ny {y}\nsum_i {summed}\nscalar {scalar}\ncompare {compare}"


def test_collective_results_print_per_device(cases):
    text = cases["eager_print_collectives"]
    assert text.startswith("index " + per_device("i", {(k,): str(k) for k in range(4)}) + "\nfirst_plus_index "
                           + per_device("i", {(k,): str(3 * k) for k in range(4)}))
    assert "gathered " + per_device("i", {(k,): "[0 1 2 3 4 5 6 7]" for k in range(4)}) in text
    assert text.endswith("shifted " + per_device("i", {(0,): "[6 7]", (1,): "[0 1]", (2,): "[2 3]",
                                                        (3,): "[4 5]"}))


def test_gradient_inside_the_body_prints_per_device(cases):
    g = per_device("i", {(k,): "2.1700000762939453" for k in range(4)})
    assert cases["print_in_grad_body_value"] == f"grad {g}\nout 2.17"


def test_body_traced_once_per_call(cases):
    assert cases["traced_once"].splitlines() == [
        "trace (2,)", "eager [12. 16.]", "trace (2,)", "eager again [12. 16.]", "trace (2,)", "jit [24. 32.]"]


def test_python_control_flow_on_invariant_values(cases):
    assert cases["python_control_flow"].splitlines() == ["invariant branch taken",
                                                         "varying TracerBoolConversionError"]


def test_in_specs_inferred_from_sharding_types(cases):
    blocks, values = cases["infer_in_specs"].splitlines()
    assert blocks == "blocks (1, 2) (2,) (3,)"      # P('i','j'), P('j') and an untyped (replicated) one
    spec, _, rest = values.partition(" [")
    assert spec == "P('i', 'j')"
    x, w = np.arange(16.).reshape(2, 8), np.arange(8.)
    np.testing.assert_array_equal(eval("[" + rest), x * w + 0.0)


def test_in_specs_inferred_for_partial_manual_axes(cases):
    block, values = cases["infer_in_specs_partial_manual"].splitlines()
    assert block == "block (1, 8)"        # axis 'j' is not manual: its dimension is whole
    np.testing.assert_array_equal(eval(values), np.arange(16.).reshape(2, 8) * 2)


def test_in_specs_cannot_be_inferred_on_an_auto_mesh(cases):
    assert cases["infer_in_specs_auto_mesh"] == (
        "ERR TypeError: shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
        "instances, but it was `None` when axis_names=frozenset({'i'}) are of type AxisType.Auto")


def test_in_specs_none_passes_the_argument_as_is(cases):
    static, values = cases["in_specs_none_static"].splitlines()
    assert static == "static (2,) ndarray (3,)"
    np.testing.assert_array_equal(eval(values), np.arange(8.) + 3.0)


@pytest.mark.parametrize("name, shape", [("loss_dp", "local batch (4, 16)"),
                                         ("loss_fsdp", "first weight block (4, 32)")])
def test_tutorial_losses_without_in_specs(cases, name, shape):
    assert cases[name].splitlines() == [shape, "True", shape, "True"]


@pytest.mark.parametrize("name, shape, total", [
    ("psum", (2, 8), 496.0), ("pmean_2d", (2, 4), 248.0), ("all_gather", (4, 16), 992.0),
    ("ppermute", (4, 8), 496.0), ("psum_scatter", (4, 8), 992.0), ("all_to_all", (8, 4), 496.0),
    ("axis_index", (4, 8), 392.0), ("replicated_in", (4, 4), -13.656)])
def test_eager_run_equals_compiled_run(cases, name, shape, total):
    assert cases[f"eager_equals_jit {name}"] == f"{shape} True {total}"
