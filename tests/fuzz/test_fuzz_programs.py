"""Differential fuzzing of numjax (issue 11): random programs, run eagerly, under jit and
under vmap, each node checked against a numpy reference with JAX's semantics.

The default run is the CI profile: ``NUMJAX_FUZZ_PROGRAMS`` (default 1000) programs, half
with x64 off and half with it on, derandomized so that CI is deterministic.  ``tox -e fuzz``
runs 10,000.  A failure prints the program as Python source with its inputs.
"""
import os

import pytest
from hypothesis import HealthCheck, given, settings

import numjax
import numjax.lax
import numjax.numpy
from numjax.array import Array

from generator import KNOWN_BROKEN_UNTIL_ISSUE11_FIXES, cases
from oracles import Backend, check_case

N_PROGRAMS = int(os.environ.get("NUMJAX_FUZZ_PROGRAMS", "1000"))
PROGRAMS_PER_CASE = 4      # compiled together as one jit program
NUMJAX = Backend("numjax", numjax, numjax.numpy, numjax.lax, Array)

_ran = {}


def _settings(n_cases):
    return settings(max_examples=n_cases, derandomize=True, deadline=None, database=None,
                    print_blob=False, suppress_health_check=list(HealthCheck))


@pytest.fixture
def x64_mode(request):
    saved = numjax.config.jax_enable_x64
    numjax.config.update("jax_enable_x64", request.param)
    yield request.param
    numjax.config.update("jax_enable_x64", saved)


@pytest.mark.parametrize("x64_mode", [False, True], indirect=True, ids=["x32", "x64"])
def test_random_programs(x64_mode):
    n_cases = max(1, N_PROGRAMS // 2 // PROGRAMS_PER_CASE)
    count = {"programs": 0}

    @_settings(n_cases)
    @given(cases(x64_mode, PROGRAMS_PER_CASE, KNOWN_BROKEN_UNTIL_ISSUE11_FIXES))
    def run(case):
        count["programs"] += len(case.programs)
        check_case(case, NUMJAX)

    run()
    # Hypothesis ran every case it was asked for (no silent filtering).
    assert count["programs"] >= n_cases * PROGRAMS_PER_CASE
