"""CUDA kernel source for one fused region of the backend-neutral plan (``lowering/fusion.py``).

A region (its signature: ``inputs``, ``outputs``, ``reductions``, ``shape``) becomes

* one *element function*, ``@cuda.jit(device=True)``: given the multi-index ``i0, i1, ...``
  of one point of the iteration space and the input arrays, it returns the values of the
  region's materialized outputs and of its reductions' operands at that point.  Its body is
  the same chain of scalar expressions the CPU backend fuses into its loops
  (``lowering/scalar.py``'s neutral ``RULES``: the same scalar source serves both targets);
  where the CPU overrides a rule with its vectorizing ``vm.*`` functions, ``CUDA_OVERRIDES``
  calls libdevice instead (``device_math.py``);
* a *grid-stride elementwise kernel* storing the materialized outputs, when there are any;
* per reduction, a *block tree reduction*: block ``b`` reduces one output element's share of
  the reduced axes (``split`` blocks per output element when there are few outputs), each
  thread accumulating a strided slice, then a pairwise tree (``block_tree``: shared memory
  down to one warp, then five ``shfl_down_sync`` steps; a fixed order, so results are the
  same run to run); with ``split > 1`` a second kernel combines the per-block partials.

Only integer, bool, float32 and float64 values reach these kernels: float16, bfloat16 and
complex programs are rewritten into such values first, as the CPU backend does
(``value_forms.py``).

Sizes are baked into the source as constants (a new shape is a new kernel); the kernel's
name is a hash of its source, so equal regions share one compile.  Rank-0 values live on the
device as 1-element arrays.  This module only writes source; ``backend.py`` compiles it.
"""
import hashlib
import math
import re

import numpy as np

from numjax.jaxpr import Literal
from numjax.lax import elementwise as ew
from numjax.lax import random_bits as rb
from numjax.lax import shape as lax_shape
from numjax.lowering import fusion, scalar
from numjax.lowering.compile import MONOIDS, identity_source

from .device_math import SUFFIX


def _sign(args, in_dtypes, out_dtype, params):
    # The neutral rule subtracts two comparisons, which numpy scalars (the simulator) refuse.
    x, dtype = args[0], np.dtype(out_dtype)
    one = scalar.literal(1, dtype)
    if dtype.kind == "u":
        return f"({one} if {x} > 0 else {x})"
    return f"({one} if {x} > 0 else ({scalar.literal(-1, dtype)} if {x} < 0 else {x}))"


def _float_suffix(dtype):
    suffix = SUFFIX.get(np.dtype(dtype))
    if suffix is None:
        raise CudaUnsupported(f"{np.dtype(dtype).name} math has no CUDA lowering yet")
    return suffix


def _libdevice(base):
    def rule(args, in_dtypes, out_dtype, params):
        return f"dm_{base}_{_float_suffix(out_dtype)}({', '.join(args)})"
    return rule


def _rsqrt(args, in_dtypes, out_dtype, params):
    return f"({scalar.literal(1, out_dtype)} / dm_sqrt_{_float_suffix(out_dtype)}({args[0]}))"


def _logistic(args, in_dtypes, out_dtype, params):
    one = scalar.literal(1, out_dtype)
    return f"({one} / ({one} + dm_exp_{_float_suffix(out_dtype)}(-{args[0]})))"


def _round(args, in_dtypes, out_dtype, params):
    s, x = _float_suffix(out_dtype), args[0]
    if params.get("rounding_method") == 1:
        return f"dm_rint_{s}({x})"
    # Halves away from zero, as the CPU's sh.round_away: x - trunc(x) is exact.
    half, one = scalar.literal(0.5, out_dtype), scalar.literal(1, out_dtype)
    return (f"(dm_trunc_{s}({x}) + dm_copysign_{s}({one}, {x}) if abs({x} - dm_trunc_{s}({x})) >= {half} "
            f"else dm_trunc_{s}({x}))")


def _rem(args, in_dtypes, out_dtype, params):
    if np.dtype(out_dtype).kind == "f":
        return f"dm_fmod_{_float_suffix(out_dtype)}({args[0]}, {args[1]})"
    return scalar.RULES[ew.rem_p](args, in_dtypes, out_dtype, params)


def _is_finite(args, in_dtypes, out_dtype, params):
    return f"(({args[0]} - {args[0]}) == 0)"     # inf - inf and nan - nan are nan


