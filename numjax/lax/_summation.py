"""numjax's summation order, shared by eager reductions and compiled loops.

Floating-point sums (and products) depend on the order of their operations, so numjax fixes
one order and both paths follow it bit for bit: eagerly, ``reduce_sum`` of floating and
complex arrays and ``reduce_prod`` of floating ones run ``ordered_reduce`` below (large rows
through a compiled kernel, ``lowering/kernels.py: ordered_rows``, small ones in numpy);
under ``jit``, the loop generator (``lowering/compile.py``, ``RegionCodegen``) writes its
accumulators in the same order, whatever else is fused into the loop.

The order, for a reduction over the trailing axes of the operand (the usual case: one axis
of a contiguous array, or all of them):

* each row (the innermost reduced axis, n elements) is split into ``LANES`` interleaved
  partial results: element j goes to lane ``j % LANES`` for j < n - n % LANES, each lane
  combining in increasing j from the identity;
* the n % LANES remaining elements are then added, in order, to lane 0;
* lanes 1..LANES-1 are then folded into lane 0 from left to right: the row's result;
* when several trailing axes are reduced, the rows' results are combined one at a time in
  row-major order, starting from the identity.

A reduction over axes that are not trailing combines the reduced elements of each output
one at a time, in row-major order of the operand; except that when it reduces the leading axis
and keeps the last one (of size > 1), the leading axis is cut into blocks of
``leading_block_rows(n)`` rows (more than one block only for n > LEADING_MIN_ROWS): each block
is reduced that way from the identity, and the blocks' results are then combined one at a time
in order.  The blocks depend on the shape only, so the compiled loops reduce them on several
threads without the result depending on the thread count.

This is not XLA's CPU order (which tiles reductions into windows of 32 below a few thousand
elements and above that uses a vectorized emitter whose order follows the machine's vector
width), so sums can differ from JAX's in the last bits, as they do between JAX's CPU and GPU
backends.
"""
import numpy as np

LANES = 8   # the partial results of each row (the compiled loop's unroll factor)
_WIDE = 256  # rows x LANES from which each reduction step takes one group of every row
_BLOCK = 1 << 16  # elements per block of the few-rows path
_KERNEL_MIN = 1 << 15  # from this size on, a compiled kernel computes the rows (same order)
LEADING_MIN_ROWS = 64   # a leading-axis reduction over more rows than this is cut into blocks
LEADING_BLOCKS = 16     # ... of at least LEADING_MIN_ROWS rows, at most this many blocks


def leading_block_rows(n):
    """Rows per block of a reduction over a leading axis of ``n`` rows (see above)."""
    return max(LEADING_MIN_ROWS, -(-n // LEADING_BLOCKS))


def ordered_reduce(ufunc, identity, v, axes):
    """``ufunc.reduce(v, axes)`` in numjax's summation order (``ufunc`` is np.add or
    np.multiply, ``identity`` its identity)."""
    if v.ndim == 1 and axes and 0 < v.size < _KERNEL_MIN:
        return _vector_result(ufunc, v)
    axes = tuple(sorted(int(a) for a in axes))    # (their order does not matter)
    kept = [d for d in range(v.ndim) if d not in axes]
    kept_shape = tuple(v.shape[d] for d in kept)
    if not axes:
        return v.copy()
    if v.size == 0:
        return np.full(kept_shape, identity, v.dtype)
    start = v.dtype.type(identity)
    with np.errstate(all="ignore"):
        if axes == tuple(range(v.ndim - len(axes), v.ndim)):
            rows = _row_results(ufunc, start, v.reshape(-1, v.shape[-1]))
            if len(axes) > 1:
                rows = _in_sequence(ufunc, start, rows.reshape(int(np.prod(kept_shape)), -1))
            return rows.reshape(kept_shape)
        if kept and kept[-1] == v.ndim - 1 and v.shape[-1] > 1:
            # The innermost axis is kept: numpy adds whole rows of it at a time, in row-major
            # order of the reduced indices (a contiguous operand's memory order).
            v = np.ascontiguousarray(v)
            rows = leading_block_rows(v.shape[0]) if axes[0] == 0 else v.shape[0]
            parts = [ufunc.reduce(v[b:b + rows], axis=axes, initial=start) for b in range(0, v.shape[0], rows)]
            for part in parts[1:]:
                parts[0] = ufunc(parts[0], part)
            return parts[0]
        w = np.transpose(v, kept + sorted(axes)).reshape(int(np.prod(kept_shape)), -1)
        return _in_sequence(ufunc, start, w).reshape(kept_shape)


def _vector_result(ufunc, v):
    """One short row (the eager fast path of ``jnp.sum(vector)``), skipping the axis handling."""
    with np.errstate(all="ignore"):
        return _row_results(ufunc, v.dtype.type(0 if ufunc is np.add else 1), v.reshape(1, -1))[0]


def _in_sequence(ufunc, start, rows):
    """Each row of the 2-d ``rows`` combined from ``start``, one element after another.
    (``accumulate`` is sequential by definition, where ``reduce`` may pair elements up.)"""
    acc = np.array(rows, copy=True, order="C")
    acc[:, 0] = ufunc(start, acc[:, 0])
    return ufunc.accumulate(acc, axis=1, out=acc)[:, -1]


def _row_results(ufunc, start, w):
    rows, n = w.shape
    if w.size >= _KERNEL_MIN and w.dtype.kind in "fc" and w.dtype.itemsize >= 4:
        from .. import dispatch   # lazy: numjax imports without Numba
        return dispatch.cpu_library("kernels").ordered_rows(w, start, ufunc is np.multiply)
    full = n - n % LANES
    groups = w[:, :full].reshape(rows, full // LANES, LANES)
    if full == 0:
        lanes = np.full((rows, LANES), start, w.dtype)
    elif rows * LANES >= _WIDE:
        # Group-major copy: each reduction step adds one group of every row and lane.
        lanes = ufunc.reduce(np.ascontiguousarray(groups.transpose(1, 0, 2)), axis=0, initial=start)
    elif full <= _BLOCK:
        # A reduction over a non-innermost axis combines whole groups one after another
        # (numpy pairs elements up only along the innermost axis): the lane order.
        lanes = ufunc.reduce(groups, axis=1, initial=start)
    else:
        lanes = _few_rows_lanes(ufunc, start, groups)
    # Lane 0, then the tail, then lanes 1..LANES-1, combined one after another.
    # (accumulate is sequential by definition; lane 0 already started from ``start``)
    return ufunc.accumulate(np.concatenate([lanes[:, :1], w[:, full:], lanes[:, 1:]], axis=1),
                            axis=1)[:, -1]


def _few_rows_lanes(ufunc, start, groups):
    """The lanes of few rows: block by block (cache-sized), a lane-major copy accumulated
    along each lane's contiguous elements, carrying each lane's result into the next block."""
    rows, g, _ = groups.shape
    step = max(1, _BLOCK // (rows * LANES))
    carry = np.full((rows, LANES), start, groups.dtype)
    for b in range(0, g, step):
        block = np.ascontiguousarray(groups[:, b:b + step, :].transpose(0, 2, 1))
        block[:, :, 0] = ufunc(carry, block[:, :, 0])
        ufunc.accumulate(block, axis=2, out=block)
        carry = block[:, :, -1].copy()
    return carry
