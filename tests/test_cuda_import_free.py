"""``import numjax`` (and tracing, eager ops and CPU jit) never imports numba-cuda or
cuda-python, whether or not they are installed: only a program compiled for the CUDA backend
does (issue 12)."""
import os
import subprocess
import sys


import pytest


@pytest.mark.parametrize("platforms", ["cpu", None], ids=["JAX_PLATFORMS=cpu", "default"])
def test_numjax_imports_no_cuda_packages(platforms):
    import numjax.cuda
    if platforms is None and numjax.cuda.is_available():
        pytest.skip("a CUDA GPU is present: by default programs compile for it, importing numba-cuda")
    code = (
        "import sys\n"
        "import numjax, numjax.numpy as jnp\n"
        "x = jnp.arange(6.0)\n"
        "y = numjax.jit(lambda v: jnp.sin(v).sum())(x)\n"
        "numjax.grad(lambda v: (v * v).sum())(x)\n"
        "print(numjax.default_backend(), numjax.devices())\n"
        "bad = sorted(m for m in sys.modules if m == 'numba_cuda' or m.startswith('numba_cuda.')\n"
        "             or m == 'numba.cuda' or m.startswith('numba.cuda.') or m.startswith('cuda.bindings')\n"
        "             or m.startswith('cuda.core') or m in ('numjax.cuda.backend', 'numjax.cuda.compiler'))\n"
        "assert not bad, bad\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "NUMJAX_PLATFORMS")}
    if platforms is not None:
        env["JAX_PLATFORMS"] = platforms
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("cpu [CpuDevice(id=0)]"), proc.stdout


def test_asking_for_cuda_without_a_gpu_is_an_error():
    import numjax.cuda
    if numjax.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    code = "import numjax\nnumjax.default_backend()\n"
    env = dict(os.environ, JAX_PLATFORMS="cuda", NUMBA_ENABLE_CUDASIM="0")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0
    assert "RuntimeError: Unable to initialize backend" in proc.stderr and "JAX_PLATFORMS=cpu" in proc.stderr


def test_unknown_gpu_backend_argument_without_a_gpu():
    import numjax
    import numjax.cuda
    if numjax.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu'.*Platforms present are: cpu"):
        numjax.devices("gpu")
