"""CUDA step rules for indexing: gather, the scatters, dynamic_slice, dynamic_update_slice, pad.

Each is a grid-stride kernel over points (``points_kernel``), with the CPU backend's
semantics (``lowering/nodes_indexing.py``, ``lowering/nodes.py``):

* ``gather``: one thread per output element reads its window start from the indices, clamps
  it into range (clip / promise_in_bounds), or reads the fill value where the start is out of
  range (fill; the index is first wrapped to the type XLA converts it to).
* the scatters: the operand is copied to the output, then one thread per update element
  combines into its target (out-of-range windows are dropped except in clip mode).  Repeated
  targets combine with atomics (add/sub, integer min/max), or with a compare-and-swap loop on
  the bit pattern (mul, float min/max with XLA's NaN and signed-zero rules; 1- and 2-byte
  types swap the 32-bit word holding them); with ``unique_indices``, plain stores.  Float
  sums over repeated indices therefore round in the order the threads arrive, not the CPU's
  order.  An overwrite with repeated indices keeps the CPU's last-update-wins result (see
  ``ScatterStep``).
* ``dynamic_slice`` / ``dynamic_update_slice``: the start indices are device scalars read by
  every thread and clamped so the slice stays in bounds, as XLA does.
* ``pad``: each output element finds its source element (negative padding crops, interior
  padding spaces the elements out) or takes the padding value.
"""
import hashlib
import math

import numpy as np

from numjax.lax import indexing as ix
from numjax.lax import shape as lax_shape
from numjax.lax.indexing import GatherScatterMode, default_fill_value, gather_index_wrap_dtype
from numjax.lowering import scalar

from .backend import env_read
from .compiler import compile_kernel, launch
from .kernels import CudaUnsupported


# ---------------------------------------------------------------- kernel source helpers

def unravel_lines(flat, prefix, shape, indent):
    """Lines setting ``{prefix}{d}`` for each dim of ``shape`` from the row-major ``flat``."""
    lines, rest = [], flat
    for d in reversed(range(len(shape))):
        if d == 0:
            lines.append(f"{indent}{prefix}{d} = {rest}")
        else:
            lines.append(f"{indent}{prefix}{d} = {rest} % {shape[d]}")
            lines.append(f"{indent}{prefix}r{d} = {rest} // {shape[d]}")
            rest = f"{prefix}r{d}"
    return lines


def subscript(parts):
    """An array subscript; a rank-0 value lives on the device as shape (1,)."""
    return ", ".join(parts) if parts else "0"


def flat_offset(coords, shape):
    """The row-major flat offset of ``coords`` (expressions) in an array of ``shape``."""
    terms, stride = [], 1
    for c, n in reversed(list(zip(coords, shape))):
        terms.append(f"({c}) * {stride}" if stride != 1 else f"({c})")
        stride *= n
    return " + ".join(reversed(terms)) or "0"


