"""NumPy indexing on Arrays and Tracers: ``x[idx]``, ``x.at[idx].op(...)``, take, take_along_axis, put.

Basic indexing (static ints and slices, None, Ellipsis, traced scalar ints) lowers to
slice/squeeze/rev/dynamic_slice, as JAX does, so it stays cheap; everything else (integer
and boolean arrays, scatters) goes through one ``_Indexer`` that turns the index into a
lax.gather / lax.scatter: advanced indices and strided slices become columns of the index
array, unit-step slices become (possibly offset) windows.
"""
import numpy as np

from .. import core, dtypes, lax
from ..array import Array
from ..core import get_aval
from ..errors import NonConcreteBooleanIndexError
from ._util import asarray_leaf, check_arraylike
from ..lax.indexing import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers


# ---------------------------------------------------------------- basic indexing

def _expand_ellipsis(idx, ndim):
    # Identity checks only: `in` would compare traced indices with ==.
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    positions = [k for k, i in enumerate(idx) if i is Ellipsis]
    if len(positions) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {n_real} were indexed")
    fill = (slice(None),) * (ndim - n_real)
    if positions:
        pos = positions[0]
        return idx[:pos] + fill + idx[pos + 1:]
    return idx + fill


def _is_static_int(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_basic(idx):
    if not all(i is None or i is Ellipsis or _is_static_int(i) or _is_scalar_int(i)
               or (isinstance(i, slice) and _static_slice(i)) for i in idx):
        return False
    # As JAX: a traced scalar index beside a slice of step other than +-1 goes through the
    # gather (whose indices wrap into int32 and clamp), not dynamic_slice.
    return not (any(_is_scalar_int(i) for i in idx)
                and any(isinstance(i, slice) and i.step not in (None, 1, -1) for i in idx))


def _static_slice(s):
    return all(v is None or _is_static_int(v) for v in (s.start, s.stop, s.step))


def _basic_getitem(arr, idx):
    aval = get_aval(arr)
    idx = _expand_ellipsis(idx, aval.ndim)
    starts, limits, strides, squeeze_dims, flip_dims, new_axes, dyn = [], [], [], [], [], [], []
    dim = 0
    out_dim = 0
    for i in idx:
        if i is None:
            new_axes.append(out_dim)
            out_dim += 1
            continue
        n = aval.shape[dim]
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step < 0:
                flip_dims.append(dim)
                start, stop, step = _flip_slice(start, stop, step, n)
            stop = max(stop, start)
            starts.append(start), limits.append(stop), strides.append(step)
            out_dim += 1
        elif _is_static_int(i) and -n <= int(i) < n:
            k = int(i) % n
            starts.append(k), limits.append(k + 1), strides.append(1)
            squeeze_dims.append(dim)
        elif _is_static_int(i):
            # Out of bounds: JAX clamps on retrieval, through a dynamic_slice of the index.
            dyn.append((dim, Array(np.asarray(int(i), np.int32), False)))
            starts.append(0), limits.append(1), strides.append(1)
            squeeze_dims.append(dim)
        else:
            # A weakly typed traced index is made strong first, as JAX's indexing does.
            dyn.append((dim, lax._convert_element_type(i, get_aval(i).dtype, False)))
            starts.append(0), limits.append(1), strides.append(1)   # size 1 after dynamic_slice
            squeeze_dims.append(dim)
        dim += 1
    out = arr
    if dyn:
        out = _dynamic_part(out, dyn, aval)
    out = lax.slice(out, starts, limits, strides)
    if flip_dims:
        out = lax.rev(out, flip_dims)
    out = lax.squeeze(out, squeeze_dims)
    if new_axes:
        out = lax.expand_dims(out, new_axes)
    return out


def _is_scalar_int(i):
    if isinstance(i, (core.Tracer, Array)):
        aval = get_aval(i)
        return aval.ndim == 0 and dtypes.kind(aval.dtype) in "iu"
    return False


def _flip_slice(start, stop, step, n):
    # A negative-step slice is the positive-step slice over the same elements
    # (from the last one selected up to `start`), then reversed (as JAX lowers it).
    count = max(0, -(-(start - stop) // -step))
    if count == 0:
        return 0, 0, 1
    last = start + (count - 1) * step
    return last, start + 1, -step


def _dynamic_part(arr, dyn, aval):
    starts = [0] * aval.ndim
    sizes = list(aval.shape)
    for dim, i in dyn:
        # lax.dynamic_slice maps a negative index to one counted from the end.
        starts[dim] = i
        sizes[dim] = 1
    if aval.ndim > 1:
        # As JAX: several start indices are all converted (wrapping) to int32 (int64 past
        # int32's range); a lone one keeps its type (a uint32 2**32 - 1 clamps to the end).
        dt = np.dtype(np.int64 if any(d > np.iinfo(np.int32).max for d in aval.shape) else np.int32)
        starts = [lax.convert_element_type(s, dt) if not isinstance(s, int) else
                  Array(np.asarray(s, dt), False) for s in starts]
    # The sliced dims keep size 1 here; the caller's static slice/squeeze removes them.
    return lax.dynamic_slice(arr, starts, sizes)


# ---------------------------------------------------------------- the general indexer

def _check_top_level(idx):
    if isinstance(idx, list):
        if any(i is None or i is Ellipsis or isinstance(i, (slice, list, tuple)) for i in idx):
            raise TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; "
                            "use `arr[tuple(seq)]` instead of `arr[seq]`. See "
                            "https://github.com/jax-ml/jax/issues/4564 for more information.")
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; "
                        "use `arr[array(seq)]` instead of `arr[seq]`. See "
                        "https://github.com/jax-ml/jax/issues/4564 for more information.")
    return idx if isinstance(idx, tuple) else (idx,)


def _concrete(x):
    if isinstance(x, core.Tracer):
        return x._concrete_value()
    return x


def _slice_entry(v, s, position):
    if v is None or _is_static_int(v):
        return v
    c = _concrete(v)
    if c is None or np.ndim(c) or dtypes.kind(np.asarray(c).dtype) not in "iu":
        raise IndexError(f"Slice entries must be static integers. Got {s} at position {position}")
    return int(c)


def _static_slice_of(s, position):
    return s if _static_slice(s) else slice(*(_slice_entry(v, s, position) for v in (s.start, s.stop, s.step)))


def _as_index_array(i):
    """An index entry that is an array (or a sequence of ints/bools) as an Array or Tracer."""
    import numjax.numpy as jnp
    if isinstance(i, (list, tuple)):
        i = jnp.asarray(i) if len(i) else Array(np.zeros((0,), np.int32), False)
    elif not isinstance(i, (core.Tracer, Array)):
        i = jnp.asarray(i)
    dt = get_aval(i).dtype
    if dtypes.kind(dt) not in "iub":
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt.name}")
    return i


