"""The user tutorials in the seeds directory run on numjax and print what JAX printed.

One test per tutorial cell (tests/seeds_harness.py has the cell tables and the
comparison rules).  Each tutorial runs once, in a child process where ``jax``
is numjax; the cells' results are shared by that tutorial's tests.  Cells that
take long (a 3000x3000 matmul, jit re-tracing in a loop) are marked slow.

The comparator itself is tested on small texts at the bottom, and so is the
Array repr layout the seeds exposed (expected strings printed by JAX 0.10.2).
"""
import functools
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import seeds_harness as harness  # noqa: E402

SEEDS = harness.seeds_dir()
needs_seeds = pytest.mark.skipif(SEEDS is None, reason="no seeds directory (set NUMJAX_SEEDS_DIR)")
PROSE_ONLY = {"jax_flax_overview_notes.txt"}   # notes without a line of code

# Cells that fail for a reason numjax cannot fix here: {(tutorial, cell): reason}.
XFAIL = {}


@functools.lru_cache(maxsize=None)
def _results(name, include_slow):
    return harness.run_tutorial(name, include_slow=include_slow)


def _params(slow):
    params = []
    for name, tutorial in harness.TUTORIALS.items():
        for cell in tutorial.cells:
            if cell.skip or cell.slow != slow:
                continue
            marks = [pytest.mark.slow] if slow else []
            if (name, cell.name) in XFAIL:
                marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[name, cell.name]))
            params.append(pytest.param(name, cell, marks=marks, id=f"{name}:{cell.name}"))
    return params


def _check(name, cell, include_slow):
    lines = harness.seed_lines(harness.TUTORIALS[name], SEEDS)
    result = _results(name, include_slow).get(cell.name)
    problem = harness.check_cell(cell, harness.cell_expected(lines, cell), result)
    assert problem is None, f"{name} {cell.name}:\n{problem}"


@needs_seeds
@pytest.mark.parametrize("name,cell", _params(slow=False))
def test_seed_cell(name, cell):
    _check(name, cell, include_slow=False)


@needs_seeds
@pytest.mark.parametrize("name,cell", _params(slow=True))
def test_seed_cell_slow(name, cell):
    _check(name, cell, include_slow=True)


@needs_seeds
def test_every_seed_file_has_a_table():
    tabled = {t.file for t in harness.TUTORIALS.values()}
    found = {p.name for p in Path(SEEDS).glob("*.txt")}
    assert found - PROSE_ONLY == tabled, "a seed tutorial without a cell table (or a table without its file)"


# ----------------------------------------------------------------------------- the comparator


@pytest.mark.parametrize("expected,actual,ok", [
    ("Array([11., 20.], dtype=float32)", "Array([11.,  20.],\n dtype=float32)", False),   # a line break moved
    ("Array([11., 20.], dtype=float32)", "Array([ 11.,   20.], dtype=float32)", True),    # spaces do not count
    ("-0.028304616", "-0.02830462", True),             # float32 tolerance
    ("-0.028304616", "-0.02830562", False),
    ("[ 0 42]", "[ 0 43]", False),                     # integers (key bits) exactly
    ("10", "10.0", False),                             # an integer is not a float: dtype differs
    ("Array(30, dtype=int32)", "Array(30, dtype=int32, weak_type=True)", False),
    ("vmap : 0.0088 sec\n3.01 ms ± 805 µs per loop", "vmap : 1.5 sec", True),   # timings ignored
    ("<object object at 0x7cd86dd84650>", "<object object at 0x7f2410fc4690>", True),
    ("f at /tmp/ipython-input-2545734610.py:1 for jit", "f at /tmp/ipython-input-6.py:1 for jit", True),
    ("f at /tmp/ipython-input-2545734610.py:1 for jit", "f at /tmp/ipython-input-6.py:2 for jit", False),
    ("1\n\n\narray([[0, 1]])", "1\narray([[0, 1]])", True),   # blank lines between outputs
    ("a\nb", "a\nb\nc", False),
])
def test_compare(expected, actual, ok):
    assert (harness.compare(expected, actual) is None) == ok


def test_compare_prefix_of_a_truncated_export():
    assert harness.compare("Array([1.5, 2.25, -2.0", "Array([1.5, 2.25, -2.0377, 7.], dtype=float32)", prefix=True) is None
    assert harness.compare("Array([1.5, 2.5, -2.0", "Array([1.5, 2.25, -2.0377, 7.], dtype=float32)", prefix=True)


def test_timeit_and_reindent_translations():
    cell = harness.Cell("t", (1, 3), reindent=True)
    lines = ["def f(x):", "return x + 1", "%timeit f(2)  ## comment"]
    assert harness.cell_source(lines, cell) == "def f(x):\n    return x + 1\n_ = f(2)  ## comment\n"


# ----------------------------------------------------------------------------- Array repr layout

