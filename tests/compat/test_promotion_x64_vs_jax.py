"""tests/test_promotion_x64.py's rules run on real JAX 0.10.2: every result dtype and weak
type the table holds numjax to (with x64 off and on) is JAX's.

    .venv-jax/bin/python -m pytest tests/compat/test_promotion_x64_vs_jax.py
"""
import os
import sys

import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_promotion_x64 import check_dtype_row, check_weak_row, dtype_cases, weak_cases  # noqa: E402

pytestmark = pytest.mark.compat


@pytest.fixture
def jax_x64_mode():
    old = jax.config.jax_enable_x64

    def set_mode(on):
        jax.config.update("jax_enable_x64", on)
    yield set_mode
    jax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("row,dtype,x64", dtype_cases())
def test_jax_result_dtype(row, dtype, x64, jax_x64_mode):
    jax_x64_mode(x64)
    check_dtype_row(row, dtype, x64, jax, jjnp)


@pytest.mark.parametrize("row,x64", weak_cases())
def test_jax_dtype_and_weak_type(row, x64, jax_x64_mode):
    jax_x64_mode(x64)
    check_weak_row(row, x64, jax, jjnp, jlax)
