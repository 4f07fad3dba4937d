"""``jax.experimental.multihost_utils``: host-side exchanges between the processes of a
``numjax.distributed`` job (MPI collectives on numpy buffers). In a single process each
function does what it would with one participant."""
import zlib

import numpy as np

from .. import api, tree_util
from .._src import mpi


def _host(x):
    return np.asarray(x)


def _check_shapes(leaves, fn):
    desc = ", ".join(f"{x.dtype}{list(x.shape)}" for x in leaves)
    mpi.check_agree(desc, f"multihost_utils.{fn}: every process must pass a pytree of arrays of "
                          "the same shapes and dtypes")


def broadcast_one_to_all(in_tree, is_source=None):
    """``in_tree`` (numpy arrays) as the source process has it, on every process. The source is
    process 0, or those passing ``is_source=True`` (their values are summed, as in JAX)."""
    leaves, tree = tree_util.tree_flatten(tree_util.tree_map(_host, in_tree))
    if api.process_count() == 1:
        return tree_util.tree_unflatten(tree, leaves)
    _check_shapes(leaves, "broadcast_one_to_all")
    if is_source is None:
        out = [mpi.bcast(x, root=0) for x in leaves]
    else:
        out = [mpi.allreduce(x if is_source else np.zeros_like(x), "sum") for x in leaves]
    return tree_util.tree_unflatten(tree, out)


def process_allgather(in_tree, tiled=False):
    """Every process's leaves, stacked on a new leading axis in process order (``tiled``:
    concatenated along axis 0; scalars are always stacked)."""
    leaves, tree = tree_util.tree_flatten(tree_util.tree_map(_host, in_tree))
    if api.process_count() > 1:
        _check_shapes(leaves, "process_allgather")
    out = []
    for x in leaves:
        gathered = mpi.allgather(x) if api.process_count() > 1 else x[None]
        out.append(gathered.reshape((-1,) + x.shape[1:]) if tiled and x.ndim else gathered)
    return tree_util.tree_unflatten(tree, out)


def sync_global_devices(name):
    """A barrier across all processes; fails if they pass different ``name``s."""
    h = np.asarray([zlib.crc32(name.encode())], np.uint32)
    assert_equal(h, f"sync_global_devices name mismatch ('{name}')")


def assert_equal(in_tree, fail_message=""):
    """Raise AssertionError unless every process holds the same values in ``in_tree``."""
    out = process_allgather(in_tree)
    ok = tree_util.tree_map(lambda x, g: bool(np.all(g == np.asarray(x)[None])), in_tree, out)
    if not all(tree_util.tree_leaves(ok)):
        raise AssertionError(f"{fail_message}. Expected: {out}; got: {in_tree}.")
