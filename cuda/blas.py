"""dot_general on the CUDA backend: a tiled shared-memory kernel, and cuBLAS on a real GPU.

Every dot_general is read as a batch of matrix products ``out[b] = lhs[b] @ rhs[b]`` with
``lhs[b]`` of shape (M, K) and ``rhs[b]`` of shape (K, N): B, M, K and N are the products of
the sizes of the batch, free and contracting dimensions, and the kernel reaches an element
of either operand through an index map (``_Group``: the flat index within a group of
dimensions unravelled into the operand's own strides), so every layout of dimension numbers
runs without a transpose.  The output of dot_general is (batch..., lhs free..., rhs free...)
in row-major order: exactly the (B, M, N) array.

The kernel (``_tiled_source``) gives each block a TILE x TILE tile of one output matrix;
the block walks K in steps of TILE, staging a tile of each operand in shared memory.  It
accumulates in the result dtype (``preferred_element_type``), operands converted to it first,
as the CPU backend does; integers accumulate in 64 bits and wrap to the result type at the
end (the same bits as accumulating in it), bool as a count that is then compared with 0.

On a real GPU (never on the simulator), float32 and float64 products whose operands are
strided matrices (each group of dimensions merges into one stride, and one of each matrix's
two strides is 1) go to cuBLAS through nvmath-python's low-level bindings, when nvmath-python
is installed: row-major C = A B is computed as the column-major C^T = B^T A^T
(``gemm_layout``), with gemm or gemmStridedBatched on the executable's stream.
"""
import hashlib
import logging
import math
import threading

import numpy as np

from numjax.lax import linalg as lax_linalg
from numjax.lowering import scalar

from . import compiler
from .kernels import numba_type

logger = logging.getLogger("numjax")


def tile_size():
    """Output tile edge: 16 (256 threads a block) on a GPU; 8 on the simulator, whose
    threads are Python threads (and where odd sizes then cross several tiles)."""
    return 8 if compiler.is_simulator() else 16


# ---------------------------------------------------------------- index maps

class _Group:
    """A group of an operand's dimensions read as one flat index (row-major over the group's
    dimensions, in the order given), with the element offset it stands for."""

    def __init__(self, shape, dims):
        strides = _row_major_strides(shape)
        self.size = math.prod(shape[d] for d in dims)
        merged = []                       # (size, stride), outermost first, size-1 dims dropped
        for d in dims:
            if shape[d] == 1:
                continue
            if merged and merged[-1][1] == strides[d] * shape[d]:
                merged[-1] = (merged[-1][0] * shape[d], strides[d])
            else:
                merged.append((shape[d], strides[d]))
        self.merged = merged

    @property
    def stride(self):
        """The single stride of the group (1 for an empty group), or None when its dims do
        not merge into one."""
        if not self.merged:
            return 1
        return self.merged[0][1] if len(self.merged) == 1 else None

    def lines(self, target, flat, indent):
        """Source lines setting ``target`` to the element offset of flat index ``flat``."""
        if not self.merged:
            return [f"{indent}{target} = 0"]
        if len(self.merged) == 1:
            return [f"{indent}{target} = {flat} * {self.merged[0][1]}"]
        lines = [f"{indent}{target}_q = {flat}", f"{indent}{target} = 0"]
        for k, (size, stride) in enumerate(reversed(self.merged)):
            if k == len(self.merged) - 1:
                lines.append(f"{indent}{target} += {target}_q * {stride}")
            else:
                lines += [f"{indent}{target} += ({target}_q % {size}) * {stride}",
                          f"{indent}{target}_q = {target}_q // {size}"]
        return lines


def _row_major_strides(shape):
    strides, step = [0] * len(shape), 1
    for d in reversed(range(len(shape))):
        strides[d] = step
        step *= shape[d]
    return strides


class DotLayout:
    """A dot_general as B products of (M, K) by (K, N): the groups of each operand."""

    def __init__(self, eqn):
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lhs, rhs = (v.aval for v in eqn.invars)
        lfree = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
        rfree = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
        self.lb, self.lm, self.lk = (_Group(lhs.shape, g) for g in (lb, lfree, lc))
        self.rb, self.rk, self.rn = (_Group(rhs.shape, g) for g in (rb, rc, rfree))
        self.B, self.M, self.K, self.N = self.lb.size, self.lm.size, self.lk.size, self.rn.size


# ---------------------------------------------------------------- the tiled kernel

def _types(eqn):
    """(accumulator dtype, source converting a loaded operand, source converting the result):
    operands go to the result type as on the CPU, integers then widen to 64 bits."""
    out = np.dtype(eqn.outvars[0].aval.dtype)
    if out == np.bool_:
        return np.dtype(np.int64), "np.int64", lambda acc: f"{acc} != 0"
    if out.kind in "iu":
        acc = np.dtype(np.int64 if out.kind == "i" else np.uint64)
        return acc, scalar.np_type(out), lambda a: f"{scalar.np_type(out)}({a})"
    return out, scalar.np_type(out), lambda a: f"{scalar.np_type(out)}({a})"


