"""The jaxpr IR: variables, literals, equations, and JAX's text format.

A jaxpr is a list of equations ``outvars = primitive[params] invars`` in
A-normal form; ``ClosedJaxpr`` pairs it with the values of its constvars.
Every interpreter is the same loop: ``read`` inputs, apply a rule, ``write``
outputs (see ``eval_jaxpr``).
"""
import collections

import re

import numpy as np

from . import core, source_info


class Var:
    __slots__ = ("aval", "count")
    _counter = 0

    def __init__(self, aval):
        self.aval = aval
        Var._counter += 1
        self.count = Var._counter

    def __repr__(self):
        # JAX's form: the object's id and the full type.
        return f"Var(id={id(self)}):{self.aval.str_short()}"


class Literal:
    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val, self.aval = val, aval

    def __repr__(self):
        # JAX's form: an integer literal shows its dtype, a float or bool only its value.
        val = self.val.item() if isinstance(self.val, np.ndarray) and self.val.ndim == 0 else self.val
        if isinstance(val, (int, np.integer)) and not isinstance(val, (bool, np.bool_)):
            return f"Literal(TypedInt({int(val)}, dtype={self.aval.dtype.name}))"
        return f"Literal({val!r})"


class JaxprEqn:
    __slots__ = ("primitive", "invars", "outvars", "params", "source_info")

    def __init__(self, primitive, invars, outvars, params, source_info=None):
        self.primitive, self.invars, self.outvars, self.params = primitive, invars, outvars, params
        self.source_info = source_info      # the user's code that traced it (source_info.py)

    def __repr__(self):
        return pp_eqn(self, _Names(), 0)


class Jaxpr:
    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars, self.invars, self.outvars, self.eqns = constvars, invars, outvars, eqns

    def __str__(self):
        return pp_toplevel_jaxpr(self)

    __repr__ = __str__

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]


class ClosedJaxpr:
    def __init__(self, jaxpr, consts):
        self.jaxpr, self.consts = jaxpr, list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    constvars = property(lambda self: self.jaxpr.constvars)
    invars = property(lambda self: self.jaxpr.invars)
    outvars = property(lambda self: self.jaxpr.outvars)
    literals = property(lambda self: self.consts)     # JAX's other name for the constants

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


# ---------------------------------------------------------------- evaluation

def eval_jaxpr(jaxpr, consts, *args, bind_eqn=None):
    """Evaluate ``jaxpr``; ``bind_eqn(eqn, operands)``, when given, applies an equation in
    place of binding its primitive again (shard_map rebinds collectives where their axes are)."""
    env = {}

    def read(v):
        return _literal_value(v) if type(v) is Literal else env[v]

    def write(v, val):
        env[v] = val

    for v, val in zip(jaxpr.constvars, consts):
        write(v, val)
    for v, val in zip(jaxpr.invars, args):
        write(v, val)
    # What an equation stages when re-evaluated under a trace keeps the equation's position.
    outer = source_info.set_running(None)
    try:
        for eqn in jaxpr.eqns:
            source_info.set_running(eqn.source_info or outer)
            if bind_eqn is None:
                outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            else:
                outs = bind_eqn(eqn, [read(v) for v in eqn.invars])
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for v, val in zip(eqn.outvars, outs):
                write(v, val)
    finally:
        source_info.set_running(outer)
    return [read(v) for v in jaxpr.outvars]


def _literal_value(lit):
    """A literal as a typed array, so re-evaluation keeps its dtype (and weak type)."""
    from .array import Array
    return Array(np.asarray(lit.val, dtype=lit.aval.dtype), lit.aval.weak_type)


# ---------------------------------------------------------------- printing

WIDTH = 80


class _Names:
    """Assigns JAX's short names (a, b, ..., z, ba, bb, ...) in order of first print."""

    def __init__(self):
        self.names = {}
        self.fresh = 0   # aliases reuse names, so they must not advance the counter
        self.shared = {}  # hoisted nested jaxpr -> the name it is printed under

    def __getitem__(self, var):
        name = self.names.get(var)
        if name is None:
            name = _encode(self.fresh)
            self.fresh += 1
            while name in self.shared.values():  # JAX skips names of hoisted jaxprs
                name = _encode(self.fresh)
                self.fresh += 1
            self.names[var] = name
        return name

    def alias(self, var, name):
        self.names[var] = name


def _encode(n):
    s = chr(ord("a") + n % 26)
    n //= 26
    while n:
        s = chr(ord("a") + n % 26) + s
        n //= 26
    return s