def _preprocess(arr_aval, idx):
    """The index as a list of entries consuming one operand dim each (None aside): slices with
    static entries, Python ints, and integer arrays; plus where scalar booleans need a new
    unit axis inserted into the operand."""
    entries = []
    for pos, i in enumerate(idx):
        if isinstance(i, str):
            raise TypeError(f"JAX does not support string indexing; got idx={i!r}")
        if i is None or i is Ellipsis or _is_static_int(i):
            entries.append(int(i) if _is_static_int(i) else i)
        elif isinstance(i, (bool, np.bool_)):
            entries.append(("bool", bool(i)))
        elif isinstance(i, slice):
            entries.append(slice(*(_slice_entry(v, i, pos) for v in (i.start, i.stop, i.step))))
        elif isinstance(i, (float, complex, np.floating, np.complexfloating)):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                            f"{np.asarray(i).dtype.name}")
        else:
            a = _as_index_array(i)
            aval = get_aval(a)
            if aval.dtype == np.bool_:
                if aval.ndim == 0:
                    c = _concrete(a)
                    if c is None:
                        raise NonConcreteBooleanIndexError(a)
                    entries.append(("bool", bool(np.asarray(c))))
                else:
                    entries.append(("mask", a, pos))
            else:
                entries.append(a)
    n_real = sum(1 for e in entries if e is not None and e is not Ellipsis and not _is_bool_scalar(e))
    n_real += sum(get_aval(e[1]).ndim - 1 for e in entries if _is_mask(e))
    ellipses = [k for k, e in enumerate(entries) if e is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > arr_aval.ndim:
        raise IndexError(f"Too many indices: array is {arr_aval.ndim}-dimensional, but {n_real} "
                         "were indexed")
    fill = [slice(None)] * (arr_aval.ndim - n_real)
    if ellipses:
        entries = entries[:ellipses[0]] + fill + entries[ellipses[0] + 1:]
    else:
        entries = entries + fill
    out, inserted, dim = [], [], 0
    for e in entries:
        if _is_bool_scalar(e):
            # x[True] adds a unit axis indexed by [0]; x[False] indexes it by [] (NumPy's rule).
            inserted.append(dim)
            out.append(Array(np.zeros((1 if e[1] else 0,), np.int32), False))
            dim += 1
        elif _is_mask(e):
            _, mask, pos = e
            shape = arr_aval.shape[dim - len(inserted):dim - len(inserted) + get_aval(mask).ndim]
            value = _concrete(mask)
            if value is None:
                raise NonConcreteBooleanIndexError(mask)
            value = np.asarray(value)
            if value.shape != tuple(shape):
                raise IndexError(f"boolean index did not match shape of indexed array in index {pos}: "
                                 f"got {value.shape}, expected {list(shape)}")
            out.extend(Array(nz.astype(np.int32), False) for nz in np.nonzero(value))
            dim += value.ndim
        else:
            out.append(e)
            dim += e is not None
    return out, inserted


def _is_bool_scalar(e):
    return type(e) is tuple and e[0] == "bool"


def _is_mask(e):
    return type(e) is tuple and e[0] == "mask"


class _Indexer:
    """An index resolved against an operand shape into gather/scatter parameters.

    ``indices``: the start indices (batch dims in output order, index vector last);
    ``dnums``: gather dimension numbers; ``slice_sizes``; ``rev_dims``: output dims (before
    the new axes) to reverse; ``new_axes``: output positions of None entries; ``shape``:
    the full indexed shape (what a gather returns after reversal and new axes).
    """

    def __init__(self, shape, entries, normalize=True, index_cast="after"):
        is_adv = [not (e is None or isinstance(e, slice)) for e in entries]
        has_arrays = any(a and not _is_static_int(e) for a, e in zip(is_adv, entries))
        adv_pos = [k for k, a in enumerate(is_adv) if a]
        contiguous = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1)) if adv_pos else True
        adv = [e for e, a in zip(entries, is_adv) if a]
        adv_shapes = [() if _is_static_int(e) else get_aval(e).shape for e in adv]
        try:
            adv_shape = np.broadcast_shapes(*adv_shapes)
        except ValueError:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={adv_shapes}") from None
        if adv and not has_arrays:
            adv_shape = ()
        # Output layout: ("adv",), ("new",), ("window", dim, size), ("strided", dim, range).
        layout = [("adv",)] if adv and not contiguous else []
        columns = []   # (operand dim, kind, payload)
        sizes, collapsed = list(shape), []
        dim, placed = 0, not contiguous
        for e, a in zip(entries, is_adv):
            if e is None:
                layout.append(("new",))
                continue
            n = shape[dim]
            if a:
                if not placed:
                    layout.append(("adv",))
                    placed = True
                columns.append((dim, "adv", e))
                sizes[dim] = 1
                collapsed.append(dim)
            else:
                start, stop, step = e.indices(n)
                rng = range(start, stop, step)
                if len(rng) > 1 and abs(step) > 1:
                    layout.append(("strided", dim, rng))
                    columns.append((dim, "strided", rng))
                    sizes[dim] = 1
                    collapsed.append(dim)
                else:
                    first = min(rng) if len(rng) else 0
                    # A negative unit step reads the window forwards, then reverses it.
                    layout.append(("window", dim, len(rng), step < 0 and len(rng) > 1))
                    sizes[dim] = len(rng)
                    if len(rng) != n:
                        columns.append((dim, "start", first))
            dim += 1
        self._layout(layout, adv_shape)
        self.indices = self._index_array(columns, shape, normalize, index_cast)
        self.dnums = GatherDimensionNumbers(tuple(self.offset_dims), tuple(sorted(collapsed)),
                                            tuple(c[0] for c in columns))
        self.slice_sizes = tuple(sizes)
        self.static = not has_arrays and not any(c[1] == "strided" for c in columns)

    def _layout(self, layout, adv_shape):
        """Batch shape of the indices (in output order) and where each kind of item lands."""
        self.batch_shape, self.offset_dims, self.new_axes, self.shape = [], [], [], []
        self._adv_batch, self._strided_batch = None, {}
        self.rev_dims = []
        out = 0
        for item in layout:
            kind = item[0]
            if kind == "new":
                self.new_axes.append(len(self.shape))
                self.shape.append(1)
                continue
            if kind == "adv":
                self._adv_batch = list(range(len(self.batch_shape), len(self.batch_shape) + len(adv_shape)))
                self.batch_shape.extend(adv_shape)
                self.shape.extend(adv_shape)
                out += len(adv_shape)
            elif kind == "strided":
                self._strided_batch[item[1]] = len(self.batch_shape)
                self.batch_shape.append(len(item[2]))
                self.shape.append(len(item[2]))
                out += 1
            else:
                if item[3]:
                    self.rev_dims.append(out)
                self.offset_dims.append(out)
                self.shape.append(item[2])
                out += 1
        self.batch_shape, self.shape = tuple(self.batch_shape), tuple(self.shape)

    def _index_array(self, columns, shape, normalize, index_cast):
        """``index_cast`` is where JAX converts (wrapping) an index array to int32 (int64 for a
        dim past int32's range): "after" normalizing negatives in its own type (x[idx], .at),
        "before" it (take_along_axis), or "keep" its type (take; the gather then wraps FILL_OR_DROP
        indices itself and clamps the others in their own type)."""
        bshape = self.batch_shape + (1,)
        index_dtype = np.dtype(np.int64 if any(d > np.iinfo(np.int32).max for d in shape) else np.int32)
        cols = []
        for dim, kind, payload in columns:
            if kind == "adv":
                cols.append(self._adv_column(payload, shape[dim], bshape, normalize,
                                             None if index_cast == "keep" else index_dtype,
                                             index_cast == "before"))
            elif kind == "strided":
                values = Array(np.asarray(payload, np.int32), False)
                cols.append(lax.broadcast_in_dim(values, bshape, (self._strided_batch[dim],)))
            else:
                cols.append(lax.broadcast(Array(np.asarray(payload, np.int32), False), bshape))
        if not cols:
            return Array(np.zeros(self.batch_shape + (0,), np.int32), False)
        if len(cols) == 1:
            return cols[0]
        dt = dtypes.promote(*((get_aval(c).dtype, False) for c in cols))[0]
        return lax.concatenate([lax.convert_element_type(c, dt) for c in cols], len(bshape) - 1)

    def _adv_column(self, e, n, bshape, normalize, index_dtype, cast_first):
        if _is_static_int(e):
            value = int(e) + n if normalize and int(e) < 0 else int(e)
            return lax.broadcast(Array(np.asarray(value, np.int32), False), bshape)
        aval = get_aval(e)
        if aval.weak_type:
            e = lax._convert_element_type(e, aval.dtype, False)
        dt = aval.dtype
        if cast_first and dt != index_dtype:
            e, dt = lax.convert_element_type(e, index_dtype), index_dtype
        if normalize and dtypes.kind(dt) == "i":
            n_arr = Array(np.asarray(n, dt), False)
            e = lax.select(lax.lt(e, Array(np.zeros((), dt), False)), lax.add(e, n_arr), e)
        if index_dtype is not None and dt != index_dtype:
            e = lax.convert_element_type(e, index_dtype)
        # The broadcast index lands on the advanced batch dims of the index array.
        lead = len(self._adv_batch) - aval.ndim
        return lax.broadcast_in_dim(e, bshape, tuple(self._adv_batch[lead:]))


