"""``jax._src.dtypes``: numjax's dtype rules, plus the extended-dtype base JAX keeps there."""
import numpy as np

from ..dtypes import *  # noqa: F401,F403
from ..dtypes import TypePromotionError, extended  # noqa: F401


class ExtendedDType:
    """Base of JAX's extended dtypes (keys, fp8 metadata); numjax compiles none of them."""
    type = extended
    name = "extended"


DType = np.dtype