def _format_literal(lit):
    val = lit.val
    if isinstance(val, np.ndarray):
        val = val.item() if val.ndim == 0 else val
    if isinstance(val, (np.floating, float)):
        val = float(val)
    elif isinstance(val, (np.bool_, bool)):
        val = bool(val)
    elif isinstance(val, (np.integer, int)):
        val = int(val)
    return f"{val!r}:{lit.aval.str_short(True)}"


def _pp_atom(v, names):
    return _format_literal(v) if type(v) is Literal else names[v]


def _pp_binder(v, names):
    return f"{names[v]}:{v.aval.str_short(True)}"


def pp_toplevel_jaxpr(jaxpr):
    """``jaxpr`` preceded by the nested jaxprs JAX hoists into ``let <name> = ... in`` blocks:
    those referenced more than once, and those of more than 10 equations."""
    names = _Names()
    hoisted = _hoisted_jaxprs(jaxpr)
    names.shared.update((sub, name) for name, sub in hoisted)
    blocks = [f"let {name} = {pp_jaxpr(sub, names, 0, top=False, one_line=False)} in"
              for name, sub in hoisted]
    return "\n".join(blocks + [pp_jaxpr(jaxpr, names, 0)])


def _hoisted_jaxprs(top):
    """(name, jaxpr) pairs in breadth-first order of first reference, names made unique
    with a counter; a nested jaxpr is named after the first equation's ``name`` param."""
    counts, names, queue = {}, {}, collections.deque([top])
    while queue:
        jx = queue.popleft()
        counts[jx] = counts.get(jx, 0) + (2 if jx is not top and len(jx.eqns) > 10 else 1)
        for eqn in jx.eqns:
            label = eqn.params.get("name")
            for sub in _jaxprs_in_params(eqn.params):
                queue.append(sub)
                if isinstance(label, str):
                    names.setdefault(sub, label.strip("<>"))
    taken, out = collections.Counter(), []
    for jx, c in counts.items():
        if c == 1:
            continue
        name = names.get(jx, "jaxpr")
        if taken[name]:
            suffixed = f"{name}{taken[name]}"
            taken[name] += 1
            name = suffixed
        taken[name] += 1
        out.append((name, jx))
    return out


def sub_jaxprs(params):
    """The jaxprs an equation's ``params`` hold (ClosedJaxprs, open Jaxprs as scan's body, or
    tuples of them as cond's branches), each as a plain Jaxpr: what every pass over nested
    jaxprs walks."""
    for v in params.values():
        for j in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(j, ClosedJaxpr):
                yield j.jaxpr
            elif isinstance(j, Jaxpr):
                yield j


def _jaxprs_in_params(params):
    for v in params.values():
        for j in (v if _is_jaxpr_tuple(v) else (v,) if _is_jaxpr(v) else ()):
            yield j.jaxpr if isinstance(j, ClosedJaxpr) else j


class _SharedName(str):
    """A hoisted jaxpr's name standing in its equation's params."""


