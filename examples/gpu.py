"""selu on the CUDA backend: the jaxpr, the region plan, the generated CUDA kernels, a run.

On a machine with an NVIDIA GPU (and numba-cuda: ``pip install 'numjax[cuda]'``) the GPU is
numjax's default backend and this runs there; elsewhere it runs the same kernels on
numba-cuda's simulator (slow: one Python thread per GPU thread, so the input is small).
"""
import os
import sys

from numjax.cuda import devices as cuda_devices

if not cuda_devices.gpu_devices():
    # No GPU: the simulator, chosen by name (it must be enabled before numba-cuda is imported).
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    os.environ["NUMJAX_PLATFORMS"] = "cuda"
if not cuda_devices.numba_cuda_installed():
    sys.exit("examples/gpu.py needs numba-cuda: pip install 'numjax[cuda]'")

import numpy as np  # noqa: E402

import numjax  # noqa: E402
import numjax.numpy as jnp  # noqa: E402
from numjax import dispatch  # noqa: E402
from numjax.lowering import fusion  # noqa: E402
from numjax.lowering.compile import inline_jits  # noqa: E402


def selu(x, alpha=1.6732632, scale=1.050701):
    return scale * jnp.where(x > 0, x, alpha * (jnp.exp(x) - 1))


n = 1 << 20 if cuda_devices.gpu_devices() else 64
x = np.linspace(-3, 3, n, dtype=np.float32)

closed = numjax.make_jaxpr(selu)(x)
closed = getattr(closed, "closed_jaxpr", closed)
print("jaxpr:")
print(closed)
print("\nregion plan (lowering/fusion.py, shared by the CPU and CUDA backends):")
for item in fusion.Planner(scalar_regions=True).plan(inline_jits(closed.jaxpr)):
    if isinstance(item, fusion.Region):
        print(f"  {item}: {len(item.inputs)} input(s), {len(item.outputs)} output(s)")
    else:
        print(f"  node {item.eqn.primitive.name}")

print(f"\nbackend: {numjax.default_backend()}  devices: {numjax.devices()}")
exe = dispatch.compiled_executable(closed, "selu")
print("\ngenerated CUDA kernels:")
print(exe.source)

y = numjax.jit(selu)(x)
expected = 1.050701 * np.where(x > 0, x, 1.6732632 * np.expm1(x))
print(f"selu on {n} float32 values: max |error| vs numpy = {np.abs(np.asarray(y) - expected).max():.2e}")
print(y[:4])
