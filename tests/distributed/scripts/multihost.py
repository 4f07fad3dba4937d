"""multihost_utils across processes."""
import numpy as np

import _worker
import numjax as jax
from numjax.experimental import multihost_utils as mh

p, _ = _worker.init()
mine = {"v": np.arange(3, dtype=np.float32) + 10 * p, "s": np.int32(p)}
stacked = mh.process_allgather(mine)
tiled = mh.process_allgather(mine, tiled=True)
from_zero = mh.broadcast_one_to_all(mine)
from_last = mh.broadcast_one_to_all(mine, is_source=p == jax.process_count() - 1)
mh.sync_global_devices("after broadcast")
mh.assert_equal(from_zero, "broadcast values differ")
try:
    mh.assert_equal(mine, "values differ per process")
    differs = False
except AssertionError:
    differs = True
_worker.save(stacked_v=stacked["v"], stacked_s=stacked["s"], tiled_v=tiled["v"], tiled_s=tiled["s"],
             zero_v=from_zero["v"], last_v=from_last["v"], differs=differs)