def _index(arr, idx, normalize=True, index_cast="after"):
    arr = asarray_leaf(arr)
    entries, inserted = _preprocess(get_aval(arr), _check_top_level(idx))
    if inserted:
        arr = lax.expand_dims(arr, inserted)
    return arr, _Indexer(get_aval(arr).shape, entries, normalize, index_cast), inserted


def _rewriting_take(arr, idx, mode=None, fill_value=None, indices_are_sorted=False,
                    unique_indices=False, normalize=True, index_cast="after"):
    idx_t = tuple(_static_slice_of(i, pos) if isinstance(i, slice) else i
                  for pos, i in enumerate(_check_top_level(idx)))
    if mode is None and _is_basic(idx_t) and isinstance(arr, (core.Tracer, Array)):
        return _basic_getitem(arr, idx_t)
    if mode is None:
        mode = GatherScatterMode.PROMISE_IN_BOUNDS
    mode = GatherScatterMode.from_any(mode)
    arr, ix, _ = _index(arr, idx_t, normalize, index_cast)
    static = ix.static
    shape = get_aval(arr).shape
    if any(k > n for k, n in zip(ix.slice_sizes, shape)):
        # An empty axis indexed by (empty) arrays: JAX skips the gather and gives zeros of
        # the result's shape; gathering from the axis padded with zeros gives the same.
        arr = lax.pad(arr, lax.convert_element_type(0, get_aval(arr).dtype),
                      [(0, max(0, k - n), 0) for k, n in zip(ix.slice_sizes, shape)])
    out = lax.gather(arr, ix.indices, ix.dnums, ix.slice_sizes, mode=mode, fill_value=fill_value,
                     indices_are_sorted=indices_are_sorted or static,
                     unique_indices=unique_indices or static)
    if ix.rev_dims:
        out = lax.rev(out, ix.rev_dims)
    if ix.new_axes:
        out = lax.expand_dims(out, ix.new_axes)
    return out


