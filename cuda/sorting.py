"""CUDA step rules for ``sort`` and ``top_k``: a parallel stable merge sort of every row.

The sorted axis is viewed as rows of length N (the other axes flattened, row-major).  Three
kinds of kernel, all grid-stride over (row, position) points, so every row and every element
works in parallel:

* keys: each key operand becomes int64 keys (ROWS, N) whose integer order is the sort's
  total order -- the same keys as the CPU backend (``lowering/sort_kernels.py``): float bits
  with the negative half flipped, for ``sort`` with -0.0 equal to 0.0 and every NaN equal and
  above +inf (canonical), for ``top_k`` in the raw IEEE order (-NaN < -inf < -0.0 < 0.0 <
  +inf < NaN) and inverted (descending); this kernel also writes the identity permutation;
* one merge pass per doubling run width w (log2 N launches): the element at position p of a
  sorted run finds its place in the merged run by a binary search of the sibling run --
  strictly smaller elements of the right run go before a left element, equal or smaller
  elements of the left run before a right one -- so the merge is stable (equal keys keep
  their input order, which is how ``top_k`` ties go to the lower index);
* gather: each output element reads its operand at the permuted position.
"""
import hashlib
import math

import numpy as np

from numjax.lax import sorting as lax_sorting

from . import compiler
from .kernels import CudaUnsupported, unravel

_F32_NAN, _F64_NAN = 0x7FC00000, 0x7FF8000000000000
_F32_MAGNITUDE, _F64_MAGNITUDE = 0x7FFFFFFF, 0x7FFFFFFFFFFFFFFF


