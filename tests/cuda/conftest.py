"""Tests of the CUDA backend (numjax.cuda), run on numba-cuda's simulator in the default suite
(CI sets NUMBA_ENABLE_CUDASIM=1) and on a real GPU by ``tox -e gpu``.

Every test here selects the CUDA backend by name (``jax_platforms='cuda'``) and compares with
the CPU backend.  Inputs are small: the simulator runs each GPU thread as a Python thread.
"""
import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ (op_table, helpers)

_HAVE_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _gpu_present():
    if not _HAVE_NUMBA_CUDA or _SIMULATOR:
        return False
    from numjax.cuda import devices
    return bool(devices.gpu_devices())


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    # numba-cuda is a test dependency (setup.cfg): without it these tests fail, not skip.
    if _SIMULATOR or not _HAVE_NUMBA_CUDA or _gpu_present():
        return
    reason = "no CUDA GPU, and NUMBA_ENABLE_CUDASIM=1 is not set (tox -e cudasim)"
    for item in items:
        if here in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def cuda_backend():
    """Compiled programs run on the CUDA backend for the test, then on what ran before."""
    from numjax.config import config
    previous = config.jax_platforms
    config.update("jax_platforms", "cuda")
    try:
        yield
    finally:
        config.update("jax_platforms", previous)
