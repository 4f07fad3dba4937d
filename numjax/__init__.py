"""numjax: JAX's API and function transformations, compiled by Numba instead of XLA."""
__version__ = "0.1.0"
# The JAX release whose behaviour numjax implements: libraries choose code paths by it.
__version_info__ = (0, 10, 2)

from .config import config, log_compiles  # noqa: F401
from .config import (check_tracer_leaks, debug_infs, debug_nans, default_matmul_precision,  # noqa: F401
                     default_prng_impl, enable_x64, numpy_dtype_promotion, numpy_rank_promotion,
                     threefry_partitionable)
from . import errors, tree_util  # noqa: F401
from .array import ArrayType as Array  # noqa: F401  (abstract: tracers are instances)
from . import numpy, lax  # noqa: F401
from . import flatten_util, nn, random, scipy  # noqa: F401
from .api import (Device, ShapeDtypeStruct, block_until_ready, default_backend, device_count,  # noqa: F401
                  device_get, device_put, devices, disable_jit, eval_shape, jit, local_device_count,
                  local_devices, make_jaxpr, typeof, process_index, process_count, checking_leaks,
                  default_device)
from . import tree  # noqa: F401
from . import experimental, sharding, stages, typing  # noqa: F401
from . import distributed  # noqa: F401  (imports mpi4py only when initialize() runs)
from .api import clear_caches, print_environment_info, process_indices  # noqa: F401
from .sharding import NamedSharding, PartitionSpec as P  # noqa: F401
from .api import make_mesh, set_mesh, shard_map  # noqa: F401
from .sharding import reshard  # noqa: F401
from .ad_api import (grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose,  # noqa: F401
                     linearize, value_and_grad, vjp)
from .custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from . import ad_checkpoint  # noqa: F401
from .ad_checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from .vmap_api import vmap  # noqa: F401
from .pmap_api import pmap  # noqa: F401
from .jax_alias import install_as_jax  # noqa: F401
from .extend.source_info_util import named_call, named_scope  # noqa: F401
from .core import ensure_compile_time_eval  # noqa: F401
from . import debug, ops  # noqa: F401
from .lax.callback import pure_callback  # noqa: F401
from . import _src  # noqa: F401  (``jax._src.xla_bridge`` is read as an attribute by chex)

# Last, once every primitive exists: bfloat16/float8 operands of eager primitives compute in
# float32 and round each result (lax/low_precision.py).
lax.low_precision.install_eager_rules()
