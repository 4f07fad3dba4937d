"""``Lowered.compiler_ir()``: a program as text in the shape of XLA's HLO.

numjax has no MLIR or HLO; what it can show in their place is the jaxpr the backend lowers,
one instruction per line, named and typed as HLO names them (``multiply.3 = f32[2]{0}
multiply(x.1, x.1)``), so that code comparing programs by their compiler IR still works:
equal programs give equal text, and the rewrites XLA makes when lowering (``square`` and
``integer_pow`` of 2 are a multiplication) are made here too, so ``x * x``, ``x ** 2`` and
``jnp.square(x)`` print alike, as they do on JAX.
"""
import numpy as np



# primitive name -> HLO opcode, where they differ
_OPCODES = {
    "mul": "multiply", "sub": "subtract", "div": "divide", "neg": "negate", "sin": "sine",
    "cos": "cosine", "exp": "exponential", "log": "log", "max": "maximum", "min": "minimum",
    "pow": "power", "rem": "remainder", "lt": "compare", "le": "compare", "gt": "compare",
    "ge": "compare", "eq": "compare", "ne": "compare", "select_n": "select",
    "convert_element_type": "convert", "broadcast_in_dim": "broadcast", "dot_general": "dot",
    "reduce_sum": "reduce", "reduce_max": "reduce", "reduce_min": "reduce",
    "jit": "call", "while": "while", "cond": "conditional", "scan": "while",
}

_SHORT = {"bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
          "bfloat16": "bf16", "float32": "f32", "float64": "f64", "complex64": "c64",
          "complex128": "c128"}


def _type(aval):
    shape = tuple(aval.shape)
    layout = ",".join(str(d) for d in reversed(range(len(shape))))
    name = _SHORT.get(np.dtype(aval.dtype).name, np.dtype(aval.dtype).name)
    return f"{name}[{','.join(map(str, shape))}]{{{layout}}}"


class _Names:
    def __init__(self):
        self.count, self.names = {}, {}

    def fresh(self, base):
        n = self.count[base] = self.count.get(base, 0) + 1
        return f"{base}.{n}"


def hlo_text(closed, name):
    """The HLO-shaped text of ``closed`` (a ClosedJaxpr) for a function called ``name``."""
    jaxpr = closed.jaxpr
    names, env, lines = _Names(), {}, []

    def ref(v):
        if hasattr(v, "val"):               # a literal: a constant instruction
            out = names.fresh("constant")
            lines.append(f"  {out} = {_type(v.aval)} constant({_literal(v.val)})")
            return out
        return env[v]

    for i, v in enumerate(list(jaxpr.constvars) + list(jaxpr.invars)):
        env[v] = names.fresh("Arg_" + str(i))
        lines.append(f"  {env[v]} = {_type(v.aval)} parameter({i})")
    for eqn in jaxpr.eqns:
        args = [ref(v) for v in eqn.invars]
        op, args = _canonical(eqn, args)
        outs = eqn.outvars
        if len(outs) == 1:
            env[outs[0]] = names.fresh(op)
            lines.append(f"  {env[outs[0]]} = {_type(outs[0].aval)} {op}({', '.join(args)})"
                         + _attributes(eqn))
        else:
            whole = names.fresh(op)
            types = ", ".join(_type(o.aval) for o in outs)
            lines.append(f"  {whole} = ({types}) {op}({', '.join(args)})" + _attributes(eqn))
            for k, o in enumerate(outs):
                env[o] = names.fresh("get-tuple-element")
                lines.append(f"  {env[o]} = {_type(o.aval)} get-tuple-element({whole}), index={k}")
    results = [ref(v) for v in jaxpr.outvars]
    types = ", ".join(_type(v.aval) for v in jaxpr.outvars)
    lines.append(f"  ROOT {names.fresh('tuple')} = ({types}) tuple({', '.join(results)})")
    params = ", ".join(_type(v.aval) for v in list(jaxpr.constvars) + list(jaxpr.invars))
    module = "jit_" + "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return (f"HloModule {module}, entry_computation_layout={{({params})->({types})}}\n\n"
            f"ENTRY main.{len(lines) + 1} {{\n" + "\n".join(lines) + "\n}\n")


def _canonical(eqn, args):
    """The HLO opcode and operands of ``eqn``, with XLA's lowering rewrites made."""
    name = eqn.primitive.name
    if name == "square":
        return "multiply", [args[0], args[0]]
    if name == "integer_pow" and eqn.params.get("y") == 2:
        return "multiply", [args[0], args[0]]
    return _OPCODES.get(name, name.replace("_", "-")), args


def _attributes(eqn):
    """The parameters that decide the result, in a stable order (jaxprs by their text)."""
    if eqn.primitive.name in ("square", "integer_pow") and eqn.params.get("y", 2) == 2:
        return ""
    items = []
    for key in sorted(eqn.params):
        value = eqn.params[key]
        items.append(f"{key}={value}")
    return (", " + ", ".join(items)) if items else ""


def _literal(val):
    arr = np.asarray(val)
    if arr.ndim == 0:
        return str(arr.item()).replace("True", "true").replace("False", "false")
    return "{" + ", ".join(str(x) for x in arr.ravel().tolist()) + "}"


class CompilerIR:
    """What ``compiler_ir`` returns: the text above; ``as_hlo_text()`` and ``str()`` give it.
    Not MLIR: numjax has none (README, "Missing")."""

    def __init__(self, text):
        self._text = text

    def as_hlo_text(self):
        return self._text

    def as_text(self):
        return self._text

    def __str__(self):
        return self._text

    def __repr__(self):
        return self._text

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(self._text)



