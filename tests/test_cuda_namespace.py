"""The repo's top-level ``cuda/`` directory (installed as ``numjax.cuda``) must
not shadow NVIDIA's ``cuda`` namespace package (cuda-bindings) when Python
runs from the repository root.  See the note at the top of cuda/__init__.py.
"""

import ctypes.util
import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REPO_CUDA_INIT = REPO / "cuda" / "__init__.py"


def _run(code, *flags):
    """Run ``python <flags> -c code`` with the repo root as cwd ('' on sys.path)."""
    proc = subprocess.run([sys.executable, *flags, "-c", code], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _require_cuda_bindings():
    try:
        importlib.metadata.version("cuda-bindings")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("cuda-bindings not installed")


def test_cuda_bindings_imports_from_repo_root():
    _require_cuda_bindings()
    out = _run(
        "import sys, cuda.bindings, cuda\n"
        "assert not hasattr(cuda, 'is_available'), cuda\n"
        "print(cuda.bindings.__file__)\n"
        "print(*list(cuda.__path__), sep='\\n')\n"
    )
    repo_cuda = REPO_CUDA_INIT.parent
    for line in out.splitlines():
        path = Path(line).resolve()
        assert path != repo_cuda and repo_cuda not in path.parents, out


def test_numjax_cuda_is_the_repos_module():
    import numjax.cuda

    assert numjax.cuda.__name__ == "numjax.cuda"
    assert Path(numjax.cuda.__file__).resolve() == REPO_CUDA_INIT
    # Without a CUDA driver library there is no GPU to find (CI's case).
    available = numjax.cuda.is_available()
    assert isinstance(available, bool)
    if ctypes.util.find_library("cuda") is None and not os.path.exists("/usr/lib/x86_64-linux-gnu/libcuda.so.1"):
        assert available is False


@pytest.mark.parametrize("order", ["numjax_first", "nvidia_first"])
def test_both_cudas_in_one_process_from_repo_root(order):
    _require_cuda_bindings()
    imports = ["import numjax.cuda", "import cuda.bindings"]
    if order == "nvidia_first":
        imports.reverse()
    _run(
        "\n".join(imports) + "\n"
        "import os, sys, cuda, numjax.cuda as ncuda\n"
        f"assert os.path.realpath(ncuda.__file__) == {str(REPO_CUDA_INIT)!r}, ncuda.__file__\n"
        "assert isinstance(ncuda.is_available(), bool)\n"
        "assert sys.modules['cuda'] is cuda and cuda is not ncuda\n"
        "assert cuda.bindings.__name__ == 'cuda.bindings'\n"
    )


def test_top_level_cuda_absent_is_module_not_found():
    # -S: no site-packages, so no NVIDIA ``cuda`` is installed as far as this
    # interpreter knows; the repo's cuda/ must not pose as it.
    _run(
        "import sys\n"
        "try:\n"
        "    import cuda\n"
        "except ModuleNotFoundError as e:\n"
        "    assert e.name == 'cuda', e\n"
        "    assert 'cuda' not in sys.modules\n"
        "else:\n"
        "    raise AssertionError(f'imported {cuda!r}')\n",
        "-S",
    )