# Printed by JAX 0.10.2 (numpy's default 75-column width).
_JAX_REPRS = [
    (np.arange(15, dtype=np.int32), False,
     "Array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14], dtype=int32)"),
    (np.arange(16, dtype=np.int32), False,
     "Array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15],      dtype=int32)"),
    (np.arange(18, dtype=np.int32), False,
     "Array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n       17], dtype=int32)"),
    (np.arange(10, dtype=np.float32), True,
     "Array([0., 1., 2., 3., 4., 5., 6., 7., 8., 9.], dtype=float32, weak_type=True)"),
    (np.arange(11, dtype=np.float32), True,
     "Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10.],      dtype=float32, weak_type=True)"),
    (np.arange(14, dtype=np.float32), True,
     "Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n"
     "       13.], dtype=float32, weak_type=True)"),
    (np.zeros((2, 0), np.float32), False, "Array([], shape=(2, 0), dtype=float32)"),
    (np.zeros((0,), np.bool_), False, "Array([], shape=(0,), dtype=bool)"),
    (np.float32(3.0), True, "Array(3., dtype=float32, weak_type=True)"),
    (np.arange(9, dtype=np.int32).reshape(3, 3), False,
     "Array([[0, 1, 2],\n       [3, 4, 5],\n       [6, 7, 8]], dtype=int32)"),
    (np.array([0.75, -1.5, 0.125, 2.0, -0.0625, 1.25, 3.5], np.float32).reshape(1, 7).repeat(2, 0), False,
     "Array([[ 0.75  , -1.5   ,  0.125 ,  2.    , -0.0625,  1.25  ,  3.5   ],\n"
     "       [ 0.75  , -1.5   ,  0.125 ,  2.    , -0.0625,  1.25  ,  3.5   ]],      dtype=float32)"),
]


@pytest.mark.parametrize("value,weak,expected", _JAX_REPRS)
def test_array_repr_layout(value, weak, expected):
    from numjax.array import Array
    assert repr(Array(np.asarray(value), weak)) == expected


# ----------------------------------------------------------------------------- next steps from the seeds
# What a reader of these tutorials tries next; expected texts printed by JAX 0.10.2.

def test_value_and_grad_jaxpr_of_a_python_float_needs_no_cast():
    import numjax as jax
    import numjax.numpy as jnp
    jaxpr = jax.make_jaxpr(jax.value_and_grad(lambda x: jnp.sin(x) * x))(1.0)
    assert str(jaxpr) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = sin a\n"
        "    c:f32[] = cos a\n"
        "    d:f32[] = mul b a\n"
        "    e:f32[] = mul b 1.0:f32[]\n"
        "    f:f32[] = mul 1.0:f32[] a\n"
        "    g:f32[] = mul f c\n"
        "    h:f32[] = add_any e g\n"
        "  in (d, h) }")
    assert repr(jax.grad(lambda x: jnp.sin(x) * x)(1.0)) == "Array(1.3817732, dtype=float32, weak_type=True)"


def test_grad_jaxpr_keeps_the_unused_primal():
    import numjax as jax
    assert str(jax.make_jaxpr(jax.grad(lambda x: x * x))(1.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    _:f32[] = mul a a\n"
        "    b:f32[] = mul a 1.0:f32[]\n"
        "    c:f32[] = mul 1.0:f32[] a\n"
        "    d:f32[] = add_any b c\n"
        "  in (d,) }")


def test_traced_shape_error():
    import numjax as jax
    import numjax.numpy as jnp

    def f(x):
        return jnp.zeros(x)
    with pytest.raises(TypeError) as info:
        jax.jit(f)(3)
    assert str(info.value).startswith(
        "Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]),).\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.\n"
        "The error occurred while tracing the function f at ")
    assert str(info.value).endswith("for jit. This concrete value was not available in Python because "
                                    "it depends on the value of the argument x.")
    with pytest.raises(TypeError, match=r"^Shapes must be 1D sequences of concrete values of integer "
                       r"type, got \(2, 1\.5\)\.$"):
        jnp.zeros((2, 1.5))
    assert jnp.zeros(jnp.int32(2)).shape == (2,)


def test_sharding_and_jit_reprs():
    import numjax as jax
    import numjax.numpy as jnp

    def f(x):
        return x
    assert repr(jax.jit(f)(jnp.ones(2)).sharding) == \
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert repr(jax.jit(f)) == f"<PjitFunction of {f!r}>"


def test_check_grads_of_python_floats_uses_float32_tolerances():
    # JAX computes a Python float argument in float32 (x64 off) and checks it with float32 tolerances
    import numjax.numpy as jnp
    from numjax.test_util import check_grads
    check_grads(lambda x: jnp.floor(x) * 0 + x ** 3, (1.5,), order=1, modes=["rev"])
    check_grads(lambda x, y: jnp.sin(x) * y ** 2, (1.5, 0.5), order=2)
