"""numjax: JAX's API and function transformations, compiled by Numba instead of XLA."""
__version__ = "0.1.0"

from .config import config  # noqa: F401
from . import errors, tree_util  # noqa: F401
from .array import ArrayType as Array  # noqa: F401  (abstract: tracers are instances)
from . import numpy, lax  # noqa: F401
from . import flatten_util, nn, random, scipy  # noqa: F401
from .api import (Device, ShapeDtypeStruct, block_until_ready, default_backend, device_count,  # noqa: F401
                  device_get, device_put, devices, disable_jit, eval_shape, jit, local_device_count,
                  local_devices, make_jaxpr, typeof)
from . import tree  # noqa: F401
from . import experimental, sharding, typing  # noqa: F401
from .sharding import NamedSharding, PartitionSpec as P  # noqa: F401
from .ad_api import (grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose,  # noqa: F401
                     linearize, value_and_grad, vjp)
from .custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat  # noqa: F401
from .vmap_api import vmap  # noqa: F401
from .pmap_api import pmap  # noqa: F401
from .jax_alias import install_as_jax  # noqa: F401