class CudaUnsupported(NotImplementedError):
    """A program (or one of its equations) the CUDA backend does not lower yet."""


# (the device helpers dm_f32_bits, ... of device_math)
_bitcast = scalar.bitcast_rule("dm", CudaUnsupported, "CUDA")


def _mul_add(args, in_dtypes, out_dtype, params):
    return f"dm_fma_{_float_suffix(out_dtype)}({', '.join(args)})"


# Where the CUDA backend's scalar source differs from the neutral rules.
CUDA_OVERRIDES = {ew.sign_p: _sign, ew.rsqrt_p: _rsqrt, ew.logistic_p: _logistic,
                  ew.round_p: _round, ew.rem_p: _rem, ew.is_finite_p: _is_finite}
CUDA_OVERRIDES.update({prim: _libdevice(base) for prim, base in (
    (ew.exp_p, "exp"), (ew.exp2_p, "exp2"), (ew.log_p, "log"), (ew.log1p_p, "log1p"),
    (ew.expm1_p, "expm1"), (ew.tanh_p, "tanh"), (ew.sin_p, "sin"), (ew.cos_p, "cos"),
    (ew.tan_p, "tan"), (ew.asin_p, "asin"), (ew.acos_p, "acos"), (ew.atan_p, "atan"),
    (ew.sinh_p, "sinh"), (ew.cosh_p, "cosh"), (ew.asinh_p, "asinh"), (ew.acosh_p, "acosh"),
    (ew.atanh_p, "atanh"), (ew.atan2_p, "atan2"), (ew.nextafter_p, "nextafter"),
    (ew.sqrt_p, "sqrt"), (ew.cbrt_p, "cbrt"), (ew.erf_p, "erf"), (ew.floor_p, "floor"),
    (ew.ceil_p, "ceil"), (ew.pow_p, "pow"), (ew.erf_inv_p, "erfinv"))})
CUDA_OVERRIDES.update({ew.bitcast_convert_type_p: _bitcast, rb.mul_add_p: _mul_add,
                       rb.threefry2x32_xor_p: lambda a, i, o, p: f"vm_threefry2x32_xor({', '.join(a)})"})


def device_spelling(text):
    """Kernel source as numba-cuda compiles it: ``sh.f`` -> ``sh_f`` (see device_math.py)."""
    return re.sub(r"\bsh\.(\w+)", r"sh_\1", text)


def numba_type(dtype):
    dtype = np.dtype(dtype)
    return "numba.boolean" if dtype == np.bool_ else f"numba.{dtype.name}"