def getitem(arr, idx):
    return _rewriting_take(arr, idx)


def _warn_unsafe_cast(y, dtype):
    """JAX's FutureWarning for updates that promotion would not cast to the array's ``dtype``
    (``jnp.arange(4).at[1].set(2.7)``: a float into an int array; a Python int that fits,
    into any integer array, is safe)."""
    import warnings
    from ..config import config
    try:
        safe = dtypes.result_type(y, dtype) == dtype
    except TypeError:
        return
    if not safe:
        warnings.warn("scatter inputs have incompatible types: cannot safely cast value from "
                      f"dtype={get_aval(y).dtype} to dtype={np.dtype(dtype)} with "
                      f"jax_numpy_dtype_promotion={config.jax_numpy_dtype_promotion}. "
                      "In future JAX releases this will result in an error.", FutureWarning, stacklevel=4)


def _scatter_update(x, idx, y, scatter_fn, *, mode=None, indices_are_sorted=False,
                    unique_indices=False, normalize=True, index_cast="after"):
    import numjax.numpy as jnp
    x = asarray_leaf(x)
    x_aval = get_aval(x)
    y = jnp.asarray(y)
    if get_aval(y).dtype != x_aval.dtype:
        _warn_unsafe_cast(y, x_aval.dtype)
        y = lax._convert_element_type(y, x_aval.dtype, x_aval.weak_type)
    xe, ix, inserted = _index(x, idx, normalize, index_cast)
    if any(d == 0 for d in ix.shape):
        return x     # as JAX: nothing is updated, so no scatter is built (nor checked)
    y_aval = get_aval(y)
    if y_aval.ndim > len(ix.shape):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={y_aval.shape} "
                         f"shape={ix.shape}")
    y = jnp.broadcast_to(y, ix.shape)
    if ix.new_axes:
        y = lax.squeeze(y, ix.new_axes)
    if ix.rev_dims:
        y = lax.rev(y, ix.rev_dims)
    dn = ix.dnums
    sdn = ScatterDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map)
    out = scatter_fn(xe, ix.indices, y, sdn, indices_are_sorted=indices_are_sorted or ix.static,
                     unique_indices=unique_indices or ix.static, mode=mode)
    return lax.reshape(out, x_aval.shape) if inserted else out


