"""Tests that need a real NVIDIA GPU (``tox -e gpu``).  Each one is skipped, with that reason,
on a machine without one and under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``: those
paths are tests/cuda's)."""
import os
from pathlib import Path

import pytest

_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _gpus():
    if _SIMULATOR:
        return []
    from numjax.cuda import devices
    return devices.gpu_devices()


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    if _gpus():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 is set)")
    for item in items:
        if here in Path(str(item.path)).resolve().parents:
            item.add_marker(skip)
