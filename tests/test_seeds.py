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