# ---------------------------------------------------------------- x.at[idx]

class _IndexUpdateHelper:
    """``x.at``: indexing it gives the functional-update reference for that index."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
            out_sharding=None):
        return _rewriting_take(self.array, self.index, mode=mode, fill_value=fill_value,
                               indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)

    def _update(self, values, fn, indices_are_sorted, unique_indices, mode):
        return _scatter_update(self.array, self.index, values, fn, mode=mode,
                               indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, lax.scatter, indices_are_sorted, unique_indices, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, lax.scatter_add, indices_are_sorted, unique_indices, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, lax.scatter_sub, indices_are_sorted, unique_indices, mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, lax.scatter_mul, indices_are_sorted, unique_indices, mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        import numjax.numpy as jnp
        divisor = _scatter_update(jnp.ones_like(self.array), self.index, values, lax.scatter_mul,
                                  mode=mode, indices_are_sorted=indices_are_sorted,
                                  unique_indices=unique_indices)
        return jnp.true_divide(self.array, divisor)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        import numjax.numpy as jnp
        exponent = _scatter_update(jnp.ones_like(self.array), self.index, values, lax.scatter_mul,
                                   mode=mode, indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices)
        return jnp.power(self.array, exponent)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, lax.scatter_min, indices_are_sorted, unique_indices, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, lax.scatter_max, indices_are_sorted, unique_indices, mode)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        def scatter_fn(x, indices, y, dnums, **kw):
            return lax.scatter_apply(x, indices, func, dnums, update_shape=get_aval(y).shape, **kw)
        zero = Array(np.zeros((), get_aval(self.array).dtype), False)
        return _scatter_update(self.array, self.index, zero, scatter_fn, mode=mode,
                               indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


def _install_at():
    at = property(_IndexUpdateHelper, doc="Functional index updates: ``x.at[idx].set(y)`` and friends.")
    Array.at = at
    core.Tracer.at = at


_install_at()


# ---------------------------------------------------------------- take, take_along_axis, put

def _canonical_axis(axis, ndim, name):
    from ._util import canonicalize_axis
    return canonicalize_axis(axis, ndim)


def _index_mode(mode, fn):
    """jnp.take's mode names: 'fill' (default), 'clip', 'wrap'; 'raise' cannot be traced."""
    if mode is None or mode == "fill":
        return GatherScatterMode.FILL_OR_DROP
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{fn} is not supported.")
    if mode == "wrap":
        return "wrap"
    return GatherScatterMode.from_any(mode)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    import numjax.numpy as jnp
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike("take", a, indices)
    a, indices = jnp.asarray(a), jnp.asarray(indices)
    if dtypes.kind(get_aval(indices).dtype) not in "iub":
        raise ValueError(f"indices must have an integer type: jnp.take got indices of dtype "
                         f"{get_aval(indices).dtype.name}; cast them first, e.g. indices.astype(int).")
    if dtypes.kind(get_aval(indices).dtype) == "b":
        indices = indices.astype(dtypes.default_int_dtype())   # as JAX: True is index 1, not a mask
    if axis is None:
        a, axis = jnp.ravel(a), 0
    nd = get_aval(a).ndim
    axis = _canonical_axis(axis, nd, "take")
    gmode = _index_mode(mode, "take")
    n = get_aval(a).shape[axis]
    if gmode == "wrap":
        indices, gmode = jnp.remainder(indices, n) if n else indices, GatherScatterMode.PROMISE_IN_BOUNDS
    # NumPy's clip mode clamps negative indices to 0 (no wrapping from the end).
    normalize = gmode is not GatherScatterMode.CLIP
    return _rewriting_take(a, (slice(None),) * axis + (indices,), mode=gmode, fill_value=fill_value,
                           indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                           normalize=normalize, index_cast="keep")


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *, wrap_negative_indices=None):
    import numjax.numpy as jnp
    arr, indices = jnp.asarray(arr), jnp.asarray(indices)
    if dtypes.kind(get_aval(indices).dtype) not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers; got {get_aval(indices).dtype.name}")
    if axis is None:
        arr, indices, axis = jnp.ravel(arr), jnp.ravel(indices), 0
    a_aval, i_aval = get_aval(arr), get_aval(indices)
    if a_aval.ndim != i_aval.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{i_aval.ndim} vs. {a_aval.ndim}")
    axis = _canonical_axis(axis, a_aval.ndim, "take_along_axis")
    gmode = _index_mode(mode, "take_along_axis")
    if gmode == "wrap":
        indices = jnp.remainder(indices, a_aval.shape[axis])
        gmode = GatherScatterMode.PROMISE_IN_BOUNDS
    # Every other dim pairs position k of the indices with position k of the array.
    shape = [max(a, i) if d != axis else None for d, (a, i) in enumerate(zip(a_aval.shape, i_aval.shape))]
    for d, (a, i) in enumerate(zip(a_aval.shape, i_aval.shape)):
        if d != axis and a != i and 1 not in (a, i):
            raise ValueError(f"take_along_axis: indices shape {i_aval.shape} is not broadcast-"
                             f"compatible with array shape {a_aval.shape} outside axis {axis}.")
    a_shape = tuple(s if d != axis else a_aval.shape[axis] for d, s in enumerate(shape))
    i_shape = tuple(s if d != axis else i_aval.shape[axis] for d, s in enumerate(shape))
    arr, indices = jnp.broadcast_to(arr, a_shape), jnp.broadcast_to(indices, i_shape)
    idx = []
    for d in range(a_aval.ndim):
        if d == axis:
            idx.append(indices)
        else:
            view = [1] * a_aval.ndim
            view[d] = shape[d]
            idx.append(Array(np.arange(shape[d], dtype=np.int32).reshape(view), False))
    normalize = True if wrap_negative_indices is None else bool(wrap_negative_indices)
    return _rewriting_take(arr, tuple(idx), mode=gmode, fill_value=fill_value, normalize=normalize,
                           index_cast="before" if normalize else "keep")


