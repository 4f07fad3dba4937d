"""The bad-input table (tests/test_bad_input.py) run on real JAX 0.10.2: every row's
exception class and key words, every truncation warning (and its absence) and every
accepted input are JAX's, so the table numjax is held to encodes JAX's behaviour."""
import os
import sys

import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.nn  # noqa: E402,F401
import jax.numpy as jjnp  # noqa: E402
import jax.random  # noqa: E402,F401
import jax.tree_util  # noqa: E402,F401

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_bad_input import (ACCEPT_ROWS, ROWS, WARN_ROWS, run_row, run_warn_row)  # noqa: E402

jax.config.update("jax_platform_name", "cpu")
jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_jax_raises_the_rows_error(row):
    run_row(row, jax, jjnp, row.jax_match if row.jax_match is not None else row.match)


@pytest.mark.parametrize("row", WARN_ROWS, ids=[r.id for r in WARN_ROWS])
def test_jax_warns_as_the_row_says(row):
    run_warn_row(row, jax, jjnp)


@pytest.mark.parametrize("row", ACCEPT_ROWS, ids=[r.id for r in ACCEPT_ROWS])
def test_jax_accepts(row):
    import numpy as np
    assert np.shape(row.call(jax, jjnp)) == row.shape
