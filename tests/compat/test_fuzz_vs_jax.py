"""The differential fuzzer (tests/fuzz) against real JAX: the same random programs under
``jax.jit`` and under numjax, compared node by node (dtype, weak type, shape, value, and
the exception class of programs that raise).  See tests/fuzz/vs_jax.py.

``NUMJAX_FUZZ_PROGRAMS`` sets the number of programs (default 200 here), split between x64
off and on; derandomized, so a run is reproducible.
"""
import os
import sys

import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")

from hypothesis import HealthCheck, given, settings  # noqa: E402

import numjax  # noqa: E402
import numjax.lax  # noqa: E402
import numjax.numpy  # noqa: E402
from numjax.array import Array  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "fuzz"))
from generator import KNOWN_BROKEN_UNTIL_ISSUE11_FIXES, cases  # noqa: E402
from oracles import Backend  # noqa: E402
from vs_jax import check_case_vs_jax  # noqa: E402

N_PROGRAMS = int(os.environ.get("NUMJAX_FUZZ_PROGRAMS", "200"))
PROGRAMS_PER_CASE = 4
NUMJAX = Backend("numjax", numjax, numjax.numpy, numjax.lax, Array)
JAX = Backend("jax", jax, jax.numpy, jax.lax)


@pytest.fixture
def x64_mode(request):
    saved = (numjax.config.jax_enable_x64, jax.config.jax_enable_x64)
    numjax.config.update("jax_enable_x64", request.param)
    jax.config.update("jax_enable_x64", request.param)
    yield request.param
    numjax.config.update("jax_enable_x64", saved[0])
    jax.config.update("jax_enable_x64", saved[1])


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize("x64_mode", [False, True], indirect=True, ids=["x32", "x64"])
def test_random_programs_vs_jax(x64_mode):
    n_cases = max(1, N_PROGRAMS // 2 // PROGRAMS_PER_CASE)
    count = {"programs": 0}

    @settings(max_examples=n_cases, derandomize=True, deadline=None, database=None,
              print_blob=False, suppress_health_check=list(HealthCheck))
    @given(cases(x64_mode, PROGRAMS_PER_CASE, KNOWN_BROKEN_UNTIL_ISSUE11_FIXES))
    def run(case):
        count["programs"] += len(case.programs)
        check_case_vs_jax(case, NUMJAX, JAX)

    run()
    assert count["programs"] >= n_cases * PROGRAMS_PER_CASE