def put(a, ind, v, mode=None, *, inplace=True):
    import numjax.numpy as jnp
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    a = jnp.asarray(a)
    ind, v = jnp.ravel(jnp.asarray(ind)), jnp.ravel(jnp.asarray(v))
    n_ind, n_v = get_aval(ind).shape[0], get_aval(v).shape[0]
    if not n_ind or not n_v:
        return a
    if n_v < n_ind:
        # NumPy repeats v cyclically to the number of indices.
        v = jnp.take(v, Array(np.arange(n_ind, dtype=np.int32) % n_v, False), mode="wrap")
    elif n_v > n_ind:
        v = v[:n_ind]
    size = get_aval(a).size
    flat = jnp.ravel(a)
    if mode == "wrap":
        ind, smode = jnp.remainder(ind, size), GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        smode = GatherScatterMode.CLIP
    elif mode is None:
        # JAX writes through unravel_index, which clamps each index (negatives from the end)
        # into the array, in the index's own type: nothing is dropped.
        ind, smode = _clamp_flat_index(ind, size), GatherScatterMode.FILL_OR_DROP
    elif mode == "fill" or mode == "drop":
        smode = GatherScatterMode.FILL_OR_DROP
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"put: mode must be one of 'wrap', 'clip', 'fill' or None; got {mode!r}")
    # As JAX (which clips in the index's type before its .at update), clip mode clamps the
    # indices in their own type.
    out = _scatter_update(flat, ind, v, lax.scatter, mode=smode, normalize=mode != "clip",
                          index_cast="keep" if mode in ("clip", None) else "after")
    return lax.reshape(out, get_aval(a).shape)


def _clamp_flat_index(ind, size):
    """``ind`` clamped into [-size, size - 1], then negatives counted from the end."""
    dt = get_aval(ind).dtype
    if dtypes.kind(dt) == "u":
        return lax.min(ind, Array(np.asarray(min(size - 1, np.iinfo(dt).max), dt), False))
    if size > np.iinfo(dt).max:      # a negative index plus size must not overflow
        dt = dtypes.promote((dt, False), (np.dtype(np.int32), False))[0]
        ind = lax.convert_element_type(ind, dt)
    lo, hi = (Array(np.asarray(max(v, np.iinfo(dt).min) if v < 0 else min(v, np.iinfo(dt).max), dt), False)
              for v in (-size, size - 1))
    ind = lax.clamp(lo, ind, hi)
    return lax.select(lax.lt(ind, Array(np.zeros((), dt), False)),
                      lax.add(ind, Array(np.asarray(size, dt), False)), ind)


__all__ = ["take", "take_along_axis", "put"]