def _named(prefix, text):
    name = f"{prefix}_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return name, text.replace("def KERNEL(", f"def {name}(")


def _key_lines(dtype, src, canonical, descending):
    """Lines setting the int64 ``key`` of the value read by ``src``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        single = dtype == np.float32
        if dtype not in (np.float32, np.float64):
            raise CudaUnsupported(f"sorting {dtype.name} keys has no CUDA lowering yet")
        bits = "dm_f32_bits" if single else "dm_f64_bits"
        magnitude = _F32_MAGNITUDE if single else _F64_MAGNITUDE
        lines = [f"v = {src}", f"key = np.int64({bits}(v))",
                 "if key < 0:", f"    key = key ^ np.int64({magnitude})"]
        if canonical:
            lines += ["if v != v:", f"    key = np.int64({_F32_NAN if single else _F64_NAN})",
                      "elif v == 0:", "    key = np.int64(0)"]
    elif dtype == np.uint64:
        lines = [f"key = np.int64(np.uint64({src}) ^ np.uint64({1 << 63}))"]
    else:
        lines = [f"key = np.int64({src})"]
    if descending:
        lines.append("key = ~key")
    return lines


def _row_expr(shape, axis, index="i"):
    """The flat row index (the axes other than ``axis``, row-major) of point ``i0, i1, ...``."""
    expr = "0"
    for d, size in enumerate(shape):
        if d != axis:
            expr = f"{index}{d}" if expr == "0" else f"({expr}) * {size} + {index}{d}"
    return expr


def _at(rank, axis, pos):
    return ", ".join(pos if d == axis else f"i{d}" for d in range(rank))


def _keys_source(keys, shape, axis, canonical, descending):
    """Kernel(key operands..., key outputs..., perm): keys and the identity permutation."""
    n, rank = math.prod(shape), len(shape)
    lines = ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)",
             f"    for p in range(start, {n}, stride):"]
    unravel("p", shape, list(range(rank)), lines, "        ")
    lines.append(f"        row = {_row_expr(shape, axis)}")
    for k, dtype in enumerate(keys):
        at = _at(rank, axis, f"i{axis}")
        lines += ["        " + line for line in _key_lines(dtype, f"x{k}[{at}]", canonical, descending)]
        lines.append(f"        k{k}[row, i{axis}] = key")
    lines.append(f"        perm[row, i{axis}] = np.int32(i{axis})")
    params = [f"x{k}" for k in range(len(keys))] + [f"k{k}" for k in range(len(keys))] + ["perm"]
    return _named("sortkeys", "@cuda.jit\ndef KERNEL(" + ", ".join(params) + "):\n"
                  + "\n".join(lines) + "\n")


def _less(n_keys, a, b):
    """Source: element ``a`` of the row orders strictly before element ``b`` (keys compared
    lexicographically, first key first)."""
    expr = f"k{n_keys - 1}[row, {a}] < k{n_keys - 1}[row, {b}]"
    for k in reversed(range(n_keys - 1)):
        expr = (f"(k{k}[row, {a}] < k{k}[row, {b}] or "
                f"(k{k}[row, {a}] == k{k}[row, {b}] and {expr}))")
    return expr


def _merge_source(n_keys, rows, n):
    """Kernel(keys..., pin, pout, w): merges each pair of sorted runs of width ``w``."""
    lines = ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)",
             f"    for p in range(start, {rows * n}, stride):",
             f"        row = p // {n}", f"        pos = p % {n}",
             "        e = pin[row, pos]",
             "        s = (pos // (2 * w)) * (2 * w)",
             f"        mid = min(s + w, {n})", f"        end = min(s + 2 * w, {n})",
             "        if pos < mid:",
             "            lo = mid", "            hi = end",
             "            while lo < hi:", "                m = (lo + hi) // 2",
             f"                if {_less(n_keys, 'pin[row, m]', 'e')}:",
             "                    lo = m + 1", "                else:", "                    hi = m",
             "            dest = pos + (lo - mid)",
             "        else:",
             "            lo = s", "            hi = mid",
             "            while lo < hi:", "                m = (lo + hi) // 2",
             f"                if not ({_less(n_keys, 'e', 'pin[row, m]')}):",
             "                    lo = m + 1", "                else:", "                    hi = m",
             "            dest = lo + (pos - mid)",
             "        pout[row, dest] = e"]
    params = [f"k{k}" for k in range(n_keys)] + ["pin", "pout", "w"]
    return _named("sortmerge", "@cuda.jit\ndef KERNEL(" + ", ".join(params) + "):\n"
                  + "\n".join(lines) + "\n")


def _gather_source(in_shape, out_shape, axis, n_operands, with_indices):
    """Kernel(operands..., perm, outputs... [, indices]): out[.., j, ..] = x[.., perm[row, j], ..]."""
    n, rank = math.prod(out_shape), len(out_shape)
    lines = ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)",
             f"    for p in range(start, {n}, stride):"]
    unravel("p", out_shape, list(range(rank)), lines, "        ")
    lines += [f"        row = {_row_expr(in_shape, axis)}", f"        src = perm[row, i{axis}]"]
    at_out, at_src = _at(rank, axis, f"i{axis}"), _at(rank, axis, "src")
    lines += [f"        o{k}[{at_out}] = x{k}[{at_src}]" for k in range(n_operands)]
    params = [f"x{k}" for k in range(n_operands)] + ["perm"] + [f"o{k}" for k in range(n_operands)]
    if with_indices:
        lines.append(f"        idx[{at_out}] = np.int32(src)")
        params.append("idx")
    return _named("sortgather", "@cuda.jit\ndef KERNEL(" + ", ".join(params) + "):\n"
                  + "\n".join(lines) + "\n")


class _SortRows:
    """The permutation sorting every row of the key operands (keys, then the merge passes)."""

    def __init__(self, key_dtypes, shape, axis, canonical, descending):
        self.n_keys = len(key_dtypes)
        self.n = shape[axis]
        self.rows = math.prod(s for d, s in enumerate(shape) if d != axis)
        self.shape = shape
        keys_name, keys_src = _keys_source(key_dtypes, shape, axis, canonical, descending)
        merge_name, merge_src = _merge_source(self.n_keys, self.rows, self.n)
        self.sources = [keys_src, merge_src]
        self.keys = compiler.compile_kernel(keys_name, keys_src)
        self.merge = compiler.compile_kernel(merge_name, merge_src) if self.n > 1 else None

    def run(self, owner, key_arrays, buffers):
        """The (ROWS, N) int32 device permutation of the rows."""
        shape2 = (self.rows, self.n)
        keys = [buffers.get((owner, "key", k), shape2, np.int64) for k in range(self.n_keys)]
        perms = [buffers.get((owner, "perm", k), shape2, np.int32) for k in range(2)]
        stream = buffers.stream
        compiler.launch(self.keys, math.prod(self.shape), stream, *key_arrays, *keys, perms[0])
        w = 1
        while w < self.n:
            compiler.launch(self.merge, self.rows * self.n, stream, *keys, perms[0], perms[1], np.int64(w))
            perms.reverse()
            w *= 2
        return perms[0]


def _env():
    from .backend import _device_shape, env_read
    return _device_shape, env_read


def _sort_then_gather(self, env, buffers):
    """``run`` of SortStep and TopKStep: sort the rows' keys into a permutation, then gather
    every operand through it into the outputs (``out_size`` points)."""
    device_shape, read = _env()
    outs = [buffers.get((self, "out", k), device_shape(v), v.aval.dtype)
            for k, v in enumerate(self.eqn.outvars)]
    env.update(zip(self.eqn.outvars, outs))
    if self.out_size == 0:
        return
    ins = [read(env, v) for v in self.eqn.invars]
    perm = self.sort.run(self, ins[:self.sort.n_keys], buffers)
    compiler.launch(self.gather, self.out_size, buffers.stream, *ins, perm, *outs)


class SortStep:
    """``sort``: the operands sorted along ``dimension`` by the first ``num_keys``."""

    def __init__(self, eqn):
        self.eqn = eqn
        self.axis, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
        shape = tuple(eqn.invars[0].aval.shape)
        self.out_size = math.prod(shape)
        self.sort = _SortRows([v.aval.dtype for v in eqn.invars[:num_keys]], shape, self.axis,
                              canonical=True, descending=False)
        name, src = _gather_source(shape, shape, self.axis, len(eqn.invars), False)
        self.sources = self.sort.sources + [src]
        self.gather = compiler.compile_kernel(name, src)

    run = _sort_then_gather


class TopKStep:
    """``top_k``: the k largest along ``axis`` (descending, ties to the lower index) and
    their int32 indices: the first k of the stable descending sort."""

    def __init__(self, eqn):
        self.eqn = eqn
        x = eqn.invars[0]
        self.axis = eqn.params.get("axis", x.aval.ndim - 1)
        shape = tuple(x.aval.shape)
        self.out_size = math.prod(eqn.outvars[0].aval.shape)
        self.sort = _SortRows([x.aval.dtype], shape, self.axis, canonical=False, descending=True)
        name, src = _gather_source(shape, tuple(eqn.outvars[0].aval.shape), self.axis, 1, True)
        self.sources = self.sort.sources + [src]
        self.gather = compiler.compile_kernel(name, src)

    run = _sort_then_gather


def _check_dtypes(eqn):
    for v in eqn.invars:
        if np.dtype(v.aval.dtype).kind not in "biuf":
            raise CudaUnsupported(f"primitive '{eqn.primitive.name}' on {np.dtype(v.aval.dtype).name} "
                                  "has no CUDA lowering yet")


def _sort(eqn):
    _check_dtypes(eqn)
    return SortStep(eqn)


def _top_k(eqn):
    _check_dtypes(eqn)
    return TopKStep(eqn)


STEP_RULES = {lax_sorting.sort_p: _sort, lax_sorting.top_k_p: _top_k}