def _hash(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def unravel(flat, shape, dims, lines, indent="    "):
    """Lines setting ``i{d}`` (for ``d`` in ``dims``, sizes ``shape[d]``) from the row-major
    flat index ``flat`` over those dims."""
    rest = flat
    for k, d in enumerate(reversed(dims)):
        if k == len(dims) - 1:
            lines.append(f"{indent}i{d} = {rest}")
        else:
            lines.append(f"{indent}i{d} = {rest} % {shape[d]}")
            lines.append(f"{indent}r{d} = {rest} // {shape[d]}")
            rest = f"r{d}"


class RegionKernels:
    """The CUDA source of one region: ``element`` (device function), ``elementwise`` (kernel,
    or None) and one ``ReductionKernel`` per reduction."""

    def __init__(self, region, block):
        self.region, self.block = region, block
        self.shape = tuple(region.shape)
        self.rank = len(self.shape)
        self.in_names = {v: f"x{k}" for k, v in enumerate(region.inputs)}
        self.local = {}
        self.counter = 0
        self.returns = []          # vars the element function returns, in order
        self.body = []
        self._generate_body()
        self.element_name, self.element_source = self._element_source()

    # -- the element function
    def _tmp(self):
        self.counter += 1
        return f"t{self.counter}"

    def idx(self, shape, bdims=None):
        bdims = list(range(self.rank - len(shape), self.rank)) if bdims is None else list(bdims)
        parts = ["0" if s == 1 and self.shape[d] != 1 else f"i{d}" for s, d in zip(shape, bdims)]
        return ", ".join(parts) if parts else "0"

    def read(self, v):
        if type(v) is Literal:
            return scalar.literal(v.val, v.aval.dtype)
        if v in self.local:
            return self.local[v]
        t = self._tmp()
        self.body.append(f"{t} = {self.in_names[v]}[{self.idx(v.aval.shape)}]")
        self.local[v] = t
        return t

    def _generate_body(self):
        region = self.region
        for eqn in region.eqns:
            self._eqn(eqn)
        for v in region.materialize:
            self._return(v)
        for red in region.reductions:
            self._return(red.operand)

    def _return(self, v):
        if v not in self.returns:
            self.returns.append(v)

    def _eqn(self, eqn):
        prim, out = eqn.primitive, eqn.outvars[0]
        if prim is fusion.identity_load_p:
            self.read(eqn.invars[0])
        elif prim is lax_shape.iota_p:
            t = self._tmp()
            self.body.append(f"{t} = {scalar.np_type(out.aval.dtype)}(i{eqn.params['dimension']})")
            self.local[out] = t
        elif prim is lax_shape.broadcast_in_dim_p:
            x = eqn.invars[0]
            if type(x) is Literal or x.aval.shape == ():
                self.local[out] = self.read(x)
                return
            t = self._tmp()
            self.body.append(f"{t} = {self.in_names[x]}[{self.idx(x.aval.shape, eqn.params['broadcast_dimensions'])}]")
            self.local[out] = t
        elif prim.reduction is not None:
            self.read(eqn.invars[0])
        else:
            self._elementwise(eqn)

    def _elementwise(self, eqn):
        prim, out = eqn.primitive, eqn.outvars[0]
        args = [self.read(v) for v in eqn.invars]
        try:
            expr = scalar.expression(prim, args, [v.aval.dtype for v in eqn.invars], out.aval.dtype,
                                     eqn.params, overrides=CUDA_OVERRIDES)
        except NotImplementedError as err:
            raise CudaUnsupported(f"primitive '{prim.name}' has no CUDA lowering yet ({err})") from None
        if re.search(r"\b(vm|sp|np|math)\.(?!(bool_|u?int\d+|float\d+|nan|inf)\b)", expr):
            raise CudaUnsupported(f"primitive '{prim.name}' on {out.aval.dtype} has no CUDA lowering yet "
                                  "(its scalar rule calls a CPU-only helper)")
        t = self._tmp()
        self.body.append(f"{t} = {expr}")
        self.local[out] = t

    def _element_source(self):
        params = [f"i{d}" for d in range(self.rank)] + list(self.in_names.values())
        vals = [self.read(v) for v in self.returns]
        text = ("@device_function\n"
                f"def ELEM({', '.join(params)}):\n"
                + "".join(f"    {line}\n" for line in self.body)
                + f"    return ({''.join(v + ', ' for v in vals)})\n")
        text = device_spelling(text)
        name = "elem_" + _hash(text)
        return name, text.replace("def ELEM(", f"def {name}(")

    def _call(self):
        args = [f"i{d}" for d in range(self.rank)] + list(self.in_names.values())
        return f"{self.element_name}({', '.join(args)})"

    # -- the elementwise kernel
    def elementwise(self):
        """(name, source, number of points) of the kernel storing the materialized outputs."""
        mats = self.region.materialize
        if not mats:
            return None
        n = math.prod(self.shape)
        outs = [f"o{k}" for k in range(len(mats))]
        lines = ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)",
                 f"    for i in range(start, {n}, stride):"]
        unravel("i", self.shape, list(range(self.rank)), lines, "        ")
        lines.append(f"        vals = {self._call()}")
        at = ", ".join(f"i{d}" for d in range(self.rank)) or "0"
        for k, v in enumerate(mats):
            lines.append(f"        {outs[k]}[{at}] = vals[{self.returns.index(v)}]")
        params = list(self.in_names.values()) + outs
        text = "@cuda.jit\ndef KERNEL(" + ", ".join(params) + "):\n" + "\n".join(lines) + "\n"
        name = "ew_" + _hash(self.element_source + text)
        return name, text.replace("def KERNEL(", f"def {name}("), n

    def reductions(self, max_blocks):
        return [ReductionKernel(self, red, max_blocks) for red in self.region.reductions]


WARP = 32
SHUFFLE_OFFSETS = (16, 8, 4, 2, 1)
_SHUFFLED = {np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64)}