def pp_jaxpr(jaxpr, names, indent, inline_ok=False, top=True, one_line=True, lead=0):
    """JAX's text form. Equation results nobody reads print as ``_``. A nested jaxpr with at
    most one equation goes on one line when that fits, as JAX prints it (``lead``: the
    characters before it on its first line, such as ``jaxpr=``)."""
    # As JAX, only the top-level jaxpr prints unread results as `_`.
    used = _used(jaxpr) if top else None
    consts = " ".join(_pp_binder(v, names) for v in jaxpr.constvars)
    ins = " ".join(_pp_binder(v, names) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {ins}. let"
    eqn_lines = [pp_eqn(eqn, names, indent + 4, used) for eqn in jaxpr.eqns]
    outs = ", ".join(_pp_atom(v, names) for v in jaxpr.outvars)
    outs_t = f"({outs}{',' if len(jaxpr.outvars) == 1 else ''})"
    if not jaxpr.eqns:
        return f"{head}  in {outs_t} }}"
    if one_line and not any("\n" in line for line in eqn_lines):
        # JAX prints a jaxpr that fits in the width on one line, equations joined by "; ".
        one = f"{head} {'; '.join(line.strip() for line in eqn_lines)} in {outs_t} }}"
        if indent + lead + len(one) <= WIDTH:
            return one
    tail = " " * (indent + 2) + f"in {outs_t} }}"
    return "\n".join([head] + eqn_lines + [tail])


def _used(jaxpr):
    used = {v for v in jaxpr.outvars if type(v) is not Literal}
    for e in jaxpr.eqns:
        used.update(v for v in e.invars if type(v) is not Literal)
    return used


def pp_eqn(eqn, names, indent, used=None):
    pad = " " * indent
    args = " ".join(_pp_atom(v, names) for v in eqn.invars)
    outs = " ".join(_pp_binder(v, names) if used is None or v in used else f"_:{v.aval.str_short(True)}"
                    for v in eqn.outvars)
    # An equation without results (a debug callback) prints as its primitive alone.
    outs = f"{outs} =" if eqn.outvars else ""
    printer = param_printers.get(eqn.primitive)
    # Params print sorted by name, unless the primitive's printer fixes an order (jit: name first).
    params = printer(eqn.params) if printer else {k: eqn.params[k] for k in sorted(eqn.params)}
    if names.shared:
        params = {k: _shared_name(v, names) for k, v in params.items()}
    has_sub = any(_is_jaxpr(v) or _is_jaxpr_tuple(v) for v in params.values())
    if not has_sub:
        flat = [f"{k}={_pp_param(v)}" for k, v in params.items()]
        head = f"{pad}{outs}{' ' if outs else ''}{eqn.primitive.name}{'[' + ' '.join(flat) + ']' if flat else ''}"
        # Only the bracketed params decide the wrap: the operands after ']' may overhang.
        if len(head) <= WIDTH or not flat:
            return f"{head} {args}"
    if eqn.primitive.name == "jit":
        _alias_inner(params["jaxpr"], eqn, names, used)
    one = _pp_eqn_one_line(eqn, names, pad, outs, args, params)
    if one is not None:
        return one
    inner = []
    for k, v in params.items():
        if _is_jaxpr(v):
            jx = v.jaxpr if isinstance(v, ClosedJaxpr) else v
            text = pp_jaxpr(jx, names, indent + 2, inline_ok=True, top=False, lead=len(k) + 1)
            inner.append(f"{pad}  {k}={text}")
        elif _is_jaxpr_tuple(v):
            inner.append(f"{pad}  {k}=(")
            for j in v:
                jx = j.jaxpr if isinstance(j, ClosedJaxpr) else j
                inner.append(f"{pad}    {pp_jaxpr(jx, names, indent + 4, inline_ok=True, top=False)}")
            inner.append(f"{pad}  )")
        else:
            inner.append(f"{pad}  {k}={_pp_param(v)}")
    return "\n".join([f"{pad}{outs}{' ' if outs else ''}{eqn.primitive.name}["] + inner + [f"{pad}] {args}"])


def _pp_eqn_one_line(eqn, names, pad, outs, args, params):
    """The whole equation on one line, nested jaxprs included, when its bracket group fits
    (as JAX prints a small nested jit); None otherwise, leaving the names as they were."""
    if any(_is_jaxpr_tuple(v) for v in params.values()):
        return None
    saved = (dict(names.names), names.fresh)
    parts = []
    for k, v in params.items():
        if _is_jaxpr(v):
            text = pp_jaxpr(v.jaxpr if isinstance(v, ClosedJaxpr) else v, names, 0, inline_ok=True, top=False)
            if "\n" in text:
                break
            parts.append(f"{k}={text}")
        else:
            parts.append(f"{k}={_pp_param(v)}")
    else:
        head = f"{pad}{outs}{' ' if outs else ''}{eqn.primitive.name}[{' '.join(parts)}]"
        if len(head) <= WIDTH:
            return f"{head} {args}"
    names.names, names.fresh = saved
    return None


def _shared_name(v, names):
    jx = v.jaxpr if isinstance(v, ClosedJaxpr) else v
    return _SharedName(names.shared[jx]) if _is_jaxpr(v) and jx in names.shared else v


def _is_jaxpr_tuple(v):
    return isinstance(v, tuple) and v and all(_is_jaxpr(j) for j in v)


def _alias_inner(v, eqn, names, used=None):
    # JAX prints a nested jit's jaxpr with its binders named after the outer operands
    # and results they stand for, which makes nested jaxprs readable.
    # An operand passed twice names only its first binder; the others get fresh names.
    jx = v.jaxpr if isinstance(v, ClosedJaxpr) else v
    seen = set()
    for inner, outer in zip(jx.invars, eqn.invars):
        if type(outer) is not Literal and outer not in seen:
            seen.add(outer)
            names.alias(inner, names[outer])
    for inner, outer in zip(jx.outvars, eqn.outvars):
        if type(inner) is not Literal and inner not in jx.invars:
            # A result nobody reads prints as `_` outside, and so inside too.
            names.alias(inner, "_" if used is not None and outer not in used else names[outer])


def _is_jaxpr(v):
    return isinstance(v, (Jaxpr, ClosedJaxpr))


def _pp_param(v):
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, tuple):
        return "(" + ", ".join(_pp_param(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(_pp_param(x) for x in v) + "]"
    if isinstance(v, core.Primitive):
        return v.name
    # Object addresses (a callback's function) are masked, so a jaxpr prints the same each run.
    return _ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(v))


_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


# Primitives whose params print differently from how they are stored.
param_printers = {}