def _tiled_source(eqn, layout, tile):
    acc_dt, load, store = _types(eqn)
    acc_t, zero = scalar.np_type(acc_dt), scalar.literal(0, acc_dt)
    L = layout
    m_tiles = -(-L.M // tile)
    lines = [f"    sa = cuda.shared.array(({tile}, {tile}), {numba_type(acc_dt)})",
             f"    sb = cuda.shared.array(({tile}, {tile}), {numba_type(acc_dt)})",
             "    tx = cuda.threadIdx.x", "    ty = cuda.threadIdx.y",
             f"    col = cuda.blockIdx.x * {tile} + tx",
             f"    for b in range(cuda.blockIdx.z, {L.B}, cuda.gridDim.z):"]
    lines += L.lb.lines("lbo", "b", "        ") + L.rb.lines("rbo", "b", "        ")
    lines += L.rn.lines("rno", "col", "        ")
    lines += [f"        for by in range(cuda.blockIdx.y, {m_tiles}, cuda.gridDim.y):",
              f"            row = by * {tile} + ty"]
    lines += L.lm.lines("lmo", "row", "            ")
    lines += [f"            acc = {zero}",
              f"            for t in range(0, {L.K}, {tile}):",
              "                k = t + tx",
              f"                if row < {L.M} and k < {L.K}:"]
    lines += L.lk.lines("lko", "k", "                    ")
    lines += [f"                    sa[ty, tx] = {acc_t}({load}(x0[lbo + lmo + lko]))",
              "                else:", f"                    sa[ty, tx] = {zero}",
              "                k = t + ty",
              f"                if k < {L.K} and col < {L.N}:"]
    lines += L.rk.lines("rko", "k", "                    ")
    lines += [f"                    sb[ty, tx] = {acc_t}({load}(x1[rbo + rko + rno]))",
              "                else:", f"                    sb[ty, tx] = {zero}",
              "                cuda.syncthreads()",
              f"                for kk in range({tile}):",
              f"                    acc = {acc_t}(acc + sa[ty, kk] * sb[kk, tx])",
              "                cuda.syncthreads()",
              f"            if row < {L.M} and col < {L.N}:",
              f"                out[(b * {L.M} + row) * {L.N} + col] = {store('acc')}"]
    text = "@cuda.jit\ndef KERNEL(x0, x1, out):\n" + "\n".join(lines) + "\n"
    name = "dot_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return name, text.replace("def KERNEL(", f"def {name}(")


def _grid(layout, tile):
    """Blocks: x over the N tiles, y over the M tiles and z over the batch (y and z capped at
    the device's limits; the kernel loops over the rest)."""
    return (-(-layout.N // tile), min(-(-layout.M // tile), 65535), min(layout.B, 65535))


# ---------------------------------------------------------------- cuBLAS

class GemmLayout:
    """Arguments of the column-major cuBLAS call computing a row-major dot_general:
    C^T (N x M, ldc = N) = op_a(A) op_b(B) with A from rhs and B from lhs."""

    def __init__(self, transa, transb, m, n, k, lda, stride_a, ldb, stride_b, batch):
        self.transa, self.transb = transa, transb
        self.m, self.n, self.k = m, n, k
        self.lda, self.stride_a, self.ldb, self.stride_b = lda, stride_a, ldb, stride_b
        self.ldc, self.stride_c, self.batch = m, m * n, batch


def _matrix(rows, cols):
    """(op is transposed, leading dimension) for a strided (rows x cols) matrix group pair
    read as a column-major operand whose op must give the (cols x rows) matrix, or None.
    Row-major storage (unit column stride) is that column-major matrix already (op N)."""
    r, c = rows.size, cols.size
    rs, cs = rows.stride, cols.stride
    if rs is None or cs is None:
        return None
    if (c == 1 or cs == 1) and (r == 1 or rs >= c):
        return False, (rs if r > 1 else max(c, 1))
    if (r == 1 or rs == 1) and (c == 1 or cs >= r):
        return True, (cs if c > 1 else max(r, 1))
    return None


def gemm_layout(eqn):
    """The ``GemmLayout`` of this dot_general when cuBLAS can compute it in place: float32 or
    float64 throughout, non-empty, each operand a strided batch of matrices; else None."""
    dtypes = {np.dtype(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars)}
    if len(dtypes) != 1 or dtypes.pop() not in (np.float32, np.float64):
        return None
    L = DotLayout(eqn)
    if 0 in (L.B, L.M, L.K, L.N) or max(L.M, L.N, L.K, L.B) >= 2 ** 31:
        return None
    if L.lb.stride is None or L.rb.stride is None:
        return None
    a = _matrix(L.rk, L.rn)    # rhs (K x N): op_a(A) must be the N x K matrix rhs^T
    b = _matrix(L.lm, L.lk)    # lhs (M x K): op_b(B) must be the K x M matrix lhs^T
    if a is None or b is None or max(a[1], b[1]) >= 2 ** 31:
        return None
    stride_a = L.rb.stride * (L.B > 1)
    stride_b = L.lb.stride * (L.B > 1)
    return GemmLayout(a[0], b[0], L.N, L.M, L.K, a[1], stride_a, b[1], stride_b, L.B)


_handles = {}          # device id -> cuBLAS handle, created once per device
_handles_lock = threading.Lock()
_cublas_failed = False


def _cublas_handle():
    """The current device's cuBLAS handle, or None (simulator, nvmath-python missing or
    cuBLAS not loadable: logged once; the tiled kernel runs instead)."""
    global _cublas_failed
    if compiler.is_simulator() or _cublas_failed:
        return None
    from numba import cuda
    device = cuda.get_current_device().id
    with _handles_lock:
        if device not in _handles:
            try:
                from nvmath.bindings import cublas
            except ImportError as err:
                _cublas_failed = True
                logger.info("numjax: dot_general uses the tiled CUDA kernel: nvmath-python is not "
                            "installed (%s)", err)
                return None
            try:
                _handles[device] = cublas.create()
            except Exception as err:   # libcublas missing or not loadable
                _cublas_failed = True
                logger.warning("numjax: dot_general uses the tiled CUDA kernel: nvmath-python could "
                               "not create a cuBLAS handle (%s); install libcublas (the CUDA "
                               "toolkit, or nvidia-cublas-cu12)", err)
                return None
        return _handles[device]


def _pointer(array):
    return array.__cuda_array_interface__["data"][0]


def _stream_pointer(stream):
    if stream is None or isinstance(stream, int):
        return stream or 0
    return int(stream.handle)


def _gemm(handle, g, dtype, stream, a, b, c):
    """C = op_a(A) op_b(B) for the column-major ``GemmLayout`` ``g`` on ``stream``."""
    from nvmath.bindings import cublas
    with _handles_lock:     # the handle's stream is shared state: set it and call as one
        _gemm_call(cublas, handle, g, dtype, stream, a, b, c)


def _gemm_call(cublas, handle, g, dtype, stream, a, b, c):
    cublas.set_stream(handle, _stream_pointer(stream))
    one, zero = np.ones(1, dtype), np.zeros(1, dtype)     # host scalars (host pointer mode)
    op = {False: cublas.Operation.N, True: cublas.Operation.T}
    single = np.dtype(dtype) == np.float32
    head = (handle, op[g.transa], op[g.transb], g.m, g.n, g.k, one.ctypes.data)
    if g.batch == 1:
        fn = cublas.sgemm if single else cublas.dgemm
        fn(*head, _pointer(a), g.lda, _pointer(b), g.ldb, zero.ctypes.data, _pointer(c), g.ldc)
    else:
        fn = cublas.sgemm_strided_batched if single else cublas.dgemm_strided_batched
        fn(*head, _pointer(a), g.lda, g.stride_a, _pointer(b), g.ldb, g.stride_b,
           zero.ctypes.data, _pointer(c), g.ldc, g.stride_c, g.batch)


# ---------------------------------------------------------------- the step

class DotStep:
    """One dot_general: cuBLAS where ``gemm_layout`` allows it on a GPU, else the tiled kernel."""

    def __init__(self, eqn):
        from .backend import _device_shape, env_read
        self._device_shape, self._read = _device_shape, env_read
        self.eqn = eqn
        self.layout = DotLayout(eqn)
        self.gemm = gemm_layout(eqn)
        self.handle = _cublas_handle() if self.gemm is not None else None
        self.sources = []
        if self.handle is None:
            self.tile = tile_size()
            name, source = _tiled_source(eqn, self.layout, self.tile)
            self.sources = [source]
            self.kernel = compiler.compile_kernel(name, source)

    def run(self, env, buffers):
        out = self.eqn.outvars[0]
        result = buffers.get((self, "out"), self._device_shape(out), out.aval.dtype)
        env[out] = result
        L = self.layout
        if L.B * L.M * L.N == 0:
            return
        lhs, rhs = (self._read(env, v) for v in self.eqn.invars)
        flat_l, flat_r = lhs.reshape((lhs.size,)), rhs.reshape((rhs.size,))
        flat_o = result.reshape((result.size,))
        if self.handle is not None:
            _gemm(self.handle, self.gemm, out.aval.dtype, buffers.stream, flat_r, flat_l, flat_o)
            return
        self.kernel[_grid(L, self.tile), (self.tile, self.tile), buffers.stream](flat_l, flat_r, flat_o)


STEP_RULES = {lax_linalg.dot_general_p: DotStep}