def shuffle_down(value, offset, dtype):
    """Source of ``value`` (a ``dtype`` scalar) of lane ``lane + offset`` of the warp (the
    lane's own value past lane 31): ``cuda.shfl_down_sync`` on a GPU (``dm_shfl_down``),
    which moves 32- and 64-bit ints and floats, so narrower types travel widened."""
    dtype = np.dtype(dtype)
    if dtype in _SHUFFLED:
        return f"dm_shfl_down(0xffffffff, {value}, {offset})"
    if dtype == np.bool_:
        return f"(dm_shfl_down(0xffffffff, numba.int32({value}), {offset}) != 0)"
    wide = "numba.int64" if dtype.itemsize >= 4 else "numba.int32"
    return f"{numba_type(dtype)}(dm_shfl_down(0xffffffff, {wide}({value}), {offset}))"


def block_tree(block, arrays, step):
    """The first lines of a block's tree reduction, in a fixed order: thread ``t`` combines
    the value of thread ``t + h`` into its own for ``h = block/2, block/4, ..., 1``.  The
    steps with ``h >= 32`` go through shared memory (one array per entry of ``arrays``:
    ``(name, numba type, the thread's value, the warp's variable)``; ``step(h)`` gives the
    lines, at 12 spaces, combining slot ``tid + h`` into slot ``tid``); the lines end in
    ``if tid < 32:`` with each warp variable holding the lane's value, where the caller
    writes the last five steps as warp shuffles (``SHUFFLE_OFFSETS``, ``shuffle_down``) at
    8 spaces.  The order is that of a shared-memory tree all the way: results do not
    depend on the launch."""
    if block < WARP or block % WARP:
        raise ValueError(f"a reduction block of {block} threads is not whole warps")
    if block == WARP:
        return [f"    if tid < {WARP}:", *(f"        {warp} = {value}" for _, _, value, warp in arrays)]
    lines = []
    for name, typ, value, _ in arrays:
        lines += [f"    {name} = cuda.shared.array({block}, {typ})", f"    {name}[tid] = {value}"]
    lines.append("    cuda.syncthreads()")
    h = block // 2
    while h >= WARP:
        lines += [f"    if tid < {h}:", *step(h), "    cuda.syncthreads()"]
        h //= 2
    lines.append(f"    if tid < {WARP}:")
    return lines + [f"        {warp} = {name}[tid]" for name, _, _, warp in arrays]


def _arg_take(better, indent):
    """Lines setting ``take``: whether candidate ``(b2, j2)`` beats ``(b1, j1)`` (position -1:
    none yet): the first NaN wins, else the extremum, ties going to the lower position."""
    return [indent + line for line in (
        "take = False", "if j2 >= 0:", "    if j1 < 0:", "        take = True",
        "    elif b1 != b1:", "        take = b2 != b2 and j2 < j1",
        "    elif b2 != b2:", "        take = True",
        f"    elif b2 {better} b1:", "        take = True",
        "    elif b2 == b1 and j2 < j1:", "        take = True")]


