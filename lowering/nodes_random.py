"""CPU lowering of the random-bit primitives (see nodes.py for the rule signature).

threefry2x32 becomes one content-addressed kernel (a prange loop in the parallel twin) that
hashes every element in registers.  When a counter operand comes from iota_2x32_shape, the
kernel computes it from the loop index instead of reading an array, and the iota itself
emits nothing: partitionable random bits then cost one pass that writes the two words.
"""
import hashlib

from numjax.lax.random_bits import iota_2x32_shape_p, threefry2x32_p

from .nodes import NODE_RULES

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = 0x1BD11BDA
_DECORATOR = '@numba.njit(cache=True, nogil=True, error_model="numpy"{})'


def _producers(gen):
    table = getattr(gen, "_random_producers", None)
    if table is None:
        table = {}
        for eqn in gen.jaxpr.eqns:
            for k, v in enumerate(eqn.outvars):
                table[v] = (eqn, k)
        gen._random_producers = table
    return table


def _counter_iota(gen, v):
    """0 (high word) or 1 (low word) when ``v`` is an output of iota_2x32_shape, else None."""
    from numjax.jaxpr import Literal
    if type(v) is Literal:
        return None
    found = _producers(gen).get(v)
    if found is None or found[0].primitive is not iota_2x32_shape_p:
        return None
    return found[1]


def _iota_only_feeds_threefry(gen, eqn):
    uses = [(e, k) for e in gen.jaxpr.eqns for k, v in enumerate(e.invars) if v in eqn.outvars]
    if any(v in eqn.outvars for v in gen.jaxpr.outvars):
        return False
    return all(e.primitive is threefry2x32_p and k >= 2
               and e.outvars[0].aval.shape == eqn.outvars[0].aval.shape for e, k in uses)


def _iota_2x32_shape(gen, eqn):
    if _iota_only_feeds_threefry(gen, eqn):
        return []   # the threefry kernels compute these counters from their loop index
    hi, lo = eqn.outvars
    shape = gen.shape_src(hi.aval.shape)
    n = gen.tmp("n")
    return [f"{n} = np.arange({' * '.join(gen.dim(d) for d in hi.aval.shape)}, dtype=np.int64)",
            f"{gen.name(hi)} = (({n} >> 32) & 0xFFFFFFFF).astype(np.uint32).reshape({shape})",
            f"{gen.name(lo)} = ({n} & 0xFFFFFFFF).astype(np.uint32).reshape({shape})"]


def _kernel_source(kinds, parallel):
    """Kernel text for operand kinds: 's' scalar, 'a' flat array, 'hi'/'lo' counter words."""
    params, reads = ["n"], []
    for k, kind in enumerate(kinds):
        if kind == "s":
            params.append(f"a{k}")
            reads.append(f"a{k}")
        elif kind == "a":
            params.append(f"a{k}")
            reads.append(f"a{k}[i]")
        elif kind == "hi":
            reads.append("np.uint32((i >> 32) & 0xFFFFFFFF)")
        else:
            reads.append("np.uint32(i & 0xFFFFFFFF)")
    u = "np.uint32"
    body = [f"k0 = {u}({reads[0]})", f"k1 = {u}({reads[1]})", f"k2 = {u}(k0 ^ k1 ^ {u}({_KS_PARITY}))",
            f"x0 = {u}({reads[2]} + k0)", f"x1 = {u}({reads[3]} + k1)"]
    ks = ("k0", "k1", "k2")
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            body += [f"x0 = {u}(x0 + x1)",
                     f"x1 = {u}({u}({u}(x1 << {u}({r})) | {u}(x1 >> {u}({32 - r}))) ^ x0)"]
        body += [f"x0 = {u}(x0 + {ks[(block + 1) % 3]})",
                 f"x1 = {u}(x1 + {u}({ks[(block + 2) % 3]} + {u}({block + 1})))"]
    body += ["o0[i] = x0", "o1[i] = x1"]
    loop = "numba.prange" if parallel else "range"
    lines = [_DECORATOR.format(", parallel=True" if parallel else ""),
             f"def KERNEL({', '.join(params)}):",
             "    o0 = np.empty(n, np.uint32)",
             "    o1 = np.empty(n, np.uint32)",
             f"    for i in {loop}(n):"]
    lines += ["        " + line for line in body]
    lines.append("    return o0, o1")
    text = "\n".join(lines) + "\n"
    name = "k_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return name, text.replace("def KERNEL(", f"def {name}(")


def operand_kind(gen, v, out_shape):
    """How a threefry kernel reads operand ``v``: "hi"/"lo" (a counter word computed from the
    loop index, its iota elided), "s" (a scalar) or "a" (an array)."""
    word = _counter_iota(gen, v) if v.aval.shape == out_shape else None
    if word is not None and _iota_only_feeds_threefry(gen, _producers(gen)[v][0]):
        return "hi" if word == 0 else "lo"
    return "s" if v.aval.shape == () else "a"


def threefry_operands(gen, eqn, out_shape, scalar="{}", dtype=""):
    """Each threefry operand's kind (``operand_kind``), the driver expressions passing the
    scalar and array ones (arrays broadcast to the output and flattened; ``scalar`` formats a
    scalar's name, ``dtype`` is an ``ascontiguousarray`` dtype argument) and the driver lines
    making them: shared by both CPU backends."""
    kinds, args, lines = [], [], []
    for v in eqn.invars:
        kinds.append(operand_kind(gen, v, out_shape))
        if kinds[-1] == "s":
            args.append(scalar.format(gen.name(v)))
        elif kinds[-1] == "a":
            src = gen.name(v)
            if v.aval.shape != out_shape:
                src = f"np.broadcast_to({src}, {gen.shape_src(out_shape)})"
            flat = gen.tmp("f")
            lines.append(f"{flat} = np.ascontiguousarray({src}{dtype}).reshape(-1)")
            args.append(flat)
    return kinds, args, lines


def _threefry2x32(gen, eqn):
    out_shape = eqn.outvars[0].aval.shape
    size = " * ".join(gen.dim(d) for d in out_shape) or "1"
    kinds, args, lines = threefry_operands(gen, eqn, out_shape)
    name, src = _kernel_source(kinds, gen.parallel)
    gen.kernels[name] = src
    o0, o1 = (gen.name(v) for v in eqn.outvars)
    if out_shape == ():
        t0, t1 = gen.tmp("r"), gen.tmp("r")
        lines.append(f"{t0}, {t1} = {name}(1, {', '.join(args)})")
        lines += [f"{o0} = {t0}[0]", f"{o1} = {t1}[0]"]
    else:
        shape = gen.shape_src(out_shape)
        t0, t1 = gen.tmp("r"), gen.tmp("r")
        lines.append(f"{t0}, {t1} = {name}({size}, {', '.join(args)})")
        lines += [f"{o0} = {t0}.reshape({shape})", f"{o1} = {t1}.reshape({shape})"]
    return lines


NODE_RULES.update({threefry2x32_p: _threefry2x32, iota_2x32_shape_p: _iota_2x32_shape})