def points_kernel(prefix, params, shape, body):
    """``(name, source)`` of a grid-stride kernel over the points of ``shape``: ``body`` runs
    with the point's multi-index in ``o0, o1, ...`` (and its flat index in ``i``)."""
    n = math.prod(shape)
    lines = ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)",
             f"    for i in range(start, {n}, stride):"]
    lines += unravel_lines("i", "o", shape, "        ")
    lines += ["        " + line for line in body]
    text = "@cuda.jit\ndef KERNEL(" + ", ".join(params) + "):\n" + "\n".join(lines) + "\n"
    name = f"{prefix}_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return name, text.replace("def KERNEL(", f"def {name}(")


def device_shape(shape):
    return tuple(shape) if shape != () else (1,)


class Launch:
    """One compiled grid-stride kernel over ``n`` points."""

    def __init__(self, prefix, params, shape, body, sources):
        name, source = points_kernel(prefix, params, shape, body)
        sources.append(source)
        self.kernel = compile_kernel(name, source)
        self.n = math.prod(shape)

    def __call__(self, buffers, *args):
        launch(self.kernel, self.n, buffers.stream, *args)


# ---------------------------------------------------------------- window starts

def _window_dims(ndim, *excluded):
    skip = set().union(*excluded)
    return [d for d in range(ndim) if d not in skip]


def _start_value(raw, idx_dtype, wrap):
    """An index element as int64 with the same range verdict as the CPU backend's."""
    if wrap is not None:
        return f"np.int64(np.{np.dtype(wrap).name}({raw}))"
    if np.dtype(idx_dtype) == np.uint64:
        return f"np.int64(min({raw}, np.uint64({2**63 - 1})))"
    return f"np.int64({raw})"


def _read_starts(body, operand_shape, idx, bvars, index_map, sizes, clip, wrap=None):
    """Lines reading and clamping the window start of each indexed operand dim; returns the
    start names and the in-range condition (None when clamping).  Starts are clamped either
    way, so a read of the operand stays in bounds even where the fill value is taken."""
    starts, conds = {}, []
    for k, d in enumerate(index_map):
        hi = operand_shape[d] - sizes[d]
        raw = f"idx[{subscript(bvars + [str(k)])}]"
        body.append(f"st{d} = {_start_value(raw, idx.aval.dtype, wrap)}")
        if not clip:
            body.append(f"in{d} = st{d} >= 0 and st{d} <= {hi}")
            conds.append(f"in{d}")
        body.append(f"st{d} = min(max(st{d}, 0), {max(hi, 0)})")
        starts[d] = f"st{d}"
    return starts, (" and ".join(conds) if conds else None)


def _operand_coords(ndim, starts, batching, bvars, window, wvars):
    coords = []
    for d in range(ndim):
        terms = [starts[d]] if d in starts else []
        if d in batching:
            terms.append(bvars[batching[d]])
        if d in window:
            terms.append(wvars[window.index(d)])
        coords.append(" + ".join(terms) or "0")
    return coords


def _split_dims(rank, window_positions):
    """The point's index variables at window positions and at the other (batch) positions."""
    bvars, wvars = [], []
    for q in range(rank):
        (wvars if q in window_positions else bvars).append(f"o{q}")
    return bvars, wvars


# ---------------------------------------------------------------- gather

class OneKernelStep:
    """A step of one ``Launch`` over the output's points, taking the equation's operands and
    then the output buffer."""

    def run(self, env, buffers):
        args = [env_read(env, v) for v in self.eqn.invars]
        out = self.eqn.outvars[0]
        result = buffers.get((self, "out"), device_shape(out.aval.shape), out.aval.dtype)
        self.launch(buffers, *args, result)
        env[out] = result


class GatherStep(OneKernelStep):
    def __init__(self, eqn):
        x, idx = eqn.invars
        out = eqn.outvars[0]
        p = eqn.params
        dn, sizes, mode = p["dimension_numbers"], p["slice_sizes"], p["mode"]
        if mode not in (GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP,
                        GatherScatterMode.PROMISE_IN_BOUNDS):
            raise CudaUnsupported(f"primitive 'gather' with mode {mode} has no CUDA lowering")
        self.eqn, self.sources = eqn, []
        window = _window_dims(x.aval.ndim, dn.collapsed_slice_dims, dn.operand_batching_dims)
        bvars, wvars = _split_dims(out.aval.ndim, dn.offset_dims)
        fill = mode is GatherScatterMode.FILL_OR_DROP
        body = []
        starts, ok = _read_starts(body, x.aval.shape, idx, bvars, dn.start_index_map, sizes,
                                  clip=not fill, wrap=gather_index_wrap_dtype(mode, x.aval.shape))
        batching = dict(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
        read = f"x[{subscript(_operand_coords(x.aval.ndim, starts, batching, bvars, window, wvars))}]"
        if ok is not None:
            value = p["fill_value"] if p["fill_value"] is not None else default_fill_value(x.aval.dtype)
            read = f"{read} if {ok} else {scalar.literal(value, x.aval.dtype)}"
        out_at = subscript([f"o{q}" for q in range(out.aval.ndim)])
        body.append(f"out[{out_at}] = {read}")
        self.launch = Launch("gather", ["x", "idx", "out"], out.aval.shape, body, self.sources)


# ---------------------------------------------------------------- scatters

_ATOMIC_TYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64)}
# float type -> (the integer type of its bit pattern, device functions to and from the bits)
_BITS = {np.dtype(np.float32): (np.int32, "dm_f32_bits", "dm_f32_from_bits"),
         np.dtype(np.float64): (np.int64, "dm_f64_bits", "dm_f64_from_bits")}
# The CPU backend's combine of the current value ``a`` and the update ``u``.
_COMBINE = {
    ix.scatter_p: "{u}",
    ix.scatter_add_p: "{a} + {u}",
    ix.scatter_sub_p: "{a} - {u}",
    ix.scatter_mul_p: "{a} * {u}",
    ix.scatter_min_p: "sh_fmin({u}, {a})",     # XLA's min/max: NaN wins, -0 < +0
    ix.scatter_max_p: "sh_fmax({u}, {a})",
}


def _combine_expr(prim, dtype, a, u):
    if np.dtype(dtype) == np.bool_ and prim in (ix.scatter_min_p, ix.scatter_max_p):
        return f"({u} and {a})" if prim is ix.scatter_min_p else f"({u} or {a})"
    return _COMBINE[prim].format(a=a, u=u)


def _cas_loop(prim, dtype):
    """Lines combining ``u`` into ``flat[off]`` with a compare-and-swap loop; for floats
    ``flat`` is the output's integer view (the bit pattern)."""
    t = scalar.np_type(dtype)
    if dtype in _BITS:
        _, to_bits, from_bits = _BITS[dtype]
        new = f"{to_bits}({t}({_combine_expr(prim, dtype, f'{from_bits}(old)', 'u')}))"
    else:
        new = f"{t}({_combine_expr(prim, dtype, 'old', 'u')})"
    return ["while True:", "    old = flat[off]", f"    new = {new}",
            "    if cuda.atomic.cas(flat, off, old, new) == old:", "        break"]


def _subword_cas_loop(prim, dtype):
    """Lines combining ``u`` into element ``off`` of a 1- or 2-byte type held in the 32-bit
    words ``words`` (CUDA's compare-and-swap takes 32- and 64-bit words): the loop swaps the
    whole word, changing only the element's bits (little-endian)."""
    t, nbits = scalar.np_type(dtype), dtype.itemsize * 8
    mask = (1 << nbits) - 1
    if dtype == np.bool_:
        value, bits = "bits != 0", "np.uint32(1 if v else 0)"
    elif dtype.kind == "i":
        value = (f"{t}(np.int64(bits) - (np.int64({1 << nbits}) if bits >= {1 << (nbits - 1)} "
                 "else np.int64(0)))")
        bits = f"np.uint32(np.int64(v) & {mask})"
    else:
        value, bits = f"{t}(bits)", "np.uint32(v)"
    return [f"byte = off * {dtype.itemsize}", "w = byte // 4",
            "shift = np.uint32((byte % 4) * 8)",
            f"keep = np.uint32(0xFFFFFFFF) ^ np.uint32(np.uint32({mask}) << shift)",
            "while True:", "    old = words[w]",
            f"    bits = np.uint32(old >> shift) & np.uint32({mask})",
            f"    a = {value}",
            f"    v = {t}({_combine_expr(prim, dtype, 'a', 'u')})",
            f"    new = np.uint32(np.uint32(old & keep) | np.uint32({bits} << shift))",
            "    if cuda.atomic.cas(words, w, old, new) == old:", "        break"]


def _combine_lines(prim, dtype, unique):
    """How one update element ``u`` lands on ``flat[off]``; None: overwrite with repeated
    indices (the two-pass winner scheme of ``ScatterStep``)."""
    t = scalar.np_type(dtype)
    if unique:
        return [f"flat[off] = {t}({_combine_expr(prim, dtype, 'flat[off]', 'u')})"]
    if prim is ix.scatter_p:
        return None
    if dtype.itemsize < 4 and dtype.kind in "biu":
        return _subword_cas_loop(prim, dtype)
    if dtype not in _ATOMIC_TYPES:
        raise CudaUnsupported(f"primitive '{prim.name}' on {dtype.name} with possibly repeated "
                              "indices has no CUDA lowering (no atomics for the type)")
    if prim is ix.scatter_add_p:
        return ["cuda.atomic.add(flat, off, u)"]
    if prim is ix.scatter_sub_p:
        return ["cuda.atomic.sub(flat, off, u)"]
    if prim in (ix.scatter_min_p, ix.scatter_max_p) and dtype.kind in "iu":
        return [f"cuda.atomic.{'min' if prim is ix.scatter_min_p else 'max'}(flat, off, u)"]
    return _cas_loop(prim, dtype)


class ScatterStep:
    """Copy the operand, then one thread per update element.  An overwrite (``scatter``)
    whose indices may repeat has no defined winner in JAX on a GPU; here the last update in
    the CPU backend's order wins, as there: a first pass takes the atomic max of each target's
    update sequence numbers, a second stores the winning updates."""

    def __init__(self, eqn):
        x, idx, upd = eqn.invars
        p, prim = eqn.params, eqn.primitive
        if p.get("update_jaxpr") is not None and prim is ix.scatter_p:
            raise CudaUnsupported("primitive 'scatter' with a custom combiner (update_jaxpr, "
                                  "e.g. .at[].apply) has no CUDA lowering")
        dn, dtype = p["dimension_numbers"], np.dtype(x.aval.dtype)
        self.eqn, self.sources = eqn, []
        self.size = math.prod(device_shape(x.aval.shape))
        combine = _combine_lines(prim, dtype, p["unique_indices"])
        # How the update kernel sees the output: as itself, as the bit patterns of its floats
        # (a compare-and-swap loop), or as the 32-bit words holding its 1- or 2-byte elements.
        cas = combine is not None and any("cuda.atomic.cas" in line for line in combine)
        self.storage = ("words" if cas and dtype.itemsize < 4 else
                        "bits" if cas and dtype in _BITS else "plain")
        window = _window_dims(x.aval.ndim, dn.inserted_window_dims, dn.operand_batching_dims)
        sizes = [1] * x.aval.ndim
        for d, u in zip(window, dn.update_window_dims):
            sizes[d] = upd.aval.shape[u]
        bvars, wvars = _split_dims(upd.aval.ndim, dn.update_window_dims)
        head = []
        starts, ok = _read_starts(head, x.aval.shape, idx, bvars, dn.scatter_dims_to_operand_dims,
                                  sizes, clip=p["mode"] is GatherScatterMode.CLIP)
        batching = dict(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims))
        coords = _operand_coords(x.aval.ndim, starts, batching, bvars, window, wvars)
        head.append(f"off = {flat_offset(coords, x.aval.shape)}")
        head.append(f"u = upd[{subscript([f'o{q}' for q in range(upd.aval.ndim)])}]")
        guard = [f"if {ok}:"] if ok is not None else []
        indent = "    " if ok is not None else ""
        self.copy = Launch("copy", ["x", "flat"], (self.size,), ["flat[i] = x[i]"], self.sources)
        self.winner = None
        if combine is None:
            n_upd = math.prod(upd.aval.shape)
            self.seq_dtype = np.int32 if n_upd < 2**31 else np.int64
            b_sizes = list(idx.aval.shape[:-1])
            w_sizes = [upd.aval.shape[u] for u in dn.update_window_dims]
            seq = flat_offset(bvars + wvars, b_sizes + w_sizes)
            seq_t = scalar.np_type(self.seq_dtype)
            self.winner = Launch(
                "scatter_winner", ["idx", "upd", "seq"], upd.aval.shape,
                head + guard + [indent + f"cuda.atomic.max(seq, off, {seq_t}({seq}))"], self.sources)
            self.reset = Launch("fill", ["seq"], (self.size,), [f"seq[i] = {seq_t}(-1)"], self.sources)
            combine = [f"if seq[off] == {seq_t}({seq}):", "    flat[off] = u"]
        params = ["idx", "upd", "words" if self.storage == "words" else "flat"] + \
            (["seq"] if self.winner is not None else [])
        self.update = Launch("scatter", params, upd.aval.shape,
                             head + guard + [indent + line for line in combine], self.sources)

    def run(self, env, buffers):
        x, idx, upd = (env_read(env, v) for v in self.eqn.invars)
        out = self.eqn.outvars[0]
        dtype = np.dtype(out.aval.dtype)
        if self.storage == "words":
            words = buffers.get((self, "words"), (-(-self.size * dtype.itemsize // 4),), np.uint32)
            flat = words.view(dtype)[:self.size]
        else:
            flat = buffers.get((self, "out"), (self.size,), dtype)
        self.copy(buffers, x.reshape(self.size), flat)
        extra = []
        if self.winner is not None:
            seq = buffers.get((self, "seq"), (self.size,), self.seq_dtype)
            self.reset(buffers, seq)
            self.winner(buffers, idx, upd, seq)
            extra = [seq]
        target = flat
        if self.storage == "words":
            target = words
        elif self.storage == "bits":
            target = flat.view(_BITS[dtype][0])
        self.update(buffers, idx, upd, target, *extra)
        env[out] = flat.reshape(device_shape(out.aval.shape))


# ---------------------------------------------------------------- dynamic slices

def _clamped_start_lines(n_starts, operand_shape, sizes):
    return [f"s{d} = min(max(np.int64(start{d}[0]), 0), {operand_shape[d] - sizes[d]})"
            for d in range(n_starts)]


class DynamicSliceStep(OneKernelStep):
    """One thread per output element reads the (clamped) device start indices."""

    def __init__(self, eqn):
        x = eqn.invars[0]
        out = eqn.outvars[0]
        sizes = eqn.params["slice_sizes"]
        self.eqn, self.sources = eqn, []
        rank = x.aval.ndim
        body = _clamped_start_lines(rank, x.aval.shape, sizes)
        src = subscript([f"s{d} + o{d}" for d in range(rank)])
        body.append(f"out[{subscript([f'o{d}' for d in range(rank)])}] = x[{src}]")
        params = ["x"] + [f"start{d}" for d in range(rank)] + ["out"]
        self.launch = Launch("dynamic_slice", params, out.aval.shape, body, self.sources)


class DynamicUpdateSliceStep(OneKernelStep):
    """One thread per output element: the update inside the (clamped) window, else the operand."""

    def __init__(self, eqn):
        x, upd = eqn.invars[:2]
        self.eqn, self.sources = eqn, []
        rank = x.aval.ndim
        body = _clamped_start_lines(rank, x.aval.shape, upd.aval.shape)
        at = subscript([f"o{d}" for d in range(rank)])
        inside = " and ".join(f"o{d} >= s{d} and o{d} < s{d} + {upd.aval.shape[d]}"
                              for d in range(rank)) or "True"
        body += [f"if {inside}:",
                 f"    out[{at}] = upd[{subscript([f'o{d} - s{d}' for d in range(rank)])}]",
                 "else:", f"    out[{at}] = x[{at}]"]
        params = ["x", "upd"] + [f"start{d}" for d in range(rank)] + ["out"]
        self.launch = Launch("dynamic_update_slice", params, x.aval.shape, body, self.sources)


# ---------------------------------------------------------------- pad

class PadStep(OneKernelStep):
    """One thread per output element: position ``o - lo`` of the padded line is an operand
    element where it is a non-negative multiple of ``interior + 1`` below the operand's extent
    (negative ``lo``/``hi`` crop), else the padding value."""

    def __init__(self, eqn):
        x = eqn.invars[0]
        out = eqn.outvars[0]
        cfg = eqn.params["padding_config"]
        self.eqn, self.sources = eqn, []
        rank = x.aval.ndim
        body, conds = [], []
        for d, ((lo, _, interior), n) in enumerate(zip(cfg, x.aval.shape)):
            step = interior + 1
            body.append(f"t{d} = o{d} - ({lo})")
            conds.append(f"t{d} >= 0 and t{d} < {(n - 1) * step + 1 if n else 0}")
            if step > 1:
                conds.append(f"t{d} % {step} == 0")
        src = subscript([f"t{d} // {cfg[d][2] + 1}" if cfg[d][2] else f"t{d}" for d in range(rank)])
        at = subscript([f"o{d}" for d in range(rank)])
        body += [f"if {' and '.join(conds) or 'True'}:", f"    out[{at}] = x[{src}]",
                 "else:", f"    out[{at}] = pv[0]"]
        self.launch = Launch("pad", ["x", "pv", "out"], out.aval.shape, body, self.sources)


STEP_RULES = {
    ix.gather_p: GatherStep,
    **{prim: ScatterStep for prim in _COMBINE},
    ix.dynamic_slice_p: DynamicSliceStep,
    ix.dynamic_update_slice_p: DynamicUpdateSliceStep,
    lax_shape.pad_p: PadStep,
}