class ReductionKernel:
    """Source of one reduction of a region: ``first`` (the partial reduction over the
    region's element function) and, when ``split > 1``, ``second`` (combining partials)."""

    def __init__(self, kernels, red, max_blocks):
        self.kernels, self.red = kernels, red
        shape, block = kernels.shape, kernels.block
        self.axes = tuple(sorted(red.axes))
        self.kept = [d for d in range(kernels.rank) if d not in self.axes]
        self.n_out = math.prod(shape[d] for d in self.kept)
        self.n_red = math.prod(shape[d] for d in self.axes)
        self.monoid = red.primitive.reduction
        self.dtype = np.dtype(red.operand.aval.dtype)
        self.out_dtype = np.dtype(red.result.aval.dtype)
        want = max(1, -(-self.n_red // (block * 8)))
        self.split = 1 if self.monoid in ("argmax", "argmin") else max(1, min(want, max_blocks // max(self.n_out, 1)))
        self.value_index = kernels.returns.index(red.operand)

    def _combine(self, a, v):
        return MONOIDS[self.monoid].combine(a, v, self.dtype)

    def _tree(self, lines, store):
        """Lines combining the block's per-thread ``acc`` into ``store`` (by thread 0):
        ``block_tree``'s fixed pairwise order."""
        typ = numba_type(self.dtype)
        lines += block_tree(self.kernels.block, [("sm", typ, "acc", "v")], lambda h: [
            f"            sm[tid] = {self._combine('sm[tid]', f'sm[tid + {h}]')}"])
        for offset in SHUFFLE_OFFSETS:
            lines += [f"        w = {shuffle_down('v', offset, self.dtype)}",
                      f"        v = {self._combine('v', 'w')}"]
        lines += ["        if tid == 0:", f"            {store} = v"]

    def first(self):
        if self.monoid in ("argmax", "argmin"):
            return self._arg_first()
        k, block, split = self.kernels, self.kernels.block, self.split
        lines = ["    tid = cuda.threadIdx.x", "    b = cuda.blockIdx.x",
                 f"    o = b // {split}", f"    s = b % {split}"]
        unravel("o", k.shape, self.kept, lines)
        lines += [f"    acc = {identity_source(self.monoid, self.dtype)}",
                  f"    for r in range(s * {block} + tid, {self.n_red}, {split * block}):"]
        unravel("r", k.shape, list(self.axes), lines, "        ")
        lines += [f"        v = {k._call()}[{self.value_index}]",
                  f"        acc = {self._combine('acc', 'v')}"]
        self._tree(lines, "part[b]")
        return self._kernel("red", list(k.in_names.values()) + ["part"], lines, k.element_source)

    def second(self):
        block, split = self.kernels.block, self.split
        lines = ["    tid = cuda.threadIdx.x", "    o = cuda.blockIdx.x",
                 f"    acc = {identity_source(self.monoid, self.dtype)}",
                 f"    for r in range(tid, {split}, {block}):",
                 f"        acc = {self._combine('acc', f'part[o * {split} + r]')}"]
        self._tree(lines, "out[o]")
        return self._kernel("fin", ["part", "out"], lines, "")

    def _arg_first(self):
        """argmax/argmin: each thread keeps (best, position) over its strided positions; the
        tree keeps the first NaN, else the extremum, ties going to the lower position (XLA's)."""
        k, block = self.kernels, self.kernels.block
        better = ">" if self.monoid == "argmax" else "<"
        init = identity_source(self.monoid, self.dtype)
        (axis,) = self.axes
        lines = ["    tid = cuda.threadIdx.x", "    o = cuda.blockIdx.x"]
        unravel("o", k.shape, self.kept, lines)
        lines += [f"    best = {init}", "    bi = -1",
                  f"    for i{axis} in range(tid, {self.n_red}, {block}):",
                  f"        v = {k._call()}[{self.value_index}]",
                  f"        if bi < 0 or (best == best and (v {better} best or v != v)):",
                  "            best = v", f"            bi = i{axis}"]
        arrays = [("smv", numba_type(self.dtype), "best", "b1"), ("smi", "numba.int64", "bi", "j1")]
        lines += block_tree(block, arrays, lambda h: [
            "            b1 = smv[tid]", "            j1 = smi[tid]",
            f"            b2 = smv[tid + {h}]", f"            j2 = smi[tid + {h}]",
            *_arg_take(better, "            "),
            "            if take:", "                smv[tid] = b2", "                smi[tid] = j2"])
        for offset in SHUFFLE_OFFSETS:
            lines += [f"        b2 = {shuffle_down('b1', offset, self.dtype)}",
                      f"        j2 = {shuffle_down('j1', offset, np.int64)}",
                      *_arg_take(better, "        "),
                      "        if take:", "            b1 = b2", "            j1 = j2"]
        lines += ["        if tid == 0:", f"            part[o] = {scalar.np_type(self.out_dtype)}(j1)"]
        return self._kernel("arg", list(k.in_names.values()) + ["part"], lines, k.element_source)

    def _kernel(self, prefix, params, lines, salt):
        text = device_spelling("@cuda.jit\ndef KERNEL(" + ", ".join(params) + "):\n" + "\n".join(lines) + "\n")
        name = f"{prefix}_" + _hash(salt + text)
        return name, text.replace("def KERNEL(", f"def {name}(")


def check_types(jaxpr):
    """``CudaUnsupported`` naming the first value of a dtype the kernels do not handle: after
    ``value_forms.rewrite`` no float16, bfloat16 (kind 'V') or complex value is left, so this
    only guards programs that reach the planner some other way."""
    for e in jaxpr.eqns:
        for v in list(e.invars) + list(e.outvars):
            dt = np.dtype(v.aval.dtype)
            if dt.kind not in "biuf" or dt == np.float16:
                raise CudaUnsupported(f"primitive '{e.primitive.name}' on {dt.name} values has no "
                                      "CUDA lowering yet")
    for v in jaxpr.invars:
        dt = np.dtype(v.aval.dtype)
        if dt.kind not in "biuf" or dt == np.float16:
            raise CudaUnsupported(f"{dt.name} inputs have no CUDA lowering yet")
